//! Malformed calls, one table: each is refused with its own error code and a message naming
//! the problem, and the whole sandbox (project and its surroundings) is byte-for-byte the
//! same afterwards. Hostile layouts (symbolic links leading out) and malformed JSON-RPC
//! lines are covered below the table.

use crate::support;

use crate::support::{
    clipped, connect, passing_architecture, passing_prd, start_args, tree_digest, Client, Era, Raw,
    Sandbox,
};
use serde_json::{json, Value};

const UUID_UNKNOWN: &str = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";

/// A whole workflow with small documents; returns the completed session's id.
async fn completed_session(c: &Client, project: &std::path::Path) -> String {
    let v = c.ok(start_args(project, "A finished task")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let with = |mut v: Value| {
        v["session_id"] = json!(sid);
        v
    };
    let (prd, arch) = (passing_prd(), passing_architecture());
    for args in [
        json!({"action": "submit", "claude_result": prd}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": arch}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": "# Sprint Plan\n\n## Sprint 1: All\n- it"}),
        json!({"action": "approve", "scope": "all"}),
        json!({"action": "submit", "claude_result": "# Dev\n\nBuilt it."}),
        json!({"action": "submit", "claude_result": "# Review\n\nReview Status: Pass"}),
        json!({"action": "submit", "claude_result": "# QA\n\nIntent: met\nQuality Score: 90/100"}),
    ] {
        c.ok(with(args)).await;
    }
    let s = c.ok(with(json!({"action": "status"}))).await;
    assert_eq!(s["state"], "completed");
    sid
}

