//! The one list of error codes a tool error can carry, and how every message quotes text
//! it did not write ([`clip`]): a leaf that every layer may name (the pure core included)
//! without importing the adapter's error type (`error::Error`).

use schemars::JsonSchema;
use serde::Serialize;

/// Every code a tool error can carry. The "Error codes" table of docs/troubleshooting.md
/// has a row for each, with what to do (a test keeps them in step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The action is not legal in the session's state.
    InvalidState,
    /// `submit` named a stage other than the current one.
    StageMismatch,
    /// A required field is absent.
    MissingField,
    /// A field is not an argument of the tool.
    UnknownField,
    /// `action` names no action.
    UnknownAction,
    /// `stage` names no stage.
    InvalidStage,
    /// `session_id` is not a UUID.
    InvalidSessionId,
    /// `task_name` is not a task name.
    InvalidTaskName,
    /// A field has the wrong type or an unusable value.
    InvalidArgument,
    /// A submission holds no document text.
    EmptyDocument,
    /// `answers` names a question that was not asked.
    UnknownQuestion,
    /// The document to confirm is gone and cannot be rebuilt.
    DocumentMissing,
    /// An input is over its size limit.
    TooLarge,
    /// No session has that id or task name.
    SessionNotFound,
    /// The project directory is unusable.
    InvalidCwd,
    /// `cwd` lies outside every root an HTTP server was started with.
    ForbiddenProject,
    /// A path would lead outside `.bmad-task/` or `.claude/specs/`.
    UnsafePath,
    /// A session file cannot be trusted.
    SessionCorrupt,
    /// Reading or writing a file failed.
    StorageError,
    /// Another process held the project lock for longer than the wait.
    Busy,
    /// A document the human decides on exists but cannot be used as it is.
    DocumentUnreadable,
    /// `session_id` and `task_name` name two different sessions.
    ConflictingIds,
    /// The task's specs folder belongs to another session.
    SpecsFolderTaken,
    /// The approval scope names sprints the plan does not have.
    InvalidScope,
    /// A decision names a version of the document that is no longer on disk.
    StaleDecision,
    /// `.bmad/config.toml` cannot be read or has a wrong key or value.
    InvalidConfig,
    /// The project's policy wants this decision from the human, not from the host.
    HumanRequired,
    /// A role prompt override (`.bmad/prompts/<role>.md` or the user's) cannot be used.
    InvalidPrompt,
    /// The server failed while handling the call.
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 29] = [
        ErrorCode::InvalidState,
        ErrorCode::StageMismatch,
        ErrorCode::MissingField,
        ErrorCode::UnknownField,
        ErrorCode::UnknownAction,
        ErrorCode::InvalidStage,
        ErrorCode::InvalidSessionId,
        ErrorCode::InvalidTaskName,
        ErrorCode::InvalidArgument,
        ErrorCode::EmptyDocument,
        ErrorCode::UnknownQuestion,
        ErrorCode::DocumentMissing,
        ErrorCode::TooLarge,
        ErrorCode::SessionNotFound,
        ErrorCode::InvalidCwd,
        ErrorCode::ForbiddenProject,
        ErrorCode::UnsafePath,
        ErrorCode::SessionCorrupt,
        ErrorCode::StorageError,
        ErrorCode::Busy,
        ErrorCode::DocumentUnreadable,
        ErrorCode::ConflictingIds,
        ErrorCode::SpecsFolderTaken,
        ErrorCode::InvalidScope,
        ErrorCode::StaleDecision,
        ErrorCode::InvalidConfig,
        ErrorCode::HumanRequired,
        ErrorCode::InvalidPrompt,
        ErrorCode::Internal,
    ];

    /// The code as replies carry it (`error.code`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidState => "invalid_state",
            ErrorCode::StageMismatch => "stage_mismatch",
            ErrorCode::MissingField => "missing_field",
            ErrorCode::UnknownField => "unknown_field",
            ErrorCode::UnknownAction => "unknown_action",
            ErrorCode::InvalidStage => "invalid_stage",
            ErrorCode::InvalidSessionId => "invalid_session_id",
            ErrorCode::InvalidTaskName => "invalid_task_name",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::EmptyDocument => "empty_document",
            ErrorCode::UnknownQuestion => "unknown_question",
            ErrorCode::DocumentMissing => "document_missing",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::SessionNotFound => "session_not_found",
            ErrorCode::InvalidCwd => "invalid_cwd",
            ErrorCode::ForbiddenProject => "forbidden_project",
            ErrorCode::UnsafePath => "unsafe_path",
            ErrorCode::SessionCorrupt => "session_corrupt",
            ErrorCode::StorageError => "storage_error",
            ErrorCode::Busy => "busy",
            ErrorCode::DocumentUnreadable => "document_unreadable",
            ErrorCode::ConflictingIds => "conflicting_ids",
            ErrorCode::SpecsFolderTaken => "specs_folder_taken",
            ErrorCode::InvalidScope => "invalid_scope",
            ErrorCode::StaleDecision => "stale_decision",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::HumanRequired => "human_required",
            ErrorCode::InvalidPrompt => "invalid_prompt",
            ErrorCode::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The most characters of a caller's (or a file's) text that a message quotes.
pub const QUOTE_CHARS: usize = 200;

/// At most `max` characters of `s`, marked with `…` when cut: how every message quotes
/// text it did not write itself, so a reply stays small whatever came in.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_render_as_their_serde_names_and_are_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
            assert!(seen.insert(c.as_str()), "{c} twice");
        }
    }
}
