//! What the page shows, read from disk at each request (disk is the only truth): the
//! tasks of every project served, and one task in full: its stage timeline, each
//! document rendered, its earlier rounds named by what answered them, with a diff against
//! the current text ([`super::rounds`]), the questions and answers, the audit (who decided,
//! on which draft), the checks with their output, accepted risks, drift, the project's
//! lessons, what waits for the human (with the earlier round's comment threads,
//! [`super::threads`]), and, when the session holds them, its owner, branch, track,
//! stories (as they stand now, wherever they run), who holds its sprints on the team's
//! remote, whether this copy of it is behind, and traceability matrix. Texts are sent as
//! text (the page sets them with `textContent`); only Markdown and diffs are HTML, made
//! by [`super::render`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{json, Value};

use super::rounds::{self, Draft};
use super::Dashboard;
use super::{checks, matrix, render, threads};
use crate::error::{Error, Result};
use crate::files::Project;
use crate::policy::{self, approval::Policy};
use crate::store::{documents, human_decisions, stories, SessionKey, Store};
use crate::workflow::authorship::{self, Said, Speaker};
use crate::workflow::machine::{self, sha256_hex};
use crate::workflow::{Action, Session, Stage};

/// The most a document, a round or a check's output is read to be shown.
const MAX_SHOWN_BYTES: u64 = 2 * 1024 * 1024;
/// The earlier rounds shown per stage, newest first.
const MAX_ROUNDS: usize = 12;

#[derive(Serialize)]
pub struct TaskRow {
    pub project: usize,
    pub project_dir: String,
    pub session_id: String,
    pub task_name: String,
    pub stage: Stage,
    pub role: &'static str,
    pub state: String,
    pub updated_at: String,
    /// The decisions the human can take now (`confirm`, `reject`, …).
    pub waiting: Vec<&'static str>,
    /// Fields of other features, when the session has them (`owner`, `track`, …).
    pub extra: serde_json::Map<String, Value>,
}

/// What the session says of its team and shape, when it says it (owner, branch, track,
/// story, stories), and the traceability matrix in brief (its counts and the ids that need
/// attention, docs/traceability.md) when the PRD gives ids.
fn extras(s: &Session) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    let mut put = |k: &str, v: Value| {
        if !v.is_null() && v != json!([]) {
            out.insert(k.into(), v);
        }
    };
    put("owner", json!(s.owner.as_ref().map(|o| o.to_string())));
    put("branch", json!(s.branch));
    put("track", json!(s.track));
    put("story", json!(s.story));
    put("stories", json!(s.stories));
    put("claimed", json!(s.claimed));
    put("twice", json!(crate::store::stories::twice(s)));
    put("trace", json!(crate::workflow::trace::summary(s)));
    out
}

fn waiting(s: &Session) -> Vec<&'static str> {
    human_decisions(s.current_stage, s.current_state)
        .into_iter()
        .map(Action::name)
        .collect()
}

/// Every task of every project, newest first within a project, each task of a clone once
/// ([`one_per_task`]); a copy of a parent that moved on elsewhere is marked `behind`, not
/// shown waiting on the human.
pub fn tasks(dash: &Dashboard) -> Vec<TaskRow> {
    let mut rows = Vec::new();
    for (index, store) in dash.stores().iter().enumerate() {
        let Ok(project) = store.project(None) else {
            continue;
        };
        // Each work tree names the common directory its own way (a linked one through
        // `../..`): compared as the folder it is.
        let clone = crate::git::Repo::at(&project.root).map(|r| {
            let dir = r.common_dir();
            dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
        });
        let mut cursor: Option<String> = None;
        while let Ok(page) = store.list(None, cursor.as_deref()) {
            for entry in &page.sessions {
                let Ok((_, s)) = store.load(None, &SessionKey::from_task(&entry.session_id)) else {
                    continue;
                };
                let s = store.with_stories(&project, &s, None);
                let behind = stories::stale_copy(&project, &s);
                let mut extra = extras(&s);
                if let Some(b) = &behind {
                    extra.insert("behind".into(), json!(b));
                }
                let row = TaskRow {
                    project: index,
                    project_dir: project.display(),
                    session_id: s.session_id.clone(),
                    task_name: s.task_name.clone(),
                    stage: s.current_stage,
                    role: s.current_stage.role(),
                    state: s.current_state.to_string(),
                    updated_at: s.updated_at.clone(),
                    waiting: if behind.is_some() {
                        Vec::new()
                    } else {
                        waiting(&s)
                    },
                    extra,
                };
                rows.push((clone.clone(), row));
            }
            match page.next_cursor {
                Some(next) if rows.len() < 2000 => cursor = Some(next),
                _ => break,
            }
        }
    }
    one_per_task(rows)
}

