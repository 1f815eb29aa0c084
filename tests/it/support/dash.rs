//! `bmad-mcp dashboard` as a process: started in a project, its address (with the secret)
//! read from its first line of stdout, and plain HTTP/1.1 requests to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

pub struct Dash {
    child: Child,
    pub addr: SocketAddr,
    /// The address printed: `http://127.0.0.1:PORT/dashboard/?k=SECRET`.
    pub url: String,
    pub secret: String,
}

/// One answer: status, head (lower-cased names kept as sent), body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

impl Dash {
    pub fn start(project: &Path) -> Dash {
        let mut cmd = super::bin(project);
        cmd.args(["dashboard", "--project"])
            .arg(project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("the dashboard starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the dashboard prints its address");
        let url = line.trim().to_string();
        let rest = url.strip_prefix("http://").expect("an http address");
        let (host, query) = rest
            .split_once("/dashboard/?k=")
            .expect("a secret in the address");
        Dash {
            child,
            addr: host.parse().expect("a socket address"),
            secret: query.to_string(),
            url,
        }
    }

    /// The page's origin: `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The cookie the page's address sets.
    pub fn cookie(&self) -> String {
        format!("bmad_dashboard_{}={}", self.addr.port(), self.secret)
    }

    /// A request with the cookie (as the page's own reads are).
    pub fn get(&self, path: &str) -> Answer {
        request(self.addr, "GET", path, &[("Cookie", &self.cookie())], b"")
    }

    /// A change as the page sends it: cookie, secret header, own Origin, JSON.
    pub fn post(&self, path: &str, body: &Value) -> Answer {
        let origin = self.origin();
        request(
            self.addr,
            "POST",
            path,
            &[
                ("Cookie", &self.cookie()),
                ("x-bmad-secret", &self.secret),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        )
    }

    /// Stops the process (SIGTERM) and waits for it.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        for _ in 0..100 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        self.child.wait().unwrap()
    }
}

impl Drop for Dash {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request (`Host` set to `addr` unless given), the whole answer read.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    let bytes = read_answer(&mut stream);
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end: {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let raw = &bytes[split + 4..];
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(raw)
    } else {
        raw.to_vec()
    };
    Answer {
        status,
        head,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The bytes of one answer: up to its `Content-Length` when it has one (a server may keep
/// the connection open after it), else up to the end of a chunked body, else to EOF.
fn read_answer(stream: &mut TcpStream) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(split) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..split]).to_ascii_lowercase();
            let length = head.lines().find_map(|l| {
                l.strip_prefix("content-length:")
                    .and_then(|v| v.trim().parse::<usize>().ok())
            });
            let body = bytes.len() - split - 4;
            if length.is_some_and(|n| body >= n)
                || (head.contains("transfer-encoding: chunked") && bytes.ends_with(b"0\r\n\r\n"))
            {
                return bytes;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return bytes,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
    }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let n = std::str::from_utf8(&rest[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        let data = &rest[eol + 2..];
        if n == 0 || data.len() < n {
            break;
        }
        out.extend_from_slice(&data[..n]);
        rest = &data[n..];
        rest = rest.strip_prefix(b"\r\n").unwrap_or(rest);
    }
    out
}
