//! One server over stdio as a host declares itself: its `clientInfo.name`, a dialog
//! (MCP elicitation) that either accepts what the form pre-fills or is closed without a
//! decision, `roots/list` answered with none. The benches' stand-in for a host's client,
//! where what matters is the raw tool result, not the host's wrapper around it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// What the client does with a dialog the server opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// Accepts it with the values the form pre-fills, as a human who agrees would.
    Accept,
    /// Closes it without a decision.
    Cancel,
}

pub struct Conn {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    dialog: Dialog,
    next_id: u64,
}

impl Conn {
    /// Starts `server` in `dir` with `home` as its home (the variables every host sets for
    /// its servers: none of a shell tool's marks) and initializes it as `client`.
    pub fn open(server: &Path, dir: &Path, home: &Path, client: &str, dialog: Dialog) -> Res<Conn> {
        let mut command = Command::new(server);
        command
            .current_dir(dir)
            .env("HOME", home)
            .env_remove("BMAD_OWNER");
        for var in super::terminal::host_marks() {
            command.env_remove(var);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or("stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("stdout")?);
        let mut conn = Conn {
            child,
            stdin: Some(stdin),
            stdout,
            dialog,
            next_id: 1,
        };
        conn.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": client, "version": "0"}}}),
        )?;
        conn.answer(0)?;
        conn.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(conn)
    }

    /// Calls `bmad-task` with `args`; the raw tool result.
    pub fn call(&mut self, args: &Value) -> Res<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "bmad-task", "arguments": args}}))?;
        self.answer(id)
    }

    fn send(&mut self, message: &Value) -> Res<()> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")?;
        Ok(())
    }

    /// Reads messages until the response to request `id`, handling each dialog as
    /// `self.dialog` says and answering `roots/list` with none.
    fn answer(&mut self, id: u64) -> Res<Value> {
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err("the server closed stdout".into());
            }
            let v: Value = serde_json::from_str(&line)?;
            match v["method"].as_str() {
                Some("elicitation/create") => {
                    let result = match self.dialog {
                        Dialog::Accept => json!({"action": "accept",
                            "content": prefilled(&v["params"]["requestedSchema"])}),
                        Dialog::Cancel => json!({"action": "cancel"}),
                    };
                    self.send(&json!({"jsonrpc": "2.0", "id": v["id"], "result": result}))?;
                }
                Some("roots/list") => {
                    self.send(&json!({"jsonrpc": "2.0", "id": v["id"], "result": {"roots": []}}))?;
                }
                Some(_) => {}
                None if v["id"] == id => return Ok(v["result"].clone()),
                None => {}
            }
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The values a form pre-fills.
fn prefilled(schema: &Value) -> Value {
    let mut content = serde_json::Map::new();
    for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(default) = prop.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    content.into()
}
