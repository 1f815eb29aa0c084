//! One step's host session as a process: its command line built from the hosts table (the
//! step's prompt, this server registered for the session only, the person's own extra
//! arguments), started in the story's worktree in a process group of its own, its output
//! into the run's log, and stopped, the whole group, at its time limit or when a killed
//! run's successor finds it still running.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::hosts::{Headless, Register};

/// What a step's host session is started with.
pub struct Launch<'a> {
    pub headless: &'a Headless,
    /// The host's program (the table's name on PATH, or the person's `--host-bin`).
    pub program: &'a Path,
    pub prompt: &'a str,
    /// The worktree the session runs in; the server it is given serves it.
    pub dir: &'a Path,
    /// This binary, registered as the session's `bmad` server.
    pub server: &'a Path,
    pub extra: &'a [String],
    pub log: &'a Path,
}

/// The host's arguments for one step.
pub fn args(l: &Launch) -> Vec<String> {
    let dir = l.dir.display().to_string();
    let server = l.server.display().to_string();
    let mut args: Vec<String> = l
        .headless
        .args
        .iter()
        .map(|a| a.replace("{prompt}", l.prompt))
        .collect();
    match l.headless.register {
        Register::McpConfigJson => {
            let servers = serde_json::json!({"mcpServers": {"bmad": {
                "type": "stdio", "command": server, "args": ["--project", dir],
            }}});
            args.extend([
                "--mcp-config".into(),
                servers.to_string(),
                "--allowedTools".into(),
                "mcp__bmad__bmad-task".into(),
            ]);
        }
        Register::ConfigOverrides => {
            let quoted = |s: &str| serde_json::Value::from(s).to_string();
            args.splice(
                1..1,
                [
                    "-c".into(),
                    format!("mcp_servers.bmad.command={}", quoted(&server)),
                    "-c".into(),
                    format!("mcp_servers.bmad.args=[\"--project\", {}]", quoted(&dir)),
                ],
            );
        }
        Register::Setup => {}
    }
    // The person's own arguments go before the prompt's position would matter: last.
    args.extend(l.extra.iter().cloned());
    args
}

/// A host session running.
pub struct Running {
    child: Child,
    pub pid: u32,
    started: Instant,
}

/// Starts the step's session: stdin closed, stdout into `log`, stderr beside it
/// (`.err`), in a process group of its own so that stopping it stops what it started.
pub fn spawn(l: &Launch) -> std::io::Result<Running> {
    let out = std::fs::File::create(l.log)?;
    let err = std::fs::File::create(err_log(l.log))?;
    let mut cmd = Command::new(l.program);
    cmd.args(args(l))
        .current_dir(l.dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // The project its server serves is the worktree, whatever the run's own was.
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let child = cmd.spawn()?;
    Ok(Running {
        pid: child.id(),
        child,
        started: Instant::now(),
    })
}

/// The log of the session's standard error, beside its standard output's.
pub fn err_log(log: &Path) -> PathBuf {
    log.with_extension("err")
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It exited, with this code (`None`: by a signal).
    Exited(Option<i32>),
    /// It ran past its time limit and was stopped.
    TimedOut,
}

impl Running {
    /// How it ended, once it has (stopping it past `limit`); `None` while it runs.
    pub fn poll(&mut self, limit: Duration) -> Option<End> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(End::Exited(status.code()));
        }
        if self.started.elapsed() < limit {
            return None;
        }
        self.stop();
        Some(End::TimedOut)
    }

    pub fn secs(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Stops the whole process group and reaps the host.
    pub fn stop(&mut self) {
        kill_group(self.pid);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stops what is left of a session a killed run started (its process group `pid`), when
/// that process is still `program`'s: its id may have been given to another process since.
pub fn stop_left(pid: u32, program: &str) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ours = !name.is_empty()
        && String::from_utf8_lossy(&cmdline)
            .split('\0')
            .take(3)
            .any(|a| a.ends_with(&name));
    if ours {
        kill_group(pid);
    }
    ours
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(p) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process_group(p, rustix::process::Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_gets_the_prompt_its_json_the_server_and_only_its_tool() {
        let h = crate::hosts::HOSTS[0].headless.unwrap();
        let extra = vec!["--model".to_string(), "opus".to_string()];
        let l = Launch {
            headless: &h,
            program: Path::new("claude"),
            prompt: "do it",
            dir: Path::new("/w/s1"),
            server: Path::new("/bin/bmad-mcp"),
            extra: &extra,
            log: Path::new("/tmp/x.log"),
        };
        let a = args(&l);
        assert_eq!(&a[..4], ["-p", "do it", "--output-format", "json"]);
        let config: serde_json::Value = serde_json::from_str(&a[5]).unwrap();
        assert_eq!(config["mcpServers"]["bmad"]["args"][1], "/w/s1");
        assert_eq!(
            &a[6..],
            ["--allowedTools", "mcp__bmad__bmad-task", "--model", "opus"]
        );
    }

    #[test]
    fn codex_gets_the_server_as_config_overrides_before_the_prompt() {
        let h = crate::hosts::HOSTS[1].headless.unwrap();
        let l = Launch {
            headless: &h,
            program: Path::new("codex"),
            prompt: "do it",
            dir: Path::new("/w/s1"),
            server: Path::new("/bin/bmad-mcp"),
            extra: &[],
            log: Path::new("/tmp/x.log"),
        };
        let a = args(&l);
        assert_eq!(a[0], "exec");
        assert_eq!(a[2], "mcp_servers.bmad.command=\"/bin/bmad-mcp\"");
        assert_eq!(a[4], "mcp_servers.bmad.args=[\"--project\", \"/w/s1\"]");
        assert_eq!(&a[5..], ["--json", "do it"]);
    }

    #[test]
    fn a_session_past_its_limit_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let h = crate::hosts::HOSTS[4].headless.unwrap();
        // `sh -c` stands in for the host; it starts a child that would outlive it.
        let script = dir.path().join("host");
        std::fs::write(
            &script,
            "#!/bin/sh\nsleep 30 &\necho $! > \"$(dirname \"$0\")/child\"\nwait\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.path().join("s.log");
        let l = Launch {
            headless: &h,
            program: &script,
            prompt: "p",
            dir: dir.path(),
            server: Path::new("/bin/true"),
            extra: &[],
            log: &log,
        };
        let mut r = spawn(&l).unwrap();
        let child = dir.path().join("child");
        while !child.exists() {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let end = loop {
            if let Some(e) = r.poll(Duration::from_millis(300)) {
                break e;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(end, End::TimedOut);
        let pid = std::fs::read_to_string(&child).unwrap().trim().to_string();
        std::thread::sleep(Duration::from_millis(100));
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            state.is_empty() || state.contains(") Z "),
            "the child is gone: {state}"
        );
    }
}
