//! The wire, through the real binary: every request that is valid JSON-RPC gets exactly one
//! answer, with the right code and a message that says what was wrong, including JSON that
//! serde_json refuses and lines over the size limit; notifications get none. And when the
//! client closes stdout, the server stops within a second with status 3, applying nothing
//! sent after.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{bin, tree_digest, Raw, Sandbox};
use serde_json::{json, Value};

/// Sends `line`, then a ping, and returns every line the server wrote before the ping's
/// answer. When `id` is given, its answer is awaited first: a tool call runs on a thread of
/// its own, and a ping sent after it may be answered before it.
fn exchange(raw: &mut Raw, line: &[u8], id: Option<Value>) -> Vec<Value> {
    let mut bytes = line.to_vec();
    bytes.push(b'\n');
    raw.send_bytes(&bytes);
    let mut seen = Vec::new();
    if let Some(id) = id {
        let r = raw.next_reply();
        assert_eq!(r["id"], id, "the first line after the request: {r}");
        seen.push(r);
    }
    let ping = json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"});
    raw.send_line(&ping.to_string());
    loop {
        let r = raw.next_reply();
        if r["id"] == "ping" {
            assert!(r["result"].is_object(), "{r}");
            return seen;
        }
        seen.push(r);
    }
}

/// The one answer to `line`, which must carry `id`.
fn only_answer(raw: &mut Raw, line: &[u8], id: Value) -> Value {
    let seen = exchange(raw, line, Some(id.clone()));
    assert_eq!(
        seen.len(),
        1,
        "{} → {seen:?}",
        String::from_utf8_lossy(&line[..line.len().min(300)])
    );
    seen.into_iter().next().unwrap()
}

fn assert_error(r: &Value, code: i64, needles: &[&str]) {
    assert_eq!(r["error"]["code"], code, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {r}");
    }
}

fn start_line(id: i64, objective_json: &str, project: &std::path::Path) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bmad-task","arguments":{{"action":"start","objective":{objective_json},"cwd":{}}}}}}}"#,
        json!(project)
    )
}

/// JavaScript cuts a string inside an emoji and `JSON.stringify` writes the lone half as
/// `\ud83d`; serde_json refuses it. The server reads it as U+FFFD and serves the call.
#[test]
fn a_lone_surrogate_in_an_argument_is_served_as_the_replacement_character() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let line = start_line(1, r#""Ship the rocket \ud83d""#, &sb.project);
    let r = only_answer(&mut raw, line.as_bytes(), json!(1));
    assert_eq!(r["result"]["isError"], false, "{r}");
    let prompt = r["result"]["structuredContent"]["role_prompt"]
        .as_str()
        .unwrap();
    assert!(
        prompt.contains("**Objective:** Ship the rocket \u{fffd}\n"),
        "{r}"
    );

    // A whole pair is a character, as always.
    let line = start_line(2, r#""Ship the rocket \ud83d\ude80""#, &sb.project);
    let r = only_answer(&mut raw, line.as_bytes(), json!(2));
    let prompt = r["result"]["structuredContent"]["role_prompt"]
        .as_str()
        .unwrap();
    assert!(
        prompt.contains("**Objective:** Ship the rocket 🚀\n"),
        "{r}"
    );

    let (status, rest) = raw.close();
    assert!(status.success(), "{status:?}");
    assert!(rest.is_empty(), "{rest:?}");
    sb.assert_confined(&[]);
}

#[test]
fn nesting_deeper_than_128_levels_is_answered_once_with_the_id() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let before = tree_digest(sb.dir.path());
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let id_first = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"bmad-task","arguments":{{"action":"list","x":{deep}}}}}}}"#
    );
    let r = only_answer(&mut raw, id_first.as_bytes(), json!(7));
    assert_error(&r, -32600, &["deeper than 128 levels"]);
    // The id after the deep member is read too.
    let id_last = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"bmad-task","arguments":{{"x":{deep}}}}},"id":"deep-8"}}"#
    );
    let r = only_answer(&mut raw, id_last.as_bytes(), json!("deep-8"));
    assert_error(&r, -32600, &["deeper than 128 levels"]);
    // A deep notification is never answered.
    let notification =
        format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{deep}}}"#);
    let seen = exchange(&mut raw, notification.as_bytes(), None);
    assert!(seen.is_empty(), "{seen:?}");
    assert_eq!(tree_digest(sb.dir.path()), before);
    let (status, _) = raw.close();
    assert!(status.success(), "{status:?}");
}

#[test]
fn params_null_and_arguments_that_are_no_object_are_invalid_params() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let before = tree_digest(sb.dir.path());
    let r = only_answer(
        &mut raw,
        br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":null}"#,
        json!(10),
    );
    assert_error(&r, -32602, &["`params` is missing or null", "bmad-task"]);
    for (id, arguments, got) in [
        (11, r#""start""#, "got a string"),
        (12, r#"["start"]"#, "got an array"),
        (13, "42", "got a number"),
        (14, "null", "got null"),
    ] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"bmad-task","arguments":{arguments}}}}}"#
        );
        let r = only_answer(&mut raw, line.as_bytes(), json!(id));
        assert_error(&r, -32602, &["`params.arguments` must be an object", got]);
    }
    // Leaving `arguments` out is no protocol error: the tool answers that `action` is missing.
    let r = only_answer(
        &mut raw,
        br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"bmad-task"}}"#,
        json!(15),
    );
    assert_eq!(
        r["result"]["structuredContent"]["error"]["code"], "missing_field",
        "{r}"
    );
    assert_eq!(tree_digest(sb.dir.path()), before);
    let (status, _) = raw.close();
    assert!(status.success(), "{status:?}");
}

