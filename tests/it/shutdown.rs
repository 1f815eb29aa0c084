//! Shutdown: when the host ends the server in the middle of a session (closes stdin, or
//! sends SIGTERM to `serve --http`), calls still being handled are finished and answered,
//! the server exits with status 0, and everything it acknowledged is on disk, whole, for
//! the next server.

use std::fs::File;

use serde_json::{json, Value};

use crate::support::transport::{each_transport, Transport, Wire};
use crate::support::{files_under, read_json, Era, Sandbox};

/// A PRD of about `size` bytes scored 70, with a question: it leaves the session
/// `clarifying`.
fn prd(size: usize) -> String {
    let mut doc = String::from("# PRD\n\n## Executive Summary\nA notes app.\n");
    while doc.len() < size {
        doc.push_str("- a requirement that keeps the document long enough to take a while\n");
    }
    json!({"prd_draft": doc, "quality_score": 70, "questions": ["Which platforms?"]}).to_string()
}

/// A server over `t` in a fresh sandbox, logging at debug level, with one session started.
fn started(t: Transport) -> (Sandbox, Wire, String) {
    let sb = Sandbox::new();
    let mut wire = t.wire(&sb.project, &[("RUST_LOG", "bmad_mcp=debug")]);
    let v = wire.call(
        1,
        json!({"action": "start", "objective": "Notes app", "cwd": sb.project}),
    );
    let sid = v["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string();
    // The start's own line, so that the next ones are the later calls'.
    wire.wait_for("tool call received");
    (sb, wire, sid)
}

/// What the server acknowledged is stored whole: the session `clarifying` after its start
/// and submit, every JSON file parses, no temporary file is left, nothing outside the
/// project's two areas.
fn assert_stored(sb: &Sandbox, sid: &str) -> Value {
    let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(s["current_state"], "clarifying");
    assert_eq!(s["history"].as_array().unwrap().len(), 2);
    for f in files_under(&sb.project) {
        if f.ends_with(".json") {
            read_json(&sb.project.join(&f));
        }
        assert!(!f.contains(".bmad-tmp-"), "a temporary file was left: {f}");
    }
    sb.assert_confined(&[]);
    s
}

/// Ended between calls, the server exits 0 and writes nothing more.
fn ending_mid_session_exits_zero_and_keeps_what_was_acknowledged(t: Transport) {
    let (sb, mut wire, sid) = started(t);
    let v = wire.call(
        2,
        json!({"action": "submit", "session_id": sid, "claude_result": prd(1000)}),
    );
    assert_eq!(
        v["result"]["structuredContent"]["state"], "clarifying",
        "{v}"
    );
    wire.end();
    let (status, rest) = wire.finish();
    assert!(status.success(), "exit status {status:?}");
    assert!(rest.is_empty(), "{rest:?}");
    assert_stored(&sb, &sid);
}

each_transport!(ending_mid_session_exits_zero_and_keeps_what_was_acknowledged
    => ending_mid_session_exits_zero_and_keeps_what_was_acknowledged);

/// Calls in flight when the host ends the server are finished and answered before it exits,
/// and what they answered is what is stored. The test holds the project lock itself, so
/// the calls (a 1 MiB submission and a second start) are provably still waiting when the
/// server learns it is to end; it lets go only then.
fn calls_in_flight_when_the_server_is_ended_are_finished_and_answered(t: Transport) {
    let (sb, mut wire, sid) = started(t);
    // Hold the project's lock: the calls will wait for it.
    let lock = File::options()
        .write(true)
        .open(sb.project.join(".bmad-task/.lock"))
        .unwrap();
    lock.lock().unwrap();
    wire.send_call(
        2,
        json!({"action": "submit", "session_id": sid, "claude_result": prd(1 << 20)}),
    );
    wire.send_call(
        3,
        json!({"action": "start", "objective": "Second task", "cwd": sb.project}),
    );
    // The calls are the server's: over stdio once their lines are written (the server
    // reads what stdin holds before it sees the end), over HTTP once it has received the
    // requests; ended sooner, a request not yet received would rightly find no server.
    if t == Transport::Http {
        wire.wait_for("tool call received");
        wire.wait_for("tool call received");
    }
    wire.end();
    let ending = wire.ending_line();
    wire.wait_for(ending);
    lock.unlock().unwrap();
    drop(lock);

    let (status, replies) = wire.finish();
    assert!(status.success(), "exit status {status:?}");
    let by_id = |id: i64| -> &Value {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("call {id} was not answered: {replies:?}"))
    };
    assert_eq!(
        by_id(2)["result"]["structuredContent"]["state"],
        "clarifying",
        "{:#}",
        by_id(2)
    );
    let second = by_id(3)["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let s = assert_stored(&sb, &sid);
    let r = &s["stages"]["po"]["claude_result_ref"];
    let size = std::fs::metadata(sb.project.join(r["file_path"].as_str().unwrap()))
        .unwrap()
        .len();
    assert!(
        size > 1 << 20,
        "the whole submission was kept: {size} bytes"
    );
    assert!(sb
        .project
        .join(format!(".bmad-task/session-{second}.json"))
        .exists());
    let mapping = read_json(&sb.project.join(".bmad-task/task-mapping.json"));
    assert_eq!(mapping.as_object().unwrap().len(), 2);
}

each_transport!(calls_in_flight_when_the_server_is_ended_are_finished_and_answered
    => calls_in_flight_when_the_server_is_ended_are_finished_and_answered);

/// Over HTTP only, as stdio has no such stream: a legacy client keeps its session's event
/// stream open; SIGTERM still ends the server (the stream is closed once nothing is being
/// answered), with status 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_an_open_legacy_session_exits_zero() {
    let sb = Sandbox::new();
    let mut server = crate::support::http::Server::for_project(&sb.project, &[]);
    let c = server.connect(Era::Legacy, None, &sb.project).await;
    c.ok(json!({"action": "start", "objective": "Open session"}))
        .await;
    server.terminate();
    let status = tokio::task::spawn_blocking(move || server.wait_exit())
        .await
        .unwrap();
    assert!(status.success(), "exit status {status:?}");
    drop(c);
}

