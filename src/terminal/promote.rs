//! `bmad-mcp promote <task>`: the human decides a quick task outgrew its track and moves
//! it to the full track, keeping what was written (docs/spec.md §18.1). Asked on the
//! terminal, refused under an assistant's shell, recorded with where it came from, as
//! every other terminal decision.

use super::{yes, Exit, Outcome};
use crate::act::human::Answer;
use crate::act::Handover;
use crate::code::visible;
use crate::store::{SessionKey, Store};
use crate::workflow::{Command, Via};

pub(super) fn promote(store: &Store, key: &SessionKey, note: Option<String>) -> Outcome {
    let origin = match super::provenance::human_at_terminal(
        "promote",
        "Promoting a task is the human's decision",
    ) {
        Ok(origin) => origin,
        Err(exit) => return Ok(exit),
    };
    let at = store.locate(None, key).map_err(|e| e.to_string())?;
    let s = store.read(&at, key).map_err(|e| e.to_string())?;
    let Some(to) = s.track.promotes_to() else {
        return Err(format!(
            "task {} is on the {} track, which is not promoted (only a quick task moves to the full track)",
            visible(&s.task_name),
            s.track
        ));
    };
    println!(
        "Task {} ({}), {} track, at stage {} ({}).",
        visible(&s.task_name),
        s.session_id,
        s.track,
        s.current_stage,
        s.current_state
    );
    println!(
        "Promoting moves it to the {to} track ({}), starting at the {}; every document written so far is kept and shown to it.",
        to.description(),
        to.first().role()
    );
    if let Some(n) = &note {
        println!("Your reason, for the roles after this: {}", visible(n));
    }
    if !yes(&format!("Promote it to the {to} track? [y/N] "))? {
        println!("Not promoted: nothing changed.");
        return Ok(Exit::Failed);
    }
    let answer = Answer {
        command: Command::Promote { note },
        via: Via::Cli,
        provenance: origin.provenance,
        seen_digest: None,
        handover: Handover::Nothing,
    };
    super::decide::apply(store, &at, key, answer)
}
