//! `bmad-mcp claims`, `bmad-mcp claims release <task> <sprint>` and `bmad-mcp claims keep <task>
//! <sprint>`: the sprints the team's remote holds (who, which sprint of which task, since when,
//! from which clone and branch, and the claims this clone keeps until the remote can be reached),
//! one released, and, where two stories hold one sprint, the one the human keeps. Each is the
//! human's decision: asked on the terminal, never under an assistant's shell, bound to the claim as
//! shown, and recorded on the remote with who made it
//! ([`act::human::release_claim`](crate::act::human::release_claim),
//! [`act::human::keep_story`](crate::act::human::keep_story)). Releasing a claim whose clone is not
//! known to be gone asks for its holder's name typed back: they may still be working, and are told
//! at their next call.

use clap::Subcommand;

use super::{yes, Exit, Outcome};
use crate::act::human;
use crate::code::{clip, visible};
use crate::files::Project;
use crate::store::stories::board::{self, Claims, Held};
use crate::store::{SessionKey, Store};
use crate::workflow::when;
use crate::workflow::Via;

#[derive(Subcommand, Debug)]
pub enum ClaimsCommand {
    /// The claims on the team's remote, and the releases recorded there (the default).
    List,
    /// Release the claim of a sprint (asks on the terminal; for a holder whose clone is not
    /// known to be gone, their name typed back).
    Release {
        /// The parent task's name or session id.
        task: String,
        /// The sprint whose claim is released.
        sprint: u32,
    },
    /// Choose which story to keep where two hold one sprint (lists them and asks).
    Keep {
        /// The parent task's name or session id.
        task: String,
        /// The sprint two stories hold.
        sprint: u32,
    },
}

pub(super) fn run(store: &Store, command: Option<ClaimsCommand>) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    match command.unwrap_or(ClaimsCommand::List) {
        ClaimsCommand::List => {
            let claims = read(&project)?;
            list(store, &project, &claims);
            Ok(Exit::Done)
        }
        ClaimsCommand::Release { task, sprint } => release(store, &project, &task, sprint),
        ClaimsCommand::Keep { task, sprint } => keep(store, &task, sprint),
    }
}

fn read(project: &Project) -> Result<Claims, String> {
    board::read(project).ok_or_else(|| {
        format!(
            "{} has no git remote: claims are kept in the clone (docs/team.md)",
            project.display()
        )
    })
}

/// The parent task's name where this clone has its session, else its id.
fn task_of(store: &Store, project: &Project, parent_id: &str) -> String {
    let key = SessionKey::Id(parent_id.to_string());
    store
        .load(Some(&project.root.display().to_string()), &key)
        .map(|(_, s)| visible(&s.task_name))
        .unwrap_or_else(|_| format!("(task {parent_id}, not in this clone)"))
}

/// "Ben Okafor <ben@…> in /work/ben on branch `s1`", cut short and made visible.
fn holder(h: &Held) -> String {
    h.claimant.as_ref().map_or_else(
        || "someone (the claim could not be read)".to_string(),
        |c| visible(&clip(&c.named(), 300)),
    )
}

fn list(store: &Store, project: &Project, claims: &Claims) {
    let now = chrono::Utc::now();
    println!(
        "{} claim(s) on the remote `{}`, {}:",
        claims.held.len(),
        visible(&claims.remote),
        claims.how_read(now)
    );
    let row = |h: &Held| {
        println!(
            "  {} sprint {}: {}, since {}",
            task_of(store, project, &h.parent_id),
            h.sprint,
            holder(h),
            when::shown(&h.since, now)
        );
    };
    claims.held.iter().for_each(row);
    if !claims.held.is_empty() {
        println!("Release one: bmad-mcp claims release <task> <sprint>");
    }
    if !claims.pending.is_empty() {
        println!("Kept in this clone, not on the remote yet (the next fetch that reaches it pushes them):");
        claims.pending.iter().for_each(row);
    }
    if claims.released.is_empty() {
        return;
    }
    println!("Released:");
    for r in &claims.released {
        let by = r.record.as_ref().map_or_else(
            || "someone (the record could not be read)".to_string(),
            |rec| visible(&clip(&format!("{}, {}", rec.released_by, rec.via), 300)),
        );
        println!(
            "  {} sprint {}: released by {by}, {}",
            task_of(store, project, &r.parent_id),
            r.sprint,
            when::shown(&r.at, now)
        );
    }
}

/// Whether the human confirms the release of `held`: "y" where its clone is known gone
/// (or its story completed), else the holder's name typed back, for they may still be
/// working on it.
fn confirmed(held: &Held) -> Result<bool, String> {
    let live = held
        .claimant
        .as_ref()
        .filter(|c| !c.gone() && c.done.is_none());
    let Some(c) = live else {
        return yes("Release it? [y/N] ");
    };
    let name = c.owner.split('<').next().unwrap_or_default().trim();
    let name = if name.is_empty() {
        c.owner.trim()
    } else {
        name
    };
    println!(
        "Their clone is not known to be gone: {} may still be working on it. Released, they are told at their next call and stopped if someone else claims it.",
        visible(&clip(name, 120))
    );
    let typed = super::read_line(&format!(
        "Type their name ({}) to release it: ",
        visible(&clip(name, 120))
    ))?;
    Ok(typed.is_some_and(|t| {
        let t = t.trim();
        !t.is_empty() && (t.eq_ignore_ascii_case(name) || t == c.owner.trim())
    }))
}

