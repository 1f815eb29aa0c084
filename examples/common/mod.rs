//! The client side that the examples share: it starts the real `bmad-mcp` binary as a
//! child process, calls the `bmad-task` tool through rmcp's client (in the 2026-07-28
//! protocol era, as Claude Code speaks it), prints one line per step, and lists the files
//! a run produced. The workflow scripts themselves live in the example files.
//!
//! Each example includes this file with `#[path = "common/mod.rs"] mod common;`, and the
//! integration tests include the examples the same way, so the scripts users read are the
//! ones the tests run.

// Each example uses a different part of this module.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

pub type Failure = Box<dyn std::error::Error>;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/fixtures");

/// The text of `examples/fixtures/<name>`.
pub fn fixture(name: &str) -> Result<String, Failure> {
    let path = Path::new(FIXTURES).join(name);
    std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// What a finished run printed and produced.
pub struct Report {
    pub project: PathBuf,
    /// Every line printed, in order.
    pub lines: Vec<String>,
    /// Each call: the action and the reply's structured content.
    pub steps: Vec<(String, Value)>,
    /// The files under the project, relative and sorted.
    pub files: Vec<String>,
}

/// A connection to one server process, driving one session.
pub struct Demo {
    service: RunningService<RoleClient, ()>,
    server: PathBuf,
    project: PathBuf,
    session_id: Option<String>,
    lines: Vec<String>,
    steps: Vec<(String, Value)>,
    /// Whether the project is a fresh temporary folder the run made.
    fresh: bool,
}

const USAGE: &str = "usage: cargo run --release --example <name> -- [project-dir]\n\
    Without a directory the run uses a fresh temporary one and says where.\n\
    BMAD_MCP_BIN names the server binary to start (default: the one cargo builds).";

impl Demo {
    /// An example's `main`: connects as [`Demo::from_args`] says, runs `script`, closes
    /// the connection and lists the files.
    pub async fn main(
        script: impl AsyncFnOnce(&mut Demo) -> Result<(), Failure>,
    ) -> Result<(), Failure> {
        let mut demo = Demo::from_args().await?;
        script(&mut demo).await?;
        demo.finish().await?;
        Ok(())
    }

    /// The project directory from the first argument (created if needed) or a fresh
    /// temporary directory, the server binary, and the connection.
    pub async fn from_args() -> Result<Demo, Failure> {
        let arg = std::env::args_os().nth(1);
        if arg.as_ref().is_some_and(|a| a == "-h" || a == "--help") {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let (project, fresh) = project_dir(arg)?;
        let mut header = vec![if fresh {
            format!(
                "project: {} (a fresh temporary directory, kept after the run; pass a directory to choose one)",
                project.display()
            )
        } else {
            format!("project: {}", project.display())
        }];
        let server = server_binary()?;
        header.push(format!("server:  {}", server.display()));
        header.push(String::new());
        header.push(format!(
            "{:<4} {:<8} {:<9} {:<21}  {:<23} next",
            "step", "action", "stage", "state", "score"
        ));
        for line in &header {
            println!("{line}");
        }
        let mut demo = Demo::connect(&server, &project).await?;
        demo.lines = header;
        demo.fresh = fresh;
        Ok(demo)
    }

    /// Starts `server` with `project` as its working directory and project root.
    pub async fn connect(server: &Path, project: &Path) -> Result<Demo, Failure> {
        let mut cmd = tokio::process::Command::new(server);
        cmd.current_dir(project)
            .env("BMAD_PROJECT_ROOT", project)
            .env_remove("CLAUDE_PROJECT_DIR");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::inherit())
            .spawn()?;
        let service = ()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await?;
        Ok(Demo {
            service,
            server: server.to_path_buf(),
            project: project.to_path_buf(),
            session_id: None,
            lines: Vec::new(),
            steps: Vec::new(),
            fresh: false,
        })
    }

    pub fn project(&self) -> &Path {
        &self.project
    }

    /// Another server process on the same project (another window of the same host),
    /// with a session of its own.
    pub async fn window(&self) -> Result<Demo, Failure> {
        Demo::connect(&self.server, &self.project).await
    }

    /// Prints a line and keeps it for the report.
    pub fn say(&mut self, line: String) {
        println!("{line}");
        self.lines.push(line);
    }

    /// Calls `bmad-task` with `args` (the session is added once `start` has named it),
    /// prints the step, and returns the reply. A refused call is an error.
    pub async fn step(&mut self, args: Value) -> Result<Value, Failure> {
        let Value::Object(mut map) = args else {
            return Err("arguments must be a JSON object".into());
        };
        let action = map
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        if let Some(id) = self
            .session_id
            .as_ref()
            .filter(|_| action != "start" && action != "list")
        {
            if !map.contains_key("task_name") && !map.contains_key("session_id") {
                map.insert("session_id".into(), json!(id));
            }
        }
        let result = self
            .service
            .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
            .await?;
        let reply = result.structured_content.unwrap_or(Value::Null);
        if result.is_error == Some(true) {
            return Err(format!(
                "`{action}` was refused ({}): {}",
                reply["error"]["code"], reply["error"]["message"]
            )
            .into());
        }
        if action == "start" {
            self.session_id = reply["session_id"].as_str().map(String::from);
        }
        let line = step_line(self.steps.len() + 1, &action, &reply);
        self.say(line);
        for notice in reply["notices"].as_array().into_iter().flatten() {
            self.say(format!(
                "     note: {}",
                notice.as_str().unwrap_or_default()
            ));
        }
        self.steps.push((action, reply.clone()));
        Ok(reply)
    }

    /// Closes the connection (the server exits) and lists the files the run produced.
    pub async fn finish(mut self) -> Result<Report, Failure> {
        self.service.cancel().await?;
        let files = files_under(&self.project);
        self.lines.push(String::new());
        println!();
        let mut lines = self.lines;
        let heading = format!("files in {}:", self.project.display());
        println!("{heading}");
        lines.push(heading);
        for f in &files {
            let size = std::fs::metadata(self.project.join(f))?.len();
            let line = format!("  {f} ({size} bytes)");
            println!("{line}");
            lines.push(line);
        }
        let first_task = self
            .steps
            .iter()
            .find(|(action, _)| action == "start")
            .and_then(|(_, v)| v["task_name"].as_str());
        for line in look_at_it(&self.project, &self.server, first_task, self.fresh) {
            println!("{line}");
            lines.push(line);
        }
        Ok(Report {
            project: self.project,
            lines,
            steps: self.steps,
            files,
        })
    }
}

/// The run's last words: where its folder is, and the commands that show what it left
/// there, with the server binary that ran (not installed yet, on a first run). Each
/// command line after the `cd` is one to paste as it is.
pub fn look_at_it(project: &Path, server: &Path, task: Option<&str>, fresh: bool) -> Vec<String> {
    let dir = shell_word(&project.display().to_string());
    let bin = shell_word(&server.display().to_string());
    let mut lines = vec![String::new()];
    lines.push(match fresh {
        true => format!(
            "The run is kept in {dir}, a new temporary folder (remove it with `rm -r {dir}`)."
        ),
        false => format!("The run is in {dir}."),
    });
    lines.push("Look at what it left, there (`bmad-mcp` once installed):".to_string());
    lines.push(format!("  cd {dir}"));
    lines.push(format!("  {bin} list"));
    if let Some(task) = task {
        lines.push(format!("  {bin} status {task}"));
    }
    lines.push(format!(
        "  {bin} dashboard    # open the address it prints; Ctrl-C stops it"
    ));
    lines
}

/// `s` as one word for a POSIX shell: as it is when it holds nothing the shell reads,
/// else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    match !s.is_empty() && s.chars().all(plain) {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', "'\\''")),
    }
}

