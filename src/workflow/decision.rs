//! Who made a gate decision, how it reached the server, and on which exact document.
//! The core records it in the history; it never learns how the human was asked.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::person::Person;

/// Who decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The human, through a channel the model cannot answer for them.
    Human,
    /// The host (its model) asserted the decision in a tool call.
    Host,
}

/// How the decision reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// The client's own dialog (MCP elicitation).
    Elicitation,
    /// `bmad-mcp` run by the human in a terminal.
    Cli,
    /// A `bmad-task` tool call.
    Tool,
    /// The human's dashboard (`bmad-mcp dashboard`), a page in their own browser.
    Dashboard,
}

/// A decision as it comes in with a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub decided_by: DecidedBy,
    pub via: Via,
    /// The SHA-256 (or a prefix of at least 12 hex digits) of the document as the decider
    /// saw it; a decision about another version is refused as stale.
    pub seen_digest: Option<String>,
    /// Where the decision came from: the terminal, or the connection of the client's dialog.
    pub provenance: Option<Box<Provenance>>,
    /// The person deciding, as git (or `BMAD_OWNER`) names them where the decision was
    /// taken; the store fills it in from the project's repository when it is `None`.
    pub decider: Option<Person>,
    /// For the host's word: who cannot ask the human, when the default policy does not
    /// take their word for a gate: a host with no dialog (`Gemini CLI, which cannot ask the
    /// human in a dialog`), or a connection opened from a host's shell tool.
    pub cannot_ask: Option<String>,
}

/// Where a decision came from, kept in its history entry: the terminal device, the chain
/// of processes it ran under, and whether one of them is an assistant's (a terminal
/// decision so found is refused, so a recorded one says `false`; a dialog's is recorded
/// as the host's). For the client's dialog also the channel, the connecting process over
/// HTTP, and the client's declared name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// The terminal device stdin was (`/dev/pts/3`), when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<String>,
    /// The processes the command ran under, its parent first: `bash (pid 4242)`, …
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<String>,
    /// Whether one of them is an assistant's (Claude Code, or `CLAUDECODE` in its
    /// environment).
    pub under_assistant: bool,
    /// For the client's dialog: `stdio` or `http`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// Over HTTP, the process holding the connection's other end: `python3 (pid 77)`;
    /// `parents` are then its ancestors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// The name (and version) the client declared in `clientInfo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Why the channel is an assistant's (or could not be told apart from one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant: Option<String>,
    /// For the client's dialog: the hooks the host runs on it in the person's place
    /// (`an `Elicitation` hook in ~/.claude/settings.json (sha256 …) (approved)`): an
    /// approved one with a decision recorded as the human's, an unapproved one with the
    /// host's word it made of the dialog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<String>,
}

impl Decision {
    /// A decision asserted by the host in a tool call.
    pub fn by_host(seen_digest: Option<String>) -> Decision {
        Decision {
            decided_by: DecidedBy::Host,
            via: Via::Tool,
            seen_digest,
            provenance: None,
            decider: None,
            cannot_ask: None,
        }
    }

    /// Whether the decider saw the document whose digest is `sha256`.
    pub fn saw(&self, sha256: &str) -> bool {
        self.seen_digest
            .as_deref()
            .is_none_or(|d| sha256.starts_with(&d.to_ascii_lowercase()))
    }
}
