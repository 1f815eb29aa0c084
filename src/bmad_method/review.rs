//! The method's code review as installed, read as facts: its review layers, each by `id`
//! as the skill's `customize.toml` `[[workflow.review_layers]]` lists them under the team's
//! `_bmad/custom/bmad-code-review.toml` and the person's `.user.toml` (the method's merge:
//! an entry of the same `id` replaces the skill's, a new one is added, an empty
//! `instruction` turns one off), read once a call by `super::Method::review_layers`, and
//! the files of the skill a layer's instruction names (`{skill-root}/review-prompts/…`),
//! looked at through the confined reader by `super::Method::review_prompt`; and its deferred-work
//! ledger, `{implementation_artifacts}/deferred-work.md`, where a review's deferred findings
//! go under `## Deferred from: code review of <spec> (<date>)`, one bullet each, appended
//! after what is there, which is never changed.
//!
//! An entry a later task resolved is closed the same way: never edited (the method's build
//! and review append and "do not modify existing entries"), but checked off in a part
//! appended after it, `## Resolved in: <task> (<date>)`, one `- [x] <entry>` each, as the
//! method's review checks off a finding that is dealt with. An entry is named by the first
//! eight hex digits of the SHA-256 of its text as read ([`item_id`]); a task says which it
//! resolved on a `Resolves deferred: <id>, …` line of its implementation report.

use toml::Value;

use crate::files::Project;

use super::Install;

/// The skill whose `review-prompts/` the review layers read.
pub const REVIEW_SKILL: &str = "bmad-code-review";
/// The ledger's file name in `implementation_artifacts`.
pub const LEDGER: &str = "deferred-work.md";
/// The largest ledger read for a prompt, in bytes.
const MAX_LEDGER_BYTES: u64 = 512 * 1024;

/// The most review layers read from an install.
const MAX_LAYERS: usize = 16;
/// The most characters of one layer's instruction kept.
const MAX_INSTRUCTION_CHARS: usize = 8_000;

/// One review layer as the install configures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewLayer {
    /// Its `id` (`edge-case-hunter`), in the characters of a file name.
    pub id: String,
    /// Its `name` (`Edge Case Hunter`).
    pub name: String,
    /// Its whole recipe, with the method's placeholders (`{diff_file}`) as written.
    pub instruction: String,
    /// When it runs (`Only when {review_mode} = "full".`), if it says.
    pub when: Option<String>,
    /// Whether the team or the person changed it from the skill's own.
    pub customized: bool,
}

/// The code review's `customize.toml` as the skill has it (`base`) and with the team's and
/// the person's files laid on it by the method's merge (`merged`).
#[derive(Debug, Clone, PartialEq)]
pub struct CodeReview {
    pub base: toml::Table,
    pub merged: toml::Table,
}

/// The review layers of the install's code review, in their order, the ones turned off
/// (an empty `instruction`) left out; `None` when it lists none. What was left out, in
/// `notices`.
pub fn layers(review: &CodeReview, notices: &mut Vec<String>) -> Option<Vec<ReviewLayer>> {
    let own = entries(&review.base);
    let all = entries(&review.merged);
    if all.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for t in all.into_iter().take(MAX_LAYERS) {
        let text = |k: &str| t.get(k).and_then(Value::as_str).map(str::trim);
        let id = text("id").unwrap_or_default();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            notices.push(format!(
                "A review layer of the BMAD method's {REVIEW_SKILL} has an `id` that is not a plain name (`{}`); it was left out.",
                crate::code::clip(&crate::code::visible(id), 60)
            ));
            continue;
        }
        let Some(instruction) = text("instruction").filter(|i| !i.is_empty()) else {
            continue;
        };
        out.push(ReviewLayer {
            id: id.to_string(),
            name: text("name")
                .and_then(|n| super::one_line(n, 80))
                .unwrap_or_else(|| id.to_string()),
            instruction: crate::code::clip(instruction, MAX_INSTRUCTION_CHARS),
            when: text("when").and_then(|w| super::one_line(w, 300)),
            customized: !own.contains(&t),
        });
    }
    Some(out)
}

