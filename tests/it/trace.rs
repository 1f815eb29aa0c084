//! Requirements traced from the PRD to the closing verdict, and the intent check, through
//! the real binary: ids read from each document, a requirement planned nowhere shown at the
//! approval, in-scope ids without a passing result stopping at the human and accepted one
//! by one, ids no PRD defines named, the intent verdict in the final message, and every
//! view bounded for a PRD of 200 requirements.

use crate::support::{bin, connect, read_json, start_args, Client, Era, Sandbox};
use serde_json::{json, Value};

/// A PRD with every section the gate checks, `requirements` under its Functional and
/// Technical Requirements headings and `criteria` under its User Stories.
fn prd(functional: &str, technical: &str, criteria: &str) -> String {
    let doc = format!(
        "# PRD: Team todo\n\n## Executive Summary\nA shared todo list.\n\n## Business Goals\n- Teams track work in one place.\n\n## User Stories\n- As a member I add a todo.\n{criteria}\n\n## Functional Requirements\n{functional}\n\n## Technical Requirements\n{technical}\n\n## Success Metrics\n- p95 under 200 ms.\n"
    );
    json!({"prd_draft": doc, "quality_score": 95}).to_string()
}

const ARCHITECTURE: &str = "# Architecture\n\n## System Overview\nA web app.\n\n## Technology Stack\nRust.\n\n## Components\n### Lists API\nCovers: FR-1, FR-2\n### Store\nCovers: NFR-1, FR-9\n\n## Data Model\nTables.\n\n## API\nREST.\n\n## Security\nTLS.\n";

