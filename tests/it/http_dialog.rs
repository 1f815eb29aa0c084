//! The human's dialog over HTTP, in both eras, as `tests/dialog.rs` checks it over stdio:
//! in a 2025-11-25 session the server sends `elicitation/create` on the call's event
//! stream and the client answers with a POST of its own; in 2026-07-28 the call returns an
//! input-required result that rmcp's `call_tool` fulfils and retries. A declined dialog
//! changes nothing; an accepted one is recorded as the human's.

use rmcp::transport::StreamableHttpClientTransport;

use crate::support::http::Server;
use crate::support::user::{decline_then_confirm, User};
use crate::support::Era;

async fn decide_in_dialog(modern: bool) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = Server::start(&["--root", project.to_str().unwrap()], &[]);
    let user = User::default();
    let transport = StreamableHttpClientTransport::from_uri(server.url.as_str());
    let service = user
        .connect(transport, if modern { Era::Modern } else { Era::Legacy })
        .await;
    decline_then_confirm(&service, &user, &project).await;
    let _ = service.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_user_decides_in_the_dialog_during_the_call() {
    decide_in_dialog(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_user_decides_in_the_dialog_of_an_input_required_result() {
    decide_in_dialog(true).await;
}
