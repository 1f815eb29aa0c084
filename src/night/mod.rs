//! The night shift, `bmad-mcp run <task>`: a task's approved plan built story by story
//! with nobody at the keyboard, and still no gate passed without the human. Each sprint's
//! story runs in a worktree of its own (`worktree.rs`); each step of it (development,
//! review, its QA; then the parent's final QA) is one fresh headless host session
//! (`step.rs`, from the hosts table), given that step's prompt (`prompt.rs`), with this
//! server registered for it, under the permission settings the person gave that host,
//! never a bypass (`bypass.rs`). Where each story stands is read from the sessions after
//! every step (`plan.rs`); a story that reaches a human decision, or crosses its token
//! budget, parks with its reason while the others go on, and moves again as soon as the
//! human's decision is on disk. The journal (`journal.rs`) keeps what the sessions do not:
//! the tokens of each step (`usage.rs`), the steps in flight, a budget's park; a killed run
//! started again stops what its predecessor left running and runs that step again.

mod bypass;
pub mod journal;
mod plan;
mod prompt;
mod shift;
mod step;
pub mod usage;
mod worktree;

use std::path::PathBuf;

use crate::exit::Exit;
use crate::settings::Settings;
use crate::workflow::Session;

/// `bmad-mcp run`'s arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The task whose approved plan to build: its name or session id.
    pub task: String,
    /// The host that runs each step: claude-code (default), codex, gemini, opencode,
    /// copilot.
    #[arg(long, default_value = "claude-code")]
    pub host: String,
    /// The host's program, when it is not its usual name on PATH.
    #[arg(long, value_name = "PATH")]
    pub host_bin: Option<PathBuf>,
    /// An argument added to every host session's command line (repeat it for more:
    /// `--host-arg=--model --host-arg=opus`); a flag that turns the host's permission
    /// checks off is refused.
    #[arg(long = "host-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub host_args: Vec<String>,
    /// How many stories run at once.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: u16,
    /// The tokens a story may use, its steps together, before it parks for you (default:
    /// `budget_tokens` in the approved `[run]` of .bmad/config.toml; none: no budget).
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u64>,
    /// How long one host session may run before it is stopped (default: the approved
    /// `[run]`'s `step_timeout_secs`, else 1800).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub step_timeout: Option<u64>,
    /// Where the stories' worktrees are made (default: `<project>.stories/` beside the
    /// project).
    #[arg(long, value_name = "DIR")]
    pub worktrees: Option<PathBuf>,
    /// End once nothing can move without the human, rather than wait for your decisions.
    #[arg(long)]
    pub no_wait: bool,
}

/// Runs the night shift over `args.task`'s approved plan.
pub fn run(args: Args, settings: &Settings) -> Exit {
    // A reader that stops reading (`| head`) ends the run's printing, not the run with a panic.
    crate::exit::quiet_when_stdout_closes();
    match shift::Shift::begin(args, settings) {
        Ok(mut s) => s.work(),
        Err(why) => {
            eprintln!("bmad-mcp run: {why}");
            Exit::Failed
        }
    }
}

/// What the run journal says of `s` (a story, or a parent): its steps and tokens, and
/// why it is parked when it is; `None` when no run drove it. For `status` and the
/// dashboard.
pub fn summary(project_root: &std::path::Path, s: &Session) -> Option<String> {
    let parent = s
        .story
        .as_ref()
        .map(|l| l.parent_session_id.as_str())
        .unwrap_or(&s.session_id);
    let ledger = journal::Ledger::of(&journal::Journal::read_of(project_root, parent));
    if s.story.is_some() {
        let l = ledger.stories.get(&s.session_id)?;
        return Some(shift::story_line(l));
    }
    if ledger.stories.is_empty() {
        return None;
    }
    let mut total = usage::Tokens::default();
    let mut steps = 0;
    for l in ledger.stories.values() {
        total.add(&l.tokens);
        steps += l.steps;
    }
    Some(format!(
        "night shift: {steps} step(s) over {} session(s), {} tokens",
        ledger.stories.len(),
        total.total()
    ))
}