/// The `[[workflow.review_layers]]` entries of a `customize.toml`.
fn entries(t: &toml::Table) -> Vec<toml::Table> {
    let layers = t
        .get("workflow")
        .and_then(|w| w.get("review_layers"))
        .and_then(Value::as_array);
    layers
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_table().cloned())
        .collect()
}

/// The files of the skill an instruction names by `{skill-root}/<path>`, relative to the
/// skill's folder.
pub fn skill_files(instruction: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in instruction.match_indices("{skill-root}/") {
        let rest = &instruction[i + "{skill-root}/".len()..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ')'))
            .unwrap_or(rest.len());
        let rel = rest[..end].trim_end_matches(['.', ',', ';', ':']);
        if !rel.is_empty() && !out.iter().any(|o| o == rel) {
            out.push(rel.to_string());
        }
    }
    out
}

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
    let mut out = String::from(apart(existing));
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
/// review document's path and its findings, those of its `## Findings` and those under the
/// sections of its layers (`layers`, asked only then), the document itself named where it
/// lists none; `None` when the change accepted no review's risk. `files` are the change's
/// own writes, where the review document may be.
pub fn deferred_by(
    project: &Project,
    did: &crate::workflow::Effects,
    after: &crate::workflow::Session,
    files: &[(String, String)],
    layers: &dyn Fn() -> Vec<String>,
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
    for item in crate::workflow::sections::items_under(&layers(), &document) {
        if !findings.contains(&item) {
            findings.push(item);
        }
    }
    if findings.is_empty() {
        findings.push(format!("the findings of {source}"));
    }
    Some((source, findings))
}

/// The ledger's open entries: each top-level bullet with the lines that continue it, on one
/// line, but those checked off after it. `None` when the install has no ledger or it cannot
/// be read.
pub fn open_items(project: &Project, install: &Install) -> Option<(String, Vec<String>)> {
    let path = ledger_path(install)?;
    let text = project.read_at_most(&path, MAX_LEDGER_BYTES).ok()??;
    let items = open(&text);
    (!items.is_empty()).then_some((path, items))
}

/// The mark of an entry checked off.
const CHECKED: &str = "[x] ";

/// The entries of the ledger `text` that no later `- [x]` line checks off.
pub fn open(text: &str) -> Vec<String> {
    let all = items(text);
    let closed: std::collections::HashSet<&str> =
        all.iter().filter_map(|i| i.strip_prefix(CHECKED)).collect();
    let mut seen = std::collections::HashSet::new();
    all.iter()
        .filter(|i| !i.starts_with(CHECKED) && !closed.contains(i.as_str()))
        .filter(|i| seen.insert(i.as_str()))
        .cloned()
        .collect()
}