/// A human who is shown the dialog and never answers it.
#[derive(Clone, Default)]
struct Hesitant {
    shown: std::sync::Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for Hesitant {
    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.shown.notify_one();
        std::future::pending().await
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("bmad-test-hesitant", "1.0.0"),
        )
    }
}

/// SIGTERM while a call waits on the human's dialog (2025-11-25, the question asked within
/// the call) answers that call at once, rather than leave it unanswered while the server
/// exits (over HTTP after its 30-second grace, over stdio at once): the decision is still
/// pending, nothing changed, and the reply says how to decide later (the terminal command,
/// or calling again). The server exits 0.
async fn sigterm_answers_a_call_waiting_on_the_dialog(t: Transport) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id) = crate::cli::waiting_for_confirmation(&project);
    let before = std::fs::read(project.join(format!(".bmad-task/session-{id}.json"))).unwrap();
    let human = Hesitant::default();
    let shown = human.shown.clone();
    // The server, and how to send it SIGTERM and wait for its exit.
    let (service, mut http, mut child) = match t {
        Transport::Stdio => {
            let mut cmd = crate::support::command(&project);
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null());
            let mut child = cmd.spawn().expect("the server starts");
            let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
            let service = crate::support::handshake(human, Era::Legacy, io).await;
            (service, None, Some(child))
        }
        Transport::Http => {
            let server = crate::support::http::Server::for_project(&project, &[]);
            let service = server.connect_as(human, Era::Legacy, None).await;
            (service, Some(server), None)
        }
    };
    let peer = service.peer().clone();
    let args = json!({"action": "confirm", "task_name": task, "cwd": project});
    let call = tokio::spawn(async move {
        let Value::Object(map) = args else {
            unreachable!()
        };
        peer.call_tool(rmcp::model::CallToolRequestParams::new("bmad-task").with_arguments(map))
            .await
    });
    tokio::time::timeout(std::time::Duration::from_secs(30), shown.notified())
        .await
        .expect("the dialog was shown");
    let signalled = std::time::Instant::now();
    let pid = match (&http, &child) {
        (Some(server), _) => {
            server.terminate();
            None
        }
        (_, Some(child)) => child.id(),
        _ => unreachable!(),
    };
    if let Some(pid) = pid {
        let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    }
    let answer = tokio::time::timeout(std::time::Duration::from_secs(10), call)
        .await
        .expect("the call was answered within 10 s of SIGTERM")
        .unwrap()
        .expect("the call was answered, not dropped");
    assert!(
        signalled.elapsed() < std::time::Duration::from_secs(10),
        "answered before the grace ran out"
    );
    let v = answer.structured_content.expect("structured");
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.contains("The server is stopping") && message.contains("still pending"),
        "{message}"
    );
    assert!(
        message.contains(&format!("bmad-mcp confirm {task}")),
        "the terminal command: {message}"
    );
    let next = v["next_step"].as_str().unwrap();
    assert!(next.contains("call `confirm` again"), "{next}");
    // The server exits 0, and the session is as it was.
    let status = match (http.take(), child.take()) {
        (Some(mut server), _) => tokio::task::spawn_blocking(move || server.wait_exit())
            .await
            .unwrap(),
        (_, Some(mut child)) => {
            tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
                .await
                .expect("the server exits")
                .unwrap()
        }
        _ => unreachable!(),
    };
    assert!(status.success(), "exit status {status:?}");
    let after = std::fs::read(project.join(format!(".bmad-task/session-{id}.json"))).unwrap();
    assert_eq!(before, after, "nothing changed");
    drop(service);
}

