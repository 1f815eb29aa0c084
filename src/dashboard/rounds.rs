//! The earlier rounds of a stage's document, labelled by what they were: each submission
//! the session's history records ("draft 2"), with the decision that answered it ("sent
//! back by Ana, on the dashboard: '…'") beside it, and each report that sent the work
//! back. A submission's file is matched to its history entry by the time both carry (the
//! step's own); a file no entry records was written on a branch of the history the
//! session no longer holds (restored from an older version) and is left out, counted.
//! The current submission is not a round of its own: it is the document shown.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::render;
use crate::code::clip;
use crate::files::Project;
use crate::workflow::machine::sha256_hex;
use crate::workflow::said::{self, Speaker};
use crate::workflow::session::HistoryEntry;
use crate::workflow::submission;
use crate::workflow::{Action, Session, Stage};

/// The characters of the answering words a round's label quotes.
const QUOTED: usize = 120;

/// One submission of a stage's document, as the history records it.
#[derive(Clone)]
pub struct Draft {
    /// Counted from 1 in the order the stage's submissions came.
    pub number: usize,
    pub path: String,
    /// The second model's candidate, beside the host's.
    pub second_model: bool,
    /// The document as the server read it from the submission.
    pub text: String,
    pub sha256: String,
    pub at: String,
    /// The decision that answered this submission, when one did.
    pub answered: Option<Value>,
}

impl Draft {
    /// The round's name: "draft 2", "draft 2 (the second model's)".
    pub fn name(&self) -> String {
        let whose = if self.second_model {
            " (the second model's)"
        } else {
            ""
        };
        format!("draft {}{whose}", self.number)
    }
}

