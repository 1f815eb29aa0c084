//! `serve --http`: a whole call over streamable HTTP in both protocol eras through rmcp's
//! client, the roots that confine projects, and the lock-down (token, `Host`, `Origin`,
//! body size, refusals to start), checked with raw requests.

use crate::support;

use crate::support::http::{raw, tool_call, Server, CALL_HEADERS, TOKEN};
use crate::support::{passing_prd, read_json, Era, Sandbox};
use serde_json::json;

fn root_arg(path: &std::path::Path) -> String {
    path.to_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_step_runs_over_http_in_both_eras_with_one_root_and_no_cwd() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let server = Server::start(&["--root", &root], &[]);
    for era in [Era::Legacy, Era::Modern] {
        let c = server.connect(era, None, &sb.project).await;
        let tools = c.list_tools().await;
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "bmad-task");
        // No `cwd`: the only root is the project.
        let v = c
            .ok(json!({"action": "start", "objective": format!("Notes over HTTP {era:?}")}))
            .await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let v = c
            .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
            .await;
        assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
        let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
        assert_eq!(s["current_state"], "awaiting_confirmation");
        let v = c.ok(json!({"action": "status", "session_id": sid})).await;
        assert_eq!(v["session"]["current_stage"], "po");
        c.close().await;
    }
    sb.assert_confined(&[]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cwd_outside_every_root_is_forbidden_and_several_roots_need_a_cwd() {
    let sb = Sandbox::new();
    let second = sb.dir.path().join("second");
    std::fs::create_dir(&second).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&sb.outside, sb.project.join("escape")).unwrap();
    let (a, b) = (root_arg(&sb.project), root_arg(&second));
    let server = Server::start(&["--root", &a, "--root", &b], &[]);
    let c = server.connect(Era::Modern, None, &sb.project).await;
    c.ok(json!({"action": "start", "objective": "In the first root", "cwd": a}))
        .await;
    c.ok(json!({"action": "start", "objective": "In the second root", "cwd": b}))
        .await;
    let forbidden = [
        root_arg(&sb.outside),
        format!("{a}/../outside"),
        format!("{a}/escape"),
        "/".to_string(),
        "/no/such/dir".to_string(),
    ];
    for cwd in &forbidden {
        let v = c
            .refused(
                json!({"action": "start", "objective": "Elsewhere", "cwd": cwd}),
                "forbidden_project",
            )
            .await;
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(&a) && message.contains(&b), "{message}");
        c.refused(json!({"action": "list", "cwd": cwd}), "forbidden_project")
            .await;
    }
    let v = c
        .refused(
            json!({"action": "start", "objective": "Where?"}),
            "missing_field",
        )
        .await;
    assert!(v["error"]["message"].as_str().unwrap().contains("cwd"));
    c.close().await;
    assert!(
        support::files_under(&sb.outside).is_empty(),
        "nothing written outside the roots"
    );
    assert_eq!(
        std::fs::read_dir(second.join(".bmad-task"))
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("session-"))
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_request_needs_it() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let server = Server::start(&["--root", &root], &[("BMAD_MCP_TOKEN", TOKEN)]);
    let body = tool_call(1, json!({"action": "list"})).to_string();
    let bearer = format!("Bearer {TOKEN}");
    let wrong = format!("Bearer {TOKEN}x");
    for auth in [
        None,
        Some("Bearer"),
        Some(wrong.as_str()),
        Some("Basic dXNlcjpwYXNz"),
    ] {
        let mut headers = CALL_HEADERS.to_vec();
        headers.extend(auth.map(|a| ("Authorization", a)));
        let answer = raw(server.addr, "POST", &headers, body.as_bytes());
        assert_eq!(answer.status, 401, "{auth:?}: {}", answer.body);
        assert!(
            answer
                .head
                .to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{}",
            answer.head
        );
    }
    // The GET stream and session deletion are guarded too.
    for method in ["GET", "DELETE"] {
        assert_eq!(raw(server.addr, method, &[], b"").status, 401, "{method}");
    }
    let mut headers = CALL_HEADERS.to_vec();
    headers.push(("Authorization", &bearer));
    let answer = raw(server.addr, "POST", &headers, body.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.message()["result"]["structuredContent"]["total"], 0);

    // rmcp's client with the token, both eras.
    for era in [Era::Legacy, Era::Modern] {
        let c = server.connect(era, Some(TOKEN), &sb.project).await;
        c.ok(json!({"action": "list"})).await;
        c.close().await;
    }
}

