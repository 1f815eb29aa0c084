//! Claims shared through the team's remote: a ref under `refs/bmad/claims/` that points at
//! a commit whose message says who holds what. The first push of a ref wins (git refuses
//! to move a ref that a push did not descend from), so two clones that claim the same
//! thing learn which one holds it before either starts work, with git as the only
//! transport and no server of ours. Every command that touches the network is bounded in
//! time, asks for nothing (no terminal, no SSH prompt) and runs no hook; a fetch waits out,
//! for a moment, another git process's lock on the refs it writes. Each runs in a
//! process group of its own, which is killed whole at the deadline: git's helpers
//! (`git-remote-http`, `ssh`) would otherwise outlive it, holding its output open.

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
    /// `remote` could not be reached, or refused for another reason: why. The claim is
    /// kept in the clone (`pending`, under [`PENDING`]) when its commit could be made, to be
    /// pushed by the next fetch of the claims that reaches the remote.
    Unreachable {
        remote: String,
        why: String,
        pending: bool,
    },
}

/// Where the claims are.
pub const CLAIMS: &str = "refs/bmad/claims/";

/// Where a clone keeps a claim (or a claim's new message) the remote has not had yet: the
/// same path as under [`CLAIMS`]. A fetch of the claims never prunes it.
pub const PENDING: &str = "refs/bmad/pending/";

/// The pending ref of the claim `refname` (under [`CLAIMS`]).
pub fn pending_ref(refname: &str) -> Option<String> {
    refname
        .strip_prefix(CLAIMS)
        .map(|rest| format!("{PENDING}{rest}"))
}

impl Repo {
    /// Claims `refname` (under `refs/bmad/claims/`) on the branch's remote, with `message`
    /// saying who holds it: the first push wins, a later one learns the holder's message.
    pub fn claim(&self, refname: &str, message: &str) -> Claim {
        let Some(remote) = self.remote() else {
            return Claim::NoRemote;
        };
        let made = self.claim_commit(message, None);
        match self.held(&remote, refname) {
            Err(why) => return self.offline(remote, refname, made.as_deref(), why),
            Ok(Some(message)) => return Claim::Held { remote, message },
            Ok(None) => {}
        }
        let Some(commit) = made else {
            let why = "git could not make the claim's commit".to_string();
            return self.offline(remote, refname, None, why);
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
                _ => self.offline(remote, refname, Some(&commit), why),
            },
        }
    }

    /// A claim the remote could not be asked for: its commit kept as pending, when made.
    fn offline(&self, remote: String, refname: &str, commit: Option<&str>, why: String) -> Claim {
        let pending = commit.is_some_and(|c| self.keep_pending(refname, c));
        Claim::Unreachable {
            remote,
            why,
            pending,
        }
    }

    /// Keeps `commit` as what the clone wants the remote's `refname` to be (under
    /// [`PENDING`]); whether it was kept.
    pub fn keep_pending(&self, refname: &str, commit: &str) -> bool {
        let Some(pending) = pending_ref(refname) else {
            return false;
        };
        git(&self.dir)
            .args(["update-ref", &pending, commit])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// A new claim commit saying `message`, kept as pending for `refname`: its commit.
    pub fn want(&self, refname: &str, message: &str) -> Option<String> {
        let commit = self.claim_commit(message, None)?;
        self.keep_pending(refname, &commit).then_some(commit)
    }

    /// Forgets the pending claim of `refname` (pushed, or lost to another clone).
    pub fn drop_pending(&self, refname: &str) {
        if let Some(pending) = pending_ref(refname) {
            let _ = git(&self.dir).args(["update-ref", "-d", &pending]).output();
        }
    }

    /// Pushes `commit` to the remote's `refname`: created where the remote has none
    /// (`was: None`; refused when it has one, as a first claim is), else moved from `was`
    /// as long as the remote still has it there. The clone's copy follows.
    pub fn push_claim(&self, refname: &str, commit: &str, was: Option<&str>) -> Result<(), String> {
        let remote = self.remote().ok_or("the repository has no remote")?;
        let spec = format!("{commit}:{refname}");
        match was {
            None => network(
                &self.dir,
                &["push", "--quiet", "--no-verify", &remote, &spec],
            )
            .map(|_| ()),
            Some(was) => self
                .push_leased(&remote, (refname, was), &[spec])
                .map(|_| ()),
        }?;
        let _ = git(&self.dir)
            .args(["update-ref", refname, commit])
            .output();
        Ok(())
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
        fetch(&self.dir, &[remote, &format!("+{refname}:{refname}")])?;
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
    // A remote that accepts and then sends nothing is left within the deadline by git's
    // own limits too (HTTP: under 1 KiB/s for that long; ssh: the connection).
    let secs = NETWORK_DEADLINE.as_secs().to_string();
    cmd.args(["-c", "http.lowSpeedLimit=1024", "-c"])
        .arg(format!("http.lowSpeedTime={secs}"));
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env(
            "GIT_SSH_COMMAND",
            format!("ssh -o BatchMode=yes -o ConnectTimeout={secs} -o ServerAliveInterval=5 -o ServerAliveCountMax=1"),
        )
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    cmd
}

/// The pauses before a fetch is tried again after meeting another git process's lock: git holds a ref's or the index's lock for milliseconds, so a bounded
/// handful, under 2 s in all, outlasts it without holding a reading up for long.
pub(super) const LOCK_PAUSES: [Duration; 3] = [
    Duration::from_millis(100),
    Duration::from_millis(300),
    Duration::from_millis(900),
];

/// Whether git failed on a lock another git process holds in the repository (its
/// `Unable to create '….lock': File exists.`, git's words under `LC_ALL=C`, which every
/// command here runs with): the line that says so, without git's `error: `.
pub(super) fn locked(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find(|l| l.contains(".lock': File exists"))
        .map(|l| l.trim().trim_start_matches("error: "))
}

/// `git fetch --quiet --no-tags <args>` within [`NETWORK_DEADLINE`] each try. Another git
/// process of the clone (a `pull`, this or another worktree's server fetching the same
/// refs) holding a lock the fetch needs is waited out: tried again after each of
/// [`LOCK_PAUSES`], then said, naming the lock.
pub(super) fn fetch(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut all = vec!["fetch", "--quiet", "--no-tags"];
    all.extend_from_slice(args);
    let mut pauses = LOCK_PAUSES.iter();
    loop {
        let failure = match network_failing(dir, &all) {
            Ok(out) => return Ok(out),
            Err(f) => f,
        };
        match (locked(&failure.stderr), pauses.next()) {
            (Some(_), Some(pause)) => std::thread::sleep(*pause),
            (Some(line), None) => {
                return Err(format!(
                    "another git process held a lock of the clone, {} times: {line}",
                    LOCK_PAUSES.len() + 1
                ))
            }
            (None, _) => return Err(failure.why),
        }
    }
}

/// Runs a network command within [`NETWORK_DEADLINE`]: its stdout, or why it failed (its
/// last line of stderr, or that it took too long and was stopped). At the deadline its
/// whole process group is killed and its output is no longer waited for: a helper that
/// escaped the group cannot hold the call.
pub(super) fn network(dir: &Path, args: &[&str]) -> Result<String, String> {
    network_failing(dir, args).map_err(|f| f.why)
}

/// Why a network command failed: said in a line, and git's whole stderr, for a caller
/// that decides by what git said (empty when git was stopped at the deadline).
#[derive(Debug)]
pub(super) struct Failure {
    pub why: String,
    pub stderr: String,
}

/// [`network`], failing with git's whole stderr.
pub(super) fn network_failing(dir: &Path, args: &[&str]) -> Result<String, Failure> {
    let mut cmd = git(dir);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| Failure {
        why: format!("git could not be started: {e}"),
        stderr: String::new(),
    })?;
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send((read_at_most(out, 1 << 20), read_at_most(err, 1 << 16)));
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < NETWORK_DEADLINE => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                kill_group(&mut child);
                break None;
            }
        }
    };
    // Output still open after git ended is a helper's: waited for a moment, not for it.
    let (stdout, stderr) = rx
        .recv_timeout(Duration::from_millis(500))
        .unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(_) => Err(Failure {
            why: said(&stderr),
            stderr,
        }),
        None => Err(Failure {
            why: format!(
                "`git {}` took longer than {} s and was stopped",
                args[0],
                NETWORK_DEADLINE.as_secs()
            ),
            stderr: String::new(),
        }),
    }
}

