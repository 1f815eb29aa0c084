//! The human's decisions on the page: answer, confirm, approve a scope, reject with
//! feedback (comments anchored to lines of the document, quoted by the server from the
//! version the page showed), accept a failing verdict's risk, approve a waiting
//! `.bmad/config.toml`. Each goes through `evidence::act` like the terminal's, recorded
//! `decided_by: human`, `via: dashboard`, bound to the digest the page showed: a
//! document that changed since is refused (409, with the digest now), and the page shows
//! the new version. A connection that comes from an assistant's shell is refused.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use chrono::Utc;
use serde::Deserialize;

use crate::code::clip;
use crate::error::Error;
use crate::evidence::{self, Watched};
use crate::files::procs;
use crate::server::reply;
use crate::store::{SessionKey, Store};
use crate::workflow::{Action, Command, DecidedBy, Decision, Provenance, Via, WorkflowError};

/// The most comments one decision carries, and the longest text of each.
const MAX_COMMENTS: usize = 50;
const MAX_WORDS: usize = 16 * 1024;

/// A comment on lines `from`..=`to` (1-based) of the document shown.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    pub from: usize,
    pub to: usize,
    pub text: String,
}

/// A decision as the page posts it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Posted {
    #[serde(default)]
    pub project: usize,
    pub session_id: String,
    pub action: String,
    /// The SHA-256 of the document as the page showed it.
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub feedback: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub answers: BTreeMap<String, String>,
    #[serde(default)]
    pub comments: Vec<Comment>,
}

/// How a decision ended, as the page is told (an HTTP status and a message).
pub enum Answer {
    Done(String),
    /// 400: the request itself is wrong.
    Bad(String),
    /// 403: not the human's channel.
    Forbidden(String),
    /// 409: the document changed, or the state no longer asks this; `sha256` is the
    /// document's digest now.
    Conflict {
        message: String,
        sha256: Option<String>,
    },
}

/// Who is behind the connection: the process at its other end and its ancestors. A chain
/// with Claude Code or its Bash tool's shell in it is the assistant's, not the human's.
pub fn provenance(peer: Option<SocketAddr>) -> Result<Provenance, String> {
    let chain = peer
        .and_then(procs::socket_owner)
        .map(procs::chain)
        .unwrap_or_default();
    let assistant = chain.iter().find(|p| p.claude || p.marked).map(|p| {
        if p.claude {
            format!("Claude Code is {}", p.label)
        } else {
            format!("{} in the environment of {}", procs::ASSISTANT_VAR, p.label)
        }
    });
    if let Some(why) = assistant {
        return Err(format!(
            "this connection comes from an assistant's process ({why}): a decision on the dashboard is the human's, from their own browser"
        ));
    }
    let mut labels = chain.into_iter().map(|p| p.label);
    Ok(Provenance {
        channel: Some("dashboard".into()),
        process: labels.next(),
        parents: labels.collect(),
        ..Provenance::default()
    })
}

fn words(parts: &[Option<String>]) -> Option<String> {
    let joined: Vec<&str> = parts
        .iter()
        .flatten()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    (!joined.is_empty()).then(|| joined.join("\n\n"))
}

/// The comments as the human's words, each with the lines it is about quoted from
/// `document` (the version the page showed).
fn quoted(path: &str, document: &str, comments: &[Comment]) -> Result<Option<String>, String> {
    if comments.len() > MAX_COMMENTS {
        return Err(format!("at most {MAX_COMMENTS} comments per decision"));
    }
    let lines: Vec<&str> = document.lines().collect();
    let mut out = Vec::new();
    for c in comments {
        if c.from == 0 || c.to < c.from || c.to > lines.len() {
            return Err(format!(
                "a comment names lines {}-{}, but the document has lines 1-{}",
                c.from,
                c.to,
                lines.len()
            ));
        }
        if c.text.trim().is_empty() || c.text.len() > MAX_WORDS {
            return Err(format!("a comment's text must be 1 to {MAX_WORDS} bytes"));
        }
        let quote: Vec<String> = lines[c.from - 1..c.to]
            .iter()
            .map(|l| format!("> {l}"))
            .collect();
        let span = if c.from == c.to {
            format!("line {}", c.from)
        } else {
            format!("lines {}-{}", c.from, c.to)
        };
        out.push(format!(
            "On {span} of {path}:\n{}\n{}",
            quote.join("\n"),
            c.text.trim()
        ));
    }
    Ok((!out.is_empty()).then(|| out.join("\n\n")))
}

