//! The MCP prompts (`/bmad:start`, `/bmad:status`, `/bmad:resume`) and resources
//! (`bmad://sessions…`) through rmcp's client, in both protocol eras, against the binary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ErrorCode, GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequestParams,
    ResourceContents, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::support::{
    command, connect, document, passing_architecture, passing_prd, scored, start_args, Client, Era,
};

async fn prompt(c: &Client, name: &str, args: Value) -> Result<String, ServiceError> {
    let mut params = GetPromptRequestParams::new(name);
    if let Value::Object(m) = args {
        params = params.with_arguments(m);
    }
    let r = c.peer().get_prompt(params).await?;
    assert_eq!(r.messages.len(), 1, "one user message");
    Ok(r.messages[0]
        .content
        .as_text()
        .expect("a text message")
        .text
        .clone())
}

async fn read(c: &Client, uri: &str) -> Result<(String, String), ServiceError> {
    let r = c
        .peer()
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    match &r.contents[..] {
        [ResourceContents::TextResourceContents {
            uri: u,
            mime_type,
            text,
            ..
        }] => {
            assert_eq!(u, uri);
            Ok((mime_type.clone().expect("a MIME type"), text.clone()))
        }
        other => panic!("one text content, got {other:?}"),
    }
}

fn error_code(e: ServiceError) -> (i32, String) {
    match e {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string()),
        other => panic!("an MCP error, got {other}"),
    }
}

