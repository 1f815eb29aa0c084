//! The earlier rounds of a stage's document, labelled by what they were: each submission
//! the session's history records ("draft 2"), with the decision that answered it ("sent
//! back by Ana, on the dashboard: '…'") beside it, and each report that sent the work
//! back. A submission's file is matched to its history entry by the time both carry (the
//! step's own); a file no entry records was written on a branch of the history the
//! session no longer holds (restored from an older version) and is left out, counted.
//! The current submission is not a round of its own: it is the document shown. The page
//! shows the newest few rounds: only those files are read and diffed, and an older
//! draft's file only when a decision's digest is looked up among them.

use std::cell::OnceCell;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::render;
use crate::code::clip;
use crate::files::Project;
use crate::workflow::authorship::{self, Speaker};
use crate::workflow::machine::sha256_hex;
use crate::workflow::session::HistoryEntry;
use crate::workflow::submission;
use crate::workflow::{Action, Session, Stage};

/// The characters of the answering words a round's label quotes.
const QUOTED: usize = 120;

/// The most names read of a session's folder of submissions.
const MAX_FILES: usize = 10_000;

/// How the page reads a project's text: as much of it as is shown.
pub type TextReader = fn(&Project, &str) -> Option<String>;

/// One submission of a stage's document, as the history records it. Its file is read
/// only when asked: the page shows a few rounds, and of the others needs at most the
/// digest ([`Draft::sha256`]), kept once computed.
#[derive(Clone)]
pub struct Draft {
    /// Counted from 1 in the order the stage's submissions came.
    pub number: usize,
    pub stage: Stage,
    pub path: String,
    /// The second model's candidate, beside the host's.
    pub second_model: bool,
    pub at: String,
    /// The decision that answered this submission, when one did.
    pub answered: Option<Value>,
    /// The digest of [`Draft::text`]; `Some(None)` when the file cannot be read.
    sha256: OnceCell<Option<String>>,
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

    /// The document as the server read it from the submission; `None` when the file
    /// cannot be read.
    pub fn text(&self, project: &Project, read: TextReader) -> Option<String> {
        let text = self.read_text(project, read);
        // Already set: the same file's digest, computed before.
        let _ = self.sha256.set(text.as_deref().map(sha256_hex));
        text
    }

    /// The SHA-256 of [`Draft::text`], read once.
    pub fn sha256(&self, project: &Project, read: TextReader) -> Option<&str> {
        self.sha256
            .get_or_init(|| self.read_text(project, read).as_deref().map(sha256_hex))
            .as_deref()
    }

    fn read_text(&self, project: &Project, read: TextReader) -> Option<String> {
        let kept = read(project, &self.path)?;
        Some(
            submission::read(self.stage, &kept)
                .map(|s| s.document)
                .unwrap_or(kept),
        )
    }
}

