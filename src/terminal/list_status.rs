//! The terminal's reading commands: `list` (the project's sessions, newest first, a
//! parent's with who holds its sprints on the team's remote and the sprints done outside
//! the server's gates) and
//! `status` (where a task stands, its checks, who decided what). They change nothing.

use super::{Exit, Outcome};
use crate::code::{visible, visible_lines};
use crate::server::reply;
use crate::store::{faults, Ignored, SessionKey, Store};
use crate::workflow::State;

pub(super) fn list(store: &Store, mine: bool) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let page = store.list_of(None, None, mine).map_err(|e| e.to_string())?;
    let whose = if mine { " started by you" } else { "" };
    println!("{} session(s) in {}{whose}", page.total, project.display());
    // As wide as the longest name shown: a long name must not push the row apart.
    let width = page
        .sessions
        .iter()
        .map(|s| s.task_name.chars().count())
        .max()
        .unwrap_or(0)
        .max(32);
    // Who holds which sprint of a parent on the team's remote: one bounded fetch for all,
    // made only when a task listed may be waiting on its stories.
    let waits = |s: &crate::store::ListEntry| {
        s.track == crate::workflow::Track::Full
            && s.current_stage.builds_scope()
            && s.current_state == State::Generating
    };
    let claims = page
        .sessions
        .iter()
        .any(waits)
        .then(|| crate::store::stories::board::read(&project))
        .flatten();
    // The BMAD install, read once for the whole list (only if a parent shows its sprints).
    let method = crate::bmad_method::Method::of(&project);
    if !page.sessions.is_empty() {
        println!(
            "  {:<width$} {:<5} {:<9} {:<22} UPDATED  OWNER  BRANCH",
            "TASK", "TRACK", "STAGE", "STATE"
        );
    }
    for s in &page.sessions {
        let mut who = String::new();
        if let Some(o) = &s.owner {
            who.push_str(&format!("  {}", visible(&o.to_string())));
        }
        if let Some(b) = &s.branch {
            who.push_str(&format!("  on {}", visible(b)));
        }
        println!(
            "  {:<width$} {:<5} {:<9} {:<22} {}{who}",
            s.task_name,
            s.track.to_string(),
            s.current_stage.to_string(),
            s.current_state.to_string(),
            s.updated_at
        );
        let parent = claims.as_ref().filter(|_| waits(s)).and_then(|c| {
            let (_, parent) = store
                .load(None, &SessionKey::Id(s.session_id.clone()))
                .ok()?;
            Some((store.with_stories(&project, &parent, Some(c)), c))
        });
        if let Some((parent, c)) = &parent {
            let said = [
                store.holders_in(c, parent),
                crate::store::stories::twice(parent),
            ];
            for line in said.into_iter().flatten() {
                println!("      {}", visible(&line));
            }
        }
        for line in by_hand(store, &method, s) {
            println!("      {}", visible(&line));
        }
    }
    if page.next_cursor.is_some() {
        println!(
            "  … and more (the newest {} are shown)",
            page.sessions.len()
        );
    }
    damaged(&page);
    Ok(Exit::Done)
}

