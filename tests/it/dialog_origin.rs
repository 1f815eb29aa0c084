//! A decision taken in the client's dialog records who is behind the connection: over stdio
//! the server's parent chain, over HTTP the connecting process and its chain, and the
//! client's declared name. A connection opened from under an assistant's shell (a parent
//! with `CLAUDECODE` in its environment, as Claude Code's Bash tool has) gets no dialog:
//! under the default policy its decision waits for the human's terminal or dashboard, and
//! under an approved `gates = "host"` it is recorded as the host's, never as the human's.

use std::process::Stdio;

use rmcp::model::ElicitationAction;
use rmcp::transport::TokioChildProcess;
use serde_json::{json, Value};

use crate::support::http::{self, CALL_HEADERS};
use crate::support::terminal::in_terminal;
use crate::support::transport::{each_transport, Transport};
use crate::support::user::{structured, User};
use crate::support::{handshake, last_entry, read_json, server_path, Era};

/// Starts a session and submits a PRD that waits for confirmation; its id.
async fn awaiting(
    service: &rmcp::service::RunningService<rmcp::RoleClient, User>,
    project: &std::path::Path,
) -> String {
    let v = structured(
        service,
        json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}),
    )
    .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    let prd =
        std::fs::read_to_string(harness::repo_path("examples/fixtures/po-final.json")).unwrap();
    let v = structured(
        service,
        json!({"action": "submit", "session_id": id, "claude_result": prd}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");
    id
}

/// `gates = "host"` in the project, approved by the human in a terminal: the host's word
/// then passes where the client cannot ask.
fn approve_gates_host(project: &std::path::Path) {
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), "gates = \"host\"\n").unwrap();
    let (code, out) = in_terminal(project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
}

/// What a refusal under the default policy says of a connection from Claude Code's shell.
const FROM_THE_SHELL: &str = "Claude Code's shell tool (CLAUDECODE in the environment of";

fn last_decision(project: &std::path::Path, id: &str) -> Value {
    last_entry(&read_json(
        &project.join(format!(".bmad-task/session-{id}.json")),
    ))
}

/// A plain client (this test process, not under any assistant): the human's decision,
/// with the chain, the connecting process over HTTP, and the client's name.
async fn a_plain_connection_is_recorded_with_its_origin(t: Transport) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let host = t.host(&project);
    let user = User::default();
    let service = host.connect_as(user.clone(), Era::Legacy).await;
    let id = awaiting(&service, &project).await;
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
    let v = structured(&service, json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "architect", "{v}");
    let last = last_decision(&project, &id);
    assert_eq!(
        (&last["decided_by"], &last["via"]),
        (&json!("human"), &json!("elicitation")),
        "{last}"
    );
    let p = &last["provenance"];
    assert_eq!(p["under_assistant"], false, "{last}");
    assert_eq!(p["client"], "bmad-test-user 1.0.0", "{last}");
    let me = format!("(pid {})", std::process::id());
    match t {
        Transport::Stdio => {
            assert_eq!(p["channel"], "stdio", "{last}");
            // The server's parent is this test process, which spawned it.
            assert!(p["parents"][0].as_str().unwrap().ends_with(&me), "{last}");
        }
        Transport::Http => {
            assert_eq!(p["channel"], "http", "{last}");
            // The connection's other end is held by this test process.
            assert!(p["process"].as_str().unwrap().ends_with(&me), "{last}");
            assert!(!p["parents"].as_array().unwrap().is_empty(), "{last}");
        }
    }
    let _ = service.cancel().await;
}

each_transport!(async a_dialog_decision_records_who_is_behind_the_connection
    => a_plain_connection_is_recorded_with_its_origin);

