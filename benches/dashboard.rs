//! The dashboard: the bytes of its embedded assets, and the latency from a file written
//! under `.bmad-task/` to the page's event (`event: change` on `/dashboard/api/events`),
//! which the page answers by reading the task again. Twenty writes, each after the last
//! event; the median, p90 and max against the 500 ms target. It never fails because of a
//! figure.
//!
//!     cargo bench --bench dashboard

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WRITES: usize = 20;
const TARGET_MS: f64 = 500.0;
const ASSETS_TARGET: usize = 64 * 1024;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if !common::benchmarking("dashboard") {
        return Ok(());
    }
    let assets = bmad_mcp::dashboard::routes::asset_bytes();
    println!(
        "embedded assets (page, script, style): {assets} bytes (target {ASSETS_TARGET}) {}",
        if assets <= ASSETS_TARGET {
            "pass"
        } else {
            "MISS"
        }
    );
    let project = tempfile::tempdir()?;
    std::fs::create_dir(project.path().join(".git"))?;
    std::fs::create_dir(project.path().join(".bmad-task"))?;
    let mut child = Command::new(common::server_binary()?)
        .args(["dashboard", "--project"])
        .arg(project.path())
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
    let url = line.trim();
    let rest = url.strip_prefix("http://").ok_or("no address")?;
    let (host, secret) = rest.split_once("/dashboard/?k=").ok_or("no secret")?;
    let addr: SocketAddr = host.parse()?;
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET /dashboard/api/events HTTP/1.1\r\nHost: {addr}\r\nCookie: bmad_dashboard_{}={secret}\r\nAccept: text/event-stream\r\n\r\n",
        addr.port()
    )?;
    let mut lines = BufReader::new(stream.try_clone()?).lines();
    let mut next_event = |name: &str| -> Result<(), Box<dyn std::error::Error>> {
        loop {
            let l = lines.next().ok_or("the stream ended")??;
            if l == format!("event: {name}") {
                return Ok(());
            }
        }
    };
    next_event("ready")?;
    let mut ms = Vec::new();
    for i in 0..WRITES {
        std::thread::sleep(Duration::from_millis(150));
        let started = Instant::now();
        std::fs::write(
            project.path().join(format!(".bmad-task/bench-{i}.txt")),
            "x",
        )?;
        next_event("change")?;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    let _ = child.kill();
    let _ = child.wait();
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let (median, p90, max) = (at(0.5), at(0.9), at(1.0));
    println!(
        "file change to page event, {WRITES} writes: median {median:.0} ms, p90 {p90:.0} ms, max {max:.0} ms (target {TARGET_MS:.0} ms) {}",
        if p90 <= TARGET_MS { "pass" } else { "MISS" }
    );
    Ok(())
}
