//! The human's own channel, outside the model: `bmad-mcp confirm|approve|reject|answer
//! <task>` run in a terminal shows what is being decided (as the dialog would) and asks on
//! the terminal; `list` and `status` are for reading. A decision made here is recorded as
//! the human's (`via: "cli"`), bound to the digest of the document it showed, and counts
//! as the human's under `gates = "human"`. It refuses to decide when stdin is not a
//! terminal: an assistant's shell tool pipes its input, a person types it.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use chrono::Utc;
use clap::Subcommand;

use crate::error::Error;
use crate::server::reply;
use crate::store::{lock_wait_from_env, DefaultRoot, SessionKey, Store};
use crate::workflow::machine::{Asked, Pending};
use crate::workflow::{Action, Command, DecidedBy, Decision, Via};

/// Exit status when a decision is refused because stdin is not a terminal.
pub const EXIT_NOT_A_TERMINAL: u8 = 2;

#[derive(Subcommand, Debug)]
pub enum Cli {
    /// Confirm the document the task waits on (asks on the terminal).
    Confirm {
        /// Task name or session id.
        task: String,
    },
    /// Approve the sprint plan, for all sprints or a scope (asks on the terminal).
    Approve {
        task: String,
        /// Which sprints development builds, e.g. `1`, `1-2`, `sprint 1 and 3`; default all.
        #[arg(long)]
        scope: Option<String>,
    },
    /// Send the document back for revision with feedback (asks on the terminal).
    Reject {
        task: String,
        /// What should change.
        #[arg(long)]
        feedback: String,
    },
    /// Answer the open clarification questions, one by one on the terminal.
    Answer { task: String },
    /// The project's sessions, newest first.
    List,
    /// Where a task stands and who decided what.
    Status { task: String },
    /// Which file each role prompt comes from (the project's .bmad/prompts/, the user's,
    /// or the built-in one); `prompts export DIR` writes the built-in ones to DIR.
    Prompts {
        #[command(subcommand)]
        command: Option<crate::prompts::commands::PromptsCommand>,
    },
    /// The project's policy, .bmad/config.toml: `show` what is in effect and what waits,
    /// `approve` the file as it is now (asks on the terminal).
    Config {
        #[command(subcommand)]
        action: crate::config::terminal::ConfigAction,
    },
    /// A Claude Code hook of the bmad plugin: `hook pre-tool-use` reads the hook's JSON on
    /// stdin and makes Claude Code ask the human before a gate call (see src/hook.rs).
    Hook {
        #[command(subcommand)]
        event: crate::hook::Event,
    },
}

