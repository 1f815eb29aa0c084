//! The method's code review as installed, read as facts: the skill whose review prompts it
//! hands each reviewer in a fresh context (the edge-case hunter, the verification gap; found
//! where the installer put them by `super::Method::review_prompt`); and its deferred-work
//! ledger, `{implementation_artifacts}/deferred-work.md`, where a review's deferred findings
//! go under `## Deferred from: code review of <spec> (<date>)`, one bullet each, appended
//! after what is there, which is never changed.

use crate::files::Project;

use super::Install;

/// The skill whose `review-prompts/` the review layers read.
pub const REVIEW_SKILL: &str = "bmad-code-review";
/// The ledger's file name in `implementation_artifacts`.
pub const LEDGER: &str = "deferred-work.md";
/// The largest ledger read for a prompt, in bytes.
const MAX_LEDGER_BYTES: u64 = 512 * 1024;

/// The ledger's path in the project, where the install says implementation artifacts go.
pub fn ledger_path(install: &Install) -> Option<String> {
    let folder = install.settings.implementation_artifacts.as_deref()?;
    let path = format!("{folder}/{LEDGER}");
    crate::files::project::is_deferred_ledger(&path).then_some(path)
}

/// The text appended to the ledger for findings deferred in the review of task `task` on
/// `date` (`YYYY-MM-DD`): the method's heading, then one bullet per finding with why it
/// was deferred. `existing` is the ledger as it is (empty when there is none), so that the
/// new part begins on a line of its own, a blank line apart.
pub fn deferred_entry(
    existing: &str,
    task: &str,
    date: &str,
    findings: &[String],
    why: &str,
) -> String {
    let mut out = String::new();
    if !existing.is_empty() {
        out.push_str(if existing.ends_with("\n\n") {
            ""
        } else if existing.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        });
    }
    out.push_str(&format!(
        "## Deferred from: code review of {task} ({date})\n\n"
    ));
    for f in findings {
        let one = f.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!("- {one} — deferred: {why}\n"));
    }
    out
}

/// The findings the change `did` deferred by accepting the failing review's risk: the
/// review document's path and its findings (the document itself named where it lists
/// none); `None` when the change accepted no review's risk. `files` are the change's own
/// writes, where the review document may be.
pub fn deferred_by(
    project: &Project,
    did: &crate::workflow::Effects,
    after: &crate::workflow::Session,
    files: &[(String, String)],
) -> Option<(String, Vec<String>)> {
    let review = crate::workflow::Stage::Review;
    did.accepted_risk_at(review)?;
    let source = after.record(review).artifact.as_ref()?.path.clone();
    let document = match files.iter().find(|(p, _)| *p == source) {
        Some((_, text)) => text.clone(),
        None => project.read(&source).ok()??,
    };
    let mut findings =
        crate::workflow::sections::items_of(crate::workflow::sections::FINDINGS, &document);
    if findings.is_empty() {
        findings.push(format!("the findings of {source}"));
    }
    Some((source, findings))
}

/// The ledger's entries as they stand: each top-level bullet with the lines that continue
/// it, on one line. `None` when the install has no ledger or it cannot be read.
pub fn open_items(project: &Project, install: &Install) -> Option<(String, Vec<String>)> {
    let path = ledger_path(install)?;
    let text = project.read_at_most(&path, MAX_LEDGER_BYTES).ok()??;
    let items = items(&text);
    (!items.is_empty()).then_some((path, items))
}

/// The top-level bullets of `text`, each with its continuation lines joined on one line.
fn items(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let bullet = ["- ", "* "].iter().find_map(|b| line.strip_prefix(b));
        match bullet {
            Some(rest) => {
                out.push(rest.trim().to_string());
                open = true;
            }
            None if open && line.starts_with([' ', '\t']) && !line.trim().is_empty() => {
                if let Some(last) = out.last_mut() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
            None => open = false,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_follows_what_is_there_a_blank_line_apart() {
        let f = vec![
            "major, `a.rs`: no\n  guard".to_string(),
            "minor: x".to_string(),
        ];
        let e = deferred_entry("", "t-1", "2026-11-27", &f, "risk accepted");
        assert_eq!(
            e,
            "## Deferred from: code review of t-1 (2026-11-27)\n\n- major, `a.rs`: no guard — deferred: risk accepted\n- minor: x — deferred: risk accepted\n"
        );
        assert!(deferred_entry("old", "t", "d", &f, "w").starts_with("\n\n## "));
        assert!(deferred_entry("old\n", "t", "d", &f, "w").starts_with("\n## "));
        assert!(deferred_entry("old\n\n", "t", "d", &f, "w").starts_with("## "));
    }

    #[test]
    fn the_ledgers_bullets_are_read_with_their_continuations() {
        let text = "# Deferred Work\n\n## Deferred from: code review (2026-01-02)\n\n- one\n- source_spec: `s.md`\n  summary: two\n  evidence: three\n\nprose\n  indented prose\n* four\n";
        assert_eq!(
            items(text),
            vec![
                "one".to_string(),
                "source_spec: `s.md` summary: two evidence: three".into(),
                "four".into()
            ]
        );
    }
}
