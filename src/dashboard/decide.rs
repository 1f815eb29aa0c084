//! The human's decisions on the page: answer, confirm, approve a scope, reject with feedback
//! (comments anchored to lines of the document or on the whole of it, quoted by the server from the
//! version the page showed, and the earlier round's threads as the page marked them), accept a
//! failing verdict's risk, approve a waiting `.bmad/config.toml`, retire or restore a lesson. Each
//! takes the one path of a human's decision ([`act::human`](crate::act::human)), recorded
//! `decided_by: human`, `via: dashboard`, bound to the digest the page showed: a document that
//! changed since is refused (409, with the digest now), and the page shows the new version. A
//! connection that comes from an assistant's shell is refused.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use chrono::Utc;
use serde::Deserialize;

use crate::act::human::{self, Asking, Decided};
use crate::act::Handover;
use crate::code::clip;
use crate::policy;
use crate::process_origin::{self, procs, HostRole};
use crate::server::reply;
use crate::store::{SessionKey, Store};
use crate::workflow::{Action, Command, Provenance, Via};

use super::threads;

/// The most comments one decision carries, and the longest text of each.
const MAX_COMMENTS: usize = 50;
const MAX_WORDS: usize = 16 * 1024;

/// A comment on lines `from`..=`to` (1-based) of the document shown; on the whole
/// document when both are 0 (or left out).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comment {
    #[serde(default)]
    pub from: usize,
    #[serde(default)]
    pub to: usize,
    pub text: String,
}

/// The decisions the page may post; anything else is refused with the body (400).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PostedAction {
    Confirm,
    Approve,
    Reject,
    Answer,
}

impl From<PostedAction> for Action {
    fn from(d: PostedAction) -> Action {
        match d {
            PostedAction::Confirm => Action::Confirm,
            PostedAction::Approve => Action::Approve,
            PostedAction::Reject => Action::Reject,
            PostedAction::Answer => Action::Answer,
        }
    }
}

/// A decision as the page posts it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Posted {
    #[serde(default)]
    pub project: usize,
    pub session_id: String,
    pub action: PostedAction,
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
    /// The comment threads of the earlier round the page showed, in order, each marked
    /// resolved (`true`) or still open: all go with the decision, the open ones quoted
    /// again for the next role.
    #[serde(default)]
    pub threads: Option<Vec<bool>>,
}