/// One readable line: step, action, the stage and state it led to, the score, and what
/// happens next (what the human is asked, or what the host generates).
pub fn step_line(n: usize, action: &str, v: &Value) -> String {
    let stage = v["stage"].as_str().unwrap_or("-");
    let state = v["state"].as_str().unwrap_or("-");
    let score = match v["score"].as_u64() {
        None => "-".to_string(),
        Some(score) => {
            let source = v["score_source"].as_str().unwrap_or("");
            let scores = v["scores"].as_object().filter(|s| s.len() > 1);
            match scores {
                // Two engines: which one was kept, and the other's score.
                Some(scores) => {
                    let kept = scores
                        .iter()
                        .find(|(_, s)| s.as_u64() == Some(score))
                        .map_or("?", |(e, _)| e.as_str());
                    let others: Vec<String> = scores
                        .iter()
                        .filter(|(e, _)| e.as_str() != kept)
                        .map(|(e, s)| format!("{e} {s}"))
                        .collect();
                    format!("{score} {kept} (vs {})", others.join(", "))
                }
                None => format!("{score} {source}"),
            }
        }
    };
    let engines = || {
        let names: Vec<&str> = v["engines"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        names.join(" + ")
    };
    let path = v["artifact_path"].as_str().unwrap_or("the document");
    let next = match state {
        "generating" => format!("host: generate with the role prompt ({})", engines()),
        "refining" => format!("host: revise with the role prompt ({})", engines()),
        "clarifying" => {
            let ids: Vec<&str> = v["questions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|q| q["id"].as_str())
                .collect();
            format!("human: answer {}", ids.join(", "))
        }
        "awaiting_confirmation" if v["gate_passed"] == json!(false) => {
            format!("human: below the gate; confirm anyway or reject {path}")
        }
        "awaiting_confirmation" => format!("human: confirm or reject {path}"),
        "awaiting_approval" => format!(
            "human: approve a scope of {} sprint(s), or reject {path}",
            v["sprints"].as_array().map_or(0, Vec::len)
        ),
        "completed" => "nothing: the workflow is complete".to_string(),
        _ => "-".to_string(),
    };
    format!("{n:>4} {action:<8} {stage:<9} {state:<21}  {score:<23} {next}")
}

/// The project directory: `arg` (created when missing), or a fresh temporary directory
/// that is kept. The flag says whether it is a fresh one.
pub fn project_dir(arg: Option<OsString>) -> Result<(PathBuf, bool), Failure> {
    match arg {
        Some(dir) => {
            std::fs::create_dir_all(&dir)?;
            Ok((PathBuf::from(dir).canonicalize()?, false))
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("bmad-example-")
                .tempdir()?
                .keep();
            Ok((dir.canonicalize()?, true))
        }
    }
}

/// The server binary: `BMAD_MCP_BIN`, or the server built alone now, with the example's
/// profile (`harness::server_binary`).
pub fn server_binary() -> Result<PathBuf, Failure> {
    Ok(harness::server_binary()?.to_path_buf())
}

/// Every file under `dir`, relative, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
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
