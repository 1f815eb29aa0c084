//! The helpers of the integration tests: the built `bmad-mcp` binary as a process, driven
//! through rmcp's client as a host would ([`Client`]) or with raw JSON-RPC lines
//! ([`raw::Raw`]); the same over `serve --http` ([`http`]); a scenario run over either
//! ([`transport`]); the human in a dialog ([`user`]) and in a terminal ([`terminal`]); the
//! pinned Claude Code CLI ([`claude`]); the documents the tests submit, and what they check
//! on disk.

pub mod claude;
pub mod dash;
pub mod http;
pub mod method;
pub mod npm;
pub mod raw;
pub mod screen;
pub mod stderr;
pub mod terminal;
pub mod transport;
pub mod user;
pub mod webdriver;

pub use raw::Raw;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{RunningService, Service};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};

/// `user_message` is the person's (docs/spec.md §10): no instruction to the model in it,
/// as `bmad_mcp::server::reply::instructs_the_model` reads one. Every reply the tests read
/// passes here (`Client::call`, the raw and HTTP wires, the dialog's user, the gates'
/// hosts, the real hosts' results), so no test's reply can hold one unseen.
pub fn person_reads(user_message: &str) {
    if let Some(word) = bmad_mcp::server::reply::instructs_the_model(user_message) {
        panic!("`{word}`, an instruction to the model, in user_message: {user_message}");
    }
}

/// `user_message` as the reply's text gives it (its first line beside the key, the rest
/// indented beneath), when it has one.
pub fn user_message_in(text: &str) -> Option<String> {
    let at = text.find("user_message: ")?;
    let mut lines = text[at + "user_message: ".len()..].lines();
    let mut message = lines.next()?.to_string();
    for more in lines.map_while(|l| l.strip_prefix("  ")) {
        message.push('\n');
        message.push_str(more);
    }
    Some(message)
}

/// [`person_reads`] for the reply a rendered text (or a host's copy of it) carries.
pub fn words_for_the_person(text: &str) {
    if let Some(message) = user_message_in(text) {
        person_reads(&message);
    }
}

/// [`person_reads`] for a JSON-RPC message that answers a `tools/call`: its
/// `structuredContent`, else its text.
pub fn person_reads_answer(message: &Value) {
    let result = &message["result"];
    match result["structuredContent"]["user_message"].as_str() {
        Some(m) => person_reads(m),
        None => {
            for block in result["content"].as_array().into_iter().flatten() {
                words_for_the_person(block["text"].as_str().unwrap_or_default());
            }
        }
    }
}

/// The server binary every test starts: `BMAD_MCP_BIN` (what `./scripts/test` installs as
/// the README does), or the server built alone (`harness::server_binary`).
pub fn server_path() -> &'static str {
    harness::server_binary_or_panic()
}

/// The repository, for the files the tests read (README, plugin, Python clients).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake (negotiates 2025-11-25).
    Legacy,
    /// `server/discover` with per-request metadata (2026-07-28), as Claude Code speaks.
    Modern,
}

impl Era {
    pub const BOTH: [Era; 2] = [Era::Legacy, Era::Modern];

    /// The version the server must agree to.
    pub fn version(self) -> ProtocolVersion {
        match self {
            Era::Legacy => ProtocolVersion::V_2025_11_25,
            Era::Modern => ProtocolVersion::V_2026_07_28,
        }
    }

    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}

pub struct Client {
    service: RunningService<RoleClient, ()>,
    pub project: PathBuf,
}

/// A user configuration directory that does not exist: the tests' servers read no role
/// prompt of the person running them.
pub const NO_USER_CONFIG: &str = "/nonexistent/bmad-mcp-tests/config";

/// What every server a test starts runs with: the project-root variables cleared, so the
/// test decides where the server looks, and no user configuration.
pub fn isolate(cmd: &mut std::process::Command) -> &mut std::process::Command {
    cmd.env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR")
        .env("XDG_CONFIG_HOME", NO_USER_CONFIG)
}

/// The binary as a plain process in `project`, isolated.
pub fn bin(project: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(server_path());
    isolate(cmd.current_dir(project));
    cmd
}

/// [`bin`] as a tokio command, for rmcp's child-process transport.
pub fn command(project: &Path) -> tokio::process::Command {
    bin(project).into()
}