/// For a parent in `list`: its sprints done outside the server's gates in the BMAD
/// method's sprint status, and those the method holds (only a full-track task at the stage
/// that builds its scope has them to show).
fn by_hand(
    store: &Store,
    method: &crate::bmad_method::Method,
    s: &crate::store::ListEntry,
) -> Vec<String> {
    let builds = s.track == crate::workflow::Track::Full && s.current_stage.builds_scope();
    if !builds || s.current_state == State::Completed {
        return Vec::new();
    }
    let Ok((project, parent)) = store.load(None, &SessionKey::Id(s.session_id.clone())) else {
        return Vec::new();
    };
    let parent = crate::store::stories::with_stories(&project, &parent);
    [
        store.done_by_hand(method, &parent),
        store.held_by_method(method, &parent),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The session files the server cannot read, shown as damaged with what can still be read
/// of them: a session the assistant corrupted stays in the human's view.
fn damaged(page: &crate::store::Page) {
    if page.damaged_total == 0 {
        return;
    }
    println!(
        "{} damaged session file(s), which the server cannot read:",
        page.damaged_total
    );
    let or_unknown = |v: Option<String>| v.map_or_else(|| "?".to_string(), |v| visible(&v));
    for d in &page.damaged {
        let r = &d.readable;
        println!(
            "  {} {} {} {} {}  ({}: {})",
            if d.conflicted {
                "CONFLICTED"
            } else {
                "DAMAGED"
            },
            or_unknown(r.task_name.clone()),
            or_unknown(r.current_stage.map(|s| s.to_string())),
            or_unknown(r.current_state.map(|s| s.to_string())),
            or_unknown(r.updated_at.clone()),
            visible(&d.file),
            visible(&d.reason)
        );
    }
    if page.damaged.len() < page.damaged_total {
        println!("  … and more (the first {} are shown)", page.damaged.len());
    }
}

pub(super) fn status(store: &Store, key: &SessionKey) -> Outcome {
    let (project, s, claims) = store
        .load_fresh(None, key, true)
        .map_err(|e| e.to_string())?;
    let project = Some(project);
    println!("task {} ({})", visible(&s.task_name), s.session_id);
    println!(
        "track {} ({}), stage {}, state {}",
        s.track,
        s.track.description(),
        s.current_stage,
        s.current_state
    );
    if let Some(link) = &s.story {
        println!(
            "story of sprint {} ({}) of task {}, held by {}{} in {}",
            link.sprint,
            visible(&link.sprint_title),
            visible(&link.parent_task),
            visible(&link.owner),
            link.branch
                .as_deref()
                .map(|b| format!(" on branch {}", visible(b)))
                .unwrap_or_default(),
            visible(&link.worktree)
        );
    }
    if let Some(p) = project.as_ref() {
        stories(store, p, &s, claims.as_ref());
    }
    if let Some(line) = project
        .as_ref()
        .and_then(|p| crate::night::summary(&p.root, &s))
    {
        println!("{line}");
    }
    println!("{}", visible_lines(&reply::status_message(&s)));
    if let Some(d) = project.as_ref().and_then(|p| crate::store::drift(p, &s)) {
        println!("{}", visible_lines(&d.describe()));
    }
    let fault = project
        .as_ref()
        .and_then(|p| Some((p, faults::since_last_change(p, &s)?)));
    if let Some((p, f)) = fault {
        println!("{}", visible(&faults::describe(p, &f)));
    }
    if let Some(t) =
        crate::workflow::trace::summary(&s).filter(|_| s.current_state != State::Completed)
    {
        println!("{}", visible(&t.line()));
    }
    for (stage, rec) in s.stages.iter() {
        let Some(run) = &rec.checks else { continue };
        println!("checks of {stage}, run {}:", visible(&run.at));
        for c in &run.checks {
            println!(
                "  {}  ({} ms, output sha256 {})",
                visible(&c.describe()),
                c.duration_ms,
                c.output_sha256
            );
        }
    }
    decisions(reply::decisions(&s));
    Ok(Exit::Done)
}

/// Every decision of a task: when, which, by whom, how, on which digest, and the client it
/// came through where that was recorded.
fn decisions(decisions: Vec<reply::DecisionEntry>) {
    if decisions.is_empty() {
        return;
    }
    println!("decisions:");
    for d in decisions {
        println!(
            "  {}  {:<9} {:<8} by {:<5} via {:<11} on {}",
            visible(&d.at),
            d.stage.to_string(),
            d.action.name(),
            serde_name(&d.decided_by),
            serde_name(&d.via),
            visible(d.digest.as_deref().unwrap_or("-"))
        );
        if let Some(p) = &d.decider {
            println!("      {}", visible(&p.to_string()));
        }
        if let Some(client) = &d.client {
            println!("      through {}", visible(client));
        }
    }
}

/// A parent's stories: the ones this clone knows of and those other clones claimed,
/// whether this copy of it is stale, who holds which sprint on the team's remote and a
/// sprint two stories hold; for a story, what became of its claim.
fn stories(
    store: &Store,
    project: &crate::files::Project,
    s: &crate::workflow::session::Session,
    claims: Option<&crate::store::stories::board::Claims>,
) {
    for o in &s.stories {
        println!("  story: sprint {}: {}", o.sprint, visible(&o.holder()));
    }
    for c in &s.claimed {
        println!("  story: sprint {}: {}", c.sprint, visible(&c.holder()));
    }
    let said = [
        crate::store::stories::stale_copy(project, s),
        claims.and_then(|c| store.holders_in(c, s)),
        crate::store::stories::twice(s),
        store.claim_news(s, claims),
        store.done_by_hand(&crate::bmad_method::Method::of(project), s),
        store.held_by_method(&crate::bmad_method::Method::of(project), s),
    ];
    for line in said.into_iter().flatten() {
        println!("{}", visible(&line));
    }
}

fn serde_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `init`: the project's .gitignore gets the files local to each clone; in git, the merge
/// driver of the BMAD method's sprint status is installed; with the method installed, a
/// missing `uv` its skills need is said.
pub(super) fn init(store: &Store) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let done = crate::store::write_gitignore(&project).map_err(|e| e.to_string())?;
    let what = match done {
        Ignored::Created => "created, with",
        Ignored::Added => "now ends with",
        Ignored::Updated => "has an updated block of",
        Ignored::AlreadyThere => "already has",
    };
    println!(
        "{}/.gitignore {what} the files local to this clone:",
        project.display()
    );
    for line in crate::store::LOCAL_FILES {
        println!("  {line}");
    }
    let attributes = match super::merge_driver::install(&project) {
        None => "",
        Some(Ok(said)) => {
            println!("{said}");
            " .gitattributes,"
        }
        Some(Err(e)) => {
            eprintln!("The merge driver of the BMAD method's sprint status was not installed: {e}");
            ""
        }
    };
    println!(
        "Commit .gitignore,{attributes} .bmad/, .bmad-task/ and .claude/specs/ (docs/team.md)."
    );
    if let Some(uv) =
        crate::bmad_method::runtime::uv_notice(&crate::bmad_method::Method::of(&project))
    {
        println!("Note: {}", crate::code::visible(&uv));
    }
    Ok(Exit::Done)
}
