//! Starts `bmad-mcp serve --http` on a free loopback port and talks to it: through rmcp's
//! streamable HTTP client (both eras), and as raw HTTP/1.1 for what a client library
//! would never send (no token, a foreign `Host`, a browser `Origin`, an oversize body).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rmcp::service::{RunningService, Service};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::RoleClient;
use serde_json::{json, Value};

use super::stderr::Stderr;
use super::{handshake, isolate, server_path, Client, Era};

/// A token long enough for the server to accept it.
pub const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `serve --http`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub url: String,
    stderr: Stderr,
}

/// The server's command with the given arguments after `serve --http 127.0.0.1:0`,
/// isolated, no token, and `env` set; run by the program `under` names with its arguments
/// (`prlimit …`, which runs the server in its place), when it names one.
pub fn command_under(under: &[&str], args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = match under.split_first() {
        Some((program, rest)) => {
            let mut cmd = Command::new(program);
            cmd.args(rest).arg(server_path());
            cmd
        }
        None => Command::new(server_path()),
    };
    isolate(&mut cmd)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .env_remove("BMAD_MCP_TOKEN")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

impl Server {
    /// Starts the server with these arguments (`--root …`) and environment, and waits for
    /// the line that names the address it listens on.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_under(&[], args, env)
    }

    /// [`Server::start`], run by the program `under` names ([`command_under`]).
    pub fn start_under(under: &[&str], args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = command_under(under, args, env)
            .spawn()
            .expect("the server starts");
        let stderr = Stderr::read(child.stderr.take().unwrap());
        let mut server = Server {
            child,
            addr: "127.0.0.1:1".parse().unwrap(),
            url: String::new(),
            stderr,
        };
        let line = server.wait_for("serving MCP over streamable HTTP at http://");
        let url = line
            .split("at ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .expect("the line names the URL")
            .to_string();
        server.addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .expect("a socket address");
        server.url = url;
        server
    }

    /// Starts the server with `project` as its only root.
    pub fn for_project(project: &Path, env: &[(&str, &str)]) -> Server {
        Server::start(&["--root", project.to_str().unwrap()], env)
    }

    /// Waits (up to a minute) for a line on stderr holding `needle`; returns it.
    pub fn wait_for(&mut self, needle: &str) -> String {
        self.stderr.wait_for(&mut self.child, needle)
    }

    /// Every line the server logged on stderr so far.
    pub fn logged(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    }

    /// Waits (up to a minute) for the process to exit.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit in a minute"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// An rmcp client over streamable HTTP in `era`, with the token when given.
    pub async fn connect(&self, era: Era, token: Option<&str>, project: &Path) -> Client {
        let service = self.connect_as((), era, token).await;
        Client::from_service(service, project)
    }

    /// A client over streamable HTTP in `era` whose requests `handler` answers (a human in
    /// a dialog), with the token when given.
    pub async fn connect_as<H: Service<RoleClient>>(
        &self,
        handler: H,
        era: Era,
        token: Option<&str>,
    ) -> RunningService<RoleClient, H> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        handshake(
            handler,
            era,
            StreamableHttpClientTransport::from_config(config),
        )
        .await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The per-request metadata of a 2026-07-28 request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    })
}

/// A 2026-07-28 `tools/call` of `bmad-task` as raw JSON.
pub fn tool_call(id: i64, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "bmad-task", "arguments": arguments, "_meta": meta()}})
}

/// The headers a 2026-07-28 client sends with `tools/call`.
pub const CALL_HEADERS: [(&str, &str); 5] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "bmad-task"),
];

/// The answer to a raw request: status and body.
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The JSON-RPC message in the body (plain JSON, or the `data:` line of an event).
    pub fn message(&self) -> Value {
        let text = self
            .body
            .lines()
            .find_map(|l| l.strip_prefix("data: ").filter(|d| d.starts_with('{')))
            .unwrap_or(&self.body);
        let message: Value =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body));
        super::person_reads_answer(&message);
        message
    }
}

/// Sends one HTTP/1.1 request to `/mcp` (with `Host` set to the server's address unless
/// `headers` give one) and reads the whole answer (the connection closes after it).
pub fn raw(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let mut head = format!("{method} /mcp HTTP/1.1\r\n");
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
    // The server may answer (413) before it has read all of a large body.
    let _ = stream.write_all(body);
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end: {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let body = &bytes[split + 4..];
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Answer {
        status,
        head,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// The body of a chunked answer, joined.
fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..eol]).unwrap_or("").trim();
        let n = usize::from_str_radix(size, 16).unwrap_or(0);
        let data = &rest[eol + 2..];
        if n == 0 || data.len() < n {
            break;
        }
        out.extend_from_slice(&data[..n]);
        rest = data[n..].strip_prefix(b"\r\n").unwrap_or(&data[n..]);
    }
    out
}
