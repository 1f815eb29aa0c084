//! The transport as a test parameter. A scenario that must hold over stdio and over
//! streamable HTTP is written once, as a function of a [`Transport`], and
//! [`each_transport!`] makes one test of it per transport, `<name>::stdio` and
//! `<name>::http` (`cargo test --test it ::http` runs every HTTP one).
//!
//! Over stdio every connection is a server process of its own, started in the project, as
//! each assistant window starts one; over HTTP one `serve --http --root <project>` serves
//! every connection, as one server shared by several IDEs.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::thread::JoinHandle;

use rmcp::service::{RunningService, Service};
use rmcp::transport::TokioChildProcess;
use rmcp::RoleClient;
use serde_json::Value;

use super::http::{self, Answer, CALL_HEADERS};
use super::{command, handshake, Client, Era, Raw};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A server process per connection, spoken to over its stdin and stdout.
    Stdio,
    /// One `serve --http` on a free loopback port, the project its only root.
    Http,
}

/// Tests of a scenario written once, one per transport: `each_transport!(async name =>
/// scenario)` makes the tests `name::stdio` and `name::http`, each awaiting
/// `scenario(Transport::…)` on a multi-threaded runtime; without `async`, plain tests
/// calling it. The scenario is any expression callable with a [`Transport`] (a function,
/// or a closure passing more arguments), in the scope of the module that uses the macro.
macro_rules! each_transport {
    ($(#[$attr:meta])* async $name:ident => $scenario:expr) => {
        $(#[$attr])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn stdio() {
                ($scenario)($crate::support::transport::Transport::Stdio).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn http() {
                ($scenario)($crate::support::transport::Transport::Http).await
            }
        }
    };
    ($(#[$attr:meta])* $name:ident => $scenario:expr) => {
        $(#[$attr])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn stdio() {
                ($scenario)($crate::support::transport::Transport::Stdio)
            }

            #[test]
            fn http() {
                ($scenario)($crate::support::transport::Transport::Http)
            }
        }
    };
}
pub(crate) use each_transport;

impl Transport {
    /// Where a test's clients connect to serve `project`: over HTTP the server is started
    /// now, and stops when the host is dropped.
    pub fn host(self, project: &Path) -> Host {
        Host {
            project: project.to_path_buf(),
            server: match self {
                Transport::Stdio => None,
                Transport::Http => Some(http::Server::for_project(project, &[])),
            },
        }
    }

    /// A server for `project` spoken to with raw JSON-RPC messages, with `env` set: over
    /// stdio, lines after a legacy `initialize`; over HTTP, one 2026-07-28 POST per call.
    pub fn wire(self, project: &Path, env: &[(&str, &str)]) -> Wire {
        match self {
            Transport::Stdio => Wire::Stdio(Raw::start_with_env(project, env)),
            Transport::Http => Wire::Http {
                server: http::Server::for_project(project, env),
                in_flight: Vec::new(),
            },
        }
    }
}

/// Where clients of one project connect: a new process for each (stdio), or one server.
pub struct Host {
    project: PathBuf,
    server: Option<http::Server>,
}

impl Host {
    /// A client in `era` (rmcp's, as a host has it).
    pub async fn connect(&self, era: Era) -> Client {
        Client::from_service(self.connect_as((), era).await, &self.project)
    }

    /// A client in `era` whose requests `handler` answers (a human in a dialog).
    pub async fn connect_as<H: Service<RoleClient>>(
        &self,
        handler: H,
        era: Era,
    ) -> RunningService<RoleClient, H> {
        match &self.server {
            Some(server) => server.connect_as(handler, era, None).await,
            None => {
                let (transport, _stderr) = TokioChildProcess::builder(command(&self.project))
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("the server starts");
                handshake(handler, era, transport).await
            }
        }
    }
}

/// A server spoken to with raw JSON-RPC messages over either transport, for what a host
/// does around the calls: ending the server (closing stdin, or SIGTERM) while they run.
pub enum Wire {
    Stdio(Raw),
    Http {
        server: http::Server,
        /// The calls sent and not answered yet, each waited for on a thread of its own.
        in_flight: Vec<JoinHandle<Answer>>,
    },
}

impl Wire {
    /// A `tools/call` of `bmad-task`; the JSON-RPC answer.
    pub fn call(&mut self, id: i64, arguments: Value) -> Value {
        match self {
            Wire::Stdio(raw) => raw.call(id, arguments),
            Wire::Http { server, .. } => post_call(server.addr, id, arguments).message(),
        }
    }

    /// Sends a `tools/call` of `bmad-task` without waiting for its answer ([`Wire::finish`]
    /// returns it).
    pub fn send_call(&mut self, id: i64, arguments: Value) {
        match self {
            Wire::Stdio(raw) => raw.send_call(id, arguments),
            Wire::Http { server, in_flight } => {
                let addr = server.addr;
                in_flight.push(std::thread::spawn(move || post_call(addr, id, arguments)));
            }
        }
    }

    /// Waits (up to a minute) for a line on the server's stderr holding `needle`.
    pub fn wait_for(&mut self, needle: &str) -> String {
        match self {
            Wire::Stdio(raw) => raw.wait_for(needle),
            Wire::Http { server, .. } => server.wait_for(needle),
        }
    }

    /// Ends the server as its host does: closes stdin, or sends SIGTERM.
    pub fn end(&mut self) {
        match self {
            Wire::Stdio(raw) => raw.close_stdin(),
            Wire::Http { server, .. } => server.terminate(),
        }
    }

    /// What the server logs (at `debug`) once it knows it is to end.
    pub fn ending_line(&self) -> &'static str {
        match self {
            Wire::Stdio(_) => "stdin closed",
            Wire::Http { .. } => "stopping: finishing the requests being answered",
        }
    }

    /// Waits for the server to exit; returns its status and the answers it gave that were
    /// not read yet (the calls in flight).
    pub fn finish(self) -> (ExitStatus, Vec<Value>) {
        match self {
            Wire::Stdio(raw) => raw.wait(),
            Wire::Http {
                mut server,
                in_flight,
            } => {
                let answers = in_flight
                    .into_iter()
                    .map(|call| {
                        let answer = call.join().expect("the call's thread");
                        assert_eq!(answer.status, 200, "{}", answer.body);
                        answer.message()
                    })
                    .collect();
                (server.wait_exit(), answers)
            }
        }
    }
}

/// A 2026-07-28 `tools/call` POSTed on a connection of its own; the whole answer.
fn post_call(addr: std::net::SocketAddr, id: i64, arguments: Value) -> Answer {
    let body = http::tool_call(id, arguments).to_string();
    let answer = http::raw(addr, "POST", &CALL_HEADERS, body.as_bytes());
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer
}
