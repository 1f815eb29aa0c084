//! The small types a reply is made of: its interaction type, the documents and context it
//! names, a decision as the audit shows it, and the error body.

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::ErrorCode;
use crate::workflow::person::Person;
use crate::workflow::{Action, DecidedBy, Stage, Via};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InteractionType {
    /// The host generates the stage document with `role_prompt` and submits it.
    AwaitingGeneration,
    /// The human must decide (answer, confirm, approve or reject) before anything else.
    UserDecision,
    /// The host regenerates the document with the answers, feedback or guidance.
    AwaitingRegeneration,
    WorkflowCompleted,
}

/// An earlier stage document, by reference.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DocumentRef {
    pub stage: Stage,
    pub path: String,
    pub size: u64,
}

/// Where the host finds what the next document builds on: the facts themselves (the
/// objective, the answers, the feedback, a line on each earlier document) are written
/// once, in `role_prompt`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Context {
    /// Where this task's documents are saved.
    pub specs_dir: String,
    /// The documents of earlier stages: read them from disk.
    pub documents: Vec<DocumentRef>,
    /// The draft being revised, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_draft: Option<String>,
    /// For development: the sprint scope the human approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// One decision from the session's history.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecisionEntry {
    pub stage: Stage,
    pub action: Action,
    pub decided_by: DecidedBy,
    pub via: Via,
    /// The person deciding, as git (or `BMAD_OWNER`) named them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decider: Option<Person>,
    /// The first 12 hex digits of the SHA-256 of the document decided on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}
