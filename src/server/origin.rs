//! Who is behind a gate call and the client's dialog (docs/spec.md §13.3): over stdio the chain of
//! processes this server runs under, over loopback HTTP the process holding the other end
//! of the connection and its chain, and the name the client declared. Claude Code spawns
//! the servers it connects to itself, and connects over HTTP itself; a connection the
//! model opens from its Bash tool has that tool's shell (a process with `CLAUDECODE` in
//! its environment) between it and Claude Code. Such a connection is the assistant's: its
//! dialog answers are not the human's. The variable in this server's own environment
//! tells nothing (Claude Code sets it for the servers it spawns too); the chain is read
//! from the connecting side up to Claude Code, which ends it. Every other host likewise:
//! a connection with a host's shell mark on its chain is that host's model's, opened from
//! its shell tool, and under `gates = "auto"` its word on a gate waits for the human's
//! channels, as a host that cannot ask.

use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::per_host;
use crate::process_origin::{self, procs, Found, HostRole};
use crate::workflow::Provenance;

/// What becomes of a gate decision the host asserts.
pub enum Route {
    /// It is put to the human in the client's dialog; `origin` is kept with the answer,
    /// and the chain's first process (the host's own, where it asks) beside it.
    Dialog(Provenance, Option<procs::Proc>),
    /// It stays the host's word.
    Word {
        /// Why, under `gates = "auto"`, the host's word waits for the human's channels: the
        /// host cannot ask (`Gemini CLI, which cannot ask …`), or the connection was opened
        /// from a host's shell tool.
        cannot_ask: Option<String>,
        /// Where it comes from, kept with the decision whatever the client declared: the
        /// host's word is recorded with the client's name and the processes behind it, as
        /// the human's is.
        provenance: Option<Provenance>,
        /// Why the client's dialog stayed shut, where it has one.
        dialog_shut: Option<String>,
    },
}

/// What becomes of the gate decision the host asserts in `ctx`'s call. `can_ask`: the
/// client declared the dialog; `host_cannot_ask`: the host, when it is a known one that
/// cannot ask and whose word waits for the human by default ([`per_host::waits_for_human`]).
/// The origin is read whatever the client declared: a name and capabilities are the
/// client's own word. Only a mark found on the chain makes it a shell's connection (a chain
/// that cannot be read, as elsewhere than Linux, changes nothing here).
pub fn route(
    ctx: &RequestContext<RoleServer>,
    can_ask: bool,
    host_cannot_ask: Option<&'static str>,
) -> Route {
    let (origin, found, first) = read(ctx);
    if can_ask && !origin.under_assistant {
        return Route::Dialog(origin, first);
    }
    let shell = found
        .as_ref()
        .and_then(|f| f.shell_of().map(|host| (host, f)));
    let cannot_ask = match shell {
        Some((host, f)) => Some(per_host::shell_cannot_ask(host, &f.why())),
        None => host_cannot_ask.map(per_host::host_cannot_ask),
    };
    let dialog_shut = can_ask
        .then(|| origin.assistant.clone())
        .flatten()
        .map(|why| format!("this connection runs under an assistant's shell ({why})"));
    Route::Word {
        cannot_ask,
        provenance: Some(origin),
        dialog_shut,
    }
}

/// Where the call in `ctx` comes from. `under_assistant` is also set when the processes
/// could not be read: a channel that cannot be told apart from the assistant's does not
/// count as the human's.
/// What made it an assistant's is returned beside, when a process of the chain did, and
/// the chain's first process.
fn read(ctx: &RequestContext<RoleServer>) -> (Provenance, Option<Found>, Option<procs::Proc>) {
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
    let found = process_origin::found(&chain, HostRole::AsksTheHuman);
    let first = chain.first().cloned();
    let assistant = match chain.first() {
        None if channel == "http" => {
            Some("the process at the connection's other end could not be found".to_string())
        }
        None => Some("this server's parent processes could not be read".to_string()),
        Some(_) => found.as_ref().map(Found::why),
    };
    let mut labels = chain.into_iter().map(|p| p.label);
    let process = (channel == "http").then(|| labels.next()).flatten();
    let provenance = Provenance {
        terminal: None,
        parents: labels.collect(),
        under_assistant: assistant.is_some(),
        channel: Some(channel.to_string()),
        process,
        client,
        assistant,
        hooks: Vec::new(),
    };
    (provenance, found, first)
}
