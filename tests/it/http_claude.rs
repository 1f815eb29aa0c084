//! Claude Code over HTTP: the pinned Claude Code CLI (the one `./scripts/test` installs
//! into `target/claude-cli`, or `BMAD_CLAUDE_CLI`), in a throw-away home, replaces the
//! README's stdio registration with a running `serve --http` by the commands of
//! `docs/http.md`, and `claude mcp list` sees it connected, with no conflict of scopes;
//! with a token, only the registration that sends it connects.
//! A bare `cargo test` reports these tests ignored, saying why; `./scripts/test` runs them.

use crate::support;

use std::path::Path;

use crate::support::http::{Server, TOKEN};
use crate::support::{Sandbox, ROOT};

/// Runs the CLI offline with a home of its own; returns (exit status, stdout + stderr).
fn claude(home: &Path, args: &[&str]) -> (i32, String) {
    let (code, stdout, stderr) = support::claude::run(home, args);
    (code, format!("{stdout}{stderr}"))
}

/// The line `claude mcp list` prints for `name`.
fn listed<'a>(list: &'a str, name: &str) -> &'a str {
    list.lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("{name} is not listed:\n{list}"))
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn claude_mcp_list_sees_the_http_server_connected() {
    let sb = Sandbox::new();
    // At info level, to see the health check's subscription end.
    let mut server = Server::start(
        &["--root", sb.project.to_str().unwrap()],
        &[("RUST_LOG", "info")],
    );
    let home = tempfile::tempdir().unwrap();
    // The README's registration, `bmad-mcp setup claude-code`, as a user who followed it
    // has it (in the home the CLI reads).
    let out = std::process::Command::new(support::server_path())
        .args(["setup", "claude-code"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", home.path().join(".claude"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // docs/http.md: that registration goes, the HTTP one takes its place.
    let (code, out) = claude(home.path(), &["mcp", "remove", "bmad", "-s", "user"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = claude(
        home.path(),
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "-s",
            "user",
            "bmad",
            &server.url,
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, list) = claude(home.path(), &["mcp", "list"]);
    assert_eq!(code, 0, "{list}");
    let line = listed(&list, "bmad");
    assert!(
        line.contains(&server.url) && line.contains("(HTTP)") && line.contains("Connected"),
        "{list}"
    );
    assert!(!line.contains("Failed"), "{list}");
    assert!(!list.contains("Conflicting scopes"), "{list}");
    // Quiet when all is well: the health check leaves no ERROR line on the server's stderr.
    server.wait_for("serve finished quit_reason=Cancelled");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let logged = server.logged();
    assert!(
        !logged.iter().any(|l| l.contains(" ERROR ")),
        "{}",
        logged.join("\n")
    );

    // The docs give these commands, in this order.
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(readme.contains("bmad-mcp setup claude-code"));
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/http.md")).unwrap();
    let remove = page.find("claude mcp remove bmad -s user");
    let add = page.find("claude mcp add --transport http -s user bmad http://127.0.0.1:8765/mcp");
    assert!(
        remove.is_some() && add.is_some() && remove < add,
        "docs/http.md gives the removal, then the registration"
    );
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn with_a_token_only_the_registration_that_sends_it_connects() {
    let sb = Sandbox::new();
    let server = Server::start(
        &["--root", sb.project.to_str().unwrap()],
        &[("BMAD_MCP_TOKEN", TOKEN)],
    );
    let home = tempfile::tempdir().unwrap();
    let header = format!("Authorization: Bearer {TOKEN}");
    let (code, out) = claude(
        home.path(),
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "-s",
            "user",
            "bmad",
            &server.url,
            "--header",
            &header,
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = claude(
        home.path(),
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "tokenless",
            &server.url,
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (_, list) = claude(home.path(), &["mcp", "list"]);
    let with = listed(&list, "bmad");
    assert!(
        with.contains("Connected") && !with.contains("Failed"),
        "{list}"
    );
    let without = listed(&list, "tokenless");
    assert!(!without.contains("✔ Connected"), "{list}");
    assert!(without.contains("401"), "{list}");
}
