//! A scripted end-to-end run: starts the real `bmad-mcp` binary, drives the whole
//! PO → QA workflow through rmcp's client with the documents in `examples/fixtures/`,
//! prints one line per step (stage, state, score, what the human is asked), and ends by
//! listing the files it produced.
//!
//!     cargo run --release --example full_workflow -- [project-dir]
//!
//! Without a directory it uses a fresh temporary one and says where. `BMAD_MCP_BIN`
//! overrides which server binary is started.

#[path = "common/mod.rs"]
pub mod common;

use common::{fixture, Demo, Failure};
use serde_json::json;

pub const OBJECTIVE: &str = "Build a service that publishes a weekly team changelog";

/// The workflow, as a host would drive it: each `submit` carries what the host's model
/// wrote with the role prompt; each `answer`, `confirm` and `approve` is the human's.
pub async fn run(demo: &mut Demo) -> Result<(), Failure> {
    let cwd = demo.project().display().to_string();
    demo.step(json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}))
        .await?;

    // Product Owner: a draft that asks three questions, the human's answers, then the
    // refined PRD, which reports a score above the gate; the human confirms it.
    demo.step(
        json!({"action": "submit", "stage": "po", "claude_result": fixture("po-draft.json")?}),
    )
    .await?;
    demo.step(json!({"action": "answer", "answers": {
        "q1": "GitHub first",
        "q2": "Web only",
        "q3": "Repository maintainers"
    }}))
    .await?;
    demo.step(
        json!({"action": "submit", "stage": "po", "claude_result": fixture("po-final.json")?}),
    )
    .await?;
    demo.step(json!({"action": "confirm"})).await?;

    // Architect: one question, then the design.
    demo.step(json!({"action": "submit", "claude_result": fixture("architect-draft.json")?}))
        .await?;
    demo.step(json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": fixture("architect-final.json")?}))
        .await?;
    demo.step(json!({"action": "confirm"})).await?;

    // Scrum Master: a plan with two sprints, approved for both.
    demo.step(json!({"action": "submit", "claude_result": fixture("sprint-plan.md")?}))
        .await?;
    demo.step(json!({"action": "approve", "scope": "all"}))
        .await?;

    // Developer, Reviewer and QA: accepted as submitted. This session runs the host's
    // model alone (its objective does not name codex), so the host writes them too.
    demo.step(json!({"action": "submit", "claude_result": fixture("dev-report.md")?}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": fixture("review.md")?}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": fixture("qa-report.md")?}))
        .await?;
    demo.step(json!({"action": "status"})).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    Demo::main(run).await
}
