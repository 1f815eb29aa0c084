//! What differs between the agent hosts this server was tried with, keyed by the
//! `clientInfo.name` each declares: what the host shows its model of a tool result, whether
//! it can ask its human in a dialog, and who passes a gate there. The reply is shaped from
//! this one table ([`super::result`], [`super::BmadServer`]'s `call_tool`), and
//! `docs/hosts.md` is checked against it by a test. A client not in the table keeps the
//! default: the text and the JSON, and the host's word where it cannot ask (unless the
//! connection comes from a host's shell tool, [`super::origin`]).

use crate::assistant::marks::{HostMarks, HOSTS};

/// What a host shows its model of a tool result that has both a text and
/// `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shows {
    /// The text alone.
    Text,
    /// The `structuredContent` as JSON, in place of the text.
    JsonInstead,
    /// The text, then the `structuredContent` as JSON.
    TextThenJson,
    /// The text of a result; of an error result, the whole result as one escaped JSON
    /// string (the text and `structuredContent` both).
    TextErrorsAsJson,
    /// No model: both are printed for the person at the command line, and a script
    /// there reads the JSON.
    Printed,
}

/// Whether a host can put a question to its human (MCP elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// It declares none.
    None,
    /// It declares it and shows the form.
    Shown,
    /// It declares it; its interactive mode shows the form, its non-interactive mode
    /// (`codex exec`, `copilot -p`) declines at once, with nobody asked.
    DeclinedUnattended,
}

/// One host, as this server meets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The host's name as the user knows it (as [`HOSTS`] names it, where it has a shell).
    pub host: &'static str,
    /// The `clientInfo.name`s it declares.
    pub clients: &'static [&'static str],
    /// What it shows its model of a result with both a text and `structuredContent`.
    pub shows: Shows,
    pub dialog: Dialog,
    /// Where it cannot ask (it declares no dialog, or this version or mode stopped
    /// declaring it), whether its model's word passes a gate under the default
    /// `gates = "auto"`. False for every agent host: its model's `confirm` is not the
    /// human's, and the gate waits for the human's own channels (the terminal, the
    /// dashboard). True only where no model is behind the client.
    pub host_word_passes: bool,
    /// The protocol version it asks for in `initialize` (or `server/discover`).
    pub era: &'static str,
    /// How the server is registered with it.
    pub register: &'static str,
    /// What it leaves out or does differently that a user meets.
    pub limits: &'static str,
}

/// Every host known.
pub const PROFILES: [Profile; 6] = [
    Profile {
        host: "Claude Code",
        clients: &["claude-code"],
        shows: Shows::JsonInstead,
        dialog: Dialog::Shown,
        host_word_passes: false,
        era: "2026-07-28 (`server/discover`)",
        register: "`claude mcp add bmad -- bmad-mcp`, or the plugin (docs/plugin.md)",
        limits: "`claude -p` closes every dialog at once: the plugin's hook asks before each gate call",
    },
    Profile {
        host: "Codex CLI",
        clients: &["codex-mcp-client"],
        shows: Shows::JsonInstead,
        dialog: Dialog::DeclinedUnattended,
        host_word_passes: false,
        era: "2025-06-18",
        register: "`codex mcp add bmad -- bmad-mcp`, or `[mcp_servers.bmad]` in `$CODEX_HOME/config.toml`",
        limits: "passes the server only a short list of variables: `BMAD_*` settings go in `[mcp_servers.bmad.env]`; `codex mcp list` does not connect",
    },
    Profile {
        host: "Gemini CLI",
        clients: &["gemini-cli-mcp-client", "mcp-test-client"],
        shows: Shows::TextErrorsAsJson,
        dialog: Dialog::None,
        host_word_passes: false,
        era: "2025-06-18",
        register: "`gemini mcp add -s user --trust bmad bmad-mcp`, or `mcpServers.bmad` in `~/.gemini/settings.json` (project: `.gemini/settings.json`)",
        limits: "drops variables whose names look like secrets (`KEY`, `TOKEN`, …) from the server's environment; wraps results in `<untrusted_context>`",
    },
    Profile {
        host: "opencode",
        clients: &["opencode"],
        shows: Shows::Text,
        dialog: Dialog::None,
        host_word_passes: false,
        era: "2025-11-25",
        register: "`opencode mcp add`, or `\"mcp\": {\"bmad\": {\"type\": \"local\", \"command\": [\"bmad-mcp\"]}}` in `opencode.json`",
        limits: "sets `AGENT=1` in the server's and the shell's environment",
    },
    Profile {
        host: "Copilot CLI",
        clients: &["copilot-cli"],
        shows: Shows::TextThenJson,
        dialog: Dialog::DeclinedUnattended,
        host_word_passes: false,
        era: "2026-07-28 (`server/discover`), else 2025-11-25",
        register: "`copilot mcp add bmad -- bmad-mcp`, or `~/.copilot/mcp-config.json` (also a workspace `.mcp.json`)",
        limits: "the server's `instructions` do not reach the model; `copilot mcp list` does not connect",
    },
    Profile {
        host: "MCP Inspector (CLI)",
        clients: &["inspector-cli"],
        shows: Shows::Printed,
        dialog: Dialog::None,
        host_word_passes: true,
        era: "2025-11-25",
        register: "`mcp-inspector --cli bmad-mcp --method tools/call …` (no registration)",
        limits: "no model: the person at the command line makes each call, and a `confirm` there is theirs as the host's",
    },
];