/// Gemini CLI has a `/resume` of its own and renames a server prompt of that name on every
/// start, saying so: it is offered `resume` as `resume-task`, which `prompts/get` takes
/// (and `resume` still). Other clients keep `resume`.
#[tokio::test]
async fn gemini_cli_is_offered_resume_under_a_name_none_of_its_commands_holds() {
    use rmcp::model::{ClientCapabilities, ClientConfig, GetPromptRequestParams, Implementation};
    for (client, names) in [
        ("gemini-cli-mcp-client", ["start", "status", "resume-task"]),
        ("claude-code", ["start", "status", "resume"]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(client, "1"),
        );
        let (transport, _) = TokioChildProcess::builder(crate::support::command(dir.path()))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let s = crate::support::handshake(info, Era::Legacy, transport).await;
        let listed = s.list_all_prompts().await.unwrap();
        let listed: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(listed, names, "{client}");
        for name in [names[2], "resume"] {
            let got = s
                .get_prompt(GetPromptRequestParams::new(name))
                .await
                .unwrap_or_else(|e| panic!("{client}: {name}: {e}"));
            let text = got.messages[0].content.as_text().unwrap().text.clone();
            assert!(text.contains("no BMAD task"), "{client}: {name}: {text}");
        }
        s.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn prompts_are_listed_and_each_tells_the_assistant_what_to_call() {
    for era in [Era::Legacy, Era::Modern] {
        let dir = tempfile::tempdir().unwrap();
        let c = connect(era, dir.path()).await;
        let listed = c.peer().list_all_prompts().await.unwrap();
        let names: Vec<&str> = listed.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["start", "status", "resume"], "{era:?}");
        for p in &listed {
            let args = p.arguments.as_ref().expect("one argument each");
            assert_eq!(args.len(), 1, "{}: Claude Code splits on spaces", p.name);
            assert_eq!(args[0].required, Some(false), "{}", p.name);
        }

        let text = prompt(&c, "start", json!({"objective": "Build a todo app"}))
            .await
            .unwrap();
        assert!(text.contains("«Build a todo app»"), "{text}");
        assert!(text.contains("`bmad-task`") && text.contains("action: \"start\""));
        // Claude Code sends "" for an argument left out.
        let text = prompt(&c, "start", json!({"objective": ""})).await.unwrap();
        assert!(text.contains("Ask me what I want built"), "{text}");

        let text = prompt(&c, "status", json!({})).await.unwrap();
        assert!(text.contains("no BMAD tasks"), "{text}");
        let text = prompt(&c, "resume", json!({})).await.unwrap();
        assert!(text.contains("no BMAD task"), "{text}");

        let v = c
            .ok(start_args(dir.path(), "Build a todo app with tags"))
            .await;
        let task = v["task_name"].as_str().unwrap();
        let text = prompt(&c, "status", json!({})).await.unwrap();
        assert!(
            text.contains(&format!("- {task}: full track, po stage, generating")),
            "{text}"
        );
        let text = prompt(&c, "status", json!({"task": task})).await.unwrap();
        assert!(text.contains(&format!("`{task}`")), "{text}");
        assert!(text.contains("Do as `role_prompt` says"), "{text}");

        let (code, message) = error_code(prompt(&c, "nope", json!({})).await.unwrap_err());
        assert_eq!(code, ErrorCode::INVALID_PARAMS.0);
        assert!(
            message.contains("`start`, `status`, `resume` and the project's BMAD method files"),
            "{message}"
        );
        let (code, message) = error_code(
            prompt(&c, "status", json!({"task": "missing"}))
                .await
                .unwrap_err(),
        );
        assert_eq!(code, ErrorCode::INVALID_PARAMS.0);
        assert!(message.contains("no session"), "{message}");
        c.close().await;
    }
}

/// A long session: questions over several rounds, rejections with long feedback, four
/// stages passed; the briefing still fits in 4 KB and names what an assistant needs.
#[tokio::test]
async fn the_resume_briefing_of_a_long_session_stays_under_4_kib() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Modern, dir.path()).await;
    let v = c
        .ok(start_args(dir.path(), &"Build a todo app. ".repeat(200)))
        .await;
    let sid = v["session_id"].clone();
    let call = |mut args: Value| {
        args["session_id"] = sid.clone();
        c.ok(args)
    };
    let with_questions = |n: usize| {
        let doc = document("PRD", &["Overview"]);
        json!({
            "prd_draft": doc,
            "quality_score": 60,
            "questions": (0..n).map(|i| json!({"id": format!("x{i}"), "question": format!("Question {i}: {}", "why ".repeat(30)), "context": "c"})).collect::<Vec<_>>(),
        })
        .to_string()
    };
    for round in 0..3 {
        let v = call(json!({"action": "submit", "claude_result": with_questions(6)})).await;
        if v["state"] == "clarifying" {
            let answers: serde_json::Map<String, Value> = v["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| (q["id"].as_str().unwrap().to_string(), json!("yes")))
                .collect();
            call(json!({"action": "answer", "answers": answers})).await;
        }
        assert!(round < 3);
    }
    for _ in 0..6 {
        call(json!({"action": "submit", "claude_result": passing_prd()})).await;
        call(json!({"action": "reject", "feedback": "More detail, please. ".repeat(50)})).await;
    }
    call(json!({"action": "submit", "claude_result": passing_prd()})).await;
    call(json!({"action": "confirm"})).await;
    call(json!({"action": "submit", "claude_result": passing_architecture()})).await;
    call(json!({"action": "confirm"})).await;
    call(json!({"action": "submit", "claude_result": "# Sprint Plan\n\n## Sprint 1: All\n- it\n"}))
        .await;
    call(json!({"action": "approve", "scope": "all"})).await;
    let v = call(json!({"action": "status"})).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("dev"), &json!("generating"))
    );
    assert!(v["decisions"].as_array().unwrap().len() > 8, "{v:#}");

    let text = prompt(&c, "resume", json!({})).await.unwrap();
    assert!(text.len() <= 4096, "{} bytes:\n{text}", text.len());
    let task = v["task_name"].as_str().unwrap();
    for needed in [
        format!("task `{task}`"),
        "stage Developer (dev), state generating".to_string(),
        format!(".claude/specs/{task}/01-product-requirements.md"),
        format!(".claude/specs/{task}/02-system-architecture.md"),
        "po confirm: the host".to_string(),
        "sm approve: the host".to_string(),
        "Approved scope: all.".to_string(),
        "Next: ".to_string(),
        "its `role_prompt` says what to write".to_string(),
    ] {
        assert!(text.contains(&needed), "`{needed}` missing from:\n{text}");
    }
    // By task name, the same briefing.
    assert_eq!(
        prompt(&c, "resume", json!({"task": task})).await.unwrap(),
        text
    );
    c.close().await;
}

