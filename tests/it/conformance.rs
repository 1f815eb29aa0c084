//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned in
//! `scripts/test`) run against `serve --http`: every server scenario of its active suite,
//! in both protocol eras, must pass, apart from the checks listed in
//! `tests/conformance/expected-failures.yml`, which do not apply to this server. The
//! suite itself fails on a listed check that passes, so the list stays honest;
//! `docs/http.md` lists the same entries.
//!
//! The suite needs Node 22 or newer: `./scripts/test` installs a pinned one into
//! `target/node22` and the suite into `target/conformance` (`BMAD_NODE` names another
//! node binary), then runs the suite's tests, which a bare `cargo test` reports ignored,
//! saying why. Run without them (`--include-ignored`), they fail, saying how to install
//! them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::http::Server;
use crate::support::{Sandbox, ROOT};

const BASELINE: &str = "tests/conformance/expected-failures.yml";
const SUITE: &str =
    "target/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js";

fn node() -> PathBuf {
    let path = std::env::var_os("BMAD_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/node22/node_modules/.bin/node"));
    assert!(
        path.is_file(),
        "Node 22 is not at {}. Run ./scripts/test, which installs it \
         (npm install --prefix target/node22 node@22), or set BMAD_NODE.",
        path.display()
    );
    path
}

fn suite() -> PathBuf {
    let path = Path::new(ROOT).join(SUITE);
    assert!(
        path.is_file(),
        "the MCP conformance suite is not at {}. Run ./scripts/test, which installs it.",
        path.display()
    );
    path
}

/// The `<scenario>:<check>` entries of the baseline.
fn baseline_entries() -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(ROOT).join(BASELINE)).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|e| e.split('#').next().unwrap().trim().to_string())
        .collect()
}

/// Runs the suite's active server scenarios with `era_args` against a fresh server;
/// returns the summary. Fails on any failure outside the baseline.
fn run_suite(era_args: &[&str]) -> String {
    let (node, suite) = (node(), suite());
    let sb = Sandbox::new();
    let server = Server::start(&["--root", sb.project.to_str().unwrap()], &[]);
    let results = tempfile::tempdir().unwrap();
    let mut child = Command::new(node)
        .arg(suite)
        .args(["server", "--url", &server.url])
        .args(era_args)
        .arg("--expected-failures")
        .arg(Path::new(ROOT).join(BASELINE))
        .arg("-o")
        .arg(results.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    // Both pipes are read on threads, so that a full pipe never stalls the suite.
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the conformance suite took more than 5 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let summary = out
        .find("=== SUMMARY ===")
        .map_or(out.as_str(), |i| &out[i..])
        .to_string();
    assert!(
        status.success(),
        "{era_args:?}: exit {status:?}\n{summary}\n{err}"
    );
    assert!(
        out.contains("Baseline check passed"),
        "{era_args:?}: the baseline was applied:\n{summary}"
    );
    summary
}

fn assert_passed(summary: &str, scenarios: &[&str]) {
    for scenario in scenarios {
        assert!(
            summary
                .lines()
                .any(|l| l.contains(&format!("✓ {scenario}:"))),
            "{scenario} did not pass:\n{summary}"
        );
    }
}

#[test]
#[ignore = "needs the pinned MCP conformance suite: run ./scripts/test"]
fn the_conformance_suite_passes_in_the_session_era() {
    let summary = run_suite(&[]);
    assert_passed(
        &summary,
        &[
            "server-initialize",
            "server-session-lifecycle",
            "tools-list",
            "dns-rebinding-protection",
        ],
    );
}

#[test]
#[ignore = "needs the pinned MCP conformance suite: run ./scripts/test"]
fn the_conformance_suite_passes_in_the_2026_07_28_era() {
    let summary = run_suite(&["--spec-version", "2026-07-28"]);
    assert_passed(&summary, &["tools-list", "dns-rebinding-protection"]);
}

#[test]
fn the_http_page_lists_every_check_the_suite_may_fail_here() {
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/http.md")).unwrap();
    let entries = baseline_entries();
    assert!(entries.len() >= 10, "{entries:?}");
    for entry in entries {
        let scenario = entry.split(':').next().unwrap();
        assert!(
            page.contains(&format!("`{scenario}`")),
            "the conformance section of docs/http.md does not list {scenario}"
        );
    }
}