/// The submissions of `stage` the history records, oldest first, and how many files of
/// the stage's submissions it does not record.
pub fn drafts(
    project: &Project,
    s: &Session,
    stage: Stage,
    read: fn(&Project, &str) -> Option<String>,
) -> (Vec<Draft>, usize) {
    let folder = format!(".bmad-task/temp/{}", s.session_id);
    let mut files: Vec<String> = std::fs::read_dir(project.path(&folder))
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| {
                    n.ends_with(".md")
                        && (n.starts_with(&format!("{stage}_claude_result_"))
                            || n.starts_with(&format!("{stage}_codex_result_")))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let entries: Vec<&HistoryEntry> = s.history.iter().filter(|h| h.stage == stage).collect();
    let mut out = Vec::new();
    let mut matched = 0;
    let mut number = 0;
    for (i, h) in entries.iter().enumerate() {
        let Some(ms) = (h.action == Action::Submit).then(|| stamp(&h.at)).flatten() else {
            continue;
        };
        number += 1;
        let answered = entries[i + 1..]
            .iter()
            .take_while(|n| n.action != Action::Submit)
            .find(|n| n.action.decides())
            .map(|n| answer(n));
        for name in files.iter().filter(|n| file_stamp(n).starts_with(&ms)) {
            matched += 1;
            let path = format!("{folder}/{name}");
            let Some(kept) = read(project, &path) else {
                continue;
            };
            let text = submission::read(stage, &kept)
                .map(|s| s.document)
                .unwrap_or(kept);
            out.push(Draft {
                number,
                second_model: name.contains("_codex_result_"),
                sha256: sha256_hex(&text),
                text,
                path,
                at: h.at.clone(),
                answered: answered.clone(),
            });
        }
    }
    (out, files.len() - matched)
}

/// The time stamp in a submission file's name (`20261126T041355583240Z`).
fn file_stamp(name: &str) -> &str {
    name.rsplit('_').next().unwrap_or(name)
}

/// A history entry's time as the files' names write it, to the millisecond.
fn stamp(at: &str) -> Option<String> {
    let t = DateTime::parse_from_rfc3339(at).ok()?;
    Some(t.with_timezone(&Utc).format("%Y%m%dT%H%M%S%3f").to_string())
}

/// Who, named as the audit names them: the person when recorded, with the channel; the
/// assistant's decision as the assistant's, for the person whose session it ran in.
pub fn who(h: &HistoryEntry) -> String {
    let by = h.decided_by.map_or(Speaker::Unrecorded, said::speaker);
    match (&h.decider, by) {
        (Some(p), Speaker::Host) => format!("the assistant, for {p} (not confirmed by them)"),
        (Some(p), _) => format!("{p} ({})", said::label(by, h.via)),
        (None, _) => said::label(by, h.via),
    }
}

/// The decision that answered a submission: what it was, who took it, their words.
fn answer(h: &HistoryEntry) -> Value {
    let verb = match h.action {
        Action::Reject => "sent back",
        Action::Approve => "approved",
        Action::Answer => "questions answered",
        _ => "confirmed",
    };
    json!({
        "action": h.action.name(),
        "at": h.at,
        "verb": verb,
        "by": who(h),
        "words": h.feedback,
    })
}

/// The label of a round: "draft 2, sent back by Ana (the user, on the dashboard): '…'".
fn label(d: &Draft) -> String {
    let Some(a) = &d.answered else {
        return format!("{}, submitted {} (no decision on it)", d.name(), d.at);
    };
    let mut out = format!(
        "{}, {} by {}",
        d.name(),
        a["verb"].as_str().unwrap_or(""),
        a["by"].as_str().unwrap_or("")
    );
    if let Some(w) = a["words"].as_str() {
        let flat = w.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push_str(&format!(": '{}'", clip(&flat, QUOTED)));
    }
    out
}

/// The rounds of `stage`'s document the page shows, newest first, each with its diff
/// against `current`, its digest and what answered it; and a note of the files left out.
pub fn view(
    project: &Project,
    s: &Session,
    stage: Stage,
    current: &str,
    found: &(Vec<Draft>, usize),
    read: fn(&Project, &str) -> Option<String>,
    most: usize,
) -> (Vec<Value>, Option<String>) {
    let unrecorded = found.1;
    let mut drafts: Vec<&Draft> = found.0.iter().collect();
    // The newest submission is the document shown, unless it was edited since.
    let last = drafts.last().map(|d| d.number);
    drafts.retain(|d| !(Some(d.number) == last && !d.second_model && d.text == current));
    let mut rounds: Vec<Value> = drafts
        .iter()
        .rev()
        .map(|d| {
            json!({
                "path": d.path,
                "label": label(d),
                "name": d.name(),
                "sha256": d.sha256,
                "answered": d.answered,
                "diff_html": render::diff(&d.text, current),
            })
        })
        .collect();
    for (i, r) in s.record(stage).round_reports.iter().enumerate().rev() {
        let Some(old) = read(project, &r.file_path) else {
            continue;
        };
        rounds.push(json!({
            "path": r.file_path,
            "label": format!("the report of round {} that sent the work back ({})", i + 1, r.last_updated),
            "name": format!("report of round {}", i + 1),
            "sha256": sha256_hex(&old),
            "diff_html": render::diff(&old, current),
        }));
    }
    rounds.truncate(most);
    let note = (unrecorded > 0).then(|| {
        format!(
            "{unrecorded} earlier draft(s) of this stage are not in the session's history (written on a branch of it the session no longer holds) and are not shown."
        )
    });
    (rounds, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_time_is_written_as_the_files_name_it() {
        assert_eq!(
            stamp("2026-11-26T04:13:55.583Z").as_deref(),
            Some("20261126T041355583")
        );
        assert!(
            "20261126T041355583240Z.md".starts_with(&stamp("2026-11-26T04:13:55.583Z").unwrap())
        );
        assert_eq!(
            file_stamp("po_claude_result_20261126T041355583240Z.md"),
            "20261126T041355583240Z.md"
        );
        assert_eq!(stamp("not a time"), None);
    }
}