/// Over stdio: the client spawns `sh` (with `CLAUDECODE=1`, as the Bash tool's shell has),
/// which runs the server and stays its parent. The client declares elicitation and would
/// accept; the server does not ask: the decision waits for the human by default, and is
/// recorded as the host's under an approved `gates = "host"`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stdio_client_under_an_assistants_shell_is_not_the_human() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let mut shell = tokio::process::Command::new("sh");
    // `; :` keeps the shell from replacing itself with the server.
    shell
        .args(["-c", "\"$0\"; :", server_path()])
        .current_dir(&project)
        .env("CLAUDECODE", "1")
        .env("XDG_CONFIG_HOME", crate::support::NO_USER_CONFIG)
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR");
    let (transport, _stderr) = TokioChildProcess::builder(shell)
        .stderr(Stdio::null())
        .spawn()
        .expect("the shell starts");
    let user = User::default();
    let service = handshake(user.clone(), Era::Legacy, transport).await;
    let id = awaiting(&service, &project).await;
    // Were the dialog shown, this answer would pass for the human's.
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
    let v = structured(&service, json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["error"]["code"], "human_required", "{v}");
    assert!(v.to_string().contains(FROM_THE_SHELL), "{v}");
    assert_eq!(
        last_decision(&project, &id)["action"],
        "submit",
        "nothing recorded"
    );
    approve_gates_host(&project);
    let v = structured(&service, json!({"action": "confirm", "session_id": id})).await;
    assert!(
        user.shown.lock().unwrap().is_empty(),
        "no dialog is shown: {v}"
    );
    assert!(
        v.to_string().contains("dialog was not opened"),
        "the reply says why: {v}"
    );
    let last = last_decision(&project, &id);
    assert_eq!(last["decided_by"], "host", "{last}");
    assert_eq!(last["via"], "tool", "{last}");
    let p = &last["provenance"];
    assert_eq!(
        (&p["channel"], &p["under_assistant"]),
        (&json!("stdio"), &json!(true)),
        "{last}"
    );
    assert!(
        p["assistant"]
            .as_str()
            .unwrap()
            .starts_with("CLAUDECODE in the environment of sh (pid"),
        "{last}"
    );
    assert!(
        p["parents"][0].as_str().unwrap().starts_with("sh (pid"),
        "{last}"
    );
    let _ = service.cancel().await;
}

/// A 2026-07-28 `confirm` of session `id` whose client declares the dialog (elicitation).
fn confirm_declaring_the_dialog(id: &str) -> Value {
    let mut call = http::tool_call(7, json!({"action": "confirm", "session_id": id}));
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    call
}

/// Over HTTP: `curl` run by a shell with `CLAUDECODE=1` sends a 2026-07-28 `confirm`
/// declaring elicitation. The server finds curl from its socket, sees the shell above it:
/// the decision waits for the human by default, and under an approved `gates = "host"` is
/// recorded as the host's, with curl as the connecting process.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_http_client_under_an_assistants_shell_is_not_the_human() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = http::Server::for_project(&project, &[]);
    let user = User::default();
    let service = server.connect_as(user.clone(), Era::Legacy, None).await;
    let id = awaiting(&service, &project).await;
    let call = confirm_declaring_the_dialog(&id);
    let body = dir.path().join("call.json");
    std::fs::write(&body, call.to_string()).unwrap();
    let mut args: Vec<String> = vec!["-s".into(), "-X".into(), "POST".into()];
    for (n, v) in CALL_HEADERS {
        args.push("-H".into());
        args.push(format!("{n}: {v}"));
    }
    args.extend([
        "--data-binary".into(),
        format!("@{}", body.display()),
        server.url.clone(),
    ]);
    let from_the_shell = || {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("curl \"$@\"; :")
            .arg("sh")
            .args(&args)
            .env("CLAUDECODE", "1")
            .output()
            .expect("sh and curl run");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let reply = from_the_shell();
    assert!(reply.contains("human_required"), "{reply}");
    assert!(reply.contains(FROM_THE_SHELL), "{reply}");
    approve_gates_host(&project);
    let reply = from_the_shell();
    assert!(reply.contains("dialog was not opened"), "{reply}");
    let last = last_decision(&project, &id);
    assert_eq!(
        (&last["decided_by"], &last["via"]),
        (&json!("host"), &json!("tool")),
        "{last}"
    );
    let p = &last["provenance"];
    assert_eq!(
        (&p["channel"], &p["under_assistant"]),
        (&json!("http"), &json!(true)),
        "{last}"
    );
    assert!(
        p["process"].as_str().unwrap().starts_with("curl (pid"),
        "{last}"
    );
    assert_eq!(p["client"], "raw 1", "{last}");
    assert!(
        p["assistant"]
            .as_str()
            .unwrap()
            .contains("CLAUDECODE in the environment of"),
        "{last}"
    );
    let _ = service.cancel().await;
}

