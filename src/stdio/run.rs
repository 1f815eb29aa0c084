//! The stdio server's life, from start to exit status: the transport started before the
//! server is built, rmcp served until stdin ends, SIGTERM, the host is gone or the client
//! closes stdout, then the calls received given their grace and their answers flushed,
//! and the status the process ends with ([`Exit`]).

use std::time::Duration;

use rmcp::ServiceExt;

use super::{Link, StdioTransport, StdoutGone};
use crate::exit::Exit;
use crate::server::BmadServer;
use crate::settings::Settings;

/// How long a call already running when stdout breaks may go on before the process exits:
/// short, so that the exit comes within a second; its writes are atomic either way.
const GRACE_AFTER_STDOUT_CLOSED: Duration = Duration::from_millis(500);
/// How long the calls running when SIGTERM arrives may go on (as `serve --http`'s grace).
const GRACE_AFTER_SIGTERM: Duration = Duration::from_secs(30);
/// How long their answers then have to reach stdout.
const FLUSH_AFTER_SIGTERM: Duration = Duration::from_secs(2);
/// How long the calls running when the host is gone may go on, and their answers take:
/// nobody reads them, and the server ends within a second of its host (a write under way
/// is atomic, whether it finishes or not).
const GRACE_AFTER_HOST: Duration = Duration::from_millis(400);
const FLUSH_AFTER_HOST: Duration = Duration::from_millis(200);

/// Why the stdio server stopped.
#[derive(Clone, Copy)]
enum Stopped {
    /// stdin ended (or stdout broke).
    InputEnded,
    /// SIGTERM: the calls received were answered (a dialog's wait: still pending).
    Signal,
    /// The host is gone ([`super::host`]): as for SIGTERM, within a second.
    HostGone,
}

/// Serves MCP over stdio until stdin ends, SIGTERM, the host is gone, or the client closes
/// stdout; the status says which (0, or 3 for stdout closed; 1 when it cannot start).
pub fn run(settings: &Settings) -> Exit {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("bmad-mcp: cannot start the async runtime: {e}");
            return Exit::Failed;
        }
    };
    // The transport first: its reader thread starts while the server (the tool's schemas)
    // is built, which keeps the cold start as fast as it was.
    let started = {
        let _inside = runtime.enter();
        super::start(settings.max_line_bytes)
    };
    let (transport, link) = match started {
        Ok(started) => started,
        Err(e) => {
            eprintln!("bmad-mcp: cannot start reading stdin: {e}");
            return Exit::Failed;
        }
    };
    let server = BmadServer::with_output_closed(settings, link.gone().flag());
    let gone = link.gone().clone();
    let result = runtime.block_on(async {
        let stopped = serve(server, transport, gone.clone(), &link).await?;
        if !gone.is_set() {
            flush(stopped, link).await;
        }
        Ok::<Stopped, Box<dyn std::error::Error>>(stopped)
    });
    if matches!(result, Ok(Stopped::Signal | Stopped::HostGone)) {
        // A call still running after the grace is not waited for; its writes are atomic.
        runtime.shutdown_background();
        return Exit::Done;
    }
    if gone.is_set() {
        // Neither a call still running nor the reader blocked on stdin is waited for.
        runtime.shutdown_background();
        return Exit::StdoutClosed;
    }
    // A call still running after rmcp stopped waiting for it is waited for: dropping the
    // runtime, on return, waits for tokio's blocking pool.
    match result {
        Ok(_) => Exit::Done,
        Err(e) => {
            tracing::error!(error = %e, "server stopped");
            Exit::Failed
        }
    }
}

/// rmcp has answered every request it received; now they reach stdout (after SIGTERM
/// stdin may stay open, which keeps the writer's queue open: bounded).
async fn flush(stopped: Stopped, link: Link) {
    match stopped {
        Stopped::InputEnded => link.finish().await,
        Stopped::Signal => {
            let _ = tokio::time::timeout(FLUSH_AFTER_SIGTERM, link.finish()).await;
        }
        Stopped::HostGone => {
            let _ = tokio::time::timeout(FLUSH_AFTER_HOST, link.finish()).await;
        }
    }
}

async fn serve(
    server: BmadServer,
    transport: StdioTransport,
    gone: StdoutGone,
    link: &Link,
) -> Result<Stopped, Box<dyn std::error::Error>> {
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        "bmad-mcp serving on stdio"
    );
    let host_gone = super::host::watch();
    let running = tokio::select! {
        running = server.clone().serve(transport) => match running {
            Ok(running) => running,
            // stdin ended before a client said anything (`bmad-mcp < /dev/null`, a host
            // that gave up before `initialize`): the same clean end as later, not a fault.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("stdin closed before the client initialized");
                return Ok(Stopped::InputEnded);
            }
            Err(e) => return Err(e.into()),
        },
        () = gone.wait() => return Ok(Stopped::InputEnded),
        () = host_gone.cancelled() => return Ok(Stopped::HostGone),
    };
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        reason = &mut waiting => tracing::info!(reason = ?reason?, "client disconnected"),
        () = gone.wait() => {
            let _ = tokio::time::timeout(GRACE_AFTER_STDOUT_CLOSED, waiting).await;
        }
        () = terminate_signal() => {
            tracing::info!("SIGTERM: answering the calls received, then stopping");
            return Ok(wind_down(&server, link, waiting, (Stopped::Signal, GRACE_AFTER_SIGTERM)).await);
        }
        () = host_gone.cancelled() => {
            return Ok(wind_down(&server, link, waiting, (Stopped::HostGone, GRACE_AFTER_HOST)).await);
        }
    }
    Ok(Stopped::InputEnded)
}

/// Stops reading: a call waiting on the human's dialog answers now (still pending), no
/// request is read after the ones already read, and the calls received are waited for up
/// to `grace`.
async fn wind_down<W: std::future::Future>(
    server: &BmadServer,
    link: &Link,
    waiting: std::pin::Pin<&mut W>,
    (why, grace): (Stopped, Duration),
) -> Stopped {
    server.stop();
    link.end_input();
    if tokio::time::timeout(grace, waiting).await.is_err() {
        tracing::warn!("calls still running after {grace:?}; stopping");
    }
    why
}

/// SIGTERM (stdio keeps SIGINT's default: a host's Ctrl-C is not the server's to soften).
async fn terminate_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
                return;
            }
            Err(e) => tracing::warn!(error = %e, "cannot watch SIGTERM"),
        }
    }
    std::future::pending::<()>().await
}
