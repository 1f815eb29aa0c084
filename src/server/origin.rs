//! Who is behind a client's dialog (SPEC §13.3, issue 25): over stdio the chain of
//! processes this server runs under, over loopback HTTP the process holding the other end
//! of the connection and its chain, and the name the client declared. Claude Code spawns
//! the servers it connects to itself, and connects over HTTP itself; a connection the
//! model opens from its Bash tool has that tool's shell (a process with `CLAUDECODE` in
//! its environment) between it and Claude Code. Such a connection is the assistant's: its
//! dialog answers are not the human's. The variable in this server's own environment
//! tells nothing (Claude Code sets it for the servers it spawns too); the chain is read
//! from the connecting side up to Claude Code, which ends it.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use crate::files::procs::{self, Proc, ASSISTANT_VAR};
use crate::workflow::Provenance;

/// Where the call in `ctx` comes from. `under_assistant` is also set when the processes
/// could not be read: a channel that cannot be told apart from the assistant's does not
/// count as the human's.
pub fn of(ctx: &RequestContext<RoleServer>) -> Provenance {
    let client = ctx.client_info().map(|i| {
        let name = crate::code::clip(&i.name, 80);
        let version = crate::code::clip(&i.version, 40);
        format!("{name} {version}")
    });
    let (channel, mut chain) = match ctx.extensions.get::<Parts>() {
        None => ("stdio", procs::own_parent().map(procs::chain)),
        Some(parts) => {
            let peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0);
            ("http", peer.and_then(procs::socket_owner).map(procs::chain))
        }
    };
    let chain = chain.take().unwrap_or_default();
    let assistant = match chain.first() {
        None if channel == "http" => {
            Some("the process at the connection's other end could not be found".to_string())
        }
        None => Some("this server's parent processes could not be read".to_string()),
        Some(_) => assistant_in(&chain),
    };
    let mut labels = chain.into_iter().map(|p| p.label);
    let process = (channel == "http").then(|| labels.next()).flatten();
    Provenance {
        terminal: None,
        parents: labels.collect(),
        under_assistant: assistant.is_some(),
        channel: Some(channel.to_string()),
        process,
        client,
        assistant,
    }
}

/// The first process below Claude Code with `CLAUDECODE` in its environment: the shell of
/// its Bash tool, or a program started from it.
fn assistant_in(chain: &[Proc]) -> Option<String> {
    chain
        .iter()
        .take_while(|p| !p.claude)
        .find(|p| p.marked)
        .map(|p| format!("{ASSISTANT_VAR} in the environment of {}", p.label))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(label: &str, claude: bool, marked: bool) -> Proc {
        Proc {
            label: label.into(),
            claude,
            marked,
        }
    }

    #[test]
    fn the_hosts_own_child_is_not_the_assistants_but_one_under_its_shell_is() {
        let direct = [
            p("claude (pid 2)", true, false),
            p("zsh (pid 1)", false, false),
        ];
        assert_eq!(assistant_in(&direct), None);
        let shell = [
            p("bash (pid 3)", false, true),
            p("claude (pid 2)", true, false),
        ];
        assert_eq!(
            assistant_in(&shell).as_deref(),
            Some("CLAUDECODE in the environment of bash (pid 3)")
        );
        // Above Claude Code nothing counts: it may itself run under another's shell.
        let above = [
            p("claude (pid 2)", true, false),
            p("sh (pid 1)", false, true),
        ];
        assert_eq!(assistant_in(&above), None);
    }
}