/// One row per task of a clone (`rows` keyed by the clone's git common directory): a task
/// whose session is in several of its work trees (a parent copied into each story's
/// worktree, a story merged back into the main one) is shown from where it changed last.
/// Rows of different clones, or outside git (`None`), all stay.
fn one_per_task(rows: Vec<(Option<PathBuf>, TaskRow)>) -> Vec<TaskRow> {
    let mut newest: HashMap<(&Path, &str), usize> = HashMap::new();
    for (i, (clone, r)) in rows.iter().enumerate() {
        let Some(c) = clone else { continue };
        newest
            .entry((c.as_path(), r.session_id.as_str()))
            .and_modify(|b| {
                if rows[*b].1.updated_at < r.updated_at {
                    *b = i;
                }
            })
            .or_insert(i);
    }
    let keep: Vec<bool> = rows
        .iter()
        .enumerate()
        .map(|(i, (clone, r))| {
            clone
                .as_ref()
                .is_none_or(|c| newest[&(c.as_path(), r.session_id.as_str())] == i)
        })
        .collect();
    rows.into_iter()
        .zip(keep)
        .filter_map(|((_, r), k)| k.then_some(r))
        .collect()
}

/// A text of the project, as much of it as is shown.
fn text(project: &Project, rel: &str) -> Option<String> {
    project.read_at_most(rel, MAX_SHOWN_BYTES).ok().flatten()
}

/// One task in full, as the page shows it.
pub fn task(store: &Store, project_index: usize, id: &str) -> Result<Value> {
    // A parent's stories as they stand now, wherever they run (the claims on the team's
    // remote as this clone last fetched them: never waited for), not as its last change
    // saw them.
    let (project, s, claims) = store.load_fresh(None, &SessionKey::from_task(id), false)?;
    // The stages of the session's track, in its order (docs/spec.md §18).
    let drafts: Vec<(Stage, (Vec<Draft>, usize))> = s
        .track
        .stages()
        .iter()
        .map(|&stage| (stage, rounds::drafts(&project, &s, stage)))
        .collect();
    let stages: Vec<Value> = drafts
        .iter()
        .map(|(stage, found)| stage_view(&project, &s, *stage, found))
        .collect();
    let audit: Vec<Value> = s
        .audit()
        .iter()
        .map(|h| json!({
            "at": h.at, "action": h.action.name(), "stage": h.stage, "from": h.from, "to": h.to,
            "decided_by": h.decided_by, "via": h.via, "digest": h.digest.as_ref().map(|d| d.chars().take(12).collect::<String>()),
            "decider": h.decider.as_ref().map(|p| p.to_string()),
            // Who decided, as one name (the person, with the channel), and on which draft.
            "who": h.decided_by.map(|_| rounds::who(h)),
            "version": h.digest.as_deref().and_then(|d| version_of(&project, &s, &drafts, h.stage, d)),
            // The decider's own words, labelled, apart from the server's note on the step.
            "words": h.feedback.as_ref().map(|w| {
                let by = h.decided_by.map_or(Speaker::Unrecorded, authorship::speaker);
                format!("{}: {w}", authorship::label(by, h.via))
            }),
            "server_note": h.note,
        }))
        .collect();
    Ok(json!({
        "project": project_index,
        "project_dir": project.display(),
        // A copy of a parent that moved on in another worktree: said so, above all else.
        "behind": stories::stale_copy(&project, &s),
        "session_id": s.session_id,
        "task_name": s.task_name,
        "objective": s.objective,
        "stage": s.current_stage,
        "role": s.current_stage.role(),
        "state": s.current_state,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "stages": stages,
        "audit": audit,
        "decision": decision(store, &s),
        "config_waiting": policy::config_waiting(store, None).ok().flatten().map(|w| json!({"sha256": w.sha256, "changes": w.changes})),
        "extra": extras(&s),
        "matrix": matrix::view(&s),
        "lessons": lessons(&project),
        // Who holds its sprints on the team's remote, as last fetched and said how long ago;
        // for a story, its sprint released or taken by another.
        "claims": claims.as_ref().and_then(|c| store.holders_in(c, &s)),
        "claim_news": store.claim_news(&s, claims.as_ref()),
        // Sprints the BMAD method's sprint status calls done that no story completed.
        "done_by_hand": store.done_by_hand(&crate::bmad_method::Method::of(&project), &s),
        // Sprints the BMAD method's own build holds (its spec or its sprint status).
        "held_by_method": store.held_by_method(&crate::bmad_method::Method::of(&project), &s),
        "drift": crate::store::drift(&project, &s).map(|d| json!({"documents": d.documents, "words": d.describe()})),
        // The night shift's steps and tokens of it, and why it is parked.
        "night": crate::night::summary(&project.root, &s),
    }))
}

