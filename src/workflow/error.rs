//! Why the transition function refused an action. On any of these, nothing is written and
//! the session stays as it was.

use crate::code::ErrorCode;

use super::action::Action;
use super::session::State;
use super::stage::Stage;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkflowError {
    #[error("`{action}` is not allowed now: the session is in state `{state}` at stage `{stage}`; allowed actions: {}", names(.allowed))]
    IllegalAction {
        action: Action,
        state: State,
        stage: Stage,
        allowed: Vec<Action>,
    },
    #[error("the sprints run as stories, and {open} not completed yet: each story is submitted in its own session; the final QA of the whole comes when every story completed")]
    StoriesOpen { open: String },
    #[error(
        "field `stage`: `{given}` is not the current stage; the session is at stage `{current}`"
    )]
    StageMismatch { given: Stage, current: Stage },
    #[error("`submit` at stage `{stage}` needs the document in `{}` (a non-empty string)", .fields.join("` or `"))]
    MissingResult {
        stage: Stage,
        fields: Vec<&'static str>,
    },
    #[error(
        "field `{field}`: the submission holds no document text (an empty document is never saved)"
    )]
    EmptyDocument { field: &'static str },
    #[error("field `{field}`: the JSON holds no document under a key this stage reads; at stage `{stage}` put the document in {}; the JSON's keys were {}", quote_list(.accepted), quote_list(.seen))]
    NoDocumentField {
        field: &'static str,
        stage: Stage,
        accepted: Vec<String>,
        seen: Vec<String>,
    },
    /// A submission's `document_file` that cannot be taken as its document.
    #[error("field `document_file`: {problem}")]
    DocumentFile { problem: String },
    #[error("field `answers`: no question with id {} in this round; open questions: {}", quote_list(.unknown), quote_list(.known))]
    UnknownQuestions {
        unknown: Vec<String>,
        known: Vec<String>,
    },
    #[error("field `answers`: no answer given (it takes {{\"<question id>\": \"<answer>\"}}); open questions: {}", quote_list(.known))]
    NoAnswers { known: Vec<String> },
    #[error("field `answers.{id}`: the answer is empty")]
    EmptyAnswer { id: String },
    #[error("the document to confirm ({path}) is missing and cannot be recovered; the stage can only be sent back and written again")]
    DocumentUnavailable { path: String },
    #[error("field `digest`: `{given}` is not the document as it is now: {path} has SHA-256 {}…; the decision is to be made again on the current version", clip_digest(.current))]
    StaleDecision {
        path: String,
        given: String,
        /// The document's whole digest now (the message shows its first 12 digits).
        current: String,
    },
    #[error("field `feedback` is required to send the document back, in the human's words of what should change; nothing was changed")]
    FeedbackRequired,
    #[error("field `{field}`: {problem}")]
    SubmissionTooLarge {
        field: &'static str,
        problem: String,
    },
    #[error("{path} {reason}; nothing was changed. {todo}")]
    DocumentUnreadable {
        path: String,
        reason: String,
        todo: &'static str,
    },
    #[error("field `{field}`: the JSON's `review_status` is {json}, but the document's own line is {stated}. The server reads the verdict from the document's `Review Status:` line only, so the two must agree; nothing was changed")]
    ContradictoryVerdict {
        field: &'static str,
        json: String,
        stated: String,
    },
    #[error("field `scope`: {problem}; the plan's sprints: {sprints}. Give `all`, or sprint numbers of the plan such as `sprint 1` or `sprints 1-2`")]
    InvalidScope { problem: String, sprints: String },
    #[error("the implementation report lists changes in its `Changes` section, but no file of the project changed since this round of development began, or since its last submission was accepted (git compared the work tree with commit {commit} and the {uncommitted} file(s) that differed from it then; files git ignores and the files the server wrote itself do not count, new ones count without `git add`): nothing was recorded. The changes the report describes are to be made in the project, or its `Changes` section is to say that this round changed nothing")]
    NothingChanged { commit: String, uncommitted: usize },
    #[error("field `{field}`: the review has no findings for its layer(s) {lacking}. The review prompt named its layers (the BMAD method's way of reviewing): each needs a section of that name with the layer's findings, or `No findings.` under it; nothing was recorded")]
    LayersUnreported {
        field: &'static str,
        lacking: String,
    },
}

fn names(actions: &[Action]) -> String {
    actions
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn quote_list(items: &[String]) -> String {
    if items.is_empty() {
        return "(none)".into();
    }
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl WorkflowError {
    pub fn code(&self) -> ErrorCode {
        match self {
            WorkflowError::IllegalAction { .. } => ErrorCode::InvalidState,
            WorkflowError::StageMismatch { .. } => ErrorCode::StageMismatch,
            WorkflowError::StoriesOpen { .. } => ErrorCode::InvalidState,
            WorkflowError::MissingResult { .. } => ErrorCode::MissingField,
            WorkflowError::EmptyDocument { .. } => ErrorCode::EmptyDocument,
            WorkflowError::NoDocumentField { .. } => ErrorCode::MissingField,
            WorkflowError::DocumentFile { .. } => ErrorCode::InvalidArgument,
            WorkflowError::UnknownQuestions { .. } => ErrorCode::UnknownQuestion,
            WorkflowError::NoAnswers { .. } | WorkflowError::EmptyAnswer { .. } => {
                ErrorCode::InvalidArgument
            }
            WorkflowError::DocumentUnavailable { .. } => ErrorCode::DocumentMissing,
            WorkflowError::DocumentUnreadable { .. } => ErrorCode::DocumentUnreadable,
            WorkflowError::SubmissionTooLarge { .. } => ErrorCode::TooLarge,
            WorkflowError::FeedbackRequired => ErrorCode::MissingField,
            WorkflowError::StaleDecision { .. } => ErrorCode::StaleDecision,
            WorkflowError::InvalidScope { .. } => ErrorCode::InvalidScope,
            WorkflowError::ContradictoryVerdict { .. } => ErrorCode::InvalidArgument,
            WorkflowError::NothingChanged { .. } => ErrorCode::NothingChanged,
            WorkflowError::LayersUnreported { .. } => ErrorCode::InvalidArgument,
        }
    }
}

impl WorkflowError {
    /// What the caller (the host's model) does about it, said in the reply's `next_step`
    /// and never in the message, which the person reads too; `None` where the message
    /// says all.
    pub fn next_step(&self) -> Option<String> {
        Some(match self {
            WorkflowError::DocumentUnavailable { .. } => {
                "Tell the human: the stage goes back with their `reject` and feedback, then you write it again.".into()
            }
            WorkflowError::StaleDecision { .. } => {
                "Show the human the current version, then call again with their decision and its digest.".into()
            }
            WorkflowError::FeedbackRequired => {
                "Ask the human what should change, then call again with their words as `feedback`.".into()
            }
            WorkflowError::ContradictoryVerdict { .. } => {
                "Correct the one that is wrong and submit again.".into()
            }
            WorkflowError::NothingChanged { .. } => {
                "Make the changes the report describes and submit again, or say in `Changes` that this round changed nothing.".into()
            }
            WorkflowError::LayersUnreported { .. } => {
                "Give each layer its section, then submit again.".into()
            }
            _ => return None,
        })
    }
}

/// The first 12 digits of a digest, as messages show it.
fn clip_digest(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
