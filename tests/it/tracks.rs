//! The short tracks through the real binary: a `fix` run and a `quick` run to completion,
//! the fix track's failing test first, and a quick task promoted to the full track by the
//! human in a terminal, keeping what was written.

use crate::support::transport::{each_transport, Transport};
use crate::support::{
    connect, document, read_json, scored, Client, Era, Sandbox, BUG_SECTIONS, SPEC_SECTIONS,
};
use serde_json::{json, Value};

const DEV: &str = "# Implementation Report\n\n## Summary\nFixed the parser.\n\n## Changes\n- `src/parse.rs`: empty input.\n\n## Tests\n12 passed.\n";
const FAILING_TEST: &str = "\n## Failing Test\n`parses_empty_input` failed before the fix (`index out of bounds`), passes after it.\n";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n";
/// The review that closes a light track with every verdict stated.
const REVIEW_MET: &str =
    "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\nIntent: met\n";

async fn start(c: &Client, sb: &Sandbox, objective: &str, track: &str) -> Value {
    c.ok(json!({"action": "start", "objective": objective, "track": track, "cwd": sb.project.to_str().unwrap()}))
        .await
}

async fn call(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn at(v: &Value, stage: &str, state: &str) {
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some(stage), Some(state)),
        "{v:#}"
    );
}

each_transport!(async a_fix_run_goes_from_a_confirmed_bug_report_through_a_failing_test_to_review
    => a_fix_run_goes_from_a_confirmed_bug_report_through_a_failing_test_to_review);

/// Over stdio and over HTTP.
async fn a_fix_run_goes_from_a_confirmed_bug_report_through_a_failing_test_to_review(t: Transport) {
    let sb = Sandbox::new();
    let host = t.host(&sb.project);
    let c = host.connect(Era::Modern).await;
    let v = start(&c, &sb, "Fix the crash on empty input", "fix").await;
    at(&v, "bug", "generating");
    assert_eq!(v["track"], "fix");
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("# Role: Bug Triager"));
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();

    let report = document("Bug Report: crash on empty input", &BUG_SECTIONS);
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": scored("bug_report", &report, 93)}),
    )
    .await;
    at(&v, "bug", "awaiting_confirmation");
    assert_eq!(v["pending_user_actions"], json!(["confirm", "reject"]));
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("## This track: fix"), "{prompt}");
    assert!(
        prompt.contains("01-bug-report.md"),
        "the bug report is an input: {prompt}"
    );

    // Without the failing test, the work stops at the human.
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "dev", "awaiting_confirmation");
    let msg = v["user_message"].as_str().unwrap();
    assert!(msg.contains("`Failing Test`"), "{msg}");
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Write the failing test first."}),
    )
    .await;
    at(&v, "dev", "generating");
    // A section that is there but names no test that failed first stops as well.
    let skipped = "\n## Failing Test\nNone: I fixed the code directly, no test failed first.\n";
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": format!("{DEV}{skipped}")}),
    )
    .await;
    at(&v, "dev", "awaiting_confirmation");
    let msg = v["user_message"].as_str().unwrap();
    assert!(
        msg.contains("`Failing Test` says no test failed before the fix"),
        "{msg}"
    );
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Name the test and show it failing."}),
    )
    .await;
    at(&v, "dev", "generating");
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": format!("{DEV}{FAILING_TEST}")}),
    )
    .await;
    at(&v, "review", "generating");
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_MET}),
    )
    .await;
    at(&v, "review", "completed");
    assert_eq!(v["interaction_type"], "workflow_completed");

    let s = read_json(
        &sb.project
            .join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())),
    );
    assert_eq!(s["track"], "fix");
    let specs = format!(".claude/specs/{task}");
    assert_eq!(
        s["artifacts"],
        json!([
            format!("{specs}/01-bug-report.md"),
            format!("{specs}/code-implementation.md"),
            format!("{specs}/04-dev-reviewed.md")
        ])
    );
    for stage in ["po", "architect", "sm", "qa", "spec"] {
        assert_eq!(s["stages"][stage]["status"], "pending", "{stage}");
    }
    let list = c
        .ok(json!({"action": "list", "cwd": sb.project.to_str().unwrap()}))
        .await;
    assert_eq!(list["sessions"][0]["track"], "fix", "{list:#}");
    sb.assert_confined(&[]);
    c.close().await;
}

