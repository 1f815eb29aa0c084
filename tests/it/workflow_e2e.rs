//! A whole PO → QA workflow against the built binary through rmcp's client, in both
//! protocol eras, checking every reply and then every file on disk.

use crate::support::{
    connect, document, files_under, read_json, start_args, Client, Era, PRD_SECTIONS,
};
use serde_json::{json, Value};

const PRD_DRAFT: &str = "# Product Requirements: Team Todo\n\n## Executive Summary\nA shared todo list.\n\n```json\n{\"example\": \"a sample \\\"quoted\\\" value\"}\n```\n";
const PRD_FINAL: &str = "# Product Requirements: Team Todo (refined)\n\n## Executive Summary\nA shared todo list for teams of up to 50.\n\n## Business Goals\n- Teams track shared work in one place.\n\n## User Stories\n- As a member I add a todo.\n  Acceptance criteria: Given a list, when I add, then it shows within 200 ms.\n- As a member I complete a todo.\n  Acceptance criteria: Given an open todo, when I tick it, then it is marked done for everyone.\n- As an owner I invite members by email.\n\n## Functional Requirements\n- Add, complete and delete todos; invite by email.\n\n## Technical Requirements\n- Web browsers of the last two years; TLS everywhere.\n\n## Success Metrics\n- 99.9% uptime; p95 latency under 200 ms.\n\n```rust\nlet s = \"}\"; // braces and quotes inside fences survive\n```\n";
const ARCH_DRAFT: &str = "# Architecture draft\n\n## System Overview\nWeb app.";
const ARCH_FINAL: &str = "# System Architecture: Team Todo\n\n## System Overview\nAxum API + Postgres.\n\n## Technology Stack\nRust, Axum, PostgreSQL 16.\n\n## Components\n- API server; web client.\n\n## Data Model\n`todos(id, list_id, title, done)`.\n\n## API Design\n`POST /todos` returns `{\"id\": 1}`.\n\n## Security\nSessions in HTTP-only cookies.";
const PLAN: &str = "# Sprint Plan\n\n## Sprint 1: API and storage\n- todos table\n\n## Sprint 2 - Web UI\n- list page\n";
const DEV: &str =
    "# Implementation Report\n\n## Summary\nBoth sprints built.\n\n## Tests\n24 passed, 0 failed.";
const REVIEW: &str =
    "# Code Review\n\n## Findings\n- minor: naming.\n\nReview Status: Pass with Risk";
const QA: &str =
    "# QA Report\n\n## Results\n41 passed, 0 failed.\n\nIntent: met\nQuality Score: 91/100";

fn json_submission(field: &str, doc: &str, score: u32, questions: &[&str]) -> String {
    serde_json::to_string_pretty(&json!({
        field: doc,
        "quality_score": score,
        "gaps": if questions.is_empty() { vec![] } else { vec!["open decisions"] },
        "questions": questions.iter().enumerate().map(|(i, q)| json!({"id": format!("x{i}"), "question": q, "context": "matters"})).collect::<Vec<_>>(),
    }))
    .unwrap()
}

/// Wraps a submission as a model often does: prose, then a fenced JSON block.
fn fenced(json: &str) -> String {
    format!("Here is the document.\n\n```json\n{json}\n```\n")
}