#[tokio::test]
async fn forty_odd_malformed_calls_are_refused_and_change_nothing() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let p = project.to_str().unwrap();
    let c = connect(Era::Modern, project).await;
    let done = completed_session(&c, project).await;
    let v = c.ok(start_args(project, "Build a wiki")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let task = v["task_name"].as_str().unwrap().to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": json!({"prd_draft": "# Wiki", "quality_score": 60, "questions": ["Public or private?"]}).to_string()}))
        .await;
    let v = c.ok(start_args(project, "A fresh task")).await;
    let fresh = v["session_id"].as_str().unwrap().to_string();
    let file = sb.dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();
    let big = |n: usize| "x".repeat(n);

    // (arguments, error code, a piece of the message that names the problem)
    let cases: Vec<(Value, &str, &str)> = vec![
        // Missing fields and wrong types.
        (json!({}), "missing_field", "`action`"),
        (json!({"action": 5}), "invalid_argument", "`action`"),
        (json!({"action": null}), "invalid_argument", "`action`"),
        (json!({"action": "start"}), "missing_field", "`objective`"),
        (
            json!({"action": "start", "objective": "  \n "}),
            "missing_field",
            "`objective`",
        ),
        (
            json!({"action": "start", "objective": 42}),
            "invalid_argument",
            "`objective`",
        ),
        (
            json!({"action": "start", "objective": ["a"]}),
            "invalid_argument",
            "`objective`",
        ),
        (
            json!({"action": "submit", "session_id": fresh}),
            "missing_field",
            "claude_result",
        ),
        (
            json!({"action": "submit", "session_id": fresh, "claude_result": " \n "}),
            "missing_field",
            "non-empty",
        ),
        (
            json!({"action": "submit", "session_id": fresh, "claude_result": "{\"prd_draft\": \"  \", \"quality_score\": 95}"}),
            "empty_document",
            "empty",
        ),
        (
            json!({"action": "submit", "session_id": 123}),
            "invalid_argument",
            "`session_id`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "claude_result": {"prd": 1}}),
            "invalid_argument",
            "`claude_result`",
        ),
        (
            // Without a dialog to ask the human in, no answers is nothing to record.
            json!({"action": "answer", "session_id": sid}),
            "invalid_argument",
            "`answers`",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": "yes"}),
            "invalid_argument",
            "`answers`",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {"q1": 5}}),
            "invalid_argument",
            "answers.q1",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {}}),
            "invalid_argument",
            "`answers`",
        ),
        (
            json!({"action": "confirm", "session_id": sid, "confirmed": "yes"}),
            "invalid_argument",
            "`confirmed`",
        ),
        (
            json!({"action": "approve", "session_id": sid, "approved": 1}),
            "invalid_argument",
            "`approved`",
        ),
        (json!({"action": "status"}), "missing_field", "`session_id`"),
        (
            json!({"action": "status", "session_id": sid, "extra": 1}),
            "unknown_field",
            "`extra`",
        ),
        (
            json!({"action": "status", "session_id": sid, "cwd": 7}),
            "invalid_argument",
            "`cwd`",
        ),
        // Unknown actions.
        (
            json!({"action": "fly", "session_id": sid}),
            "unknown_action",
            "`action`",
        ),
        (
            json!({"action": "START", "objective": "x"}),
            "unknown_action",
            "`action`",
        ),
        (json!({"action": ""}), "unknown_action", "`action`"),
        // Session ids that are not UUIDs, paths among them.
        (
            json!({"action": "status", "session_id": "abc"}),
            "invalid_session_id",
            "not a UUID",
        ),
        (
            json!({"action": "status", "session_id": "../../etc/passwd"}),
            "invalid_session_id",
            "../../etc/passwd",
        ),
        (
            json!({"action": "status", "session_id": "/etc/passwd"}),
            "invalid_session_id",
            "not a UUID",
        ),
        (
            json!({"action": "submit", "session_id": format!("{sid}/../x"), "claude_result": "# x"}),
            "invalid_session_id",
            "not a UUID",
        ),
        (
            json!({"action": "status", "session_id": "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5z"}),
            "invalid_session_id",
            "not a UUID",
        ),
        (
            json!({"action": "status", "session_id": UUID_UNKNOWN}),
            "session_not_found",
            UUID_UNKNOWN,
        ),
        // Stages: paths, unknown names, and a stage other than the current one.
        (
            json!({"action": "submit", "session_id": sid, "stage": "../../x", "claude_result": "# x"}),
            "invalid_stage",
            "`stage`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "stage": "/etc", "claude_result": "# x"}),
            "invalid_stage",
            "`stage`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "stage": "PO", "claude_result": "# x"}),
            "invalid_stage",
            "`stage`",
        ),
        (
            json!({"action": "submit", "session_id": fresh, "stage": "architect", "claude_result": "# x"}),
            "stage_mismatch",
            "architect",
        ),
        (
            json!({"action": "submit", "session_id": fresh, "stage": "qa", "codex_result": "# x"}),
            "stage_mismatch",
            "`po`",
        ),
        // Task names: paths, bad characters, too long, unknown.
        (
            json!({"action": "status", "task_name": "../../etc"}),
            "invalid_task_name",
            "`task_name`",
        ),
        (
            json!({"action": "status", "task_name": "/tmp/x"}),
            "invalid_task_name",
            "`task_name`",
        ),
        (
            json!({"action": "status", "task_name": "Has Spaces"}),
            "invalid_task_name",
            "`task_name`",
        ),
        (
            json!({"action": "status", "task_name": big(51)}),
            "invalid_task_name",
            "`task_name`",
        ),
        (
            json!({"action": "status", "task_name": "no-such-task"}),
            "session_not_found",
            "no-such-task",
        ),
        // Project directories.
        (
            json!({"action": "start", "objective": "x", "cwd": "relative/path"}),
            "invalid_cwd",
            "absolute",
        ),
        (
            json!({"action": "start", "objective": "x", "cwd": "/no/such/dir"}),
            "invalid_cwd",
            "no such directory",
        ),
        (
            json!({"action": "start", "objective": "x", "cwd": file}),
            "invalid_cwd",
            "not a directory",
        ),
        (json!({"action": "list", "cwd": ""}), "invalid_cwd", "`cwd`"),
        (
            json!({"action": "status", "session_id": sid, "cwd": "../project"}),
            "invalid_cwd",
            "absolute",
        ),
        // Over the limits.
        (
            json!({"action": "start", "objective": big(4097), "cwd": p}),
            "too_large",
            "`objective`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "claude_result": big(4 * 1024 * 1024 + 1)}),
            "too_large",
            "`claude_result`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "codex_result": big(4 * 1024 * 1024 + 1)}),
            "too_large",
            "`codex_result`",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {"q1": big(64 * 1024 + 1)}}),
            "too_large",
            "answers.q1",
        ),
        (
            json!({"action": "reject", "session_id": sid, "feedback": big(64 * 1024 + 1)}),
            "too_large",
            "`feedback`",
        ),
        (
            json!({"action": "approve", "session_id": sid, "scope": big(64 * 1024 + 1)}),
            "too_large",
            "`scope`",
        ),
        (
            json!({"action": "list", "cwd": format!("/{}", big(64 * 1024))}),
            "too_large",
            "`cwd`",
        ),
        // Answers to questions that were never asked.
        (
            json!({"action": "answer", "session_id": sid, "answers": {"q9": "x"}}),
            "unknown_question",
            "q9",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {"q1": "x", "../q1": "y"}}),
            "unknown_question",
            "../q1",
        ),
        // Actions that the state does not allow.
        (
            json!({"action": "approve", "session_id": sid}),
            "invalid_state",
            "clarifying",
        ),
        (
            json!({"action": "confirm", "task_name": task}),
            "invalid_state",
            "clarifying",
        ),
        // Every session action after completion.
        (
            json!({"action": "submit", "session_id": done, "codex_result": "# QA again"}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "answer", "session_id": done, "answers": {"q1": "x"}}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "confirm", "session_id": done}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "confirm_save", "session_id": done}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "confirm", "session_id": done, "confirmed": false, "feedback": "no"}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "approve", "session_id": done, "scope": "all"}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "approve", "session_id": done, "approved": false}),
            "invalid_state",
            "completed",
        ),
        (
            json!({"action": "reject", "session_id": done, "feedback": "redo"}),
            "invalid_state",
            "completed",
        ),
    ];
    assert!(cases.len() >= 40);
    let mut seen_codes = std::collections::BTreeSet::new();
    for (args, code, needle) in &cases {
        let before = tree_digest(sb.dir.path());
        let shown = clipped(args);
        let v = c.refused(args.clone(), code).await;
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{shown}: `{needle}` not in: {msg}");
        assert!(
            msg.len() < 600,
            "{shown}: the message quotes the input whole: {} bytes",
            msg.len()
        );
        assert!(v["user_message"].as_str().unwrap().contains(code));
        assert_eq!(
            tree_digest(sb.dir.path()),
            before,
            "{shown} changed the sandbox"
        );
        if *code == "invalid_state" {
            let state = if v["session_id"] == done.as_str() {
                "completed"
            } else {
                "clarifying"
            };
            assert_eq!(v["state"], state, "{v:#}");
            let allowed = if state == "completed" {
                json!(["status"])
            } else {
                json!(["answer", "status"])
            };
            assert_eq!(v["allowed_actions"], allowed, "{v:#}");
        }
        seen_codes.insert(*code);
    }
    eprintln!(
        "{} malformed calls, {} distinct codes",
        cases.len(),
        seen_codes.len()
    );
    // The good session and the finished one are untouched and still usable.
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(s["state"], "clarifying");
    assert_eq!(s["session"]["history"].as_array().unwrap().len(), 2);
    c.close().await;
    sb.assert_confined(&["a-file"]);
}

