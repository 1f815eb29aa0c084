//! The human's dialog over HTTP, in both eras, as `tests/dialog.rs` checks it over stdio:
//! in a 2025-11-25 session the server sends `elicitation/create` on the call's event
//! stream and the client answers with a POST of its own; in 2026-07-28 the call returns an
//! input-required result that rmcp's `call_tool` fulfils and retries. A declined dialog
//! changes nothing; an accepted one is recorded as the human's.

mod common;
mod http_support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
};
use serde_json::{json, Value};

use common::{last_entry, read_json};
use http_support::Server;

/// The user behind the client: answers each dialog with the next planned result.
#[derive(Clone, Default)]
struct User {
    plan: Arc<Mutex<VecDeque<ElicitResult>>>,
    shown: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.shown.lock().unwrap().push(message.clone());
        }
        Ok(self
            .plan
            .lock()
            .unwrap()
            .pop_front()
            .expect("the dialog was shown more often than planned"))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("dialog-test", "1.0.0"),
        )
    }
}

fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
    let mut r = ElicitResult::new(action);
    r.content = content;
    r
}

async fn decide_in_dialog(modern: bool) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = Server::start(&["--root", project.to_str().unwrap()], &[]);
    let user = User::default();
    let transport = StreamableHttpClientTransport::from_uri(server.url.as_str());
    let service = if modern {
        user.clone()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
    } else {
        user.clone().serve(transport).await.unwrap()
    };
    let call = |args: Value| {
        let service = &service;
        async move {
            let Value::Object(map) = args else { panic!() };
            let r = service
                .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
                .await
                .expect("answered");
            r.structured_content.expect("structured")
        }
    };
    let v = call(json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}))
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    let prd = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fixtures/po-final.json"),
    )
    .unwrap();
    let v = call(json!({"action": "submit", "session_id": id, "claude_result": prd})).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");
    let digest = v["document_digest"].as_str().unwrap().to_string();

    user.plan
        .lock()
        .unwrap()
        .push_back(answer(ElicitationAction::Decline, None));
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "a decline changes nothing: {v}"
    );
    assert!(v.get("error").is_none(), "{v}");

    user.plan.lock().unwrap().push_back(answer(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    ));
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "architect", "{v}");
    let shown = user.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 2);
    assert!(
        shown
            .iter()
            .all(|m| m.contains(&format!("sha256 {digest}"))),
        "{shown:?}"
    );
    let session = read_json(&project.join(format!(".bmad-task/session-{id}.json")));
    let last = last_entry(&session);
    assert_eq!(
        (&last["decided_by"], &last["via"]),
        (&json!("human"), &json!("elicitation")),
        "{last}"
    );
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
