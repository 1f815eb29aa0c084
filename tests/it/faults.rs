//! A fault of the server's own, through the real binary: a server started with the
//! test-only trigger `BMAD_FAULT_INJECT` panics where the code marks that place, and the
//! call is answered `internal`, saying what failed, that the defect is bmad-mcp's, where
//! its record is, and not to retry; nothing of the call is recorded; `status` names the
//! fault until the task changes; a risk accepted meanwhile teaches no lesson.

use std::path::Path;

use crate::support::{
    bin, command, connect, connect_with, document, scored, tree_digest, BUG_SECTIONS,
};
use crate::support::{Client, Era, Sandbox};
use serde_json::{json, Value};

const DEV: &str = "# Implementation Report\n\n## Summary\nFixed the parser.\n\n## Changes\n- `src/parse.rs`: empty input.\n\n## Tests\n12 passed.\n";
const FAILING_TEST: &str = "\n## Failing Test\n`parses_empty_input` failed before the fix (`index out of bounds`), passes after it.\n";

/// A server in `project` that fails its own calls at `place`.
async fn faulty(project: &Path, place: &str) -> Client {
    let mut cmd = command(project);
    cmd.env("BMAD_FAULT_INJECT", place);
    connect_with(Era::Modern, cmd, project).await
}

async fn call(c: &Client, sid: &Value, mut args: Value) -> (bool, Value) {
    args["session_id"] = sid.clone();
    c.call(args).await
}

