//! A call's connection to its client while it may run the project's checks: the client's
//! `notifications/cancelled` sets the call's cancel flag, and each progress line of the
//! checks goes to the client as an MCP progress notification (when it gave a progress
//! token). What is watched is the evidence layer's ([`Watched`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;

use crate::policy::watch::Watched;

/// The task that waits for the call's cancellation; dropping it stops it. (The progress
/// task ends by itself once the last progress is sent: its channel closes with
/// [`Watched`].)
pub type Watchers = AbortOnDropHandle<()>;

/// Starts watching `ctx`: its cancellation sets the flag; progress is sent with the
/// call's progress token, numbered 1, 2, 3, … (each a second of checking).
pub fn watch(ctx: &RequestContext<RoleServer>) -> (Watched, Watchers) {
    let cancel = Arc::new(AtomicBool::new(false));
    let cancelled = {
        let (ct, flag) = (ctx.ct.clone(), cancel.clone());
        AbortOnDropHandle::new(tokio::spawn(async move {
            ct.cancelled().await;
            flag.store(true, Ordering::SeqCst);
        }))
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
    (Watched { cancel, progress }, cancelled)
}
