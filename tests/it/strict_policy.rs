//! Under `gates = "human"` (approved), with a client that has no dialog, every reply where
//! the human decides names the terminal command instead of telling the host to call the
//! decision, and the host's `confirm` is refused citing the approved policy (not the file's
//! unapproved text), listing only what is legal for the host and saying to call `status`.
#![cfg(unix)]

use std::path::Path;

use serde_json::{json, Value};

use crate::support::terminal::in_terminal;
use crate::support::{connect, passing_prd, start_args, Era};

fn write_config(project: &Path, text: &str) {
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), text).unwrap();
}

fn text(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn under_the_strict_policy_replies_name_the_terminal_and_the_refusal_cites_the_approved_policy(
) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    write_config(&project, "gates = \"human\"\n");
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");

    let c = connect(Era::Legacy, &project).await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let (sid, task) = (v["session_id"].clone(), text(&v, "task_name"));
    let confirm = format!("`bmad-mcp confirm {task}`");
    let reject = format!("`bmad-mcp reject {task} --feedback \"<what should change>\"`");

    // The decision reply: the terminal's commands, for the human and for the host.
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let (step, message) = (text(&v, "next_step"), text(&v, "user_message"));
    for part in [
        &confirm,
        &reject,
        "call `status`",
        "as approved in .bmad-task/config-approved.json",
    ] {
        assert!(step.contains(part), "next_step names {part}: {step}");
    }
    assert!(
        !step.contains("They `confirm`"),
        "never tells the host to confirm: {step}"
    );
    assert!(
        message.contains(&confirm) && message.contains("decide in a terminal"),
        "{message}"
    );
    // `status` says the same.
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert!(text(&v, "next_step").contains(&confirm), "{v:#}");

    // The assistant relaxes the file; the approved policy still holds, and is the one cited.
    write_config(&project, "gates = \"auto\"\n");
    let v = c
        .refused(
            json!({"action": "confirm", "session_id": sid}),
            "human_required",
        )
        .await;
    let error = v["error"]["message"].as_str().unwrap().to_string();
    for part in [
        "`gates = \"human\"` as approved in .bmad-task/config-approved.json",
        "waits for the human's approval and does not apply",
        &confirm,
        &reject,
    ] {
        assert!(error.contains(part), "the error says {part}: {error}");
    }
    // What the model does is its next step's, not the message's, which the person reads.
    assert!(!error.contains("call `status`"), "{error}");
    assert!(!error.contains("gates = \"auto\""), "{error}");
    assert_eq!(v["allowed_actions"], json!(["status"]), "{v:#}");
    assert!(text(&v, "next_step").contains("call `status`"), "{v:#}");
    c.close().await;
}

#[tokio::test]
async fn under_the_strict_policy_a_client_with_a_dialog_is_told_the_human_decides_there() {
    use crate::support::command;
    use crate::support::user::User;
    use rmcp::model::CallToolRequestParams;

    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    write_config(&project, "gates = \"human\"\n");
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let host = User::default();
    let service = host
        .connect(
            rmcp::transport::TokioChildProcess::new(command(&project)).unwrap(),
            Era::Legacy,
        )
        .await;
    let mut last = Value::Null;
    for args in [
        start_args(&project, "Build a todo app"),
        json!({"action": "submit", "claude_result": passing_prd()}),
    ] {
        let mut args = args;
        if let Some(sid) = last.get("session_id") {
            args["session_id"] = sid.clone();
        }
        let Value::Object(args) = args else {
            unreachable!()
        };
        let r = service
            .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(args))
            .await
            .unwrap();
        last = r.structured_content.unwrap();
        crate::support::person_reads(last["user_message"].as_str().unwrap_or_default());
    }
    assert_eq!(last["state"], "awaiting_confirmation", "{last:#}");
    let (step, message) = (text(&last, "next_step"), text(&last, "user_message"));
    assert!(
        step.contains("then call `confirm`: a dialog asks them"),
        "{step}"
    );
    assert!(
        message.contains("you decide in the dialog your assistant opens"),
        "{message}"
    );
    let _ = service.cancel().await;
}
