//! Runs the project's checks, as the human approved them, and says what happened: each
//! command through `sh -c` in the project directory, in a process group of its own
//! (killed whole on a timeout or a cancel), stdin closed, stdout and stderr into one pipe
//! that is read as it fills. Whatever a check prints, the server holds at most its first
//! and last 512 KiB (kept as a file) and the SHA-256 of all of it, so a gigabyte of
//! output costs time, never memory.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::workflow::{CheckOutcome, CheckResult, CheckRun, Evidence, GitState};

/// Output kept from the start and from the end of a check's output.
pub const KEPT_HEAD: usize = 512 * 1024;
pub const KEPT_TAIL: usize = 512 * 1024;
/// The end of the output that goes into the reply.
pub const TAIL_BYTES: usize = 2 * 1024;
/// How often a running check reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// How long the output is still read after the check's processes were ended (a process
/// that left the group could hold the pipe open for ever).
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// One check to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub name: String,
    pub command: String,
    pub timeout: Duration,
    /// Variables of the server's environment the config passes on although they look
    /// like secrets (`pass_env`); see [`inherited`].
    pub pass_env: Vec<String>,
}

/// Progress of the check being run: its name, its place (from 1) among `count`, and how
/// long it has run.
pub struct Tick<'a> {
    pub name: &'a str,
    pub index: usize,
    pub count: usize,
    pub elapsed: Duration,
}

/// What the caller watches and can stop.
pub struct Watch<'a> {
    /// Set when the host cancelled the call: the running check's group is killed and it
    /// and the checks not yet run are recorded as cancelled.
    pub cancel: &'a AtomicBool,
    pub progress: &'a (dyn Fn(Tick<'_>) + Sync),
}

/// Runs every check in order, in `root`, and the git state beside them.
pub fn run_all(
    root: &Path,
    planned: &[Planned],
    config_sha256: String,
    at: String,
    watch: &Watch<'_>,
) -> Evidence {
    let git = git_state(root);
    let mut checks = Vec::with_capacity(planned.len());
    let mut outputs = Vec::with_capacity(planned.len());
    for (i, p) in planned.iter().enumerate() {
        let (result, kept) = run_one(root, p, i + 1, planned.len(), watch);
        tracing::info!(check = %p.name, outcome = result.outcome.id(), ms = result.duration_ms, "check ran");
        checks.push(result);
        outputs.push(kept);
    }
    Evidence::Ran {
        run: CheckRun {
            at,
            config_sha256,
            git,
            checks,
        },
        outputs,
    }
}

/// What was read of a check's output so far.
#[derive(Default)]
struct Capture {
    sha: Sha256,
    total: u64,
    head: Vec<u8>,
    /// The output after the head; trimmed to its last [`KEPT_TAIL`] bytes whenever it
    /// grows to twice that (a copy per 512 KiB read, whatever the build).
    tail: Vec<u8>,
}