pub async fn connect(era: Era, project: &Path) -> Client {
    connect_with(era, command(project), project).await
}

/// A client over `transport` in `era` (the `initialize` handshake, or `server/discover`)
/// whose requests `handler` answers, once the server has agreed to the era's version.
pub async fn handshake<H, T, E, A>(
    handler: H,
    era: Era,
    transport: T,
) -> RunningService<RoleClient, H>
where
    H: Service<RoleClient>,
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = handler
        .serve_with_lifecycle(transport, era.lifecycle())
        .await
        .unwrap_or_else(|e| panic!("{era:?} handshake: {e}"));
    let negotiated = service.peer_info().map(|i| i.protocol_version.clone());
    assert_eq!(
        negotiated,
        Some(era.version()),
        "negotiated protocol version"
    );
    service
}

pub async fn connect_with(era: Era, cmd: tokio::process::Command, project: &Path) -> Client {
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    Client::from_service(handshake((), era, transport).await, project)
}

impl Client {
    /// A client over any transport (the HTTP tests connect their own).
    pub fn from_service(service: RunningService<RoleClient, ()>, project: &Path) -> Client {
        Client {
            service,
            project: project.to_path_buf(),
        }
    }

    /// Calls `bmad-task`; returns whether it was a tool error, and the structured value.
    pub async fn call(&self, args: Value) -> (bool, Value) {
        let Value::Object(map) = args else {
            panic!("arguments are an object")
        };
        let result = self
            .service
            .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
            .await
            .expect("the call is answered");
        let structured = result
            .structured_content
            .clone()
            .expect("every reply carries structuredContent");
        // The text is the reply for the model (docs/spec.md §10): `key: value` lines, the
        // role prompt last as the Markdown it is.
        let texts: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.clone())
            .collect();
        assert_eq!(texts.len(), 1, "one text block: {texts:?}");
        let text = &texts[0];
        assert!(
            serde_json::from_str::<Value>(text).is_err(),
            "the text is not JSON: {text}"
        );
        if let Some(message) = structured["user_message"].as_str() {
            let first = message.lines().next().unwrap_or_default();
            assert!(text.contains(first), "the text has user_message: {text}");
            person_reads(message);
        }
        if let Some(prompt) = structured["role_prompt"].as_str() {
            let tail = format!("role_prompt: {}\n", prompt.trim());
            assert!(text.ends_with(&tail), "Markdown, not escaped, last: {text}");
        }
        (result.is_error == Some(true), structured)
    }

    /// A call that must succeed.
    pub async fn ok(&self, args: Value) -> Value {
        let (is_error, v) = self.call(args.clone()).await;
        assert!(!is_error, "{args} failed: {v:#}");
        v
    }

    /// A call that must be refused; returns the reply (with `error.code`, `error.message`).
    pub async fn refused(&self, args: Value, code: &str) -> Value {
        let (is_error, v) = self.call(args.clone()).await;
        assert!(is_error, "{args} should fail, got {v:#}");
        assert_eq!(v["error"]["code"], code, "{v:#}");
        v
    }

    /// The client side of the connection, for requests other than tool calls.
    pub fn peer(&self) -> &rmcp::Peer<RoleClient> {
        self.service.peer()
    }

    pub async fn list_tools(&self) -> Vec<rmcp::model::Tool> {
        self.service.list_all_tools().await.expect("tools/list")
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// Every file (and symbolic link, not followed) under `dir`, relative, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    tree(dir)
        .into_iter()
        .filter(|(rel, _)| !rel.ends_with('/'))
        .map(|(rel, _)| rel)
        .collect()
}

/// A digest of the tree under `dir`: every directory (`name/`), every file with the
/// SHA-256 of its bytes, every symbolic link with its target. Links are not followed.
pub fn tree_digest(dir: &Path) -> Vec<(String, String)> {
    tree(dir)
}

