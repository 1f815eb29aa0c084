//! The project's git repository, asked through the `git` binary (never a shell, its output
//! bounded): who the human is (`user.name`, `user.email`, or `BMAD_OWNER`), the branch,
//! the commit checked out, and which files changed since a commit. Everything here is
//! optional: without git installed, outside a repository, on a branch with no commit yet,
//! or when git fails, the answer is `None` and the workflow goes on without it. It only
//! reads the repository (`GIT_OPTIONAL_LOCKS=0`: not even the index's stat cache is
//! written), and runs no command the repository's config names (a file-system monitor, an
//! external diff, a clean filter).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::workflow::person::Person;

/// The environment variable that names the human (`Name <email>`), over git's identity.
pub const OWNER_ENV: &str = "BMAD_OWNER";

/// The most output read from one git command; more is treated as a failure.
const MAX_OUTPUT: u64 = 4 * 1024 * 1024;

/// Paths named by [`Repo::changed_since`] at most.
pub const MAX_PATHS: usize = 10_000;

/// A git work tree that holds the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The project directory (where git runs; paths are relative to it).
    dir: PathBuf,
}

/// The human: `BMAD_OWNER` when set, else git's identity where `dir` is in a repository.
pub fn owner(dir: &Path) -> Option<Person> {
    from_env().or_else(|| Repo::at(dir)?.identity())
}

/// The person `BMAD_OWNER` names, when it is set and not empty.
pub fn from_env() -> Option<Person> {
    std::env::var(OWNER_ENV)
        .ok()
        .and_then(|v| Person::parse(&v))
}

impl Repo {
    /// The repository holding `dir`, when there is one (a `.git` in `dir` or a folder
    /// above it, and git agrees). Looking for `.git` first spares a process where there
    /// is none.
    pub fn at(dir: &Path) -> Option<Repo> {
        if !dir.ancestors().any(|d| d.join(".git").exists()) {
            return None;
        }
        let inside = run(dir, &["rev-parse", "--is-inside-work-tree"])?;
        (inside.trim() == "true").then(|| Repo {
            dir: dir.to_path_buf(),
        })
    }

    /// git's `user.name` and `user.email` here (the repository's, else the user's).
    pub fn identity(&self) -> Option<Person> {
        let out = run(
            &self.dir,
            &["config", "--get-regexp", r"^user\.(name|email)$"],
        )?;
        let (mut name, mut email) = (None, None);
        for line in out.lines() {
            match line.split_once(' ') {
                Some(("user.name", v)) => name = Some(v.to_string()),
                Some(("user.email", v)) => email = Some(v.to_string()),
                _ => {}
            }
        }
        Person::new(name.as_deref(), email.as_deref())
    }

    /// The branch checked out; `None` on a detached HEAD.
    pub fn branch(&self) -> Option<String> {
        let b = run(&self.dir, &["symbolic-ref", "-q", "--short", "HEAD"])?;
        let b = b.trim();
        (!b.is_empty()).then(|| b.to_string())
    }

    /// The commit checked out (40 hex digits); `None` before the first commit.
    pub fn head(&self) -> Option<String> {
        let c = run(&self.dir, &["rev-parse", "-q", "--verify", "HEAD^{commit}"])?;
        let c = c.trim();
        is_commit_id(c).then(|| c.to_string())
    }

    /// The files under the project (relative to it) whose content in the work tree is not
    /// the one in `commit`: changed by later commits or by hand since, deleted, or added
    /// and committed. `pathspecs` narrow it (git's syntax: `:(exclude).claude`). `None`
    /// when the commit is not in this repository (never pushed from another clone) or git
    /// fails.
    pub fn changed_since(&self, commit: &str, pathspecs: &[&str]) -> Option<Vec<String>> {
        if !is_commit_id(commit) {
            return None;
        }
        let mut args = vec![
            "diff",
            "--no-renames",
            "--no-ext-diff",
            "--relative",
            "--name-only",
            "-z",
            commit,
            "--",
        ];
        args.extend_from_slice(if pathspecs.is_empty() {
            &["."]
        } else {
            pathspecs
        });
        let out = run(&self.dir, &args)?;
        Some(
            out.split('\0')
                .filter(|p| !p.is_empty())
                .take(MAX_PATHS)
                .map(str::to_string)
                .collect(),
        )
    }

    /// The blob id git gives each file's content in the work tree, in order (`None` for a
    /// file that is not there).
    pub fn blob_ids(&self, paths: &[String]) -> Option<Vec<Option<String>>> {
        let present: Vec<&str> = paths
            .iter()
            .filter(|p| self.dir.join(p).is_file())
            .map(String::as_str)
            .collect();
        let mut ids = Vec::new();
        if !present.is_empty() {
            let mut args = vec!["hash-object", "--no-filters", "--"];
            args.extend(present.iter().copied());
            let out = run(&self.dir, &args)?;
            ids = out.lines().map(str::to_string).collect();
            if ids.len() != present.len() {
                return None;
            }
        }
        let mut ids = ids.into_iter();
        Some(
            paths
                .iter()
                .map(|p| present.contains(&p.as_str()).then(|| ids.next()).flatten())
                .collect(),
        )
    }
}

