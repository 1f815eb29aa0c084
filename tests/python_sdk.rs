//! A second real client: the official MCP Python SDK (pinned in
//! `tests/python/requirements.txt`) drives a whole workflow against the built binary, once
//! with the legacy `initialize` handshake and once in the 2026-07-28 era. The checks are in
//! `tests/python/sdk_client.py`.
//!
//! The SDK lives in a venv at `target/py-venv`, which `./scripts/test` creates (the only
//! step that needs the network); the tests themselves run offline. Without the venv these
//! tests fail and say how to create it: they never pass without running the client.

use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_bmad-mcp");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The venv's interpreter, or `BMAD_TEST_PYTHON` when set (one with the pinned SDK).
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BMAD_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(ROOT).join("target/py-venv");
    if cfg!(windows) {
        venv.join("Scripts/python.exe")
    } else {
        venv.join("bin/python")
    }
}

fn drive(mode: &str, negotiated: &str) {
    run_client(
        "sdk_client.py",
        mode,
        &format!("mode={mode}: negotiated {negotiated}; whole workflow driven"),
    );
}

/// Runs `tests/python/<script>` in `mode` against the built binary; it must succeed and
/// print `expected`.
fn run_client(script: &str, mode: &str, expected: &str) {
    let python = python();
    assert!(
        python.exists(),
        "{} does not exist: the Python SDK client test needs the venv with the pinned SDK. \
         Create it with `./scripts/test` (it then runs the tests), or by hand: \
         `python3 -m venv target/py-venv && target/py-venv/bin/pip install -r tests/python/requirements.txt`",
        python.display()
    );
    let script = PathBuf::from(ROOT).join("tests/python").join(script);
    let out = Command::new(&python)
        .arg(&script)
        .arg(BIN)
        .arg(mode)
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client {} failed ({mode}):\n{stdout}\n{stderr}",
        script.display()
    );
    assert!(stdout.contains(expected), "{stdout}\n{stderr}");
}

#[test]
fn the_python_sdk_drives_a_whole_workflow_with_the_legacy_handshake() {
    drive("legacy", "2025-11-25");
}

#[test]
fn the_python_sdk_drives_a_whole_workflow_in_the_2026_07_28_era() {
    drive("auto", "2026-07-28");
}

/// Runs `tests/python/gate_client.py` (issue 13, items 7 and 8) in `mode`.
fn gates(mode: &str, negotiated: &str) {
    run_client(
        "gate_client.py",
        mode,
        &format!("mode={mode}: negotiated {negotiated}; gates checked"),
    );
}

#[test]
fn the_python_sdk_meets_the_gates_the_server_judges_with_the_legacy_handshake() {
    gates("legacy", "2025-11-25");
}

#[test]
fn the_python_sdk_meets_the_gates_the_server_judges_in_the_2026_07_28_era() {
    gates("auto", "2026-07-28");
}
