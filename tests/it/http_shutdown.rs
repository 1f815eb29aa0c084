//! SIGTERM to `serve --http` while a large submission is being handled: the call
//! finishes and is answered, the files are whole, and the process exits 0.
//!
//! The test holds the project lock itself, so the submission is provably still waiting
//! when the signal arrives; it lets go only after sending SIGTERM.

use crate::support;

use crate::support::http::{raw, tool_call, Server, CALL_HEADERS};
use crate::support::{read_json, Sandbox};
use serde_json::json;

fn prd(size: usize) -> String {
    let mut doc = String::from("# PRD\n\n## Executive Summary\nA notes app.\n");
    while doc.len() < size {
        doc.push_str("- a requirement that keeps the document long enough to take a while\n");
    }
    json!({"prd_draft": doc, "quality_score": 70, "questions": ["Which platforms?"]}).to_string()
}

#[test]
fn sigterm_during_a_large_submit_finishes_it_answers_and_exits_zero() {
    let sb = Sandbox::new();
    let mut server = Server::start(
        &["--root", sb.project.to_str().unwrap()],
        &[("RUST_LOG", "bmad_mcp=debug")],
    );
    let start = tool_call(1, json!({"action": "start", "objective": "Notes app"})).to_string();
    let answer = raw(server.addr, "POST", &CALL_HEADERS, start.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.body);
    let sid = answer.message()["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The start's own line, so that the next one is the submit's.
    server.wait_for("tool call received");

    // Hold the project's lock: the submit will wait for it.
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(sb.project.join(".bmad-task/.lock"))
        .unwrap();
    lock.lock().unwrap();

    let addr = server.addr;
    let submit = tool_call(
        2,
        json!({"action": "submit", "session_id": sid, "claude_result": prd(1 << 20)}),
    )
    .to_string();
    let call = std::thread::spawn(move || raw(addr, "POST", &CALL_HEADERS, submit.as_bytes()));
    // The server has the whole request and is handling the call.
    server.wait_for("tool call received");
    server.terminate();
    server.wait_for("stopping: finishing the requests being answered");
    lock.unlock().unwrap();
    drop(lock);

    let answer = call.join().unwrap();
    assert_eq!(answer.status, 200, "{}", answer.body);
    let reply = answer.message();
    assert_eq!(
        reply["result"]["structuredContent"]["state"], "clarifying",
        "{reply:#}"
    );
    let status = server.wait_exit();
    assert!(status.success(), "exit status {status:?}");

    let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(s["current_state"], "clarifying");
    assert_eq!(s["history"].as_array().unwrap().len(), 2);
    let r = &s["stages"]["po"]["claude_result_ref"];
    let size = std::fs::metadata(sb.project.join(r["file_path"].as_str().unwrap()))
        .unwrap()
        .len();
    assert!(
        size > 1 << 20,
        "the whole submission was kept: {size} bytes"
    );
    for f in support::files_under(&sb.project) {
        if f.ends_with(".json") {
            read_json(&sb.project.join(&f));
        }
        assert!(!f.contains(".bmad-tmp-"), "a temporary file was left: {f}");
    }
    sb.assert_confined(&[]);
}

/// A legacy client keeps its session's event stream open; SIGTERM still ends the server
/// (the stream is closed once nothing is being answered), with status 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_an_open_legacy_session_exits_zero() {
    let sb = Sandbox::new();
    let mut server = Server::start(&["--root", sb.project.to_str().unwrap()], &[]);
    let c = server
        .connect(support::Era::Legacy, None, &sb.project)
        .await;
    c.ok(json!({"action": "start", "objective": "Open session"}))
        .await;
    server.terminate();
    let status = tokio::task::spawn_blocking(move || server.wait_exit())
        .await
        .unwrap();
    assert!(status.success(), "exit status {status:?}");
    drop(c);
}
