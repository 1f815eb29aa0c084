//! The server over stdio driven with raw JSON-RPC lines, for what a client library would
//! never send, and for what a host does around the calls (closing stdin while they run).

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{json, Value};

use super::stderr::Stderr;

pub struct Raw {
    pub child: std::process::Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Stderr,
}

impl Raw {
    /// Starts the server in `project` and completes a legacy `initialize` handshake.
    pub fn start(project: &Path) -> Raw {
        Raw::start_with_env(project, &[])
    }

    /// As [`Raw::start`], with these environment variables set.
    pub fn start_with_env(project: &Path, env: &[(&str, &str)]) -> Raw {
        let mut child = super::bin(project)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            stdin: child.stdin.take(),
            stderr: Stderr::read(child.stderr.take().unwrap()),
            child,
            lines: rx,
        };
        raw.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
        raw.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        raw
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server writes but notifications (waiting up to a minute).
    pub fn next_reply(&mut self) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("the server answers");
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
            if !is_notification(&v) {
                return v;
            }
        }
    }

    /// Sends a request and returns the next line, which must answer it.
    pub fn request(&mut self, message: Value) -> Value {
        self.send_line(&message.to_string());
        let reply = self.next_reply();
        assert_eq!(reply["id"], message["id"], "{reply}");
        super::person_reads_answer(&reply);
        reply
    }

    /// A `tools/call` of `bmad-task` with `arguments`.
    pub fn call(&mut self, id: i64, arguments: Value) -> Value {
        self.request(tool_call(id, arguments))
    }

    /// Sends a `tools/call` of `bmad-task` without waiting for its answer.
    pub fn send_call(&mut self, id: i64, arguments: Value) {
        self.send_line(&tool_call(id, arguments).to_string());
    }

    /// Waits (up to a minute) for a line on stderr holding `needle`; returns it.
    pub fn wait_for(&mut self, needle: &str) -> String {
        self.stderr.wait_for(&mut self.child, needle)
    }

    /// Closes stdin, as a host does when it is done with the server.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits for the process; returns the messages but notifications it wrote that were not
    /// read yet.
    pub fn wait(mut self) -> (ExitStatus, Vec<Value>) {
        let status = self.child.wait().unwrap();
        let rest = self
            .lines
            .iter()
            .map(|l| serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .filter(|v| !is_notification(v))
            .collect();
        (status, rest)
    }

    /// Closes stdin and waits for the process; returns the lines written after the close.
    pub fn close(mut self) -> (ExitStatus, Vec<Value>) {
        self.close_stdin();
        self.wait()
    }
}

fn tool_call(id: i64, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bmad-task", "arguments": arguments}})
}

/// A notification from the server (`notifications/resources/list_changed` after a `start`
/// or `submit`), which the raw client passes over.
fn is_notification(v: &Value) -> bool {
    v.get("id").is_none()
        && v["method"]
            .as_str()
            .is_some_and(|m| m.starts_with("notifications/"))
}