#[tokio::test]
async fn a_quick_run_goes_from_a_confirmed_spec_to_a_completed_review() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = start(&c, &sb, "Add a --verbose flag", "quick").await;
    at(&v, "spec", "generating");
    assert_eq!(v["track"], "quick");
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    // A spec below the gate is refined, as a PRD is.
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": scored("technical_spec", "# Spec\n\n## Change\nA flag.", 95)})).await;
    at(&v, "spec", "refining");
    assert!(
        v["missing_sections"].as_array().unwrap().len() == 4,
        "{v:#}"
    );
    let spec = document("Technical Spec: --verbose", &SPEC_SECTIONS);
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": scored("spec_updated", &spec, 92)}),
    )
    .await;
    at(&v, "spec", "awaiting_confirmation");
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");
    assert!(!v["user_message"]
        .as_str()
        .unwrap()
        .contains("Sprint plan approved"));
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_MET}),
    )
    .await;
    at(&v, "review", "completed");
    let spec_file = sb
        .project
        .join(format!(".claude/specs/{task}/01-technical-spec.md"));
    assert_eq!(std::fs::read_to_string(spec_file).unwrap(), spec);
    // A track start does not know is refused, naming the field.
    let e = c
        .refused(json!({"action": "start", "objective": "x", "track": "story", "cwd": sb.project.to_str().unwrap()}), "invalid_argument")
        .await;
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("field `track`"),
        "{e:#}"
    );
    c.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_quick_task_promoted_by_the_human_keeps_its_spec_and_runs_the_full_track() {
    use crate::support::terminal::in_terminal;
    let sb = Sandbox::new();
    let project = sb.project.canonicalize().unwrap();
    let c = connect(Era::Modern, &project).await;
    let v = c.ok(json!({"action": "start", "objective": "Add sharing", "track": "quick", "cwd": project.to_str().unwrap()})).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let spec = document("Technical Spec: sharing", &SPEC_SECTIONS);
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": scored("technical_spec", &spec, 92)}),
    )
    .await;
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");

    // The host cannot promote: it is the human's decision.
    let e = c
        .refused(
            json!({"action": "promote", "session_id": sid}),
            "human_required",
        )
        .await;
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bmad-mcp promote"),
        "{e:#}"
    );

    let (code, out) = in_terminal(
        &project,
        &["promote", &task, "--note", "It needs a data model"],
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("quick track"), "{out}");
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    at(&v, "po", "generating");
    assert_eq!(v["track"], "full");
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("01-technical-spec.md"),
        "the spec is kept as an input: {prompt}"
    );
    assert!(
        prompt.contains("promoted this task from the quick track"),
        "{prompt}"
    );
    assert!(prompt.contains("It needs a data model"), "{prompt}");
    let s = &v["session"];
    let last = s["history"].as_array().unwrap().last().unwrap();
    assert_eq!(last["action"], "promote");
    assert_eq!(last["decided_by"], "human");
    assert_eq!(last["via"], "cli");
    assert_eq!(last["feedback"], "It needs a data model");
    assert_eq!(s["stages"]["spec"]["status"], "completed");
    assert!(project
        .join(format!(".claude/specs/{task}/01-technical-spec.md"))
        .exists());
    // Promoted once: the full track does not promote.
    let (code, out) = in_terminal(&project, &["promote", &task], "[y/N]", "y\n");
    assert_eq!(code, 1, "{out}");
    c.close().await;
}

/// The intent check on a light track: the review that closes a `quick` task is given the
/// objective as first written and the confirmed spec to check the change against; an intent
/// other than met stops at the human like a failing verdict, and the final message says it.
#[tokio::test]
async fn a_quick_tasks_review_closes_it_with_the_intent_check() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = start(&c, &sb, "Add a --verbose flag to the CLI", "quick").await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let spec = document("Technical Spec: --verbose", &SPEC_SECTIONS);
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": scored("spec_updated", &spec, 92)}),
    )
    .await;
    at(&v, "spec", "awaiting_confirmation");
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");
    // Development's prompt has no intent check: only the stage that closes the track does.
    let dev_prompt = v["role_prompt"].as_str().unwrap_or_default();
    assert!(!dev_prompt.contains("Intent check"), "{dev_prompt}");
    // Each prompt names only documents the quick track has: no PRD, architecture or plan.
    let names_none = |p: &str| {
        ["PRD", "architecture", "sprint", "Sprint", "<!--"]
            .iter()
            .all(|w| !p.contains(w))
    };
    assert!(names_none(dev_prompt), "{dev_prompt}");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("## Intent check"), "{prompt}");
    assert!(names_none(prompt), "{prompt}");
    assert!(
        prompt.contains("\"Add a --verbose flag to the CLI\""),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!(".claude/specs/{task}/01-technical-spec.md")),
        "{prompt}"
    );
    // A passing review that states no intent stops at the human, as on the full track.
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW}),
    )
    .await;
    at(&v, "review", "awaiting_confirmation");
    let msg = v["user_message"].as_str().unwrap();
    assert!(msg.contains("Intent: not stated"), "{msg}");
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "State whether the change does what was asked."}),
    )
    .await;
    at(&v, "dev", "generating");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    let review = format!("{REVIEW}\nIntent: partly met — the flag is not documented in --help\n");
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": review}),
    )
    .await;
    at(&v, "review", "awaiting_confirmation");
    let msg = v["user_message"].as_str().unwrap();
    assert!(
        msg.contains("Intent: partly met (the flag is not documented in --help)"),
        "{msg}"
    );
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "review", "completed");
    let msg = v["user_message"].as_str().unwrap();
    assert!(
        msg.contains("Intent: partly met (the flag is not documented in --help)."),
        "{msg}"
    );
    assert!(!msg.contains("Trace:"), "a light track has no PRD: {msg}");
    c.close().await;
}
