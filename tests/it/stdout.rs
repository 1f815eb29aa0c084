//! stdout belongs to the protocol: even at `RUST_LOG=trace`, every line the server writes
//! there is a JSON-RPC message; logs go to stderr. Closing stdin ends the server cleanly.

use crate::support;

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

#[test]
fn every_stdout_line_is_a_json_rpc_message_even_at_trace_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::bin(dir.path())
        .env("RUST_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "start", "objective": "Log everything"}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "approve", "task_name": "log-everything"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "no-such-tool", "arguments": {}}}),
    ];
    // Drain stderr as it comes: trace logs would fill the pipe and stall the server.
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr_pipe, &mut s).unwrap();
        s
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut lines = Vec::new();
    // Requests are sent one at a time (the server runs concurrent requests in parallel),
    // reading stdout until each is answered.
    let mut send_and_wait =
        |stdin: &mut std::process::ChildStdin, text: String, id: Option<i64>| {
            writeln!(stdin, "{text}").unwrap();
            stdin.flush().unwrap();
            let Some(id) = id else { return };
            for line in reader.by_ref() {
                let line = line.unwrap();
                let answered = serde_json::from_str::<Value>(&line).is_ok_and(|v| v["id"] == id);
                lines.push(line);
                if answered {
                    return;
                }
            }
            panic!("stdout closed before request {id} was answered");
        };
    for m in &messages {
        send_and_wait(&mut stdin, m.to_string(), m["id"].as_i64());
    }
    send_and_wait(&mut stdin, "this is not json".to_string(), None);
    let last = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "list"}}});
    send_and_wait(&mut stdin, last.to_string(), Some(6));
    drop(stdin);
    lines.extend(reader.map_while(Result::ok));
    let status = child.wait().unwrap();
    let stderr = stderr_reader.join().unwrap();

    assert!(
        status.success(),
        "exit status {status:?} after stdin closed"
    );
    assert!(lines.len() >= 6, "{lines:#?}");
    let mut ids = Vec::new();
    for line in &lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        if let Some(id) = v["id"].as_i64() {
            ids.push(id);
        }
        if v["id"] == 3 {
            assert_eq!(v["result"]["structuredContent"]["state"], "generating");
        }
        if v["id"] == 4 {
            assert_eq!(v["result"]["isError"], true);
            assert_eq!(
                v["result"]["structuredContent"]["error"]["code"],
                "invalid_state"
            );
        }
        if v["id"] == 5 {
            assert!(
                v["error"]["code"].is_i64(),
                "an unknown tool is a protocol error: {line}"
            );
        }
    }
    for id in 1..=6 {
        assert!(ids.contains(&id), "no reply to request {id}: {lines:#?}");
    }
    assert!(
        stderr.contains("TRACE") || stderr.contains("DEBUG"),
        "logs go to stderr"
    );
}

#[test]
fn version_and_help_work() {
    let out = Command::new(support::server_path())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    // The server's version, as its package declares it (these tests are another package).
    let manifest: toml::Table = std::fs::read_to_string(harness::repo_path("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!(
            "bmad-mcp {}",
            manifest["package"]["version"].as_str().unwrap()
        )
    );
    let out = Command::new(support::server_path())
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.contains("`bmad-mcp setup <host>`") && help.contains("BMAD_PROJECT_ROOT"),
        "{help}"
    );
    assert!(
        !help.contains("claude mcp add"),
        "one way to register, `bmad-mcp setup`: {help}"
    );
    assert!(
        help.contains("BMAD_MAX_LINE_BYTES") && help.contains("3 when stdout is closed"),
        "{help}"
    );
    // Every variable a user sets for the server is named there (the test-only fault
    // trigger is not for users).
    let settings = std::fs::read_to_string(harness::repo_path("src/settings.rs")).unwrap();
    let read: Vec<&str> = settings
        .lines()
        .filter_map(|l| l.strip_prefix("pub const ")?.split_once("_ENV: &str = \""))
        .map(|(_, v)| v.trim_end_matches("\";"))
        .filter(|v| v.starts_with("BMAD_") && *v != "BMAD_FAULT_INJECT")
        .collect();
    assert!(read.contains(&"BMAD_CLAIMS"), "{read:?}");
    for var in read {
        assert!(help.contains(var), "--help does not name {var}");
    }
    let out = Command::new(support::server_path())
        .arg("--bogus")
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// A setting's value the setting does not allow stops the binary at start with exit 2,
/// naming the variable: the server, a terminal command and `serve --http` alike, and a
/// blank one is the default. The plugin's hook, which the host runs before every tool use,
/// still exits 0.
#[test]
fn a_bad_setting_stops_the_binary_naming_its_variable() {
    let dir = tempfile::tempdir().unwrap();
    for (args, variable, value) in [
        (&[][..], "BMAD_LOCK_WAIT_SECS", "ten"),
        (&["list"][..], "BMAD_MAX_TEXT_BYTES", "0"),
        (
            &["serve", "--http"][..],
            "BMAD_HTTP_MAX_CONNECTIONS",
            "lots",
        ),
        (&["status", "x"][..], "BMAD_CLAIMS", "elsewhere"),
    ] {
        let out = support::bin(dir.path())
            .args(args)
            .env(variable, value)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} {variable}={value}: {stderr}"
        );
        assert!(stderr.contains(variable), "{args:?}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "nothing on the protocol channel: {args:?}"
        );
    }
    let out = support::bin(dir.path())
        .arg("list")
        .env("BMAD_LOCK_WAIT_SECS", "")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "blank is the default");
    let out = support::bin(dir.path())
        .args(["hook", "pre-tool-use"])
        .env("BMAD_LOCK_WAIT_SECS", "ten")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook never blocks the host");
}

