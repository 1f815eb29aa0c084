//! A scripted run of the short tracks and of parallel stories (docs/guide.md, "Tracks and
//! stories"): a bug fixed on the `fix` track (a bug report the human confirms, a
//! development report that skips the failing test and stops at the human, who sends it
//! back, then one that shows its failing test, a review), a small change on the `quick`
//! track (a technical spec the human confirms, development, a review), then a `full` task
//! whose two approved sprints run as stories in two windows at once (two server processes
//! on one project), and the parent's final QA of the whole once both completed.
//!
//!     cargo run --release --example tracks_and_stories -- [project-dir]
//!
//! Without a directory it uses a fresh temporary one and says where. `BMAD_MCP_BIN`
//! overrides which server binary is started.

#[path = "common/mod.rs"]
pub mod common;

use common::{fixture, Demo, Failure};
use serde_json::{json, Value};

pub const BUG: &str = "Fix the changelog job crashing on a week without merged pull requests";
pub const OBJECTIVE: &str = "Build a service that publishes a weekly team changelog";

/// A bug report with every section the fix track's first stage asks for.
fn bug_report() -> String {
    let doc = "# Bug Report: empty week crashes the job\n\n## Summary\nThe weekly job exits with a panic when no pull request was merged that week.\n\n## Reproduction Steps\n1. Point the job at a repository with no merged pull request in the last 7 days.\n2. Run `changelog publish --week 2026-W47`.\n\n## Expected Behaviour\nA changelog saying \"No changes this week\" is published, exit code 0.\n\n## Actual Behaviour\n`thread 'main' panicked at 'index out of bounds'`, exit code 101, nothing published.\n\n## Suspected Cause\n`render_sections` takes the first entry of an empty list.\n";
    json!({"bug_report": doc, "quality_score": 94}).to_string()
}

/// The same report without its test: the fix track stops it at the human.
const FIX_REPORT_WITHOUT_TEST: &str = "# Implementation Report\n\n## Summary\nAn empty week renders \"No changes this week\".\n\n## Failing Test\nNone, fixed directly.\n\n## Changes\n- `src/render.rs`: no first entry is taken from an empty list.\n\n## Tests\n42 passed, 0 failed.\n";

pub const CHANGE: &str = "Add a --dry-run flag that prints the changelog instead of publishing it";

/// A technical spec with every section the quick track's first stage asks for.
fn technical_spec() -> String {
    let doc = "# Technical Spec: --dry-run\n\n## Change\n`changelog publish --dry-run` prints the week's changelog to stdout and publishes nothing.\n\n## Approach\nThe publish step takes a sink; `--dry-run` passes stdout instead of the wiki client.\n\n## Files\n- `src/cli.rs`: the flag.\n- `src/publish.rs`: the sink.\n\n## Acceptance Criteria\n- Given a week with merged pull requests, when `--dry-run` is passed, then the changelog is printed and the wiki is not called.\n\n## Risks\nNone beyond the flag's name clashing with a future global flag.\n";
    json!({"technical_spec": doc, "quality_score": 93}).to_string()
}

const FIX_REPORT: &str = "# Implementation Report\n\n## Summary\nAn empty week renders \"No changes this week\".\n\n## Failing Test\n`publishes_an_empty_week` reproduced the panic first (index out of bounds), then passed with the fix.\n\n## Changes\n- `src/render.rs`: no first entry is taken from an empty list.\n\n## Tests\n42 passed, 0 failed.\n";

/// A story's development, review and QA, as its own window runs them.
async fn story(window: &mut Demo, parent: &str, sprint: u32) -> Result<Value, Failure> {
    let cwd = window.project().display().to_string();
    window
        .step(json!({"action": "start", "cwd": cwd, "parent": parent, "sprint": sprint}))
        .await?;
    window
        .step(json!({"action": "submit", "claude_result": fixture("dev-report.md")?}))
        .await?;
    window
        .step(json!({"action": "submit", "claude_result": fixture("review.md")?}))
        .await?;
    window
        .step(json!({"action": "submit", "claude_result": fixture("qa-report.md")?}))
        .await
}

pub async fn run(demo: &mut Demo) -> Result<(), Failure> {
    let cwd = demo.project().display().to_string();

    // The fix track: bug report → development with a failing test first → review.
    demo.step(json!({"action": "start", "cwd": cwd, "objective": BUG, "track": "fix"}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": bug_report()}))
        .await?;
    demo.step(json!({"action": "confirm"})).await?;
    // A report whose `Failing Test` names none stops at the human, who sends it back.
    demo.step(json!({"action": "submit", "claude_result": FIX_REPORT_WITHOUT_TEST}))
        .await?;
    demo.step(json!({"action": "reject", "feedback": "Write the failing test first."}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": FIX_REPORT}))
        .await?;
    // The review closes the fix track: it states whether the fix does what was asked.
    let review = format!(
        "{}\nIntent: met, an empty week publishes \"No changes this week\".\n",
        fixture("review.md")?
    );
    demo.step(json!({"action": "submit", "claude_result": review}))
        .await?;

    // The quick track: a technical spec the human confirms, development, a review that
    // states the change does what was asked.
    demo.step(json!({"action": "start", "cwd": cwd, "objective": CHANGE, "track": "quick"}))
        .await?;
    demo.step(json!({"action": "submit", "claude_result": technical_spec()}))
        .await?;
    demo.step(json!({"action": "confirm"})).await?;
    demo.step(json!({"action": "submit", "claude_result": fixture("dev-report.md")?}))
        .await?;
    let review = format!(
        "{}\nIntent: met, `--dry-run` prints and publishes nothing.\n",
        fixture("review.md")?
    );
    demo.step(json!({"action": "submit", "claude_result": review}))
        .await?;

    // The full track up to the approved plan, in another window.
    let mut lead = demo.window().await?;
    let started = lead
        .step(json!({"action": "start", "cwd": cwd, "objective": OBJECTIVE}))
        .await?;
    let parent = started["task_name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    for (action, file) in [
        ("submit", Some("po-final.json")),
        ("confirm", None),
        ("submit", Some("architect-final.json")),
        ("confirm", None),
        ("submit", Some("sprint-plan.md")),
    ] {
        let mut args = json!({"action": action});
        if let Some(f) = file {
            args["claude_result"] = json!(fixture(f)?);
        }
        lead.step(args).await?;
    }
    lead.step(json!({"action": "approve", "scope": "all"}))
        .await?;

    // Each sprint as a story, in a window of its own, at the same time.
    let (mut one, mut two) = (demo.window().await?, demo.window().await?);
    let (a, b) = tokio::join!(story(&mut one, &parent, 1), story(&mut two, &parent, 2));
    a?;
    b?;
    for w in [one, two] {
        w.finish().await?;
    }

    // Every story completed: the parent runs the final QA of the whole.
    lead.step(json!({"action": "status"})).await?;
    lead.step(
        json!({"action": "submit", "stage": "qa", "claude_result": fixture("qa-report.md")?}),
    )
    .await?;
    lead.finish().await?;
    demo.step(json!({"action": "list", "cwd": cwd})).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    Demo::main(run).await
}
