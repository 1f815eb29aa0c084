//! The human's words are never dropped, loops keep their cause, and the end says what was
//! built, through the real binary.

use crate::support::{
    at_dev, connect, document, passing_architecture, passing_prd, read_json, start_args, Client,
    Era, Sandbox, PRD_SECTIONS,
};
use serde_json::{json, Value};
use std::path::Path;

fn session_file(project: &Path, sid: &Value) -> Value {
    read_json(
        &project
            .join(".bmad-task")
            .join(format!("session-{}.json", sid.as_str().unwrap())),
    )
}

/// The history entries of `action` at `stage`, as stored.
fn entries(s: &Value, action: &str, stage: &str) -> Vec<Value> {
    s["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["action"] == action && h["stage"] == stage)
        .cloned()
        .collect()
}

async fn act(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

#[tokio::test]
async fn a_note_given_while_accepting_is_kept_with_the_decision_and_shown_to_the_next_roles() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    let v = act(
        &c,
        &sid,
        json!({"action": "confirm", "feedback": "Looks good, but add offline sync."}),
    )
    .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("architect"), &json!("generating"))
    );
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("## Notes for the System Architect, from decisions on other stages (")
            && prompt.contains(
                "the assistant gave as the user's words (not confirmed by the user in a dialog or terminal): Looks good, but add offline sync."
            ),
        "the architect reads the note: {prompt}"
    );
    act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": passing_architecture()}),
    )
    .await;
    let v = act(&c, &sid, json!({"action": "confirm"})).await;
    // The note on the PRD reaches every role after it, the scrum master's included.
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("add offline sync"));
    act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": "# Sprint Plan\n\n## Sprint 1: Core\n- it\n\n## Sprint 2: Import\n- BOM\n"}),
    )
    .await;
    let v = act(
        &c,
        &sid,
        json!({"action": "approve", "scope": "all", "feedback": "Approve, but skip the BOM handling."}),
    )
    .await;
    assert_eq!(v["stage"], "dev");
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("(scope: all), the assistant gave as the user's words (not confirmed by the user in a dialog or terminal): Approve, but skip the BOM handling.")
            && prompt.contains("add offline sync"),
        "{prompt}"
    );

    // Stored with each decision, so it survives the process and jq finds it.
    c.close().await;
    let s = session_file(&sb.project, &sid);
    let po = entries(&s, "confirm", "po");
    assert_eq!(po[0]["feedback"], "Looks good, but add offline sync.");
    assert_eq!(entries(&s, "confirm", "architect")[0].get("feedback"), None);
    assert_eq!(
        entries(&s, "approve", "sm")[0]["feedback"],
        "Approve, but skip the BOM handling."
    );
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("skip the BOM handling") && prompt.contains("add offline sync"));
    c.close().await;
}

/// A PRD below the gate; `questions` as the author asks them.
fn weak_prd(n: u32, questions: &[&str]) -> String {
    let qs: Vec<Value> = questions.iter().map(|q| json!({"question": q})).collect();
    json!({
        "prd_draft": format!("# PRD\n\n## Executive Summary\nDraft {n}."),
        "quality_score": 60,
        "questions": qs,
    })
    .to_string()
}

