//! Shutdown: when the host closes stdin in the middle of a session, the server exits with
//! status 0, and everything it acknowledged is on disk for the next server.

use crate::support::{read_json, Raw, Sandbox};
use serde_json::{json, Value};

fn prd(score: u32, size: usize) -> String {
    let mut doc = String::from("# PRD\n\n## Executive Summary\nA notes app.\n");
    while doc.len() < size {
        doc.push_str("- a requirement that keeps the document long enough to take a while\n");
    }
    json!({"prd_draft": doc, "quality_score": score, "questions": ["Which platforms?"]}).to_string()
}

/// A server in a fresh sandbox with one session started.
fn started() -> (Sandbox, Raw, String) {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let v = raw.call(
        1,
        json!({"action": "start", "objective": "Notes app", "cwd": sb.project}),
    );
    let sid = v["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    (sb, raw, sid)
}

#[test]
fn closing_stdin_mid_session_exits_zero_and_keeps_what_was_acknowledged() {
    let (sb, mut raw, sid) = started();
    let v = raw.call(
        2,
        json!({"action": "submit", "session_id": sid, "claude_result": prd(70, 1000)}),
    );
    assert_eq!(v["result"]["structuredContent"]["state"], "clarifying");
    let (status, rest) = raw.close();
    assert!(status.success(), "exit status {status:?}");
    assert!(rest.is_empty(), "{rest:?}");
    let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(s["current_state"], "clarifying");
    assert_eq!(s["history"].as_array().unwrap().len(), 2);
    sb.assert_confined(&[]);
}

/// Requests still in flight when stdin closes are finished and answered before the process
/// exits, and what they answered is what is stored.
#[test]
fn requests_in_flight_when_stdin_closes_are_finished_and_answered() {
    let (sb, mut raw, sid) = started();
    // A large submission and a second start, sent back to back, then stdin closes at once.
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "submit", "session_id": sid, "claude_result": prd(70, 1 << 20)}}})
            .to_string(),
    );
    raw.send_line(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "start", "objective": "Second task", "cwd": sb.project}}})
            .to_string(),
    );
    let (status, replies) = raw.close();
    assert!(status.success(), "exit status {status:?}");
    let by_id = |id: i64| -> &Value {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("request {id} was not answered: {replies:?}"))
    };
    assert_eq!(
        by_id(2)["result"]["structuredContent"]["state"],
        "clarifying"
    );
    let second = by_id(3)["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(s["current_state"], "clarifying");
    let r = &s["stages"]["po"]["claude_result_ref"];
    let size = std::fs::metadata(sb.project.join(r["file_path"].as_str().unwrap()))
        .unwrap()
        .len();
    assert!(
        size > 1 << 20,
        "the whole submission was kept: {size} bytes"
    );
    assert!(sb
        .project
        .join(format!(".bmad-task/session-{second}.json"))
        .exists());
    let mapping = read_json(&sb.project.join(".bmad-task/task-mapping.json"));
    assert_eq!(mapping.as_object().unwrap().len(), 2);
    sb.assert_confined(&[]);
}