/// `len` bytes: a tool call whose `x` argument fills the line, with the id before or after it.
fn long_call(len: usize, id_first: bool) -> String {
    let head = if id_first {
        r#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"bmad-task","arguments":{"action":"list","x":""#
    } else {
        r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"bmad-task","arguments":{"action":"list","x":""#
    };
    let tail = if id_first {
        r#""}}}"#
    } else {
        r#""}},"id":"big"}"#
    };
    let fill = len - head.len() - tail.len();
    format!("{head}{}{tail}", "a".repeat(fill))
}

#[test]
fn a_line_over_the_limit_is_answered_with_its_id_naming_the_limit_and_the_variable() {
    let sb = Sandbox::new();
    let limit = 64 * 1024;
    let mut raw = Raw::start_with_env(&sb.project, &[("BMAD_MAX_LINE_BYTES", "65536")]);
    let before = tree_digest(sb.dir.path());
    for id_first in [true, false] {
        // One byte over: refused unread.
        let r = only_answer(
            &mut raw,
            long_call(limit + 1, id_first).as_bytes(),
            json!("big"),
        );
        assert_error(
            &r,
            -32600,
            &["65537 bytes", "64 KiB", "BMAD_MAX_LINE_BYTES"],
        );
        // At the limit: read, and served by the tool (which refuses the unknown field).
        let r = only_answer(
            &mut raw,
            long_call(limit, id_first).as_bytes(),
            json!("big"),
        );
        assert_eq!(
            r["result"]["structuredContent"]["error"]["code"], "unknown_field",
            "{r}"
        );
    }
    // An over-limit line without an id (a notification, or no message at all) is skipped.
    let notification = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"x":"{}"}}}}"#,
        "a".repeat(limit)
    );
    assert!(exchange(&mut raw, notification.as_bytes(), None).is_empty());
    let garbage = "z".repeat(limit * 3);
    assert!(exchange(&mut raw, garbage.as_bytes(), None).is_empty());
    assert_eq!(tree_digest(sb.dir.path()), before);
    let (status, rest) = raw.close();
    assert!(status.success(), "{status:?}");
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn the_default_limit_is_16_mib() {
    let sb = Sandbox::new();
    let mut raw = Raw::start(&sb.project);
    let r = only_answer(
        &mut raw,
        long_call(16 * 1024 * 1024 + 1, true).as_bytes(),
        json!("big"),
    );
    assert_error(&r, -32600, &["16 MiB", "BMAD_MAX_LINE_BYTES"]);
    let (status, _) = raw.close();
    assert!(status.success(), "{status:?}");
}

/// The server with its stdin and stdout piped, after a legacy `initialize`.
fn started(project: &std::path::Path) -> (std::process::Child, std::process::ChildStdin) {
    let mut child = bin(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{initialize}").unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let r: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(r["id"], 0, "{r}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Once the ping is answered, the server has read everything sent so far.
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":"p","method":"ping"}}"#).unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains(r#""id":"p""#), "{line}");
    // Closes the test's end of the server's stdout.
    drop(stdout);
    (child, stdin)
}

/// Waits for the process to end, at most a few seconds; returns its status and how long
/// it took from `since`.
fn exit_within(
    child: &mut std::process::Child,
    since: Instant,
) -> (std::process::ExitStatus, Duration) {
    let deadline = since + Duration::from_secs(5);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, since.elapsed());
        }
        assert!(
            Instant::now() < deadline,
            "still running 5 s after stdout was closed"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn assert_status_3(status: std::process::ExitStatus, took: Duration, stderr: &str) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), None, "killed by a signal (SIGPIPE?)");
    }
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(stderr.contains("stdout is closed"), "{stderr}");
}

