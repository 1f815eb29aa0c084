//! The dual-engine path: an objective that names codex makes the Product Owner and
//! Architect stages ask both engines. Both results are submitted in one `submit`, the
//! server scores each and keeps the better one; the human rejects the kept PRD with
//! feedback, both engines revise, and the resubmission is kept instead. The session is
//! left where a human decision is due (the sprint plan awaits approval), as a real one
//! often is between two conversations.
//!
//!     cargo run --release --example dual_engine -- [project-dir]
//!
//! Without a directory it uses a fresh temporary one and says where. `BMAD_MCP_BIN`
//! overrides which server binary is started.

#[path = "common/mod.rs"]
pub mod common;

use common::{fixture, Demo, Failure};
use serde_json::json;

/// Naming codex as a word is what asks for the second engine.
pub const OBJECTIVE: &str = "Weekly team changelog, drafted by claude and codex";

pub const FEEDBACK: &str = "Private repositories must be included (q2, which I left open), and only maintainers of the repository may approve.";

pub async fn run(demo: &mut Demo) -> Result<(), Failure> {
    let cwd = demo.project().display().to_string();
    let started = demo
        .step(json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}))
        .await?;
    let task_name = started["task_name"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // First drafts from both engines in one call. Codex scored higher, so its draft is
    // the one kept, and its two questions are the ones asked (claude's, about a draft
    // that was set aside, are not). The human leaves q2 open.
    demo.step(json!({
        "action": "submit",
        "stage": "po",
        "claude_result": fixture("po-draft.json")?,
        "codex_result": fixture("dual-po-codex-draft.md")?,
    }))
    .await?;
    demo.step(json!({"action": "answer", "answers": {"q1": "GitHub first"}}))
        .await?;

    // Both revise. Claude's PRD passes the gate and codex's does not, so claude's is
    // written to .claude/specs/ for the human to read.
    demo.step(json!({
        "action": "submit",
        "claude_result": fixture("po-final.json")?,
        "codex_result": fixture("dual-po-codex-final.json")?,
    }))
    .await?;

    // The human reads it and sends it back; both engines revise with the feedback, and
    // this time codex's document (its score stated in the text) is the better one.
    demo.step(json!({"action": "reject", "feedback": FEEDBACK}))
        .await?;
    demo.step(json!({
        "action": "submit",
        "claude_result": fixture("dual-po-claude-revised.json")?,
        "codex_result": fixture("dual-po-codex-revised.md")?,
    }))
    .await?;
    demo.step(json!({"action": "confirm"})).await?;

    // Architect: both engines are asked, but only claude answered; an engine that did
    // not submit is not a candidate, and the reply says that its draft is missing.
    demo.step(json!({"action": "submit", "claude_result": fixture("architect-final.json")?}))
        .await?;
    demo.step(json!({"action": "confirm"})).await?;
    demo.step(json!({"action": "submit", "claude_result": fixture("sprint-plan.md")?}))
        .await?;

    demo.say(format!(
        "     the sprint plan now waits for the human; any later conversation resumes it with \
         {{\"action\": \"approve\", \"task_name\": \"{task_name}\", \"scope\": \"sprint 1\"}}"
    ));
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    Demo::main(run).await
}
