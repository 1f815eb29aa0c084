//! Gates a score alone cannot pass, and failing reviews and QA that stop at the human,
//! through the real binary.

use crate::support::{
    at_dev, connect, document, last_entry, start_args, Client, Era, Sandbox, PRD_SECTIONS,
};
use serde_json::{json, Value};

/// Four lines that claim a passing score.
const SHORT_PRD: &str =
    "# PRD: Todo app\n## Executive Summary\nA todo app for teams.\nQuality Score: 95/100\n";

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_four_line_prd_claiming_95_goes_back_to_refining_naming_the_missing_sections() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": SHORT_PRD}))
        .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("po"), &json!("refining"))
    );
    assert_eq!(v["score"], 95, "the author's score is reported as given");
    assert_eq!(v["score_source"], "reported");
    assert_eq!(v["gate_passed"], false);
    let missing = &PRD_SECTIONS[1..];
    assert_eq!(strings(&v["missing_sections"]), missing);
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.starts_with("The document reports 95/100, but the server's own check of it disagrees (missing sections: Business Goals, User Stories, Functional Requirements, Technical Requirements, Success Metrics): a score alone does not pass the gate of 90."),
        "{message}"
    );
    let guidance = strings(&v["guidance"]);
    let prompt = v["role_prompt"].as_str().unwrap();
    for name in missing {
        let advice = format!("Add a \"{name}\" section.");
        assert!(guidance.contains(&advice.as_str()), "{guidance:?}");
        assert!(prompt.contains(&advice), "the revision prompt names {name}");
    }
    let prd = sb
        .project
        .join(".claude/specs")
        .join(&task)
        .join("01-product-requirements.md");
    assert!(!prd.exists(), "nothing below the gate becomes the PRD");

    // The same score with every section filled passes the gate.
    let full = format!(
        "{}\nQuality Score: 95/100\n",
        document("PRD: Todo app", &PRD_SECTIONS)
    );
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": full}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_eq!(v["gate_passed"], true);
    assert!(v.get("missing_sections").is_none(), "{v:#}");
    assert_eq!(std::fs::read_to_string(&prd).unwrap(), full);
    c.close().await;
}

/// Starts a session and takes it to the review stage; returns its id.
async fn at_review(c: &Client, project: &std::path::Path) -> Value {
    let sid = at_dev(c, project).await;
    c.ok(json!({"action": "submit", "session_id": sid, "codex_result": "# Implementation Report\n\n## Summary\nBuilt."}))
        .await;
    sid
}

const FAILING_REVIEW: &str = "# Code Review\n\n## Findings\n- critical, `src/api.rs`: no input validation.\n\nReview Status: Fail\n";

/// What a reply says where the human decides on a failing report.
fn assert_the_human_decides(v: &Value, stage: &str, failure: &str) {
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!(stage), &json!("awaiting_confirmation")),
        "{v:#}"
    );
    assert_eq!(v["interaction_type"], "user_decision");
    assert_eq!(v["requires_user_confirmation"], true);
    assert_eq!(v["pending_user_actions"], json!(["confirm", "reject"]));
    // With notices (the project has no checks), `next_step` also says to pass them on.
    let tell = if v["notices"].is_array() {
        " Also tell the human what `notices` says: it is for them."
    } else {
        ""
    };
    assert_eq!(
        v["next_step"],
        format!("Show `user_message` to the human and stop. The human decides: accept the risk (`confirm`), or send the work back to `dev` (`reject` with `feedback` in their words); never decide for them.{tell}"),
        "{v:#}"
    );
    let message = v["user_message"].as_str().unwrap();
    let path = v["artifact_path"].as_str().unwrap();
    let digest = v["document_digest"].as_str().unwrap();
    assert!(
        message.contains(&format!("report does not pass: {failure}."))
            && message.contains(&format!("{path} (SHA-256 {digest}…)"))
            && message.contains("then decide: accept the risk")
            && message.contains("or send the work back to the Developer (dev)"),
        "{message}"
    );
    assert_eq!(v["gate_passed"], false);
}