impl Capture {
    fn push(&mut self, mut bytes: &[u8]) {
        self.sha.update(bytes);
        self.total += bytes.len() as u64;
        let room = KEPT_HEAD.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..room]);
        bytes = &bytes[room..];
        if bytes.len() >= KEPT_TAIL {
            self.tail.clear();
            bytes = &bytes[bytes.len() - KEPT_TAIL..];
        }
        if self.tail.len() + bytes.len() > 2 * KEPT_TAIL {
            let keep_from = self.tail.len() - KEPT_TAIL.min(self.tail.len());
            self.tail.drain(..keep_from);
        }
        self.tail.extend_from_slice(bytes);
    }

    /// The kept text (the whole output, or its head and tail around a note), the tail
    /// for the reply, and the digest.
    fn finish(self) -> (String, String, String) {
        let tail = &self.tail[self.tail.len().saturating_sub(KEPT_TAIL)..];
        let left_out = self.total - (self.head.len() + tail.len()) as u64;
        let mut kept = String::from_utf8_lossy(&self.head).into_owned();
        if left_out > 0 {
            kept.push_str(&format!(
                "\n[… {left_out} bytes of output left out here; output_sha256 covers all of it …]\n"
            ));
        }
        kept.push_str(&String::from_utf8_lossy(tail));
        // The last bytes printed: from the tail, and the head's end when nothing was left
        // out between them and the tail is short.
        let mut end: Vec<u8> = Vec::with_capacity(TAIL_BYTES);
        if left_out == 0 {
            let need = TAIL_BYTES.saturating_sub(tail.len());
            end.extend_from_slice(&self.head[self.head.len().saturating_sub(need)..]);
        }
        end.extend_from_slice(&tail[tail.len().saturating_sub(TAIL_BYTES)..]);
        let short = String::from_utf8_lossy(&end);
        // From a line start when one is near, without a partial character at the front.
        let short = short.trim_start_matches('\u{FFFD}');
        let short = match short.find('\n') {
            Some(i) if i < 200 && end.len() == TAIL_BYTES => &short[i + 1..],
            _ => short,
        };
        (
            kept,
            short.to_string(),
            format!("{:x}", self.sha.finalize()),
        )
    }
}

fn run_one(
    root: &Path,
    p: &Planned,
    index: usize,
    count: usize,
    watch: &Watch<'_>,
) -> (CheckResult, String) {
    let mut result = CheckResult {
        name: p.name.clone(),
        command: p.command.clone(),
        outcome: CheckOutcome::NotStarted,
        exit_code: None,
        signal: None,
        duration_ms: 0,
        output_bytes: 0,
        output_sha256: format!("{:x}", Sha256::digest(b"")),
        output: None,
        tail: String::new(),
    };
    if watch.cancel.load(Ordering::SeqCst) {
        result.outcome = CheckOutcome::Cancelled;
        return (result, String::new());
    }
    let started = Instant::now();
    let (child, reader) = match spawn(root, &p.command, &p.pass_env) {
        Ok(spawned) => spawned,
        Err(e) => {
            result.tail = format!("could not start `sh -c`: {e}");
            return (result, String::new());
        }
    };
    let capture = Arc::new(Mutex::new(Capture::default()));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    {
        let capture = capture.clone();
        let mut reader = reader;
        let spawned = std::thread::Builder::new()
            .name("bmad-check-output".into())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => capture
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = done_tx.send(());
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the check's output cannot be read");
        }
    }
    let (outcome, status) = wait(child, p, index, count, started, watch);
    let _ = done_rx.recv_timeout(DRAIN_WAIT);
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.outcome = outcome;
    if let Some(status) = status {
        result.exit_code = status.code();
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            result.signal = status.signal();
        }
    }
    let taken = std::mem::take(&mut *capture.lock().unwrap_or_else(|e| e.into_inner()));
    result.output_bytes = taken.total;
    let (kept, tail, sha) = taken.finish();
    result.tail = tail;
    result.output_sha256 = sha;
    (result, kept)
}

fn spawn(
    root: &Path,
    command: &str,
    pass_env: &[String],
) -> std::io::Result<(Child, std::io::PipeReader)> {
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new("sh");
    cmd.env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| inherited(&name.to_string_lossy(), pass_env)))
        .arg("-c")
        .arg(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd.spawn()?;
    // The command holds the pipe's writing ends: without dropping it the output never
    // ends.
    drop(cmd);
    Ok((child, reader))
}

/// Whether a check inherits the server's variable `name` (docs/spec.md §14.6, docs/checks.md "What a
/// check inherits"): never the HTTP token, no `BMAD_*` server setting and nothing whose
/// name says it is a secret (token, secret, password, credential, API, access or private key), unless the
/// approved config names it in `pass_env`; everything else, as the server has it.
pub fn inherited(name: &str, pass_env: &[String]) -> bool {
    if name == crate_token_env() {
        return false;
    }
    if pass_env.iter().any(|p| p == name) {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    let secret = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "ACCESS_KEY",
    ]
    .iter()
    .any(|w| upper.contains(w));
    !(secret || upper.starts_with("BMAD_"))
}

