//! How much of a role prompt a reply carries (docs/spec.md §11.4, "Said once"): the server
//! keeps no memory between calls, so this is decided from the session and the action.

use crate::workflow::authorship::{label, Speaker};
use crate::workflow::session::{Question, StageRecord};
use crate::workflow::Action;

use super::list_or_none;

/// How much of the prompt a reply carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// All of it: the role, this round, every answer and all the feedback. The first round
    /// of a stage, `status`, and wherever the model may have lost the prompt.
    Full,
    /// The model has had the earlier prompts: a later round of the stage gets this round's
    /// section only, with the answers (`new_answers`: this call brought them) and the
    /// feedback (`new_feedback`) that are new in it, the rest named as sent before; a new
    /// stage's first prompt names the documents earlier prompts described, but the last.
    Delta {
        new_answers: bool,
        new_feedback: bool,
    },
    /// The model had the stage's role and rules and may not have this round: the first
    /// `status` after a decision the human made elsewhere. The role is named, the round
    /// given whole (its section, every answer, all the feedback), as for [`Repeat::Delta`]
    /// a new stage's documents named.
    Resumed,
}

/// What the line a later round's prompt starts with says, in place of the role's text;
/// the line names the role first (`(The Developer: role and rules …`), so that it reads
/// as this stage's and not as a line every stage repeats.
pub const SENT_BEFORE: &str =
    "role and rules as this stage's first prompt gave them; a `status` with nothing new since gives them again.)";

impl Repeat {
    /// How much the reply to `action` carries: all of it on `start` and `status` (and so
    /// the `resume` prompt); otherwise what is new since the prompts the model had.
    pub fn after(action: Action) -> Repeat {
        match action {
            Action::Start | Action::Status | Action::List => Repeat::Full,
            _ => Repeat::Delta {
                new_answers: action == Action::Answer,
                new_feedback: matches!(
                    action,
                    Action::Reject | Action::Confirm | Action::ConfirmSave | Action::Approve
                ),
            },
        }
    }
}

/// What the line a round starts with says when the model had this stage's revise section
/// in an earlier round (after the role, as [`SENT_BEFORE`]).
pub const REVISE_AGAIN: &str = "revise and reply as before; `status` resends the prompt.)";

/// The start of [`SENT_BEFORE`]'s and [`REVISE_AGAIN`]'s line: the role, filled in as
/// `{{role}}` is.
pub const ROLE_FIRST: &str = "(The {{role}}: ";

/// A later revision round's prompt: what is new since the last round, no fixed text.
pub(super) fn again(answers: &str, feedback: &str, guidance: &str) -> String {
    let mut out = format!(
        "{ROLE_FIRST}{REVISE_AGAIN}\n\n## This round (submission {{{{iteration}}}})\n\nYour previous draft: {{{{previous}}}}\n"
    );
    for (title, value, key) in [
        (ANSWERS_TITLE, answers, "answers"),
        (FEEDBACK_TITLE, feedback, "feedback"),
        ("What the last draft lacked", guidance, "guidance"),
    ] {
        if value != "(none)" {
            out.push_str(&format!("\n{title}:\n{{{{{key}}}}}\n"));
        }
    }
    out
}

/// The heading of the answers in a revision round: each answer says who gave it.
pub const ANSWERS_TITLE: &str = "Answers to the questions, each with who gave it";
/// The heading of the feedback in a revision round: each item says who wrote it.
pub const FEEDBACK_TITLE: &str = "Feedback on the last draft, each with who wrote it";

pub(super) fn answer(rec: &StageRecord, q: &Question) -> String {
    match rec.answers.get(&q.id) {
        Some(a) => {
            let who = rec
                .answered_by
                .get(&q.id)
                .map_or_else(|| label(Speaker::Unrecorded, None), |by| by.label());
            format!("- {} {}\n  Answer ({who}): {}", q.id, q.question, a)
        }
        None => format!(
            "- {} {}\n  Answer: (not answered: state your assumption on a line `Assumed {}: <what you assume>`)",
            q.id, q.question, q.id
        ),
    }
}

/// A later round's answers: those of the latest questions when this call brought them;
/// the others by id, as sent before.
pub(super) fn new_answers_only(rec: &StageRecord, new: bool) -> String {
    let latest = rec.rounds();
    let (fresh, before): (Vec<&Question>, Vec<&Question>) =
        rec.questions.iter().partition(|q| new && q.round == latest);
    let mut lines: Vec<String> = fresh.into_iter().map(|q| answer(rec, q)).collect();
    if !before.is_empty() {
        let ids: Vec<&str> = before.iter().map(|q| q.id.as_str()).collect();
        lines.push(format!("- {}: as sent before", ids.join(", ")));
    }
    list_or_none(lines)
}

/// A later round's feedback: the latest when this call brought it (a send-back's pointer
/// to the report with the words that came with it); the rest as sent before.
pub(super) fn new_feedback_only(rec: &StageRecord, new: bool) -> String {
    let n = rec.feedback.len();
    let fresh = match &rec.feedback[..] {
        _ if !new => 0,
        [.., pointer, words] if pointer.by == Speaker::Server && words.by != Speaker::Server => 2,
        [..] => n.min(1),
    };
    let before = n - fresh;
    let mut lines: Vec<String> = rec.feedback[before..]
        .iter()
        .map(|f| format!("- {}", f.labelled()))
        .collect();
    if before > 0 {
        lines.push(format!("- ({before} earlier, as sent before)"));
    }
    list_or_none(lines)
}
