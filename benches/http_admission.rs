//! `serve --http` under connections that will never authenticate: 150 that send half their
//! headers and stop, and 150 that announce a 16 MiB body without a token and start sending
//! it, then one authenticated call. It prints whether the call was answered, how long it
//! took, and the server's peak resident set (VmHWM, Linux) against the 64 MiB target. It
//! never fails because of a figure.
//!
//!     cargo bench --bench http_admission

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token-0123456789abcdef";
const SLOW: usize = 150;
const OVERSIZED: usize = 150;

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !common::benchmarking("http_admission") {
        return Ok(());
    }
    let project = tempfile::tempdir()?;
    std::fs::create_dir(project.path().join(".git"))?;
    let mut child = Command::new(common::server_binary()?)
        .args(["serve", "--http", "127.0.0.1:0", "--root"])
        .arg(project.path())
        .env("BMAD_MCP_TOKEN", TOKEN)
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        if stderr.read_line(&mut line)? == 0 {
            return Err("the server did not start".into());
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let addr: SocketAddr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .ok_or("no address")?
        .parse()?;
    let started_kib = status_kib(pid, "VmRSS:").unwrap_or(0);

    let mut held = Vec::new();
    for _ in 0..SLOW {
        let mut s = TcpStream::connect(addr)?;
        s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Ty").as_bytes())?;
        held.push(s);
    }
    let chunk = vec![b'x'; 64 * 1024];
    let mut refused = 0;
    for _ in 0..OVERSIZED {
        let mut s = TcpStream::connect(addr)?;
        s.write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 16777216\r\n\r\n"
            )
            .as_bytes(),
        )?;
        // As much body as the socket takes before the server answers.
        s.set_write_timeout(Some(Duration::from_millis(50)))?;
        for _ in 0..16 {
            if s.write_all(&chunk).is_err() {
                break;
            }
        }
        held.push(s);
    }
    for s in held.iter_mut().skip(SLOW) {
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut head = [0u8; 12];
        if s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 401") {
            refused += 1;
        }
    }

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bmad-task","arguments":{"action":"list"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let call = Instant::now();
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: bmad-task\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let took = call.elapsed();
    let status = answer
        .split_whitespace()
        .nth(1)
        .unwrap_or("none")
        .to_string();
    let peak_kib = status_kib(pid, "VmHWM:").unwrap_or(0);

    println!("http_admission: {SLOW} half-sent headers and {OVERSIZED} unauthenticated 16 MiB bodies open");
    println!("  oversized refused with 401 before their body: {refused}/{OVERSIZED}");
    println!(
        "  the authenticated call: HTTP {status} in {} ms",
        took.as_millis()
    );
    println!(
        "  server RSS at start {:.1} MiB, peak (VmHWM) {:.1} MiB (target < 64 MiB: {})",
        started_kib as f64 / 1024.0,
        peak_kib as f64 / 1024.0,
        if peak_kib < 64 * 1024 {
            "met"
        } else {
            "MISSED"
        }
    );
    drop(held);
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}
