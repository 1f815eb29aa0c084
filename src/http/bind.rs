//! A session belongs to the process that opened it. rmcp's `LocalSessionManager` routes every POST
//! by its `Mcp-Session-Id` alone, and matches a client's response to the server's request by the
//! request's id, which it numbers from 0: anyone holding a session's id could answer that client's
//! pending `elicitation/create` (the human's dialog) for it. So the process at the other end of the
//! connection that opened the session (found from its socket,
//! [`process_origin::procs`](crate::process_origin::procs)) is kept, and a request naming the
//! session from a connection another process holds is refused with 403. The owner's own new
//! connections (an answer arrives on one) pass.
//!
//! Every doubt is a refusal: a session whose opener cannot be found is closed at once
//! (403), a request whose peer cannot be found is refused (403), and a session this server
//! keeps no owner for (unknown, or forgotten once [`MAX_SESSIONS`] newer ones were opened,
//! which closes it) is answered 404, so its client initializes a new one. Elsewhere than
//! Linux no process can be found from a socket: sessions are not bound there.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::SessionManager;

use crate::process_origin::procs;

/// The header naming a session.
const SESSION: &str = "mcp-session-id";
/// How many sessions' owners are kept; beyond, the oldest session is closed.
const MAX_SESSIONS: usize = 4096;

/// How the process behind a connection is found: who holds the socket whose local end is
/// the peer's address, and whether a given process does (`None`: it cannot be told).
#[derive(Clone, Copy)]
struct Finder {
    owner_of: fn(SocketAddr) -> Option<u32>,
    holds: fn(u32, SocketAddr) -> Option<bool>,
}

impl Finder {
    /// `/proc`'s, where there is one to read.
    fn here() -> Option<Finder> {
        cfg!(target_os = "linux").then_some(Finder {
            owner_of: procs::socket_owner,
            holds: procs::holds,
        })
    }
}

/// The owner of each session this server opened, and rmcp's sessions, to close one whose
/// owner is not kept.
#[derive(Clone)]
pub struct Owners {
    known: Arc<Mutex<SessionOwners>>,
    sessions: Arc<LocalSessionManager>,
    find: Option<Finder>,
    cap: usize,
}

#[derive(Default)]
struct SessionOwners {
    owner: HashMap<String, u32>,
    order: VecDeque<String>,
}

impl Owners {
    /// The owners of the sessions `sessions` opens.
    pub fn of(sessions: Arc<LocalSessionManager>) -> Owners {
        Owners {
            known: Arc::default(),
            sessions,
            find: Finder::here(),
            cap: MAX_SESSIONS,
        }
    }

    fn get(&self, session: &str) -> Option<u32> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known.owner.get(session).copied()
    }

    /// Keeps `pid` as the owner of `session`; the session forgotten to make room, if any.
    fn keep(&self, session: String, pid: u32) -> Option<String> {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let forgotten = if known.order.len() >= self.cap {
            let old = known.order.pop_front();
            if let Some(old) = &old {
                known.owner.remove(old);
            }
            old
        } else {
            None
        };
        known.owner.insert(session.clone(), pid);
        known.order.push_back(session);
        forgotten
    }

    /// Ends rmcp's session `id`: its client, told 404 next time, opens a new one.
    async fn close(&self, id: &str) {
        if let Err(e) = self.sessions.close_session(&Arc::from(id)).await {
            tracing::debug!(error = %e, "closing a session this server keeps no owner for");
        }
    }
}

/// The value of header `name`, when it is text.
fn header(headers: &axum::http::HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Refuses a request naming a session from a connection its owner does not hold, or that
/// names a session whose owner is not kept; keeps the owner of a session a response opens,
/// and closes the session when its owner cannot be found.
pub async fn bind_sessions(
    State(owners): State<Owners>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let Some(find) = owners.find else {
        return next.run(request).await;
    };
    if let Some(session) = header(request.headers(), SESSION) {
        return match admit(&owners, find, &session, peer).await {
            Ok(()) => next.run(request).await,
            Err(refusal) => refusal,
        };
    }
    let response = next.run(request).await;
    let Some(session) = header(response.headers(), SESSION) else {
        return response;
    };
    let owner = tokio::task::spawn_blocking(move || (find.owner_of)(peer))
        .await
        .ok()
        .flatten();
    let Some(pid) = owner else {
        tracing::warn!("closed a session whose opener could not be found");
        owners.close(&session).await;
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: the process at the other end of this connection could not be found, so the session it opened could be used by any process; it was closed\n",
        )
            .into_response();
    };
    if let Some(forgotten) = owners.keep(session, pid) {
        tracing::info!("more than {} sessions: the oldest was closed", owners.cap);
        owners.close(&forgotten).await;
    }
    response
}

