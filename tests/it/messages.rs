//! Messages match the rules, through the real binary: the task name drops a leading
//! article; a stage reads exactly the document keys its error lists; the PRD prompt claims
//! only the sections the server checks; what the human reads carries no tool syntax; errors
//! name files inside the project by their project-relative path.

use crate::support::{
    connect, document, passing_prd, scored, start_args, Client, Era, Sandbox, ARCHITECTURE_SECTIONS,
};
use serde_json::{json, Value};

async fn started(c: &Client, sb: &Sandbox, objective: &str) -> (Value, String) {
    let v = c.ok(start_args(&sb.project, objective)).await;
    (
        v["session_id"].clone(),
        v["task_name"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn the_task_name_drops_a_leading_article() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    for (objective, want) in [
        ("A todo app", "todo-app"),
        ("An invoice tracker", "invoice-tracker"),
        ("The changelog bot", "changelog-bot"),
        ("Build a todo app", "build-a-todo-app"),
        ("Theme editor", "theme-editor"),
    ] {
        let (_, task) = started(&c, &sb, objective).await;
        assert_eq!(task, want, "{objective}");
        assert!(sb.project.join(".claude/specs").join(want).is_dir());
    }
    c.close().await;
}

#[tokio::test]
async fn a_stage_reads_exactly_the_document_keys_its_error_lists() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let (sid, _) = started(&c, &sb, "Build a todo app").await;
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    c.ok(json!({"action": "confirm", "session_id": sid})).await;
    // At `architect`, the PRD's key is another stage's: refused, and the keys named.
    let design = document("Architecture", &ARCHITECTURE_SECTIONS);
    let e = c
        .refused(
            json!({"action": "submit", "session_id": sid, "claude_result": scored("prd_draft", &design, 95)}),
            "missing_field",
        )
        .await;
    let message = e["error"]["message"].as_str().unwrap();
    let listed = message
        .split("put the document in ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("{message}"));
    let keys: Vec<&str> = listed.split(", ").map(|k| k.trim_matches('`')).collect();
    assert_eq!(
        keys,
        [
            "architecture_draft",
            "architecture_updated",
            "draft",
            "result",
            "content"
        ],
        "{message}"
    );
    assert!(
        message.contains("`prd_draft`"),
        "the key used is named: {message}"
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(
        (&s["stage"], &s["state"]),
        (&json!("architect"), &json!("generating"))
    );
    // Each key listed is read: the last one, and the stage's own second one.
    for key in ["content", "architecture_updated"] {
        let v = c
            .ok(json!({"action": "submit", "session_id": sid, "claude_result": scored(key, &design, 95)}))
            .await;
        assert_eq!(v["state"], "awaiting_confirmation", "{key}: {v:#}");
        c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Once more."}))
            .await;
    }
    c.close().await;
}

#[tokio::test]
async fn the_prd_prompt_claims_the_sections_the_server_checks() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let prompt = v["role_prompt"].as_str().unwrap().to_string();
    let claim = "The server checks these six headings, each with text under it:";
    let claimed: Vec<String> = prompt
        .split(claim)
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("the prompt says what the server checks: {prompt}"))
        .split(',')
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    // A PRD with none of them: the server names what it checks as missing.
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": scored("prd_draft", "# PRD\n\nA todo app.", 95)}))
        .await;
    let missing: Vec<String> = v["missing_sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(claimed, missing, "{prompt}");
    c.close().await;
}

/// Tool syntax a person should never be asked to type: backquoted actions and fields,
/// `action: …`, JSON.
fn assert_for_people(text: &str, what: &str) {
    for tool in [
        "`confirm`",
        "`reject`",
        "`answer`",
        "`approve`",
        "`submit`",
        "`feedback`",
        "`checks`",
        "`scope`",
        "action:",
        "{\"",
    ] {
        assert!(!text.contains(tool), "{what} shows {tool}: {text}");
    }
}

#[tokio::test]
async fn what_the_human_reads_names_no_tool_syntax() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let (sid, _) = started(&c, &sb, "Build a todo app").await;
    let call = |args: Value| {
        let mut args = args;
        args["session_id"] = sid.clone();
        args
    };
    let asking = json!({"prd_draft": "# PRD\n\n## Executive Summary\nTodo.", "quality_score": 70, "questions": ["Which platforms?"]}).to_string();
    let v = c
        .ok(call(json!({"action": "submit", "claude_result": asking})))
        .await;
    assert_eq!(v["state"], "clarifying");
    assert_for_people(v["user_message"].as_str().unwrap(), "clarifying");
    c.ok(call(json!({"action": "answer", "answers": {"q1": "Web"}})))
        .await;
    let v = c
        .ok(call(
            json!({"action": "submit", "claude_result": passing_prd()}),
        ))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    assert_for_people(v["user_message"].as_str().unwrap(), "a passing document");
    c.ok(call(json!({"action": "reject", "feedback": "Shorter."})))
        .await;
    let low = scored("prd_updated", "# PRD\n\nShort.", 60);
    // The first draft was below the gate too: four more reach the round cap.
    let mut v = Value::Null;
    for _ in 0..4 {
        v = c
            .ok(call(json!({"action": "submit", "claude_result": low})))
            .await;
    }
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_for_people(v["user_message"].as_str().unwrap(), "the round cap");
    c.ok(call(json!({"action": "confirm"}))).await;
    let arch = scored(
        "architecture_draft",
        &document("Architecture", &ARCHITECTURE_SECTIONS),
        95,
    );
    c.ok(call(json!({"action": "submit", "claude_result": arch})))
        .await;
    c.ok(call(json!({"action": "confirm"}))).await;
    let v = c
        .ok(call(
            json!({"action": "submit", "claude_result": "# Plan\n\n## Sprint 1: Core\n- a\n"}),
        ))
        .await;
    assert_eq!(v["state"], "awaiting_approval");
    assert_for_people(v["user_message"].as_str().unwrap(), "the sprint plan");
    c.ok(call(json!({"action": "approve", "scope": "all"})))
        .await;
    c.ok(call(
        json!({"action": "submit", "claude_result": "# Implementation Report\n\nBuilt."}),
    ))
    .await;
    let v = c
        .ok(call(
            json!({"action": "submit", "claude_result": "# Code Review\n\nReview Status: Fail"}),
        ))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    assert_for_people(v["user_message"].as_str().unwrap(), "a failing review");
    c.close().await;
}

#[tokio::test]
async fn errors_name_files_inside_the_project_by_their_relative_path() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let (sid, _) = started(&c, &sb, "Build a todo app").await;
    // A file where the server keeps its drafts: the write fails, and says where.
    std::fs::write(sb.project.join(".bmad-task/temp"), "in the way").unwrap();
    let e = c
        .refused(
            json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}),
            "storage_error",
        )
        .await;
    let message = e["error"]["message"].as_str().unwrap();
    let absolute = sb.project.canonicalize().unwrap();
    assert!(message.contains(" .bmad-task/temp"), "{message}");
    assert!(
        !message.contains(absolute.to_str().unwrap())
            && !message.contains(sb.project.to_str().unwrap()),
        "{message}"
    );
    c.close().await;
}
