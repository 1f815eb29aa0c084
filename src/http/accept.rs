//! The accept loop of `serve --http`: hyper's HTTP/1 connections, each with a time limit on
//! its request headers (a client that sends half a header is closed, not waited for) and a
//! bound on its read buffer, and a cap on the connections open at once. At the cap, a new
//! connection closes the oldest one that is not answering a request (idle, or still sending
//! its headers), so connections left half-open cannot lock out a client with a call to make;
//! when every connection is answering one, the new connection is refused (closed at once).
//! The cap stays below the process's file limit, which is raised to its hard limit first:
//! connections that used up every descriptor would leave a new one waiting in the backlog,
//! never accepted, however the oldest are closed. Shutdown is hyper-util's graceful one:
//! every connection finishes the request it is answering, sends its answer, and closes.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::settings::Http;

/// The largest read buffer of a connection, hence of a request's headers (past it: 431).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;

/// The descriptors kept free of connections for the server's own files: its runtime, the
/// project's files and locks, the pipes of the checks it runs, its logs.
const OWN_FILES: u64 = 64;

/// The connections open at once: `configured`, or fewer where the file limit (once raised
/// to the hard limit) leaves less than [`OWN_FILES`] beside them.
fn connection_cap(configured: usize) -> usize {
    let Some(files) = raise_file_limit() else {
        return configured;
    };
    let room = usize::try_from(files.saturating_sub(OWN_FILES).max(1)).unwrap_or(usize::MAX);
    if room < configured {
        tracing::warn!(
            files,
            cap = room,
            "the file limit leaves room for fewer connections than BMAD_HTTP_MAX_CONNECTIONS"
        );
    }
    configured.min(room)
}

/// Raises the soft limit on open files to the hard one (a soft limit of 256, macOS's
/// default, is the default connection cap); the soft limit now, `None` when unlimited.
#[cfg(unix)]
fn raise_file_limit() -> Option<u64> {
    const OPEN_MAX: u64 = 10240;
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return limit.current;
    }
    // macOS refuses a soft limit above its per-process ceiling (OPEN_MAX, 10240), which an
    // unlimited hard limit is: the ceiling is tried then.
    let ceiling = limit.maximum.map_or(OPEN_MAX, |m| m.min(OPEN_MAX));
    for soft in [limit.maximum, Some(ceiling)] {
        if soft.is_some_and(|s| limit.current.is_some_and(|c| s <= c)) {
            break;
        }
        let raised = Rlimit {
            current: soft,
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, raised) {
            Ok(()) => return soft,
            Err(e) => tracing::debug!(error = %e, ?soft, "cannot raise the file limit"),
        }
    }
    limit.current
}

#[cfg(not(unix))]
fn raise_file_limit() -> Option<u64> {
    None
}

struct Open {
    answering: Arc<AtomicUsize>,
    close: CancellationToken,
}

/// The open connections, oldest first.
struct Registry {
    max: usize,
    open: Mutex<VecDeque<Open>>,
}

impl Registry {
    /// Admits a connection, closing the oldest one not answering a request at the cap;
    /// `None` when every open connection is answering one.
    fn admit(&self) -> Option<(Arc<AtomicUsize>, CancellationToken)> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= self.max {
            let idle = open
                .iter()
                .position(|c| c.answering.load(Ordering::SeqCst) == 0)?;
            if let Some(evicted) = open.remove(idle) {
                evicted.close.cancel();
            }
        }
        let answering = Arc::new(AtomicUsize::new(0));
        let close = CancellationToken::new();
        open.push_back(Open {
            answering: answering.clone(),
            close: close.clone(),
        });
        Some((answering, close))
    }

    /// The connection whose count of requests being answered is `answering` closed.
    fn leave(&self, answering: &Arc<AtomicUsize>) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|c| !Arc::ptr_eq(&c.answering, answering));
    }
}

/// Counts a request as being answered until its response body is dropped.
struct Answering(Arc<AtomicUsize>);

impl Answering {
    fn new(count: &Arc<AtomicUsize>) -> Answering {
        count.fetch_add(1, Ordering::SeqCst);
        Answering(count.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `response`, keeping `held` until its body has been sent in full (or dropped).
fn holding<T: Send + 'static>(response: Response, held: T) -> Response {
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &held;
            frame
        }))
    })
}

/// The next connection; when accepting fails (out of file descriptors and the like), it
/// waits rather than spin.
async fn next_connection(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(e) => {
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes; the connections still open, to
/// be shut down gracefully. `limits` caps the connections open and the time their headers
/// take.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Http,
    shutdown: impl std::future::Future<Output = ()>,
) -> GracefulShutdown {
    let max = connection_cap(limits.max_connections.max(1));
    let registry = Arc::new(Registry {
        max,
        open: Mutex::new(VecDeque::new()),
    });
    let connections = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_time)
        .max_buf_size(MAX_HEADER_BYTES);
    let service = TowerToHyperService::new(app);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = next_connection(&listener) => accepted,
            () = &mut shutdown => break,
        };
        let Some((answering, close)) = registry.admit() else {
            tracing::warn!(
                max,
                "refused a connection: every open one is answering a request"
            );
            continue;
        };
        let (service, this) = (service.clone(), answering.clone());
        let handler = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            // Who is behind the connection (server/dialog/origin.rs, http/bind.rs) starts from the
            // peer's address, as axum's own `into_make_service_with_connect_info` gives it.
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(peer));
            let held = Answering::new(&answering);
            let answer = hyper::service::Service::call(&service, request);
            async move {
                let response = answer.await?;
                Ok::<_, std::convert::Infallible>(holding(response, held))
            }
        });
        let connection = connections.watch(builder.serve_connection(TokioIo::new(stream), handler));
        let registry = registry.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = close.cancelled() => {
                    tracing::debug!("closed a connection that was not answering a request: at the cap");
                }
            }
            registry.leave(&this);
        });
    }
    drop(listener);
    connections
}