fn assert_reply(v: &Value, stage: &str, state: &str, pending: &[&str]) {
    assert_eq!(v["stage"], stage, "{v:#}");
    assert_eq!(v["state"], state, "{v:#}");
    let p: Vec<&str> = v["pending_user_actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(p, pending, "{v:#}");
    for key in [
        "session_id",
        "task_name",
        "stage_description",
        "interaction_type",
        "user_message",
        "requires_user_confirmation",
    ] {
        assert!(!v[key].is_null(), "reply lacks {key}: {v:#}");
    }
    let decides = matches!(
        state,
        "clarifying" | "awaiting_confirmation" | "awaiting_approval"
    );
    assert_eq!(v["requires_user_confirmation"], decides);
    if matches!(state, "generating" | "refining") {
        let prompt = v["role_prompt"].as_str().unwrap();
        assert!(v["engines"].is_array());
        assert!(v["context"]["specs_dir"].is_string());
        // Each fact once: the objective is in the role prompt, not again in `context`.
        assert!(v["context"].get("objective").is_none());
        if state == "generating" {
            assert!(prompt.contains("# Role:"), "{prompt}");
            // The first stage's prompt gives the objective; a later stage's first prompt
            // leaves out what the earlier ones gave (docs/spec.md §11.4).
            if v["stage"] == "po" {
                assert!(prompt.contains("**Objective:**"), "{prompt}");
            }
        } else {
            // A later round: what is new, and where the whole prompt is (docs/spec.md §11.4).
            assert!(!prompt.contains("# Role:"), "{prompt}");
            assert!(
                prompt.contains("a `status` with nothing new since gives them again"),
                "{prompt}"
            );
        }
        assert!(v["next_step"].as_str().unwrap().contains("`submit`"));
    } else {
        assert!(v["role_prompt"].is_null());
    }
}

async fn run_workflow(era: Era) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(era, project).await;

    let tools = c.list_tools().await;
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "bmad-task");
    // No outputSchema (docs/spec.md §10): it would oblige every result to carry the JSON,
    // which Claude Code shows its model in place of the readable text.
    assert!(
        tools[0].output_schema.is_none(),
        "the tool declares no outputSchema"
    );
    let actions = &tools[0].input_schema["properties"]["action"];
    assert!(actions.to_string().contains("confirm_save"), "{actions}");

    let v = c.ok(start_args(project, "Build a team todo app")).await;
    assert_reply(&v, "po", "generating", &["submit"]);
    assert_eq!(v["task_name"], "build-a-team-todo-app");
    assert_eq!(v["interaction_type"], "awaiting_generation");
    assert_eq!(v["engines"], json!(["claude"]));
    let sid = v["session_id"].as_str().unwrap().to_string();
    let id = |extra: Value| {
        let mut m = extra.as_object().unwrap().clone();
        m.insert("session_id".into(), json!(sid));
        Value::Object(m)
    };

    // PO: a draft with questions, the answers, a refined PRD that passes, confirmation.
    let v = c
        .ok(id(json!({"action": "submit", "stage": "po", "claude_result": fenced(&json_submission("prd_draft", PRD_DRAFT, 68, &["Who are the users?", "Mobile too?"]))})))
        .await;
    assert_reply(&v, "po", "clarifying", &["answer"]);
    assert_eq!(v["score"], 68);
    assert_eq!(v["score_source"], "reported");
    assert_eq!(v["questions"][0]["id"], "q1");
    assert_eq!(v["questions"][1]["question"], "Mobile too?");
    assert!(v["user_message"].as_str().unwrap().contains("Mobile too?"));
    let v = c
        .ok(id(
            json!({"action": "answer", "answers": {"q1": "Small teams", "q2": "Web only"}}),
        ))
        .await;
    assert_reply(&v, "po", "refining", &["submit"]);
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt
            .contains("Answer (the assistant, for the user (not confirmed by them)): Small teams")
            && prompt
                .contains("Answer (the assistant, for the user (not confirmed by them)): Web only")
    );
    assert!(
        v["context"].get("answers").is_none(),
        "said once, in the role prompt"
    );
    let v = c
        .ok(id(json!({"action": "submit", "claude_result": json_submission("prd_updated", PRD_FINAL, 93, &[])})))
        .await;
    assert_reply(&v, "po", "awaiting_confirmation", &["confirm", "reject"]);
    assert_eq!(v["gate_passed"], true);
    assert_eq!(v["iteration"], 2);
    let prd_path = ".claude/specs/build-a-team-todo-app/01-product-requirements.md";
    assert_eq!(v["artifact_path"], prd_path);
    let v = c.ok(id(json!({"action": "confirm"}))).await;
    assert_reply(&v, "architect", "generating", &["submit"]);
    let docs = &v["context"]["documents"];
    assert_eq!(docs[0]["path"], prd_path);
    assert_eq!(
        docs[0]["size"],
        PRD_FINAL.len(),
        "the document byte for byte"
    );
    assert!(
        !v.to_string().contains("braces and quotes inside fences"),
        "earlier documents are referenced, not inlined"
    );

    // Architect: questions, answers, a passing design (via the confirm_save alias).
    let v = c
        .ok(id(json!({"action": "submit", "claude_result": json_submission("architecture_draft", ARCH_DRAFT, 75, &["Cloud or on-prem?"])})))
        .await;
    assert_reply(&v, "architect", "clarifying", &["answer"]);
    let v = c
        .ok(id(json!({"action": "answer", "answers": {"q1": "Cloud"}})))
        .await;
    assert_reply(&v, "architect", "refining", &["submit"]);
    let v = c
        .ok(id(json!({"action": "submit", "stage": "architect", "claude_result": json_submission("architecture_updated", ARCH_FINAL, 92, &[])})))
        .await;
    assert_reply(
        &v,
        "architect",
        "awaiting_confirmation",
        &["confirm", "reject"],
    );
    let v = c.ok(id(json!({"action": "confirm_save"}))).await;
    assert_reply(&v, "sm", "generating", &["submit"]);

    // Sprint plan: sprints read from headings, approved for all.
    let v = c
        .ok(id(json!({"action": "submit", "claude_result": PLAN})))
        .await;
    assert_reply(&v, "sm", "awaiting_approval", &["approve", "reject"]);
    assert_eq!(
        v["sprints"],
        json!([{"number": 1, "title": "API and storage"}, {"number": 2, "title": "Web UI"}])
    );
    let v = c.ok(id(json!({"action": "approve", "scope": "all"}))).await;
    assert_reply(&v, "dev", "generating", &["submit"]);
    // A session of the host's model alone: development is the host's too.
    assert_eq!(v["engines"], json!(["claude"]));
    assert_eq!(v["context"]["scope"], "all");
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("Sprint 2: Web UI"));

    let v = c
        .ok(id(json!({"action": "submit", "claude_result": DEV})))
        .await;
    assert_reply(&v, "review", "generating", &["submit"]);
    let v = c
        .ok(id(json!({"action": "submit", "claude_result": REVIEW})))
        .await;
    assert_reply(&v, "qa", "generating", &["submit"]);
    assert_eq!(v["review_status"], "Pass with Risk");
    let v = c
        .ok(id(json!({"action": "submit", "claude_result": QA})))
        .await;
    assert_reply(&v, "qa", "completed", &[]);
    assert_eq!(v["interaction_type"], "workflow_completed");
    assert_eq!(v["score"], 91);

    // After completion only status is allowed.
    let v = c
        .refused(
            id(json!({"action": "submit", "claude_result": QA})),
            "invalid_state",
        )
        .await;
    assert_eq!(v["state"], "completed");
    assert_eq!(v["allowed_actions"], json!(["status"]));
    let status = c.ok(id(json!({"action": "status"}))).await;
    assert_eq!(status["session"]["current_state"], "completed");
    assert_eq!(status["session"]["stages"]["po"]["score"], 93);
    let listed = c
        .ok(json!({"action": "list", "cwd": project.to_str().unwrap()}))
        .await;
    assert_eq!(listed["sessions"][0]["session_id"], sid.as_str());
    assert_eq!(listed["sessions"][0]["current_state"], "completed");
    c.close().await;

    check_files(project, &sid);
}