/// How many lesson files the project has.
fn lesson_count(project: &Path) -> usize {
    std::fs::read_dir(project.join(".bmad/lessons"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// A fix task taken to `dev` `generating` by a sound server: its session id and task name.
async fn fix_at_dev(c: &Client, project: &Path) -> (Value, String) {
    let v = c
        .ok(json!({"action": "start", "objective": "Fix the crash on empty input", "track": "fix", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let report = document("Bug Report: crash on empty input", &BUG_SECTIONS);
    for args in [
        json!({"action": "submit", "claude_result": scored("bug_report", &report, 93)}),
        json!({"action": "confirm"}),
    ] {
        let (failed, v) = call(c, &sid, args).await;
        assert!(!failed, "{v:#}");
    }
    (sid, task)
}

/// The project's files as a digest, without the lock (which every change takes).
fn state(project: &Path) -> Vec<(String, String)> {
    tree_digest(project)
        .into_iter()
        .filter(|(rel, _)| rel != ".bmad-task/.lock")
        .collect()
}

#[tokio::test]
async fn a_panic_while_judging_a_submission_is_said_as_the_servers_recorded_and_not_retried() {
    let sb = Sandbox::new();
    let sound = connect(Era::Modern, &sb.project).await;
    let (sid, task) = fix_at_dev(&sound, &sb.project).await;
    sound.close().await;
    let session_file = sb
        .project
        .join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap()));
    let session_before = std::fs::read(&session_file).unwrap();
    let before = state(&sb.project);

    let c = faulty(&sb.project, "judge").await;
    let submit = json!({"action": "submit", "claude_result": format!("{DEV}{FAILING_TEST}")});
    let (failed, v) = call(&c, &sid, submit).await;
    assert!(failed, "{v:#}");
    assert_eq!(v["error"]["code"], "internal", "{v:#}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the server could not judge the `Failing Test` section: a defect in bmad-mcp, not in your submission (it panicked at src/workflow/sections.rs:"),
        "{message}"
    );
    assert!(message.contains("fault injected for a test"), "{message}");
    assert!(message.contains("in the server's stderr log"), "{message}");
    assert!(
        message.contains("The same call would fail the same way"),
        "{message}"
    );
    let user = v["user_message"].as_str().unwrap();
    assert!(
        user.starts_with("Error (internal): the server could not judge"),
        "{user}"
    );
    let step = v["next_step"].as_str().unwrap();
    assert!(step.contains("Do not retry this call"), "{step}");
    assert!(step.contains("show the human `user_message`"), "{step}");
    assert_eq!(v["session_id"], sid);

    // The record the message names exists, holds the panic, and is the only file written.
    let rel = format!(".bmad-task/faults/{}.log", sid.as_str().unwrap());
    let record_path = sb.project.join(&rel);
    assert!(
        message.contains(&record_path.display().to_string()),
        "{message}"
    );
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(&record_path)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["action"], "submit");
    assert_eq!(record["task_name"], task.as_str());
    assert_eq!(record["doing"], "judge the `Failing Test` section");
    let version = bin(&sb.project).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    assert_eq!(
        version.trim(),
        format!("bmad-mcp {}", record["version"].as_str().unwrap()),
        "the version that failed"
    );
    assert!(record["message"]
        .as_str()
        .unwrap()
        .contains("fault injected for a test"));
    // Where the guard of what failed stands, in the source.
    let at = record["location"].as_str().unwrap();
    assert!(at.starts_with("src/workflow/sections.rs:"), "{at}");
    assert_eq!(std::fs::read(&session_file).unwrap(), session_before);
    let mut after = state(&sb.project);
    after.retain(|(r, _)| !r.starts_with(".bmad-task/faults/"));
    assert_eq!(after, before, "nothing but the fault record was written");

    // `status` names the fault, in the tool and in the terminal.
    let (failed, s) = call(&c, &sid, json!({"action": "status"})).await;
    assert!(!failed, "{s:#}");
    let notices = s["notices"].to_string();
    assert!(
        notices.contains("The server failed on this task at"),
        "{s:#}"
    );
    assert!(
        notices.contains("could not judge the `Failing Test` section"),
        "{s:#}"
    );
    assert!(notices.contains(&rel), "{s:#}");
    // Nor does `status` tell the model to make the call that failed again.
    let step = s["next_step"].as_str().unwrap();
    assert!(!step.contains("`submit`"), "{step}");
    assert!(step.contains("do not make that call again"), "{step}");
    let out = bin(&sb.project).args(["status", &task]).output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}");
    assert!(
        printed.contains("The server failed on this task at"),
        "{printed}"
    );
    assert!(printed.contains(&rel), "{printed}");
    c.close().await;

    // Once the task moves on, the fault is history, not news.
    let sound = connect(Era::Modern, &sb.project).await;
    let (failed, v) = call(
        &sound,
        &sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    assert!(!failed, "{v:#}");
    let (_, s) = call(&sound, &sid, json!({"action": "status"})).await;
    assert!(
        !s["notices"].to_string().contains("The server failed"),
        "{s:#}"
    );
    sound.close().await;
}

#[tokio::test]
async fn a_risk_accepted_after_a_fault_of_the_servers_records_no_lesson() {
    let sb = Sandbox::new();
    let sound = connect(Era::Modern, &sb.project).await;
    // The failing test missing: the report fails, and stops at the decision.
    let (sid, _) = fix_at_dev(&sound, &sb.project).await;
    let (failed, v) = call(
        &sound,
        &sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    assert!(!failed, "{v:#}");
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    // Another task, the same way, whose risk is accepted with no fault: a lesson.
    let (other, _) = fix_at_dev(&sound, &sb.project).await;
    call(
        &sound,
        &other,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    let (failed, v) = call(&sound, &other, json!({"action": "confirm"})).await;
    assert!(!failed, "{v:#}");
    assert_eq!(lesson_count(&sb.project), 1, "{v:#}");
    sound.close().await;

    let c = faulty(&sb.project, "machine").await;
    let (failed, v) = call(&c, &sid, json!({"action": "confirm"})).await;
    assert!(failed, "{v:#}");
    assert_eq!(v["error"]["code"], "internal", "{v:#}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the server could not apply the `confirm` to the session: a defect in bmad-mcp, not in your call"),
        "{v:#}"
    );
    c.close().await;

    let sound = connect(Era::Modern, &sb.project).await;
    let (failed, v) = call(&sound, &sid, json!({"action": "confirm"})).await;
    assert!(!failed, "{v:#}");
    let notices = v["notices"].to_string();
    assert!(notices.contains("Risk accepted"), "{v:#}");
    assert!(
        notices.contains(
            "No lesson was recorded for the risk accepted: the server failed on this task"
        ),
        "{v:#}"
    );
    assert_eq!(lesson_count(&sb.project), 1, "no lesson blames the report");
    sound.close().await;
}

/// The server fails on a submission; the work is submitted again, fails its report, and
/// the human accepts the risk: the round that made the work saw the server fail, so no
/// lesson blames the report, though the task changed after the fault.
#[tokio::test]
async fn a_risk_accepted_on_work_resubmitted_after_a_fault_records_no_lesson() {
    let sb = Sandbox::new();
    let sound = connect(Era::Modern, &sb.project).await;
    let (sid, _) = fix_at_dev(&sound, &sb.project).await;
    sound.close().await;

    let c = faulty(&sb.project, "machine").await;
    let (failed, v) = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    assert!(failed, "{v:#}");
    assert_eq!(v["error"]["code"], "internal", "{v:#}");
    c.close().await;

    let sound = connect(Era::Modern, &sb.project).await;
    let (failed, v) = call(
        &sound,
        &sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    assert!(!failed, "{v:#}");
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let (failed, v) = call(&sound, &sid, json!({"action": "confirm"})).await;
    assert!(!failed, "{v:#}");
    let notices = v["notices"].to_string();
    assert!(notices.contains("Risk accepted"), "{v:#}");
    assert!(
        notices.contains("No lesson was recorded for the risk accepted"),
        "{v:#}"
    );
    assert_eq!(lesson_count(&sb.project), 0, "no lesson blames the report");
    sound.close().await;
}
