//! What the model reads in the real host: the pinned Claude Code CLI runs headless
//! (`claude -p`) with `bmad-mcp` as its only MCP server (stdio, `--mcp-config`,
//! `--strict-mcp-config`), in a throw-away home, against a fake Anthropic Messages API on
//! loopback (`ANTHROPIC_BASE_URL`, a dummy key) that plays a scripted model. The script is
//! the example's standard workflow (15 calls) and a long run (26 calls: two clarification
//! rounds, a rejection with feedback, a send-back from review, `status` and `list`) and a
//! team run (20 calls; the human decides three times in a terminal, a check fails once). The
//! fake records what Claude Code sends the model: the tool's definition and every
//! `tool_result`. It prints bytes and estimated tokens per call and in all, the share of
//! lines already sent earlier in the run, the tool's description + input schema as sent,
//! and the server's whole `tools/list` answer, with pass/MISS beside each target. It never
//! fails because of a figure.
//!
//!     ./scripts/test --no-run && cargo bench --bench host
//!
//! The CLI is `target/claude-cli/node_modules/.bin/claude` (`./scripts/test` installs it)
//! or `BMAD_CLAUDE_CLI`; without it the bench says so and measures only what each host's
//! model reads of the standard workflow by that host's own rule ([`others`]), which it
//! prints first.
//! `BMAD_MCP_BIN` measures another server binary (an older commit's, for a before/after).
//!
//! How Claude Code 2.1.330 is run offline: `ENABLE_TOOL_SEARCH=false` (otherwise the tool is
//! deferred until the model's ToolSearch loads it; the definition sent is the same), and an
//! `Elicitation` hook (this bench's own executable, `BMAD_HOST_BENCH_HOOK=1`) that accepts
//! each dialog with what the form pre-fills: the model's proposed decision, as a human who
//! agrees would (`claude -p` otherwise cancels every dialog).

mod common;
#[path = "host/fake.rs"]
mod fake;
#[path = "host/figures.rs"]
mod figures;
#[path = "host/others.rs"]
mod others;
#[path = "host/replay.rs"]
mod replay;
#[path = "host/replay_figures.rs"]
mod replay_figures;
#[path = "host/script.rs"]
mod script;
#[path = "host/stdio.rs"]
mod stdio;
#[path = "host/terminal.rs"]
mod terminal;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use figures::{verdict, Run};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const HOOK_ENV: &str = "BMAD_HOST_BENCH_HOOK";

/// Targets for what the model is sent: all the standard workflow's results, the long run's
/// share of lines sent before, the tool's definition, `tools/list`, and any one result.
const STANDARD_TOTAL: usize = 25_000;
const LONG_REPEATED: f64 = 0.15;
const DEFINITION: usize = 3_000;
const TOOLS_LIST: usize = 8_000;
const ONE_RESULT: usize = 8_000;
/// Targets for the team run: all its results, its share of lines sent before.
const TEAM_TOTAL: usize = 40_000;
const TEAM_REPEATED: f64 = 0.15;

