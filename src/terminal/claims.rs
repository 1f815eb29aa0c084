//! `bmad-mcp claims` and `bmad-mcp claims release <task> <sprint>`: the sprints the team's
//! remote holds (who, which sprint of which task, since when, from which clone and branch),
//! and one released when the clone that claimed it is gone. A release is the human's
//! decision: asked on the terminal, never under an assistant's shell, bound to the claim as
//! shown, and recorded on the remote with who released it (`act::human::release_claim`).

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
    /// Release the claim of a sprint, for a clone that is gone (asks on the terminal).
    Release {
        /// The parent task's name or session id.
        task: String,
        /// The sprint whose claim is released.
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
    for h in &claims.held {
        println!(
            "  {} sprint {}: {}, since {}",
            task_of(store, project, &h.parent_id),
            h.sprint,
            holder(h),
            when::shown(&h.since, now)
        );
    }
    if !claims.held.is_empty() {
        println!("Release one whose clone is gone: bmad-mcp claims release <task> <sprint>");
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
    if let board::Read::Unreachable(why, _) = &claims.read {
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
    if !yes("Release it? [y/N] ")? {
        println!("Not released: nothing changed.");
        return Ok(Exit::Failed);
    }
    let said = human::release_claim(store, None, held, Via::Cli)?;
    println!("{}", visible(&said));
    Ok(Exit::Done)
}