/// The HTTP server's token variable (named here: `http` is a layer above).
fn crate_token_env() -> &'static str {
    "BMAD_MCP_TOKEN"
}

/// Waits for the check to end, its time to run out or the host to cancel; reports
/// progress once a second.
fn wait(
    mut child: Child,
    p: &Planned,
    index: usize,
    count: usize,
    started: Instant,
    watch: &Watch<'_>,
) -> (CheckOutcome, Option<std::process::ExitStatus>) {
    let mut reported = started;
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // What it left running in its group would hold the output open.
                kill_group(&mut child);
                let outcome = if status.success() {
                    CheckOutcome::Passed
                } else {
                    CheckOutcome::Failed
                };
                return (outcome, Some(status));
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot wait for a check");
                break CheckOutcome::Failed;
            }
        }
        if watch.cancel.load(Ordering::SeqCst) {
            break CheckOutcome::Cancelled;
        }
        if started.elapsed() >= p.timeout {
            break CheckOutcome::TimedOut;
        }
        if reported.elapsed() >= PROGRESS_EVERY {
            reported = Instant::now();
            (watch.progress)(Tick {
                name: &p.name,
                index,
                count,
                elapsed: started.elapsed(),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    kill_group(&mut child);
    let status = child.wait().ok();
    (outcome, status)
}

/// Ends the check's whole process group (the shell and everything it started).
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    {
        use rustix::process::{kill_process_group, Pid, Signal};
        if let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
            // ESRCH: the group is already gone.
            let _ = kill_process_group(pid, Signal::KILL);
            return;
        }
    }
    let _ = child.kill();
}

/// The commit checked out and whether the tree has changes, when the project is a git
/// repository and git is installed: asked as every read of git is, running nothing the
/// repository's config names.
fn git_state(root: &Path) -> Option<GitState> {
    let (commit, dirty) = crate::git::Repo::at(root)?.state()?;
    Some(GitState { commit, dirty })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_output_keeps_its_head_and_tail_and_digests_all_of_it() {
        let mut c = Capture::default();
        let mut all = Vec::new();
        for i in 0..40u32 {
            let chunk: Vec<u8> = (0..100_000u32)
                .map(|j| b'a' + ((i + j) % 26) as u8)
                .collect();
            all.extend_from_slice(&chunk);
            c.push(&chunk);
        }
        let (kept, tail, sha) = c.finish();
        assert_eq!(sha, format!("{:x}", Sha256::digest(&all)));
        assert!(kept.len() < KEPT_HEAD + KEPT_TAIL + 200);
        assert!(kept.starts_with(std::str::from_utf8(&all[..1000]).unwrap()));
        assert!(kept.ends_with(std::str::from_utf8(&all[all.len() - 1000..]).unwrap()));
        assert!(kept.contains("bytes of output left out"));
        assert_eq!(tail.len(), TAIL_BYTES);
        assert!(all.ends_with(tail.as_bytes()));
        // A head just full and a short tail: the reply's end spans both.
        let mut c = Capture::default();
        c.push(&vec![b'h'; KEPT_HEAD]);
        c.push(b"\nlast line\n");
        let (kept, tail, _) = c.finish();
        assert_eq!(kept.len(), KEPT_HEAD + 11);
        assert!(
            tail.ends_with("hh\nlast line\n") && tail.len() > 100,
            "{tail}"
        );
        // A short output is kept whole.
        let mut c = Capture::default();
        c.push(b"ok\n");
        let (kept, tail, _) = c.finish();
        assert_eq!((kept.as_str(), tail.as_str()), ("ok\n", "ok\n"));
    }
}