async fn call(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn text(v: &Value) -> &str {
    v["user_message"].as_str().unwrap_or_default()
}

fn notices(v: &Value) -> String {
    v["notices"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn session(project: &std::path::Path, sid: &Value) -> Value {
    read_json(
        &project
            .join(".bmad-task")
            .join(format!("session-{}.json", sid.as_str().unwrap())),
    )
}

#[tokio::test]
async fn three_requirements_traced_from_the_prd_to_a_qa_verdict_accepted_per_id() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c
        .ok(start_args(
            &sb.project,
            "Build a shared todo list for teams",
        ))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();

    // A PRD that gives one id twice: named, and sent back.
    let twice = prd(
        "- FR-1: Add a todo.\n- FR-2: Share a list.\n- FR-2: Share again.",
        "- NFR-1: p95 under 200 ms.",
        "- AC-1 (FR-1): Given a list, when I add, then it shows.",
    );
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": twice}),
    )
    .await;
    assert!(
        notices(&v).contains("ids defined more than once: FR-2"),
        "{v:#}"
    );
    call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "FR-2 is given twice"}),
    )
    .await;

    let good = prd(
        "- FR-1: Add a todo.\n- FR-2: Share a list.",
        "- NFR-1: p95 under 200 ms.",
        "- AC-1 (FR-1): Given a list, when I add, then it shows.",
    );
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": good})).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert!(!notices(&v).contains("Requirement ids"), "{v:#}");
    // The confirmed PRD's ids are recorded with the decision.
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    assert!(
        notices(&v).contains("The confirmed PRD defines 4 ids: AC-1, FR-1, FR-2, NFR-1."),
        "{v:#}"
    );
    let s = session(&sb.project, &sid);
    let confirm = s["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(confirm["action"], "confirm");
    assert!(confirm["note"]
        .as_str()
        .unwrap()
        .contains("AC-1, FR-1, FR-2, NFR-1"));
    assert_eq!(
        s["stages"]["po"]["trace"]["defined"][0]["refs"],
        json!(["FR-1"])
    );

    // An architecture that designs nothing for NFR-1: the notice says so in a sentence.
    let partial = ARCHITECTURE.replace("Covers: NFR-1, FR-9", "Covers: FR-9");
    let arch = json!({"architecture_draft": partial, "quality_score": 95}).to_string();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": arch})).await;
    assert!(
        notices(&v).contains("Traceability: the System Architect document names ids the PRD does not define: FR-9; names no component for NFR-1."),
        "{v:#}"
    );
    call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Design NFR-1 too"}),
    )
    .await;

    // The architecture names an id the PRD does not define.
    let arch = json!({"architecture_draft": ARCHITECTURE, "quality_score": 95}).to_string();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": arch})).await;
    assert!(
        notices(&v)
            .contains("the System Architect document names ids the PRD does not define: FR-9"),
        "{v:#}"
    );
    call(&c, &sid, json!({"action": "confirm"})).await;

    // A plan that leaves NFR-1 out: shown with the plan, to the human who approves.
    let plan = "# Sprint Plan\n\n## Overview\nTwo sprints.\n\n## Sprint 1: Add\nCovers: FR-1, AC-1\n- Task: add (3 points)\n\n## Sprint 2: Share\n### Story 2.1: Share by link\nCovers: FR-2\n- Task: share (5 points)\n\n## Dependencies\nNone.\n\n## Risks\nNone.\n";
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": plan})).await;
    assert_eq!(v["state"], "awaiting_approval");
    assert!(
        text(&v)
            .contains("Requirements planned in no sprint (approving leaves them unbuilt): NFR-1."),
        "{}",
        text(&v)
    );
    assert_eq!(v["trace"]["unplanned"], json!(["NFR-1"]));
    // The human sees it in the terminal (declining here; the approval follows below).
    #[cfg(unix)]
    {
        let (_, out) =
            crate::support::terminal::in_terminal(&sb.project, &["approve", &task], "[y/N]", "n\n");
        assert!(
            out.contains("Note: Traceability: the Scrum Master document plans NFR-1 in no sprint."),
            "{out}"
        );
    }
    let v = call(&c, &sid, json!({"action": "approve", "scope": "all"})).await;
    assert!(
        notices(&v).contains("Planned in no sprint: NFR-1."),
        "{v:#}"
    );

    let v = call(&c, &sid, json!({"action": "submit", "claude_result": "# Implementation Report\n\n## Summary\nBuilt.\nImplemented: FR-1, FR-2\n"})).await;
    assert_eq!(v["stage"], "review");
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": "# Review\n\nReview Status: Pass\n"}),
    )
    .await;

    // QA passes FR-1, fails FR-2, forgets AC-1 and names FR-7, which no PRD defines; it
    // states its score above the gate and that the product does what was asked in part.
    let qa = "# QA Report\n\n## Results\n| Id | Result | Evidence |\n|---|---|---|\n| FR-1 | pass | tests::adds_a_todo |\n| FR-2 | fail | tests::shares_a_list |\n| FR-7 | pass | tests::other |\n\nIntent: partly met — sharing a list does not work\n\nQuality Score: 95/100\n";
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": qa})).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("qa"), &json!("awaiting_confirmation")),
        "{v:#}"
    );
    let msg = text(&v);
    assert!(
        msg.contains("does not pass: 2 ids in scope without a passing result: AC-1 (no result), FR-2 (fail); Intent: partly met (sharing a list does not work)"),
        "{msg}"
    );
    assert_eq!(
        v["trace"]["unknown"],
        json!(["FR-9 (architect)", "FR-7 (qa)"])
    );
    assert_eq!(
        v["trace"]["without_pass"],
        json!(["AC-1 (no result)", "FR-2 (fail)"])
    );

    // Accepted: recorded as an accepted risk per id, and the end says so, with the intent.
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    assert_eq!(v["state"], "completed", "{v:#}");
    // At a task's end what the notices would say is in `user_message`, for the human.
    assert!(
        v["user_message"].as_str().unwrap().contains(
            "Accepted as a risk, requirement by requirement: AC-1 (no result), FR-2 (fail)."
        ),
        "{v:#}"
    );
    let end = text(&v);
    let matrix = format!(".claude/specs/{task}/traceability.md");
    let line = format!("Trace: 3 requirements, 1 acceptance criterion; designed 3, planned 2, in scope 3, passing 1. Planned in no sprint: NFR-1. Accepted as a risk: AC-1, FR-2. Ids the PRD does not define: FR-9 (architect), FR-7 (qa). Intent: partly met (sharing a list does not work). Matrix: {matrix}.");
    assert!(end.contains(&line), "{end}");
    let s = session(&sb.project, &sid);
    assert_eq!(
        s["stages"]["qa"]["trace"]["accepted"],
        json!([{"id": "AC-1", "why": "no result"}, {"id": "FR-2", "why": "fail"}])
    );
    let table = std::fs::read_to_string(sb.project.join(&matrix)).unwrap();
    eprintln!("{table}");
    assert!(table.contains("| FR-2 | Share a list. | Lists API | 2 | Story 2.1: Share by link | in | yes | fail (risk accepted) | tests::shares_a_list |"), "{table}");
    // docs/traceability.md shows this very matrix.
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/traceability.md"
    ))
    .unwrap();
    assert!(
        docs.contains(table.trim()),
        "docs/traceability.md no longer shows:\n{table}"
    );
    assert!(
        table.contains(
            "| FR-1 | Add a todo. | Lists API | 1 | Sprint 1: Add | in | yes | pass | tests::adds_a_todo |"
        ),
        "{table}"
    );
    assert!(
        table.contains("| NFR-1 | p95 under 200 ms. | Store |  |  | out | - | - |  |"),
        "{table}"
    );

    // The terminal's `status` shows it too.
    let out = bin(&sb.project).args(["status", &task]).output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains(&line), "{printed}");

    // The session's resource says it in its description.
    let listed = c.peer().list_resources(None).await.unwrap().resources;
    let described = listed
        .iter()
        .find(|r| r.uri.ends_with(sid.as_str().unwrap()))
        .and_then(|r| r.description.clone())
        .unwrap_or_default();
    assert!(described.contains(&line), "{described}");
    c.close().await;
}