#[tokio::test]
async fn open_questions_can_be_answered_while_accepting_and_answers_elsewhere_are_refused() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": weak_prd(1, &["Web or mobile?"])}),
    )
    .await;
    assert_eq!(v["state"], "clarifying");
    act(
        &c,
        &sid,
        json!({"action": "answer", "answers": {"q1": "Web only"}}),
    )
    .await;
    for n in 2..5 {
        act(
            &c,
            &sid,
            json!({"action": "submit", "claude_result": weak_prd(n, &[])}),
        )
        .await;
    }
    // At the round cap, the draft goes to the human with a question still open.
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": weak_prd(5, &["Which languages?"])}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_eq!(v["questions"][0]["id"], "q2");
    let message = v["user_message"].as_str().unwrap();
    assert!(message.contains("answer them while accepting"), "{message}");

    // Answers go with an accepting `confirm` only, and only to the stage's questions.
    for (args, code) in [
        (
            json!({"action": "reject", "feedback": "no", "answers": {"q2": "English"}}),
            "invalid_argument",
        ),
        (
            json!({"action": "confirm", "confirmed": false, "feedback": "no", "answers": {"q2": "English"}}),
            "invalid_argument",
        ),
        (
            json!({"action": "confirm", "answers": {"q9": "English"}}),
            "unknown_question",
        ),
        (
            json!({"action": "confirm", "answers": {"q2": "  "}}),
            "invalid_argument",
        ),
    ] {
        let mut args = args;
        args["session_id"] = sid.clone();
        let e = c.refused(args, code).await;
        assert!(
            e["error"]["message"].as_str().unwrap().contains("answers"),
            "{e:#}"
        );
    }
    let s = session_file(&sb.project, &sid);
    assert_eq!(
        s["current_state"], "awaiting_confirmation",
        "refusals change nothing"
    );

    let v = act(
        &c,
        &sid,
        json!({"action": "confirm", "answers": {"q2": "English and German"}}),
    )
    .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("architect"), &json!("generating"))
    );
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("q2 Which languages? Answer: English and German"),
        "the architect reads the answer: {prompt}"
    );
    let s = session_file(&sb.project, &sid);
    assert_eq!(s["stages"]["po"]["answers"]["q2"], "English and German");
    assert_eq!(s["stages"]["po"]["answers"]["q1"], "Web only");
    c.close().await;
}

/// A review whose JSON names a verdict: `review_status` beside the document.
fn review_json(text_line: &str, field: Value) -> String {
    json!({
        "review": format!("# Code Review\n\n## Findings\nFine.\n\n{text_line}\n"),
        "review_status": field,
    })
    .to_string()
}

#[tokio::test]
async fn a_review_whose_json_verdict_contradicts_its_review_status_line_is_refused() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let sid = at_dev(&c, &sb.project).await;
    act(&c, &sid, json!({"action": "submit", "codex_result": "# Implementation Report\n\n## Summary\nBuilt."})).await;
    let before = session_file(&sb.project, &sid);
    for (text, field, says) in [
        ("Review Status: Pass", json!("Fail"), "the JSON's `review_status` is `Fail`, but the document's own line is `Review Status: Pass`"),
        ("No verdict here.", json!("Pass"), "the document's own line is missing"),
        ("Review Status: Fail", json!("great"), "`\"great\"`, which is none of Pass, Pass with Risk, Fail"),
    ] {
        let e = c
            .refused(
                json!({"action": "submit", "session_id": sid, "codex_result": review_json(text, field)}),
                "invalid_argument",
            )
            .await;
        let message = e["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("field `codex_result`:") && message.contains(says),
            "{message}"
        );
    }
    assert_eq!(
        session_file(&sb.project, &sid),
        before,
        "nothing was recorded"
    );
    // The two agreeing is what the server reads anyway: accepted.
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": review_json("Review Status: Pass with Risk", json!("pass with risk"))}),
    )
    .await;
    assert_eq!(v["stage"], "qa", "{v:#}");
    c.close().await;
}

const FAILING_QA: &str =
    "# QA Report\n\n## Results\n7 passed, 3 failed.\n\nIntent: met\nQuality Score: 62/100\n";