fn tree(base: &Path) -> Vec<(String, String)> {
    use sha2::{Digest, Sha256};
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            let kind = e.file_type().unwrap();
            if kind.is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.push((rel, format!("-> {}", target.display())));
            } else if kind.is_dir() {
                out.push((format!("{rel}/"), String::new()));
                walk(base, &p, out);
            } else if !kind.is_file() {
                // A FIFO, socket or device: its kind, never its content (a FIFO would
                // block the reader).
                out.push((rel, format!("special {kind:?}")));
            } else {
                let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let hex: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                out.push((rel, hex));
            }
        }
    }
    let mut out = Vec::new();
    walk(base, base, &mut out);
    out.sort();
    out
}

/// The newest history entry of a session (as stored, or as `status` nests it).
pub fn last_entry(session: &Value) -> Value {
    session["history"]
        .as_array()
        .and_then(|h| h.last())
        .cloned()
        .unwrap_or_else(|| panic!("a session with history: {session}"))
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A value for a failure message: its first 200 bytes and its size.
pub fn clipped(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|i| s.is_char_boundary(*i))
            .unwrap_or(0);
        format!("{}… ({} bytes)", &s[..cut], s.len())
    } else {
        s
    }
}

pub fn start_args(project: &Path, objective: &str) -> Value {
    json!({"action": "start", "objective": objective, "cwd": project.to_str().unwrap()})
}

/// A temporary directory holding a project and an empty sibling directory, so a test can
/// prove that nothing is written anywhere but the project's two areas.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub project: PathBuf,
    pub outside: PathBuf,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&project).unwrap();
        std::fs::create_dir(&outside).unwrap();
        Sandbox {
            dir,
            project,
            outside,
        }
    }

    /// Asserts that every file in the sandbox is inside the project's `.bmad-task/`,
    /// `.claude/specs/` or the team's lessons (`.bmad/lessons/`, docs/spec.md §7.2), apart
    /// from the files the test itself placed (`placed`, relative to the sandbox).
    pub fn assert_confined(&self, placed: &[&str]) {
        let mut stray = Vec::new();
        for f in files_under(self.dir.path()) {
            let inside = f.starts_with("project/.bmad-task/")
                || f.starts_with("project/.claude/specs/")
                || f.starts_with("project/.bmad/lessons/");
            if !inside && !placed.contains(&f.as_str()) {
                stray.push(f);
            }
        }
        assert!(
            stray.is_empty(),
            "files written outside the three areas: {stray:?}"
        );
    }
}

/// The sections the PO's prompt requires of a PRD (the server checks each is there,
/// with text under its heading, before a score can pass the gate).
pub const PRD_SECTIONS: [&str; 6] = [
    "Executive Summary",
    "Business Goals",
    "User Stories",
    "Functional Requirements",
    "Technical Requirements",
    "Success Metrics",
];

/// The sections the architect's prompt requires of a design.
pub const ARCHITECTURE_SECTIONS: [&str; 6] = [
    "System Overview",
    "Technology Stack",
    "Components",
    "Data Model",
    "API",
    "Security",
];

/// A Markdown document titled `title` with each of `sections`, a line of text under each.
pub fn document(title: &str, sections: &[&str]) -> String {
    format!("# {title}\n{}", sections_text(sections))
}

/// The sections a quick track's technical spec needs.
pub const SPEC_SECTIONS: [&str; 5] = [
    "Change",
    "Approach",
    "Files",
    "Acceptance Criteria",
    "Risks",
];

/// The sections a fix track's bug report needs.
pub const BUG_SECTIONS: [&str; 5] = [
    "Summary",
    "Reproduction Steps",
    "Expected Behaviour",
    "Actual Behaviour",
    "Suspected Cause",
];

/// Each of `sections` as a `##` heading with a line of text under it.
pub fn sections_text(sections: &[&str]) -> String {
    sections
        .iter()
        .map(|s| format!("\n## {s}\nWhat the {s} section says.\n"))
        .collect()
}

/// A JSON submission as the prompts ask for it: `doc` under `field`, scored `score`.
pub fn scored(field: &str, doc: &str, score: u32) -> String {
    json!({field: doc, "quality_score": score}).to_string()
}

/// A PRD that passes the gate: every section, scored 95.
pub fn passing_prd() -> String {
    scored("prd_draft", &document("PRD", &PRD_SECTIONS), 95)
}

/// An architecture that passes the gate: every section, scored 95.
pub fn passing_architecture() -> String {
    scored(
        "architecture_draft",
        &document("Architecture", &ARCHITECTURE_SECTIONS),
        95,
    )
}

