//! Everything the human types, in one place: the human's own channel, outside the model.
//! `bmad-mcp confirm|approve|reject|answer <task>` run in a terminal shows what is being
//! decided (as the dialog would) and asks on the terminal ([`decide`]); `list` and
//! `status` are for reading ([`list_status`]); `config show|approve` for the project's policy
//! ([`config`]); `prompts` for the role prompts in effect ([`prompts`]); `lessons` for the
//! team's lessons ([`lessons`]); `claims` for the sprints claimed on the team's remote
//! ([`claims`]); `accept` for a story the BMAD method built ([`accept_story`]); `resolve` for a
//! task a merge left in two versions
//! ([`resolve`]); `hook` for the
//! Claude Code plugin's hook ([`hook`]). A decision made here is recorded as the human's
//! (`via: "cli"`), bound to the digest of the document it showed, and counts as the
//! human's under `gates = "human"`. It refuses to decide when stdin is not a terminal: an
//! assistant's shell tool pipes its input, a person types it; and when it runs under an
//! assistant's shell, read from the process tree ([`provenance`]), which it records with
//! the decision otherwise. Every command ends with one [`Exit`].

mod accept_story;
mod claims;
pub mod config;
mod decide;
pub mod hook;
pub mod lessons;
mod list_status;
mod merge_driver;
mod promote;
pub mod prompts;
mod provenance;
mod resolve;

use std::io::{BufRead, Write};

use clap::Subcommand;

pub use crate::exit::Exit;
use crate::settings::Settings;
use crate::store::{SessionKey, Store};
use crate::workflow::{Action, Command};

/// What a command returns: how it ended, or the message of the error that ended it
/// (printed to stderr, exit 1).
pub type Outcome = Result<Exit, String>;

#[derive(Subcommand, Debug)]
pub enum Cli {
    /// Confirm the document the task waits on (asks on the terminal).
    Confirm {
        /// Task name or session id.
        task: String,
        /// A note on the decision ("looks good, but add X"), shown to the later roles.
        #[arg(long)]
        note: Option<String>,
    },
    /// Approve the sprint plan, for all sprints or a scope (asks on the terminal).
    Approve {
        /// Task name or session id (or the beginning of its name up to a `-`).
        task: String,
        /// Which sprints development builds, e.g. `1`, `1-2`, `sprint 1 and 3`; default all.
        #[arg(long)]
        scope: Option<String>,
        /// A note on the approval ("but skip the BOM handling"), shown to the later roles.
        #[arg(long)]
        note: Option<String>,
    },
    /// Send the document back for revision with feedback (asks on the terminal).
    Reject {
        /// Task name or session id (or the beginning of its name up to a `-`).
        task: String,
        /// What should change.
        #[arg(long)]
        feedback: String,
    },
    /// Answer the open clarification questions, one by one on the terminal.
    Answer {
        /// Task name or session id (or the beginning of its name up to a `-`).
        task: String,
    },
    /// Keep one version of a task a merge left in two (its session, documents and drafts
    /// as a unit), while the merge is under way: `--ours` (your branch) or `--theirs`.
    Resolve {
        /// The task's name.
        task: String,
        /// Keep the version on your branch (the one the merge is into).
        #[arg(long, conflicts_with = "theirs", required_unless_present = "theirs")]
        ours: bool,
        /// Keep the version on the branch being merged in.
        #[arg(long)]
        theirs: bool,
    },
    /// Move a quick task to the full track, keeping what was written (asks on the
    /// terminal).
    Promote {
        /// Task name or session id (or the beginning of its name up to a `-`).
        task: String,
        /// Why it outgrew the quick track, shown to the roles after this.
        #[arg(long)]
        note: Option<String>,
    },
    /// The project's sessions, newest first, with who started each and on which branch.
    List {
        /// Only the sessions you started (git's user.name/user.email, or BMAD_OWNER).
        #[arg(long)]
        mine: bool,
    },
    /// Prepares the project for a team: adds to its .gitignore the files that stay local
    /// to each clone (the lock, the task index, the checks' approval), between marker
    /// lines, touching no other line; in git, installs the merge driver of the BMAD
    /// method's sprint-status.yaml (.gitattributes and this clone's config) (docs/team.md).
    Init,
    /// Where a task stands and who decided what.
    Status {
        /// Task name or session id (or the beginning of its name up to a `-`).
        task: String,
    },
    /// Which file each role prompt comes from (the project's .bmad/prompts/, the user's,
    /// or the built-in one); `prompts export DIR` writes the built-in ones to DIR.
    Prompts {
        #[command(subcommand)]
        command: Option<prompts::PromptsCommand>,
    },
    /// The project's policy, .bmad/config.toml: `show` what is in effect and what waits,
    /// `approve` the file as it is now (asks on the terminal).
    Config {
        #[command(subcommand)]
        action: config::ConfigAction,
    },
    /// The project's lessons (.bmad/lessons/): `list [--all]`, `show ID`, `retire ID`,
    /// `restore ID`.
    Lessons {
        #[command(subcommand)]
        command: Option<lessons::LessonsCommand>,
    },
    /// The sprints claimed on the team's remote (who, since when, from which clone and
    /// branch); `claims release TASK SPRINT` frees one, `claims keep TASK SPRINT` chooses
    /// between two stories of one sprint (each asks on the terminal).
    Claims {
        #[command(subcommand)]
        command: Option<claims::ClaimsCommand>,
    },
    /// Accept a story the BMAD method's /bmad-build built for a sprint of the task: shows
    /// its spec, runs the project's checks and asks on the terminal; the sprint then counts
    /// as a completed story and is `done` in the method's sprint status (docs/bmad-users.md).
    Accept {
        /// The parent task's name or session id.
        task: String,
        /// The sprint the method built.
        sprint: u32,
    },
    /// Git's merge driver of the BMAD method's sprint-status.yaml, which `init` installs:
    /// merges OURS and THEIRS from BASE into OURS (docs/team.md).
    #[command(hide = true)]
    MergeSprintStatus {
        base: std::path::PathBuf,
        ours: std::path::PathBuf,
        theirs: std::path::PathBuf,
        /// The length of git's conflict markers (`%L`).
        #[arg(default_value_t = 7)]
        marker_size: usize,
    },
    /// A Claude Code hook of the bmad plugin: `hook pre-tool-use` reads the hook's JSON on
    /// stdin and makes Claude Code ask the human before a gate call (docs/plugin.md).
    Hook {
        #[command(subcommand)]
        event: hook::Event,
    },
}

