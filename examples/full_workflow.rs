//! A scripted end-to-end run: starts the real `bmad-mcp` binary, drives the whole
//! PO → QA workflow through rmcp's client with the documents in `examples/fixtures/`,
//! prints one line per step, and lists the files it produced.
//!
//!     cargo run --release --example full_workflow -- [project-dir]
//!
//! Without a directory it uses a fresh temporary one (kept, and named at the end).
//! `BMAD_MCP_BIN` overrides which server binary is started.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{json, Value};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/fixtures");

type Failure = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let project = match std::env::args().nth(1) {
        Some(dir) => {
            std::fs::create_dir_all(&dir)?;
            PathBuf::from(dir).canonicalize()?
        }
        None => tempfile::Builder::new()
            .prefix("bmad-example-")
            .tempdir()?
            .keep()
            .canonicalize()?,
    };
    let bin = server_binary()?;
    println!("project: {}", project.display());
    println!("server:  {}", bin.display());

    let mut cmd = tokio::process::Command::new(&bin);
    cmd.current_dir(&project);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()?;
    // The 2026-07-28 era, as Claude Code speaks it.
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
            },
        )
        .await?;

    let call = |args: Value| {
        let client = &client;
        async move {
            let Value::Object(map) = args else {
                unreachable!()
            };
            let action = map["action"].as_str().unwrap_or("?").to_string();
            let result = client
                .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
                .await?;
            let v = result.structured_content.unwrap_or(Value::Null);
            if result.is_error == Some(true) {
                return Err(format!("{action} was refused: {}", v["error"]["message"]).into());
            }
            print_step(&action, &v);
            Ok::<Value, Failure>(v)
        }
    };
    let fixture = |name: &str| std::fs::read_to_string(Path::new(FIXTURES).join(name));

    let v = call(json!({"action": "start", "cwd": project, "objective": "Build a service that publishes a weekly team changelog"})).await?;
    let sid = v["session_id"].as_str().ok_or("no session id")?.to_string();
    let with_id = |mut v: Value| {
        v["session_id"] = json!(sid);
        v
    };

    // Product Owner: a draft with questions, the human's answers, the refined PRD.
    call(with_id(
        json!({"action": "submit", "stage": "po", "claude_result": fixture("po-draft.json")?}),
    ))
    .await?;
    call(with_id(json!({"action": "answer", "answers": {
        "q1": "GitHub first",
        "q2": "Web only",
        "q3": "Repository maintainers"
    }})))
    .await?;
    call(with_id(
        json!({"action": "submit", "stage": "po", "claude_result": fixture("po-final.json")?}),
    ))
    .await?;
    call(with_id(json!({"action": "confirm"}))).await?;

    // Architect: one question, then the design.
    call(with_id(
        json!({"action": "submit", "claude_result": fixture("architect-draft.json")?}),
    ))
    .await?;
    call(with_id(
        json!({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}}),
    ))
    .await?;
    call(with_id(
        json!({"action": "submit", "claude_result": fixture("architect-final.json")?}),
    ))
    .await?;
    call(with_id(json!({"action": "confirm"}))).await?;

    // Scrum Master: the plan, approved for all sprints.
    call(with_id(
        json!({"action": "submit", "claude_result": fixture("sprint-plan.md")?}),
    ))
    .await?;
    call(with_id(json!({"action": "approve", "scope": "all"}))).await?;

    // Developer, Reviewer, QA.
    call(with_id(
        json!({"action": "submit", "codex_result": fixture("dev-report.md")?}),
    ))
    .await?;
    call(with_id(
        json!({"action": "submit", "codex_result": fixture("review.md")?}),
    ))
    .await?;
    call(with_id(
        json!({"action": "submit", "codex_result": fixture("qa-report.md")?}),
    ))
    .await?;
    call(with_id(json!({"action": "status"}))).await?;
    client.cancel().await?;

    println!("\nfiles in {}:", project.display());
    for f in files_under(&project) {
        let size = std::fs::metadata(project.join(&f))?.len();
        println!("  {f} ({size} bytes)");
    }
    Ok(())
}

/// One readable line: action, stage, state, score, and what the human is asked.
fn print_step(action: &str, v: &Value) {
    let mut line = format!(
        "{:<8} → {:<9} {:<22}",
        action,
        v["stage"].as_str().unwrap_or("-"),
        v["state"].as_str().unwrap_or("-")
    );
    if let Some(score) = v["score"].as_u64() {
        let source = v["score_source"].as_str().unwrap_or("");
        line.push_str(&format!(" score {score} ({source})"));
    }
    let asked = match v["state"].as_str() {
        Some("clarifying") => {
            let n = v["questions"].as_array().map_or(0, Vec::len);
            format!("human asked {n} question(s)")
        }
        Some("awaiting_confirmation") => format!(
            "human asked to confirm {}",
            v["artifact_path"].as_str().unwrap_or("")
        ),
        Some("awaiting_approval") => format!(
            "human asked to approve {} sprint(s)",
            v["sprints"].as_array().map_or(0, Vec::len)
        ),
        Some("completed") => "workflow completed".into(),
        _ => "host generates with the role prompt".into(),
    };
    line.push_str(&format!(" | {asked}"));
    println!("{line}");
}

/// The server binary: `BMAD_MCP_BIN`, or the one cargo builds beside this example
/// (built now, with the example's profile, when the example runs under cargo).
fn server_binary() -> Result<PathBuf, Failure> {
    if let Ok(bin) = std::env::var("BMAD_MCP_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot locate the target directory")?;
    if let Ok(cargo) = std::env::var("CARGO") {
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "--quiet", "--bin", "bmad-mcp", "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        if !build.status()?.success() {
            return Err("building bmad-mcp failed".into());
        }
    }
    let bin = profile_dir.join(format!("bmad-mcp{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        return Err(format!("{} not found; build it or set BMAD_MCP_BIN", bin.display()).into());
    }
    Ok(bin)
}

fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if let Ok(rel) = p.strip_prefix(base) {
                out.push(rel.display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}