#[tokio::test]
async fn a_failing_review_sent_back_by_the_human_returns_to_dev_with_the_findings() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let sid = at_review(&c, &sb.project).await;
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": FAILING_REVIEW}))
        .await;
    assert_the_human_decides(&v, "review", "Review Status: Fail");
    assert_eq!(v["review_status"], "Fail");
    let report = v["artifact_path"].as_str().unwrap().to_string();
    assert_eq!(
        std::fs::read_to_string(sb.project.join(&report)).unwrap(),
        FAILING_REVIEW
    );

    // The host may not send it back without the human's words.
    c.refused(
        json!({"action": "reject", "session_id": sid}),
        "missing_field",
    )
    .await;
    let v = c
        .ok(json!({"action": "reject", "session_id": sid, "feedback": "Validate every input first.", "digest": v["document_digest"]}))
        .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("dev"), &json!("generating")),
        "{v:#}"
    );
    let prompt = v["role_prompt"].as_str().unwrap();
    // The feedback names this round's report, kept in a file of its own.
    let round_one = report.replace(".md", ".round-1.md");
    assert_eq!(
        std::fs::read_to_string(sb.project.join(&round_one)).unwrap(),
        FAILING_REVIEW
    );
    assert!(
        prompt.contains(&round_one)
            && prompt.contains("Review Status: Fail")
            && prompt.contains("Validate every input first."),
        "dev's prompt carries the findings: {prompt}"
    );
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.starts_with("Sent back with the report's findings")
            && !message.contains("Sprint plan approved"),
        "{message}"
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let stages = &s["session"]["stages"];
    assert_eq!(stages["review"]["status"], "pending");
    assert_eq!(stages["dev"]["status"], "in_progress");
    let last = last_entry(&s["session"]);
    assert_eq!(
        (
            &last["action"],
            &last["stage"],
            &last["to"],
            &last["decided_by"]
        ),
        (
            &json!("reject"),
            &json!("review"),
            &json!("generating"),
            &json!("host")
        )
    );

    // The new work passes review.
    for doc in [
        "# Implementation Report\n\n## Summary\nInputs validated.",
        "# Code Review\n\nReview Status: Pass",
    ] {
        c.ok(json!({"action": "submit", "session_id": sid, "codex_result": doc}))
            .await;
    }
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(
        (&s["stage"], &s["state"]),
        (&json!("qa"), &json!("generating"))
    );
    c.close().await;
}

#[tokio::test]
async fn a_qa_score_below_the_gate_whose_risk_the_human_accepts_is_recorded_and_reported() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let sid = at_review(&c, &sb.project).await;
    c.ok(json!({"action": "submit", "session_id": sid, "codex_result": FAILING_REVIEW}))
        .await;
    // The human accepts the review's risk; QA then scores below the gate.
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("qa"), &json!("generating"))
    );
    let qa =
        "# QA Report\n\n## Results\n7 passed, 3 failed.\n\nIntent: met\nQuality Score: 72/100\n";
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": qa}))
        .await;
    assert_the_human_decides(&v, "qa", "Quality Score: 72/100, below the gate of 90");
    assert_eq!(v["score"], 72);
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(v["state"], "completed");
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.contains("The workflow is complete. Review status: Fail (risk accepted, as the host asserted). QA score: 72/100 (below the gate of 90, risk accepted, as the host asserted)."),
        "{message}"
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let stages = &s["session"]["stages"];
    assert_eq!(
        (
            &stages["review"]["accepted_risk"],
            &stages["qa"]["accepted_risk"]
        ),
        (&json!(true), &json!(true))
    );
    let notes: Vec<&str> = s["session"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| {
            h["action"] == "confirm" && matches!(h["stage"].as_str(), Some("review" | "qa"))
        })
        .map(|h| h["note"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(notes.len(), 2);
    assert!(
        notes.iter().all(|n| n.contains("Risk accepted")),
        "{notes:?}"
    );
    let decided: Vec<(&Value, &Value)> = s["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| matches!(d["stage"].as_str(), Some("review" | "qa")))
        .map(|d| (&d["action"], &d["decided_by"]))
        .collect();
    assert_eq!(decided, [(&json!("confirm"), &json!("host")); 2]);
    c.close().await;
}

/// The round cap counts the rounds that stayed below the gate. Four passing drafts the
/// human sent back are no such rounds: the fifth submission, below the gate, is revised
/// like a first one, and only the fifth below-gate round hands the decision to the human.
#[tokio::test]
async fn passing_rounds_the_human_sent_back_do_not_count_toward_the_round_cap() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let passing = crate::support::passing_prd();
    for round in 1..=4 {
        let v = c
            .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing}))
            .await;
        assert_eq!(v["state"], "awaiting_confirmation", "round {round}: {v:#}");
        assert_eq!(v["gate_passed"], true);
        c.ok(json!({"action": "reject", "session_id": sid, "feedback": format!("Repeat {round}: one more thing.")}))
            .await;
    }
    let low = crate::support::scored("prd_updated", &document("PRD", &PRD_SECTIONS[..2]), 70);
    for below in 1..=4 {
        let v = c
            .ok(json!({"action": "submit", "session_id": sid, "claude_result": low}))
            .await;
        assert_eq!(
            (&v["state"], &v["iteration"]),
            (&json!("refining"), &json!(4 + below)),
            "below-gate round {below}: {v:#}"
        );
        assert!(v["guidance"].is_array(), "{v:#}");
    }
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": low}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_eq!(v["gate_passed"], false);
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.contains("still below the gate after 5 submissions"),
        "{message}"
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let po = &s["session"]["stages"]["po"];
    assert_eq!(
        (&po["iteration"], &po["below_gate"]),
        (&json!(9), &json!(5))
    );
    c.close().await;
}