impl Profile {
    /// The profile of the client that declared `name`, if it is a known host.
    pub fn of(name: Option<&str>) -> Option<&'static Profile> {
        let name = name?;
        PROFILES.iter().find(|p| p.clients.contains(&name))
    }

    /// Whether a result (an error result if `is_error`) for this host carries
    /// `structuredContent` beside the text: not where the host would show the model the
    /// JSON in place of the text, or beside it (the model would read the reply twice).
    pub fn sends_json(&self, is_error: bool) -> bool {
        match self.shows {
            Shows::Text | Shows::Printed => true,
            Shows::TextErrorsAsJson => !is_error,
            Shows::JsonInstead | Shows::TextThenJson => false,
        }
    }

    /// The host's shell marks, where it has a shell tool.
    pub fn marks(&self) -> Option<&'static HostMarks> {
        HOSTS.iter().find(|m| m.host == self.host)
    }

    /// Whether the model's word on a gate waits for the human's channels here where the
    /// client cannot ask, under the default policy. Whether it can is read from each
    /// connection's capabilities, not from [`Self::dialog`].
    pub fn gate_waits_for_human(&self) -> bool {
        !self.host_word_passes
    }
}

/// The host of a client that cannot ask and whose word does not pass a gate under the
/// default policy; `None` for any other client (unknown ones included).
pub fn waits_for_human(client: Option<&str>, can_ask: bool) -> Option<&'static str> {
    Profile::of(client)
        .filter(|p| !can_ask && p.gate_waits_for_human())
        .map(|p| p.host)
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
        let sends = |name, error| Profile::of(Some(name)).map(|p| p.sends_json(error));
        for error in [false, true] {
            assert_eq!(sends("claude-code", error), Some(false));
            assert_eq!(sends("codex-mcp-client", error), Some(false));
            assert_eq!(sends("copilot-cli", error), Some(false));
            assert_eq!(sends("opencode", error), Some(true));
            assert_eq!(sends("inspector-cli", error), Some(true));
        }
        // Gemini CLI shows an error result whole, as JSON: the text alone then.
        assert_eq!(sends("gemini-cli-mcp-client", false), Some(true));
        assert_eq!(sends("gemini-cli-mcp-client", true), Some(false));
        assert_eq!(Profile::of(Some("Codex-mcp-client")), None);
        assert_eq!(Profile::of(None), None);
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

    #[test]
    fn every_agent_host_has_its_shell_marks() {
        for p in PROFILES
            .iter()
            .filter(|p| !p.host.starts_with("MCP Inspector"))
        {
            assert!(p.marks().is_some(), "{}", p.host);
        }
    }
}
