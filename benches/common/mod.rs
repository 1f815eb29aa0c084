//! What the benches share: the server binary they measure, and whether to measure.

use std::path::PathBuf;

/// The server binary: `BMAD_MCP_BIN`, or the one `cargo bench` built beside the bench.
/// That one is not quite the installed binary: the dev-dependencies' features (rmcp's
/// client, more of tokio and regex) are unified into it, which makes its code larger. For
/// the server's memory, measure `cargo build --release`'s binary through `BMAD_MCP_BIN` (a
/// copy: `cargo bench` replaces `target/release/bmad-mcp` with its own).
pub fn server_binary() -> Result<PathBuf, Box<dyn std::error::Error>> {
    match std::env::var_os("BMAD_MCP_BIN") {
        // Resolved here: the server starts in the project directory.
        Some(bin) => std::fs::canonicalize(&bin)
            .map_err(|e| format!("BMAD_MCP_BIN={}: {e}", PathBuf::from(bin).display()).into()),
        None => Ok(PathBuf::from(env!("CARGO_BIN_EXE_bmad-mcp"))),
    }
}

/// Whether this is a benchmark run: `cargo bench` passes `--bench` to every bench, while
/// `cargo test --all-targets` runs them without it. Then a bench says so and measures
/// nothing (a debug build's figures would mean nothing, and a full run takes minutes).
pub fn benchmarking(name: &str) -> bool {
    if std::env::args().any(|a| a == "--bench") {
        return true;
    }
    println!("{name}: nothing measured without --bench; run `cargo bench --bench {name}`");
    false
}