/// Runs a command for a person in a terminal, in the project `project` (default: the
/// project the working directory is in, or BMAD_PROJECT_ROOT).
pub fn run(cli: Cli, project: Option<String>) -> ExitCode {
    let root = match project {
        Some(value) => DefaultRoot {
            source_name: "--project",
            value,
        },
        None => DefaultRoot::from_env(),
    };
    let store = Store::new(root, lock_wait_from_env());
    let result = match cli {
        Cli::List => list(&store),
        Cli::Status { task } => status(&store, &SessionKey::from_task(&task)),
        Cli::Confirm { task } => decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Confirm {
                action: Action::Confirm,
            },
        ),
        Cli::Approve { task, scope } => decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Approve { scope },
        ),
        Cli::Reject { task, feedback } => decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Reject {
                action: Action::Reject,
                feedback: Some(feedback),
            },
        ),
        Cli::Hook { event } => Ok(crate::hook::run(event)),
        Cli::Prompts { command: None } => store
            .project(None)
            .map_err(|e| e.to_string())
            .and_then(|p| crate::prompts::commands::list(&p)),
        Cli::Prompts {
            command: Some(crate::prompts::commands::PromptsCommand::Export { dir, force }),
        } => crate::prompts::commands::export(&dir, force),
        Cli::Config { action } => crate::config::terminal::run(&store, action),
        Cli::Answer { task } => decide(
            &store,
            &SessionKey::from_task(&task),
            Command::Answer {
                answers: Default::default(),
            },
        ),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("bmad-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

fn list(store: &Store) -> Result<ExitCode, String> {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let page = store.list(None, None).map_err(|e| e.to_string())?;
    println!("{} session(s) in {}", page.total, project.display());
    for s in &page.sessions {
        println!(
            "  {:<32} {:<9} {:<22} {}",
            s.task_name,
            s.current_stage.to_string(),
            s.current_state.to_string(),
            s.updated_at
        );
    }
    if page.next_cursor.is_some() {
        println!(
            "  … and more (the newest {} are shown)",
            page.sessions.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn status(store: &Store, key: &SessionKey) -> Result<ExitCode, String> {
    let (_, s) = store.load(None, key).map_err(|e| e.to_string())?;
    let r = reply::for_status(&s, None);
    println!("task {} ({})", s.task_name, s.session_id);
    println!("stage {}, state {}", s.current_stage, s.current_state);
    println!("{}", r.user_message);
    for (stage, rec) in s.stages.iter() {
        let Some(run) = &rec.checks else { continue };
        println!("checks of {stage}, run {}:", run.at);
        for c in &run.checks {
            println!(
                "  {}  ({} ms, output sha256 {})",
                c.describe(),
                c.duration_ms,
                c.output_sha256
            );
        }
    }
    let decisions = r.decisions.unwrap_or_default();
    if !decisions.is_empty() {
        println!("decisions:");
        for d in decisions {
            println!(
                "  {}  {:<9} {:<8} by {:<5} via {:<11} on {}",
                d.at,
                d.stage.to_string(),
                d.action.name(),
                serde_name(&d.decided_by),
                serde_name(&d.via),
                d.digest.as_deref().unwrap_or("-")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn serde_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Shows what is being decided, asks on the terminal, applies the human's answer bound to
/// the document as shown.
fn decide(store: &Store, key: &SessionKey, command: Command) -> Result<ExitCode, String> {
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "bmad-mcp: refusing to decide: stdin is not a terminal. A gate decision is the human's; run this command yourself in a terminal."
        );
        return Ok(ExitCode::from(EXIT_NOT_A_TERMINAL));
    }
    let (_, pending) = store
        .pending(None, key, command.action())
        .map_err(|(e, _)| e.to_string())?;
    show(&pending, &command);
    let command = match command {
        Command::Answer { .. } => {
            let answers = ask_each(&pending)?;
            if answers.is_empty() {
                println!("No answers given: nothing changed.");
                return Ok(ExitCode::FAILURE);
            }
            Command::Answer { answers }
        }
        other => {
            let verb = match &other {
                Command::Approve { .. } => "Approve it",
                Command::Reject { .. } => "Send it back with this feedback",
                _ => "Confirm it",
            };
            if !yes(&format!("{verb}? [y/N] "))? {
                println!("Not decided: nothing changed.");
                return Ok(ExitCode::FAILURE);
            }
            other
        }
    };
    let decision = Decision {
        decided_by: DecidedBy::Human,
        via: Via::Cli,
        seen_digest: pending.document.as_ref().map(|d| d.sha256.clone()),
    };
    let action = command.action();
    match store.act(None, key, command, &decision, &Utc::now) {
        Ok((s, facts)) => {
            println!("{}", reply::for_session(&s, &facts, action, None).user_message);
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ Error::Workflow(crate::workflow::WorkflowError::StaleDecision { .. })) => Err(
            format!("{e}\nThe document changed while you decided: run the command again to see it as it is now."),
        ),
        Err(e) => Err(e.to_string()),
    }
}

fn show(p: &Pending, command: &Command) {
    println!(
        "Task {} ({}), {} stage.",
        p.task_name, p.session_id, p.stage
    );
    if let Some(doc) = &p.document {
        println!(
            "Document: {} ({} bytes, sha256 {})",
            doc.path,
            doc.size,
            &doc.sha256[..12]
        );
    }
    if let (Some(score), Some(gate)) = (p.score, p.gate) {
        println!("Score: {score}/100 (gate {gate})");
    }
    for n in &p.notices {
        println!("Note: {n}");
    }
    if let Some(failed) = &p.failed_verdict {
        println!("It does not pass ({failed}): confirming accepts the risk and goes on; rejecting sends the work back to development.");
    }
    if p.asked == Asked::Approve {
        let sprints: Vec<String> = p
            .sprints
            .iter()
            .map(|s| format!("{} ({})", s.number, s.title))
            .collect();
        println!(
            "Sprints in the plan: {}",
            if sprints.is_empty() {
                "none named".to_string()
            } else {
                sprints.join(", ")
            }
        );
    }
    match command {
        Command::Approve { scope } => {
            println!("Scope: {}", scope.as_deref().unwrap_or("all"))
        }
        Command::Reject {
            feedback: Some(f), ..
        } => println!("Feedback: {f}"),
        _ => {}
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

pub(crate) fn yes(prompt: &str) -> Result<bool, String> {
    Ok(read_line(prompt)?.is_some_and(|a| matches!(a.to_ascii_lowercase().as_str(), "y" | "yes")))
}

fn ask_each(p: &Pending) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut answers = std::collections::BTreeMap::new();
    println!("Answer each question (an empty line leaves it open):");
    for q in &p.questions {
        println!("\n{}: {}", q.id, q.question);
        if let Some(c) = q.context.as_deref() {
            println!("  ({c})");
        }
        if let Some(a) = read_line("> ")?.filter(|a| !a.is_empty()) {
            answers.insert(q.id.clone(), a);
        }
    }
    Ok(answers)
}