#[tokio::test]
async fn a_qa_report_without_an_intent_line_stops_at_the_human_where_the_prd_has_ids() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let doc = prd(
        "- FR-1: Add a todo.",
        "- NFR-1: Fast.",
        "- AC-1 (FR-1): Given, when, then.",
    );
    for args in [
        json!({"action": "submit", "claude_result": doc}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": json!({"architecture_draft": ARCHITECTURE, "quality_score": 95}).to_string()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": "# Plan\n\n## Sprint 1: All\n- it\n"}),
        json!({"action": "approve", "scope": "all"}),
        json!({"action": "submit", "claude_result": "# Report\n\nDone."}),
        json!({"action": "submit", "claude_result": "# Review\n\nReview Status: Pass\n"}),
    ] {
        call(&c, &sid, args).await;
    }
    let qa = "# QA Report\n\n- FR-1: pass — t1\n- NFR-1: pass — t2\n- AC-1: pass — t3\n\nQuality Score: 95/100\n";
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": qa})).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert!(
        text(&v).contains("does not pass: Intent: not stated."),
        "{}",
        text(&v)
    );
    // With the intent stated, the same results complete the workflow, and the end says it.
    call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "state the intent"}),
    )
    .await;
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": "# Report\n\nDone."}),
    )
    .await;
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": "# Review\n\nReview Status: Pass\n"}),
    )
    .await;
    let qa = qa.replace("Quality", "Intent: met\n\nQuality");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": qa})).await;
    assert_eq!(v["state"], "completed", "{v:#}");
    assert!(text(&v).contains("in scope 3, passing 3."), "{}", text(&v));
    assert!(text(&v).contains(" Intent: met."), "{}", text(&v));
    c.close().await;
}

