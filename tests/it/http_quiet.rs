//! Quiet when all is well: what a health check does (`claude mcp list` opens the 2026-07-28
//! `subscriptions/listen` stream, sees it acknowledged and closes it) is normal use, and
//! leaves no ERROR line on the server's stderr.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use crate::support::http::{meta, Server};
use crate::support::Sandbox;

/// Opens `subscriptions/listen` as a 2026-07-28 client, reads until it is acknowledged and
/// closes the connection.
fn listen_then_close(server: &Server) {
    let body = json!({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
        "params": {"notifications": {"resourcesListChanged": true}, "_meta": meta()}})
    .to_string();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr,
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("notifications/subscriptions/acknowledged") {
        let n = stream
            .read(&mut buf)
            .expect("the acknowledgement within 30 s");
        assert!(n > 0, "closed before the acknowledgement: {seen:?}");
        seen.extend_from_slice(&buf[..n]);
    }
    drop(stream);
}

#[test]
fn a_health_check_that_connects_and_closes_logs_no_error() {
    let sb = Sandbox::new();
    // At info level, to see the subscription end; the ERROR line showed at every level.
    let mut server = Server::for_project(&sb.project, &[("RUST_LOG", "info")]);
    for _ in 0..10 {
        listen_then_close(&server);
        server.wait_for("serve finished quit_reason=Cancelled");
    }
    let logged = server.logged();
    let errors: Vec<_> = logged.iter().filter(|l| l.contains(" ERROR ")).collect();
    assert!(
        errors.is_empty(),
        "ERROR lines in normal use:\n{}",
        logged.join("\n")
    );
}
