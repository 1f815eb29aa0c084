//! A call over HTTP may take as long as the human takes to answer the dialog (or the
//! project's checks take to run): the per-request time limit guards the request's arrival,
//! not the answer.

use crate::support;

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::RequestContext;

use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::json;

use crate::support::http::Server;
use crate::support::user::answer;
use crate::support::{passing_prd, read_json, Era};

/// A human who takes a while to decide.
#[derive(Clone)]
struct SlowUser(Duration);

impl ClientHandler for SlowUser {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        tokio::time::sleep(self.0).await;
        Ok(answer(
            ElicitationAction::Accept,
            Some(json!({"decision": "confirm"})),
        ))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("slow-user", "1.0.0"),
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_longer_than_the_request_time_limit_is_still_answered() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = Server::start(
        &["--root", project.to_str().unwrap()],
        &[("BMAD_HTTP_REQUEST_SECS", "1")],
    );
    let service = server
        .connect_as(SlowUser(Duration::from_secs(3)), Era::Legacy, None)
        .await;
    let call = |args: serde_json::Value| {
        let service = &service;
        async move {
            let serde_json::Value::Object(m) = args else {
                unreachable!()
            };
            let r = service
                .call_tool(rmcp::model::CallToolRequestParams::new("bmad-task").with_arguments(m))
                .await;
            if let Some(v) = r.as_ref().ok().and_then(|r| r.structured_content.as_ref()) {
                crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
            }
            r
        }
    };
    let v = call(json!({"action": "start", "objective": "Build a wiki"}))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    let id = v["session_id"].as_str().unwrap().to_string();
    call(json!({"action": "submit", "session_id": id, "claude_result": passing_prd()}))
        .await
        .unwrap();
    let r = call(json!({"action": "confirm", "session_id": id})).await;
    let v = r
        .expect("answered after the human's 3 s")
        .structured_content
        .unwrap();
    assert_eq!(v["stage"], "architect", "{v}");
    let s = read_json(&project.join(format!(".bmad-task/session-{id}.json")));
    assert_eq!(s["current_stage"], "architect");
    let _ = service.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_that_run_longer_than_the_request_time_limit_are_still_answered() {
    for era in Era::BOTH {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(project.join(".bmad")).unwrap();
        std::fs::write(
            project.join(".bmad/config.toml"),
            "[checks]\nslow = \"sleep 3\"\n",
        )
        .unwrap();
        let (code, out) =
            support::terminal::in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
        assert_eq!(code, 0, "{out}");
        let server = Server::start(
            &["--root", project.to_str().unwrap()],
            &[("BMAD_HTTP_REQUEST_SECS", "1")],
        );
        let c = server.connect(era, None, &project).await;
        let sid = support::at_dev(&c, &project).await;
        let v = c
            .ok(json!({"action": "submit", "session_id": sid, "codex_result": "# Implementation Report\n\n## Summary\nBuilt."}))
            .await;
        assert_eq!(v["stage"], "review", "{era:?}: {v}");
        assert_eq!(v["checks"]["checks"][0]["outcome"], "passed", "{v}");
        c.close().await;
    }
}