#[tokio::test]
async fn every_stage_a_qa_send_back_reruns_sees_the_cause_and_each_round_keeps_its_report() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let sid = at_dev(&c, &sb.project).await;
    let specs = |v: &Value| sb.project.join(v.as_str().unwrap());
    act(&c, &sid, json!({"action": "submit", "codex_result": "# Implementation Report\n\n## Summary\nBuilt."})).await;
    act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": "# Code Review\n\nReview Status: Pass"}),
    )
    .await;
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": FAILING_QA}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    let report = v["artifact_path"].as_str().unwrap().to_string();
    let round_one = report.replace(".md", ".round-1.md");
    let v = act(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Fix the three failing cases."}),
    )
    .await;
    assert_eq!(v["stage"], "dev");
    assert_eq!(
        std::fs::read_to_string(specs(&json!(round_one))).unwrap(),
        FAILING_QA
    );
    let dev = v["role_prompt"].as_str().unwrap();
    assert!(
        dev.contains(&round_one) && dev.contains("Fix the three failing cases."),
        "{dev}"
    );

    // Review and QA run again, and each is told why, in its own prompt.
    let v = act(&c, &sid, json!({"action": "submit", "codex_result": "# Implementation Report\n\n## Summary\nFixed."})).await;
    assert_eq!(v["stage"], "review");
    let review = v["role_prompt"].as_str().unwrap();
    assert!(
        review.contains("This stage runs again because the work was sent back")
            && review.contains(&round_one)
            && review.contains("Fix the three failing cases."),
        "{review}"
    );
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": "# Code Review\n\nReview Status: Pass"}),
    )
    .await;
    assert_eq!(v["stage"], "qa");
    let qa = v["role_prompt"].as_str().unwrap();
    assert!(
        qa.contains(&round_one) && qa.contains("Fix the three failing cases."),
        "{qa}"
    );

    // Round two fails again and goes back: round one's report is what it was, and the
    // new feedback names round two's.
    let second = FAILING_QA
        .replace("3 failed", "1 failed")
        .replace("62/100", "80/100");
    act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": second}),
    )
    .await;
    let v = act(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "One left."}),
    )
    .await;
    let round_two = report.replace(".md", ".round-2.md");
    assert_eq!(
        std::fs::read_to_string(specs(&json!(round_one))).unwrap(),
        FAILING_QA
    );
    assert_eq!(
        std::fs::read_to_string(specs(&json!(round_two))).unwrap(),
        second
    );
    assert!(v["role_prompt"].as_str().unwrap().contains(&round_two));
    let s = session_file(&sb.project, &sid);
    let kept: Vec<&Value> = s["stages"]["qa"]["round_reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["file_path"])
        .collect();
    assert_eq!(kept, [&json!(round_one), &json!(round_two)]);
    assert_eq!(
        entries(&s, "reject", "qa")[1]["feedback"],
        "One left.",
        "the rejection's words are in its history entry too"
    );
    c.close().await;
}

#[tokio::test]
async fn the_completion_message_names_the_sprints_built_and_those_left_out() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let prd = json!({"prd_draft": document("PRD", &PRD_SECTIONS), "quality_score": 95}).to_string();
    for args in [
        json!({"action": "submit", "claude_result": prd}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": "# Sprint Plan\n\n## Sprint 1: Core\n- a\n\n## Sprint 2: Export\n- b\n\n## Sprint 3: Sync\n- c\n"}),
        json!({"action": "approve", "scope": "sprint 1"}),
        json!({"action": "submit", "codex_result": "# Implementation Report\n\n## Summary\nBuilt."}),
        json!({"action": "submit", "codex_result": "# Code Review\n\nReview Status: Pass"}),
    ] {
        act(&c, &sid, args).await;
    }
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "codex_result": "# QA\n\nIntent: met\nQuality Score: 95/100"}),
    )
    .await;
    assert_eq!(v["state"], "completed");
    let message = v["user_message"].as_str().unwrap();
    let plan = format!(".claude/specs/{task}/03-sprint-plan.md");
    assert!(
        message.contains(&format!("The workflow is complete. Review status: Pass. QA score: 95/100. Sprints built: 1 (Core). Left out of scope: 2 (Export), 3 (Sync); to build them later, start a new BMAD task whose objective names them and the plan, e.g. “Build sprints 2, 3 of the plan in {plan}”. Intent: met. Trace: the PRD gives its requirements no ids. Documents, in .claude/specs/{task}/:\n")),
        "{message}"
    );
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert!(v["user_message"]
        .as_str()
        .unwrap()
        .contains("Left out of scope: 2 (Export), 3 (Sync)"));
    c.close().await;
}