/// The server's stderr after it answered `initialize` and a `list` with `RUST_LOG=filter`,
/// then saw stdin close.
fn logs_with(filter: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut child = support::bin(dir.path())
        .env("RUST_LOG", filter)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for m in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bmad-task", "arguments": {"action": "list"}}}),
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    // Kept open until the server has exited: a closed stdout would end it with status 3.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut answered = 0;
    let mut line = String::new();
    while answered < 2 && stdout.read_line(&mut line).unwrap() > 0 {
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 1 || v["id"] == 2 {
            answered += 1;
        }
        line.clear();
    }
    assert_eq!(answered, 2, "the server answered under RUST_LOG={filter}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    drop(stdout);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// `RUST_LOG` is a default level and `target=level` pairs (docs/reference.md): a target's
/// level covers its modules, `off` silences one, and a value the server cannot read leaves
/// the default `warn` and says so, rather than stopping the server.
#[test]
fn rust_log_sets_a_level_per_target() {
    let debug = logs_with("bmad_mcp=debug");
    assert!(debug.contains("tool call received"), "{debug}");
    assert!(
        !debug.contains("rmcp::"),
        "only bmad_mcp's debug lines: {debug}"
    );
    let rmcp_only = logs_with("bmad_mcp=off,rmcp=debug");
    assert!(!rmcp_only.contains("tool call received"), "{rmcp_only}");
    assert!(rmcp_only.contains("rmcp::"), "{rmcp_only}");
    let unread = logs_with("bmad_mcp=loud");
    assert!(unread.contains("is not understood"), "{unread}");
    assert!(!unread.contains("tool call received"), "{unread}");
}

/// Every argument and option of every command says what it is in `--help`: walked from
/// the top through each subcommand's own help, an entry with no words beside it fails.
#[test]
fn every_argument_in_help_says_what_it_is() {
    let mut walked = 0;
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let out = Command::new(support::server_path())
            .args(&path)
            .arg("-h")
            .output()
            .unwrap();
        assert!(out.status.success(), "{path:?}: {out:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        walked += 1;
        let mut section = "";
        for line in help.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                section = line;
                continue;
            }
            // An entry is indented by 2 (`-s, --long`, `<ARG>`, a command) or 6 (`--long`
            // alone); deeper lines would be wrapped help.
            let entry = line.trim_start();
            let indent = line.len() - entry.len();
            if entry.is_empty() || !(2..=6).contains(&indent) {
                continue;
            }
            // The entry's name, then at least two spaces, then what it is.
            let (name, said) = entry.split_once("  ").unwrap_or((entry, ""));
            assert!(
                !said.trim().is_empty(),
                "`bmad-mcp {} -h`: `{name}` ({section}) has no help:\n{help}",
                path.join(" ")
            );
            if section == "Commands:" && name != "help" {
                let mut deeper = path.clone();
                deeper.push(name.to_string());
                todo.push(deeper);
            }
        }
    }
    // The top, its commands, and the commands' own subcommands were all read.
    assert!(walked > 20, "{walked} helps walked");
}
