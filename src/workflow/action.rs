//! The tool's actions as one type. Their names appear as strings only where JSON is read
//! (serde) and written (serde, [`Action::name`] in messages).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Begin a new workflow for `objective`; returns the Product Owner prompt.
    Start,
    /// Submit the generated document of the current stage.
    Submit,
    /// Give the human's answers to the clarification questions.
    Answer,
    /// The human accepts the scored document; the workflow moves to the next stage.
    Confirm,
    /// Alias of `confirm`.
    ConfirmSave,
    /// The human approves the sprint plan (with a `scope`); development begins.
    Approve,
    /// The human sends the document back with `feedback`.
    Reject,
    /// The human moves a `quick` task to the `full` track, keeping what was written
    /// (the terminal's `bmad-mcp promote`).
    Promote,
    /// The session as stored (read only).
    Status,
    /// The project's sessions, newest first (read only).
    List,
    /// Keep a lesson for later tasks (`lesson`, `category`, and the role as `stage` or
    /// the session's current stage), marked as written by the host.
    Remember,
    /// The project's lessons most relevant to `query` (and a role), read only.
    Recall,
}

impl Action {
    /// Every action, in the order replies list them.
    pub const ALL: [Action; 12] = [
        Action::Start,
        Action::Submit,
        Action::Answer,
        Action::Confirm,
        Action::ConfirmSave,
        Action::Approve,
        Action::Reject,
        Action::Promote,
        Action::Status,
        Action::List,
        Action::Remember,
        Action::Recall,
    ];

    /// The name callers use (the JSON value of `action`).
    pub fn name(self) -> &'static str {
        match self {
            Action::Start => "start",
            Action::Submit => "submit",
            Action::Answer => "answer",
            Action::Confirm => "confirm",
            Action::ConfirmSave => "confirm_save",
            Action::Approve => "approve",
            Action::Reject => "reject",
            Action::Promote => "promote",
            Action::Status => "status",
            Action::List => "list",
            Action::Remember => "remember",
            Action::Recall => "recall",
        }
    }

    /// Whether the action is a human's decision at a gate: answering the questions,
    /// confirming, approving or sending a document back.
    pub fn decides(self) -> bool {
        matches!(
            self,
            Action::Answer
                | Action::Confirm
                | Action::ConfirmSave
                | Action::Approve
                | Action::Reject
                | Action::Promote
        )
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The names of every action, for messages that list them.
pub fn names() -> impl Iterator<Item = &'static str> {
    Action::ALL.into_iter().map(Action::name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_serde_names() {
        for a in Action::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.name());
            let back: Action = serde_json::from_value(a.name().into()).unwrap();
            assert_eq!(back, a);
        }
        assert_eq!(names().count(), 12);
    }
}
