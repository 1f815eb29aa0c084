//! Refusals through the real server: each is a tool error with a code and a message naming
//! the problem, the session's state where one is known, and no change on disk.

mod common;

use common::{connect, start_args, tree_digest, Era};
use serde_json::{json, Value};

#[tokio::test]
async fn refused_calls_change_nothing_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let p = project.to_str().unwrap();
    let c = connect(Era::Modern, project).await;
    let v = c.ok(start_args(project, "Build a wiki")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": "{\"prd_draft\": \"# Wiki\", \"quality_score\": 60, \"questions\": [\"Public or private?\"]}"}))
        .await;

    let file = project.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"action": "approve", "session_id": sid}),
            "invalid_state",
            "clarifying",
        ),
        (
            json!({"action": "confirm", "session_id": sid}),
            "invalid_state",
            "allowed actions: answer, status",
        ),
        (
            json!({"action": "submit", "session_id": sid, "claude_result": "# x"}),
            "invalid_state",
            "`submit`",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {"q7": "x"}}),
            "unknown_question",
            "q7",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": {}}),
            "invalid_argument",
            "`answers`",
        ),
        (
            json!({"action": "status", "session_id": "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f"}),
            "session_not_found",
            "6f1c2d3e",
        ),
        (
            json!({"action": "status", "task_name": "no-such-task"}),
            "session_not_found",
            "no-such-task",
        ),
        (
            json!({"action": "status", "session_id": "../../etc/passwd"}),
            "invalid_session_id",
            "`session_id`",
        ),
        (
            json!({"action": "status", "session_id": sid, "cwd": "relative/path"}),
            "invalid_cwd",
            "absolute",
        ),
        (
            json!({"action": "start", "objective": "x", "cwd": "/no/such/dir"}),
            "invalid_cwd",
            "no such directory",
        ),
        (
            json!({"action": "start", "objective": "x", "cwd": file.to_str().unwrap()}),
            "invalid_cwd",
            "not a directory",
        ),
        (
            json!({"action": "list", "cwd": "relative"}),
            "invalid_cwd",
            "`cwd`",
        ),
        (
            json!({"action": "fly", "session_id": sid}),
            "unknown_action",
            "`action`",
        ),
        (
            json!({"action": "submit", "session_id": sid, "stage": "../../x", "claude_result": "# x"}),
            "invalid_stage",
            "`stage`",
        ),
        (
            json!({"action": "start", "objective": "x".repeat(5000), "cwd": p}),
            "too_large",
            "`objective`",
        ),
    ];
    for (args, code, needle) in cases {
        let before = tree_digest(project);
        let v = c.refused(args.clone(), code).await;
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(needle), "{args}: {msg}");
        assert!(v["user_message"].as_str().unwrap().contains(code));
        assert_eq!(tree_digest(project), before, "{args} changed the project");
        if code == "invalid_state" {
            assert_eq!(v["state"], "clarifying");
            assert_eq!(v["allowed_actions"], json!(["answer", "status"]));
        }
    }
    c.close().await;
}

#[tokio::test]
async fn reading_a_project_never_creates_files_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Legacy, dir.path()).await;
    let v = c.ok(json!({"action": "list"})).await;
    assert_eq!(v["sessions"], json!([]));
    c.refused(
        json!({"action": "status", "task_name": "nothing"}),
        "session_not_found",
    )
    .await;
    assert!(dir.path().read_dir().unwrap().next().is_none());
    c.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_specs_directory_leading_outside_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".claude/specs")).unwrap();
    let c = connect(Era::Modern, dir.path()).await;
    let before = tree_digest(dir.path());
    let v = c
        .refused(start_args(dir.path(), "Escape"), "unsafe_path")
        .await;
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("symbolic link"));
    assert_eq!(tree_digest(dir.path()), before);
    assert!(outside.path().read_dir().unwrap().next().is_none());

    // The same for the state directory.
    let dir2 = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir2.path().join(".bmad-task")).unwrap();
    c.refused(start_args(dir2.path(), "Escape"), "unsafe_path")
        .await;
    assert!(outside.path().read_dir().unwrap().next().is_none());
    c.close().await;
}
