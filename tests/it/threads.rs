//! Calls one after another run on the server's one kept thread (`src/server/worker.rs`):
//! no second thread, with its own stack and malloc arena, for the next call (issue 26
//! item 5). Linux: the threads are read from `/proc/<pid>/task`.

use crate::support;

use std::io::{BufRead, Write};
use std::process::Stdio;

use serde_json::{json, Value};

/// The names of the server's threads now.
#[cfg(target_os = "linux")]
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn calls_one_after_another_run_on_one_kept_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::bin(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut ask = |stdin: &mut std::process::ChildStdin, id: i64, method: &str, params: Value| {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        loop {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    ask(
        &mut stdin,
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let started = ask(
        &mut stdin,
        2,
        "tools/call",
        json!({"name": "bmad-task", "arguments": {"action": "start", "objective": "One thread"}}),
    );
    let sid = started["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    for id in 3..13 {
        let v = ask(
            &mut stdin,
            id,
            "tools/call",
            json!({"name": "bmad-task", "arguments": {"action": "status", "session_id": sid}}),
        );
        assert_eq!(v["result"]["isError"], false, "{v}");
    }
    let names = thread_names(child.id());
    assert_eq!(
        names.iter().filter(|n| *n == "bmad-calls").count(),
        1,
        "{names:?}"
    );
    // tokio's blocking pool names its threads so: none was needed.
    assert!(!names.iter().any(|n| n == "tokio-rt-worker"), "{names:?}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
