//! What the benches share: the server binary they measure.

use std::path::PathBuf;

/// The server binary: `BMAD_MCP_BIN`, or the one `cargo bench` built beside the bench
/// (the release one, as users install it).
pub fn server_binary() -> Result<PathBuf, Box<dyn std::error::Error>> {
    match std::env::var_os("BMAD_MCP_BIN") {
        // Resolved here: the server starts in the project directory.
        Some(bin) => std::fs::canonicalize(&bin)
            .map_err(|e| format!("BMAD_MCP_BIN={}: {e}", PathBuf::from(bin).display()).into()),
        None => Ok(PathBuf::from(env!("CARGO_BIN_EXE_bmad-mcp"))),
    }
}
