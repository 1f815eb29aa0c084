//! The BMAD method in a bench's project, as its users install it: the pinned `bmad-method`
//! package that `./scripts/test` installs into `target/npm/bmad-method`, run as its
//! installer (offline, for Claude Code, in a throw-away home), as the integration tests run
//! it (`tests/it/support/method.rs`). With the method the review reports each of its layers,
//! so the workflow's review gains those sections.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Res;

/// The installer, or `None` (with why) when `./scripts/test` has not installed it.
pub fn installer() -> Option<PathBuf> {
    let bin = harness::repo_path("target/npm/bmad-method/node_modules/.bin/bmad-method");
    if bin.is_file() {
        return Some(bin);
    }
    println!(
        "  (the BMAD method is not installed in target/npm/bmad-method: run ./scripts/test once; \
         the figures with the method are skipped)"
    );
    None
}

/// Installs the method into `project` as a user would, then waits until its files are
/// older than the server's file clock can tell apart (`files::stamp::SETTLED`, 2 s): an
/// install is older than that when a person starts a task, and the server does not keep a
/// reading of files changed in the last 2 s.
pub fn install(installer: &Path, project: &Path) -> Res<()> {
    let home = tempfile::tempdir()?;
    let out = Command::new(installer)
        .args(["install", "--directory"])
        .arg(project)
        .args(["--modules", "bmm", "--tools", "claude-code", "--yes"])
        .args(["--user-name", "Ada"])
        .env("HOME", home.path())
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "bmad-method install: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    Ok(())
}

/// `review` with a section for each layer of the review the method's install asks for
/// (`src/workflow/sections.rs`, `LAYERS`), none with findings, before its status line.
pub fn in_layers(review: &str) -> String {
    let (body, status) = review
        .rsplit_once("\nReview Status:")
        .map_or((review, String::new()), |(b, s)| {
            (b, format!("\nReview Status:{s}"))
        });
    let mut out = body.trim_end().to_string();
    for layer in [
        "Edge Cases",
        "Verification Gaps",
        "Blind Pass",
        "Acceptance Audit",
    ] {
        out.push_str(&format!("\n\n## {layer}\nNo findings."));
    }
    out.push('\n');
    out.push_str(&status);
    out
}
