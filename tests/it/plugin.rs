//! The Claude Code plugin (`.claude-plugin/marketplace.json`, `plugins/bmad/`) as the
//! pinned Claude Code CLI reads it: `claude plugin validate --json` passes on the
//! marketplace and on the plugin, the plugin provides the `bmad` server and the gate hook
//! on both names of the tool, and the install and uninstall commands of `docs/plugin.md`
//! install it and take it away again.
//!
//! The CLI is the one `./scripts/test` installs with npm into
//! `target/claude-cli/node_modules/.bin/claude` (`BMAD_CLAUDE_CLI` names another one).
//! A bare `cargo test` reports these tests ignored, saying why; `./scripts/test` runs them.
//! Run without the CLI (`--include-ignored`), they fail, saying how to install it: they
//! never pass unrun.
//!
//! `validate` exits 0 even with warnings, so its JSON is read. Errors fail, and so do the
//! manifest's warnings: an unknown key is only a warning and Claude Code drops it, so a
//! misspelt `hooks` would silently leave the human without their gate. The listing
//! findings of the plugin directory (a missing icon) concern a directory submission, not
//! whether Claude Code loads the plugin: only a blocking one fails.

use std::path::Path;

use serde_json::Value;

use crate::support::claude::{run, PINNED};
use crate::support::ROOT;
const PLUGIN: &str = "plugins/bmad";
const TOOL_NAMES: [&str; 2] = ["mcp__bmad__bmad-task", "mcp__plugin_bmad_bmad__bmad-task"];

/// `claude plugin validate <target> --json`, parsed.
fn validate(target: &Path) -> Value {
    let home = tempfile::tempdir().unwrap();
    let target = target.to_str().unwrap();
    let (code, out, err) = run(home.path(), &["plugin", "validate", target, "--json"]);
    serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!("validate {target} (exit {code}) printed no JSON ({e}):\n{out}\n{err}")
    })
}

