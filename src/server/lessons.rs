//! `remember` and `recall`, the tool's two lesson actions (not stage actions: like `list`,
//! legal whatever the state, never in `allowed_actions`). `remember` keeps a lesson the
//! host writes in `.bmad/lessons/`, under the project lock, marked as the host's
//! (`source: host`) and logged; `recall` ranks the project's active lessons for a query and
//! a role, changing nothing. A session, when named, gives the task, the role (its current
//! stage) and the query (its objective).

use chrono::Utc;

use super::args::LessonCall;
use super::reply::{self, Reply};
use crate::error::Result;
use crate::files::Project;
use crate::lessons::{self, Category};
use crate::store::Store;
use crate::workflow::session::timestamp;
use crate::workflow::{Session, Stage};

/// Lessons a `recall` names.
const RECALLED: usize = 10;
/// Characters of each recalled lesson's words.
const SHOWN: usize = 400;

pub(super) fn run(store: &Store, call: LessonCall) -> Reply {
    let (LessonCall::Remember { cwd, key, .. } | LessonCall::Recall { cwd, key, .. }) = &call;
    // The project, and the session when one is named.
    let located = match key {
        Some(k) => store.load(cwd.as_deref(), k).map(|(p, s)| (p, Some(s))),
        None => store.project(cwd.as_deref()).map(|p| (p, None)),
    };
    let done = located.and_then(|(project, session)| {
        let s = session.as_ref();
        let mut r = match call {
            LessonCall::Remember {
                role,
                category,
                lesson,
                ..
            } => remember(store, &project, s, role, category, &lesson)?,
            LessonCall::Recall { role, query, .. } => recall(&project, s, role, query)?,
        };
        if let Some(s) = s {
            r.session_id = Some(s.session_id.clone());
            r.task_name = Some(s.task_name.clone());
        }
        Ok(r)
    });
    done.unwrap_or_else(|e| reply::for_error(&e, None))
}

fn remember(
    store: &Store,
    project: &Project,
    session: Option<&Session>,
    role: Option<Stage>,
    category: Category,
    words: &str,
) -> Result<Reply> {
    let role = role
        .or(session.map(|s| s.current_stage))
        .unwrap_or(Stage::FIRST);
    let now = Utc::now();
    let at = timestamp(now);
    let seed = format!(
        "{}:{}",
        session.map_or_else(|| project.display(), |s| s.session_id.clone()),
        now.timestamp_nanos_opt().unwrap_or_default()
    );
    let task = session.map(|s| s.task_name.as_str());
    let l = lessons::remembered(role, category, task, words, &at, &seed);
    {
        let _lock = store.lock(project)?;
        project.write_atomic(&l.rel_path(), lessons::render(&l).as_bytes())?;
    }
    tracing::info!(lesson = %l.id, category = %l.category, role = l.role.id(), "the host remembered a lesson");
    Ok(Reply {
        user_message: format!(
            "Kept a lesson for later tasks, marked as written by the assistant: {} ({}, {} role). The human can read it with `bmad-mcp lessons show {}` and retire it with `bmad-mcp lessons retire {}`.",
            l.rel_path(),
            l.category,
            l.role.id(),
            l.id,
            l.id
        ),
        lessons: Some(vec![l.id.clone()]),
        ..Reply::default()
    })
}

fn recall(
    project: &Project,
    session: Option<&Session>,
    role: Option<Stage>,
    query: Option<String>,
) -> Result<Reply> {
    let role = role.or(session.map(|s| s.current_stage));
    let query = query
        .or_else(|| session.map(|s| s.objective.clone()))
        .unwrap_or_default();
    let loaded = lessons::load(project)?;
    let ranked = lessons::rank(&loaded, &query, role, None, RECALLED);
    let lines: Vec<String> = ranked
        .iter()
        .map(|l| {
            format!(
                "{} [{}, {} role, task {}, {}] {}",
                l.id,
                l.category,
                l.role.id(),
                l.task,
                l.source.said_by(),
                crate::code::clip(
                    &l.words.split_whitespace().collect::<Vec<_>>().join(" "),
                    SHOWN
                )
            )
        })
        .collect();
    Ok(Reply {
        user_message: format!(
            "{} of the project's {} active lesson(s) match: earlier lessons, not requirements.",
            lines.len(),
            loaded.active().count()
        ),
        lessons: Some(ranked.iter().map(|l| l.id.clone()).collect()),
        recalled: Some(lines),
        notices: reply::some_vec(
            loaded
                .damaged
                .iter()
                .map(|(p, why)| format!("A lesson file was skipped: {p} {why}"))
                .collect(),
        ),
        ..Reply::default()
    })
}