#[tokio::test]
async fn reading_a_project_never_creates_files_in_it() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(json!({"action": "list"})).await;
    assert_eq!(v["sessions"], json!([]));
    c.refused(
        json!({"action": "status", "task_name": "nothing"}),
        "session_not_found",
    )
    .await;
    c.refused(
        json!({"action": "status", "session_id": UUID_UNKNOWN}),
        "session_not_found",
    )
    .await;
    assert!(sb.project.read_dir().unwrap().next().is_none());
    c.close().await;
    sb.assert_confined(&[]);
}

/// `.claude/specs` or `.bmad-task` replaced by a symbolic link that leads out of the
/// project, before the first call or under a live session: every writing call is refused
/// with `unsafe_path`, and nothing appears outside.
#[cfg(unix)]
#[tokio::test]
async fn symlinked_areas_leading_outside_are_refused() {
    use std::os::unix::fs::symlink;
    for area in [".claude/specs", ".bmad-task"] {
        // Before anything exists.
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.project.join(".claude")).unwrap();
        symlink(&sb.outside, sb.project.join(area)).unwrap();
        let c = connect(Era::Legacy, &sb.project).await;
        let before = tree_digest(sb.dir.path());
        let v = c
            .refused(start_args(&sb.project, "Escape"), "unsafe_path")
            .await;
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("symbolic link") && msg.contains(area), "{msg}");
        assert_eq!(tree_digest(sb.dir.path()), before, "{area}");
        assert!(std::fs::read_dir(&sb.outside).unwrap().next().is_none());
        c.close().await;

        // Swapped in under a live session.
        let sb = Sandbox::new();
        let c = connect(Era::Modern, &sb.project).await;
        let v = c.ok(start_args(&sb.project, "Escape later")).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let real = sb.project.join(area);
        let moved = sb.dir.path().join("moved-away");
        std::fs::rename(&real, &moved).unwrap();
        if area == ".bmad-task" {
            // The session must still be found to be refused for the path, not for absence.
            std::fs::create_dir_all(&sb.outside).unwrap();
            for e in std::fs::read_dir(&moved).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_file() {
                    std::fs::copy(e.path(), sb.outside.join(e.file_name())).unwrap();
                }
            }
        }
        symlink(&sb.outside, &real).unwrap();
        let before = tree_digest(sb.dir.path());
        let prd = json!({"prd_draft": "# PRD", "quality_score": 95}).to_string();
        let v = c
            .refused(
                json!({"action": "submit", "session_id": sid, "claude_result": prd}),
                "unsafe_path",
            )
            .await;
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("symbolic link"));
        assert_eq!(
            tree_digest(sb.dir.path()),
            before,
            "{area} under a live session"
        );
        c.close().await;
    }
}

