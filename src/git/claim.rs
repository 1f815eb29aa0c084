//! Claims shared through the team's remote: a ref under `refs/bmad/claims/` that points at
//! a commit whose message says who holds what. The first push of a ref wins (git refuses
//! to move a ref that a push did not descend from), so two clones that claim the same
//! thing learn which one holds it before either starts work, with git as the only
//! transport and no server of ours. Every command that touches the network is bounded in
//! time, asks for nothing (no terminal, no SSH prompt) and runs no hook.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{run, Repo};

/// How long one network command (`ls-remote`, `fetch`, `push`) may take.
pub const NETWORK_DEADLINE: Duration = Duration::from_secs(10);

/// What became of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The repository has no remote: the claim is this clone's alone.
    NoRemote,
    /// Pushed to `remote` first: the claim holds for every clone that reaches it.
    Won { remote: String },
    /// `remote` holds an earlier claim, whose message is given.
    Held { remote: String, message: String },
    /// `remote` could not be reached, or refused for another reason: why.
    Unreachable { remote: String, why: String },
}

impl Repo {
    /// Claims `refname` (under `refs/bmad/claims/`) on the branch's remote, with `message`
    /// saying who holds it: the first push wins, a later one learns the holder's message.
    pub fn claim(&self, refname: &str, message: &str) -> Claim {
        let Some(remote) = self.remote() else {
            return Claim::NoRemote;
        };
        match self.held(&remote, refname) {
            Err(why) => return Claim::Unreachable { remote, why },
            Ok(Some(message)) => return Claim::Held { remote, message },
            Ok(None) => {}
        }
        let Some(commit) = self.claim_commit(message, None) else {
            let why = "git could not make the claim's commit".to_string();
            return Claim::Unreachable { remote, why };
        };
        let pushed = network(
            &self.dir,
            &[
                "push",
                "--quiet",
                "--no-verify",
                &remote,
                &format!("{commit}:{refname}"),
            ],
        );
        match pushed {
            Ok(_) => {
                // The clone's own copy of the ref, as a fetch would leave it.
                let _ = git(&self.dir)
                    .args(["update-ref", refname, &commit])
                    .output();
                Claim::Won { remote }
            }
            // Refused: most likely another clone pushed the same claim first.
            Err(why) => match self.held(&remote, refname) {
                Ok(Some(message)) => Claim::Held { remote, message },
                _ => Claim::Unreachable { remote, why },
            },
        }
    }

    /// Takes back a claim this clone won, for a story whose start failed after it: the
    /// remote's ref is deleted (as long as it is still the one pushed), and the clone's.
    pub fn unclaim(&self, refname: &str) {
        let Some(remote) = self.remote() else {
            return;
        };
        if let Some(ours) = run(&self.dir, &[], &["rev-parse", "--verify", "-q", refname]) {
            let _ = self.push_leased(&remote, (refname, ours.trim()), &[format!(":{refname}")]);
            let _ = git(&self.dir).args(["update-ref", "-d", refname]).output();
        }
    }

    /// The remote the checked-out branch tracks, else `origin`, else the only one.
    pub(super) fn remote(&self) -> Option<String> {
        let branch = self.branch_and_head().0;
        let tracked = branch.and_then(|b| {
            run(
                &self.dir,
                &[],
                &["config", "--get", &format!("branch.{b}.remote")],
            )
        });
        let listed = run(&self.dir, &[], &["remote"]).unwrap_or_default();
        let names: Vec<&str> = listed
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        tracked
            .map(|r| r.trim().to_string())
            .filter(|r| names.contains(&r.as_str()))
            .or_else(|| {
                names
                    .iter()
                    .find(|n| **n == "origin")
                    .map(|n| n.to_string())
            })
            .or_else(|| (names.len() == 1).then(|| names[0].to_string()))
    }

    /// The message of the claim `remote` holds at `refname`, if it holds one; `Err` when
    /// the remote cannot be asked.
    fn held(&self, remote: &str, refname: &str) -> Result<Option<String>, String> {
        let listed = network(&self.dir, &["ls-remote", remote, refname])?;
        if listed.trim().is_empty() {
            return Ok(None);
        }
        network(
            &self.dir,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                remote,
                &format!("+{refname}:{refname}"),
            ],
        )?;
        let message = run(&self.dir, &[], &["log", "-1", "--format=%B", refname])
            .ok_or_else(|| format!("the claim at {refname} could not be read"))?;
        Ok(Some(message.trim().to_string()))
    }

    /// A commit of the empty tree whose message is `message` (its parent `parent`, when
    /// given), made without touching the work tree, the index or any branch.
    pub(super) fn claim_commit(&self, message: &str, parent: Option<&str>) -> Option<String> {
        let tree = run(
            &self.dir,
            &[],
            &["hash-object", "-t", "tree", "-w", "--stdin"],
        )?;
        let mut cmd = git(&self.dir);
        cmd.args(["commit-tree", tree.trim(), "-m", message]);
        if let Some(p) = parent {
            cmd.args(["-p", p]);
        }
        cmd.env("GIT_AUTHOR_NAME", "bmad-mcp")
            .env("GIT_AUTHOR_EMAIL", "bmad-mcp@localhost")
            .env("GIT_COMMITTER_NAME", "bmad-mcp")
            .env("GIT_COMMITTER_EMAIL", "bmad-mcp@localhost");
        let out = cmd.output().ok()?;
        let commit = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && super::is_commit_id(&commit)).then_some(commit)
    }
}

/// git in `dir`, asking nothing of anyone and running no hook.
pub(super) fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
    ]);
    for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    cmd
}

/// Runs a network command within [`NETWORK_DEADLINE`]: its stdout, or why it failed (its
/// last line of stderr, or that it took too long and was stopped).
pub(super) fn network(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut child = git(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git could not be started: {e}"))?;
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let read = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        if let Some(s) = out.as_mut() {
            let _ = s.take(1 << 20).read_to_string(&mut o);
        }
        if let Some(s) = err.as_mut() {
            let _ = s.take(1 << 16).read_to_string(&mut e);
        }
        (o, e)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < NETWORK_DEADLINE => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let (stdout, stderr) = read.join().unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(_) => Err(stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("git failed")
            .trim()
            .to_string()),
        None => Err(format!(
            "`git {}` took longer than {} s and was stopped",
            args[0],
            NETWORK_DEADLINE.as_secs()
        )),
    }
}