fn cli() -> PathBuf {
    std::env::var_os("BMAD_CLAUDE_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::repo_path("target/claude-cli/node_modules/.bin/claude"))
}

/// The `Elicitation` hook, approved by the bench as the human (`bmad-mcp config
/// approve`): accepts the form with the values it pre-fills; where a decision has none
/// (failing work), it sends the work back when the form pre-fills the assistant's
/// feedback, else takes the first choice.
fn hook() -> Res<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let request: Value = serde_json::from_str(&input)?;
    let mut content = serde_json::Map::new();
    let props = request["requested_schema"]["properties"].as_object();
    for (name, prop) in props.into_iter().flatten() {
        if let Some(default) = prop.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    if let Some(decision) = props.and_then(|p| p.get("decision")) {
        if !content.contains_key("decision") {
            let chosen = if content.contains_key("feedback") {
                json!("reject")
            } else {
                decision["oneOf"][0]["const"].clone()
            };
            content.insert("decision".into(), chosen);
        }
    }
    let out = json!({"hookSpecificOutput": {"hookEventName": "Elicitation",
        "action": "accept", "content": content}});
    println!("{out}");
    Ok(())
}

/// Runs the script through Claude Code; returns the tool results in call order and the
/// tool's definition as sent to the model.
async fn through_claude(
    server: &Path,
    script: Vec<Value>,
    project: &Path,
) -> Res<(Vec<String>, Value)> {
    let home = tempfile::tempdir()?;
    let calls = script.len();
    run_claude(
        server,
        fake::Model::new(script),
        calls,
        project,
        home.path(),
    )
    .await
}

/// [`through_claude`] for the team run: the human approves the project's checks in a
/// terminal first, then makes the script's decisions there while the model waits.
async fn team_through_claude(
    server: &Path,
    (script, decisions): (Vec<Value>, Vec<script::Decision>),
    project: &Path,
) -> Res<(Vec<String>, Value)> {
    let home = tempfile::tempdir()?;
    std::fs::create_dir_all(project.join(".bmad"))?;
    std::fs::write(project.join(".bmad/config.toml"), script::CHECK_CONFIG)?;
    let approve = ["config".to_string(), "approve".to_string()];
    terminal::decide(server, project, home.path(), &approve, "y\n")?;
    let mut elsewhere = std::collections::BTreeMap::new();
    for d in decisions {
        let (server, project, home) = (
            server.to_path_buf(),
            project.to_path_buf(),
            home.path().to_path_buf(),
        );
        let act: fake::Elsewhere = Box::new(move |id: &str| {
            let args: Vec<String> = d
                .args
                .iter()
                .map(|a| a.replace(script::SESSION, id))
                .collect();
            terminal::decide(&server, &project, &home, &args, d.typed)
        });
        elsewhere.insert(d.before, act);
    }
    let calls = script.len();
    let model = fake::Model::with_elsewhere(script, elsewhere);
    run_claude(server, model, calls, project, home.path()).await
}

/// Runs Claude Code against `model` in `project` with `home`; returns the tool results in
/// call order and the tool's definition as sent to the model.
async fn run_claude(
    server: &Path,
    model: std::sync::Arc<fake::Model>,
    calls: usize,
    project: &Path,
    home: &Path,
) -> Res<(Vec<String>, Value)> {
    let url = fake::serve(model.clone()).await?;
    let config = home.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"bmad": {"type": "stdio", "command": server, "args": [], "env": {}}}})
            .to_string(),
    )?;
    // The hook that answers the dialogs, in the user's settings, approved as the human
    // would: an unapproved hook keeps the dialog shut.
    let me = std::env::current_exe()?;
    std::fs::create_dir_all(home.join(".claude"))?;
    std::fs::write(
        home.join(".claude/settings.json"),
        json!({"hooks": {"Elicitation": [{"matcher": "", "hooks": [{"type": "command",
            "command": format!("{HOOK_ENV}=1 '{}'", me.display())}]}]}})
        .to_string(),
    )?;
    let approve = ["config".to_string(), "approve".to_string()];
    terminal::decide(server, project, home, &approve, "y\n")?;
    let mut child = tokio::process::Command::new(cli())
        .args(["-p", "Run the BMAD workflow with the bmad-task tool."])
        .arg("--mcp-config")
        .arg(&config)
        .arg("--strict-mcp-config")
        .args(["--allowedTools", fake::TOOL, "--model", "claude-sonnet-4-5"])
        .args(["--output-format", "json", "--max-turns", "200"])
        .current_dir(project)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", &url)
        .env("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-key")
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDECODE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cli().display()))?;
    let out = tokio::time::timeout(Duration::from_secs(600), async {
        let mut stdout = Vec::new();
        let mut stderr = Vec::new();
        use tokio::io::AsyncReadExt;
        let (a, b) = (child.stdout.take(), child.stderr.take());
        let (_, _) = tokio::join!(
            async {
                if let Some(mut a) = a {
                    let _ = a.read_to_end(&mut stdout).await;
                }
            },
            async {
                if let Some(mut b) = b {
                    let _ = b.read_to_end(&mut stderr).await;
                }
            }
        );
        let status = child.wait().await;
        (status, stdout, stderr)
    })
    .await
    .map_err(|_| "claude did not finish within 600 s")?;
    let rec = model.recorded.lock().unwrap();
    if rec.results.len() != calls || !rec.finished || !rec.failed.is_empty() {
        return Err(format!(
            "claude ran {} of {calls} calls (finished: {}, {} agent requests, unknown paths {:?}); {}exit {:?}\nstdout: {}\nstderr: {}",
            rec.results.len(),
            rec.finished,
            rec.agent_requests,
            rec.unknown,
            rec.failed,
            out.0.ok(),
            String::from_utf8_lossy(&out.1),
            String::from_utf8_lossy(&out.2)
        )
        .into());
    }
    let results = rec.results.values().cloned().collect();
    Ok((results, rec.definition.clone().unwrap_or(Value::Null)))
}

