//! The pinned Claude Code CLI (`./scripts/test` installs it into `target/claude-cli`), run
//! offline: a home of its own (no user settings read, nothing of the user's written), no
//! telemetry, no updates, no API key.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The version `./scripts/test` installs.
pub const PINNED: &str = "2.1.330";

/// The CLI's binary, or `BMAD_CLAUDE_CLI`; fails saying how to install it.
pub fn cli() -> PathBuf {
    let path = std::env::var_os("BMAD_CLAUDE_CLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::repo_path("target/claude-cli/node_modules/.bin/claude"));
    assert!(
        path.is_file(),
        "the Claude Code CLI is not at {}. Run ./scripts/test, which installs it \
         (npm install --prefix target/claude-cli @anthropic-ai/claude-code@{PINNED}), \
         or set BMAD_CLAUDE_CLI to a claude {PINNED} binary.",
        path.display()
    );
    path
}

/// `claude <args>` in `home`, offline, with stdin closed.
pub fn command(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(cli());
    cmd.args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null());
    cmd
}

/// Runs `claude <args>` in `home` as [`command`] sets it up, for at most 120 s; returns
/// (exit status, stdout, stderr).
pub fn run(home: &Path, args: &[&str]) -> (i32, String, String) {
    let mut child = command(home, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cli().display()));
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().expect("wait for claude").is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("claude {args:?} took more than 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("claude's output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