#[test]
fn browser_origins_and_foreign_hosts_are_refused() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let server = Server::start(
        &["--root", &root, "--allow-origin", "http://localhost:3000"],
        &[],
    );
    let body = tool_call(1, json!({"action": "list"})).to_string();
    let send = |extra: &[(&str, &str)]| {
        let mut headers = CALL_HEADERS.to_vec();
        headers.extend_from_slice(extra);
        raw(server.addr, "POST", &headers, body.as_bytes())
    };
    let localhost = format!("localhost:{}", server.addr.port());
    let own = format!("http://{}", server.addr);
    for (extra, want) in [
        (vec![], 200),
        (vec![("Host", localhost.as_str())], 200),
        (vec![("Origin", "http://localhost:3000")], 200),
        // The server's own origin: no page has it, since the server serves none.
        (vec![("Origin", own.as_str())], 200),
        (vec![("Origin", "http://evil.example")], 403),
        (vec![("Origin", "http://localhost:3001")], 403),
        (vec![("Origin", "null")], 403),
        (vec![("Host", "evil.example")], 403),
        (vec![("Host", "evil.example:80")], 403),
        // A rebinding page reaches the port through a name that resolves to loopback.
        (vec![("Host", "rebind.example:8765")], 403),
    ] {
        let answer = send(&extra);
        assert_eq!(answer.status, want, "{extra:?}: {}", answer.body);
    }
    drop(server);
    // Without --allow-origin, no other origin is accepted.
    let server = Server::start(&["--root", &root], &[]);
    let mut headers = CALL_HEADERS.to_vec();
    headers.push(("Origin", "http://localhost:3000"));
    let answer = raw(server.addr, "POST", &headers, body.as_bytes());
    assert_eq!(answer.status, 403, "{}", answer.body);
}

#[test]
fn a_body_over_the_message_limit_is_refused_with_413_and_changes_nothing() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let server = Server::start(&["--root", &root], &[("BMAD_MAX_LINE_BYTES", "4096")]);
    let big = tool_call(1, json!({"action": "start", "objective": "x".repeat(5000)})).to_string();
    let answer = raw(server.addr, "POST", &CALL_HEADERS, big.as_bytes());
    assert_eq!(answer.status, 413, "{}", answer.body);
    let small = tool_call(2, json!({"action": "start", "objective": "Small"})).to_string();
    let answer = raw(server.addr, "POST", &CALL_HEADERS, small.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.body);
    let sessions = support::files_under(&sb.project.join(".bmad-task"))
        .into_iter()
        .filter(|f| f.starts_with("session-"))
        .count();
    assert_eq!(sessions, 1, "only the small start landed");
}

