//! A session that a merge left with two versions (docs/spec.md, "Working as a team"): git's
//! conflict markers in the file, or a history that forks (two branches each advanced the
//! task, and the texts merged without markers). It is never read as one version, never
//! written over, and every call on it is refused with `session_conflicted`, naming both
//! versions and how to keep one; `list` shows it as conflicted.

use serde::Deserialize;

use crate::error::{clip, Error};
use crate::workflow::history::stored_steps;
use crate::workflow::person::Person;
use crate::workflow::session::{HistoryEntry, Session};
use crate::workflow::{Stage, State};

/// One side of a conflicted file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// What git wrote after the marker: `HEAD`, a branch, a commit.
    pub label: String,
    pub text: String,
}

/// The two sides of a file with conflict markers (the common lines in both); `None` when
/// it has none.
pub fn sides(text: &str) -> Option<(Side, Side)> {
    #[derive(PartialEq)]
    enum In {
        Both,
        Ours,
        Base,
        Theirs,
    }
    let mut at = In::Both;
    let (mut ours, mut theirs) = (String::new(), String::new());
    let (mut ours_label, mut theirs_label) = (None, None);
    let mut complete = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        let marker = |m: &str| bare == m || bare.starts_with(&format!("{m} "));
        match at {
            In::Both if marker("<<<<<<<") => {
                at = In::Ours;
                ours_label.get_or_insert_with(|| label(bare));
            }
            In::Ours if marker("|||||||") => at = In::Base,
            In::Ours | In::Base if bare == "=======" => at = In::Theirs,
            In::Theirs if marker(">>>>>>>") => {
                at = In::Both;
                complete = true;
                theirs_label.get_or_insert_with(|| label(bare));
            }
            In::Both => {
                ours.push_str(line);
                theirs.push_str(line);
            }
            In::Ours => ours.push_str(line),
            In::Base => {}
            In::Theirs => theirs.push_str(line),
        }
    }
    (complete && at == In::Both).then(|| {
        (
            Side {
                label: ours_label.unwrap_or_default(),
                text: ours,
            },
            Side {
                label: theirs_label.unwrap_or_default(),
                text: theirs,
            },
        )
    })
}

fn label(marker_line: &str) -> String {
    let l = marker_line.get(8..).unwrap_or("").trim();
    if l.is_empty() {
        "unnamed".into()
    } else {
        clip(l, 60)
    }
}

/// What a version of a session says of itself, as far as it reads.
#[derive(Deserialize)]
struct Summary {
    current_stage: Stage,
    current_state: State,
    updated_at: String,
    #[serde(default)]
    owner: Option<Person>,
    #[serde(default)]
    branch: Option<String>,
}

fn describe(side: &Side) -> String {
    let value = serde_json::from_str::<serde_json::Value>(&side.text);
    let steps = value.as_ref().map_or(0, |v| stored_steps(v).len());
    match serde_json::from_str::<Summary>(&side.text) {
        Ok(s) => {
            let mut d = format!(
                "`{}`: stage {}, state {}, {} history entries, updated {}",
                side.label,
                s.current_stage,
                s.current_state,
                steps,
                clip(&s.updated_at, 40)
            );
            if let Some(o) = s.owner {
                d.push_str(&format!(", owner {}", clip(&o.to_string(), 80)));
            }
            if let Some(b) = s.branch {
                d.push_str(&format!(", branch {}", clip(&b, 60)));
            }
            d
        }
        Err(_) => format!("`{}` (not a whole session on its own)", side.label),
    }
}

/// The refusal for the session file `rel` (in the project at `root`) whose text has
/// conflict markers. While the merge is under way each version is read whole from the
/// index and named after its branch; the text alone is a fallback (a file committed with
/// its markers), whose common lines git already chose between the versions.
pub fn markers_error(root: &std::path::Path, rel: &str, text: &str) -> Option<Error> {
    sides(text)?;
    let from_index = crate::git::Repo::at(root).and_then(|r| r.merge_sides(rel));
    let (ours, theirs) = match from_index {
        Some((o, t)) => (
            Side {
                label: o.branch,
                text: o.text,
            },
            Side {
                label: t.branch,
                text: t.text,
            },
        ),
        None => sides(text)?,
    };
    let task = task_name(&ours.text)
        .or_else(|| task_name(&theirs.text))
        .unwrap_or_else(|| "<task>".into());
    Some(Error::SessionConflicted {
        path: rel.to_string(),
        versions: format!("version 1 {}; version 2 {}", describe(&ours), describe(&theirs)),
        keep: format!(
            "while the merge is under way, `bmad-mcp resolve {task} --ours` keeps version 1 and `bmad-mcp resolve {task} --theirs` version 2, each as a whole (the session, its documents in .claude/specs/{task}/ and its drafts, staged; nothing of the other version stays beside it), then commit the merge. Nothing of either version was changed"
        ),
    })
}