/// What a client library would never send. A line that is not JSON is skipped without a
/// reply when no id can be read from it (as the MCP SDKs do: nobody could match the answer,
/// and answering garbage can start an error storm); one whose id can be read (a request cut
/// short, or followed by stray bytes) is answered -32700 with that id, since a client waits
/// for it. JSON that is not a valid request gets exactly one JSON-RPC error; the server
/// keeps serving and nothing is written. `protocol.rs` covers the rest of the wire.
#[test]
fn malformed_json_rpc_lines_are_skipped_or_answered_with_protocol_errors() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let before = tree_digest(sb.dir.path());
    let mut next_id = 100;
    // Sends a ping and returns the replies that came before its answer.
    let mut ping = |raw: &mut Raw| -> Vec<Value> {
        next_id += 1;
        raw.send_line(&json!({"jsonrpc": "2.0", "id": next_id, "method": "ping"}).to_string());
        let mut earlier = Vec::new();
        loop {
            let r = raw.next_reply();
            if r["id"] == next_id {
                assert!(r["result"].is_object(), "{r}");
                return earlier;
            }
            earlier.push(r);
        }
    };
    // Skipped: the ping's answer is the very next line.
    let unparsable: Vec<&[u8]> = vec![
        b"this is not json\n",
        b"\xff\xfe\x00garbage\n",
        b"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"\n",
        b"\n",
        b"   \n",
    ];
    for bytes in unparsable {
        raw.send_bytes(bytes);
        let earlier = ping(&mut raw);
        assert!(
            earlier.is_empty(),
            "{:?} → {earlier:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    // Not JSON, but the id is readable: one parse error carrying it.
    let with_id: [(&[u8], i64); 2] = [
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\"\n", 1),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\": {\"name\": \"bmad-task\", \"arguments\": {\"action\": \"start\", \"objective\": \"x\"}}}}}\n", 2),
    ];
    for (bytes, id) in with_id {
        raw.send_bytes(bytes);
        let earlier = ping(&mut raw);
        assert_eq!(earlier.len(), 1, "{earlier:?}");
        assert_eq!(earlier[0]["id"], id, "{earlier:?}");
        assert_eq!(earlier[0]["error"]["code"], -32700, "{earlier:?}");
    }
    // Requests that cannot be served: a JSON-RPC error with the code and the field.
    let invalid = [
        (
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no-such-tool", "arguments": {}}}),
            -32602,
            "no-such-tool",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
            -32601,
            "",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "bmad-task", "arguments": "start"}}),
            -32602,
            "`params.arguments` must be an object",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"arguments": {"action": "list"}}}),
            -32602,
            "`params.name` is missing",
        ),
    ];
    for (message, code, needle) in invalid {
        let r = raw.request(message.clone());
        assert_eq!(r["error"]["code"], code, "{message} → {r}");
        let text = r["error"]["message"].as_str().unwrap_or_default();
        assert!(text.contains(needle), "{message} → {r}");
    }
    // Well-formed JSON that is no JSON-RPC request: exactly one Invalid Request error, with
    // the id when there is one, and the server goes on answering.
    for (line, id) in [
        ("[]", json!(null)),
        ("42", json!(null)),
        ("{\"hello\": \"world\"}", json!(null)),
        ("{\"jsonrpc\": \"2.0\", \"id\": 9}", json!(9)),
    ] {
        raw.send_line(line);
        let earlier = ping(&mut raw);
        assert_eq!(earlier.len(), 1, "{line} → {earlier:?}");
        assert_eq!(earlier[0]["error"]["code"], -32600, "{line} → {earlier:?}");
        assert_eq!(earlier[0]["id"], id, "{line} → {earlier:?}");
    }
    assert_eq!(
        tree_digest(sb.dir.path()),
        before,
        "malformed lines wrote something"
    );
    let (status, rest) = raw.close();
    assert!(status.success(), "{status:?}");
    assert!(rest.is_empty(), "{rest:?}");
    sb.assert_confined(&[]);
}