/// No verdict is optional. A review without a `Review Status:` line and a QA report without
/// a score stop at the human as failing ones do; a score that is there but unreadable is
/// named as such; a report submitted again exactly as the human sent it back is flagged as
/// unchanged, in the reply and in what the terminal shows the human.
#[cfg(unix)]
#[tokio::test]
async fn a_report_without_a_verdict_stops_at_the_human_and_an_unchanged_one_is_flagged() {
    use crate::support::terminal::in_terminal;
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let sid = at_review(&c, &sb.project).await;
    let no_status = "# Code Review\n\n## Findings\n- none worth naming.\n";
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": no_status}))
        .await;
    assert_the_human_decides(&v, "review", "Review Status: not stated");
    let task = v["task_name"].as_str().unwrap().to_string();
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Review it again and say whether it passes."}))
        .await;
    let notices = |v: &Value| -> Vec<String> {
        v["notices"]
            .as_array()
            .map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": "# Implementation Report\n\n## Summary\nBuilt again."}))
        .await;
    assert!(
        notices(&v).iter().all(|n| !n.starts_with("Unchanged")),
        "{v:#}"
    );
    // The same review, byte for byte: flagged to the host and to the human.
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": no_status}))
        .await;
    assert_the_human_decides(&v, "review", "Review Status: not stated");
    let unchanged = "Unchanged: the Code Reviewer's document is the same one that was sent back";
    assert!(
        notices(&v).iter().any(|n| n.starts_with(unchanged)),
        "{v:#}"
    );
    let (code, out) = in_terminal(&sb.project, &["confirm", &task], "[y/N]", "n\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("Note: {unchanged}")), "{out}");
    assert!(
        out.contains("It does not pass (Review Status: not stated)"),
        "{out}"
    );

    // The human accepts that risk; QA states no score.
    c.ok(json!({"action": "confirm", "session_id": sid})).await;
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": "# QA Report\n\n## Results\nAll passed.\n"}))
        .await;
    assert_the_human_decides(&v, "qa", "Quality Score: not stated; Intent: not stated");
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "State the score."}))
        .await;
    for doc in [
        "# Implementation Report\n\n## Summary\nBuilt a third time.",
        "# Code Review\n\nReview Status: Pass",
    ] {
        c.ok(json!({"action": "submit", "session_id": sid, "codex_result": doc}))
            .await;
    }
    // A score that is there but is no number is named, not taken for "no score".
    let qa =
        json!({"qa_report": "# QA Report\n\nAll passed.\nIntent: met", "quality_score": "high"})
            .to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": qa}))
        .await;
    assert_the_human_decides(
        &v,
        "qa",
        "Quality Score: \"high\" is not a number from 0 to 100",
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(s["session"]["stages"]["qa"]["score_unreadable"], "high");
    c.close().await;
}

/// At a scored stage, a score that is there but unreadable is named as such (the server
/// estimates instead), never as "no score was stated".
#[tokio::test]
async fn an_unreadable_prd_score_is_named_not_taken_for_none() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let prd =
        json!({"prd_draft": document("PRD", &PRD_SECTIONS), "quality_score": "high"}).to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": prd}))
        .await;
    assert_eq!(
        (&v["state"], &v["score_source"]),
        (&json!("refining"), &json!("estimated")),
        "{v:#}"
    );
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.contains(
            "(estimated by the server: the stated score \"high\" is not a number from 0 to 100)"
        ) && !message.contains("no score was stated"),
        "{message}"
    );
    assert!(
        v["notices"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("The stated quality score \"high\" is not a number from 0 to 100")),
        "{v:#}"
    );
    c.close().await;
}
