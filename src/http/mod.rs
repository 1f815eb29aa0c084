//! `bmad-mcp serve --http`: the same server over streamable HTTP at `/mcp`, for several
//! IDEs sharing one server. rmcp's `StreamableHttpService` speaks both protocol eras
//! (sessions through `LocalSessionManager` for clients up to 2025-11-25, stateless
//! requests for 2026-07-28) and checks `Host` against the bound names (DNS rebinding),
//! `Origin` against the allow-list (by default only the server's own origin, which no
//! page has since the server serves none: any browser page is refused) and
//! the body size; axum mounts it, behind the bearer token check, the same `Host` and
//! `Origin` checks made before any body is read ([`guard`]), and a time limit and a
//! shared byte budget on each request's arrival (not on its answer, which may wait for the
//! human's dialog or the project's checks). [`accept`] bounds the connections: a time
//! limit on headers, and a cap on how many are open.
//!
//! Shutdown (SIGTERM, SIGINT): no new connection is accepted, the requests being
//! answered finish and their answers are sent, then the open event streams are closed
//! and the process exits 0. A call whose client went away still completes its writes:
//! the runtime waits for its blocking thread. Every write is atomic either way.

mod accept;
mod bind;
pub mod guard;
pub mod hosts;
pub mod options;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

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
    /// Cancelled when the server stops.
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

pub fn runtime(builder: &mut tokio::runtime::Builder) -> Option<tokio::runtime::Runtime> {
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
        stop: sessions_end,
    } = at;
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
    let in_flight = TaskTracker::new();
    let app = Router::new()
        .route_service(ENDPOINT, service)
        .layer(axum::middleware::from_fn_with_state(
            bind::Owners::of(sessions),
            bind::bind_sessions,
        ))
        .layer(axum::middleware::from_fn_with_state(
            in_flight.clone(),
            guard::track,
        ))
        .layer(axum::middleware::from_fn(wire::answer_bounded));
    let mut app = guarded(app, &plan, settings, bound);
    let mut kept = None;
    if let Some((routes, guard)) = beside {
        // Its routes first; every other path is the MCP app's, with all of its checks.
        app = routes.fallback_service(app);
        kept = Some(guard);
    }
    let shutdown = async move {
        stop_signal().await;
        tracing::info!(
            in_flight = in_flight.len(),
            "stopping: finishing the requests being answered"
        );
        // A call waiting on the human's dialog answers now: still pending.
        stopping.stop();
        in_flight.close();
        // Open event streams never end by themselves: they are closed once the answers
        // are out, so that the server's own wait for its connections can finish.
        tokio::spawn(async move {
            if tokio::time::timeout(SHUTDOWN_GRACE, in_flight.wait())
                .await
                .is_err()
            {
                tracing::warn!("requests still open after {SHUTDOWN_GRACE:?}; closing them");
            }
            sessions_end.cancel();
        });
    };
    accept::serve(listener, app, settings.http, shutdown).await;
    drop(kept);
    tracing::info!("stopped");
    Ok(())
}

/// `app` behind the checks made before a body is read: the token, then `Host` and
/// `Origin`, then the time and the shared budget a body has to arrive in.
fn guarded(mut app: Router, plan: &Plan, settings: &Settings, bound: SocketAddr) -> Router {
    // The layer added last runs first: the token, then `Host` and `Origin`, and only then
    // is a body read, so nothing is spent on a request that will be refused.
    app = app
        .layer(axum::middleware::from_fn_with_state(
            guard::Arrival::new(
                settings.http.request_time,
                settings.max_line_bytes,
                settings.http.bodies_bytes,
            ),
            guard::arrive_in_time,
        ))
        .layer(axum::middleware::from_fn_with_state(
            guard::Allowed {
                hosts: options::allowed_hosts(bound, &plan.allow_hosts).into(),
                origins: options::allowed_origins(bound, &plan.allow_origins).into(),
            },
            guard::check_host_and_origin,
        ));
    if let Some(token) = &plan.token {
        app = app.layer(axum::middleware::from_fn_with_state(
            guard::Token::new(token),
            guard::require_token,
        ));
    }
    app
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
