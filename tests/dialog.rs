//! rmcp's own client as a host whose user answers the server's dialog: in the legacy era
//! the server sends `elicitation/create` during the call, in 2026-07-28 it returns an
//! input-required result that rmcp's `call_tool` fulfils through the same handler and
//! retries. A declined dialog changes nothing; an accepted one is recorded as the human's.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceExt,
};
use serde_json::{json, Value};

use common::{command, last_entry, read_json};

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
    let user = User::default();
    let transport = TokioChildProcess::new(command(&project)).unwrap();
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

#[tokio::test]
async fn the_user_decides_in_the_dialog_during_the_call() {
    decide_in_dialog(false).await;
}

#[tokio::test]
async fn the_user_decides_in_the_dialog_of_an_input_required_result() {
    decide_in_dialog(true).await;
}

/// A `.bmad/config.toml` that waits for the human (its checks were never approved) is
/// offered beside the decision, off by default: left unticked nothing is approved; ticked,
/// the version shown is approved as the human's, via the dialog.
async fn approve_the_config_in_the_dialog(modern: bool) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(
        project.join(".bmad/config.toml"),
        "[checks]\nunit = \"true\"\n",
    )
    .unwrap();
    let user = User::default();
    let transport = TokioChildProcess::new(command(&project)).unwrap();
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
    let approved = project.join(".bmad-task/config-approved.json");
    let v = call(json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}))
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    call(json!({"action": "submit", "session_id": id, "claude_result": common::passing_prd()}))
        .await;
    // Confirmed, the config left alone.
    user.plan.lock().unwrap().push_back(answer(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm", "approve_config": false})),
    ));
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "architect", "{v}");
    assert!(!approved.exists(), "not ticked: not approved");
    let shown = user.shown.lock().unwrap().last().cloned().unwrap();
    assert!(
        shown.contains(
            "Also waiting for you: .bmad/config.toml changed (check `unit` added: `true`"
        ),
        "{shown}"
    );

    call(json!({"action": "submit", "session_id": id, "claude_result": common::passing_architecture()}))
        .await;
    user.plan.lock().unwrap().push_back(answer(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm", "approve_config": true})),
    ));
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "sm", "{v}");
    assert!(
        v["notices"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("The human also approved .bmad/config.toml")),
        "{v}"
    );
    let record = read_json(&approved);
    assert_eq!(
        (&record["decided_by"], &record["via"], &record["how"]),
        (&json!("human"), &json!("elicitation"), &json!("approved")),
        "{record}"
    );
    // Nothing waits now: the next dialog offers no config.
    call(json!({"action": "submit", "session_id": id, "claude_result": "# Sprint Plan\n\n## Sprint 1: All\n- it\n"}))
        .await;
    user.plan.lock().unwrap().push_back(answer(
        ElicitationAction::Accept,
        Some(json!({"decision": "approve", "scope": "all"})),
    ));
    let v = call(json!({"action": "approve", "session_id": id})).await;
    assert_eq!(v["stage"], "dev", "{v}");
    let shown = user.shown.lock().unwrap().last().cloned().unwrap();
    assert!(!shown.contains("Also waiting for you"), "{shown}");
    let _ = service.cancel().await;
}

#[tokio::test]
async fn the_user_approves_the_changed_config_in_the_dialog_during_the_call() {
    approve_the_config_in_the_dialog(false).await;
}

#[tokio::test]
async fn the_user_approves_the_changed_config_in_the_dialog_of_an_input_required_result() {
    approve_the_config_in_the_dialog(true).await;
}
