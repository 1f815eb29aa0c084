//! Who wrote a text the session keeps and shows: the human (in which channel), the host
//! (its model, in a tool call: maybe relaying the human, never confirmed by them), or the
//! server. Every text that reaches a prompt or a page is shown with that label, so that
//! nobody's words pass as someone else's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::decision::{DecidedBy, Decision, Via};

/// Who wrote a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Speaker {
    /// The human, through a channel the model cannot answer for them.
    Human,
    /// The host's model, in a tool call (relaying the human, or on its own).
    Host,
    /// The server's own sentence.
    Server,
    /// Kept by a version of the server that did not record who wrote it.
    Unrecorded,
}

/// Who gave a text that is kept apart from its author (an answer, by question id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Author {
    pub by: Speaker,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
}

impl Author {
    /// The decider of `decision`.
    pub fn of(decision: &Decision) -> Author {
        Author {
            by: speaker(decision.decided_by),
            via: Some(decision.via),
        }
    }

    /// Who it is, for a reader ([`label`]).
    pub fn label(&self) -> String {
        label(self.by, self.via)
    }
}

/// A text with who wrote it, and for a person's words the channel they came through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Said {
    pub by: Speaker,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    pub text: String,
}

/// A stored text: an object, or a plain string kept before the author was recorded.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Said {
        by: Speaker,
        #[serde(default)]
        via: Option<Via>,
        text: String,
    },
    Plain(String),
}

impl<'de> Deserialize<'de> for Said {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Said, D::Error> {
        Ok(match Stored::deserialize(d)? {
            Stored::Said { by, via, text } => Said { by, via, text },
            Stored::Plain(text) => Said {
                by: Speaker::Unrecorded,
                via: None,
                text,
            },
        })
    }
}

impl Said {
    /// The server's own sentence.
    pub fn server(text: impl Into<String>) -> Said {
        Said {
            by: Speaker::Server,
            via: None,
            text: text.into(),
        }
    }

    /// Words given with `decision`, as its decider's: the human's through their channel,
    /// or the host's.
    pub fn of(decision: &Decision, text: impl Into<String>) -> Said {
        Said {
            by: speaker(decision.decided_by),
            via: Some(decision.via),
            text: text.into(),
        }
    }

    /// Who wrote it, for a reader: "the user, in the terminal", "the assistant, for the
    /// user (not confirmed by them)", "the server".
    pub fn label(&self) -> String {
        label(self.by, self.via)
    }

    /// The text after its label: "the user, in the terminal: make it shorter".
    pub fn labelled(&self) -> String {
        format!("{}: {}", self.label(), self.text)
    }
}

/// A stage's draft taken whole from a file of the project (a document the BMAD method's
/// skills made), not written by the model in its result: which file, the SHA-256 of the
/// text read, and who last changed the file as git and the work tree showed it then, so
/// the human is shown whose document they decide on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FromFile {
    pub path: String,
    pub sha256: String,
    /// Who last changed the file when it was read ("last committed in 1a2b3c4 by …", "not
    /// committed: written on this machine after this task began …"); absent in a record
    /// made before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

impl FromFile {
    /// Whose the draft is, for the human, while the document is the file's text as read:
    /// "the file `x` where the BMAD method leaves its documents (SHA-256 …), taken as it
    /// is: last committed in … by …". Never that the assistant did not write it: a file in
    /// the method's place may be anyone's.
    pub fn label(&self) -> String {
        format!("{}, taken as it is: {}", self.file(), self.author())
    }

    /// Where a document that is no longer the file's text as read came from (changed since,
    /// or the assistant's rewrite): the file and who had last changed it when it was read,
    /// never that it is taken as it is.
    pub fn origin(&self) -> String {
        format!("{} as it was read ({})", self.file(), self.author())
    }

    /// "the file `x` where the BMAD method leaves its documents (SHA-256 …)".
    fn file(&self) -> String {
        format!(
            "the file `{}` where the BMAD method leaves its documents (SHA-256 {}…)",
            crate::code::visible(&crate::code::clip(&self.path, 200)),
            &self.sha256[..12.min(self.sha256.len())]
        )
    }

    fn author(&self) -> &str {
        self.author
            .as_deref()
            .unwrap_or("who last changed it was not recorded")
    }
}

/// The speaker of words a decision came with.
pub fn speaker(decided_by: DecidedBy) -> Speaker {
    match decided_by {
        DecidedBy::Human => Speaker::Human,
        DecidedBy::Host => Speaker::Host,
    }
}

/// Who wrote a text, for a reader.
pub fn label(by: Speaker, via: Option<Via>) -> String {
    match by {
        Speaker::Human => match via {
            Some(Via::Cli) => "the user, in the terminal".into(),
            Some(Via::Dashboard) => "the user, on the dashboard".into(),
            Some(Via::Elicitation) => "the user, in the client's dialog".into(),
            Some(Via::Tool) | None => "the user".into(),
        },
        Speaker::Host => "the assistant, for the user (not confirmed by them)".into(),
        Speaker::Server => "the server".into(),
        Speaker::Unrecorded => "unrecorded author".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_string_reads_as_unrecorded_and_an_object_keeps_its_author() {
        let old: Said = serde_json::from_str("\"shorter please\"").unwrap();
        assert_eq!(old.by, Speaker::Unrecorded);
        let human = Decision {
            decided_by: DecidedBy::Human,
            via: Via::Cli,
            ..Decision::by_host(None)
        };
        let said = Said::of(&human, "shorter please");
        let text = serde_json::to_string(&said).unwrap();
        assert_eq!(
            text,
            r#"{"by":"human","via":"cli","text":"shorter please"}"#
        );
        assert_eq!(serde_json::from_str::<Said>(&text).unwrap(), said);
        assert_eq!(said.labelled(), "the user, in the terminal: shorter please");
        let host = Said::of(&Decision::by_host(None), "ok");
        assert!(host.labelled().starts_with("the assistant, for the user"));
        assert_eq!(Said::server("x").labelled(), "the server: x");
    }

    #[test]
    fn only_the_files_text_as_read_is_taken_as_it_is() {
        let from = FromFile {
            path: "plans/prd.md".into(),
            sha256: "ab".repeat(32),
            author: Some("last committed in 1a2b3c4 by Ada".into()),
        };
        assert_eq!(
            from.label(),
            "the file `plans/prd.md` where the BMAD method leaves its documents (SHA-256 abababababab…), taken as it is: last committed in 1a2b3c4 by Ada"
        );
        let origin = from.origin();
        assert!(!origin.contains("taken as it is"), "{origin}");
        assert!(
            origin.contains("as it was read (last committed in 1a2b3c4 by Ada)"),
            "{origin}"
        );
    }
}