#[test]
fn a_request_that_does_not_arrive_in_time_gets_408() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let server = Server::start(&["--root", &root], &[("BMAD_HTTP_REQUEST_SECS", "1")]);
    // The body announced is never sent: the server stops waiting after a second.
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{",
        server.addr
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

#[test]
fn unsafe_or_unusable_setups_refuse_to_start_with_exit_2() {
    let sb = Sandbox::new();
    let root = root_arg(&sb.project);
    let missing = root_arg(&sb.dir.path().join("missing"));
    for (args, env, says) in [
        (
            vec!["0.0.0.0:0", "--root", &root],
            vec![],
            "without a token",
        ),
        (
            vec!["0.0.0.0:0", "--root", &root, "--token", "short"],
            vec![],
            "at least 16",
        ),
        (vec!["127.0.0.1:0", "--root", &missing], vec![], "--root"),
        (
            vec!["127.0.0.1:0", "--root", "/"],
            vec![],
            "file system's root",
        ),
        (vec!["nowhere:x", "--root", &root], vec![], "not an address"),
        (
            vec![
                "127.0.0.1:0",
                "--root",
                &root,
                "--allow-origin",
                "localhost",
            ],
            vec![],
            "scheme",
        ),
    ] {
        let out = std::process::Command::new(support::server_path())
            .arg("serve")
            .arg("--http")
            .args(&args)
            .env_remove("BMAD_MCP_TOKEN")
            .envs(env.iter().map(|(k, v): &(&str, &str)| (*k, *v)))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // With a token from the environment, a non-loopback address is served.
    let mut server = std::process::Command::new(support::server_path())
        .args(["serve", "--http", "0.0.0.0:0", "--root", &root])
        .env("BMAD_MCP_TOKEN", TOKEN)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(line.contains("bearer token required"), "{line}");
}

/// `--root` naming the folder that holds the user's projects. A call without `cwd` cannot
/// tell which one it is for: refused, naming `cwd`, with nothing written into that folder;
/// with `cwd` it works in the project. The schema says when `cwd` is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_that_holds_projects_needs_a_cwd_and_gets_no_state_of_its_own() {
    let sb = Sandbox::new();
    let all = sb.dir.path().join("src");
    let app = all.join("app");
    std::fs::create_dir_all(app.join(".git")).unwrap();
    let server = Server::start(&["--root", &root_arg(&all)], &[]);
    for era in [Era::Legacy, Era::Modern] {
        let c = server.connect(era, None, &app).await;
        let tools = c.list_tools().await;
        let cwd = tools[0].input_schema["properties"]["cwd"]["description"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(cwd.contains("needed over HTTP"), "{cwd}");
        for args in [
            json!({"action": "start", "objective": "Notes for the app"}),
            json!({"action": "list"}),
        ] {
            let v = c.refused(args, "missing_field").await;
            let message = v["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("`cwd`")
                    && message.contains("app")
                    && message.contains("holds projects"),
                "{message}"
            );
        }
        let top: Vec<_> = std::fs::read_dir(&all)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(top, ["app"], "nothing written in the folder of projects");
        let v = c
            .ok(json!({"action": "start", "objective": format!("Notes {era:?}"), "cwd": root_arg(&app)}))
            .await;
        let sid = v["session_id"].as_str().unwrap();
        assert!(app.join(format!(".bmad-task/session-{sid}.json")).is_file());
        c.close().await;
    }
    assert!(!all.join(".bmad-task").exists() && !all.join(".claude").exists());
}

/// A client that works in `roots` and lists them when the server asks (MCP roots).
#[derive(Clone)]
struct Rooted(Vec<String>);

impl rmcp::ClientHandler for Rooted {
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        let roots = self.0.iter().map(rmcp::model::Root::new).collect();
        Ok(rmcp::model::ListRootsResult::new(roots))
    }

    #[allow(deprecated)]
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_roots()
                .build(),
            rmcp::model::Implementation::new("bmad-test-rooted", "1.0.0"),
        )
    }
}