/// The project's lessons, the active ones first, each with whose words it holds and the
/// latest retire or restore; the files that cannot be read, with why.
fn lessons(project: &Project) -> Value {
    let loaded = match crate::lessons::load(project) {
        Ok(l) => l,
        Err(e) => return json!({"error": e.to_string()}),
    };
    let mut all: Vec<&crate::lessons::Lesson> = loaded.lessons.iter().collect();
    all.sort_by_key(|l| !l.is_active());
    let rows: Vec<Value> = all
        .into_iter()
        .map(|l| {
            json!({
                "id": l.id, "role": l.role.role(), "category": l.category.name(),
                "source": l.source.name(), "said_by": l.source.said_by(), "task": l.task,
                "date": l.date, "retired": l.retired, "decided": l.decided, "words": l.words,
                "sha256": l.shown_sha256(),
            })
        })
        .collect();
    json!({"lessons": rows, "damaged": loaded.damaged})
}

/// The version a decision was about, by name: the draft of its stage with that digest,
/// else the stage's saved document.
fn version_of(
    project: &Project,
    s: &Session,
    drafts: &[(Stage, (Vec<Draft>, usize))],
    stage: Stage,
    digest: &str,
) -> Option<String> {
    let found = drafts.iter().find(|(st, _)| *st == stage)?;
    let doc = s
        .record(stage)
        .final_result_ref
        .as_ref()
        .map(|r| r.file_path.as_str());
    match found
        .1
         .0
        .iter()
        .rev()
        .find(|d| d.sha256(project, text) == Some(digest))
    {
        Some(d) => Some(d.name()),
        None => s
            .record(stage)
            .artifact
            .as_ref()
            .filter(|a| a.sha256 == digest)
            .map(|a| format!("the saved {}", a.path))
            .or_else(|| {
                doc.filter(|p| text(project, p).is_some_and(|t| sha256_hex(&t) == digest))
                    .map(|p| format!("the document {p}"))
            }),
    }
}

/// One stage of a task as the page shows it: its record, its document (with its rounds),
/// its questions and its checks.
fn stage_view(project: &Project, s: &Session, stage: Stage, found: &(Vec<Draft>, usize)) -> Value {
    let rec = s.record(stage);
    let doc = rec.draft_ref.as_ref().or(rec.final_result_ref.as_ref());
    let document = doc.and_then(|r| {
        let body = text(project, &r.file_path)?;
        let rounds = rounds::view(project, s, stage, &body, found, text, MAX_ROUNDS);
        Some(json!({
            "path": r.file_path,
            "sha256": sha256_hex(&body),
            "html": render::markdown(&body),
            "text": body,
            "rounds": rounds.0,
            "rounds_note": rounds.1,
        }))
    });
    let checks = rec
        .checks
        .as_ref()
        .map(|run| checks::view(project, run, text));
    let questions: Vec<Value> = rec
        .questions
        .iter()
        .map(|q| json!({"id": q.id, "question": q.question, "context": q.context, "round": q.round, "answer": rec.answers.get(&q.id)}))
        .collect();
    json!({
        "stage": stage,
        "role": stage.role(),
        "status": rec.status,
        "iteration": rec.iteration,
        "score": rec.score,
        "gate_passed": rec.gate_passed,
        "review_status": rec.review_status,
        "accepted_risk": rec.accepted_risk,
        "scope": rec.scope,
        "sprints": rec.sprints,
        "feedback": rec.feedback.iter().map(Said::labelled).collect::<Vec<_>>(),
        "notes": rec.notes,
        "document": document,
        "questions": questions,
        "checks": checks,
    })
}