/// Starts a session in `project` and takes it to `dev` `generating` (every gate passed on
/// the host's word); returns its id.
pub async fn at_dev(c: &Client, project: &Path) -> Value {
    let plan = "# Sprint Plan\n\n## Sprint 1: All\n- it\n";
    let start = start_args(project, "Build a todo app");
    let documents = [passing_prd(), passing_architecture(), plan.to_string()];
    to_approved_plan(c, start, &documents).await.0
}

/// Starts a task with `start` and takes it through `documents` (its PRD, architecture and
/// sprint plan, each submitted and accepted on the host's word) to `dev` `generating` with
/// every sprint approved: its session id and task name.
pub async fn to_approved_plan(
    c: &Client,
    start: Value,
    documents: &[String; 3],
) -> (Value, String) {
    let v = c.ok(start).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let [prd, architecture, plan] = documents;
    for args in [
        json!({"action": "submit", "claude_result": prd}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": architecture}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": plan}),
        json!({"action": "approve", "scope": "all"}),
    ] {
        let mut args = args;
        args["session_id"] = sid.clone();
        c.ok(args).await;
    }
    (sid, task)
}

/// What concurrent `start`s must leave behind, however they reached the server: one
/// session file per start (each returned id, in `generating`, with one history entry),
/// distinct ids and task names, every start in `task-mapping.json` with `objective`, every
/// specs folder reserved, and every JSON file whole. `started` is (session id, task name).
pub fn assert_each_start_stored(project: &Path, started: &[(String, String)], objective: &str) {
    use std::collections::BTreeSet;
    let total = started.len();
    let ids: BTreeSet<&str> = started.iter().map(|(id, _)| id.as_str()).collect();
    let names: BTreeSet<&str> = started.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(ids.len(), total, "distinct session ids");
    assert_eq!(names.len(), total, "distinct task names");

    let state = project.join(".bmad-task");
    let mut files = 0;
    for e in std::fs::read_dir(&state).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(id) = name
            .strip_prefix("session-")
            .and_then(|n| n.strip_suffix(".json"))
        {
            files += 1;
            let s = read_json(&state.join(&name));
            assert_eq!(s["session_id"], id);
            assert!(ids.contains(id), "{id} was not returned by any start");
            assert_eq!(s["current_state"], "generating");
            assert_eq!(s["history"].as_array().unwrap().len(), 1);
        }
    }
    assert_eq!(files, total, "one session file per start");

    let mapping = read_json(&state.join("task-mapping.json"));
    let mapping = mapping.as_object().unwrap();
    assert_eq!(mapping.len(), total, "every start is in task-mapping.json");
    for (id, name) in started {
        assert_eq!(mapping[id]["task_name"], name.as_str());
        assert_eq!(mapping[id]["objective"], objective);
        assert!(
            project.join(".claude/specs").join(name).is_dir(),
            "{name} is reserved"
        );
    }
    // Every JSON file the server wrote parses.
    for f in files_under(project) {
        if f.ends_with(".json") {
            read_json(&project.join(f));
        }
    }
}

/// A PRD below the gate scored `score`, with one question for the human: a submission two
/// racing clients can both send.
pub fn prd_asking(score: u32) -> String {
    json!({
        "prd_draft": format!("# Product Requirements\n\n## Executive Summary\nSearch for the docs, scored {score}."),
        "quality_score": score,
        "questions": [{"id": "a", "question": "Which pages are indexed?"}],
    })
    .to_string()
}

/// Runs git in `dir`; its stdout. Panics with git's output when it fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value of a `key: value` line of a reply's text (`stage` and `state` share one:
/// `stage: dev; state: generating`).
pub fn text_field<'a>(text: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}: ");
    text.lines()
        .find_map(|l| match l.strip_prefix("stage: ") {
            Some(pair) if key == "stage" || key == "state" => {
                let (stage, state) = pair.split_once("; state: ").unwrap_or((pair, ""));
                let value = if key == "stage" { stage } else { state };
                (!value.is_empty()).then_some(value)
            }
            _ => l.strip_prefix(&prefix),
        })
        .unwrap_or_else(|| panic!("no `{key}:` line in\n{text}"))
}
