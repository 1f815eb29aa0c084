//! A session belongs to the process that opened it. rmcp's `LocalSessionManager` routes
//! every POST by its `Mcp-Session-Id` alone, and matches a client's response to the
//! server's request by the request's id, which it numbers from 0: anyone holding a
//! session's id could answer that client's pending `elicitation/create` (the human's
//! dialog) for it. So the process at the other end of the connection that opened the
//! session (found from its socket, `assistant::procs`) is kept, and a request naming the
//! session from a connection another process holds is refused with 403. The owner's own new
//! connections (an answer arrives on one) pass. Where the owner cannot be found (no
//! `/proc`), the session is not bound.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::assistant::procs;

/// The header naming a session.
const SESSION: &str = "mcp-session-id";
/// How many sessions' owners are kept; the oldest is forgotten beyond (its session is then
/// no longer bound, which a log line says).
const MAX_SESSIONS: usize = 4096;

/// The owner of each session this server opened.
#[derive(Clone, Default)]
pub struct Owners(Arc<Mutex<Known>>);

#[derive(Default)]
struct Known {
    owner: HashMap<String, u32>,
    order: VecDeque<String>,
}

impl Owners {
    fn get(&self, session: &str) -> Option<u32> {
        self.0.lock().ok()?.owner.get(session).copied()
    }

    fn keep(&self, session: String, pid: u32) {
        let Ok(mut known) = self.0.lock() else { return };
        if known.order.len() >= MAX_SESSIONS {
            if let Some(old) = known.order.pop_front() {
                known.owner.remove(&old);
                tracing::info!("more than {MAX_SESSIONS} sessions: the oldest is no longer bound to its process");
            }
        }
        known.owner.insert(session.clone(), pid);
        known.order.push_back(session);
    }
}

/// Refuses a request naming a session from a connection its owner does not hold; keeps the
/// owner of a session a response opens.
pub async fn bind_sessions(
    State(owners): State<Owners>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let named = request
        .headers()
        .get(SESSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(session) = named {
        if let Some(pid) = owners.get(&session) {
            let held = tokio::task::spawn_blocking(move || procs::holds(pid, peer))
                .await
                .ok()
                .flatten();
            if held == Some(false) {
                tracing::warn!(
                    owner = pid,
                    "refused a request naming a session another process opened"
                );
                return (
                    StatusCode::FORBIDDEN,
                    "Forbidden: this MCP session belongs to another process; open a session of your own\n",
                )
                    .into_response();
            }
        }
        return next.run(request).await;
    }
    let response = next.run(request).await;
    let opened = response
        .headers()
        .get(SESSION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(session) = opened {
        let owner = tokio::task::spawn_blocking(move || procs::socket_owner(peer))
            .await
            .ok()
            .flatten();
        match owner {
            Some(pid) => owners.keep(session, pid),
            None => tracing::debug!("the process that opened a session could not be found"),
        }
    }
    response
}
