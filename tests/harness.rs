//! Which `bmad-mcp` binary the integration tests, the examples and the benches start, and
//! where the repository is.
//!
//! The tests and benches live in this package of their own (`tests/Cargo.toml`), the
//! examples in another (`examples/Cargo.toml`, which does not build the server's library),
//! not in the server's, so
//! that their dependencies (rmcp's client, the default features of regex and tokio, a
//! JSON Schema validator) never reach the server: cargo unifies a package's
//! dev-dependencies into the features its library and binary are built with for tests,
//! and a server tested with features it does not ship passes tests its users' binary
//! fails. Here the server is a separate program, built as users build it:
//!
//! * `BMAD_MCP_BIN`, when set: the binary to start. `./scripts/test` builds it as the
//!   README installs it (`cargo install --locked --path . --profile release-lto`) and sets
//!   it, so the whole suite runs on what users install.
//! * Otherwise `cargo build --locked -p bmad-mcp --bin bmad-mcp` (with `--release` when the
//!   caller is an optimised build), once per process: the server alone, with only its
//!   own dependencies and features.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The variable that names the server binary to start.
pub const BIN_VARIABLE: &str = "BMAD_MCP_BIN";

/// The repository's root (the server's package).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness package is a folder of the repository")
}

/// A file or folder of the repository, by its path from the root.
pub fn repo_path(relative: &str) -> PathBuf {
    root().join(relative)
}

/// The server binary, found or built once per process; the error says why there is none.
pub fn server_binary() -> Result<&'static Path, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| locate(Build::CallersProfile))
        .as_deref()
        .map_err(Clone::clone)
}

/// The server binary as users install it, for the benches' figures: `BMAD_MCP_BIN`, else
/// the server built alone with the `release-lto` profile of `cargo install` (README).
pub fn installed_server_binary() -> Result<&'static Path, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| locate(Build::Installed))
        .as_deref()
        .map_err(Clone::clone)
}

/// Which build of the server to make when `BMAD_MCP_BIN` names none.
#[derive(Clone, Copy)]
enum Build {
    /// The profile of the running test, example or bench (dev or release).
    CallersProfile,
    /// `release-lto`, the profile the README installs with.
    Installed,
}

/// [`server_binary`], for tests: a failure to find or build it fails the test.
pub fn server_binary_or_panic() -> &'static str {
    match server_binary() {
        Ok(path) => path.to_str().expect("the server's path is UTF-8"),
        Err(e) => panic!("{e}"),
    }
}

fn locate(build: Build) -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os(BIN_VARIABLE) {
        // Resolved now: a server is started in a project directory.
        let path = std::fs::canonicalize(&bin)
            .map_err(|e| format!("{BIN_VARIABLE}={}: {e}", PathBuf::from(&bin).display()))?;
        eprintln!(
            "harness: starting the server {} ({BIN_VARIABLE})",
            path.display()
        );
        return Ok(path);
    }
    build_server(build)
}

/// Builds the server alone: in the profile of the running test, example or bench (its
/// executable sits in `target/<profile>/` or `target/<profile>/deps/`), or as installed.
/// Cargo's progress goes to stderr, where the test harness keeps it unless one fails.
fn build_server(build: Build) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this program: {e}"))?;
    let callers_dir = exe
        .ancestors()
        .skip(1)
        .find(|dir| !dir.ends_with("deps") && !dir.ends_with("examples"))
        .ok_or("cannot locate the target directory")?;
    let target_dir = callers_dir.parent().unwrap_or(callers_dir);
    let profile = match build {
        Build::Installed => "release-lto",
        Build::CallersProfile if callers_dir.ends_with("release") => "release",
        Build::CallersProfile => "dev",
    };
    let profile_dir = target_dir.join(if profile == "dev" { "debug" } else { profile });
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--locked", "-p", "bmad-mcp", "--bin", "bmad-mcp"])
        .args(["--profile", profile, "--manifest-path"])
        .arg(root().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir);
    // Said before and after: on a first run this is the longest wait (minutes), and cargo
    // shows its progress bar only to a terminal.
    eprintln!(
        "harness: building the server (cargo build -p bmad-mcp --profile {profile}; on a first run this takes minutes, cargo's progress follows); set {BIN_VARIABLE} to start another binary"
    );
    let began = std::time::Instant::now();
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo to build bmad-mcp: {e}"))?;
    if !status.success() {
        return Err(format!("building bmad-mcp failed ({status})"));
    }
    eprintln!(
        "harness: the server is built ({:.0} s)",
        began.elapsed().as_secs_f64()
    );
    let bin = profile_dir.join(format!("bmad-mcp{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        return Err(format!("{} not found after the build", bin.display()));
    }
    Ok(bin)
}
