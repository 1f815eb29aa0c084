//! The terminal's decisions: `confirm`, `approve`, `reject` and `answer` show what is
//! being decided, ask on the terminal, and apply the human's answer bound to the document
//! as shown, through the same evidence gate as every other channel.

use super::{read_line, yes, Exit, Outcome};
use crate::act::human::{self, Answer, Decided};
use crate::act::Handover;
use crate::code::{visible, visible_lines};
use crate::server::reply;
use crate::store::{Located, SessionKey, Store};
use crate::workflow::machine::{Asked, Pending};
use crate::workflow::{Command, Via};

/// Shows what is being decided, asks on the terminal, applies the human's answer bound to
/// the document as shown.
pub(super) fn decide(store: &Store, key: &SessionKey, command: Command) -> Outcome {
    let origin =
        match super::provenance::human_at_terminal("decide", "A gate decision is the human's") {
            Ok(origin) => origin,
            Err(exit) => return Ok(exit),
        };
    let asking =
        human::asking(store, None, key, command.action()).map_err(|(e, _)| e.to_string())?;
    // A policy that cannot be read refuses the decision: said before the human is asked.
    asking.config_waiting().map_err(|e| e.to_string())?;
    let pending = &asking.pending;
    show(pending, &command);
    let command = match command {
        Command::Answer { .. } => {
            let answers = ask_each(pending)?;
            if answers.is_empty() {
                println!("No answers given: nothing changed.");
                return Ok(Exit::Failed);
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
                return Ok(Exit::Failed);
            }
            other
        }
    };
    let answer = human::Answer {
        command,
        via: Via::Cli,
        provenance: origin.provenance,
        seen_digest: human::shown_digest(&asking),
        handover: Handover::Nothing,
    };
    apply(store, &asking.at, key, answer)
}

/// Applies a human's terminal decision and prints what the reply tells the human (`decide`
/// and `promote` alike).
pub(super) fn apply(store: &Store, at: &Located, key: &SessionKey, answer: Answer) -> Outcome {
    match human::decide(store, at, key, answer) {
        Decided::Done(done) => {
            println!("{}", visible_lines(&reply::change_message(&done)));
            Ok(Exit::Done)
        }
        Decided::Stale { error, .. } => Err(format!(
            "{error}\nThe document changed while you decided: run the command again to see it as it is now."
        )),
        Decided::Refused((e, _)) => Err(e.to_string()),
    }
}

fn show(p: &Pending, command: &Command) {
    println!(
        "Task {} ({}), {} stage.",
        visible(&p.task_name),
        p.session_id,
        p.stage
    );
    if let Some(doc) = &p.document {
        println!(
            "Document: {} ({} bytes, sha256 {})",
            visible(&doc.path),
            doc.size,
            &doc.sha256[..12]
        );
    }
    if let (Some(score), Some(gate)) = (p.score, p.gate) {
        println!("Score: {score}/100 (gate {gate})");
    }
    for n in &p.notices {
        println!("Note: {}", visible(n));
    }
    if !p.assumed.is_empty() {
        println!("The assistant assumed, where nobody answered (confirming accepts these; to correct one, reject with feedback such as `q2: <your answer>`):");
    }
    for (q, what) in &p.assumed {
        println!(
            "  {}: {} (assumed by the assistant: {})",
            visible(&q.id),
            visible(&q.question),
            visible(what)
        );
    }
    if let Some(failed) = &p.failed_verdict {
        println!("It does not pass ({}): confirming accepts the risk and goes on; rejecting sends the work back to development.", visible(failed));
    }
    if p.asked == Asked::Approve {
        let sprints: Vec<String> = p
            .sprints
            .iter()
            .map(|s| format!("{} ({})", s.number, visible(&s.title)))
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
        Command::Approve { scope, .. } => {
            println!("Scope: {}", visible(scope.as_deref().unwrap_or("all")))
        }
        Command::Reject {
            feedback: Some(f), ..
        } => println!("Feedback: {}", visible(f)),
        _ => {}
    }
    if let Command::Confirm { note: Some(n), .. } | Command::Approve { note: Some(n), .. } = command
    {
        println!("Your note, for the roles after this one: {}", visible(n));
    }
}

fn ask_each(p: &Pending) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut answers = std::collections::BTreeMap::new();
    println!("Answer each question (an empty line leaves it open):");
    for q in &p.questions {
        println!(
            "\n{} (asked by the assistant): {}",
            visible(&q.id),
            visible(&q.question)
        );
        if let Some(c) = q.context.as_deref() {
            println!("  (the assistant's context: {})", visible(c));
        }
        if let Some(a) = read_line("> ")?.filter(|a| !a.is_empty()) {
            answers.insert(q.id.clone(), a);
        }
    }
    Ok(answers)
}