fn task_name(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Named {
        task_name: String,
    }
    serde_json::from_str::<Named>(text)
        .ok()
        .map(|n| n.task_name)
        .filter(|t| super::names::is_valid(t))
}

/// Where a stored session's history forks: an entry older than the one before it (the
/// server never writes one: each entry is after the last), or a second `start`. Both are
/// what two histories merged into one file look like. (An entry whose `from` is not the
/// `to` before it is not counted: a state edited by hand is read as it is.)
pub fn fork(s: &Session) -> Option<String> {
    let say = |i: usize, h: &HistoryEntry| {
        format!(
            "entry {} ({} {} at {}: {} → {})",
            i + 1,
            h.action.name(),
            h.stage,
            clip(&h.at, 40),
            h.from.map_or("start".to_string(), |f| f.to_string()),
            h.to
        )
    };
    let (i, b, a) = s.fork()?;
    Some(format!("{} does not follow {}", say(i, b), say(i - 1, a)))
}

/// The refusal for a session whose history forks.
pub fn fork_error(rel: &str, why: String) -> Error {
    Error::SessionConflicted {
        path: rel.to_string(),
        versions: format!("two histories were merged into one file: {why}"),
        keep: format!(
            "find both versions with `git log --oneline -- {rel}` and restore the one to keep with `git checkout <commit> -- {rel}` (and the task's documents from the same commit). Nothing was changed"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::Action;

    #[test]
    fn both_sides_are_rebuilt_from_the_markers() {
        let text = "{\n  \"a\": 1,\n<<<<<<< HEAD\n  \"s\": \"dev\",\n=======\n  \"s\": \"qa\",\n>>>>>>> feature/x\n  \"z\": 2\n}\n";
        let (ours, theirs) = sides(text).unwrap();
        assert_eq!(ours.label, "HEAD");
        assert_eq!(theirs.label, "feature/x");
        assert_eq!(
            ours.text,
            "{\n  \"a\": 1,\n  \"s\": \"dev\",\n  \"z\": 2\n}\n"
        );
        assert_eq!(
            theirs.text,
            "{\n  \"a\": 1,\n  \"s\": \"qa\",\n  \"z\": 2\n}\n"
        );
        // diff3 style: the base is in neither.
        let d3 = "<<<<<<< ours\no\n||||||| base\nb\n=======\nt\n>>>>>>> theirs\n";
        let (o, t) = sides(d3).unwrap();
        assert_eq!((o.text.as_str(), t.text.as_str()), ("o\n", "t\n"));
        // No markers, or a conflict that does not end.
        assert_eq!(sides("{\"x\": \"=======\"}\n"), None);
        assert_eq!(sides("<<<<<<< a\nx\n=======\n"), None);
    }

    #[test]
    fn two_merged_histories_are_a_fork_and_a_hand_edited_state_is_not() {
        use chrono::TimeZone;
        let t0 = chrono::Utc
            .with_ymd_and_hms(2026, 11, 24, 10, 0, 0)
            .unwrap();
        let s = Session::test().id("id").at(t0).build();
        let mut entry = s.history[0].clone();
        entry.action = Action::Submit;
        entry.from = Some(State::Refining);
        entry.to = State::AwaitingConfirmation;
        entry.at = "2026-11-24T10:05:00.000Z".into();
        let mut edited = s.clone();
        edited.history.push(entry.clone());
        assert_eq!(
            fork(&edited),
            None,
            "a state edited by hand before the entry"
        );
        let mut merged = edited.clone();
        entry.at = "2026-11-24T10:03:00.000Z".into();
        merged.history.push(entry);
        let why = fork(&merged).unwrap();
        assert!(
            why.starts_with("entry 3 (submit po at 2026-11-24T10:03"),
            "{why}"
        );
        let mut two_starts = edited;
        two_starts.history.push(s.history[0].clone());
        let mut late = two_starts.history[2].clone();
        late.at = "2026-11-24T10:09:00.000Z".into();
        two_starts.history[2] = late;
        assert!(fork(&two_starts).unwrap().contains("(start po"));
    }
}
