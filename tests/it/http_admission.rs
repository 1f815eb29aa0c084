//! `serve --http` spends nothing before authentication: the token, `Host` and `Origin` are
//! checked before a body is read, a connection that does not finish its headers in time is
//! closed, and connections left half-open up to the cap do not lock out a client with a
//! call to make.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::support::http::{raw, tool_call, Server, CALL_HEADERS, TOKEN};
use crate::support::Sandbox;
use serde_json::json;

/// Sends `head` and reads what the server answers within 10 s: the text, and whether the
/// server closed the connection (rather than the wait running out).
fn send_head(addr: SocketAddr, head: &str) -> (String, bool, Duration) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let mut bytes = Vec::new();
    let closed = stream.read_to_end(&mut bytes).is_ok();
    (
        String::from_utf8_lossy(&bytes).into_owned(),
        closed,
        started.elapsed(),
    )
}

fn announcing_16_mib(addr: SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: 16777216\r\n\r\n"
    )
}

#[test]
fn a_request_that_will_be_refused_is_refused_before_its_body_is_read() {
    let sb = Sandbox::new();
    let server = Server::for_project(&sb.project, &[("BMAD_MCP_TOKEN", TOKEN)]);
    let bearer = format!("Authorization: Bearer {TOKEN}\r\n");
    for (extra, status) in [
        // No token: 401 at once, though 16 MiB are announced and none is sent.
        (String::new(), "401"),
        (
            "Authorization: Bearer wrong-token-0123456789\r\n".to_string(),
            "401",
        ),
        // The right token from a page, or through a foreign name: 403 at once.
        (format!("{bearer}Origin: http://evil.example\r\n"), "403"),
    ] {
        let (answer, _, took) = send_head(server.addr, &announcing_16_mib(server.addr, &extra));
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{extra:?}: {answer:?} after {took:?}"
        );
        assert!(took < Duration::from_secs(5), "{extra:?}: {took:?}");
    }
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: rebind.example:{}\r\n{bearer}Content-Length: 16777216\r\n\r\n",
        server.addr.port()
    );
    let (answer, _, took) = send_head(server.addr, &head);
    assert!(
        answer.starts_with("HTTP/1.1 403"),
        "{answer:?} after {took:?}"
    );
    // With the token, from the server's own names, a call is answered.
    let answer = raw(
        server.addr,
        "POST",
        &[
            &CALL_HEADERS[..],
            &[("Authorization", &format!("Bearer {TOKEN}"))],
        ]
        .concat(),
        tool_call(1, json!({"action": "list"}))
            .to_string()
            .as_bytes(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[test]
fn a_connection_that_sends_half_its_headers_is_closed_after_the_header_time() {
    let sb = Sandbox::new();
    let server = Server::for_project(&sb.project, &[("BMAD_HTTP_HEADER_SECS", "1")]);
    let head = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Ty", server.addr);
    let (answer, closed, took) = send_head(server.addr, &head);
    assert!(closed, "still open after {took:?}: {answer:?}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn with_slow_connections_open_up_to_the_cap_an_authenticated_call_is_answered() {
    let sb = Sandbox::new();
    let server = Server::for_project(
        &sb.project,
        &[
            ("BMAD_MCP_TOKEN", TOKEN),
            ("BMAD_HTTP_MAX_CONNECTIONS", "8"),
            ("BMAD_HTTP_HEADER_SECS", "60"),
        ],
    );
    let slow: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = TcpStream::connect(server.addr).unwrap();
            s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let answer = raw(
        server.addr,
        "POST",
        &[
            &CALL_HEADERS[..],
            &[("Authorization", &format!("Bearer {TOKEN}"))],
        ]
        .concat(),
        tool_call(1, json!({"action": "list"}))
            .to_string()
            .as_bytes(),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // The call took the place of the oldest slow connection, which the server closed; the
    // newest is still open (its header time is a minute).
    let mut oldest = &slow[0];
    oldest
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 64];
    let read = oldest.read(&mut buf);
    assert!(
        matches!(&read, Ok(0))
            || matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
        "the oldest was closed: {read:?}"
    );
    let mut newest = &slow[7];
    newest
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    assert!(newest.read(&mut buf).is_err(), "the newest is still open");
}

/// A call made with the token, on a thread: its answer, or `None` when none came in 15 s
/// (the connection waits in the listener's backlog, never accepted).
fn call_within_15_s(addr: SocketAddr) -> Option<crate::support::http::Answer> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let answer = raw(
            addr,
            "POST",
            &[
                &CALL_HEADERS[..],
                &[("Authorization", &format!("Bearer {TOKEN}"))],
            ]
            .concat(),
            tool_call(1, json!({"action": "list"}))
                .to_string()
                .as_bytes(),
        );
        let _ = tx.send(answer);
    });
    rx.recv_timeout(Duration::from_secs(15)).ok()
}

/// With a soft file limit below the connection cap, half-sent headers could take every
/// descriptor before the cap was reached: accepting would fail and the real client wait in
/// the backlog. The server raises its soft limit to the hard one, and where the hard one is
/// low too it keeps its connection cap below it, so the oldest half-sent connection is
/// closed for the call.
#[test]
fn with_a_file_limit_below_the_connection_cap_half_sent_headers_do_not_lock_out_a_client() {
    for nofile in ["--nofile=200:4096", "--nofile=200:200"] {
        let sb = Sandbox::new();
        let server = Server::start_under(
            &["prlimit", nofile, "--"],
            &["--root", sb.project.to_str().unwrap()],
            &[("BMAD_MCP_TOKEN", TOKEN), ("BMAD_HTTP_HEADER_SECS", "60")],
        );
        let slow: Vec<TcpStream> = (0..300)
            .map(|_| {
                let mut s = TcpStream::connect(server.addr).unwrap();
                s.write_all(b"POST /mcp HTTP/1.1\r\nHost: x").unwrap();
                s
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        let answer = call_within_15_s(server.addr)
            .unwrap_or_else(|| panic!("{nofile}: the call is never answered"));
        assert_eq!(answer.status, 200, "{nofile}: {}", answer.body);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{nofile}: {:?}",
            started.elapsed()
        );
        drop(slow);
    }
}