fn check_files(project: &std::path::Path, sid: &str) {
    let task = "build-a-team-todo-app";
    let specs = project.join(".claude/specs").join(task);
    let mut names: Vec<String> = std::fs::read_dir(&specs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        std::fs::read_to_string(specs.join(".bmad-session")).unwrap(),
        format!("{sid}\n"),
        "the folder names the session it belongs to"
    );
    assert_eq!(
        names,
        [
            ".bmad-session",
            "01-product-requirements.md",
            "02-system-architecture.md",
            "03-sprint-plan.md",
            "04-dev-reviewed.md",
            "05-qa-report.md",
            "code-implementation.md",
            // The round's diff, for the review's layers.
            "review-layers"
        ]
    );
    let read = |f: &str| std::fs::read_to_string(specs.join(f)).unwrap();
    assert_eq!(
        read("01-product-requirements.md"),
        PRD_FINAL,
        "the refined PRD is the one saved, byte for byte"
    );
    assert_eq!(read("02-system-architecture.md"), ARCH_FINAL);
    assert_eq!(read("03-sprint-plan.md"), PLAN);
    assert_eq!(read("05-qa-report.md"), QA);
    for n in names.iter().filter(|n| *n != "review-layers") {
        assert!(!read(n).trim().is_empty(), "{n} is not empty");
    }
    assert!(!read("review-layers/changes.diff").trim().is_empty());

    // Nothing is written outside .bmad-task/ and .claude/specs/.
    for f in files_under(project) {
        assert!(
            f.starts_with(".bmad-task/") || f.starts_with(".claude/specs/"),
            "stray file {f}"
        );
    }

    let session_path = project.join(format!(".bmad-task/session-{sid}.json"));
    let size = std::fs::metadata(&session_path).unwrap().len();
    assert!(size < 32 * 1024, "the session stays small: {size} bytes");
    let s = read_json(&session_path);
    for key in [
        "schema_version",
        "session_id",
        "task_name",
        "cwd",
        "objective",
        "engines",
        "current_stage",
        "current_state",
        "stages",
        "artifacts",
        "history",
        "created_at",
        "updated_at",
    ] {
        assert!(!s[key].is_null(), "session lacks {key}");
    }
    assert_eq!(s["current_state"], "completed");
    assert_eq!(s["cwd"], project.canonicalize().unwrap().to_str().unwrap());
    let artifacts: Vec<&str> = s["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(artifacts.len(), 6);
    let mut unique = artifacts.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 6, "no duplicate artifacts");
    assert_eq!(s["stages"]["po"]["answers"]["q2"], "Web only");
    assert_eq!(s["stages"]["po"]["artifact"]["size"], PRD_FINAL.len());
    assert_eq!(s["stages"]["sm"]["scope"], "all");
    assert_eq!(s["stages"]["sm"]["approved"], true);
    assert_eq!(
        s["history"].as_array().unwrap().len(),
        14,
        "one entry per accepted action (start + 13)"
    );
    // Every content reference points at a file that exists and has the size it says.
    let mut refs = 0;
    for (_, rec) in s["stages"].as_object().unwrap() {
        for key in [
            "claude_result_ref",
            "codex_result_ref",
            "final_result_ref",
            "draft_ref",
        ] {
            if let Some(r) = rec.get(key).filter(|r| !r.is_null()) {
                let path = project.join(r["file_path"].as_str().unwrap());
                assert_eq!(
                    std::fs::metadata(&path).unwrap().len(),
                    r["size"].as_u64().unwrap(),
                    "{key}"
                );
                assert!(r["summary"].as_str().unwrap().chars().count() <= 301);
                refs += 1;
            }
        }
    }
    assert!(refs >= 12, "{refs} references");
    let mapping = read_json(&project.join(".bmad-task/task-mapping.json"));
    assert_eq!(mapping[sid]["task_name"], task);
    assert_eq!(mapping[sid]["objective"], "Build a team todo app");
    let temp = files_under(&project.join(format!(".bmad-task/temp/{sid}")));
    assert!(
        temp.iter()
            .any(|f| f.starts_with("po_answers_") && f.ends_with(".json")),
        "{temp:?}"
    );
    assert!(
        temp.iter().any(|f| f.starts_with("po_claude_result_")),
        "{temp:?}"
    );
}

