//! bmad-mcp: an MCP server that runs the BMAD agile workflow as an enforced state machine
//! with durable, inspectable sessions. The behaviour is specified in `docs/spec.md` (the
//! code's `docs/spec.md §N` comments point into it).
//!
//! The modules, lowest first: each may use only those listed before it (ARCHITECTURE.md
//! numbers the layers and has the rule, one request's path and where each rule lives).
//!
//! * [`code`]: the error codes and how messages quote untrusted text (a leaf).
//! * [`hosts`]: every host in one table: its client, its shell tool's marks, its
//!   configuration files (a leaf).
//! * [`fault`]: what the server is doing now, so that a panic says what failed (a
//!   leaf).
//! * [`exit`]: every exit status of the binary, in one type (a leaf).
//! * [`process_origin`]: whether an assistant is behind a process, read from `/proc`.
//! * [`workflow`]: the pure core (stages, sessions, transitions, reading submissions);
//!   no I/O.
//! * [`error`]: the one error type a call reports.
//! * [`files`]: the confined-file layer (the project, confined reads and atomic writes,
//!   the lock, the HTTP server's roots).
//! * [`settings`]: the settings of the process (the global flags and the environment),
//!   read once at start and handed down as plain values.
//! * [`git`]: the project's git repository, read through the `git` binary (who the
//!   human is, the branch, the commit, what changed since one); `None` without it.
//! * [`lessons`]: the team's lessons in `.bmad/lessons/` (recorded from decisions,
//!   recalled into role prompts).
//! * [`bmad_method`]: an installed BMAD method (v6) read as facts: what is installed and
//!   where, its agents' personas with the team's and the person's customizations, its
//!   settings.
//! * [`prompts`]: the role prompts (built-in, the user's, the project's) and their
//!   rendering.
//! * [`store`]: sessions on disk (finding, reading, starting, listing, changing one
//!   under the lock).
//! * [`policy`]: the project's policy for the gates (the policy file and its approval, the checks, the
//!   admission of a change).
//! * [`act`]: one change to a session, top to bottom (find, git, lock and read, the
//!   policy, the checks, the machine, the prompt, write), and the one path of a human's
//!   decision.
//! * [`server`]: the rmcp adapter (the tool, its arguments and replies, the human's
//!   dialog, prompts and resources).
//! * [`jsonrpc`]: the JSON-RPC messages a transport vets before rmcp, stdio and HTTP alike.
//! * [`stdio`] and [`http`]: the transports in front of the adapter.
//! * [`dashboard`]: the human's page in their browser (`bmad-mcp dashboard`, and beside
//!   `serve --http`): every task, the documents and their rounds, the audit, decisions.
//! * [`terminal`]: everything the human types (`bmad-mcp confirm|approve|…`, `config`,
//!   `prompts`, `hook`).
//! * [`setup`]: `bmad-mcp setup <host>`, the server's entry in a host's configuration.
//!
//! [`layers`] holds that order as data, with the tests that keep every `use` within it, the
//! files of a folder free of import cycles and every function within 80 lines.

// This documentation is for the crate's own developers, built with its private items
// (`.ci/run` denies a broken link there): a link from a public item to a private one is
// how one module points at another's code, not a leak.
#![allow(rustdoc::private_intra_doc_links)]

pub mod act;
pub mod bmad_method;
pub mod code;
pub mod dashboard;
pub mod error;
pub mod exit;
pub mod fault;
pub mod files;
pub mod git;
pub mod hosts;
pub mod http;
pub mod jsonrpc;
pub mod layers;
pub mod lessons;
pub mod night;
pub mod policy;
pub mod process_origin;
pub mod prompts;
pub mod server;
pub mod settings;
pub mod setup;
pub mod stdio;
pub mod store;
pub mod terminal;
pub mod workflow;

pub use error::Error;
pub use server::BmadServer;
