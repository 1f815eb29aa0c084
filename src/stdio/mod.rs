//! The stdio transport, in front of rmcp: it owns the lines on stdin and stdout so that
//! every request gets exactly one answer and the server stops when nobody can read it.
//!
//! * A reader thread reads stdin line by line, never holding more than the line limit
//!   (`BMAD_MAX_LINE_BYTES`), decides about each line (`classify`), hands the messages rmcp
//!   can serve to rmcp already parsed, and answers the rest itself.
//! * A writer task writes rmcp's messages and those answers to stdout, one whole line at a
//!   time, so lines never interleave (through rmcp's `stdio_pipes`, non-blocking on a pipe).
//! * When stdout breaks (a write fails, or the client closes its read end, which the reader
//!   notices at once: it waits for stdin and stdout together), [`StdoutGone`] is set: the
//!   reader stops, rmcp sees the end of its input, the tool refuses calls from then on, and
//!   the process exits with status 3 ([`run()`], the server's life from start to exit).
//!
//! * The server ends with its host: when the process that started it is gone, or, under a
//!   host's daemon, the host's session in the project ended ([`host`]), the input ends as
//!   at SIGTERM and the server exits within a second.
//!
//! The reader is a thread rather than a task because stdin may be a pipe, a socket or a
//! terminal, and a blocking read is the one way to read all of them; a thread blocked in
//! `read` cannot hold up the exit either. Parsing a large message also stays off the
//! runtime's one thread.

pub mod host;
mod lines;
mod run;
pub use run::run;

use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;
use crate::jsonrpc::classify::{self, Verdict};
use lines::{Line, Lines};

/// Messages waiting for the writer; beyond this, rmcp waits for stdout.
const OUT_QUEUE: usize = 64;
/// Messages read ahead of rmcp.
const IN_QUEUE: usize = 16;
/// The reader parses messages nested up to serde_json's limit, as the main thread did.
const READER_STACK: usize = 8 * 1024 * 1024;
/// The reader's buffer: whole messages of ordinary size in one read.
const READ_BUFFER: usize = 64 * 1024;

/// Whether stdout is gone, shared by the threads, the transport, the tool and `main`.
#[derive(Clone)]
pub struct StdoutGone {
    flag: Arc<AtomicBool>,
    /// Cancelled with the flag set, for whoever waits for it.
    gone: CancellationToken,
}

impl StdoutGone {
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag alone, for the tool (`BmadServer::with_output_closed`).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    fn set(&self, why: &str) {
        if !self.flag.swap(true, Ordering::SeqCst) {
            tracing::warn!(
                reason = why,
                "stdout is closed: no more requests are read or applied; exiting with status {}",
                Exit::StdoutClosed.code()
            );
        }
        self.gone.cancel();
    }

    /// Set, or found so by asking the OS now. The reader asks before it hands on each
    /// message, also those it read before stdout broke: a request still waiting to be
    /// handed on when the client closed stdout then never runs.
    fn check(&self) -> bool {
        if !self.is_set() && stdout_closed_now() {
            self.set("the client closed its end of stdout");
        }
        self.is_set()
    }

    /// Returns once stdout is gone.
    pub async fn wait(&self) {
        self.gone.cancelled().await;
    }
}

/// What `main` keeps of the transport.
pub struct Link {
    gone: StdoutGone,
    writer: tokio::task::JoinHandle<()>,
    /// Ends rmcp's input as the end of stdin would (`end_input`).
    ended: CancellationToken,
}

impl Link {
    pub fn gone(&self) -> &StdoutGone {
        &self.gone
    }

    /// Waits until every message is written. Call it only after rmcp has stopped and the
    /// reader has reached the end of stdin, which hold the writer's queue open.
    pub async fn finish(self) {
        let _ = self.writer.await;
    }

    /// Ends rmcp's input as if stdin had ended, for SIGTERM: the messages already read are
    /// still handed on, then rmcp finishes and answers the requests it received. stdin
    /// itself may stay open, so `finish` may then wait for ever: bound it.
    pub fn end_input(&self) {
        self.ended.cancel();
    }
}

/// Starts the reader thread and the writer task on the process's stdin and stdout; call it
/// inside the runtime, and early: the thread gets going while the server is being built.
pub fn start(max_line_bytes: usize) -> io::Result<(StdioTransport, Link)> {
    let gone = StdoutGone {
        flag: Arc::default(),
        gone: CancellationToken::new(),
    };
    let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(OUT_QUEUE);
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(IN_QUEUE);
    let stdin = Watched::new(gone.clone())?;
    std::thread::Builder::new()
        .name("bmad-stdin".into())
        .stack_size(READER_STACK)
        .spawn({
            let (gone, out) = (gone.clone(), out_tx.clone());
            move || {
                let input = Lines::new(
                    io::BufReader::with_capacity(READ_BUFFER, stdin),
                    max_line_bytes,
                );
                read_lines(input, max_line_bytes, &in_tx, &out, &gone)
            }
        })?;
    // rmcp's stdio handles: on Linux, when stdout is a pipe, a non-blocking one of its own.
    // The stdin half is not used (the reader thread reads stdin).
    let (_, stdout) = rmcp::transport::io::stdio_pipes();
    let writer = tokio::spawn(write_lines(stdout, out_rx, gone.clone()));
    let ended = CancellationToken::new();
    let transport = StdioTransport {
        incoming: in_rx,
        out: Some(out_tx),
        gone: gone.clone(),
        ended: ended.clone(),
    };
    Ok((
        transport,
        Link {
            gone,
            writer,
            ended,
        },
    ))
}

