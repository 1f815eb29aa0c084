//! bmad-mcp: an MCP server that runs the BMAD agile workflow as an enforced state machine
//! with durable, inspectable sessions.
//!
//! * [`config`]: the human's project policy, `.bmad/config.toml`, and its approval.
//! * [`checks`]: running the project's checks (process groups, timeouts, bounded output).
//! * [`workflow`]: the pure core (stages, sessions, transitions, submission reading).
//! * [`store`]: projects, atomic files, the lock, sessions on disk.
//! * [`prompts`]: the embedded role prompts and their rendering.
//! * [`server`]: the rmcp adapter and the tool's input and output types.
//! * [`stdio`]: the stdio transport in front of rmcp (malformed lines, the line limit,
//!   a broken stdout).
//! * [`http`]: `serve --http`, the streamable HTTP transport, locked down (loopback,
//!   bearer token, Host and Origin checks, roots).

pub mod checks;
pub mod cli;
pub mod config;
pub mod error;
pub mod hook;
pub mod http;
pub mod prompts;
pub mod server;
pub mod stdio;
pub mod store;
pub mod workflow;

pub use error::Error;
pub use server::BmadServer;