/// The other way to say which project a call is for: over HTTP, a call without `cwd` from a
/// client that lists its MCP roots (2025 era) works in the first of them that is a project
/// inside `--root`; a client whose roots lie elsewhere is refused as one without roots,
/// naming both ways, and nothing is written.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_without_cwd_works_in_the_clients_root() {
    let sb = Sandbox::new();
    let all = sb.dir.path().join("src");
    let (app, other) = (all.join("app"), all.join("other"));
    for p in [&app, &other] {
        std::fs::create_dir_all(p.join(".git")).unwrap();
    }
    let server = Server::start(&["--root", &root_arg(&all)], &[]);
    let url = |p: &std::path::Path| format!("file://{}", root_arg(p));
    let call = |args: serde_json::Value| {
        let serde_json::Value::Object(map) = args else {
            unreachable!()
        };
        rmcp::model::CallToolRequestParams::new("bmad-task").with_arguments(map)
    };

    // Roots outside --root come first: the first root that is a project of the server's.
    let outside = sb.dir.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let c = server
        .connect_as(Rooted(vec![url(&outside), url(&app)]), Era::Legacy, None)
        .await;
    let r = c
        .call_tool(call(
            json!({"action": "start", "objective": "Notes for the app"}),
        ))
        .await
        .unwrap();
    let v = r.structured_content.expect("structured");
    crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
    assert!(v["error"].is_null(), "{v}");
    let sid = v["session_id"].as_str().unwrap();
    assert!(app.join(format!(".bmad-task/session-{sid}.json")).is_file());
    assert!(!other.join(".bmad-task").exists() && !all.join(".bmad-task").exists());
    c.cancel().await.unwrap();

    // Roots that are no project of the server's: refused, naming `cwd` and the roots.
    let c = server
        .connect_as(Rooted(vec![url(&outside)]), Era::Legacy, None)
        .await;
    let r = c
        .call_tool(call(
            json!({"action": "start", "objective": "Notes elsewhere"}),
        ))
        .await
        .unwrap();
    let v = r.structured_content.expect("structured");
    crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
    assert_eq!(v["error"]["code"], "missing_field", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`cwd`") && message.contains("MCP roots"),
        "{message}"
    );
    assert!(!outside.join(".bmad-task").exists() && !all.join(".bmad-task").exists());
    c.cancel().await.unwrap();
}

/// Over HTTP in the 2026-07-28 era, an error quoting a 1 MB value the client sent comes
/// back bounded; a request with an id past what an MCP id holds, or a `jsonrpc` other than
/// "2.0", is answered -32600 Invalid Request with its own id (rmcp alone answers 415 in
/// plain text); ids at the edges of the integer range are served.
#[test]
fn errors_stay_bounded_and_every_request_gets_its_own_id() {
    let sb = Sandbox::new();
    let server = Server::for_project(&sb.project, &[]);
    let big = "y".repeat(1_000_000);
    let headers = |method: &'static str| {
        let mut h = CALL_HEADERS.to_vec();
        h[3] = ("Mcp-Method", method);
        h.truncate(4);
        h
    };
    let with_meta = |mut m: serde_json::Value| {
        m["params"]["_meta"] = support::http::meta();
        m
    };
    let cases = [
        (
            with_meta(json!({"jsonrpc": "2.0", "id": 1, "method": big, "params": {}})),
            headers("x"),
        ),
        (
            {
                let mut m = with_meta(
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
                );
                m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(big);
                m
            },
            headers("tools/list"),
        ),
        (
            with_meta(
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": big, "arguments": {}}}),
            ),
            CALL_HEADERS.to_vec(),
        ),
    ];
    for (body, headers) in &cases {
        let a = raw(server.addr, "POST", headers, body.to_string().as_bytes());
        assert!(
            a.body.len() < 4096,
            "{} bytes: {}",
            a.body.len(),
            &a.body[..300]
        );
        let m = a.message();
        assert_eq!(m["id"], body["id"], "{m}");
        assert!(m["error"]["message"].as_str().unwrap().contains('…'), "{m}");
    }
    let ids = [
        (
            r#"{"jsonrpc": "2.0", "id": 18446744073709551615, "method": "tools/list", "params": {"_meta": META}}"#,
            Some(-32600),
        ),
        (
            r#"{"jsonrpc": "1.0", "id": 7, "method": "tools/list", "params": {"_meta": META}}"#,
            Some(-32600),
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 9223372036854775807, "method": "tools/list", "params": {"_meta": META}}"#,
            None,
        ),
        (
            r#"{"jsonrpc": "2.0", "id": -9223372036854775808, "method": "tools/list", "params": {"_meta": META}}"#,
            None,
        ),
    ];
    for (body, code) in ids {
        let body = body.replace("META", &support::http::meta().to_string());
        let a = raw(server.addr, "POST", &headers("tools/list"), body.as_bytes());
        let m = a.message();
        let sent: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(m["id"], sent["id"], "{} {}", a.status, a.body);
        match code {
            Some(code) => {
                assert_eq!(a.status, 400, "{}", a.body);
                assert_eq!(m["error"]["code"], code, "{m}");
            }
            None => assert!(m["result"]["tools"].is_array(), "{m}"),
        }
    }
}
