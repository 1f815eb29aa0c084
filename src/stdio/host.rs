//! The stdio server ends with its host. A host that exits normally closes the server's
//! stdin, and the reader sees the end; two ends it would not see are watched here, a
//! quarter of a second apart:
//!
//! * **The parent gone.** A host that dies (or exits while another process it started
//!   still holds the server's stdin open) leaves the server to another parent (init, or a
//!   subreaper): the parent that started it is no longer its parent.
//! * **A host's session ended under its long-lived server.** Codex CLI's interface runs its
//!   MCP servers under an app-server daemon (`codex app-server … --managed-daemon`) that
//!   outlives the person's `/quit`, and closes their stdin only about a minute later. Under
//!   a host whose table row names such a daemon ([`crate::hosts::Client::daemon`]), the
//!   server watches the host's own interface processes that run in its project, found when
//!   it starts, and ends once none is left.
//!
//! Elsewhere than Linux nothing is watched: stdin's end still ends the server.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How often the host is looked for: an ended host is noticed within this.
const EVERY: Duration = Duration::from_millis(250);

/// Watches the host from a thread of its own, and cancels the token it returns once the
/// host is gone (never while it is there).
pub fn watch() -> CancellationToken {
    let gone = CancellationToken::new();
    #[cfg(target_os = "linux")]
    {
        let token = gone.clone();
        // Read now, not by the thread: a host may end before a busy machine runs it.
        let parent = linux::parent();
        let started = std::thread::Builder::new()
            .name("bmad-host-watch".into())
            .spawn(move || {
                let Some(host) = parent.and_then(linux::HostProcess::of) else {
                    return;
                };
                loop {
                    std::thread::sleep(EVERY);
                    if let Some(why) = host.gone() {
                        tracing::info!(why, "the host is gone: the server ends with it");
                        token.cancel();
                        return;
                    }
                }
            });
        if let Err(e) = started {
            tracing::debug!(error = %e, "cannot watch the host; stdin's end still ends the server");
        }
    }
    gone
}

#[cfg(target_os = "linux")]
mod linux {
    use procfs::process::{all_processes, Process};

    use crate::hosts::{self, recognise};

    /// A process, known by its id and its start time (an id is reused; the pair is not).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Known {
        pid: i32,
        start: u64,
    }

    impl Known {
        fn of(p: &Process) -> Option<Known> {
            Some(Known {
                pid: p.pid(),
                start: p.stat().ok()?.starttime,
            })
        }

        fn alive(self) -> bool {
            Process::new(self.pid)
                .ok()
                .and_then(|p| p.stat().ok())
                .is_some_and(|s| s.starttime == self.start && s.state != 'Z')
        }
    }

    /// What is watched of the host.
    pub struct HostProcess {
        /// The parent that started the server.
        parent: i32,
        /// Under a host's daemon: its interface processes in the project.
        sessions: Vec<Known>,
    }

    /// The server's parent now; `None` when it already belongs to init.
    pub fn parent() -> Option<i32> {
        let parent = rustix::process::getppid()?.as_raw_nonzero().get();
        (parent > 1).then_some(parent)
    }

    impl HostProcess {
        /// The host that started the server as `parent`; `None` when `/proc` cannot be
        /// read.
        pub fn of(parent: i32) -> Option<HostProcess> {
            let me = Process::myself().ok()?;
            let sessions = daemon_of(parent)
                .map(|(host, daemon)| sessions(&me, host, daemon))
                .unwrap_or_default();
            if !sessions.is_empty() {
                tracing::debug!(?sessions, "under a host's daemon: watching its sessions");
            }
            Some(HostProcess { parent, sessions })
        }

        /// Why the host is gone, or `None` while it is there.
        pub fn gone(&self) -> Option<&'static str> {
            if rustix::process::getppid().map(|p| p.as_raw_nonzero().get()) != Some(self.parent) {
                return Some("the process that started the server ended");
            }
            let ended = !self.sessions.is_empty() && !self.sessions.iter().any(|k| k.alive());
            ended.then_some("the host's session in this project ended; its daemon stays")
        }
    }

    /// The host, and the argument that marks `pid` as its long-lived server process, when
    /// it is one.
    fn daemon_of(pid: i32) -> Option<(&'static str, &'static str)> {
        let p = Process::new(pid).ok()?;
        let exe = p.exe().ok()?;
        let host = recognise::host_of_executable(&exe.to_string_lossy())?;
        let daemon = hosts::HOSTS
            .iter()
            .find(|h| h.name == host)
            .and_then(|h| h.client)
            .and_then(|c| c.daemon)?;
        p.cmdline()
            .ok()?
            .iter()
            .any(|a| a == daemon)
            .then_some((host, daemon))
    }

    /// The host's interface processes of this user in this server's working directory:
    /// `host`'s own executables that are not its daemon (`daemon` not among their
    /// arguments).
    fn sessions(me: &Process, host: &str, daemon: &str) -> Vec<Known> {
        let (Ok(cwd), Ok(uid)) = (me.cwd(), me.uid()) else {
            return Vec::new();
        };
        let Ok(all) = all_processes() else {
            return Vec::new();
        };
        all.flatten()
            .filter(|p| p.uid().ok() == Some(uid) && p.cwd().ok().as_ref() == Some(&cwd))
            .filter(|p| {
                p.exe()
                    .ok()
                    .and_then(|e| recognise::host_of_executable(&e.to_string_lossy()))
                    == Some(host)
            })
            .filter(|p| {
                p.cmdline()
                    .is_ok_and(|args| !args.iter().any(|a| a == daemon))
            })
            .filter_map(|p| Known::of(&p))
            .collect()
    }
}
