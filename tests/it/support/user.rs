//! The human behind a test client: a `ClientHandler` that answers each dialog the server
//! shows with the next planned result, and keeps what it was shown and the progress it
//! heard.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};

use super::{handshake, last_entry, read_json, Era};

#[derive(Clone, Default)]
pub struct User {
    /// The answers to give, in order.
    pub plan: Arc<Mutex<VecDeque<ElicitResult>>>,
    /// Each dialog's message, as shown.
    pub shown: Arc<Mutex<Vec<String>>>,
    /// The progress notifications heard.
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// Each dialog's form (its requested schema), as shown.
    pub forms: Arc<Mutex<Vec<Value>>>,
}

impl User {
    /// Plans the answer to the next dialog.
    pub fn will(&self, action: ElicitationAction, content: Option<Value>) {
        self.plan.lock().unwrap().push_back(answer(action, content));
    }

    /// The message of the last dialog shown.
    pub fn last_shown(&self) -> String {
        self.shown
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a dialog was shown")
    }

    /// Connects over `transport` in `era`, this human answering the server's dialogs.
    pub async fn connect<T, E, A>(&self, transport: T, era: Era) -> RunningService<RoleClient, User>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        handshake(self.clone(), era, transport).await
    }
}

pub fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
    let mut r = ElicitResult::new(action);
    r.content = content;
    r
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            self.shown.lock().unwrap().push(message.clone());
            self.forms
                .lock()
                .unwrap()
                .push(serde_json::to_value(requested_schema).unwrap_or_default());
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
            Implementation::new("bmad-test-user", "1.0.0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

/// Calls `bmad-task`; the reply's structured content.
pub async fn structured(service: &RunningService<RoleClient, User>, args: Value) -> Value {
    let Value::Object(map) = args else {
        panic!("arguments are an object")
    };
    let r = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
        .await
        .expect("answered");
    let v = r.structured_content.expect("structured");
    super::person_reads(v["user_message"].as_str().unwrap_or_default());
    v
}

/// The dialog as a test walks it, whatever the transport: a PRD waits for confirmation; the
/// human declines (nothing changes), then confirms (recorded as theirs, via the dialog,
/// having been shown the document's digest both times).
pub async fn decline_then_confirm(
    service: &RunningService<RoleClient, User>,
    user: &User,
    project: &Path,
) {
    let call = |args: Value| structured(service, args);
    let v = call(json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}))
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    let prd =
        std::fs::read_to_string(harness::repo_path("examples/fixtures/po-final.json")).unwrap();
    let v = call(json!({"action": "submit", "session_id": id, "claude_result": prd})).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");
    let digest = v["document_digest"].as_str().unwrap().to_string();

    user.will(ElicitationAction::Decline, None);
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "a decline changes nothing: {v}"
    );
    assert!(v.get("error").is_none(), "{v}");

    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
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
}