/// The submissions of `stage` the history records, oldest first (none of them read yet),
/// and how many files of the stage's submissions it does not record. The session's folder
/// is listed beneath the project, never through a link.
pub fn drafts(project: &Project, s: &Session, stage: Stage) -> (Vec<Draft>, usize) {
    let folder = format!(".bmad-task/temp/{}", s.session_id);
    let mut files: Vec<String> = project
        .folder_names(&folder, MAX_FILES)
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| {
            n.ends_with(".md")
                && (n.starts_with(&format!("{stage}_claude_result_"))
                    || n.starts_with(&format!("{stage}_codex_result_")))
        })
        .collect();
    files.sort();
    let entries: Vec<&HistoryEntry> = s.steps_at(stage);
    let mut out = Vec::new();
    // Which files an entry recorded: two entries of one millisecond match the same ones.
    let mut matched = vec![false; files.len()];
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
        for (j, name) in files.iter().enumerate() {
            if !file_stamp(name).starts_with(&ms) {
                continue;
            }
            matched[j] = true;
            out.push(Draft {
                number,
                stage,
                second_model: name.contains("_codex_result_"),
                path: format!("{folder}/{name}"),
                at: h.at.clone(),
                answered: answered.clone(),
                sha256: OnceCell::new(),
            });
        }
    }
    (out, matched.iter().filter(|m| !**m).count())
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
    let by = h
        .decided_by
        .map_or(Speaker::Unrecorded, authorship::speaker);
    match (&h.decider, by) {
        (Some(p), Speaker::Host) => format!("the assistant, for {p} (not confirmed by them)"),
        (Some(p), _) => format!("{p} ({})", authorship::label(by, h.via)),
        (None, _) => authorship::label(by, h.via),
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

/// An earlier round, before its file is read: a submission, or a report that sent the
/// work back (its number, its file, when).
enum Earlier<'a> {
    Draft(&'a Draft),
    Report(usize, &'a str, &'a str),
}

/// The rounds of `stage`'s document the page shows, newest first, each with its diff
/// against `current`, its digest and what answered it; and a note of the files left out.
/// At most `most`, and only those are read and diffed.
pub fn view(
    project: &Project,
    s: &Session,
    stage: Stage,
    current: &str,
    found: &(Vec<Draft>, usize),
    read: TextReader,
    most: usize,
) -> (Vec<Value>, Option<String>) {
    let unrecorded = found.1;
    // The newest submission is the document shown, unless it was edited since.
    let last = found.0.last().map(|d| d.number);
    let shown = |d: &Draft| Some(d.number) == last && !d.second_model;
    let drafts = found.0.iter().rev().map(Earlier::Draft);
    let reports = s
        .record(stage)
        .round_reports
        .iter()
        .enumerate()
        .rev()
        .map(|(i, r)| Earlier::Report(i + 1, &r.file_path, &r.last_updated));
    let rounds: Vec<Value> = drafts
        .chain(reports)
        .filter_map(|round| match round {
            Earlier::Draft(d) => {
                let text = d.text(project, read)?;
                if shown(d) && text == current {
                    return None;
                }
                Some(json!({
                    "path": d.path,
                    "label": label(d),
                    "name": d.name(),
                    "sha256": d.sha256(project, read),
                    "answered": d.answered,
                    "diff_html": render::diff(&text, current),
                }))
            }
            Earlier::Report(n, path, when) => {
                let old = read(project, path)?;
                Some(json!({
                    "path": path,
                    "label": format!("the report of round {n} that sent the work back ({when})"),
                    "name": format!("report of round {n}"),
                    "sha256": sha256_hex(&old),
                    "diff_html": render::diff(&old, current),
                }))
            }
        })
        .take(most)
        .collect();
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

    use std::sync::atomic::{AtomicUsize, Ordering};

    const ID: &str = "00000000-0000-4000-8000-000000000000";

    /// A session whose first stage has a submission at each of `times` (RFC 3339), and a
    /// project with a file for each of `files` (the stamps of the files' names).
    fn submitted(times: &[String], files: &[String]) -> (tempfile::TempDir, Project, Session) {
        let (dir, project) = crate::files::project::tests::project();
        let mut s = Session::new(
            ID.into(),
            "t-0000".into(),
            "/p".into(),
            "T".into(),
            vec![crate::workflow::Engine::Claude],
            Utc::now(),
        );
        let start = s.history[0].clone();
        for at in times {
            s.history.push(HistoryEntry {
                at: at.clone(),
                action: Action::Submit,
                ..start.clone()
            });
        }
        let folder = dir.path().join(".bmad-task/temp").join(ID);
        std::fs::create_dir_all(&folder).unwrap();
        for (n, f) in files.iter().enumerate() {
            let name = format!("{}_claude_result_{f}Z.md", Stage::FIRST);
            std::fs::write(folder.join(name), format!("draft {n}\n")).unwrap();
        }
        (dir, project, s)
    }

    static READS: AtomicUsize = AtomicUsize::new(0);

    fn counted(project: &Project, rel: &str) -> Option<String> {
        READS.fetch_add(1, Ordering::SeqCst);
        project.read_at_most(rel, 1 << 20).ok().flatten()
    }

    /// Of many drafts, only the rounds shown are read (and diffed); the digest of an older
    /// one is read when asked, once.
    #[test]
    fn only_the_rounds_shown_are_read() {
        let times: Vec<String> = (0..30)
            .map(|i| format!("2026-11-26T04:13:{i:02}.583Z"))
            .collect();
        let files: Vec<String> = (0..30)
            .map(|i| format!("20261126T0413{i:02}583240"))
            .collect();
        let (_dir, project, s) = submitted(&times, &files);
        let found = drafts(&project, &s, Stage::FIRST);
        assert_eq!((found.0.len(), found.1), (30, 0));
        READS.store(0, Ordering::SeqCst);
        let (rounds, note) = view(&project, &s, Stage::FIRST, "now\n", &found, counted, 3);
        assert_eq!(note, None);
        let names: Vec<&str> = rounds.iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["draft 30", "draft 29", "draft 28"]);
        assert_eq!(
            READS.load(Ordering::SeqCst),
            3,
            "only the shown rounds are read"
        );
        let oldest = &found.0[0];
        let digest = sha256_hex("draft 0\n");
        assert_eq!(oldest.sha256(&project, counted), Some(digest.as_str()));
        assert_eq!(oldest.sha256(&project, counted), Some(digest.as_str()));
        assert_eq!(
            found.0[29].sha256(&project, counted),
            Some(sha256_hex("draft 29\n").as_str())
        );
        assert_eq!(READS.load(Ordering::SeqCst), 4, "each digest is read once");
    }

    /// Two submissions of one millisecond both match its file: no file is counted twice,
    /// and none is said to be missing from the history.
    #[test]
    fn two_submissions_of_one_millisecond_share_a_file() {
        let at = "2026-11-26T04:13:55.583Z".to_string();
        let (_dir, project, s) = submitted(&[at.clone(), at], &["20261126T041355583240".into()]);
        let found = drafts(&project, &s, Stage::FIRST);
        assert_eq!((found.0.len(), found.1), (2, 0));
        let (_dir, project, s) = submitted(&[], &["20261126T041355583240".into()]);
        assert_eq!(drafts(&project, &s, Stage::FIRST).1, 1);
    }

    /// The session's folder of submissions swapped for a link is not listed through it.
    #[cfg(unix)]
    #[test]
    fn the_folder_of_submissions_is_not_listed_through_a_link() {
        let (dir, project, s) = submitted(&[], &["20261126T041355583240".into()]);
        let folder = dir.path().join(".bmad-task/temp").join(ID);
        let outside = tempfile::tempdir().unwrap();
        std::fs::rename(&folder, outside.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("moved"), &folder).unwrap();
        assert_eq!(drafts(&project, &s, Stage::FIRST).1, 0);
    }
}
