//! A second real client: the official MCP Python SDK (pinned in
//! `tests/python/requirements.txt`) drives a whole workflow against the built binary, once
//! with the legacy `initialize` handshake and once in the 2026-07-28 era. The checks are in
//! `tests/python/sdk_client.py`. The same client with an `elicitation_callback` playing the
//! human checks the gates (`tests/python/sdk_gates.py`); `tests/python/host_client.py` uses
//! the prompts, the resources and the role prompt overrides; `tests/python/http_client.py`
//! connects to `serve --http` by URL.
//!
//! The SDK lives in a venv at `target/py-venv`, which `./scripts/test` creates (the only
//! step that needs the network) before it runs every test, these included; the tests
//! themselves run offline. A bare `cargo test` reports them ignored, saying why. Run
//! without the venv (`--include-ignored`), they fail and say how to create it: they never
//! pass without running the client.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{server_path, ROOT};

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
    let out = run_script("sdk_client.py", mode);
    let expected = format!("mode={mode}: negotiated {negotiated}; whole workflow driven");
    assert!(out.contains(&expected), "{out}");
}

/// Runs a script of `tests/python` with the binary and the mode; its stdout.
fn run_script(name: &str, mode: &str) -> String {
    let python = python();
    assert!(
        python.exists(),
        "{} does not exist: the Python SDK client test needs the venv with the pinned SDK. \
         Create it with `./scripts/test` (it then runs the tests), or by hand: \
         `python3 -m venv target/py-venv && target/py-venv/bin/pip install -r tests/python/requirements.txt`",
        python.display()
    );
    let script = PathBuf::from(ROOT).join("tests/python").join(name);
    // The JSON's schema, which the tool no longer declares (docs/spec.md §10.8): every
    // reply's structuredContent is checked against it.
    let schema = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(schema.path(), bmad_mcp::server::reply_schema().to_string()).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(server_path())
        .arg(mode)
        .env("BMAD_REPLY_SCHEMA", schema.path())
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python SDK client failed ({name}, {mode}):\n{stdout}\n{stderr}"
    );
    stdout.into_owned()
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_drives_a_whole_workflow_with_the_legacy_handshake() {
    drive("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_drives_a_whole_workflow_in_the_2026_07_28_era() {
    drive("auto", "2026-07-28");
}

/// The human decides in the client's dialog (`tests/python/sdk_gates.py`): answers, decline,
/// cancel, a document edited while the dialog is open, reject, approve with a scope, a
/// client without a dialog, strict mode.
fn gates(mode: &str) {
    let out = run_script("sdk_gates.py", mode);
    assert!(
        out.contains(&format!("mode={mode}: the human decided in the dialog")),
        "{out}"
    );
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_human_decides_in_the_dialog_sent_during_the_call() {
    gates("legacy");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_human_decides_in_the_dialog_of_an_input_required_result() {
    gates("auto");
}

/// The gates the server judges (`tests/python/gate_client.py`): a four-line PRD claiming
/// 95, a failing review sent back to dev, a failing QA's risk accepted.
fn judged(mode: &str, negotiated: &str) {
    let out = run_script("gate_client.py", mode);
    let expected = format!("mode={mode}: negotiated {negotiated}; gates checked");
    assert!(out.contains(&expected), "{out}");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_meets_the_gates_the_server_judges_with_the_legacy_handshake() {
    judged("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_meets_the_gates_the_server_judges_in_the_2026_07_28_era() {
    judged("auto", "2026-07-28");
}

/// What the server offers a host besides its tool (`tests/python/host_client.py`): the
/// prompts, the resources, and the role prompt overrides.
fn host(mode: &str, negotiated: &str) {
    let out = run_script("host_client.py", mode);
    let expected = format!("mode={mode}: negotiated {negotiated}; prompts, resources");
    assert!(out.contains(&expected), "{out}");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_uses_the_prompts_resources_and_overrides_with_the_legacy_handshake() {
    host("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_uses_the_prompts_resources_and_overrides_in_the_2026_07_28_era() {
    host("auto", "2026-07-28");
}

/// The SDK over streamable HTTP (`tests/python/http_client.py`): `serve --http` with one
/// root, a decision in the dialog, a project outside the root refused, SIGTERM.
fn over_http(mode: &str, negotiated: &str) {
    let out = run_script("http_client.py", mode);
    let expected = format!("mode={mode}: negotiated {negotiated}; over HTTP");
    assert!(out.contains(&expected), "{out}");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_works_over_http_with_the_legacy_handshake() {
    over_http("legacy", "2025-11-25");
}

#[test]
#[ignore = "needs the pinned Python SDK: run ./scripts/test"]
fn the_python_sdk_works_over_http_in_the_2026_07_28_era() {
    over_http("auto", "2026-07-28");
}