/// The client stops reading (closes its end of the server's stdout) and then sends a call
/// that would create a session: the call is not applied, and the server exits with status 3
/// within a second.
#[test]
fn when_stdout_is_closed_no_later_call_runs_and_the_server_exits_with_status_3() {
    let sb = Sandbox::new();
    let before = tree_digest(sb.dir.path());
    let (mut child, mut stdin) = started(&sb.project);
    let closed = Instant::now();
    // The server may be gone already, so a failed write is no failure of the test.
    let _ =
        stdin.write_all(format!("{}\n", start_line(1, r#""Too late""#, &sb.project)).as_bytes());
    let _ = stdin.flush();
    let (status, took) = exit_within(&mut child, closed);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    eprintln!("exited {took:?} after stdout was closed: {status:?}");
    assert_status_3(status, took, &stderr);
    assert_eq!(
        tree_digest(sb.dir.path()),
        before,
        "a call sent after stdout was closed changed the project"
    );
}

/// The same with nothing sent after: the server notices by itself, without a failed write.
#[test]
fn a_server_with_nothing_to_write_still_notices_that_stdout_is_closed() {
    let sb = Sandbox::new();
    let (mut child, stdin) = started(&sb.project);
    let closed = Instant::now();
    let (status, took) = exit_within(&mut child, closed);
    drop(stdin);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    eprintln!("exited {took:?} after stdout was closed: {status:?}");
    assert_status_3(status, took, &stderr);
}

/// The per-request metadata of a 2026-07-28 request, with `extra` members.
fn meta_2026(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    meta
}

/// Runs the server over stdio on `lines` (after a legacy `initialize` unless `modern`,
/// where each request carries its 2026-07-28 `_meta`), closes stdin, and returns every
/// line it wrote, as JSON.
fn answers_to(project: &std::path::Path, modern: bool, lines: &[Value]) -> Vec<(usize, Value)> {
    let mut child = bin(project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut text = String::new();
    if !modern {
        text.push_str(&json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}).to_string());
        text.push('\n');
        text.push_str(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
        text.push('\n');
    } else {
        // A first request that serves the era (a lone ping before any is not answered
        // when stdin closes at once: rmcp still waits for its first request then).
        text.push_str(&json!({"jsonrpc": "2.0", "id": "init", "method": "tools/list", "params": {"_meta": meta_2026(json!({}))}}).to_string());
        text.push('\n');
    }
    for line in lines {
        let mut line = line.clone();
        if modern && line.get("method").is_some() && line.get("id").is_some() {
            let params = line
                .as_object_mut()
                .unwrap()
                .entry("params")
                .or_insert_with(|| json!({}));
            if params.get("_meta").is_none() {
                params["_meta"] = meta_2026(json!({}));
            }
        }
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let mut out = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] != "init" {
            out.push((line.len(), v));
        }
    }
    writer.join().unwrap();
    child.wait().unwrap();
    out
}

/// The answer whose id is `id`.
fn answer_with(answers: &[(usize, Value)], id: &Value) -> (usize, Value) {
    let found: Vec<_> = answers.iter().filter(|(_, v)| v["id"] == *id).collect();
    assert_eq!(found.len(), 1, "one answer with id {id}: {answers:?}");
    found[0].clone()
}

/// An error quotes at most a bounded part of what the client sent, in both eras: a 1 MB
/// method name, `_meta` protocol version or tool name comes back clipped.
#[test]
fn every_error_stays_bounded_in_both_eras() {
    let sb = Sandbox::new();
    let big = "y".repeat(1_000_000);
    for modern in [false, true] {
        let lines = [
            json!({"jsonrpc": "2.0", "id": 1, "method": big}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping",
                   "params": {"_meta": meta_2026(json!({"io.modelcontextprotocol/protocolVersion": big}))}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": big, "arguments": {}}}),
        ];
        let answers = answers_to(&sb.project, modern, &lines);
        for id in 1..=3 {
            let (len, v) = answer_with(&answers, &json!(id));
            assert!(v["error"].is_object(), "modern {modern}: {v}");
            assert!(len < 4096, "modern {modern}: answer {id} is {len} bytes");
        }
        let (_, v) = answer_with(&answers, &json!(1));
        assert_eq!(v["error"]["code"], -32601, "{v}");
        assert!(v["error"]["message"].as_str().unwrap().ends_with('…'));
    }
}

/// Every valid JSON-RPC request is answered with its own id, at the edges of the integer
/// range too; an id past what an MCP id holds, or a `jsonrpc` other than "2.0", gets -32600
/// Invalid Request with that id, saying what is wrong.
#[test]
fn ids_at_the_edge_of_the_integer_range_are_answered_with_their_own_id() {
    let sb = Sandbox::new();
    for modern in [false, true] {
        let lines: Vec<Value> = [
            r#"{"jsonrpc": "2.0", "id": 9223372036854775807, "method": "tools/list"}"#,
            r#"{"jsonrpc": "2.0", "id": -9223372036854775808, "method": "tools/list"}"#,
            r#"{"jsonrpc": "2.0", "id": 18446744073709551615, "method": "tools/list"}"#,
            r#"{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}"#,
            r#"{"id": 8, "method": "tools/list"}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let answers = answers_to(&sb.project, modern, &lines);
        assert_eq!(answers.len(), 5, "one answer each: {answers:?}");
        for id in [json!(i64::MAX), json!(i64::MIN)] {
            let (_, v) = answer_with(&answers, &id);
            assert!(v["result"]["tools"].is_array(), "modern {modern}: {v}");
        }
        let (_, v) = answer_with(&answers, &json!(u64::MAX));
        assert_error(&v, -32600, &["`id` 18446744073709551615", "2^63 - 1"]);
        for id in [7, 8] {
            let (_, v) = answer_with(&answers, &json!(id));
            assert_error(&v, -32600, &[r#"`jsonrpc` must be "2.0""#]);
        }
    }
}