#[tokio::test]
async fn two_hundred_requirements_keep_every_view_bounded() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a large system")).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let functional: String = (1..=200)
        .map(|n| {
            format!("- FR-{n}: Requirement number {n} of the system, described in a sentence.\n")
        })
        .collect();
    let doc = prd(
        &functional,
        "- NFR-1: Fast.",
        "- AC-1 (FR-1): Given, when, then.",
    );
    let covers = |from: u32, to: u32| {
        (from..=to)
            .map(|n| format!("FR-{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let plan = format!(
        "# Plan\n\n## Sprint 1: Most\nCovers: {}\n\n## Sprint 2: Rest\nCovers: {}\n",
        covers(1, 150),
        covers(151, 160)
    );
    let results: String = (1..=100)
        .map(|n| format!("| FR-{n} | pass | test_{n} |\n"))
        .collect();
    let qa = format!(
        "# QA\n\n{results}\nIntent: not met — half of it is untested\n\nQuality Score: 95/100\n"
    );
    let mut replies = Vec::new();
    for args in [
        json!({"action": "submit", "claude_result": doc}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": json!({"architecture_draft": ARCHITECTURE, "quality_score": 95}).to_string()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": plan}),
        json!({"action": "approve", "scope": "sprint 1"}),
        json!({"action": "submit", "claude_result": "# Report\n\nDone."}),
        json!({"action": "submit", "claude_result": "# Review\n\nReview Status: Pass\n"}),
        json!({"action": "submit", "claude_result": qa}),
        json!({"action": "status"}),
        json!({"action": "confirm"}),
        json!({"action": "status"}),
    ] {
        replies.push(call(&c, &sid, args).await);
    }
    let stop = &replies[8];
    assert_eq!(stop["state"], "awaiting_confirmation");
    assert!(
        text(stop).contains(
            "51 ids in scope without a passing result: AC-1 (no result), FR-101 (no result)"
        ),
        "{}",
        text(stop)
    );
    let t = &replies[9]["trace"];
    assert_eq!(
        (&t["requirements"], &t["in_scope"], &t["passing"]),
        (&json!(201), &json!(151), &json!(100))
    );
    assert_eq!(t["unplanned"].as_array().unwrap().len(), 11, "{t:#}");
    assert_eq!(t["unplanned"][10], "and 31 more");
    assert_eq!(t["left_out"].as_array().unwrap().len(), 10, "{t:#}");
    assert_eq!(t["left_out"][0], "FR-151");
    assert_eq!(t["without_pass"][10], "and 41 more", "{t:#}");
    // The status reply, the stored session included, stays under the reply limit.
    let status = replies[9].to_string();
    eprintln!("status reply: {} bytes", status.len());
    assert!(status.len() < 64 * 1024, "{} bytes", status.len());
    let largest = replies.iter().map(|r| r["trace"].to_string().len()).max();
    let longest = replies.iter().map(|r| text(r).len()).max();
    eprintln!("largest trace: {largest:?} bytes; longest message: {longest:?} bytes");
    for r in &replies {
        let trace = r["trace"].to_string();
        assert!(
            trace.len() < 1500,
            "trace of {} bytes: {trace}",
            trace.len()
        );
        assert!(
            text(r).len() < 3000,
            "message of {} bytes: {}",
            text(r).len(),
            text(r)
        );
    }
    let end = replies.last().unwrap();
    assert_eq!(end["state"], "completed");
    assert!(
        text(end).contains("Intent: not met (half of it is untested)"),
        "{}",
        text(end)
    );
    // The whole matrix is in its file, one row per id.
    let table = std::fs::read_to_string(
        sb.project
            .join(format!(".claude/specs/{task}/traceability.md")),
    )
    .unwrap();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| FR-")).count(),
        200
    );
    c.close().await;
}

/// A story keeps its parent's requirement ids for its sprint: its QA prompt names the ids
/// its sprint plans, and a story QA report that gives none of them a result stops at the
/// human, as the parent's final QA would.
#[tokio::test]
async fn a_story_keeps_the_parents_ids_for_its_sprint() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let start = start_args(&sb.project, "Build a shared todo list for teams");
    let documents = [
        prd(
            "- FR-1: Add a todo.\n- FR-2: Share a list.",
            "- NFR-1: p95 under 200 ms.",
            "- AC-1 (FR-1): Given a list, when I add, then it shows.",
        ),
        json!({"architecture_draft": ARCHITECTURE, "quality_score": 95}).to_string(),
        "# Sprint Plan\n\n## Sprint 1: Todos\nCovers: FR-1, AC-1, NFR-1\n\n## Sprint 2: Sharing\nCovers: FR-2\n".to_string(),
    ];
    let (_, task) = crate::support::to_approved_plan(&c, start, &documents).await;
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 2, "cwd": sb.project.to_str().unwrap()}))
        .await;
    let story = v["session_id"].clone();
    for report in [
        "# Implementation Report\n\n## Summary\nSharing.\nImplemented: FR-2\n",
        "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n",
    ] {
        let v = call(
            &c,
            &story,
            json!({"action": "submit", "claude_result": report}),
        )
        .await;
        if v["stage"] == "qa" {
            let p = v["role_prompt"].as_str().unwrap_or_default();
            assert!(p.contains("each needing a result (1): FR-2"), "{p}");
        }
    }
    let no_results = "# QA Report\n\nAll passed.\n\nIntent: met\nQuality Score: 95/100\n";
    let v = call(
        &c,
        &story,
        json!({"action": "submit", "claude_result": no_results}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .contains("FR-2 (no result)"),
        "{v:#}"
    );
    c.close().await;
}