async fn list_page(
    c: &Client,
    cursor: Option<String>,
) -> (Vec<rmcp::model::Resource>, Option<String>) {
    let r = c
        .peer()
        .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
        .await
        .unwrap();
    (r.resources, r.next_cursor)
}

#[tokio::test]
async fn resources_are_listed_concretely_in_pages_with_templates_beside() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Legacy, dir.path()).await;
    let mut ids = Vec::new();
    for i in 0..57 {
        let v = c
            .ok(start_args(dir.path(), &format!("Task number {i}")))
            .await;
        ids.push(v["session_id"].as_str().unwrap().to_string());
    }
    // The newest has a draft, so its PO document is listed.
    c.ok(json!({"action": "submit", "session_id": ids[56], "claude_result": scored("prd_draft", &document("PRD", &["Overview"]), 50)}))
        .await;

    let (first, cursor) = list_page(&c, None).await;
    assert_eq!(first[0].uri, "bmad://sessions");
    assert_eq!(first[0].mime_type.as_deref(), Some("application/json"));
    assert_eq!(first[1].uri, "bmad://project");
    let sessions: Vec<&str> = first
        .iter()
        .filter(|r| r.uri.matches('/').count() == 3)
        .map(|r| r.uri.as_str())
        .collect();
    assert_eq!(sessions.len(), 50, "a page of sessions");
    assert_eq!(
        sessions[0],
        format!("bmad://sessions/{}", ids[56]),
        "newest first"
    );
    let doc = format!("bmad://sessions/{}/po", ids[56]);
    let po = first
        .iter()
        .find(|r| r.uri == doc)
        .expect("the draft is listed");
    assert_eq!(po.mime_type.as_deref(), Some("text/markdown"));
    assert!(
        po.description.as_deref().unwrap().contains("draft"),
        "{po:?}"
    );
    assert_eq!(
        first.len(),
        2 + 50 + 1,
        "the list, the project, 50 sessions, one document"
    );

    let (second, end) = list_page(&c, cursor).await;
    assert!(end.is_none());
    assert_eq!(second.len(), 7);
    let mut all: Vec<String> = first.iter().chain(&second).map(|r| r.uri.clone()).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 2 + 57 + 1, "every session once, across pages");

    let templates = c.peer().list_all_resource_templates().await.unwrap();
    let t: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(
        t,
        [
            "bmad://sessions/{session_id}",
            "bmad://sessions/{session_id}/{stage}"
        ]
    );
    c.close().await;
}

