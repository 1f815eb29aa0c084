//! The reply when the human was asked in the dialog and did not decide: they declined,
//! closed it, or their answer could not be used. The session is unchanged and says so.

use crate::hosts::Unseen;
use crate::store::terminal_command;
use crate::workflow::machine::{Asked, Pending};
use crate::workflow::{Action, Facts, Session};

use super::{for_session, Reply};

/// Why a dialog ended without a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undecided {
    /// The human declined: not approved, nothing changed.
    Declined,
    /// Closed (declined or cancelled) sooner than a person reads a form: by the client
    /// itself, with nobody asked. The host, and when it closes every dialog so, where the
    /// hosts table knows it. Nothing changed, and it is not the human's answer.
    ClosedUnseen(Option<(&'static str, Unseen)>),
    /// The human closed the dialog (or the call was cancelled): still pending.
    Cancelled,
    /// The answer cannot be applied (why, for the human).
    Unusable(String),
    /// The dialog could not be shown or answered (why).
    Failed(String),
    /// The document changed under every answer the human gave in this call.
    KeptChanging,
    /// The server is stopping (SIGTERM) while the dialog waits: still pending.
    Stopping,
}

/// What the reply that asked the human gave, about a session that has not changed since:
/// the last submission's score, checks, sections, gaps and questions, and the trace. The
/// text leaves them out; `structuredContent` and `status` keep them.
const ASKED_WITH: [&str; 12] = [
    "checks",
    "score",
    "scores",
    "score_source",
    "gate_passed",
    "iteration",
    "missing_sections",
    "empty_sections",
    "review_status",
    "trace",
    "gaps",
    "questions",
];

pub fn for_undecided(s: &Session, p: &Pending, how: Undecided) -> Reply {
    // A decision is pending: the host writes nothing, and no role prompt is given.
    let mut r = for_session(s, &Facts::default(), Action::Status, None);
    r.known.fields.extend(ASKED_WITH);
    let yes = match p.asked {
        Asked::Answer => Action::Answer,
        Asked::Approve => Action::Approve,
        Asked::Confirm => Action::Confirm,
    };
    let terminal = match p.asked {
        Asked::Answer => format!("`{}`", terminal_command(Action::Answer, &s.task_name)),
        _ => format!(
            "`{}` or `{}`",
            terminal_command(yes, &s.task_name),
            terminal_command(Action::Reject, &s.task_name)
        ),
    };
    // Every case leaves the decision where the human can take it without the dialog.
    let elsewhere = format!(
        "in a terminal in the project ({terminal}) or on your dashboard (`bmad-mcp dashboard`)"
    );
    let (user, host) = match how {
        Undecided::Declined => (
            format!("You declined in the dialog: nothing was approved and nothing changed. Say what should change, and the document goes back for revision with your words; or decide later {elsewhere}."),
            "The human declined in the dialog; nothing changed. Ask them what should change; with their words call `reject` with them as `feedback` (they confirm it in the dialog). Do not decide for them.".to_string(),
        ),
        Undecided::ClosedUnseen(host) => {
            let (who, why, shown) = match host {
                Some((client, unseen)) => (
                    client.to_string(),
                    format!(" It closes every dialog at once {}.", unseen.when),
                    format!(" To be asked in the dialog, {}.", unseen.shown),
                ),
                None => ("The client".to_string(), String::new(), String::new()),
            };
            (
                format!("{who} closed the dialog before anyone could read it.{why} Nothing was approved and nothing changed: the decision still waits for you. Decide {elsewhere}.{shown}"),
                format!("{who} closed the dialog itself, unseen: nothing changed, and it is not the human's answer.{why} Show `user_message` to the human and stop: they decide in a terminal in the project or on their dashboard. Do not call `{}` again in a loop; once they have decided, call `status` to go on.", yes.name()),
            )
        }
        Undecided::Cancelled => (
            format!("The dialog was closed without a decision: it is still pending. Decide when you are asked again, or {elsewhere}."),
            "The human closed the dialog without deciding: the decision is still pending. Show them `user_message` and wait; do not call again in a loop.".to_string(),
        ),
        Undecided::Unusable(why) => (
            format!("{why} Decide again when asked, or {elsewhere}."),
            "The dialog's answer could not be applied (`user_message` says why); nothing changed. Show `user_message` and wait for the human.".to_string(),
        ),
        Undecided::Failed(why) => (
            format!("The decision could not be asked in a dialog: {why}. Nothing changed. Decide {elsewhere}."),
            "The dialog failed; nothing changed. Show `user_message` to the human and wait for their decision.".to_string(),
        ),
        Undecided::Stopping => (
            format!("The server is stopping, so the dialog was closed without a decision: it is still pending and nothing changed. Decide {elsewhere}, or when you are asked again once the server is back."),
            format!("The server stopped while the human was deciding; the decision is still pending and nothing changed. Show `user_message`; once the server is back, call `{}` again to ask them, or let them decide in the terminal. Do not decide for them.", yes.name()),
        ),
        Undecided::KeptChanging => (
            format!("The document changed each time you answered, so no answer was applied. Let the edits finish, then decide again when asked, or {elsewhere}."),
            "The document kept changing while the human decided; nothing changed. Show `user_message` and wait.".to_string(),
        ),
    };
    r.user_message = user;
    r.next_step = Some(host);
    r.document_digest = p.short_digest().map(str::to_string);
    r.artifact_path = p.document.as_ref().map(|d| d.path.clone());
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::machine::Shown;
    use crate::workflow::session::Question;
    use crate::workflow::{Stage, State};

    #[test]
    fn a_dialog_closed_undecided_does_not_repeat_what_the_asking_reply_gave() {
        let mut s = Session::test().objective("Build it").build();
        s.current_state = State::Clarifying;
        let rec = s.record_mut(Stage::Po);
        rec.score = Some(78);
        rec.gaps = vec!["Whether a sixth field is accepted".into()];
        rec.questions = vec![Question {
            id: "q1".into(),
            question: "Accept six fields?".into(),
            context: Some("Decides FR-1".into()),
            round: 1,
        }];
        let p = Pending {
            asked: Asked::Answer,
            stage: Stage::Po,
            task_name: "t".into(),
            session_id: s.session_id.clone(),
            document: Some(Shown {
                path: "d.md".into(),
                sha256: "ab".repeat(32),
                size: 1,
            }),
            score: Some(78),
            gate: Some(90),
            sprints: vec![],
            questions: vec![],
            assumed: vec![],
            notices: vec![],
            failed_verdict: None,
        };
        let r = for_undecided(&s, &p, Undecided::Cancelled);
        let value = serde_json::to_value(&r).unwrap();
        let text = super::super::render_text(&value, &r.known);
        for had in ["sixth field", "Accept six fields?", "score:"] {
            assert!(!text.contains(had), "{had} in {text}");
        }
        assert!(text.contains("document_digest: abababababab"), "{text}");
    }
}
