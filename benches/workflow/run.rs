//! The example's workflow (`examples/full_workflow.rs`'s calls) as the bench runs it: one
//! server per run, in a fresh project, every call timed.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::docs::Docs;
use crate::driver::{Reply, Server};
use crate::table::{ms, Stats};
use crate::{Config, Res, OBJECTIVE};

/// The example's calls (examples/full_workflow.rs), in order; the session id is added
/// to every call after `start`.
pub fn workflow_calls(docs: &Docs, project: &Path) -> Vec<(&'static str, Value)> {
    vec![
        (
            "start",
            json!({"action": "start", "cwd": project, "objective": OBJECTIVE}),
        ),
        (
            "submit po draft",
            json!({"action": "submit", "stage": "po", "claude_result": docs.po_draft}),
        ),
        (
            "answer po",
            json!({"action": "answer", "answers": {
                "q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}}),
        ),
        (
            "submit po final",
            json!({"action": "submit", "stage": "po", "claude_result": docs.po_final}),
        ),
        ("confirm po", json!({"action": "confirm"})),
        (
            "submit architect draft",
            json!({"action": "submit", "claude_result": docs.architect_draft}),
        ),
        (
            "answer architect",
            json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}}),
        ),
        (
            "submit architect final",
            json!({"action": "submit", "claude_result": docs.architect_final}),
        ),
        ("confirm architect", json!({"action": "confirm"})),
        (
            "submit sprint plan",
            json!({"action": "submit", "claude_result": docs.sprint_plan}),
        ),
        ("approve", json!({"action": "approve", "scope": "all"})),
        (
            "submit dev",
            json!({"action": "submit", "claude_result": docs.dev}),
        ),
        (
            "submit review",
            json!({"action": "submit", "claude_result": docs.review}),
        ),
        (
            "submit qa",
            json!({"action": "submit", "claude_result": docs.qa}),
        ),
        ("status", json!({"action": "status"})),
    ]
}

/// One workflow run in a fresh project: per-call replies and the server's peak RSS.
pub struct WorkflowRun {
    pub steps: Vec<(&'static str, Reply)>,
    pub peak_rss_kib: u64,
    pub session_id: String,
    /// CPU time the server's threads used from the end of the handshake to the last
    /// reply (threads that ended meanwhile not counted): its own work, without waiting.
    pub cpu: Duration,
}

impl WorkflowRun {
    pub fn total(&self) -> Duration {
        self.steps.iter().map(|(_, r)| r.time).sum()
    }
}

pub fn run_workflow(cfg: &Config, docs: &Docs, project: &Path) -> Res<WorkflowRun> {
    let mut line = cfg.wrapper.clone();
    line.push(cfg.bin.display().to_string());
    let calls = workflow_calls(docs, project)
        .into_iter()
        .map(|(label, args)| (label, args, None))
        .collect();
    let run = drive(&line, calls, project, false)?;
    let last = &run.steps.last().ok_or("no steps")?.1.structured;
    if last["state"] != "completed" {
        return Err(format!("the workflow did not complete: {last}").into());
    }
    Ok(run)
}

/// One call of a scripted run: its label, its arguments (the session id is added after
/// `start`), and the state its reply must name, where the script checks one.
pub type Call = (&'static str, Value, Option<&'static str>);

/// Runs `calls` against a server started from `line` in `project`, after the handshake:
/// each call timed, each reply checked for the state the script expects (so a server
/// that took a call another way than the script meant cannot pass for fast); `quiet`
/// drops what the server writes to stderr.
pub fn drive(line: &[String], calls: Vec<Call>, project: &Path, quiet: bool) -> Res<WorkflowRun> {
    let mut server = Server::spawn_line(line, project, quiet)?;
    server.handshake()?;
    let cpu_before = server.cpu_time()?;
    let mut steps = Vec::new();
    let mut session_id = String::new();
    for (label, mut args, expect) in calls {
        if !session_id.is_empty() {
            args["session_id"] = json!(session_id);
        }
        let reply = server.call(&args)?;
        if label == "start" {
            session_id = reply.structured["session_id"]
                .as_str()
                .ok_or("start gave no session id")?
                .to_string();
        }
        if let Some(state) = expect {
            let got = &reply.structured;
            let said = got.get("state").or_else(|| got.get("current_state"));
            if said != Some(&json!(state)) {
                return Err(format!("`{label}` should reach `{state}`: {got}").into());
            }
        }
        steps.push((label, reply));
    }
    let cpu = server.cpu_time()?.saturating_sub(cpu_before);
    let peak_rss_kib = server.peak_rss_kib()?;
    server.keep_smaps()?;
    server.close()?;
    Ok(WorkflowRun {
        steps,
        peak_rss_kib,
        session_id,
        cpu,
    })
}

/// A fresh project directory under the system temp directory.
pub fn project_dir() -> Res<tempfile::TempDir> {
    Ok(tempfile::Builder::new().prefix("bmad-bench-").tempdir()?)
}

/// Per-step medians over several runs, for the breakdown.
pub fn print_breakdown(title: &str, runs: &[WorkflowRun]) {
    println!("\n{title}");
    println!(
        "  {:<24} {:>10} {:>10} {:>10}",
        "call", "median ms", "max ms", "reply B"
    );
    for (i, (label, reply)) in runs[0].steps.iter().enumerate() {
        let times: Vec<f64> = runs.iter().map(|r| ms(r.steps[i].1.time)).collect();
        let s = Stats::of(&times);
        println!(
            "  {:<24} {:>10.2} {:>10.2} {:>10}",
            label, s.median, s.max, reply.structured_bytes
        );
    }
}
