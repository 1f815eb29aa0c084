//! Where the policy keeps a decision for the human (`gates = "human"`, or an agent host
//! that cannot ask under `gates = "auto"`), a reply where the human decides names their
//! channel: the client's dialog where it has one, the terminal's commands and the dashboard
//! where it has none, and never tells the host to make a call the policy refuses.

use super::Reply;
use crate::error::Error;
use crate::store::{human_decisions, terminal_command};
use crate::workflow::Action;

/// The human's terminal commands at the reply's state, quoted and joined; `None` where
/// the human has nothing to decide.
fn commands(r: &Reply) -> Option<(Vec<Action>, String)> {
    let (stage, state, task) = (r.stage?, r.state?, r.task_name.as_deref()?);
    let decisions = human_decisions(stage, state);
    let quoted: Vec<String> = decisions
        .iter()
        .map(|a| format!("`{}`", terminal_command(*a, task)))
        .collect();
    (!decisions.is_empty()).then(|| (decisions, quoted.join(" or ")))
}

/// Names the human's channel in `next_step` and `user_message` when the reply carries the
/// policy that keeps the decision for them (`human_gates`); `dialog`: whether the client
/// can show the human a dialog (its `next_step` then already says to open it).
pub fn human_channel(r: &mut Reply, dialog: bool) {
    let Some(policy) = r.human_gates.take() else {
        return;
    };
    let Some((decisions, commands)) = commands(r).filter(|_| r.error.is_none()) else {
        return;
    };
    if dialog {
        r.user_message.push_str(&format!(
            "\nThis project keeps this decision for you (gates = \"human\"): you decide in the dialog your assistant opens, or in a terminal in the project with {commands}."
        ));
        return;
    }
    r.user_message.push_str(&format!(
        "\nThis decision is yours ({policy}): decide in a terminal in the project with {commands}, or on your dashboard (`bmad-mcp dashboard`); the assistant cannot decide it for you."
    ));
    let calls: Vec<String> = decisions
        .iter()
        .map(|a| format!("`{}`", a.name()))
        .collect();
    r.next_step = Some(format!(
        "Show `user_message` to the human and stop. This project's policy in force ({policy}) takes this decision only from the human, and this client cannot show them a dialog: they run {commands} in a terminal in the project. Do not call {} yourself (it is refused); once they have decided, call `status` to go on.",
        calls.join(" or ")
    ));
}

/// A `human_required` refusal of the policy: only what the host may do next is listed
/// (`status`, never the decision it was refused), and `next_step` says to wait for the
/// human and then call `status`; a failing check accepted on the host's word alone leaves
/// the send-back with the human's words to the host.
pub(super) fn human_required(e: &Error, r: &mut Reply) {
    if let Error::ChecksFailed { .. } = e {
        r.next_step = Some(
            "Show `user_message` to the human and stop: accepting the failing checks is theirs, in a terminal in the project or on their dashboard (`bmad-mcp dashboard`). If they say what should change, `reject` with their words as `feedback`; once they have decided, call `status` to go on.".into(),
        );
        return;
    }
    if !matches!(e, Error::HumanRequired { .. }) {
        return;
    }
    if let Some(allowed) = r.allowed_actions.as_mut() {
        allowed.retain(|a| !a.decides());
    }
    r.next_step = Some(
        "Show `user_message` to the human and stop: the decision is theirs, in a terminal in the project or on their dashboard (`bmad-mcp dashboard`). Once they have decided, call `status` to go on.".into(),
    );
}
