//! The raw JSON-RPC driver: the server spoken to over its stdin and stdout, one message a
//! line, timing each request from writing its line to reading the answer's.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::{Config, Res};

/// A server process spoken to with one JSON-RPC message per line.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
}

/// One `tools/call` answer.
pub struct Reply {
    pub structured: Value,
    /// Bytes of `structuredContent` as sent (compact JSON): what the model reads.
    pub structured_bytes: usize,
    pub time: Duration,
    /// When the request was sent, by the wall clock (to find its system calls in a trace).
    pub sent: SystemTime,
}

impl Server {
    pub fn spawn(cfg: &Config, project: &Path) -> Res<Server> {
        let mut line: Vec<String> = cfg.wrapper.clone();
        line.push(cfg.bin.display().to_string());
        Server::spawn_line(&line, project, false)
    }

    /// Starts `line` (a program and its arguments) in `project`: the server measured,
    /// under a wrapper, or another server altogether (the anchor, `BMAD_ANCHOR_CMD`, whose
    /// debugging lines on stderr are dropped with `quiet`).
    pub fn spawn_line(line: &[String], project: &Path, quiet: bool) -> Res<Server> {
        Server::spawn_line_with(line, project, quiet, &[])
    }

    /// [`Server::spawn_line`] with variables of the environment set (`PATH`, for a `git`
    /// that counts its starts).
    pub fn spawn_line_with(
        line: &[String],
        project: &Path,
        quiet: bool,
        env: &[(&str, OsString)],
    ) -> Res<Server> {
        let (program, args) = line.split_first().ok_or("an empty command line")?;
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(project)
            .env_remove("BMAD_PROJECT_ROOT")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if quiet {
                Stdio::null()
            } else {
                Stdio::inherit()
            })
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().ok_or("no stdout")?);
        Ok(Server {
            child,
            stdin,
            stdout,
            next_id: 1,
            line: String::new(),
        })
    }

    fn send(&mut self, message: &str) -> Res<()> {
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        stdin.write_all(message.as_bytes())?;
        stdin.flush()?;
        Ok(())
    }

    /// Sends a request and waits for its answer; the time covers writing the request
    /// line and reading the answer line, nothing else.
    fn request(&mut self, method: &str, params: Value) -> Res<(Value, Duration, SystemTime)> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = serde_json::to_string(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )?;
        message.push('\n');
        let sent = SystemTime::now();
        let start = Instant::now();
        self.send(&message)?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                return Err(format!("the server closed stdout during `{method}`").into());
            }
            let elapsed = start.elapsed();
            let v: Value = serde_json::from_str(&self.line)?;
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("`{method}` failed: {e}").into());
                }
                return Ok((v, elapsed, sent));
            }
        }
    }

    fn notify(&mut self, method: &str) -> Res<()> {
        self.send(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n"
        ))
    }

    /// The legacy handshake; returns when the tool list has arrived.
    pub fn handshake(&mut self) -> Res<()> {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bmad-bench", "version": "0"}
            }),
        )?;
        self.notify("notifications/initialized")?;
        let (v, ..) = self.request("tools/list", json!({}))?;
        if v["result"]["tools"][0]["name"] != "bmad-task" {
            return Err(format!("unexpected tools/list answer: {v}").into());
        }
        Ok(())
    }

    /// Calls `bmad-task`; a tool error is an error of the benchmark (its script is wrong).
    pub fn call(&mut self, args: &Value) -> Res<Reply> {
        let (v, time, sent) = self.request(
            "tools/call",
            json!({"name": "bmad-task", "arguments": args}),
        )?;
        let result = &v["result"];
        // A server without structured results (the anchor) sends its JSON as text.
        let structured = match &result["structuredContent"] {
            Value::Null => result["content"][0]["text"]
                .as_str()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null),
            s => s.clone(),
        };
        if result["isError"] == json!(true) {
            return Err(format!(
                "`{}` was refused: {}",
                args["action"], structured["error"]["message"]
            )
            .into());
        }
        Ok(Reply {
            structured_bytes: serde_json::to_string(&structured)?.len(),
            structured,
            time,
            sent,
        })
    }

    /// The peak resident set of the server so far (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> Res<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or_else(|| "no VmHWM in /proc/<pid>/status".into())
    }

    /// With `BENCH_SMAPS_DIR` set, copies the server's `smaps`, `smaps_rollup` and
    /// `status` there (named by its pid), to split its resident set by mapping.
    pub fn keep_smaps(&self) -> Res<()> {
        let Some(dir) = std::env::var_os("BENCH_SMAPS_DIR") else {
            return Ok(());
        };
        let pid = self.child.id();
        std::fs::create_dir_all(&dir)?;
        for file in ["smaps", "smaps_rollup", "status"] {
            let text = std::fs::read(format!("/proc/{pid}/{file}"))?;
            std::fs::write(Path::new(&dir).join(format!("{pid}.{file}")), text)?;
        }
        Ok(())
    }

    /// CPU time the server's live threads have used so far (`/proc/<pid>/task/*/schedstat`).
    /// Unlike wall time it does not include waiting for the disk, so it shows how
    /// the work itself grows even when fsync latency swamps it.
    pub fn cpu_time(&self) -> Res<Duration> {
        let mut ns = 0u64;
        for task in std::fs::read_dir(format!("/proc/{}/task", self.child.id()))? {
            let stat = std::fs::read_to_string(task?.path().join("schedstat")).unwrap_or_default();
            ns += stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
        Ok(Duration::from_nanos(ns))
    }

    /// A call with the server CPU time it took.
    pub fn call_cpu(&mut self, args: &Value) -> Res<(Reply, Duration)> {
        let before = self.cpu_time()?;
        let reply = self.call(args)?;
        Ok((reply, self.cpu_time()?.saturating_sub(before)))
    }

    /// Closes stdin (the client disconnects) and waits for the server to exit.
    pub fn close(mut self) -> Res<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if !status.success() {
            return Err(format!("the server exited with {status}").into());
        }
        Ok(())
    }
}