/// What the human is asked now: the decisions legal at this state, and what each shows
/// (the document and its digest, the sprints, the open questions, a failed verdict).
fn decision(store: &Store, s: &Session) -> Value {
    let actions = human_decisions(s.current_stage, s.current_state);
    let Some(first) = actions.first() else {
        return Value::Null;
    };
    // From the session already read; a policy that cannot be read would refuse the
    // decision, which the page says instead.
    let found = store.project(None).and_then(|project| {
        Policy::read(&project)?;
        let pending = machine::pending(s, *first, &documents(&project, s))?;
        Ok((project, pending))
    });
    let (project, pending) = match found {
        Ok(found) => found,
        Err(e) => return json!({"actions": names(&actions), "error": e.to_string()}),
    };
    // The document as the page shows it, with the digest the decision is bound to: read
    // once, so the text shown and the digest sent back are of the same version.
    let document = pending.document.as_ref().map(|d| {
        let body = text(&project, &d.path).unwrap_or_default();
        json!({"path": d.path, "sha256": sha256_hex(&body), "size": d.size, "html": render::markdown(&body), "text": body})
    });
    let threads: Vec<Value> = pending
        .document
        .as_ref()
        .map(|d| threads::of(s, pending.stage, &d.path))
        .unwrap_or_default()
        .iter()
        .map(threads::Thread::view)
        .collect();
    json!({
        "actions": names(&actions),
        "stage": pending.stage,
        "document": document,
        "threads": threads,
        "score": pending.score,
        "gate": pending.gate,
        "sprints": pending.sprints,
        "questions": pending.questions,
        "notices": pending.notices,
        "failed_verdict": pending.failed_verdict,
    })
}

fn names(actions: &[Action]) -> Vec<&'static str> {
    actions.iter().map(|a| a.name()).collect()
}

/// The error a page request reports, as text.
pub fn message(e: &Error) -> String {
    crate::code::clip(&e.to_string(), 2000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(project: usize, id: &str, at: &str) -> TaskRow {
        TaskRow {
            project,
            project_dir: format!("/w{project}"),
            session_id: id.into(),
            task_name: id.into(),
            stage: Stage::Dev,
            role: Stage::Dev.role(),
            state: "generating".into(),
            updated_at: at.into(),
            waiting: Vec::new(),
            extra: serde_json::Map::new(),
        }
    }

    #[test]
    fn a_task_in_several_work_trees_of_a_clone_is_one_row_from_where_it_changed_last() {
        let clone = Some(PathBuf::from("/w0/.git"));
        let other = Some(PathBuf::from("/elsewhere/.git"));
        let got = one_per_task(vec![
            (clone.clone(), row(0, "parent", "2026-11-27T10:00:00.000Z")),
            (clone.clone(), row(1, "parent", "2026-11-27T09:00:00.000Z")),
            (clone.clone(), row(1, "story", "2026-11-27T08:00:00.000Z")),
            (clone.clone(), row(0, "story", "2026-11-27T08:00:00.000Z")),
            (other, row(2, "parent", "2026-11-27T07:00:00.000Z")),
            (None, row(3, "parent", "2026-11-27T07:00:00.000Z")),
        ]);
        let seen: Vec<(usize, &str)> = got
            .iter()
            .map(|r| (r.project, r.session_id.as_str()))
            .collect();
        assert_eq!(
            seen,
            [(0, "parent"), (1, "story"), (2, "parent"), (3, "parent")]
        );
    }
}
