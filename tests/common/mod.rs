//! Drives the built `bmad-mcp` binary through rmcp's client, as a host would.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_bmad-mcp");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// `initialize` handshake (negotiates 2025-11-25).
    Legacy,
    /// `server/discover` with per-request metadata (2026-07-28), as Claude Code speaks.
    Modern,
}

pub struct Client {
    service: RunningService<RoleClient, ()>,
    pub project: PathBuf,
}

/// A server command for `project`, with the project-root variables cleared so the
/// test decides where the server looks.
pub fn command(project: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.current_dir(project)
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR");
    cmd
}

pub async fn connect(era: Era, project: &Path) -> Client {
    connect_with(era, command(project), project).await
}

pub async fn connect_with(era: Era, cmd: tokio::process::Command, project: &Path) -> Client {
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let service = match era {
        Era::Legacy => ().serve(transport).await.expect("initialize handshake"),
        Era::Modern => ()
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("server/discover handshake"),
    };
    let negotiated = service
        .peer_info()
        .map(|i| i.protocol_version.clone())
        .expect("the server told its protocol version");
    let want = match era {
        Era::Legacy => ProtocolVersion::V_2025_11_25,
        Era::Modern => ProtocolVersion::V_2026_07_28,
    };
    assert_eq!(negotiated, want, "negotiated protocol version");
    Client {
        service,
        project: project.to_path_buf(),
    }
}

impl Client {
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
        // The text copy is the same JSON, for clients that read only text.
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .expect("a text copy");
        let from_text: Value = serde_json::from_str(&text).expect("the text copy is JSON");
        assert_eq!(from_text, structured, "text copy equals structuredContent");
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

    pub async fn list_tools(&self) -> Vec<rmcp::model::Tool> {
        self.service.list_all_tools().await.expect("tools/list")
    }

    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// Every file under `dir`, relative, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A digest of every file (path and bytes) and directory under `dir`.
pub fn tree_digest(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().display().to_string();
            if p.is_dir() {
                out.push((format!("{rel}/"), Vec::new()));
                walk(base, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn start_args(project: &Path, objective: &str) -> Value {
    json!({"action": "start", "objective": objective, "cwd": project.to_str().unwrap()})
}
