//! `bmad-mcp config show|approve`: the human's view of the project's policy, and their
//! approval of a new version of `.bmad/config.toml` (shown with what changed and its
//! digest, asked on the terminal, refused when stdin is not a terminal, as every other
//! decision of theirs), and of the hooks that answer Claude Code's dialog in their place
//! (each shown with where it is written, what it runs and its digest), whose answers then
//! count as theirs.

use chrono::Utc;
use clap::Subcommand;

use super::{yes, Exit, Outcome};
use crate::code::visible;
use crate::policy::approval::{changes, Policy, APPROVED_REL};
use crate::policy::config::{Config, Gates, CONFIG_REL};
use crate::store::Store;
use crate::workflow::Via;

#[derive(Subcommand, Debug)]
pub enum ConfigAction {
    /// What the server acts on (the approved version) and what waits for approval.
    Show,
    /// Approve .bmad/config.toml as it is now (its checks run from then on, and its gates
    /// policy holds) and the hooks on Claude Code's dialog found now (their answers count
    /// as yours); asks on the terminal.
    Approve,
}

pub fn run(store: &Store, action: ConfigAction) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let policy = Policy::read(&project).map_err(|e| e.to_string())?;
    show(&policy);
    let places = store.claude_places(vec![project.root.clone()]);
    let found = crate::hosts::hooks::found(&places);
    let approved = crate::policy::hooks::Approved::read(&project);
    for h in &found {
        let state = if approved.holds(h) {
            "approved"
        } else {
            "waits for approval"
        };
        println!(
            "Hook on Claude Code's dialog: {} ({state})",
            crate::policy::hooks::named(h)
        );
    }
    match action {
        ConfigAction::Show => Ok(Exit::Done),
        ConfigAction::Approve => approve(store, &policy),
    }
}

fn show(p: &Policy) {
    let c = &p.effective;
    match &p.approved_sha256 {
        Some(sha) => println!("Approved version: sha256 {} ({APPROVED_REL})", &sha[..12]),
        None => println!("Approved version: none yet (the defaults: gates \"auto\", no checks)"),
    }
    println!("In effect: gates = \"{}\"", c.gates.name());
    if c.checks.is_empty() {
        println!("Checks in effect: none");
    }
    for (name, spec) in &c.checks {
        println!("Check in effect: {name} = `{}`", visible(&spec.command));
    }
    match &p.waiting {
        None => println!("{CONFIG_REL}: nothing waits for approval."),
        Some(w) => {
            println!(
                "{CONFIG_REL} (sha256 {}) waits for approval:",
                w.sha256.get(..12).unwrap_or("none: the file is gone")
            );
            for change in &w.changes {
                println!("  - {}", visible(change));
            }
        }
    }
}

/// What a gates policy means for who passes a gate, as the human approving it reads it.
fn gates_meaning(gates: Gates) -> &'static str {
    match gates {
        Gates::Host => "the assistant's word passes a gate wherever its host cannot ask you in a dialog (recorded as the host's)",
        Gates::Auto => "you decide each gate: in the host's dialog where it has one, else in a terminal or on the dashboard",
        Gates::Human => "only you decide a gate, in the host's dialog, a terminal or the dashboard; a host's word never passes",
    }
}

fn approve(store: &Store, p: &Policy) -> Outcome {
    if let Err(exit) = super::provenance::human_at_terminal(
        "approve",
        "Approving the project's checks and policy is the human's decision",
    ) {
        return Ok(exit);
    }
    let project = store.project(None).map_err(|e| e.to_string())?;
    let places = store.claude_places(vec![project.root.clone()]);
    let hooks = crate::policy::hooks::unapproved(&project, crate::hosts::hooks::found(&places));
    let config = match &p.file_text {
        None if hooks.is_empty() => return Err(format!("there is no {CONFIG_REL} to approve")),
        None => None,
        Some(text) => {
            let sha = crate::workflow::machine::sha256_hex(text);
            (p.approved_sha256.as_deref() != Some(sha.as_str())).then_some((text, sha))
        }
    };
    if config.is_none() && hooks.is_empty() {
        println!("{CONFIG_REL} is already the approved version: nothing to do.");
        return Ok(Exit::Done);
    }
    if let Some((text, sha)) = &config {
        show_to_approve(p, text, sha)?;
    }
    show_hooks(&hooks);
    if !yes("Approve it? [y/N] ")? {
        println!("Not approved: nothing changed.");
        return Ok(Exit::Failed);
    }
    if let Some((_, sha)) = &config {
        let approved = crate::policy::approve_config(store, None, sha, Via::Cli, &Utc::now)
            .map_err(|e| e.to_string())?;
        let home = crate::policy::approval::home(&project).path(APPROVED_REL);
        println!(
            "Approved (sha256 {}), recorded in {} as the human's, via the terminal; every worktree of this clone runs these checks.",
            &approved.sha256[..12],
            home.display()
        );
    }
    if !hooks.is_empty() {
        let _lock = store.lock(&project).map_err(|e| e.to_string())?;
        let at = crate::workflow::session::timestamp(Utc::now());
        crate::policy::hooks::approve(&project, &hooks, Via::Cli, &at)
            .map_err(|e| e.to_string())?;
        let home =
            crate::policy::approval::home(&project).path(crate::policy::hooks::APPROVED_HOOKS_REL);
        println!(
            "Approved {} hook(s) on Claude Code's dialog, recorded in {} by digest: while each stays as it is, a dialog answer it makes is taken as yours, recorded with the hook.",
            hooks.len(),
            home.display()
        );
    }
    Ok(Exit::Done)
}

/// The config file as it is now (`text`, digest `sha`), what its gates mean and what
/// changed, for the human approving it.
fn show_to_approve(p: &Policy, text: &str, sha: &str) -> Result<(), String> {
    let file = Config::parse(text).map_err(|e| format!("{CONFIG_REL}: {e}"))?;
    println!("\nTo approve: {CONFIG_REL}, sha256 {}", &sha[..12]);
    println!(
        "  gates = \"{}\": {}",
        file.gates.name(),
        gates_meaning(file.gates)
    );
    for (name, spec) in &file.checks {
        println!(
            "  check {name} = `{}`{}",
            visible(&spec.command),
            spec.timeout_secs
                .or(file.check_timeout_secs)
                .map(|t| format!(" (time limit {t} s)"))
                .unwrap_or_default()
        );
    }
    for change in changes(&p.effective, &file) {
        println!("  change: {}", visible(&change));
    }
    if !file.pass_env.is_empty() {
        println!(
            "  the checks are also given: {}",
            visible(&file.pass_env.join(", "))
        );
    }
    match file.checks.is_empty() {
        true => println!("No checks: the server runs no commands in the project."),
        false => println!(
            "The server will run these commands in the project after `dev` and before QA completes."
        ),
    }
    Ok(())
}

/// The hooks on Claude Code's dialog waiting for the human, each with what it runs.
fn show_hooks(hooks: &[crate::hosts::hooks::Hook]) {
    if hooks.is_empty() {
        return;
    }
    println!("\nTo approve: {} hook(s) that answer Claude Code's dialog in your place (until approved, a dialog answer is not taken as yours while one is there):", hooks.len());
    for h in hooks {
        println!(
            "  {}, runs: {}",
            crate::policy::hooks::named(h),
            visible(&crate::code::clip(&h.runs, 400))
        );
    }
}