/// The real path of the Python interpreter (not a launcher script such as pyenv's shim).
fn python_executable() -> std::path::PathBuf {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(os.path.realpath(sys.executable))",
        ])
        .output()
        .expect("python3 runs");
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// A copy of the Python interpreter named `claude` (a host's program, by the file
/// `/proc/<pid>/exe` names), started from a shell with `CLAUDECODE=1` and the mark removed
/// from its own environment, posts a `confirm` declaring elicitation. A real host is never
/// started from a shell tool: the copy is the shell's, the dialog is not opened and
/// nothing is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_copy_of_a_program_under_a_hosts_name_is_not_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = http::Server::for_project(&project, &[]);
    let user = User::default();
    let service = server.connect_as(user.clone(), Era::Legacy, None).await;
    let id = awaiting(&service, &project).await;
    let call = confirm_declaring_the_dialog(&id);
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(python_executable(), bin.join("claude")).unwrap();
    let script = dir.path().join("post.py");
    let headers: serde_json::Map<String, Value> = CALL_HEADERS
        .iter()
        .map(|(n, v)| (n.to_string(), json!(v)))
        .collect();
    std::fs::write(
        &script,
        format!(
            "import sys, urllib.request\n\
             req = urllib.request.Request({url:?}, data=sys.argv[1].encode(), headers={headers})\n\
             try:\n    print(urllib.request.urlopen(req, timeout=10).read().decode())\n\
             except Exception as e:\n    print('no answer:', e)\n",
            url = server.url,
            headers = Value::Object(headers),
        ),
    )
    .unwrap();
    let out = tokio::process::Command::new("sh")
        .arg("-c")
        .arg("env -u CLAUDECODE \"$0\" \"$1\" \"$2\"; :")
        .arg(bin.join("claude"))
        .arg(&script)
        .arg(call.to_string())
        .env("CLAUDECODE", "1")
        .output()
        .await
        .expect("sh and the copy run");
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(reply.contains("human_required"), "{reply}");
    assert!(reply.contains("which started claude (pid"), "{reply}");
    assert!(user.shown.lock().unwrap().is_empty(), "no dialog: {reply}");
    assert_eq!(last_decision(&project, &id)["action"], "submit", "{reply}");
    let _ = service.cancel().await;
}

/// The headers of a 2025-11-25 request in session `sid` (none before `initialize`).
fn legacy_headers(sid: Option<&str>) -> Vec<(&str, &str)> {
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    if let Some(sid) = sid {
        h.push(("Mcp-Session-Id", sid));
    }
    h
}

/// A legacy session opened by this test process over raw HTTP: its id.
fn open_session(addr: std::net::SocketAddr) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "owner", "version": "1"}}});
    let a = http::raw(
        addr,
        "POST",
        &legacy_headers(None),
        init.to_string().as_bytes(),
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let sid = a
        .head
        .lines()
        .find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_string())
        })
        .expect("the session's id");
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let a = http::raw(
        addr,
        "POST",
        &legacy_headers(Some(&sid)),
        done.to_string().as_bytes(),
    );
    assert_eq!(a.status, 202, "{}", a.body);
    sid
}

/// A client of the session calls `bmad-task`; the reply's structured content.
fn call_in(addr: std::net::SocketAddr, sid: &str, id: i64, args: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "bmad-task", "arguments": args}});
    let a = http::raw(
        addr,
        "POST",
        &legacy_headers(Some(sid)),
        call.to_string().as_bytes(),
    );
    a.message()["result"]["structuredContent"].clone()
}