/// Whether a request naming `session` from `peer` may pass: its owner is kept and holds
/// the connection.
async fn admit(
    owners: &Owners,
    find: Finder,
    session: &str,
    peer: SocketAddr,
) -> Result<(), Response> {
    let Some(pid) = owners.get(session) else {
        return Err((
            StatusCode::NOT_FOUND,
            "Not Found: this server keeps no such session (unknown, ended, or closed for newer ones); initialize a new one\n",
        )
            .into_response());
    };
    let held = tokio::task::spawn_blocking(move || (find.holds)(pid, peer))
        .await
        .ok()
        .flatten();
    match held {
        Some(true) => Ok(()),
        Some(false) => {
            tracing::warn!(
                owner = pid,
                "refused a request naming a session another process opened"
            );
            Err((
                StatusCode::FORBIDDEN,
                "Forbidden: this MCP session belongs to another process; open a session of your own\n",
            )
                .into_response())
        }
        None => {
            tracing::warn!(
                owner = pid,
                "refused a request naming a session: the process behind the connection could not be found"
            );
            Err((
                StatusCode::FORBIDDEN,
                "Forbidden: the process at the other end of this connection could not be found, so it cannot be told to be the session's owner\n",
            )
                .into_response())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::routing::any;
    use axum::Router;
    use hyper_util::service::TowerToHyperService;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// In these tests a peer's port is the pid of the process holding it; port 1 is a
    /// peer whose process cannot be found (its client closed the socket at once).
    fn owner_of(peer: SocketAddr) -> Option<u32> {
        (peer.port() != 1).then_some(u32::from(peer.port()))
    }

    fn holds(pid: u32, peer: SocketAddr) -> Option<bool> {
        (peer.port() != 1).then_some(u32::from(peer.port()) == pid)
    }

    /// rmcp as these tests need it: a request naming no session opens a new one.
    fn app(cap: usize) -> TowerToHyperService<Router> {
        let next = Arc::new(AtomicU32::new(0));
        let owners = Owners {
            known: Arc::default(),
            sessions: Arc::default(),
            find: Some(Finder { owner_of, holds }),
            cap,
        };
        let mcp = any(move |request: Request| async move {
            match request.headers().get(SESSION) {
                Some(_) => (StatusCode::OK, "in the session").into_response(),
                None => {
                    let id = format!("s{}", next.fetch_add(1, Ordering::Relaxed));
                    ([(SESSION, id)], "opened").into_response()
                }
            }
        });
        TowerToHyperService::new(
            Router::new()
                .route("/mcp", mcp)
                .layer(axum::middleware::from_fn_with_state(owners, bind_sessions)),
        )
    }

    /// The status of a POST from the process `pid` (a peer port), naming `session`, and
    /// the session the answer opens.
    async fn post(
        app: &TowerToHyperService<Router>,
        pid: u16,
        session: Option<&str>,
    ) -> (u16, Option<String>) {
        let mut request = axum::http::Request::post("/mcp");
        if let Some(session) = session {
            request = request.header(SESSION, session);
        }
        let mut request = request.body(Body::empty()).unwrap();
        let peer = SocketAddr::from(([127, 0, 0, 1], pid));
        request.extensions_mut().insert(ConnectInfo(peer));
        let response = hyper::service::Service::call(app, request).await.unwrap();
        (
            response.status().as_u16(),
            header(response.headers(), SESSION),
        )
    }

    #[tokio::test]
    async fn a_session_is_its_openers_and_every_doubt_is_refused() {
        let app = app(16);
        let (status, opened) = post(&app, 10, None).await;
        let sid = opened.expect("a session is opened");
        assert_eq!(status, 200);
        assert_eq!(post(&app, 10, Some(&sid)).await.0, 200, "its opener");
        assert_eq!(post(&app, 11, Some(&sid)).await.0, 403, "another process");
        assert_eq!(
            post(&app, 1, Some(&sid)).await.0,
            403,
            "a process not found"
        );
        assert_eq!(post(&app, 10, Some("s-unknown")).await.0, 404, "unknown");
    }

    #[tokio::test]
    async fn a_session_whose_opener_is_not_found_is_closed_at_once() {
        let app = app(16);
        let (status, opened) = post(&app, 1, None).await;
        assert_eq!(status, 403, "refused, not opened");
        assert_eq!(opened, None, "no session id is handed out");
        // Nor is the session opened behind the refusal (the first, s0) usable by anyone.
        assert_eq!(post(&app, 10, Some("s0")).await.0, 404);
        assert_eq!(post(&app, 1, Some("s0")).await.0, 404);
    }

    #[tokio::test]
    async fn past_the_cap_the_oldest_session_is_closed_and_answered_404() {
        let app = app(2);
        let mut opened = Vec::new();
        for _ in 0..3 {
            opened.push(post(&app, 10, None).await.1.unwrap());
        }
        assert_eq!(post(&app, 10, Some(&opened[0])).await.0, 404, "evicted");
        assert_eq!(post(&app, 11, Some(&opened[0])).await.0, 404, "by anyone");
        assert_eq!(post(&app, 10, Some(&opened[1])).await.0, 200);
        assert_eq!(post(&app, 10, Some(&opened[2])).await.0, 200);
        assert_eq!(post(&app, 11, Some(&opened[2])).await.0, 403);
    }
}
