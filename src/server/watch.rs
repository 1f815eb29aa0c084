//! A call that may run the project's checks for minutes: progress goes to the client as
//! MCP progress notifications (when it gave a progress token), and the client's
//! `notifications/cancelled` ends the running check (its process group is killed and it
//! is recorded as cancelled). The checks run on the call's blocking thread; these tasks
//! carry what happens between it and the client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::Utc;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use tokio::sync::mpsc;

use crate::checks::{self, Tick};
use crate::store::{Observed, Plan};
use crate::workflow::session::timestamp;

/// What the blocking thread needs: the cancel flag, and where progress goes.
pub struct Watched {
    pub cancel: Arc<AtomicBool>,
    progress: Option<mpsc::UnboundedSender<String>>,
}

impl Watched {
    /// Nothing watches: no progress, never cancelled.
    pub fn none() -> Watched {
        Watched {
            cancel: Arc::default(),
            progress: None,
        }
    }

    /// Called by the running check, once a second.
    pub fn tick(&self, tick: Tick<'_>) {
        if let Some(tx) = &self.progress {
            let _ = tx.send(format!(
                "check `{}` ({} of {}) running for {} s",
                tick.name,
                tick.index,
                tick.count,
                tick.elapsed.as_secs()
            ));
        }
    }
}

/// The task that waits for the call's cancellation; dropping it stops it. (The progress
/// task ends by itself once the last progress is sent: its channel closes with
/// [`Watched`].)
pub struct Watchers {
    cancelled: tokio::task::JoinHandle<()>,
}

impl Drop for Watchers {
    fn drop(&mut self) {
        self.cancelled.abort();
    }
}

/// Starts watching `ctx`: its cancellation sets the flag; progress is sent with the
/// call's progress token, numbered 1, 2, 3, … (each a second of checking).
pub fn watch(ctx: &RequestContext<RoleServer>) -> (Watched, Watchers) {
    let cancel = Arc::new(AtomicBool::new(false));
    let cancelled = {
        let (ct, flag) = (ctx.ct.clone(), cancel.clone());
        tokio::spawn(async move {
            ct.cancelled().await;
            flag.store(true, Ordering::SeqCst);
        })
    };
    let progress = ctx.meta.get_progress_token().map(|token| {
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let mut n = 0.0;
            while let Some(message) = rx.recv().await {
                n += 1.0;
                let param = ProgressNotificationParam::new(token.clone(), n).with_message(message);
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!(error = %e, "a progress notification was not sent");
                }
            }
        });
        tx
    });
    (Watched { cancel, progress }, Watchers { cancelled })
}

impl super::BmadServer {
    /// What the server observes before recording a command: for a submission at a stage
    /// that runs checks, the project's checks as last approved, run here, outside the
    /// project lock (minutes of checks must not make every other call `busy`), and bound
    /// to the session as it was when they started.
    pub(super) fn observe(
        &self,
        cwd: Option<&str>,
        key: &crate::store::SessionKey,
        command: &crate::workflow::Command,
        watched: &Watched,
    ) -> crate::error::Result<Observed> {
        let timeout = crate::config::check_timeout_from_env();
        let plan = self
            .inner
            .store
            .plan_checks(cwd, key, command, timeout, &Utc::now)?;
        let run = match plan {
            Plan::Record { notices } => {
                return Ok(Observed {
                    notices,
                    ..Observed::default()
                })
            }
            Plan::Run(run) => run,
        };
        let progress = |tick: Tick<'_>| watched.tick(tick);
        let evidence = checks::run_all(
            &run.project.root,
            &run.planned,
            run.config_sha256,
            timestamp(Utc::now()),
            &checks::Watch {
                cancel: &watched.cancel,
                progress: &progress,
            },
        );
        Ok(Observed {
            evidence,
            history_len: Some(run.history_len),
            notices: run.notices,
        })
    }
}