/// rmcp routes a client's POST by its `Mcp-Session-Id` alone and numbers the server's
/// requests from 0: another process holding the id (here `curl`) could answer the
/// owner's pending dialog. Now the session belongs to the process that opened it: curl's
/// acceptance is refused (403) and changes nothing; the owner's own answer (a decline,
/// on a new connection) is taken.
#[test]
fn another_process_cannot_answer_a_sessions_dialog() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = http::Server::for_project(&project, &[]);
    let addr = server.addr;
    let sid = open_session(addr);
    let v = call_in(
        addr,
        &sid,
        2,
        json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}),
    );
    let id = v["session_id"].as_str().expect("started").to_string();
    let prd =
        std::fs::read_to_string(harness::repo_path("examples/fixtures/po-final.json")).unwrap();
    let v = call_in(
        addr,
        &sid,
        3,
        json!({"action": "submit", "session_id": id, "claude_result": prd}),
    );
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");

    // The owner's confirm: the server asks in the dialog on the call's event stream.
    let confirm = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                         "params": {"name": "bmad-task", "arguments": {"action": "confirm", "session_id": id}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n");
    for (n, v) in legacy_headers(Some(&sid)) {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{confirm}",
        confirm.len()
    ));
    stream.write_all(head.as_bytes()).unwrap();
    let mut lines = BufReader::new(stream).lines();
    let asked: Value = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| {
            let data = l.strip_prefix("data: ")?;
            let m: Value = serde_json::from_str(data).ok()?;
            (m["method"] == "elicitation/create").then_some(m)
        })
        .expect("the dialog is asked");
    let request_id = asked["id"].clone();

    // Another process with the session's id accepts in the owner's place.
    let forged = json!({"jsonrpc": "2.0", "id": request_id,
                        "result": {"action": "accept", "content": {"decision": "confirm"}}});
    let mut curl = vec![
        "-s".to_string(),
        "-o".into(),
        "/dev/null".into(),
        "-w".into(),
        "%{http_code}".into(),
    ];
    for (n, v) in legacy_headers(Some(&sid)) {
        curl.extend(["-H".into(), format!("{n}: {v}")]);
    }
    curl.extend([
        "--data-binary".into(),
        forged.to_string(),
        server.url.clone(),
    ]);
    let out = std::process::Command::new("curl")
        .args(&curl)
        .output()
        .expect("curl runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "403",
        "another process is refused"
    );

    // The owner declines, from a new connection of its own.
    let decline = json!({"jsonrpc": "2.0", "id": request_id, "result": {"action": "decline"}});
    let a = http::raw(
        addr,
        "POST",
        &legacy_headers(Some(&sid)),
        decline.to_string().as_bytes(),
    );
    assert_eq!(a.status, 202, "{}", a.body);
    let reply: Value = lines
        .map_while(Result::ok)
        .find_map(|l| {
            let m: Value = serde_json::from_str(l.strip_prefix("data: ")?).ok()?;
            (m["id"] == 4).then_some(m)
        })
        .expect("the call is answered");
    let v = &reply["result"]["structuredContent"];
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "the decline holds: {reply}"
    );
    let session = read_json(&project.join(format!(".bmad-task/session-{id}.json")));
    assert_eq!(
        session["current_state"], "awaiting_confirmation",
        "{session}"
    );
}

/// A decision taken on the host's word (a client without a dialog, whose word the default
/// policy takes) is recorded with where it came from, as the human's is: the client's
/// declared name, the channel and the processes behind it; `status` names the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_word_is_recorded_with_its_client_and_processes() {
    use crate::support::{bin, connect, passing_prd, start_args};
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let sid = c.ok(start_args(project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    c.ok(json!({"action": "confirm", "session_id": sid})).await;
    let s = read_json(&project.join(format!(".bmad-task/session-{sid}.json")));
    let entry = last_entry(&s);
    assert_eq!(entry["decided_by"], "host", "{entry:#}");
    let p = &entry["provenance"];
    let client = p["client"].as_str().expect("the client's name").to_string();
    assert_eq!(p["channel"], "stdio", "{p:#}");
    assert_eq!(p["under_assistant"], false, "{p:#}");
    let me = format!("(pid {})", std::process::id());
    assert!(p["parents"][0].as_str().unwrap().ends_with(&me), "{p:#}");
    c.close().await;
    let out = bin(project).args(["status", &sid]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("through {client} over stdio")),
        "{said}"
    );
}