#[tokio::test]
async fn resources_read_the_sessions_as_stored_and_each_stage_document_as_it_is_now() {
    for era in [Era::Legacy, Era::Modern] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let c = connect(era, &project).await;
        // -32002 until 2025-11-25; -32602 from 2026-07-28 on (SEP-2164).
        let not_found = match era {
            Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND.0,
            Era::Modern => ErrorCode::INVALID_PARAMS.0,
        };
        let v = c.ok(start_args(&project, "Build a todo app")).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let task = v["task_name"].as_str().unwrap().to_string();

        let (mime, text) = read(&c, "bmad://sessions").await.unwrap();
        assert_eq!(mime, "application/json");
        let list: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(list["total"], 1);
        assert_eq!(list["sessions"][0]["task_name"], task.as_str());

        let (mime, text) = read(&c, &format!("bmad://sessions/{sid}")).await.unwrap();
        assert_eq!(mime, "application/json");
        let file = project.join(format!(".bmad-task/session-{sid}.json"));
        assert_eq!(text, std::fs::read_to_string(&file).unwrap(), "as stored");

        // No document yet: named as such.
        let (code, message) = error_code(
            read(&c, &format!("bmad://sessions/{sid}/po"))
                .await
                .unwrap_err(),
        );
        assert_eq!(code, not_found);
        assert!(message.contains("has no po document yet"), "{message}");

        c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
            .await;
        let (mime, draft) = read(&c, &format!("bmad://sessions/{sid}/po"))
            .await
            .unwrap();
        assert_eq!(mime, "text/markdown");
        assert!(draft.starts_with("# PRD"), "{draft}");
        c.ok(json!({"action": "confirm", "session_id": sid})).await;
        // The saved file as it is now, a human's edit included.
        let saved = project.join(format!(".claude/specs/{task}/01-product-requirements.md"));
        std::fs::write(&saved, "# PRD\n\nEdited by the human.\n").unwrap();
        let (_, text) = read(&c, &format!("bmad://sessions/{sid}/po"))
            .await
            .unwrap();
        assert_eq!(text, "# PRD\n\nEdited by the human.\n");
        let (code, message) = error_code(
            read(&c, &format!("bmad://sessions/{sid}/qa"))
                .await
                .unwrap_err(),
        );
        assert_eq!(code, not_found);
        assert!(
            message.contains("at stage architect, generating"),
            "{message}"
        );

        for bad in [
            "bmad://sessions/x".to_string(),
            format!("bmad://sessions/{sid}/nope"),
            "file:///etc/passwd".to_string(),
            "bmad://sessions/00000000-0000-4000-8000-000000000000".to_string(),
        ] {
            let (code, _m) = error_code(read(&c, &bad).await.unwrap_err());
            assert_eq!(code, not_found, "{bad}: {_m}");
        }
        c.close().await;
    }
}

/// Counts `notifications/resources/list_changed` (the 2025 era's way).
#[derive(Clone, Default)]
struct Watcher {
    changed: Arc<AtomicUsize>,
}

impl ClientHandler for Watcher {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }
}

async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 2 s");
}

#[tokio::test]
async fn the_client_hears_when_the_resource_list_changes_in_both_eras() {
    // 2025-11-25: a notification after `start` and after `submit`, none after `status`.
    let dir = tempfile::tempdir().unwrap();
    let watcher = Watcher::default();
    let transport = TokioChildProcess::new(command(dir.path())).unwrap();
    let service = watcher.clone().serve(transport).await.unwrap();
    let call = |args: Value| {
        let Value::Object(m) = args else {
            unreachable!()
        };
        service.call_tool(rmcp::model::CallToolRequestParams::new("bmad-task").with_arguments(m))
    };
    let v = call(start_args(dir.path(), "Build a todo app"))
        .await
        .unwrap();
    let sid = v.structured_content.unwrap()["session_id"].clone();
    let changed = watcher.changed.clone();
    eventually("a list_changed after start", || {
        changed.load(Ordering::SeqCst) == 1
    })
    .await;
    call(json!({"action": "status", "session_id": sid}))
        .await
        .unwrap();
    call(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await
        .unwrap();
    eventually("a list_changed after submit", || {
        changed.load(Ordering::SeqCst) == 2
    })
    .await;
    assert_eq!(changed.load(Ordering::SeqCst), 2, "none for status");
    let _ = service.cancel().await;

    // 2026-07-28: through `subscriptions/listen`.
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Modern, dir.path()).await;
    let mut sub = c
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(sub.acknowledged().resources_list_changed, Some(true));
    c.ok(start_args(dir.path(), "Build a todo app")).await;
    let heard = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("a notification within 5 s")
        .unwrap();
    assert!(
        matches!(
            heard,
            Some(ServerNotification::ResourceListChangedNotification(_))
        ),
        "{heard:?}"
    );
    c.close().await;
}