/// Why git failed, in a line: the first paragraph of its stderr (what went wrong, and
/// "Could not read from remote repository."), without the advice git adds after a blank
/// line ("Please make sure you have the correct access rights / and the repository
/// exists."), which alone would say nothing; each line without git's `fatal: `.
fn said(stderr: &str) -> String {
    let first: Vec<&str> = stderr
        .trim_start()
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .map(|l| {
            l.trim_start_matches("fatal: ")
                .trim_start_matches("error: ")
        })
        .collect();
    if first.is_empty() {
        return "git failed".into();
    }
    crate::code::clip(&first.join("; "), 400)
}

/// What `stream` holds until its end, at most `limit` bytes, as text.
fn read_at_most(stream: Option<impl Read>, limit: u64) -> String {
    let mut text = String::new();
    if let Some(s) = stream {
        let _ = s.take(limit).read_to_string(&mut text);
    }
    text
}

/// Kills `child`'s process group (the group it leads: git and its helpers), then reaps it.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A remote that accepts the connection and never answers: the claim gives up at the
    /// deadline (plus a second), not when git's orphaned helper would.
    #[test]
    fn a_remote_that_never_answers_is_left_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let held: Vec<_> = listener.incoming().collect();
            drop(held);
        });
        let dir = tempfile::tempdir().unwrap();
        for args in [
            vec!["init", "-q"],
            vec![
                "remote",
                "add",
                "origin",
                &format!("http://{addr}/team.git"),
            ],
        ] {
            let ok = git(dir.path()).args(&args).output().unwrap().status;
            assert!(ok.success(), "git {args:?}");
        }
        let repo = Repo::at(dir.path()).expect("a repository");
        let started = Instant::now();
        let got = repo.claim("refs/bmad/claims/t/sprint-1", "Ada holds sprint 1");
        let took = started.elapsed();
        assert!(
            took < NETWORK_DEADLINE + Duration::from_secs(1),
            "{took:?}: {got:?}"
        );
        assert!(matches!(got, Claim::Unreachable { .. }), "{got:?}");
    }

    /// git's advice after a blank line is not why a command failed.
    #[test]
    fn why_git_failed_is_its_first_paragraph() {
        let ssh = "ssh: Could not resolve hostname nowhere: Name or service not known\r\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n";
        assert_eq!(
            said(ssh),
            "ssh: Could not resolve hostname nowhere: Name or service not known; Could not read from remote repository."
        );
        assert_eq!(said("\n"), "git failed");
        let dir = tempfile::tempdir().unwrap();
        git(dir.path()).args(["init", "-q"]).output().unwrap();
        let got = network(dir.path(), &["ls-remote", "/nowhere/origin.git"]).unwrap_err();
        assert!(!got.contains("repository exists"), "{got}");
        assert!(
            got.contains("'/nowhere/origin.git' does not appear to be a git repository"),
            "{got}"
        );
    }
}