each_transport!(async sigterm_answers_a_call_waiting_on_the_dialog
    => sigterm_answers_a_call_waiting_on_the_dialog);

/// stdin closed before any message (`bmad-mcp < /dev/null`, a host that gave up before
/// `initialize`) is the same clean end: exit 0, nothing on stdout, no error on stderr.
#[test]
fn stdin_closed_before_any_message_exits_zero() {
    let sb = Sandbox::new();
    let out = crate::support::bin(&sb.project)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
}

/// The server ends with its host: the process that started it killed while another still
/// holds its stdin open (a host's helper, or a grandchild it left), it exits within a
/// second, though no end of stdin ever comes.
#[test]
fn the_server_ends_within_a_second_of_the_process_that_started_it() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let sb = Sandbox::new();
    // The host: a shell that starts the server on its own stdin and waits. The test keeps
    // the pipe's other end, so stdin stays open after the shell is gone.
    let mut host = Command::new("sh");
    host.arg("-c")
        // A job's stdin would be /dev/null: the shell's own goes to it through fd 3.
        .arg("exec 3<&0; \"$0\" <&3 3<&- & echo $!; wait")
        .arg(crate::support::server_path())
        .current_dir(&sb.project)
        .env("XDG_CONFIG_HOME", crate::support::NO_USER_CONFIG)
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut host = host.spawn().unwrap();
    let mut stdin = host.stdin.take().unwrap();
    let mut out = BufReader::new(host.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let server: i32 = line.trim().parse().unwrap();
    // A session under way: the client initialized.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "{line}");
    let alive = || std::path::Path::new(&format!("/proc/{server}")).exists() && !zombie(server);
    assert!(alive());

    host.kill().unwrap();
    host.wait().unwrap();
    let killed = Instant::now();
    while alive() && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = killed.elapsed();
    assert!(!alive(), "the server outlived its host by more than 5 s");
    assert!(took < Duration::from_millis(1500), "it took {took:?}");
    drop(stdin);
}

/// Whether `pid` is a zombie (ended, not yet reaped by whoever adopted it).
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}
