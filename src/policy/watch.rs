//! Observing a submission's checks: a call that may run the project's checks for minutes
//! runs them on its blocking thread, outside the project lock, and is watched while it
//! does: each second of checking is a progress line (the adapter sends it to the client as
//! an MCP progress notification), and the cancel flag (set when the client cancels the
//! call) ends the running check (its process group is killed and it is recorded as
//! cancelled).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use chrono::Utc;
use tokio::sync::mpsc;

use super::admission::ChecksToRun;
use super::checks::{self, Tick};
use crate::workflow::session::timestamp;
use crate::workflow::Evidence;

/// What the blocking thread needs: the cancel flag, and where progress goes.
pub struct Watched {
    pub cancel: Arc<AtomicBool>,
    pub progress: Option<mpsc::UnboundedSender<String>>,
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

/// Runs a submission's checks, outside the project lock, watched: what they showed.
pub fn run_checks(run: ChecksToRun, watched: &Watched) -> Evidence {
    let progress = |tick: Tick<'_>| watched.tick(tick);
    checks::run_all(
        &run.project.root,
        &run.planned,
        run.config_sha256,
        timestamp(Utc::now()),
        &checks::Watch {
            cancel: &watched.cancel,
            progress: &progress,
        },
    )
}