/// In the client's dialog, the feedback field is the human's note when they accept: the
/// host's words are offered there, and what the human leaves in it is kept as theirs.
async fn a_note_typed_in_the_dialog_is_kept_as_the_humans(era: Era) {
    use crate::support::transport::Transport;
    use crate::support::user::{structured, User};
    use rmcp::model::ElicitationAction;

    let sb = Sandbox::new();
    let user = User::default();
    let service = Transport::Stdio
        .host(&sb.project)
        .connect_as(user.clone(), era)
        .await;
    let call = |args: Value| structured(&service, args);
    let v = call(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    call(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()})).await;
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm", "feedback": "Keep it web only, and add export."})),
    );
    let v = call(json!({"action": "confirm", "session_id": sid, "feedback": "Keep it web only."}))
        .await;
    assert_eq!(v["stage"], "architect", "{v:#}");
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("the user said: Keep it web only, and add export."));
    let s = session_file(&sb.project, &sid);
    let po = &entries(&s, "confirm", "po")[0];
    assert_eq!(
        (&po["decided_by"], &po["via"], &po["feedback"]),
        (
            &json!("human"),
            &json!("elicitation"),
            &json!("Keep it web only, and add export.")
        )
    );
    let _ = service.cancel().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_typed_in_the_dialog_is_kept_as_the_humans_during_the_call() {
    a_note_typed_in_the_dialog_is_kept_as_the_humans(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_note_typed_in_the_dialog_is_kept_as_the_humans_in_an_input_required_result() {
    a_note_typed_in_the_dialog_is_kept_as_the_humans(Era::Modern).await;
}

/// The terminal takes the human's note too: `bmad-mcp approve <task> --note …`.
#[cfg(unix)]
#[tokio::test]
async fn a_note_typed_in_the_terminal_is_kept_as_the_humans() {
    use crate::support::terminal::in_terminal;

    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": "# Sprint Plan\n\n## Sprint 1: Core\n- a\n\n## Sprint 2: Import\n- BOM\n"}),
    ] {
        act(&c, &sid, args).await;
    }
    c.close().await;
    let (code, out) = in_terminal(
        &sb.project,
        &[
            "approve",
            &task,
            "--scope",
            "1",
            "--note",
            "Skip the BOM handling.",
        ],
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Your note, for the roles after this one: Skip the BOM handling."),
        "{out}"
    );
    let s = session_file(&sb.project, &sid);
    let sm = &entries(&s, "approve", "sm")[0];
    assert_eq!(
        (&sm["decided_by"], &sm["via"], &sm["feedback"]),
        (
            &json!("human"),
            &json!("cli"),
            &json!("Skip the BOM handling.")
        )
    );
    let notes = s["stages"]["dev"]["notes"].as_array().unwrap();
    assert!(notes[0]
        .as_str()
        .unwrap()
        .contains("(scope: 1), the user said: Skip the BOM handling."));
}

/// A field the action does not use is refused, naming where it goes; nothing changes.
#[tokio::test]
async fn a_field_the_action_does_not_use_is_refused_naming_where_it_goes() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let before = session_file(&sb.project, &sid);
    for (args, says) in [
        (
            json!({"action": "submit", "claude_result": passing_prd(), "feedback": "Make it shorter."}),
            "field `feedback` is not used by `submit`: the human's words go with `reject`, or with `confirm` or `approve` as their note on the decision; nothing was changed",
        ),
        (
            json!({"action": "status", "scope": "sprint 1"}),
            "field `scope` is not used by `status`: it goes with an `approve` that accepts the plan",
        ),
    ] {
        let mut args = args;
        args["session_id"] = sid.clone();
        let e = c.refused(args, "invalid_argument").await;
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(says), "{message}");
    }
    assert_eq!(
        session_file(&sb.project, &sid),
        before,
        "nothing was recorded"
    );
    act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    let e = c
        .refused(
            json!({"action": "confirm", "session_id": sid, "scope": "all"}),
            "invalid_argument",
        )
        .await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("field `scope` is not used by `confirm`"));
    assert_eq!(
        session_file(&sb.project, &sid)["current_state"],
        "awaiting_confirmation"
    );
    c.close().await;
}

/// A result's JSON fields that nothing reads (a `priority` the model added) are named in
/// the reply's notices, not dropped in silence; a result with none gets no such notice.
#[tokio::test]
async fn json_fields_the_server_does_not_read_are_named_not_dropped() {
    let sb = Sandbox::new();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let mut prd: Value = serde_json::from_str(&passing_prd()).unwrap();
    prd["priority"] = json!("high");
    prd["owner"] = json!({"team": "core"});
    let v = act(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": prd.to_string()}),
    )
    .await;
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("`claude_result` held JSON fields the server does not read")
            && notices.contains("`owner`, `priority`"),
        "{v}"
    );
    assert_eq!(v["state"], "awaiting_confirmation", "still read as the PRD");

    let v = c.ok(start_args(&sb.project, "Build a wiki")).await;
    let v = act(
        &c,
        &v["session_id"],
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    assert!(!v["notices"].to_string().contains("does not read"), "{v}");
}
