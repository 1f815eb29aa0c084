//! The anchor: the server bmad-mcp replaces (cexll's BMAD-MCP, TypeScript over stdio, which
//! writes its files without fsync), driven through the same workflow in the same run when
//! `BMAD_ANCHOR_CMD` is the command line that starts it, e.g.
//! `BMAD_ANCHOR_CMD="node /work/anchor/bmad-mcp-server/dist/index.js"`. Nothing of it is
//! part of this repository: build it beside the project and name it here.
//!
//! Its tool is also `bmad-task` with the same documents, but its arguments differ: `submit`
//! names the stage and takes the sprint plan as `claude_result` and the dev, review and
//! QA reports as `codex_result`; `confirm` needs `confirmed: true` and `approve`
//! `approved: true`; it answers with its JSON as text. Each call's reply must name the
//! state the script expects, so both servers are timed doing the same steps.

use std::path::Path;

use serde_json::json;

use crate::docs::Docs;
use crate::run::{drive, Call, WorkflowRun};
use crate::{Res, OBJECTIVE};

/// The anchor's command line, when the environment names one.
pub fn command() -> Option<Vec<String>> {
    let line = std::env::var("BMAD_ANCHOR_CMD").ok()?;
    let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    (!words.is_empty()).then_some(words)
}

/// The example's 15 calls in the anchor's words, with the state each reaches there.
pub fn calls(docs: &Docs, project: &Path) -> Vec<Call> {
    let submit = |stage: &str, field: &str, text: &str| json!({"action": "submit", "stage": stage, field: text});
    let confirm = json!({"action": "confirm", "confirmed": true});
    vec![
        (
            "start",
            json!({"action": "start", "cwd": project, "objective": OBJECTIVE}),
            Some("generating"),
        ),
        (
            "submit po draft",
            submit("po", "claude_result", &docs.po_draft),
            Some("clarifying"),
        ),
        (
            "answer po",
            json!({"action": "answer", "answers": {
                "q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}}),
            Some("refining"),
        ),
        (
            "submit po final",
            submit("po", "claude_result", &docs.po_final),
            Some("awaiting_confirmation"),
        ),
        ("confirm po", confirm.clone(), Some("generating")),
        (
            "submit architect draft",
            submit("architect", "claude_result", &docs.architect_draft),
            Some("clarifying"),
        ),
        (
            "answer architect",
            json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}}),
            Some("refining"),
        ),
        (
            "submit architect final",
            submit("architect", "claude_result", &docs.architect_final),
            Some("awaiting_confirmation"),
        ),
        ("confirm architect", confirm, Some("generating")),
        (
            "submit sprint plan",
            submit("sm", "claude_result", &docs.sprint_plan),
            Some("awaiting_approval"),
        ),
        (
            "approve",
            json!({"action": "approve", "approved": true}),
            Some("generating"),
        ),
        (
            "submit dev",
            submit("dev", "codex_result", &docs.dev),
            Some("generating"),
        ),
        (
            "submit review",
            submit("review", "codex_result", &docs.review),
            Some("generating"),
        ),
        (
            "submit qa",
            submit("qa", "codex_result", &docs.qa),
            Some("completed"),
        ),
        ("status", json!({"action": "status"}), Some("completed")),
    ]
}

/// One run of the anchor in a fresh project.
pub fn run(line: &[String], docs: &Docs, project: &Path) -> Res<WorkflowRun> {
    drive(line, calls(docs, project), project, true)
}
