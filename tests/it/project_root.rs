//! Finding the project as git does: a server started in a subfolder uses the nearest
//! ancestor holding `.bmad-task/`, else the nearest holding `.git`, else the folder itself;
//! one started in `/` or in a folder it may not write asks to be told the project, by name
//! of the argument and the variables.

use crate::support;

use std::path::Path;

use crate::support::{connect_with, Era};
use serde_json::json;

/// The server started in `dir`, with no project variables set.
async fn started_in(dir: &Path) -> support::Client {
    connect_with(Era::Legacy, support::command(dir), dir).await
}

#[tokio::test]
async fn a_server_started_in_a_subfolder_uses_the_project_above() {
    let top = tempfile::tempdir().unwrap();
    let top = top.path().canonicalize().unwrap();
    // A git repository whose project already has sessions at its root.
    std::fs::create_dir_all(top.join("repo/.git")).unwrap();
    std::fs::create_dir_all(top.join("repo/app/src/deep")).unwrap();
    let c = started_in(&top.join("repo")).await;
    let first = c
        .ok(json!({"action": "start", "objective": "At the root"}))
        .await;
    c.close().await;
    assert!(top.join("repo/.bmad-task").is_dir());

    let c = started_in(&top.join("repo/app/src/deep")).await;
    let v = c
        .ok(json!({"action": "start", "objective": "From deep inside"}))
        .await;
    let listed = c.ok(json!({"action": "list"})).await;
    assert_eq!(listed["total"], 2, "{listed}");
    c.ok(json!({"action": "status", "session_id": first["session_id"]}))
        .await;
    c.close().await;
    assert!(!top.join("repo/app/src/deep/.bmad-task").exists());
    assert!(!top.join("repo/app/.bmad-task").exists());
    assert!(top
        .join("repo/.claude/specs")
        .join(v["task_name"].as_str().unwrap())
        .is_dir());

    // A `.bmad-task/` nearer than `.git` wins (a project inside a monorepo).
    std::fs::create_dir_all(top.join("repo/app/.bmad-task")).unwrap();
    let c = started_in(&top.join("repo/app/src")).await;
    c.ok(json!({"action": "start", "objective": "Inner project"}))
        .await;
    c.close().await;
    assert!(top.join("repo/app/.claude/specs/inner-project").is_dir());

    // No marker anywhere: the folder itself.
    std::fs::create_dir_all(top.join("plain/sub")).unwrap();
    let c = started_in(&top.join("plain/sub")).await;
    c.ok(json!({"action": "start", "objective": "Plain"})).await;
    c.close().await;
    assert!(top.join("plain/sub/.bmad-task").is_dir());
}

fn says_how_to_name_the_project(message: &str) {
    for needle in ["`cwd`", "BMAD_PROJECT_ROOT", "CLAUDE_PROJECT_DIR"] {
        assert!(message.contains(needle), "{needle} missing from: {message}");
    }
}

#[tokio::test]
async fn a_server_started_in_the_root_or_a_read_only_folder_asks_for_the_project() {
    let c = started_in(Path::new("/")).await;
    let e = c.refused(json!({"action": "list"}), "invalid_cwd").await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("file system's root"), "{msg}");
    says_how_to_name_the_project(msg);
    // Naming the project works from there.
    let dir = tempfile::tempdir().unwrap();
    let v = c
        .ok(json!({"action": "start", "objective": "Named", "cwd": dir.path().to_str().unwrap()}))
        .await;
    assert_eq!(v["task_name"], "named");
    c.close().await;

    // A read-only file system, where the test may mount one.
    let ro = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"])
        .arg(ro.path())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("note: no read-only tmpfs could be mounted; that half did not run");
        return;
    }
    let c = started_in(ro.path()).await;
    let e = c
        .refused(
            json!({"action": "start", "objective": "Nowhere"}),
            "invalid_cwd",
        )
        .await;
    let msg = e["error"]["message"].as_str().unwrap().to_string();
    c.close().await;
    let _ = std::process::Command::new("umount").arg(ro.path()).status();
    assert!(msg.contains("may not write there"), "{msg}");
    says_how_to_name_the_project(&msg);
}

#[tokio::test]
async fn the_project_flag_is_honoured_by_the_server_and_the_terminal_relative_or_not() {
    let top = tempfile::tempdir().unwrap();
    let top = top.path().canonicalize().unwrap();
    std::fs::create_dir_all(top.join("elsewhere")).unwrap();
    std::fs::create_dir_all(top.join("proj")).unwrap();
    // Started elsewhere, told the project by a path relative to where it runs.
    let mut cmd = support::command(&top.join("elsewhere"));
    cmd.args(["serve", "--project", "../proj"]);
    let c = connect_with(Era::Legacy, cmd, &top.join("proj")).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Named by flag"}))
        .await;
    c.close().await;
    let task = v["task_name"].as_str().unwrap();
    assert!(top.join("proj/.claude/specs").join(task).is_dir());
    assert!(!top.join("elsewhere/.bmad-task").exists());

    // The terminal with `--project .` in the project.
    let out = support::bin(&top.join("proj"))
        .args(["--project", ".", "status", task])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains(task), "{said}");

    // Over HTTP calls name their project; a default one is refused, not dropped.
    let out = support::bin(&top)
        .args(["serve", "--http", "127.0.0.1:0", "--project", "proj"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`--project` does not apply"), "{err}");
}
