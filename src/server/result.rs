//! The reply as a tool result (docs/spec.md §10, "Two readers"). The model reads the
//! `content`: one text block, the reply as [`reply::render_text`] writes it, with the role
//! prompt as Markdown. Programs read `structuredContent`: the same reply as one JSON
//! object. The tool declares no `outputSchema` (one would oblige every result to carry
//! `structuredContent`), and the JSON goes to every client except a host known to show its
//! model `structuredContent` in place of the text, or after it ([`crate::hosts`]): Claude
//! Code and Codex forward a result that has `structuredContent` as that JSON, one escaped
//! string, and drop the text; Copilot CLI shows both, so its model would read the reply
//! twice (measured with `cargo bench --bench host`, BENCHMARKS.md). Gemini CLI gets an
//! error as a result that is not flagged as one: flagged, its model would read the reply as
//! one JSON string with the whole call echoed, and its person would read nothing of it.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::reply::{self, Reply};
use crate::hosts::Client;

/// Who reads a result, and what the model has already.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Readers {
    /// The host the client is, where it is known ([`crate::hosts`]): it decides
    /// whether programs read `structuredContent` beside the model's text (not where the host would
    /// show its model the JSON in place of the text, or beside it).
    pub host: Option<&'static Client>,
    /// The session id the call named: the model has it, so the text does not repeat it.
    pub session_id: Option<String>,
}

impl Readers {
    /// By the name the client declared (in `initialize`, or in each request's `_meta`), and
    /// the call's arguments.
    pub fn of(ctx: &RequestContext<RoleServer>, args: Option<&JsonObject>) -> Readers {
        Readers::named(ctx.client_info().map(|i| i.name).as_deref(), args)
    }

    pub fn named(client: Option<&str>, args: Option<&JsonObject>) -> Readers {
        Readers {
            host: super::per_host::client(client).map(|(_, c)| c),
            session_id: args
                .and_then(|a| a.get("session_id"))
                .and_then(|v| v.as_str())
                .map(String::from),
        }
    }
}

/// The reply as a tool result, bounded ([`reply::bound`]).
pub fn to_result(reply: Reply, readers: &Readers) -> CallToolResult {
    let mut reply = reply::bound(reply);
    reply::drop_said_notices(&mut reply);
    let is_error = reply.error.is_some();
    let value = serde_json::to_value(&reply).expect("replies serialize");
    if matches!((&reply.session_id, &readers.session_id), (Some(id), Some(given)) if id == given) {
        reply.known.fields.push("session_id");
    }
    let text = vec![ContentBlock::text(reply::render_text(&value, &reply.known))];
    // A host that would hand its model an error result only as JSON, the call's arguments
    // echoed, and show its person none of it (Gemini CLI) gets the reply as a result: its
    // text names the error, and both of them read it.
    let flagged = is_error && readers.host.is_none_or(super::per_host::flags_errors);
    let mut result = if flagged {
        CallToolResult::error(text)
    } else {
        CallToolResult::success(text)
    };
    if readers.host.is_none_or(super::per_host::sends_json) {
        result.structured_content = Some(value);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_gets_the_text_alone_every_other_client_the_json_too() {
        let json = |client| {
            to_result(Reply::default(), &Readers::named(client, None))
                .structured_content
                .is_some()
        };
        for text_only in ["claude-code", "codex-mcp-client", "copilot-cli"] {
            assert!(!json(Some(text_only)), "{text_only}");
        }
        for other in [
            Some("bench"),
            Some("mcp"),
            Some("Claude-Code "),
            Some("gemini-cli-mcp-client"),
            Some("opencode"),
            None,
        ] {
            assert!(json(other), "{other:?}");
        }
        let reply = Reply {
            session_id: Some("s-1".into()),
            user_message: "Hello.".into(),
            role_prompt: Some("# Role: PO\n\nWrite it.\n".into()),
            ..Reply::default()
        };
        let both = to_result(reply.clone(), &Readers::named(Some("bench"), None));
        let only = to_result(reply.clone(), &Readers::named(Some("claude-code"), None));
        assert_eq!(both.content, only.content);
        let text = only.content[0].as_text().unwrap().text.clone();
        assert!(text.contains("session_id: s-1\n"), "{text}");
        assert!(
            text.ends_with("role_prompt: # Role: PO\n\nWrite it.\n"),
            "{text}"
        );
        assert_eq!(
            both.structured_content.unwrap()["role_prompt"],
            "# Role: PO\n\nWrite it.\n"
        );
        assert!(only.structured_content.is_none());
        // The id the call named is not repeated in the text; the JSON keeps it.
        let args = serde_json::json!({"action": "status", "session_id": "s-1"});
        let named = Readers::named(Some("bench"), args.as_object());
        let result = to_result(reply, &named);
        let text = result.content[0].as_text().unwrap().text.clone();
        assert!(!text.contains("s-1"), "{text}");
        assert_eq!(result.structured_content.unwrap()["session_id"], "s-1");
    }

    #[test]
    fn an_error_reply_says_its_message_once() {
        let e = crate::error::Error::Internal {
            failed: "judge the `Failing Test` section".into(),
            yours: "your submission",
            cause: "it panicked at src/workflow/sections.rs:1:1: boom".into(),
            record: "The fault is recorded in /p/.bmad-task/faults/s.log.".into(),
        };
        let result = to_result(
            reply::for_error(&e, None),
            &Readers::named(Some("claude-code"), None),
        );
        let text = result.content[0].as_text().unwrap().text.clone();
        let message = e.to_string();
        assert_eq!(text.matches(message.as_str()).count(), 1, "{text}");
        assert!(text.contains(&format!("code: {}", e.code())), "{text}");
        assert_eq!(result.is_error, Some(true));
    }

    /// Gemini CLI's interface shows the person no text of an error result, and its model
    /// reads one as JSON with the call's arguments echoed: a refusal goes to it as a result
    /// whose text names the error; every other client gets it flagged.
    #[test]
    fn gemini_gets_a_refusal_as_a_result_whose_text_names_the_error() {
        let e = crate::error::Error::argument(crate::code::ErrorCode::InvalidState, "not now");
        let gemini = to_result(
            reply::for_error(&e, None),
            &Readers::named(Some("gemini-cli-mcp-client"), None),
        );
        assert_ne!(gemini.is_error, Some(true));
        let text = gemini.content[0].as_text().unwrap().text.clone();
        assert!(text.contains("code: invalid_state"), "{text}");
        assert!(text.contains("not now"), "{text}");
        for other in [Some("opencode"), Some("claude-code"), Some("x"), None] {
            let r = to_result(reply::for_error(&e, None), &Readers::named(other, None));
            assert_eq!(r.is_error, Some(true), "{other:?}");
        }
    }
}
