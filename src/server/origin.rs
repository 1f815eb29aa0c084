//! Who is behind a client's dialog (SPEC §13.3): over stdio the chain of
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

use crate::assistant::{self, procs, Host};
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
    let (channel, chain) = match ctx.extensions.get::<Parts>() {
        None => ("stdio", procs::own_parent().map(procs::chain)),
        Some(parts) => {
            let peer = parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0);
            ("http", peer.and_then(procs::socket_owner).map(procs::chain))
        }
    };
    let chain = chain.unwrap_or_default();
    let assistant = match chain.first() {
        None if channel == "http" => {
            Some("the process at the connection's other end could not be found".to_string())
        }
        None => Some("this server's parent processes could not be read".to_string()),
        Some(_) => assistant::behind(&chain, Host::AsksTheHuman),
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
