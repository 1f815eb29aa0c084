//! `bmad-mcp serve --http`: the same server over streamable HTTP at `/mcp`, for several
//! IDEs sharing one server. rmcp's `StreamableHttpService` speaks both protocol eras
//! (sessions through `LocalSessionManager` for clients up to 2025-11-25, stateless
//! requests for 2026-07-28), and checks before it reads a body: `Host` against the bound
//! names (DNS rebinding), `Origin` against the allow-list (by default only the server's
//! own origin, which no page has since the server serves none: any browser page is
//! refused), then the body's size as it reads it. axum mounts it behind what no crate
//! does: the bearer token, checked first in constant time ([`guard`]); a session bound to
//! the process that opened it ([`bind`]); a body that is read only when rmcp reads it,
//! within a time limit and a shared byte budget ([`arrival`], which says why those are not
//! tower's layers). [`accept`] bounds the connections: a time limit on headers, and a cap
//! on how many are open.
//!
//! Shutdown (SIGTERM, SIGINT): no new connection is accepted, the open event streams end,
//! the requests being answered finish and their answers are sent (hyper-util's graceful
//! shutdown), and the process exits 0. A call whose client went away still completes its
//! writes: the runtime waits for its blocking thread. Every write is atomic either way.

mod accept;
mod arrival;
mod bind;
pub mod guard;
pub mod options;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{from_fn, from_fn_with_state, Next};
use axum::response::Response;
use axum::Router;
use futures_util::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;
use crate::settings::Settings;
use crate::BmadServer;
pub use options::{Plan, ServeArgs};

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// How long shutdown waits for the requests being answered before it closes them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What is served beside `/mcp`: routes with their own guard (the human's dashboard), and
/// a value kept until the server stops.
pub type Beside = (Router, Box<dyn std::any::Any + Send>);

/// The server's socket, bound: its address and roots are what the routes served beside
/// `/mcp` are made for (by the caller, between [`listen`] and [`serve`]).
pub struct Listening {
    listener: tokio::net::TcpListener,
    plan: Plan,
    pub addr: SocketAddr,
    /// Cancelled when the server starts to stop: its event streams end then.
    pub stop: CancellationToken,
}

impl Listening {
    /// The directories calls may name.
    pub fn roots(&self) -> &crate::files::Roots {
        &self.plan.roots
    }
}

/// The plan `args` make for `addr`, or the exit that refuses them (said on stderr).
pub fn plan(args: &ServeArgs, addr: &str) -> Result<Plan, Exit> {
    args.plan(addr).map_err(|message| {
        eprintln!("bmad-mcp: {message}");
        Exit::Refused
    })
}

/// Binds the plan's address, and says where MCP is served (the first line on stderr).
pub async fn listen(plan: Plan) -> std::io::Result<Listening> {
    let listener = tokio::net::TcpListener::bind(plan.addr)
        .await
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {}: {e}", plan.addr))
        })?;
    let addr = listener.local_addr()?;
    eprintln!(
        "bmad-mcp {}: serving MCP over streamable HTTP at http://{addr}{ENDPOINT} (roots: {}; {})",
        env!("CARGO_PKG_VERSION"),
        plan.roots.describe(),
        if plan.token.is_some() {
            "bearer token required"
        } else {
            "no token"
        }
    );
    Ok(Listening {
        addr,
        listener,
        plan,
        stop: CancellationToken::new(),
    })
}

fn runtime(builder: &mut tokio::runtime::Builder) -> Option<tokio::runtime::Runtime> {
    match builder.enable_all().build() {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("bmad-mcp: cannot start the async runtime: {e}");
            None
        }
    }
}

/// Runs a server to its end on the runtime `builder` makes: success, or failure once
/// stderr says why.
pub fn run_to_end(
    builder: &mut tokio::runtime::Builder,
    server: impl std::future::Future<Output = std::io::Result<()>>,
) -> Exit {
    let Some(runtime) = runtime(builder) else {
        return Exit::Failed;
    };
    match runtime.block_on(server) {
        Ok(()) => Exit::Done,
        Err(e) => {
            eprintln!("bmad-mcp: {e}");
            Exit::Failed
        }
    }
}

/// Serves MCP on `at`, with `beside` (routes and a value kept until the server stops)
/// before it, until SIGTERM or SIGINT.
pub async fn serve(
    at: Listening,
    settings: &Settings,
    beside: Option<Beside>,
) -> std::io::Result<()> {
    let Listening {
        listener,
        plan,
        addr: bound,
        stop,
    } = at;
    let sessions_end = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options::allowed_hosts(bound, &plan.allow_hosts))
        .with_allowed_origins(options::allowed_origins(bound, &plan.allow_origins))
        .enforce_origin_validation()
        .with_max_request_body_bytes(settings.max_line_bytes)
        .with_cancellation_token(sessions_end.clone());
    let server = BmadServer::within(plan.roots.clone(), settings);
    let stopping = server.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    let arrival = arrival::Arrival::new(
        settings.http.request_time,
        settings.max_line_bytes,
        settings.http.bodies_bytes,
    );
    // The layer added last runs first: the token, then the rest, each before rmcp.
    let mut app = Router::new()
        .route_service(ENDPOINT, service)
        .layer(from_fn_with_state(
            bind::Owners::of(sessions),
            bind::bind_sessions,
        ))
        .layer(from_fn(wire::answer_bounded))
        .layer(from_fn_with_state(arrival, arrival::arrive))
        .layer(from_fn_with_state(stop.clone(), end_streams));
    if let Some(token) = &plan.token {
        app = app.layer(from_fn_with_state(
            guard::Token::new(token),
            guard::require_token,
        ));
    }
    let mut kept = None;
    if let Some((routes, guard)) = beside {
        // Its routes first; every other path is the MCP app's, with all of its checks.
        app = routes.fallback_service(app);
        kept = Some(guard);
    }
    let connections = accept::serve(listener, app, settings.http, stop_signal()).await;
    tracing::info!(
        connections = connections.count(),
        "stopping: finishing the requests being answered"
    );
    // A call waiting on the human's dialog answers now: still pending.
    stopping.stop();
    stop.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, connections.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still open after {SHUTDOWN_GRACE:?}; closing them");
    }
    sessions_end.cancel();
    drop(kept);
    tracing::info!("stopped");
    Ok(())
}

/// A GET's answer, an event stream, ends once `stop` is cancelled: it never ends by itself,
/// and its connection would keep shutdown waiting. A POST's answer (an event stream too in
/// the 2025 eras) ends with the call's answer, which shutdown waits for.
async fn end_streams(
    State(stop): State<CancellationToken>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET {
        return next.run(request).await;
    }
    let stopped = stop.cancelled_owned();
    next.run(request)
        .await
        .map(|body| Body::from_stream(body.into_data_stream().take_until(stopped)))
}

/// SIGTERM or SIGINT (Ctrl-C); the dashboard waits for it too.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; Ctrl-C still stops the server");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
