//! `bmad-mcp dashboard` as a process: started in a project, its one-time address read
//! from its stdout (a new one for each line written to its stdin), the address exchanged
//! for the cookie and the page's token, and plain HTTP/1.1 requests to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Duration;

use serde_json::Value;

pub struct Dash {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub addr: SocketAddr,
    /// The address printed last: `http://127.0.0.1:PORT/dashboard/?k=KEY`.
    pub url: String,
    /// Its one-time key.
    pub key: String,
    /// What the address was exchanged for, once opened: the cookie (`name=value`) and
    /// the page's token, which a change carries in `x-bmad-secret`.
    cookie: String,
    pub token: String,
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
    /// The dashboard started, its address not used yet.
    pub fn start(project: &Path) -> Dash {
        let mut cmd = super::bin(project);
        cmd.args(["dashboard", "--project"]).arg(project);
        Dash::run(cmd)
    }

    /// The dashboard started, what it says on its terminal's stderr written to `log`.
    pub fn start_logging(project: &Path, log: &Path) -> Dash {
        let mut cmd = super::bin(project);
        cmd.args(["dashboard", "--project"]).arg(project);
        Dash::run_to(cmd, std::fs::File::create(log).unwrap().into())
    }

    /// The dashboard as `cmd` starts it (a person's command line through a shell), its
    /// address not used yet.
    pub fn run(cmd: std::process::Command) -> Dash {
        Dash::run_to(cmd, Stdio::null())
    }

    /// [`Dash::run`], its stderr to `stderr`.
    fn run_to(mut cmd: std::process::Command, stderr: Stdio) -> Dash {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = cmd.spawn().expect("the dashboard starts");
        let mut d = Dash {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            url: String::new(),
            key: String::new(),
            cookie: String::new(),
            token: String::new(),
        };
        d.read_address();
        d
    }

    /// The dashboard started and its address opened, as the human's browser does.
    pub fn open(project: &Path) -> Dash {
        let mut d = Dash::start(project);
        let a = d.exchange();
        assert_eq!(a.status, 303, "the address opens: {a:?}");
        d
    }

    fn read_address(&mut self) {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("the dashboard prints its address");
        let url = line.trim().to_string();
        let rest = url.strip_prefix("http://").expect("an http address");
        let (host, key) = rest
            .split_once("/dashboard/?k=")
            .expect("a key in the address");
        self.addr = host.parse().expect("a socket address");
        self.key = key.to_string();
        self.url = url;
    }

    /// A new address, as the human asks for it: Enter in the dashboard's terminal.
    pub fn next_address(&mut self) {
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        self.read_address();
    }

    /// The dashboard's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process still runs.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The path (with the key) of the address printed last.
    pub fn address_path(&self) -> String {
        self.url.strip_prefix(&self.origin()).unwrap().to_string()
    }

    /// Uses the address printed last; when it gives a cookie, keeps it and reads the
    /// page's token with it. The answer to the address is returned.
    pub fn exchange(&mut self) -> Answer {
        let a = request(self.addr, "GET", &self.address_path(), &[], b"");
        if let Some(set) = a.header("set-cookie") {
            self.cookie = set.split(';').next().unwrap().trim().to_string();
            let page = self.get("/dashboard/");
            assert_eq!(page.status, 200, "{page:?}");
            let (_, rest) = page
                .body
                .split_once("<meta name=\"bmad-token\" content=\"")
                .expect("the page's token");
            self.token = rest[..rest.find('"').unwrap()].to_string();
        }
        a
    }

    /// The page's origin: `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The cookie the page's address was exchanged for.
    pub fn cookie(&self) -> String {
        assert!(!self.cookie.is_empty(), "the address was opened");
        self.cookie.clone()
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
                ("x-bmad-secret", &self.token),
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
