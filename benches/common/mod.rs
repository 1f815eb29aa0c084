//! What the benches share: the server binary they measure, and whether to measure.

use std::path::PathBuf;

/// The server binary the figures are taken on: `BMAD_MCP_BIN`, or the server as users
/// install it (the `release-lto` profile), built now, alone, with only its own features
/// (`harness::installed_server_binary`).
pub fn server_binary() -> Result<PathBuf, Box<dyn std::error::Error>> {
    Ok(harness::installed_server_binary()?.to_path_buf())
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