#[tokio::test]
async fn a_whole_workflow_runs_over_the_legacy_initialize_handshake() {
    run_workflow(Era::Legacy).await;
}

#[tokio::test]
async fn a_whole_workflow_runs_in_the_2026_07_28_era() {
    run_workflow(Era::Modern).await;
}

#[tokio::test]
async fn a_chinese_objective_gets_a_readable_unique_task_name() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Modern, dir.path()).await;
    let a = c.ok(start_args(dir.path(), "构建用户认证系统")).await;
    let b = c.ok(start_args(dir.path(), "构建用户认证系统")).await;
    let a = a["task_name"].as_str().unwrap();
    let b = b["task_name"].as_str().unwrap();
    assert!(a.starts_with("gou-jian"), "{a}");
    assert_eq!(b, format!("{a}-1"));
    assert!(
        dir.path().join(".claude/specs").join(a).is_dir(),
        "reserved at start"
    );
    assert!(dir.path().join(".claude/specs").join(b).is_dir());
    c.close().await;
}

#[tokio::test]
async fn the_dual_engine_keeps_the_better_result_and_records_both() {
    let dir = tempfile::tempdir().unwrap();
    let c: Client = connect(Era::Legacy, dir.path()).await;
    let v = c
        .ok(start_args(dir.path(), "Build a parser using codex"))
        .await;
    assert_eq!(v["engines"], json!(["claude", "codex"]));
    let sid = v["session_id"].clone();
    let by_claude = document("By claude", &PRD_SECTIONS);
    let by_codex = document("By codex", &PRD_SECTIONS);
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": json_submission("prd_draft", &by_claude, 85, &[]), "codex_result": json_submission("prd_draft", &by_codex, 91, &[])}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    assert_eq!(v["score"], 91);
    assert_eq!(v["scores"], json!({"claude": 85, "codex": 91}));
    let prd = std::fs::read_to_string(
        dir.path()
            .join(".claude/specs/build-a-parser-using-codex/01-product-requirements.md"),
    )
    .unwrap();
    assert_eq!(prd, by_codex);
    c.close().await;
}