/// Shows the claim, asks on the terminal, releases it as the human's decision.
fn release(store: &Store, project: &Project, task: &str, sprint: u32) -> Outcome {
    if let Err(exit) = super::provenance::human_at_terminal(
        "release a claim",
        "Releasing a sprint someone claimed is the human's decision",
    ) {
        return Ok(exit);
    }
    let parent_id = match store.load(None, &SessionKey::from_task(task)) {
        Ok((_, s)) => s.session_id,
        Err(_) if uuid::Uuid::parse_str(task).is_ok() => task.to_string(),
        Err(e) => return Err(e.to_string()),
    };
    let claims = read(project)?;
    if let board::Freshness::Unreachable(why, _) = &claims.read {
        return Err(format!(
            "the claims could not be fetched from the remote `{}` ({}): nothing was released",
            visible(&claims.remote),
            visible(&clip(why, 200))
        ));
    }
    let Some(held) = claims.of(&parent_id, sprint) else {
        return Err(format!(
            "sprint {sprint} of {} is not claimed on the remote `{}` (`bmad-mcp claims` lists what is)",
            visible(task),
            visible(&claims.remote)
        ));
    };
    println!(
        "Sprint {sprint} of {} is claimed on the remote `{}` by {}, since {}.",
        visible(task),
        visible(&claims.remote),
        holder(held),
        when::shown(&held.since, chrono::Utc::now())
    );
    println!("Released, it may be claimed again by anyone, its holder too; work already done for it stays on its branch.");
    if !confirmed(held)? {
        println!("Not released: nothing changed.");
        return Ok(Exit::Failed);
    }
    let said = human::release_claim(store, None, held, Via::Cli)?;
    println!("{}", visible(&said));
    Ok(Exit::Done)
}

/// Lists the stories that hold `sprint` of the parent `task` (seen here, or claimed on the
/// remote by another clone, fetched now), asks which to keep, and records the choice as the
/// human's: the claim on the remote then names the one kept.
fn keep(store: &Store, task: &str, sprint: u32) -> Outcome {
    if let Err(exit) = super::provenance::human_at_terminal(
        "choose which story to keep",
        "Choosing which of two stories builds a sprint is the human's decision",
    ) {
        return Ok(exit);
    }
    let key = SessionKey::from_task(task);
    let (_, s, claims) = store
        .load_fresh(None, &key, true)
        .map_err(|e| e.to_string())?;
    let Some(claims) = claims else {
        return Err(format!(
            "task {} takes no stories now, or its claims are kept in the clone: nothing to choose",
            visible(task)
        ));
    };
    if let board::Freshness::Unreachable(why, _) = &claims.read {
        return Err(format!(
            "the claims could not be fetched from the remote `{}` ({}): nothing was chosen",
            visible(&claims.remote),
            visible(&clip(why, 200))
        ));
    }
    let was = claims.of(&s.session_id, sprint);
    let choices = stories_of(&s, sprint, was);
    if choices.len() < 2 {
        return Err(format!(
            "sprint {sprint} of {} is not held by two stories as this clone sees them: nothing to choose (`bmad-mcp claims` lists the claims)",
            visible(task)
        ));
    }
    println!(
        "Sprint {sprint} of {} is held by {} stories; one sprint is built once:",
        visible(&s.task_name),
        choices.len()
    );
    for (i, (said, _)) in choices.iter().enumerate() {
        println!("  {}. {}", i + 1, visible(&clip(said, 400)));
    }
    println!("The claim on the remote will name the one kept; the other is stopped at its next call, its work left on its branch.");
    let typed = super::read_line(&format!(
        "Keep which? Type its number (1-{}): ",
        choices.len()
    ))?;
    let Some(n) = typed
        .and_then(|t| t.trim().parse::<usize>().ok())
        .filter(|n| (1..=choices.len()).contains(n))
    else {
        println!("Nothing chosen: nothing changed.");
        return Ok(Exit::Failed);
    };
    let parent = (s.session_id.as_str(), sprint);
    let said = human::keep_story(store, parent, &choices[n - 1].1, was, Via::Cli)?;
    println!("{}", visible(&said));
    Ok(Exit::Done)
}

/// The stories that hold `sprint` of the parent `s`, each as the human is shown it and the
/// claim that would name it: those seen here, then another clone's, known by its claim
/// (`was`, the claim on the remote).
fn stories_of(
    s: &crate::workflow::session::Session,
    sprint: u32,
    was: Option<&Held>,
) -> Vec<(String, crate::store::stories::Claimant)> {
    let mut choices: Vec<(String, crate::store::stories::Claimant)> = s
        .stories
        .iter()
        .filter(|o| o.sprint == sprint)
        .map(|o| {
            let here = std::path::Path::new(&o.worktree).is_dir();
            let claimant = crate::store::stories::Claimant {
                owner: o.owner.clone(),
                branch: o.branch.clone(),
                worktree: o.worktree.clone(),
                sprint,
                host: here
                    .then(crate::store::stories::identity::host)
                    .flatten()
                    .map(str::to_string),
                done: o.completed().then(|| o.task_name.clone()),
                kept_by: None,
            };
            (
                format!("story `{}` of {}", o.task_name, o.holder()),
                claimant,
            )
        })
        .collect();
    // Another clone's story, known here by its claim alone: the claim's words name it.
    let elsewhere = s.claimed.iter().any(|c| c.sprint == sprint);
    if let Some(c) = was.and_then(|h| h.claimant.clone()).filter(|_| elsewhere) {
        choices.push((format!("the story of {}", c.named()), c));
    }
    choices
}