/// A stand-in for a host: a copy of the Python interpreter named `claude` (a host's
/// program, by the file `/proc/<pid>/exe` names), which runs `command` in `sh` with
/// `CLAUDECODE=1`, as Claude Code's Bash tool does, and prints what it printed.
fn under_a_host(dir: &std::path::Path, command: &str, args: &[String]) -> String {
    let bin = dir.join("host-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let host = bin.join("claude");
    if !host.exists() {
        std::fs::copy(python_executable(), &host).unwrap();
    }
    let script = "import os, subprocess, sys\n\
                  env = dict(os.environ, CLAUDECODE='1')\n\
                  out = subprocess.run(['sh', '-c', sys.argv[1], 'sh'] + sys.argv[2:], env=env, capture_output=True)\n\
                  print(out.stdout.decode(), out.stderr.decode())\n";
    let out = std::process::Command::new(&host)
        .args(["-c", script, command])
        .args(args)
        .env_remove("CLAUDECODE")
        .output()
        .expect("the stand-in host runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The shell tool replaces itself with an unmarked client (`exec env -u CLAUDECODE`,
/// `exec env -i`, `exec setsid`, or a copy of a client under the host's own name): the
/// client has the shell's pid, the host as its parent and a clean environment. Declaring
/// the dialog or not, its `confirm` is neither put to it as the human's nor taken as the
/// host's word under the default policy: the gate waits for the human, and nothing is
/// recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_the_shell_execs_into_is_not_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let server = http::Server::for_project(&project, &[]);
    let user = User::default();
    let service = server.connect_as(user.clone(), Era::Legacy, None).await;
    let id = awaiting(&service, &project).await;
    // Were a dialog opened, this answer would pass for the human's.
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
    let curl = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v curl"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let copy = dir.path().join("copy-bin");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(&curl, copy.join("claude")).unwrap();
    let mut headers = Vec::new();
    for (n, v) in CALL_HEADERS {
        headers.extend(["-H".to_string(), format!("{n}: {v}")]);
    }
    for declares in [true, false] {
        let mut call = http::tool_call(7, json!({"action": "confirm", "session_id": id}));
        if declares {
            call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
                json!({"elicitation": {"form": {}}});
        }
        call["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] =
            json!({"name": "x", "version": "1"});
        let body = dir.path().join("call.json");
        std::fs::write(&body, call.to_string()).unwrap();
        let mut args = vec!["-s".to_string(), "-X".into(), "POST".into()];
        args.extend(headers.iter().cloned());
        args.extend([
            "--data-binary".to_string(),
            format!("@{}", body.display()),
            server.url.clone(),
        ]);
        for (how, client) in [
            ("exec env -u CLAUDECODE", curl.clone()),
            ("exec env -i", curl.clone()),
            ("exec setsid env -u CLAUDECODE", curl.clone()),
            (
                "exec env -u CLAUDECODE",
                copy.join("claude").display().to_string(),
            ),
        ] {
            let command = format!("{how} {client} \"$@\"");
            let reply = under_a_host(dir.path(), &command, &args);
            assert!(
                reply.contains("human_required") && reply.contains("without being it"),
                "{how} {client} (dialog declared: {declares}): {reply}"
            );
            assert!(user.shown.lock().unwrap().is_empty(), "no dialog: {reply}");
            assert_eq!(
                last_decision(&project, &id)["action"],
                "submit",
                "nothing recorded: {reply}"
            );
        }
    }
    let _ = service.cancel().await;
}
