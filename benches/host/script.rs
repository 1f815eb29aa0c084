//! The scripted model's tool calls: the example's standard workflow (the 15 calls of
//! `examples/full_workflow.rs`, with `examples/fixtures`), a long run with two
//! clarification rounds, rejections with feedback, a send-back from review, then `status`
//! and `list`, and a team run where the human makes three decisions in a terminal while
//! the model waits, and a check fails once. Each call is the tool's arguments;
//! `session_id` is filled in by the fake from the `start` result, as a model would copy it.

use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/fixtures");
pub const OBJECTIVE: &str = "Build a service that publishes a weekly team changelog";

/// The placeholder the fake replaces with the session id it read in `start`'s result.
pub const SESSION: &str = "$SESSION";

fn fixture(name: &str) -> String {
    let path = format!("{FIXTURES}/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn call(mut args: Value) -> Value {
    if args["action"] != "start" {
        args["session_id"] = SESSION.into();
    }
    args
}

fn submit(doc: String) -> Value {
    call(json!({"action": "submit", "claude_result": doc}))
}

/// The example's 15 calls.
pub fn standard(cwd: &str) -> Vec<Value> {
    vec![
        json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}),
        submit(fixture("po-draft.json")),
        call(json!({"action": "answer", "answers": {
            "q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}})),
        submit(fixture("po-final.json")),
        call(json!({"action": "confirm"})),
        submit(fixture("architect-draft.json")),
        call(json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}})),
        submit(fixture("architect-final.json")),
        call(json!({"action": "confirm"})),
        submit(fixture("sprint-plan.md")),
        call(json!({"action": "approve", "scope": "all"})),
        submit(fixture("dev-report.md")),
        submit(fixture("review.md")),
        submit(fixture("qa-report.md")),
        call(json!({"action": "status"})),
    ]
}

/// A PO draft below the gate that asks one more question (the second clarification round).
fn po_second_draft() -> String {
    let mut v: Value = serde_json::from_str(&fixture("po-draft.json")).expect("po-draft.json");
    v["prd_draft"] = format!(
        "{}\n## Technical Requirements\n- GitHub REST API, web UI only.\n",
        v["prd_draft"].as_str().unwrap_or_default()
    )
    .into();
    v["quality_score"] = 78.into();
    v["gaps"] = json!(["When the changelog is published is not stated"]);
    v["questions"] = json!([{"id": "q4", "question": "On which weekday is the changelog published?",
        "context": "Decides the scheduler"}]);
    v.to_string()
}

/// The final PRD again after the human's feedback, with the change they asked for.
fn po_revised() -> String {
    let mut v: Value = serde_json::from_str(&fixture("po-final.json")).expect("po-final.json");
    let key = if v.get("prd_updated").is_some() {
        "prd_updated"
    } else {
        "prd_draft"
    };
    v[key] = format!(
        "{}\n\n## Out of Scope\n- Private repositories of other organisations.\n",
        v[key].as_str().unwrap_or_default()
    )
    .into();
    v.to_string()
}

/// A review that asks for changes, so that the human sends the work back to development.
fn review_changes() -> String {
    fixture("review.md").replace(
        "Review Status: Pass with Risk",
        "Review Status: Needs Changes",
    )
}

fn dev_second() -> String {
    format!(
        "{}\n\n## Second round\n- Handled the empty week the review found.\n",
        fixture("dev-report.md")
    )
}

/// A long run: 25 calls.
pub fn long(cwd: &str) -> Vec<Value> {
    vec![
        json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}),
        submit(fixture("po-draft.json")),
        call(json!({"action": "answer", "answers": {
            "q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}})),
        submit(po_second_draft()),
        call(json!({"action": "answer", "answers": {"q4": "Friday"}})),
        submit(fixture("po-final.json")),
        call(json!({"action": "reject", "feedback": "Say what is out of scope."})),
        submit(po_revised()),
        call(json!({"action": "confirm"})),
        submit(fixture("architect-draft.json")),
        call(json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}})),
        submit(fixture("architect-final.json")),
        call(json!({"action": "confirm"})),
        submit(fixture("sprint-plan.md")),
        call(json!({"action": "reject", "feedback": "Put the scheduler in sprint 1."})),
        submit(format!(
            "{}\nThe scheduler moved into sprint 1, as asked.\n",
            fixture("sprint-plan.md")
        )),
        call(json!({"action": "approve", "scope": "all"})),
        submit(fixture("dev-report.md")),
        submit(review_changes()),
        call(json!({"action": "reject", "feedback": "Fix the empty week before QA."})),
        submit(dev_second()),
        submit(fixture("review.md")),
        submit(fixture("qa-report.md")),
        call(json!({"action": "status"})),
        json!({"action": "list", "cwd": cwd}),
    ]
}

/// A decision the human makes in a terminal before the call at `before` (counted from 0):
/// the command's arguments after the binary (`SESSION` stands for the session id) and what
/// they type at its question.
pub struct Decision {
    pub before: usize,
    pub args: Vec<String>,
    pub typed: &'static str,
}

fn decision(before: usize, args: &[&str], typed: &'static str) -> Decision {
    Decision {
        before,
        args: args.iter().map(|a| a.to_string()).collect(),
        typed,
    }
}

/// The team run's check: it fails the first time it runs (as a test the developer has not
/// made pass yet), then passes.
pub const CHECK_CONFIG: &str = r#"[checks]
test = "if [ -f .bench-check-ran ]; then echo 'test result: ok. 12 passed; 0 failed'; else touch .bench-check-ran; echo 'running 12 tests'; echo 'test digest::empty_week ... FAILED'; echo 'test result: FAILED. 11 passed; 1 failed'; exit 101; fi"
"#;

/// The team run: every stage, two clarification rounds, the PRD sent back, a failing
/// check, and three decisions made in a terminal (the PRD sent back, the sprint plan
/// approved, the failing work sent back), each followed by the model's `status`; 20 calls.
pub fn team(cwd: &str) -> (Vec<Value>, Vec<Decision>) {
    let calls = vec![
        json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}),
        submit(fixture("po-draft.json")),
        call(json!({"action": "answer", "answers": {
            "q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}})),
        submit(po_second_draft()),
        call(json!({"action": "answer", "answers": {"q4": "Friday"}})),
        submit(fixture("po-final.json")),
        call(json!({"action": "status"})),
        submit(po_revised()),
        call(json!({"action": "confirm"})),
        submit(fixture("architect-final.json")),
        call(json!({"action": "confirm"})),
        submit(fixture("sprint-plan.md")),
        call(json!({"action": "status"})),
        submit(fixture("dev-report.md")),
        call(json!({"action": "status"})),
        submit(dev_second()),
        submit(fixture("review.md")),
        submit(fixture("qa-report.md")),
        call(json!({"action": "status"})),
        json!({"action": "list", "cwd": cwd}),
    ];
    let decisions = vec![
        decision(
            6,
            &["reject", SESSION, "--feedback", "Say what is out of scope."],
            "yes\n",
        ),
        decision(12, &["approve", SESSION], "y\n"),
        decision(
            14,
            &[
                "reject",
                SESSION,
                "--feedback",
                "Make the empty-week test pass.",
            ],
            "yes\n",
        ),
    ];
    (calls, decisions)
}