/// The server's `tools/list` answer over stdio: its bytes, as the JSON-RPC result.
fn tools_list(server: &Path) -> Res<usize> {
    let dir = tempfile::tempdir()?;
    let mut child = Command::new(server)
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("stdout")?);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}});
    writeln!(stdin, "{init}")?;
    let mut line = String::new();
    stdout.read_line(&mut line)?;
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )?;
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    )?;
    line.clear();
    stdout.read_line(&mut line)?;
    drop(stdin);
    let _ = child.wait();
    let v: Value = serde_json::from_str(&line)?;
    Ok(v["result"].to_string().len())
}

fn actions(script: &[Value]) -> Vec<String> {
    script
        .iter()
        .map(|a| a["action"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Runs a script in a fresh project; returns its figures, its results and the definition.
async fn scenario(
    server: &Path,
    title: &str,
    make: impl FnOnce(&str) -> Vec<Value>,
) -> Res<(Run, Vec<String>, Value)> {
    let project = tempfile::tempdir()?;
    let script = make(&project.path().display().to_string());
    let names = actions(&script);
    let (results, definition) = through_claude(server, script, project.path()).await?;
    let run = Run::of(&names, &results);
    run.print(title);
    Ok((run, results, definition))
}

/// The team run; also the numbers (from 1) of the calls that follow a terminal decision.
async fn team_scenario(server: &Path) -> Res<(Run, Vec<String>, Vec<usize>)> {
    let project = tempfile::tempdir()?;
    let (script, decisions) = script::team(&project.path().display().to_string());
    let names = actions(&script);
    let after: Vec<usize> = decisions.iter().map(|d| d.before + 1).collect();
    let (results, _) = team_through_claude(server, (script, decisions), project.path()).await?;
    let run = Run::of(&names, &results);
    run.print("Team run (three decisions in a terminal, a failing check), tool results as the model got them:");
    Ok((run, results, after))
}

fn row(what: &str, figure: String, target: &str, ok: bool) {
    println!("  {what:<58} {figure:>12}  {target:>10}  {}", verdict(ok));
}

/// The team run's targets: all its text, its repeated lines, its largest reply, and the
/// `status` calls after the human's terminal decisions.
fn team_targets(team: &Run, after: &[usize]) {
    row(
        "team run, all tool results",
        format!("{} B", team.total()),
        "<= 40000 B",
        team.total() <= TEAM_TOTAL,
    );
    row(
        "team run, share of lines already sent",
        format!("{:.1} %", 100.0 * team.repeated_share()),
        "<= 15 %",
        team.repeated_share() <= TEAM_REPEATED,
    );
    let (largest, at) = team.largest();
    row(
        &format!("team run, largest result (#{at})"),
        format!("{largest} B"),
        "<= 8000 B",
        largest <= ONE_RESULT,
    );
    let sizes: Vec<String> = after
        .iter()
        .map(|&n| {
            format!(
                "#{n} {} B ({:.0} % repeated)",
                team.bytes_at(n),
                100.0 * team.repeated_at(n)
            )
        })
        .collect();
    let sum: usize = after.iter().map(|&n| team.bytes_at(n)).sum();
    println!(
        "  (team run: `status` after each terminal decision: {}; {sum} B in all, {:.0} % of the run)",
        sizes.join(", "),
        100.0 * sum as f64 / team.total().max(1) as f64
    );
}

#[tokio::main]
async fn main() -> Res<()> {
    if std::env::var_os(HOOK_ENV).is_some() {
        return hook();
    }
    if !common::benchmarking("host") {
        return Ok(());
    }
    let server = common::server_binary()?;
    replay_figures::print(&server)?;
    if std::env::args().any(|a| a == "--replay-only") {
        return Ok(());
    }
    others::print(&server, &script::standard(""))?;
    let cli = cli();
    if !cli.is_file() {
        println!(
            "host: skipped, the Claude Code CLI is not at {} (./scripts/test installs it; BMAD_CLAUDE_CLI names another)",
            cli.display()
        );
        return Ok(());
    }
    println!("host: {} through {}", server.display(), cli.display());

    let (std_run, std_results, definition) = scenario(
        &server,
        "Standard workflow (examples/full_workflow.rs), tool results as the model got them:",
        script::standard,
    )
    .await?;
    let (long_run, results, _) = scenario(
        &server,
        "Long run, tool results as the model got them:",
        script::long,
    )
    .await?;
    let (team_run, team_results, after) = team_scenario(&server).await?;

    let description = definition["description"].as_str().unwrap_or_default().len();
    let schema = definition["input_schema"].to_string().len();
    let listed = tools_list(&server)?;
    let (largest, at) = std_run.largest_not_status();
    let (long_largest, long_at) = long_run.largest_not_status();
    let largest_any = largest.max(long_largest);
    println!(
        "\nTargets for what the model is sent (tokens estimated as bytes / {}):",
        figures::BYTES_PER_TOKEN
    );
    row(
        "standard workflow, all tool results",
        format!("{} B", std_run.total()),
        "<= 25000 B",
        std_run.total() <= STANDARD_TOTAL,
    );
    row(
        "long run, share of lines already sent",
        format!("{:.1} %", 100.0 * long_run.repeated_share()),
        "<= 15 %",
        long_run.repeated_share() <= LONG_REPEATED,
    );
    row(
        "description + input schema, as Claude Code sends them",
        format!("{} B", description + schema),
        "<= 3000 B",
        description + schema <= DEFINITION,
    );
    row(
        "whole tools/list answer",
        format!("{listed} B"),
        "<= 8000 B",
        listed <= TOOLS_LIST,
    );
    row(
        &format!("largest result but status (standard #{at}, long #{long_at})"),
        format!("{largest_any} B"),
        "<= 8000 B",
        largest_any <= ONE_RESULT,
    );
    team_targets(&team_run, &after);
    println!(
        "  (long run: {} B in all; description {description} B, input schema {schema} B; standard repeated share {:.1} %)",
        long_run.total(),
        100.0 * std_run.repeated_share()
    );
    if let Some(dir) = std::env::var_os("BMAD_HOST_BENCH_DUMP") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir)?;
        let runs = [
            ("standard", &std_results),
            ("long", &results),
            ("team", &team_results),
        ];
        for (name, run) in runs {
            for (i, r) in run.iter().enumerate() {
                std::fs::write(dir.join(format!("{name}-{:02}.txt", i + 1)), r)?;
            }
        }
        std::fs::write(dir.join("definition.json"), definition.to_string())?;
    }
    Ok(())
}
