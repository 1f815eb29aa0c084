//! The client's own roots (MCP `roots/list`), for a call over HTTP that names no `cwd`.
//! An HTTP server whose `--root` holds several projects cannot tell which one such a call
//! is for; a client that declared the `roots` capability says where it works, so the
//! server asks it (2025 protocol era: in 2026-07-28 a server may not send the client a
//! request) and takes the first of its roots that is a project the server may serve.
//! Nothing is guessed: with no such root the call goes on without `cwd` and is refused
//! naming both ways to say which project it is for. (MCP deprecates roots after
//! 2025-11-25, SEP-2577; `cwd` is the way that stays.)

use std::time::Duration;

use rmcp::service::RequestContext;
use rmcp::RoleServer;

use super::args::Call;
use super::dialog::is_modern;
use crate::store::Store;

/// How long the client may take to list its roots.
const ASK_FOR: Duration = Duration::from_secs(5);

/// Fills in the `cwd` of `call` from the client's roots when it gives none, the server
/// serves roots of its own (HTTP), and the client can list its roots.
#[allow(deprecated)]
pub async fn fill_cwd(call: &mut Call, store: &Store, ctx: &RequestContext<RoleServer>) {
    let cwd = match call {
        Call::Start { cwd, .. }
        | Call::List { cwd, .. }
        | Call::Status { cwd, .. }
        | Call::Act { cwd, .. } => cwd,
        Call::Lessons(l) => l.cwd_mut(),
    };
    if cwd.is_some() || !store.serves_roots() || is_modern(ctx) {
        return;
    }
    if ctx.client_capabilities().and_then(|c| c.roots).is_none() {
        return;
    }
    let listed = match tokio::time::timeout(ASK_FOR, ctx.peer.list_roots()).await {
        Ok(Ok(listed)) => listed,
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "the client did not list its roots");
            return;
        }
        Err(_) => {
            tracing::debug!("the client did not list its roots in time");
            return;
        }
    };
    let paths = listed.roots.iter().filter_map(|root| {
        let path = url::Url::parse(&root.uri).ok()?.to_file_path().ok()?;
        path.to_str().map(str::to_string)
    });
    for path in paths {
        if store.project(Some(&path)).is_ok() {
            tracing::debug!(cwd = %path, "the project is the client's root");
            *cwd = Some(path);
            return;
        }
    }
}