/// Applies `posted` in the project of `store`, as the human's decision on the dashboard.
pub fn decide(store: &Store, posted: Posted, provenance: Provenance) -> Answer {
    let action = match posted.action.as_str() {
        "confirm" => Action::Confirm,
        "approve" => Action::Approve,
        "reject" => Action::Reject,
        "answer" => Action::Answer,
        other => {
            return Answer::Bad(format!(
                "`{}` is not a decision: confirm, approve, reject or answer",
                clip(other, 40)
            ))
        }
    };
    for text in [&posted.note, &posted.feedback, &posted.scope]
        .into_iter()
        .flatten()
    {
        if text.len() > MAX_WORDS {
            return Answer::Bad(format!("a text is over {MAX_WORDS} bytes"));
        }
    }
    let key = SessionKey::from_task(&posted.session_id);
    let (project, _) = match store.load(None, &key) {
        Ok(found) => found,
        Err(e) => return Answer::Bad(e.to_string()),
    };
    let pending = match evidence::pending(store, None, &key, action) {
        Ok((_, p)) => p,
        Err((e, _)) => {
            return Answer::Conflict {
                message: e.to_string(),
                sha256: None,
            }
        }
    };
    let seen = posted
        .digest
        .clone()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let mut comments = None;
    if let Some(doc) = &pending.document {
        if seen.len() < 12 || !doc.sha256.starts_with(&seen) {
            return Answer::Conflict {
                message: format!(
                    "{} changed since the page showed it (sha256 now {}): read it again before deciding",
                    doc.path,
                    &doc.sha256[..12]
                ),
                sha256: Some(doc.sha256.clone()),
            };
        }
        if !posted.comments.is_empty() {
            let text = project.read(&doc.path).ok().flatten().unwrap_or_default();
            match quoted(&doc.path, &text, &posted.comments) {
                Ok(q) => comments = q,
                Err(why) => return Answer::Bad(why),
            }
        }
    } else if !posted.comments.is_empty() {
        return Answer::Bad("there is no document to anchor comments to".into());
    }
    let command = match action {
        Action::Reject => match words(&[posted.feedback, comments]) {
            Some(feedback) => Command::Reject {
                action: Action::Reject,
                feedback: Some(feedback),
            },
            None => {
                return Answer::Bad("sending back needs feedback: say what should change".into())
            }
        },
        Action::Approve => Command::Approve {
            scope: posted.scope.filter(|s| !s.trim().is_empty()),
            note: words(&[posted.note, comments]),
        },
        Action::Answer => {
            let answers: BTreeMap<String, String> = posted
                .answers
                .into_iter()
                .filter(|(_, a)| !a.trim().is_empty())
                .collect();
            if answers.is_empty() {
                return Answer::Bad("no answer given".into());
            }
            Command::Answer { answers }
        }
        _ => Command::Confirm {
            action: Action::Confirm,
            note: words(&[posted.note, comments]),
            answers: Default::default(),
        },
    };
    let decision = Decision {
        decided_by: DecidedBy::Human,
        via: Via::Dashboard,
        seen_digest: pending.document.as_ref().map(|_| seen),
        provenance: Some(Box::new(provenance)),
        // The person: filled in by the store from BMAD_OWNER or git, as for the terminal.
        decider: None,
    };
    let acted = evidence::act(
        store,
        None,
        &key,
        command,
        &decision,
        &Watched::none(),
        &mut |_, _| Ok(()),
        &Utc::now,
    );
    match acted {
        Ok((s, facts)) => Answer::Done(reply::for_session(&s, &facts, action, None).user_message),
        Err((e @ Error::Workflow(WorkflowError::StaleDecision { .. }), _)) => {
            let now = evidence::pending(store, None, &key, action)
                .ok()
                .and_then(|(_, p)| p.document.map(|d| d.sha256));
            Answer::Conflict {
                message: e.to_string(),
                sha256: now,
            }
        }
        Err((e, _)) => Answer::Conflict {
            message: e.to_string(),
            sha256: None,
        },
    }
}

/// Approves `.bmad/config.toml` as the page showed it (`sha256`).
pub fn approve_config(store: &Store, sha256: &str) -> Answer {
    match evidence::approve_config(store, None, sha256, Via::Dashboard, &Utc::now) {
        Ok(a) => Answer::Done(format!(
            "You approved {} (sha256 {}): its checks and gates policy hold from now on.",
            evidence::config::CONFIG_REL,
            &a.sha256[..12]
        )),
        Err(e) => Answer::Conflict {
            message: e.to_string(),
            sha256: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_quote_the_lines_they_name() {
        let doc = "# Title\none\ntwo\nthree\n";
        let c = |from, to, text: &str| Comment {
            from,
            to,
            text: text.into(),
        };
        let q = quoted("p.md", doc, &[c(2, 3, "merge these")])
            .unwrap()
            .unwrap();
        assert_eq!(q, "On lines 2-3 of p.md:\n> one\n> two\nmerge these");
        assert!(quoted("p.md", doc, &[c(4, 5, "x")])
            .unwrap_err()
            .contains("1-4"));
        assert!(quoted("p.md", doc, &[c(0, 1, "x")]).is_err());
        assert!(quoted("p.md", doc, &[c(1, 1, " ")]).is_err());
        assert_eq!(quoted("p.md", doc, &[]).unwrap(), None);
    }
}