/// An entry's name: the first eight hex digits of the SHA-256 of its text, on one line.
pub fn item_id(item: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(item.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// The entries a task's report says it resolved: the ids on its `Resolves deferred:` lines
/// (outside code), each once, at most twenty.
pub fn resolved_ids(document: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for (_, line) in crate::workflow::sections::outside_code(document) {
        let Some(value) = crate::workflow::trace::ids::keyed(line, &["Resolves deferred"]) else {
            continue;
        };
        for word in value.split([',', ' ', '`']).map(str::trim) {
            let id = word.len() == 8 && word.bytes().all(|b| b.is_ascii_hexdigit());
            let word = word.to_ascii_lowercase();
            if id && !ids.contains(&word) && ids.len() < 20 {
                ids.push(word);
            }
        }
    }
    ids
}

/// The text appended to the ledger (`existing`: as [`deferred_entry`] reads it) to check
/// off `items`, which task `task` resolved on `date`.
pub fn closing_entry(existing: &str, task: &str, date: &str, items: &[String]) -> String {
    let mut out = String::from(apart(existing));
    out.push_str(&format!("## Resolved in: {task} ({date})\n\n"));
    for i in items {
        out.push_str(&format!("- {CHECKED}{i}\n"));
    }
    out
}

/// What goes before a new part of a ledger that ends as `existing` does, so that it begins
/// on a line of its own, a blank line apart.
fn apart(existing: &str) -> &'static str {
    if existing.is_empty() || existing.ends_with("\n\n") {
        ""
    } else if existing.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    }
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

    /// The skill's layers under the team's and the person's files, by the method's merge
    /// (as the agents' reading lays them on): an entry of the same `id` replaces the
    /// skill's (and is the team's from then on), a new one is added, an empty
    /// `instruction` turns one off, an `id` that is no plain name is left out and said.
    #[test]
    fn the_layers_are_merged_by_id_as_the_method_merges_them() {
        let (dir, project) = crate::files::project::tests::project();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let layer = |id: &str, name: &str, instruction: &str| {
            format!("[[workflow.review_layers]]\nid = \"{id}\"\nname = \"{name}\"\ninstruction = \"{instruction}\"\n")
        };
        write(
            ".claude/skills/bmad-code-review/customize.toml",
            &[
                layer(
                    "a",
                    "A",
                    "Read `{skill-root}/review-prompts/a.md`; review `{diff_file}`.",
                ),
                layer("b", "B", "Review `{diff_file}`."),
                layer("c", "C", "Review `{diff_file}` again."),
            ]
            .concat(),
        );
        write(
            "_bmad/custom/bmad-code-review.toml",
            &[layer("b", "B2", "Ours."), layer("d", "D", "Also ours.")].concat(),
        );
        write(
            "_bmad/custom/bmad-code-review.user.toml",
            &[layer("c", "C", ""), layer("../x", "X", "Out.")].concat(),
        );
        let install = Install {
            skills: vec![super::super::Skill {
                name: REVIEW_SKILL.into(),
                description: String::new(),
                folder: Some(".claude/skills"),
            }],
            ..Install::default()
        };
        let mut notices = Vec::new();
        let (_, review) = super::super::persona::agents(&project, &install, &mut notices);
        let review = review.expect("read with the agents");
        let got = layers(&review, &mut notices).unwrap();
        let seen: Vec<(&str, &str, bool)> = got
            .iter()
            .map(|l| (l.id.as_str(), l.name.as_str(), l.customized))
            .collect();
        assert_eq!(
            seen,
            [("a", "A", false), ("b", "B2", true), ("d", "D", true)]
        );
        assert_eq!(skill_files(&got[0].instruction), ["review-prompts/a.md"]);
        assert!(skill_files(&got[1].instruction).is_empty());
        assert!(
            notices.len() == 1 && notices[0].contains("`../x`"),
            "{notices:?}"
        );
        let none: toml::Table = toml::from_str("[workflow]\npersistent_facts = []\n").unwrap();
        let listed_none = CodeReview {
            base: none.clone(),
            merged: none,
        };
        assert!(layers(&listed_none, &mut notices).is_none(), "none listed");
    }

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

    #[test]
    fn an_entry_a_later_task_resolved_is_checked_off_after_it_and_no_longer_open() {
        let ledger = "# Deferred Work\n\n## Deferred from: code review of t-1 (2026-11-27)\n\n- major: no guard — deferred: risk accepted\n- source_spec: `s.md`\n  summary: two\n";
        let items = open(ledger);
        assert_eq!(items.len(), 2);
        let id = item_id(&items[0]);
        assert_eq!(id.len(), 8);
        let report = format!("# Implementation Report\n\nResolves deferred: `{id}`, {}\n\n```\nResolves deferred: 00000000\n```\n", id.to_uppercase());
        assert_eq!(resolved_ids(&report), vec![id.clone()]);
        let closing = closing_entry(ledger, "t-2", "2026-11-28", &items[..1]);
        assert_eq!(
            closing,
            "\n## Resolved in: t-2 (2026-11-28)\n\n- [x] major: no guard — deferred: risk accepted\n"
        );
        let after = format!("{ledger}{closing}");
        assert_eq!(open(&after), vec![items[1].clone()]);
        assert!(after.starts_with(ledger), "what was there stays");
    }
}