/// A session file damaged by hand or by a bad merge, in each shape serde can meet: every
/// call on it is `session_corrupt`, naming the file and the field, the file is left as it
/// is, and the server goes on answering. Never a panic, never `internal`.
#[tokio::test]
async fn damaged_session_files_are_corrupt_naming_the_file_and_the_field() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Legacy, project).await;
    let prd = json!({"prd_draft": "# PRD\n\n## Executive Summary\nDone.", "quality_score": 70})
        .to_string();
    type Damage = fn(&mut Value);
    let shapes: [(&str, Damage, &str); 8] = [
        (
            "a stage key missing",
            |v| {
                v["stages"].as_object_mut().unwrap().remove("architect");
            },
            "field `stages`: stage `architect` is missing",
        ),
        (
            "an unknown stage key",
            |v| v["stages"]["deploy"] = json!({"status": "pending", "iteration": 0}),
            "field `stages`: unknown stage `deploy`, expected one of spec, bug, po, architect",
        ),
        (
            "a field of the wrong type",
            |v| v["stages"]["po"]["iteration"] = json!("three"),
            "field `stages.po.iteration`: invalid type: string \"three\"",
        ),
        (
            "an unknown state",
            |v| v["current_state"] = json!("flying"),
            "field `current_state`: unknown variant `flying`",
        ),
        (
            "an unknown action in the history",
            |v| v["history"][0]["action"] = json!("explode"),
            "field `history[0].action`: unknown variant `explode`",
        ),
        (
            "stages that are not an object",
            |v| v["stages"] = json!([1, 2]),
            "field `stages`: invalid type: sequence",
        ),
        (
            "a session that is not an object",
            |v| *v = json!(null),
            "invalid type: null",
        ),
        (
            "a negative count",
            |v| v["stages"]["po"]["iteration"] = json!(-1),
            "field `stages.po.iteration`: invalid value: integer `-1`",
        ),
    ];
    for (what, damage, want) in shapes {
        let v = c.ok(start_args(project, what)).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd}))
            .await;
        let rel = format!(".bmad-task/session-{sid}.json");
        let path = project.join(&rel);
        let mut stored = support::read_json(&path);
        damage(&mut stored);
        let text = serde_json::to_string_pretty(&stored).unwrap();
        std::fs::write(&path, &text).unwrap();
        for call in [
            json!({"action": "status", "session_id": sid}),
            json!({"action": "submit", "session_id": sid, "claude_result": prd}),
        ] {
            let e = c.refused(call, "session_corrupt").await;
            let msg = e["error"]["message"].as_str().unwrap();
            assert!(msg.starts_with(&rel), "{what}: {msg}");
            assert!(msg.contains(want), "{what}: {msg}");
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "{what}");
    }
    // A stage and a state that never go together (a hand edit) read, and allow only
    // `status`; and counts at their largest do not overflow.
    let v = c.ok(start_args(project, "Odd but readable")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let path = project.join(format!(".bmad-task/session-{sid}.json"));
    let mut stored = support::read_json(&path);
    stored["current_state"] = json!("awaiting_approval");
    std::fs::write(&path, stored.to_string()).unwrap();
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(s["pending_user_actions"], json!([]));
    let e = c
        .refused(
            json!({"action": "approve", "session_id": sid}),
            "invalid_state",
        )
        .await;
    assert_eq!(e["allowed_actions"], json!(["status"]));
    stored["current_state"] = json!("refining");
    stored["stages"]["po"]["iteration"] = json!(u32::MAX);
    std::fs::write(&path, stored.to_string()).unwrap();
    // The round cap counts the rounds below the gate: with none yet, the draft is revised,
    // its prompt numbered without overflow …
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": prd}))
        .await;
    assert_eq!(v["state"], "refining", "{v:#}");
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains(&u32::MAX.to_string()));
    // … and at its largest, the human decides.
    let mut stored = support::read_json(&path);
    stored["stages"]["po"]["below_gate"] = json!(u32::MAX);
    std::fs::write(&path, stored.to_string()).unwrap();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": prd}))
        .await;
    assert_eq!(v["iteration"], json!(u32::MAX));
    assert_eq!(v["state"], "awaiting_confirmation", "past the round cap");
    c.close().await;
}
