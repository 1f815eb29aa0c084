//! What the server does differently per MCP client, from the hosts table
//! ([`crate::hosts::HOSTS`], keyed by the `clientInfo.name` each declares): whether a
//! result carries `structuredContent` beside the text the model reads ([`sends_json`],
//! for [`super::result`]) and whether an error goes flagged as one ([`flags_errors`]); who
//! passes a gate where the client cannot ask ([`waits_for_human`], for `call_tool` and
//! [`super::dialog`]); which names its own commands hold ([`own_commands`], for the MCP
//! prompts). A client not in the table keeps the default: the text and the JSON, the
//! host's word where it cannot ask (unless the connection comes from a host's shell tool).

use crate::hosts::{self, Client, Dialog, Host, Shows, Unseen};

/// The host whose client declared `name`, and its facts as a client.
pub fn client(name: Option<&str>) -> Option<(&'static Host, &'static Client)> {
    let host = hosts::by_client(name)?;
    Some((host, host.client.as_ref()?))
}

/// Whether a result for this client carries `structuredContent` beside the text: not
/// where the host would show the model the JSON in place of the text, or beside it (the
/// model would read the reply twice). Gemini CLI's model reads the text of a result (an
/// error goes to it as one, [`flags_errors`]).
pub fn sends_json(client: &Client) -> bool {
    match client.shows {
        Shows::Text | Shows::Printed | Shows::TextErrorsAsJson => true,
        Shows::JsonInstead | Shows::TextThenJson => false,
    }
}

/// Whether an error reply goes to this client flagged as an error result: not where the
/// host would hand its model the flagged result only as JSON with the call's arguments
/// echoed, and show its person nothing of it (Gemini CLI).
pub fn flags_errors(client: &Client) -> bool {
    client.shows != Shows::TextErrorsAsJson
}

/// The host, and when it declines unseen, when its client declares a dialog that some of
/// its modes decline at once: a decline there may be nobody's answer.
pub fn declines_unattended(name: Option<&str>) -> Option<(&'static str, Unseen)> {
    client(name).and_then(|(h, c)| match c.dialog {
        Dialog::DeclinedUnattended(unseen) => Some((h.name, unseen)),
        _ => None,
    })
}

/// The host of a client that cannot ask and whose word does not pass a gate under the
/// default policy; `None` for any other client (unknown ones included).
pub fn waits_for_human(name: Option<&str>, can_ask: bool) -> Option<&'static str> {
    // Whether it can ask is read from each connection's capabilities, not from the table's
    // `dialog`; where it cannot, an agent host's model's word is not the human's.
    client(name)
        .filter(|(_, c)| !can_ask && !c.host_word_passes)
        .map(|(h, _)| h.name)
}

/// The host's own slash commands that a server prompt must not be named after
/// ([`crate::hosts::Client::commands`]); none for a client the table does not name.
pub fn own_commands(name: Option<&str>) -> &'static [&'static str] {
    client(name).map_or(&[], |(_, c)| c.commands)
}

/// Who cannot ask, as the policy's refusal names a host that cannot ask its human.
pub fn host_cannot_ask(host: &str) -> String {
    format!("{host}, which cannot ask the human in a dialog")
}

/// Who cannot ask, as the policy's refusal names a connection opened from `host`'s shell
/// tool (`why`: the mark and the process that carries it): whatever the client declares,
/// its model is behind it.
pub fn shell_cannot_ask(host: &str, why: &str) -> String {
    format!("a connection opened from {host}'s shell tool ({why}), whose word is the model's, not the human's")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_reads_the_reply_once_as_text() {
        let sends = |name| client(Some(name)).map(|(_, c)| sends_json(c));
        assert_eq!(sends("claude-code"), Some(false));
        assert_eq!(sends("codex-mcp-client"), Some(false));
        assert_eq!(sends("copilot-cli"), Some(false));
        assert_eq!(sends("opencode"), Some(true));
        assert_eq!(sends("inspector-cli"), Some(true));
        assert_eq!(sends("gemini-cli-mcp-client"), Some(true));
        assert_eq!(client(Some("Codex-mcp-client")), None);
        assert_eq!(client(None), None);
    }

    #[test]
    fn the_gate_waits_for_the_human_on_hosts_that_cannot_ask() {
        assert_eq!(
            waits_for_human(Some("gemini-cli-mcp-client"), false),
            Some("Gemini CLI")
        );
        assert_eq!(waits_for_human(Some("opencode"), false), Some("opencode"));
        // A host with a dialog whose version or mode stops declaring it does not fall back
        // to its model's word.
        for (client, host) in [
            ("claude-code", "Claude Code"),
            ("codex-mcp-client", "Codex CLI"),
            ("copilot-cli", "Copilot CLI"),
        ] {
            assert_eq!(waits_for_human(Some(client), false), Some(host));
            assert_eq!(waits_for_human(Some(client), true), None);
        }
        for other in [Some("inspector-cli"), Some("x"), None] {
            assert_eq!(waits_for_human(other, false), None, "{other:?}");
        }
        // A host that declares the dialog is asked there.
        assert_eq!(waits_for_human(Some("opencode"), true), None);
    }
}