/// Whether `s` is a full commit id (SHA-1 or SHA-256), never an option or a range.
pub fn is_commit_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Runs `git -C dir args…` without a shell or a terminal, with stdin closed: its stdout
/// when it succeeds and says less than [`MAX_OUTPUT`], else `None`.
fn run(dir: &Path, args: &[&str]) -> Option<String> {
    let mut cmd = Command::new("git");
    // Nothing the repository's config names is run for a read: no file-system monitor
    // (`core.fsmonitor` can name any command), no external diff (`--no-ext-diff` below),
    // no clean filter (`hash-object --no-filters`).
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.fsmonitor=false"])
        .args(args);
    // The project decides which repository: not a GIT_DIR inherited from a hook.
    for var in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX"] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().ok()?;
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|s| s.take(MAX_OUTPUT + 1).read_to_end(&mut out));
    if out.len() as u64 > MAX_OUTPUT || !matches!(read, Some(Ok(_))) {
        let _ = child.kill();
        let _ = child.wait();
        tracing::debug!(?args, "git said too much, or could not be read");
        return None;
    }
    let status = child.wait().ok()?;
    if !status.success() {
        return None;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        git(dir.path(), &["config", "user.name", "Ada Lovelace"]);
        git(dir.path(), &["config", "user.email", "ada@example.org"]);
        let repo = Repo::at(dir.path()).expect("a repository");
        (dir, repo)
    }

    #[test]
    fn outside_a_repository_everything_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Repo::at(dir.path()), None);
    }

    #[test]
    fn identity_branch_head_and_changes_are_read() {
        let (dir, repo) = repo();
        let id = repo.identity().unwrap();
        assert_eq!(id.to_string(), "Ada Lovelace <ada@example.org>");
        assert_eq!(repo.branch().as_deref(), Some("main"));
        assert_eq!(repo.head(), None, "no commit yet");
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "n\n").unwrap();
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let first = repo.head().unwrap();
        assert!(is_commit_id(&first));
        assert_eq!(
            repo.changed_since(&first, &[]).unwrap(),
            Vec::<String>::new()
        );
        // Changed by hand (not committed), and by a later commit.
        std::fs::write(dir.path().join("src/a.rs"), "b\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "m\n").unwrap();
        git(dir.path(), &["commit", "-q", "-am", "two"]);
        std::fs::write(dir.path().join("notes.md"), "o\n").unwrap();
        let mut changed = repo.changed_since(&first, &[]).unwrap();
        changed.sort();
        assert_eq!(changed, ["notes.md", "src/a.rs"]);
        assert_eq!(
            repo.changed_since(&first, &[":(exclude)notes.md"]).unwrap(),
            ["src/a.rs"]
        );
        // A commit this repository does not have, and text that is no commit id.
        assert_eq!(repo.changed_since(&"0".repeat(40), &[]), None);
        assert_eq!(repo.changed_since("--output=x", &[]), None);
        let ids = repo
            .blob_ids(&["notes.md".into(), "gone.md".into(), "src/a.rs".into()])
            .unwrap();
        assert_eq!(ids.len(), 3);
        assert!(ids[0].is_some() && ids[1].is_none() && ids[2].is_some());
        assert_ne!(ids[0], ids[2]);
    }

    /// A repository whose config names a file-system monitor: git would run it on a diff
    /// (the control shows it does), the server's reads never do.
    #[cfg(unix)]
    #[test]
    fn no_command_the_repository_config_names_is_run() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, repo) = repo();
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let ran = dir.path().join("ran");
        let hook = dir.path().join(".git/monitor.sh");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", ran.display())).unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        git(
            dir.path(),
            &["config", "core.fsmonitor", hook.to_str().unwrap()],
        );
        std::fs::write(dir.path().join("f"), "b\n").unwrap();
        let head = repo.head().unwrap();
        assert_eq!(repo.changed_since(&head, &[]).unwrap(), ["f"]);
        repo.blob_ids(&["f".into()]).unwrap();
        assert!(repo.identity().is_some() && repo.branch().is_some());
        assert!(!ran.exists(), "the monitor ran");
        git(dir.path(), &["diff", "--name-only", &head]);
        assert!(ran.exists(), "control: git runs the monitor by itself");
    }

    #[test]
    fn a_project_in_a_subfolder_sees_its_own_paths() {
        let (dir, _) = repo();
        let sub = dir.path().join("app");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("x.txt"), "1\n").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "1\n").unwrap();
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let repo = Repo::at(&sub).unwrap();
        let head = repo.head().unwrap();
        std::fs::write(sub.join("x.txt"), "2\n").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "2\n").unwrap();
        assert_eq!(repo.changed_since(&head, &[]).unwrap(), ["x.txt"]);
    }
}