/// What in a validate report fails the test, one line each.
fn problems(report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if report["success"] != true {
        out.push(format!("success is {}", report["success"]));
    }
    let manifest = &report["manifest"];
    for (kind, list) in [
        ("error", &manifest["errors"]),
        ("warning", &manifest["warnings"]),
    ] {
        for item in list.as_array().into_iter().flatten() {
            out.push(format!("{kind} at {}: {}", item["path"], item["message"]));
        }
    }
    let findings = report["directory"]["findings"].as_array();
    for f in findings.into_iter().flatten() {
        if f["blocking"] == true {
            out.push(format!("blocking finding {}: {}", f["code"], f["message"]));
        }
    }
    out
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn the_pinned_cli_is_the_one_used() {
    let home = tempfile::tempdir().unwrap();
    let (code, out, err) = run(home.path(), &["--version"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with(PINNED), "claude --version: {out}");
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn the_marketplace_validates_and_lists_the_plugin() {
    let report = validate(Path::new(ROOT));
    assert_eq!(report["manifest"]["type"], "marketplace", "{report:#}");
    assert!(
        report["target"]
            .as_str()
            .is_some_and(|t| t.ends_with(".claude-plugin/marketplace.json")),
        "{report:#}"
    );
    let problems = problems(&report);
    assert!(problems.is_empty(), "{problems:#?}");
    let file =
        std::fs::read_to_string(Path::new(ROOT).join(".claude-plugin/marketplace.json")).unwrap();
    let marketplace: Value = serde_json::from_str(&file).unwrap();
    assert_eq!(marketplace["plugins"][0]["name"], "bmad");
    assert_eq!(marketplace["plugins"][0]["source"], format!("./{PLUGIN}"));
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn the_plugin_validates_and_provides_the_server_and_the_gate_hook() {
    let report = validate(&Path::new(ROOT).join(PLUGIN));
    assert_eq!(report["manifest"]["type"], "plugin", "{report:#}");
    let problems = problems(&report);
    assert!(problems.is_empty(), "{problems:#?}");

    let provides = &report["provides"];
    let servers = provides["mcpServers"].as_array().expect("mcpServers");
    assert!(
        servers
            .iter()
            .any(|s| s["name"] == "bmad" && s["type"] == "stdio" && s["target"] == "bmad-mcp"),
        "{servers:#?}"
    );
    let hooks = provides["hooks"].as_array().expect("hooks");
    let gate = hooks
        .iter()
        .find(|h| h["event"] == "PreToolUse")
        .unwrap_or_else(|| panic!("no PreToolUse hook: {hooks:#?}"));
    assert_eq!(gate["type"], "command");
    assert_eq!(gate["command"], "bmad-mcp hook pre-tool-use");
    // Claude Code reads a matcher of letters, digits, `_`, `-` and `|` as a list of exact
    // names: it must name the tool under the user's server and under the plugin's.
    let matcher = gate["matcher"].as_str().unwrap();
    assert!(
        matcher
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-|".contains(c)),
        "{matcher} would be read as a regex"
    );
    let names: Vec<&str> = matcher.split('|').collect();
    for tool in TOOL_NAMES {
        assert!(names.contains(&tool), "{matcher} does not cover {tool}");
    }
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn a_broken_plugin_fails_the_same_checks() {
    // The checks above can fail: a misspelt key is a warning, a hook of the wrong shape
    // an error.
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join(".claude-plugin");
    std::fs::create_dir_all(&manifest).unwrap();
    std::fs::write(
        manifest.join("plugin.json"),
        r#"{"name": "bmad", "version": "0.1.0", "description": "x", "author": {"name": "a"},
            "hookz": {}, "hooks": {"PreToolUse": "bmad-mcp hook pre-tool-use"}}"#,
    )
    .unwrap();
    let report = validate(dir.path());
    let problems = problems(&report);
    assert!(
        problems.iter().any(|p| p.contains("hookz")),
        "the unknown key is reported: {problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("error")),
        "the bad hook is an error: {problems:#?}"
    );
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn the_documented_commands_install_and_uninstall_the_plugin() {
    let home = tempfile::tempdir().unwrap();
    // `claude plugin marketplace add "$PWD"`, run at the root of the clone.
    let (code, out, err) = run(home.path(), &["plugin", "marketplace", "add", ROOT]);
    assert_eq!(code, 0, "marketplace add: {out}{err}");
    let (code, out, err) = run(home.path(), &["plugin", "install", "bmad@bmad-mcp"]);
    assert_eq!(code, 0, "install: {out}{err}");
    let (code, out, err) = run(home.path(), &["plugin", "list", "--json"]);
    assert_eq!(code, 0, "list: {out}{err}");
    let list: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let bmad = list
        .as_array()
        .and_then(|l| l.iter().find(|p| p["id"] == "bmad@bmad-mcp"))
        .unwrap_or_else(|| panic!("not installed: {list:#}"));
    assert_eq!(bmad["enabled"], true);
    assert_eq!(bmad["mcpServers"]["bmad"]["command"], "bmad-mcp");

    let (code, out, err) = run(home.path(), &["plugin", "uninstall", "bmad@bmad-mcp"]);
    assert_eq!(code, 0, "uninstall: {out}{err}");
    let (code, out, err) = run(
        home.path(),
        &["plugin", "marketplace", "remove", "bmad-mcp"],
    );
    assert_eq!(code, 0, "marketplace remove: {out}{err}");
    let (code, out, err) = run(home.path(), &["plugin", "list", "--json"]);
    assert_eq!(code, 0, "list: {out}{err}");
    assert!(!out.contains("bmad@bmad-mcp"), "still installed: {out}");

    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/plugin.md")).unwrap();
    for line in [
        "claude plugin marketplace add \"$PWD\"",
        "claude plugin install bmad@bmad-mcp",
        "claude plugin uninstall bmad@bmad-mcp",
        "claude plugin marketplace remove bmad-mcp",
    ] {
        assert!(page.contains(line), "docs/plugin.md says `{line}`");
    }
}