/// How a decision ended, as the page is told (an HTTP status and a message).
pub enum PageAnswer {
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
    // Fail closed: a connection whose process cannot be found (closed at once after
    // posting, or another user's) cannot be told apart from an assistant's.
    if chain.is_empty() {
        return Err("the process at this connection's other end could not be found: a decision on the dashboard is the human's, from their own browser, and is kept only with the process it came from".into());
    }
    if let Some(why) = process_origin::behind(&chain, HostRole::IsTheAssistant) {
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
        if c.text.trim().is_empty() || c.text.len() > MAX_WORDS {
            return Err(format!("a comment's text must be 1 to {MAX_WORDS} bytes"));
        }
        if c.from == 0 && c.to == 0 {
            out.push(format!("On the whole of {path}:\n{}", c.text.trim()));
            continue;
        }
        if c.from == 0 || c.to < c.from || c.to > lines.len() {
            return Err(format!(
                "a comment names lines {}-{}, but the document has lines 1-{}",
                c.from,
                c.to,
                lines.len()
            ));
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
pub fn decide(store: &Store, posted: Posted, provenance: Provenance) -> PageAnswer {
    let action = match action_of(&posted) {
        Ok(action) => action,
        Err(why) => return PageAnswer::Bad(why),
    };
    let key = SessionKey::from_task(&posted.session_id);
    let asking = match human::asking(store, None, &key, action) {
        Ok(asking) => asking,
        // Not found or unreadable: the request names no session to decide on.
        Err((e, None)) => return PageAnswer::Bad(e.to_string()),
        Err((e, Some(_))) => {
            return PageAnswer::Conflict {
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
    let comments = match anchored(&asking, &seen, &posted.comments) {
        Ok(comments) => comments,
        Err(answer) => return answer,
    };
    let comments = match carried(&asking, posted.threads.as_deref()) {
        Ok(carried) => words(&[comments, carried]),
        Err(answer) => return answer,
    };
    let command = match command_of(action, posted, comments) {
        Ok(command) => command,
        Err(why) => return PageAnswer::Bad(why),
    };
    let answer = human::Answer {
        command,
        via: Via::Dashboard,
        provenance,
        seen_digest: asking.pending.document.as_ref().map(|_| seen),
        handover: Handover::Nothing,
    };
    match human::decide(store, &asking.at, &key, answer) {
        Decided::Done(done) => PageAnswer::Done(reply::of_change(&done, &done.facts).user_message),
        Decided::Stale { error, sha256 } => PageAnswer::Conflict {
            message: error.to_string(),
            sha256: Some(sha256),
        },
        Decided::Refused((e, _)) => PageAnswer::Conflict {
            message: e.to_string(),
            sha256: None,
        },
    }
}

/// The decision `posted` names, with its texts within their bounds.
fn action_of(posted: &Posted) -> Result<Action, String> {
    let action = Action::from(posted.action);
    let texts = [&posted.note, &posted.feedback, &posted.scope];
    if texts.into_iter().flatten().any(|t| t.len() > MAX_WORDS) {
        return Err(format!("a text is over {MAX_WORDS} bytes"));
    }
    Ok(action)
}

/// Checks that the page showed the document as it is now (`seen`: its digest, at least 12
/// digits), and quotes the lines each comment is about from it.
fn anchored(
    asking: &Asking,
    seen: &str,
    comments: &[Comment],
) -> Result<Option<String>, PageAnswer> {
    let Some(doc) = &asking.pending.document else {
        if comments.is_empty() {
            return Ok(None);
        }
        return Err(PageAnswer::Bad(
            "there is no document to anchor comments to".into(),
        ));
    };
    if seen.len() < 12 || !doc.sha256.starts_with(seen) {
        return Err(PageAnswer::Conflict {
            message: format!(
                "{} changed since the page showed it (sha256 now {}): read it again before deciding",
                doc.path,
                &doc.sha256[..12]
            ),
            sha256: Some(doc.sha256.clone()),
        });
    }
    if comments.is_empty() {
        return Ok(None);
    }
    let text = asking
        .project()
        .read(&doc.path)
        .ok()
        .flatten()
        .unwrap_or_default();
    quoted(&doc.path, &text, comments).map_err(PageAnswer::Bad)
}

/// The earlier round's comment threads as the page marked them, in words; refused when
/// the page showed other threads than there are now. A decision that marks none (a page or
/// a client that does not send them) carries every thread as still open: none is dropped.
fn carried(asking: &Asking, marks: Option<&[bool]>) -> Result<Option<String>, PageAnswer> {
    let Some(doc) = &asking.pending.document else {
        return Ok(None);
    };
    let threads = threads::of(&asking.session, asking.pending.stage, &doc.path);
    let open = vec![false; threads.len()];
    let marks = marks.unwrap_or(&open);
    if marks.len() != threads.len() {
        return Err(PageAnswer::Conflict {
            message: format!(
                "the page showed {} comment(s) of the earlier round, and there are {} now: read it again before deciding",
                marks.len(),
                threads.len()
            ),
            sha256: None,
        });
    }
    let said: Vec<String> = threads
        .iter()
        .zip(marks)
        .map(|(t, resolved)| t.carried(&doc.path, *resolved))
        .collect();
    Ok((!said.is_empty()).then(|| said.join("\n\n")))
}

/// The command the human's decision makes, with their words.
fn command_of(action: Action, posted: Posted, comments: Option<String>) -> Result<Command, String> {
    Ok(match action {
        Action::Reject => match words(&[posted.feedback, comments]) {
            Some(feedback) => Command::Reject {
                action: Action::Reject,
                feedback: Some(feedback),
            },
            None => return Err("sending back needs feedback: say what should change".into()),
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
                return Err("no answer given".into());
            }
            Command::Answer { answers }
        }
        _ => Command::Confirm {
            action: Action::Confirm,
            note: words(&[posted.note, comments]),
            answers: Default::default(),
        },
    })
}

/// Retires or restores a lesson (`change`: `retire` or `restore`), the human's decision on
/// the dashboard, through the one path of a human's decision, bound to what the page
/// showed of it (`seen`, its digest).
pub fn lesson(store: &Store, id: &str, change: &str, seen: &str) -> PageAnswer {
    let change = match change {
        "retire" => human::LessonChange::Retire,
        "restore" => human::LessonChange::Restore,
        other => {
            return PageAnswer::Bad(format!(
                "`{}` is not a lesson decision: retire or restore",
                clip(other, 40)
            ))
        }
    };
    if id.is_empty() || id.len() > 200 {
        return PageAnswer::Bad("a lesson's id is 1 to 200 bytes".into());
    }
    match human::lesson(store, None, id, change, Via::Dashboard, Some(seen)) {
        Ok(said) => PageAnswer::Done(said),
        Err(why) => PageAnswer::Conflict {
            message: why,
            sha256: None,
        },
    }
}

/// Approves `.bmad/config.toml` as the page showed it (`sha256`).
pub fn approve_config(store: &Store, sha256: &str) -> PageAnswer {
    match policy::approve_config(store, None, sha256, Via::Dashboard, &Utc::now) {
        Ok(a) => PageAnswer::Done(format!(
            "You approved {} (sha256 {}): its checks and gates policy hold from now on.",
            policy::config::CONFIG_REL,
            &a.sha256[..12]
        )),
        Err(e) => PageAnswer::Conflict {
            message: e.to_string(),
            sha256: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fail closed: no peer, or a peer whose process cannot be found (this process holds
    /// both ends, and the search skips the server's own), is not the human's.
    #[test]
    fn a_connection_whose_process_cannot_be_found_is_refused() {
        let why = provenance(None).unwrap_err();
        assert!(why.contains("could not be found"), "{why}");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        assert!(provenance(Some(client.local_addr().unwrap())).is_err());
    }

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
        assert_eq!(
            quoted("p.md", doc, &[c(0, 0, "shorter")]).unwrap().unwrap(),
            "On the whole of p.md:\nshorter"
        );
        assert_eq!(quoted("p.md", doc, &[]).unwrap(), None);
    }
}