fn read_lines<R: BufRead>(
    mut input: Lines<R>,
    limit: usize,
    to_rmcp: &mpsc::Sender<ClientJsonRpcMessage>,
    out: &mpsc::Sender<Vec<u8>>,
    gone: &StdoutGone,
) {
    loop {
        let line = match input.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return tracing::debug!("stdin closed"),
            Err(_) if gone.is_set() => return,
            Err(e) => return tracing::error!(error = %e, "reading stdin failed"),
        };
        if gone.check() {
            return;
        }
        let verdict = match &line {
            Line::Whole(bytes) => classify::line(bytes),
            Line::TooLong { len, top } => classify::too_long(*len, limit, top),
        };
        let delivered = match verdict {
            Verdict::Forward(message) => to_rmcp.blocking_send(*message).is_ok(),
            Verdict::Answer(reply) => out.blocking_send(reply).is_ok(),
            Verdict::Skip(why) => {
                tracing::debug!(why, "line skipped");
                true
            }
        };
        if !delivered {
            return;
        }
    }
}

async fn write_lines(
    mut stdout: impl tokio::io::AsyncWrite + Unpin,
    mut queue: mpsc::Receiver<Vec<u8>>,
    gone: StdoutGone,
) {
    while let Some(line) = queue.recv().await {
        let written = match stdout.write_all(&line).await {
            Ok(()) => stdout.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            return gone.set(&format!("writing to stdout failed: {e}"));
        }
    }
}

/// stdin, read only once it has something to read or stdout broke first: the reader,
/// blocked here, notices at once that the client closed stdout, even with nothing to write.
struct Watched {
    #[cfg(unix)]
    stdin: std::fs::File,
    #[cfg(not(unix))]
    stdin: io::Stdin,
    gone: StdoutGone,
}

impl Watched {
    fn new(gone: StdoutGone) -> io::Result<Watched> {
        // A descriptor of its own, unbuffered, so that waiting for it never leaves bytes
        // in std's buffer unread.
        #[cfg(unix)]
        let stdin = {
            use std::os::fd::AsFd;
            std::fs::File::from(io::stdin().as_fd().try_clone_to_owned()?)
        };
        #[cfg(not(unix))]
        let stdin = io::stdin();
        Ok(Watched { stdin, gone })
    }
}

impl Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        if wait_for_stdin(&self.stdin) {
            self.gone.set("the client closed its end of stdout");
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdout is closed",
            ));
        }
        self.stdin.read(buf)
    }
}

/// Waits until `stdin` can be read (or is at its end) or stdout broke; true for the latter.
#[cfg(unix)]
fn wait_for_stdin(stdin: &std::fs::File) -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let stdout = io::stdout();
    loop {
        // Nothing is asked of stdout, so only a hang-up or an error ends the wait there.
        let mut fds = [
            PollFd::new(stdin, PollFlags::IN),
            PollFd::new(&stdout, PollFlags::empty()),
        ];
        match poll(&mut fds, None) {
            Ok(_) => return broken(fds[1].revents()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                tracing::debug!(error = %e, "cannot watch stdout; a failed write will tell");
                return false;
            }
        }
    }
}

#[cfg(unix)]
fn broken(seen: rustix::event::PollFlags) -> bool {
    use rustix::event::PollFlags;
    seen.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL)
}

/// Whether the OS reports stdout hung up or in error now (for a pipe: no reader is left).
#[cfg(unix)]
fn stdout_closed_now() -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&now)).is_ok() && broken(fds[0].revents())
}

/// Elsewhere only a failed write tells that stdout broke.
#[cfg(not(unix))]
fn stdout_closed_now() -> bool {
    false
}

/// rmcp's side of the transport: parsed messages in, messages to write out.
pub struct StdioTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Option<mpsc::Sender<Vec<u8>>>,
    gone: StdoutGone,
    ended: CancellationToken,
}

impl Transport<RoleServer> for StdioTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = io::Result<()>> + Send + 'static {
        // An error is cut to size first (rmcp quotes what the client sent in some).
        let line = match &item {
            rmcp::model::JsonRpcMessage::Error(_) => {
                serde_json::to_value(&item).and_then(|mut v| {
                    match crate::server::bounded_errors::bound_message(&mut v) {
                        true => serde_json::to_vec(&v),
                        false => serde_json::to_vec(&item),
                    }
                })
            }
            _ => serde_json::to_vec(&item),
        };
        let line = line.map(|mut line| {
            line.push(b'\n');
            line
        });
        let out = self.out.clone();
        async move {
            let out = out.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
            })?;
            // A closed queue means stdout broke; that was logged once, and the message has
            // no reader.
            let _ = out.send(line?).await;
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        tokio::select! {
            biased;
            () = self.gone.wait() => None,
            message = self.incoming.recv() => message,
            () = self.ended.cancelled() => None,
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.out = None;
        Ok(())
    }
}