/// Runs a command for a person in a terminal, in the project `project` (default: the
/// settings' default root: BMAD_PROJECT_ROOT, …, the project the working directory is in).
pub fn run(cli: Cli, settings: &Settings) -> Exit {
    let root = settings.default_root.clone();
    let user_prompts = settings.acting.user_prompts.as_deref();
    let store = Store::new(root, settings.acting.clone());
    let result = match cli {
        Cli::List { mine } => list_status::list(&store, mine),
        Cli::Init => list_status::init(&store),
        Cli::Status { task } => list_status::status(&store, &SessionKey::from_task(&task)),
        Cli::Confirm { task, note } => decide::decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Confirm {
                action: Action::Confirm,
                note,
                answers: Default::default(),
            },
        ),
        Cli::Approve { task, scope, note } => decide::decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Approve { scope, note },
        ),
        Cli::Reject { task, feedback } => decide::decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Reject {
                action: Action::Reject,
                feedback: Some(feedback),
            },
        ),
        Cli::Promote { task, note } => {
            promote::promote(&store, &SessionKey::from_task(&task), note)
        }
        Cli::Hook { event } => Ok(hook::run(event)),
        Cli::MergeSprintStatus {
            base,
            ours,
            theirs,
            marker_size,
        } => merge_driver::merge(&base, &ours, &theirs, marker_size),
        Cli::Resolve { task, ours, .. } => {
            let side = if ours {
                crate::git::Side::Ours
            } else {
                crate::git::Side::Theirs
            };
            resolve::resolve(&store, &task, side)
        }
        Cli::Prompts { command: None } => store
            .project(None)
            .map_err(|e| e.to_string())
            .and_then(|p| prompts::list(&p, user_prompts)),
        Cli::Prompts {
            command: Some(prompts::PromptsCommand::Export { dir, force }),
        } => prompts::export(&dir, force, user_prompts),
        Cli::Config { action } => config::run(&store, action),
        Cli::Lessons { command } => lessons::run(&store, command),
        Cli::Claims { command } => claims::run(&store, command),
        Cli::Accept { task, sprint } => accept_story::accept(&store, &task, sprint),
        Cli::Answer { task } => decide::decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Answer {
                answers: Default::default(),
            },
        ),
    };
    match result {
        Ok(exit) => exit,
        Err(message) => {
            eprintln!("bmad-mcp: {}", crate::code::visible_lines(&message));
            Exit::Failed
        }
    }
}

fn read_line(prompt: &str) -> Result<Option<String>, String> {
    print!("{prompt}");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the terminal: {e}"))?;
    Ok((n > 0).then(|| line.trim().to_string()))
}

/// Asks `prompt` on the terminal: whether the answer was yes.
pub(crate) fn yes(prompt: &str) -> Result<bool, String> {
    Ok(read_line(prompt)?.is_some_and(|a| matches!(a.to_ascii_lowercase().as_str(), "y" | "yes")))
}
