//! Sessions survive the process: half a workflow in one server, the rest in others that
//! find the project through CLAUDE_PROJECT_DIR, BMAD_PROJECT_ROOT or their working dir.

use crate::support::{
    command, connect, connect_with, document, passing_architecture, scored, start_args, Era,
    PRD_SECTIONS,
};
use serde_json::json;

#[tokio::test]
async fn a_new_process_finishes_a_workflow_by_task_name() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let elsewhere = tempfile::tempdir().unwrap();

    // First process: start and take the PRD to the confirmation step, then exit.
    let a = connect(Era::Modern, project).await;
    let v = a
        .ok(start_args(project, "Ship a changelog generator"))
        .await;
    let task = v["task_name"].as_str().unwrap().to_string();
    let v = a
        .ok(json!({"action": "submit", "task_name": task, "claude_result": scored("prd_draft", &document("PRD", &PRD_SECTIONS), 94)}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    a.close().await;

    // Second process: another working directory, the project given by CLAUDE_PROJECT_DIR.
    let mut cmd = command(elsewhere.path());
    cmd.env("CLAUDE_PROJECT_DIR", project);
    let b = connect_with(Era::Legacy, cmd, project).await;
    let v = b.ok(json!({"action": "status", "task_name": task})).await;
    assert_eq!(v["session"]["current_state"], "awaiting_confirmation");
    assert_eq!(v["session"]["stages"]["po"]["score"], 94);
    let v = b.ok(json!({"action": "confirm", "task_name": task})).await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("architect"), Some("generating"))
    );
    b.ok(json!({"action": "submit", "task_name": task, "claude_result": passing_architecture()}))
        .await;
    b.ok(json!({"action": "confirm", "task_name": task})).await;
    b.close().await;

    // Third process: BMAD_PROJECT_ROOT wins over CLAUDE_PROJECT_DIR.
    let mut cmd = command(elsewhere.path());
    cmd.env("BMAD_PROJECT_ROOT", project)
        .env("CLAUDE_PROJECT_DIR", elsewhere.path());
    let c = connect_with(Era::Modern, cmd, project).await;
    c.ok(json!({"action": "submit", "task_name": task, "claude_result": "## Sprint 1: Only"}))
        .await;
    c.ok(json!({"action": "approve", "task_name": task})).await;
    c.close().await;

    // Fourth process: the project is its working directory.
    let d = connect(Era::Legacy, project).await;
    for doc in [
        "# Dev",
        "# Review\nReview Status: Pass",
        "# QA\nIntent: met\nQuality Score: 95/100",
    ] {
        d.ok(json!({"action": "submit", "task_name": task, "claude_result": doc}))
            .await;
    }
    let v = d.ok(json!({"action": "status", "task_name": task})).await;
    assert_eq!(v["session"]["current_state"], "completed");
    assert_eq!(v["session"]["artifacts"].as_array().unwrap().len(), 6);
    let actions: Vec<String> = v["session"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        actions,
        [
            "start", "submit", "confirm", "submit", "confirm", "submit", "approve", "submit",
            "submit", "submit"
        ]
    );
    d.close().await;
    assert!(
        elsewhere.path().read_dir().unwrap().next().is_none(),
        "nothing written in the other directory"
    );
}
