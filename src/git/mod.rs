//! The project's git repository, asked through the `git` binary (never a shell, its output
//! bounded): who the human is (`user.name`, `user.email`, or `BMAD_OWNER`), the branch, the commit
//! checked out, and which files changed since a commit. Everything here is optional: without git
//! installed, outside a repository, on a branch with no commit yet, or when git fails, the answer
//! is `None` and the workflow goes on without it. It reads the repository (`GIT_OPTIONAL_LOCKS=0`:
//! not even the index's stat cache is written), and runs no command the repository's config names
//! (a file-system monitor, an external diff, a clean filter, a hook). The one thing it writes is a
//! claim ([`claim.rs`](crate::git::claim)): a commit object and a ref under `refs/bmad/claims/`,
//! pushed to the team's remote (kept under `refs/bmad/pending/` until a fetch reaches the remote
//! when it could not be; and, when a human releases one, its record under `refs/bmad/released/`:
//! [`board.rs`](crate::git::board)); the work tree, the index and the branches are never touched.
//! `bmad-mcp init` also sets the merge driver of the method's sprint status in the clone's own
//! config, and the driver runs git's line merge on texts it is handed
//! ([`merge_driver.rs`](crate::git::merge_driver)).

mod blobs;
mod board;
mod claim;
mod diff;
mod file_history;
mod merge_driver;
mod resolve;

pub use blobs::{blob_id, GitPath};
pub use board::{Board, RemoteRef, RELEASED};
pub use claim::{pending_ref, Claim, CLAIMS, NETWORK_DEADLINE, PENDING};
pub use file_history::{Commit, LastChange};
pub use merge_driver::{merge_bytes, merge_text, set_driver};
pub use resolve::Side;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::workflow::person::Person;

/// The most output read from one git command; more is treated as a failure.
const MAX_OUTPUT: u64 = 4 * 1024 * 1024;

/// Paths named by [`Repo::changed_since`] at most.
pub const MAX_PATHS: usize = 10_000;

/// The project's own files as pathspecs, relative to the project: not the workflow's state
/// (`.bmad-task/`), not its documents (`.claude/`, compared with the digests the session
/// holds), not the team's policy and lessons (`.bmad/`).
pub const PROJECT_FILES: [&str; 4] = [
    ".",
    ":(exclude).bmad-task",
    ":(exclude).claude",
    ":(exclude).bmad",
];

/// Whether `rel` (relative to the project) is one of the project's own files, as
/// [`PROJECT_FILES`] selects them: not in the workflow's folders.
pub fn is_project_file(rel: &str) -> bool {
    let first = rel.split('/').next().unwrap_or(rel);
    ![".bmad-task", ".claude", ".bmad"].contains(&first)
}

/// A git work tree that holds the project, found by its `.git` without starting git. One
/// value serves one call: what git said of the new files with an answer about the changed
/// ones is kept in it for that call.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The project directory (where git runs; paths are relative to it).
    dir: PathBuf,
    /// The top of the work tree (the folder of `.git`): `git status` names paths from it.
    top: PathBuf,
    /// The repository's own directory for this work tree (`.git`, or the one a linked
    /// work tree's `.git` file names) and the directory it shares with every work tree.
    git_dir: PathBuf,
    common_dir: PathBuf,
    /// The new files (untracked, not ignored) the last `git status` that answered
    /// [`Repo::changed_since`] named, with its pathspecs: [`Repo::untracked`] then asks git
    /// nothing.
    new_files: NewFiles,
}

/// The pathspecs a `git status` was asked with, and the new files it named.
type NewFiles = Arc<Mutex<Option<(Vec<String>, Vec<GitPath>)>>>;

impl PartialEq for Repo {
    fn eq(&self, other: &Repo) -> bool {
        (&self.dir, &self.git_dir, &self.common_dir)
            == (&other.dir, &other.git_dir, &other.common_dir)
    }
}

impl Eq for Repo {}

/// What git says of the work tree checked out: asked once, then kept while nothing it
/// depends on changes ([`Repo::facts`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkout {
    /// The branch checked out; `None` on a detached HEAD.
    pub branch: Option<String>,
    /// The commit checked out (40 or 64 hex digits); `None` before the first commit.
    pub head: Option<String>,
    /// git's `user.name` and `user.email` (the repository's, else the user's), when asked.
    pub identity: Option<Person>,
}

/// The human: `over` when the settings name one (`--owner`, `BMAD_OWNER`), else git's
/// identity where `dir` is in a repository.
pub fn owner(over: Option<&Person>, dir: &Path) -> Option<Person> {
    over.cloned().or_else(|| Repo::at(dir)?.identity())
}

impl Repo {
    /// The repository holding `dir`: the nearest `.git` in `dir` or a folder above it (a
    /// directory with a HEAD, or a linked work tree's file naming one). No process is
    /// started: where git then disagrees, each answer is `None`.
    pub fn at(dir: &Path) -> Option<Repo> {
        let dot_git = dir
            .ancestors()
            .map(|d| d.join(".git"))
            .find(|p| p.exists())?;
        let top = dot_git.parent()?.to_path_buf();
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let named = text.strip_prefix("gitdir:")?.trim();
            dot_git.parent()?.join(named)
        };
        // Every repository has a HEAD: a folder merely named `.git` is not one.
        if !git_dir.join("HEAD").is_file() {
            return None;
        }
        let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
            Ok(text) => git_dir.join(text.trim()),
            Err(_) => git_dir.clone(),
        };
        Some(Repo {
            dir: dir.to_path_buf(),
            top,
            git_dir,
            common_dir,
            new_files: Arc::default(),
        })
    }

    /// This work tree's own folder of the repository (`.git`, or the one a linked work
    /// tree's `.git` file names).
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The folder every work tree of this clone shares (`.git` of the main work tree).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Where the project is in its work tree: the folders from the work tree's top down
    /// to it (empty when the project is the top).
    pub fn project_in_tree(&self) -> &Path {
        self.dir.strip_prefix(&self.top).unwrap_or(Path::new(""))
    }

    /// Every work tree of this clone that is there on disk, the main one first, as
    /// `git worktree list --porcelain -z` lists them (a bare repository's entry, and one
    /// git marks prunable, left out), and only those that are this clone's on their own
    /// side too ([`is_own_worktree`]). Empty when git cannot say.
    pub fn worktrees(&self) -> Vec<PathBuf> {
        let Some(out) = run(&self.dir, &[], &["worktree", "list", "--porcelain", "-z"]) else {
            return Vec::new();
        };
        let Ok(common) = self.common_dir.canonicalize() else {
            return Vec::new();
        };
        let mut found = Vec::new();
        // Each field ends with a NUL; an empty field ends a work tree's record, whose
        // first field is `worktree <path>`.
        let mut fields = out.split('\0').peekable();
        while fields.peek().is_some() {
            let record: Vec<&str> = fields.by_ref().take_while(|f| !f.is_empty()).collect();
            let Some(path) = record.first().and_then(|f| f.strip_prefix("worktree ")) else {
                continue;
            };
            let gone = record[1..]
                .iter()
                .any(|f| *f == "bare" || f.starts_with("prunable"));
            let path = PathBuf::from(path);
            if !gone && path.is_dir() && is_own_worktree(&path, &common) {
                found.push(path);
            }
        }
        found
    }

    /// The branch and the commit checked out: read from the repository's files (HEAD, the
    /// branch's ref, `packed-refs`) without starting git, else from one `git rev-parse` (a
    /// second process, `symbolic-ref`, only before the first commit, when HEAD names no
    /// commit yet).
    pub fn branch_and_head(&self) -> (Option<String>, Option<String>) {
        if let Some(found) = self.head_in_files() {
            return found;
        }
        let args = ["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"];
        let Some(out) = run(&self.dir, &[], &args) else {
            let b = run(&self.dir, &[], &["symbolic-ref", "-q", "--short", "HEAD"]);
            let b = b.as_deref().map(str::trim).filter(|b| !b.is_empty());
            return (b.map(str::to_string), None);
        };
        let mut lines = out.lines().map(str::trim);
        let head = lines.next().filter(|c| is_commit_id(c)).map(str::to_string);
        let branch = lines
            .next()
            .and_then(|r| r.strip_prefix("refs/heads/"))
            .filter(|b| !b.is_empty())
            .map(str::to_string);
        (branch, head)
    }

    /// The branch checked out here as the work tree's `HEAD` file names it, read without
    /// starting git: for a reading repeated on every look (a story's worktree, on each
    /// `status` and each page load); `None` on a detached HEAD or an unreadable file.
    pub fn branch_in_head(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let branch = head
            .trim()
            .strip_prefix("ref:")?
            .trim()
            .strip_prefix("refs/heads/")?;
        (!branch.is_empty()).then(|| branch.to_string())
    }

    /// HEAD as the repository's files give it: the branch it names, and the commit that
    /// branch (or a detached HEAD) is at; `None` where only git can tell (a reftable
    /// repository, a ref outside `refs/heads/`, a file that cannot be read).
    fn head_in_files(&self) -> Option<(Option<String>, Option<String>)> {
        if self.common_dir.join("reftable").exists() {
            return None;
        }
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let head = head.trim();
        let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
            return is_commit_id(head).then(|| (None, Some(head.to_string())));
        };
        let branch = name
            .strip_prefix("refs/heads/")
            .filter(|b| !b.is_empty())
            .map(str::to_string);
        Some((branch, self.commit_of(name, 0)?))
    }

    /// The commit the branch ref `name` is at (`Some(None)`: it has none yet), its file
    /// read, else its line of `packed-refs`; a symbolic ref followed a few times.
    fn commit_of(&self, name: &str, depth: u8) -> Option<Option<String>> {
        let plain = |p: &str| !p.is_empty() && p != "." && p != "..";
        let branch = name.strip_prefix("refs/heads/")?;
        if depth > 4 || !branch.split('/').all(plain) {
            return None;
        }
        match std::fs::read_to_string(self.common_dir.join(name)) {
            Ok(text) => {
                let text = text.trim();
                return match text.strip_prefix("ref:") {
                    Some(next) => self.commit_of(next.trim(), depth + 1),
                    None => is_commit_id(text).then(|| Some(text.to_string())),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
        let packed = match std::fs::read_to_string(self.common_dir.join("packed-refs")) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
            Err(_) => return None,
        };
        let id = packed
            .lines()
            .filter(|l| !l.starts_with(['#', '^']))
            .find_map(|l| l.split_once(' ').filter(|(_, r)| r.trim() == name))
            .map(|(id, _)| id);
        match id {
            Some(id) => is_commit_id(id).then(|| Some(id.to_string())),
            None => Some(None),
        }
    }

    /// git's `user.name` and `user.email` here (the repository's, else the user's).
    pub fn identity(&self) -> Option<Person> {
        self.configured().0
    }

    /// What the config says (the identity, the filter drivers), from one `git config`
    /// kept per work tree while the config files are unchanged: a commit or a checkout
    /// does not ask it again.
    fn configured(&self) -> (Option<Person>, Vec<String>) {
        let print = self.config_print();
        {
            let kept = CONFIGURED.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, said)) = kept.get(&self.dir).filter(|(p, _)| *p == print) {
                return said.clone();
            }
        }
        let (person, drivers) = self.identity_and_drivers();
        let said = (person, drivers.unwrap_or_default());
        let mut kept = CONFIGURED.lock().unwrap_or_else(|e| e.into_inner());
        kept.insert(self.dir.clone(), (print, said.clone()));
        said
    }

    /// The size, time and inode of every config file git reads here.
    fn config_print(&self) -> ConfigPrint {
        let mut files = vec![
            self.common_dir.join("config"),
            self.git_dir.join("config.worktree"),
            PathBuf::from("/etc/gitconfig"),
        ];
        files.extend(dirs::home_dir().map(|h| h.join(".gitconfig")));
        files.extend(dirs::config_dir().map(|c| c.join("git/config")));
        files.iter().map(|f| stat(f)).collect()
    }

    /// The identity, and from the same read of the config the filter drivers it defines.
    fn identity_and_drivers(&self) -> (Option<Person>, Option<Vec<String>>) {
        let Some(out) = run(
            &self.dir,
            &[],
            &[
                "config",
                "--get-regexp",
                r"^(user\.(name|email)|filter\..+)$",
            ],
        ) else {
            return (None, None);
        };
        let (mut name, mut email) = (None, None);
        for line in out.lines() {
            match line.split_once(' ') {
                Some(("user.name", v)) => name = Some(v.to_string()),
                Some(("user.email", v)) => email = Some(v.to_string()),
                _ => {}
            }
        }
        let keys = out.lines().map(|l| l.split(' ').next().unwrap_or(l));
        (
            Person::new(name.as_deref(), email.as_deref()),
            Some(drivers_in(keys)),
        )
    }

    /// The branch, the commit checked out, and with `identity` who git says the human is:
    /// the first two read from the repository's files when nothing is kept for this work
    /// tree under its fingerprint, the identity asked of git while the config is new.
    pub fn facts(&self, identity: bool) -> Checkout {
        let (print, mut known) = self.known();
        if known.facts.is_none() {
            let (branch, head) = self.branch_and_head();
            known.facts = Some(Checkout {
                branch,
                head,
                identity: None,
            });
        }
        let mut facts = known.facts.clone().unwrap_or_default();
        self.keep(print, known);
        if identity {
            facts.identity = self.configured().0;
        }
        facts
    }

    /// The filter drivers the repository's config (and the user's) defines: a read that
    /// compares the work tree with a commit would run their `clean` or `process` command
    /// on a file whose stat changed, so every such read turns them off.
    fn drivers(&self) -> Vec<String> {
        self.configured().1
    }

    /// What is kept for this work tree while its fingerprint holds, and the fingerprint.
    fn known(&self) -> (Option<Fingerprint>, Cached) {
        let print = self.fingerprint();
        let kept = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        let known = kept
            .get(&self.dir)
            .filter(|(p, _)| print.as_ref() == Some(p))
            .map(|(_, k)| k.clone())
            .unwrap_or_default();
        (print, known)
    }

    fn keep(&self, print: Option<Fingerprint>, known: Cached) {
        if let Some(print) = print {
            let mut kept = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
            kept.insert(self.dir.clone(), (print, known));
        }
    }

    /// `-c` settings that turn every filter driver off: an empty command is none.
    fn without_drivers(&self) -> Vec<String> {
        self.drivers()
            .iter()
            .flat_map(|d| ["clean", "smudge", "process"].map(|k| format!("filter.{d}.{k}=")))
            .collect()
    }

    /// The commit checked out and whether the project's own files ([`PROJECT_FILES`]) have
    /// changes (`git status`), read as every other read is: no monitor, no filter the
    /// config names. The workflow's files do not count: with `.bmad-task/` committed, as
    /// `bmad-mcp init` advises, every run would otherwise read as uncommitted.
    pub fn state(&self) -> Option<(Option<String>, bool)> {
        let head = self.facts(false).head;
        let off = self.without_drivers();
        let mut args = vec!["status", "--porcelain", "--no-renames", "--"];
        args.extend_from_slice(&PROJECT_FILES);
        let status = run(&self.dir, &off, &args)?;
        Some((head, !status.is_empty()))
    }

    /// The files under the project (relative to it) whose content in the work tree is not
    /// the one in `commit`: changed by later commits or by hand since, deleted, or added
    /// and committed. `pathspecs` narrow it (git's syntax: `:(exclude).claude`). `None`
    /// when the commit is not in this repository (never pushed from another clone) or git
    /// fails.
    ///
    /// Against the commit checked out, one `git status` answers, and the new files it also
    /// names are kept for [`Repo::untracked`] in this value: a call asks git once for both.
    pub fn changed_since(&self, commit: &str, pathspecs: &[&str]) -> Option<Vec<GitPath>> {
        if !is_commit_id(commit) {
            return None;
        }
        if self.facts(false).head.as_deref() == Some(commit) {
            if let Some(changed) = self.status_against_head(pathspecs) {
                return Some(changed);
            }
        }
        // What an earlier status said of the new files is not this answer's moment.
        *self.new_files.lock().unwrap_or_else(|e| e.into_inner()) = None;
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
        let off = self.without_drivers();
        let out = run_bytes(&self.dir, &off, &args)?;
        Some(names(&out).take(MAX_PATHS).collect())
    }

    /// The files under the project (relative to it) that git does not track and does not
    /// ignore: new work not added yet. `pathspecs` narrow it as for [`Repo::changed_since`].
    /// `None` when git fails or names more than [`MAX_PATHS`].
    pub fn untracked(&self, pathspecs: &[&str]) -> Option<Vec<GitPath>> {
        let said = self.new_files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, paths)) = said.as_ref().filter(|(p, _)| *p == pathspecs) {
            return (paths.len() <= MAX_PATHS).then(|| paths.clone());
        }
        drop(said);
        let mut args = vec!["ls-files", "--others", "--exclude-standard", "-z", "--"];
        args.extend_from_slice(if pathspecs.is_empty() {
            &["."]
        } else {
            pathspecs
        });
        let out = run_bytes(&self.dir, &[], &args)?;
        let paths: Vec<GitPath> = names(&out).take(MAX_PATHS + 1).collect();
        (paths.len() <= MAX_PATHS).then_some(paths)
    }

    /// [`Repo::changed_since`] the commit checked out, from `git status`: the files whose
    /// content in the work tree is not HEAD's (as `git diff HEAD` names them), with the new
    /// files it names kept for [`Repo::untracked`]. `None` when git fails or names a path
    /// outside the project (git would then not be reading this folder as its work tree).
    fn status_against_head(&self, pathspecs: &[&str]) -> Option<Vec<GitPath>> {
        let prefix = self.dir.strip_prefix(&self.top).ok()?;
        let prefix = prefix.as_os_str().as_encoded_bytes();
        let prefix = if prefix.is_empty() {
            Vec::new()
        } else {
            [prefix, b"/"].concat()
        };
        let mut args = vec![
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
        ];
        args.extend_from_slice(if pathspecs.is_empty() {
            &["."]
        } else {
            pathspecs
        });
        let out = run_bytes(&self.dir, &self.without_drivers(), &args)?;
        let (mut changed, mut new) = (Vec::new(), Vec::new());
        for entry in out.split(|b| *b == 0) {
            let (path, is_new) = match status_entry(entry) {
                Some(Entry::Changed { xy, head, path }) if self.differs(xy, head, path) => {
                    (path, false)
                }
                Some(Entry::Unmerged(path)) => (path, false),
                Some(Entry::New(path)) => (path, true),
                _ => continue,
            };
            let rel = GitPath::new(path.strip_prefix(prefix.as_slice())?.to_vec());
            if is_new {
                new.push(rel);
            } else if changed.len() < MAX_PATHS {
                changed.push(rel);
            }
        }
        let asked = pathspecs.iter().map(|p| p.to_string()).collect();
        *self.new_files.lock().unwrap_or_else(|e| e.into_inner()) = Some((asked, new));
        Some(changed)
    }

    /// Whether the file at `path` (from the top of the work tree) differs from HEAD, given
    /// its status `xy` and HEAD's blob id: changed in the index or the work tree alone, it
    /// does; changed in both, its content is compared with HEAD's blob, as `git diff HEAD`
    /// compares it, read within the same bounds as every other reading (a link's own id,
    /// a FIFO or a large file named, never read).
    fn differs(&self, xy: &[u8], head_blob: &str, path: &[u8]) -> bool {
        if xy.contains(&b'.') {
            return true;
        }
        let in_head = head_blob.bytes().any(|b| b != b'0');
        let path = GitPath::new(path.to_vec());
        let now = blobs::ids(&self.top, &[path], head_blob.len() == 64).pop();
        now.flatten().as_deref() != in_head.then_some(head_blob)
    }

    /// The blob id git would give each file's content in the work tree, unfiltered (as
    /// `git hash-object --no-filters` does), in order, read within bounds
    /// (`blobs::ids`: a link's own id, a FIFO or a device named, a large file by its
    /// size and time); `None` for a file that is not there. Computed here, without git:
    /// `like` is a commit id of the repository, whose length says the hash (SHA-1 ids
    /// have 40 digits, SHA-256 ones 64).
    pub fn blob_ids(&self, paths: &[GitPath], like: &str) -> Vec<Option<String>> {
        blobs::ids(&self.dir, paths, like.len() == 64)
    }

    /// What is compared to tell whether the checkout may have changed: HEAD's text, and
    /// the size, time and inode of the files a checkout or a commit rewrites (HEAD, the
    /// branch's ref, `packed-refs`). `None` when HEAD cannot be read.
    fn fingerprint(&self) -> Option<Fingerprint> {
        let head = std::fs::read_to_string(self.git_dir.join("HEAD")).ok()?;
        let mut files = vec![
            self.git_dir.join("HEAD"),
            self.common_dir.join("packed-refs"),
        ];
        if let Some(r) = head.trim().strip_prefix("ref:") {
            files.push(self.common_dir.join(r.trim()));
        }
        let stats = files.iter().map(|f| stat(f)).collect();
        Some(Fingerprint { head, stats })
    }
}

/// Whether the work tree at `path` is one of the clone whose shared folder is `common`
/// (canonical), seen from the work tree itself: git lists whatever the files under
/// `<common>/worktrees/` name, and anyone who can write there could name any repository.
/// The main work tree's `.git` is `common` itself; a linked one's `.git` is a file whose
/// `gitdir:` leads to `<common>/worktrees/<name>`, whose `commondir` leads back to
/// `common`.
fn is_own_worktree(path: &Path, common: &Path) -> bool {
    let dot_git = path.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return false;
    };
    if meta.is_dir() {
        return dot_git.canonicalize().is_ok_and(|d| d == common);
    }
    if !meta.is_file() {
        return false;
    }
    let Some(git_dir) = std::fs::read_to_string(&dot_git)
        .ok()
        .and_then(|t| Some(path.join(t.strip_prefix("gitdir:")?.trim())))
        .and_then(|d| d.canonicalize().ok())
    else {
        return false;
    };
    let in_ours = git_dir
        .parent()
        .is_some_and(|p| p == common.join("worktrees"));
    let back = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|t| git_dir.join(t.trim()).canonicalize().ok());
    in_ours && back.as_deref() == Some(common)
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    head: String,
    stats: Vec<Option<(u64, std::time::SystemTime, u64)>>,
}

fn stat(path: &Path) -> Option<(u64, std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some((m.len(), m.modified().ok()?, inode))
}

/// What was read of a work tree's checkout, kept while its fingerprint holds: a
/// long-running server reads nothing more for a call in a repository where nothing moved.
#[derive(Debug, Clone, Default)]
struct Cached {
    facts: Option<Checkout>,
}

/// Per work tree (the project directory): what was read, and the fingerprint it was read
/// under. One per process: every store and call of it shares what git said.
type Kept = Mutex<HashMap<PathBuf, (Fingerprint, Cached)>>;
static KNOWN: std::sync::LazyLock<Kept> = std::sync::LazyLock::new(Default::default);

/// Per work tree: what its config said (the identity, the filter drivers), and the stamps
/// of the config files then.
type ConfigPrint = Vec<Option<(u64, std::time::SystemTime, u64)>>;
type Configured = Mutex<HashMap<PathBuf, (ConfigPrint, (Option<Person>, Vec<String>))>>;
static CONFIGURED: std::sync::LazyLock<Configured> = std::sync::LazyLock::new(Default::default);

/// The drivers that config keys `filter.<driver>.<key>` name, each once.
fn drivers_in<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut drivers: Vec<String> = keys
        .filter_map(|key| key.strip_prefix("filter.")?.rsplit_once('.'))
        .map(|(driver, _)| driver.to_string())
        .filter(|d| !d.is_empty())
        .collect();
    drivers.sort();
    drivers.dedup();
    drivers
}

/// One entry of `git status --porcelain=v2 -z` (renames are not asked for), its paths as
/// git's bytes.
enum Entry<'a> {
    /// A tracked file changed in the index (`xy`'s first letter) or the work tree (its
    /// second), `.` where unchanged, with HEAD's blob id for it.
    Changed {
        xy: &'a [u8],
        head: &'a str,
        path: &'a [u8],
    },
    /// A file a merge left unmerged.
    Unmerged(&'a [u8]),
    /// A file git does not track and does not ignore.
    New(&'a [u8]),
}

fn status_entry(entry: &[u8]) -> Option<Entry<'_>> {
    let fields = |n: usize| -> Vec<&[u8]> { entry.splitn(n, |b| *b == b' ').collect() };
    match entry.first()? {
        b'1' => {
            // 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
            let f = fields(9);
            let path = *f.get(8)?;
            Some(Entry::Changed {
                xy: f[1],
                head: std::str::from_utf8(f[6]).ok()?,
                path,
            })
        }
        b'u' => {
            // u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>
            fields(11).get(10).map(|path| Entry::Unmerged(path))
        }
        b'?' => entry.strip_prefix(b"? ").map(Entry::New),
        _ => None,
    }
}

/// One side of a file a merge left conflicted, as the index holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSide {
    /// The branch (or commit) the side comes from.
    pub branch: String,
    pub text: String,
}

impl Repo {
    /// Both sides of `rel` (relative to the project) while a merge is under way and left
    /// it conflicted: ours (index stage 2, the branch checked out) and theirs (stage 3,
    /// the branch being merged, as `MERGE_HEAD` is named). Read whole from the index, not
    /// from the half-merged text in the work tree, whose common lines git already chose.
    /// `None` outside a merge or when the file is not conflicted.
    pub fn merge_sides(&self, rel: &str) -> Option<(MergeSide, MergeSide)> {
        let merge_head = std::fs::read_to_string(self.git_dir.join("MERGE_HEAD")).ok()?;
        let merge_head = merge_head.lines().next()?.trim().to_string();
        let off = self.without_drivers();
        let show = |stage: u8| run(&self.dir, &off, &["show", &format!(":{stage}:./{rel}")]);
        let (ours, theirs) = (show(2)?, show(3)?);
        let branch = self.branch_and_head().0.unwrap_or_else(|| "HEAD".into());
        let names = [
            "name-rev",
            "--name-only",
            "--no-undefined",
            "--refs=refs/heads/*",
            "--refs=refs/remotes/*",
        ];
        let theirs_branch = is_commit_id(&merge_head)
            .then(|| {
                run(
                    &self.dir,
                    &[],
                    &[&names[..], &[merge_head.as_str()]].concat(),
                )
            })
            .flatten()
            .map(|n| n.trim().trim_start_matches("remotes/").to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| merge_head.chars().take(12).collect());
        Some((
            MergeSide { branch, text: ours },
            MergeSide {
                branch: theirs_branch,
                text: theirs,
            },
        ))
    }
}

/// Whether `s` is a full commit id (SHA-1 or SHA-256), never an option or a range.
pub fn is_commit_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The names in git's `-z` output, each as its bytes.
fn names(out: &[u8]) -> impl Iterator<Item = GitPath> + '_ {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| GitPath::new(p.to_vec()))
}

/// [`run_bytes`]'s output as text; `None` when it is not UTF-8.
fn run(dir: &Path, settings: &[String], args: &[&str]) -> Option<String> {
    String::from_utf8(run_bytes(dir, settings, args)?).ok()
}

/// Runs `git -C dir args…` without a shell or a terminal, with stdin closed: its stdout
/// when it succeeds and says less than [`MAX_OUTPUT`], else `None`.
fn run_bytes(dir: &Path, settings: &[String], args: &[&str]) -> Option<Vec<u8>> {
    #[cfg(test)]
    tests::STARTED.with(|n| n.set(n.get() + 1));
    let mut cmd = Command::new("git");
    // Nothing the repository's config names is run for a read: no file-system monitor
    // (`core.fsmonitor` can name any command), no external diff or text conversion, no
    // filter driver (`settings` turns off the ones the config defines).
    cmd.arg("-C").arg(dir).args(["-c", "core.fsmonitor=false"]);
    for s in settings {
        cmd.arg("-c").arg(s);
    }
    cmd.args(args);
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
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// The git processes started on this thread.
        pub(super) static STARTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The git processes `f` starts on this thread.
    fn started<T>(f: impl FnOnce() -> T) -> (T, usize) {
        let before = STARTED.with(|n| n.get());
        let value = f();
        (value, STARTED.with(|n| n.get()) - before)
    }

    /// What git itself says: `rev-parse`'s branch and commit, `diff HEAD`'s files.
    fn git_says(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// HEAD read from the repository's files agrees with git's `rev-parse` on a branch, in
    /// `packed-refs`, detached, before the first commit and in a linked work tree, and asks
    /// git nothing.
    #[test]
    fn head_from_the_files_is_the_one_git_names() {
        let (dir, repo) = repo();
        let (found, n) = started(|| repo.branch_and_head());
        assert_eq!((found, n), ((Some("main".into()), None), 0), "unborn");
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let says = |d: &Path| {
            let head = git_says(d, &["rev-parse", "HEAD"]);
            let branch = git_says(d, &["symbolic-ref", "-q", "--short", "HEAD"]);
            ((!branch.is_empty()).then_some(branch), Some(head))
        };
        let (found, n) = started(|| repo.branch_and_head());
        assert_eq!((found, n), (says(dir.path()), 0), "a loose ref");
        git(dir.path(), &["pack-refs", "--all"]);
        assert!(!dir.path().join(".git/refs/heads/main").exists());
        assert_eq!(repo.head_in_files(), Some(says(dir.path())), "packed");
        git(dir.path(), &["checkout", "-q", "--detach"]);
        assert_eq!(repo.head_in_files(), Some(says(dir.path())), "detached");
        git(dir.path(), &["checkout", "-q", "main"]);
        let linked = dir.path().join("wt");
        git(
            dir.path(),
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "topic",
                linked.to_str().unwrap(),
            ],
        );
        git(&linked, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let there = Repo::at(&linked).unwrap();
        assert_eq!(
            there.head_in_files(),
            Some(says(&linked)),
            "a linked work tree"
        );
        assert_eq!(repo.head_in_files(), Some(says(dir.path())));
    }

    /// Against the commit checked out, `git status` answers what `git diff HEAD` would,
    /// file by file (a change in the index, in the work tree, in both, one undone in the
    /// work tree, a file added then removed), with the new files beside: one process for
    /// both answers, and none for the identity once asked while the config is unchanged.
    #[test]
    fn one_process_names_the_changed_and_the_new_files() {
        let (dir, _) = repo();
        let p = dir.path();
        for f in ["staged", "unstaged", "both", "undone", "deleted"] {
            std::fs::write(p.join(f), "a\n").unwrap();
        }
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "one"]);
        std::fs::write(p.join("staged"), "b\n").unwrap();
        std::fs::write(p.join("both"), "b\n").unwrap();
        std::fs::write(p.join("undone"), "b\n").unwrap();
        std::fs::write(p.join("added-then-gone"), "b\n").unwrap();
        git(p, &["add", "staged", "both", "undone", "added-then-gone"]);
        std::fs::write(p.join("unstaged"), "b\n").unwrap();
        std::fs::write(p.join("both"), "c\n").unwrap();
        std::fs::write(p.join("undone"), "a\n").unwrap();
        std::fs::remove_file(p.join("added-then-gone")).unwrap();
        std::fs::remove_file(p.join("deleted")).unwrap();
        std::fs::write(p.join("new.txt"), "n\n").unwrap();
        let repo = Repo::at(p).unwrap();
        let head = repo.facts(false).head.unwrap();
        repo.identity();
        let ((changed, new), n) = started(|| {
            let changed = repo.changed_since(&head, &[]).unwrap();
            (changed, repo.untracked(&[]).unwrap())
        });
        assert_eq!(n, 1, "one git process");
        let mut diff: Vec<String> = git_says(p, &["diff", "--name-only", "HEAD"])
            .lines()
            .map(str::to_string)
            .collect();
        diff.sort();
        let changed = keys(Some(changed));
        assert_eq!(changed, diff);
        assert_eq!(changed, ["both", "deleted", "staged", "unstaged"]);
        assert_eq!(keys(Some(new)), ["new.txt"]);
        // The same value answers from what git said; a new value (a new call) asks again.
        std::fs::write(p.join("newer.txt"), "n\n").unwrap();
        let (again, n) = started(|| repo.untracked(&[]));
        assert_eq!((keys(again), n), (vec!["new.txt".to_string()], 0));
        let fresh = Repo::at(p).unwrap();
        assert_eq!(fresh.untracked(&[]).unwrap().len(), 2);
        // Against an older commit, `git diff` answers, and says the same.
        git(p, &["commit", "-q", "--allow-empty", "-m", "two"]);
        let (older, n) = started(|| fresh.changed_since(&head, &[]));
        assert_eq!((keys(older), n), (changed, 1));
        let (_, n) = started(|| (fresh.facts(true), fresh.identity()));
        assert_eq!(n, 0, "a commit does not ask the config again");
    }

    /// git run in `dir` for a test, whatever repository the test process runs in (no
    /// `GIT_DIR` or `GIT_WORK_TREE` of its own) and with an identity to commit as. Its
    /// output is kept (a control that runs a filter or a monitor makes git warn on stderr)
    /// and shown only when it fails.
    pub(crate) fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=A", "-c", "user.email=a@e.org"])
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    /// The names `changed_since` gives, as text.
    fn keys(paths: Option<Vec<GitPath>>) -> Vec<String> {
        let mut keys: Vec<String> = paths.unwrap().iter().map(GitPath::key).collect();
        keys.sort();
        keys
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
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(Repo::at(dir.path()), None, "an empty folder named .git");
    }

    #[test]
    fn identity_branch_head_and_changes_are_read() {
        use std::os::unix::ffi::OsStrExt;
        let (dir, repo) = repo();
        let id = repo.identity().unwrap();
        assert_eq!(id.to_string(), "Ada Lovelace <ada@example.org>");
        assert_eq!(
            repo.branch_and_head(),
            (Some("main".into()), None),
            "no commit yet"
        );
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "n\n").unwrap();
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let first = repo.branch_and_head().1.unwrap();
        assert!(is_commit_id(&first));
        assert_eq!(keys(repo.changed_since(&first, &[])), Vec::<String>::new());
        // Changed by hand (not committed), and by a later commit.
        std::fs::write(dir.path().join("src/a.rs"), "b\n").unwrap();
        std::fs::write(dir.path().join("notes.md"), "m\n").unwrap();
        git(dir.path(), &["commit", "-q", "-am", "two"]);
        std::fs::write(dir.path().join("notes.md"), "o\n").unwrap();
        assert_eq!(
            keys(repo.changed_since(&first, &[])),
            ["notes.md", "src/a.rs"]
        );
        assert_eq!(
            keys(repo.changed_since(&first, &[":(exclude)notes.md"])),
            ["src/a.rs"]
        );
        // A commit this repository does not have, and text that is no commit id.
        assert_eq!(repo.changed_since(&"0".repeat(40), &[]), None);
        assert_eq!(repo.changed_since("--output=x", &[]), None);
        let ids = repo.blob_ids(
            &["notes.md".into(), "gone.md".into(), "src/a.rs".into()],
            &first,
        );
        // A name that is not UTF-8 is named as git names it.
        let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
        std::fs::write(dir.path().join(odd), "x\n").unwrap();
        let new = repo.untracked(&[]).unwrap();
        assert_eq!(new, [GitPath::new(b"caf\xe9.md".to_vec())]);
        assert!(repo.blob_ids(&new, &first)[0].is_some());
        // The same where `git status` answers, against the commit checked out.
        let head = repo.facts(false).head.unwrap();
        let fresh = Repo::at(dir.path()).unwrap();
        assert_eq!(keys(fresh.changed_since(&head, &[])), ["notes.md"]);
        assert_eq!(fresh.untracked(&[]).unwrap(), new);
        assert_eq!(ids.len(), 3);
        assert!(ids[0].is_some() && ids[1].is_none() && ids[2].is_some());
        assert_ne!(ids[0], ids[2]);
        // The ids are git's own.
        let out = Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["hash-object", "--no-filters", "--", "notes.md", "src/a.rs"])
            .output()
            .unwrap();
        let git_ids: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(git_ids, [ids[0].clone().unwrap(), ids[2].clone().unwrap()]);
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
        let head = repo.branch_and_head().1.unwrap();
        assert_eq!(keys(repo.changed_since(&head, &[])), ["f"]);
        assert!(repo.identity().is_some() && repo.branch_and_head().0.is_some());
        assert!(!ran.exists(), "the monitor ran");
        git(dir.path(), &["diff", "--name-only", &head]);
        assert!(ran.exists(), "control: git runs the monitor by itself");
    }

    /// Filter drivers that the config defines and `.gitattributes` or
    /// `.git/info/attributes` select: git runs their `clean` and `process` commands when
    /// it compares a changed file (the control shows it does); the server's reads
    /// (`changed_since`, `state`) never do.
    #[cfg(unix)]
    #[test]
    fn no_filter_the_repository_names_is_run() {
        let (dir, _) = repo();
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        std::fs::write(dir.path().join("g"), "a\n").unwrap();
        git(dir.path(), &["add", "f", "g"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let ran = dir.path().join("ran");
        let touch = format!("sh -c 'touch \"{}\"; cat'", ran.display());
        git(dir.path(), &["config", "filter.evil.clean", &touch]);
        git(dir.path(), &["config", "filter.evil.process", &touch]);
        git(dir.path(), &["config", "filter.other.x.clean", &touch]);
        std::fs::write(dir.path().join(".gitattributes"), "f filter=evil\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        std::fs::write(
            dir.path().join(".git/info/attributes"),
            "g filter=other.x\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("f"), "b\n").unwrap();
        std::fs::write(dir.path().join("g"), "b\n").unwrap();
        // A fresh reader, as a new process would be.
        let repo = Repo::at(dir.path()).unwrap();
        let head = repo.branch_and_head().1.unwrap();
        assert_eq!(keys(repo.changed_since(&head, &[])), ["f", "g"]);
        assert_eq!(repo.state().unwrap(), (Some(head.clone()), true));
        assert!(!ran.exists(), "a filter ran");
        git(dir.path(), &["status", "--porcelain"]);
        assert!(ran.exists(), "control: git runs the filter by itself");
    }

    /// With the workflow's files committed (as `bmad-mcp init` advises), the server's own
    /// writes since do not make the project read as changed; a project file does.
    #[test]
    fn the_workflows_files_do_not_make_the_project_dirty() {
        let (dir, _) = repo();
        for f in [
            ".bmad-task/s.json",
            ".claude/specs/t/01.md",
            ".bmad/lessons/l.md",
            "src.rs",
        ] {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "1\n").unwrap();
        }
        git(dir.path(), &["add", "."]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let head = Repo::at(dir.path()).unwrap().branch_and_head().1;
        for f in [
            ".bmad-task/s.json",
            ".claude/specs/t/01.md",
            ".bmad/lessons/l.md",
        ] {
            std::fs::write(dir.path().join(f), "2\n").unwrap();
        }
        std::fs::write(dir.path().join(".bmad-task/new.json"), "new\n").unwrap();
        let repo = Repo::at(dir.path()).unwrap();
        assert_eq!(repo.state().unwrap(), (head.clone(), false));
        std::fs::write(dir.path().join("src.rs"), "2\n").unwrap();
        assert_eq!(repo.state().unwrap(), (head, true));
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
        let head = repo.branch_and_head().1.unwrap();
        std::fs::write(sub.join("x.txt"), "2\n").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "2\n").unwrap();
        assert_eq!(keys(repo.changed_since(&head, &[])), ["x.txt"]);
        assert_eq!(repo.project_in_tree(), Path::new("app"));
        std::fs::write(sub.join("new.txt"), "1\n").unwrap();
        std::fs::write(dir.path().join("new-outside.txt"), "1\n").unwrap();
        assert_eq!(keys(repo.changed_since(&head, &[])), ["x.txt"]);
        assert_eq!(keys(repo.untracked(&[])), ["new.txt"]);
        let older = repo.changed_since(&head, &[]);
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "two"]);
        assert_eq!(
            repo.changed_since(&head, &[]),
            older,
            "`git diff` says the same"
        );
    }

    #[test]
    fn the_cache_asks_again_only_when_the_repository_moved() {
        let (dir, repo) = repo();
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let first = repo.facts(true);
        assert_eq!(first.branch.as_deref(), Some("main"));
        assert_eq!(
            first.identity.as_ref().unwrap().to_string(),
            "Ada Lovelace <ada@example.org>"
        );
        // A commit, a new branch and a new name are each seen at the next call.
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "two"]);
        let second = repo.facts(true);
        assert_ne!(second.head, first.head);
        git(dir.path(), &["checkout", "-q", "-b", "topic"]);
        assert_eq!(repo.facts(false).branch.as_deref(), Some("topic"));
        git(dir.path(), &["config", "user.name", "Grace Hopper"]);
        let named = repo.facts(true).identity.unwrap().to_string();
        assert_eq!(named, "Grace Hopper <ada@example.org>");
    }

    #[test]
    fn the_branch_in_head_is_the_one_git_names_renamed_or_detached() {
        let (dir, _) = repo();
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let linked = dir.path().join("wt");
        let wt = linked.to_str().unwrap();
        git(dir.path(), &["worktree", "add", "-q", "-b", "s3", wt]);
        let repo = Repo::at(&linked).unwrap();
        assert_eq!(repo.branch_in_head().as_deref(), Some("s3"));
        git(&linked, &["branch", "-m", "sprint-2-cy"]);
        assert_eq!(repo.branch_in_head(), repo.branch_and_head().0);
        assert_eq!(repo.branch_in_head().as_deref(), Some("sprint-2-cy"));
        git(&linked, &["checkout", "-q", "--detach"]);
        assert_eq!(repo.branch_in_head(), None);
        assert_eq!(repo.branch_and_head().0, None);
    }

    #[test]
    fn a_linked_work_tree_is_found_through_its_git_file() {
        let (dir, _) = repo();
        std::fs::write(dir.path().join("f"), "a\n").unwrap();
        git(dir.path(), &["add", "f"]);
        git(dir.path(), &["commit", "-q", "-m", "one"]);
        let linked = dir.path().join("wt");
        git(
            dir.path(),
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "side",
                linked.to_str().unwrap(),
            ],
        );
        let repo = Repo::at(&linked).unwrap();
        assert_eq!(repo.branch_and_head().0.as_deref(), Some("side"));
        assert!(repo.fingerprint().is_some());
        // Both work trees, from either; one removed by hand is not listed.
        let main = dir.path().canonicalize().unwrap();
        let listed = |r: &Repo| -> Vec<PathBuf> {
            r.worktrees()
                .iter()
                .map(|p| p.canonicalize().unwrap())
                .collect()
        };
        let both = vec![main.clone(), linked.canonicalize().unwrap()];
        assert_eq!(listed(&repo), both);
        assert_eq!(listed(&Repo::at(dir.path()).unwrap()), both);
        std::fs::remove_dir_all(&linked).unwrap();
        assert_eq!(listed(&Repo::at(dir.path()).unwrap()), vec![main]);
    }

    /// An entry written by hand under `.git/worktrees/` that names another repository is
    /// listed by git, not by `worktrees`: that repository is not this clone's work tree.
    #[test]
    fn a_forged_work_tree_entry_is_not_one_of_the_clones() {
        let (dir, repo) = repo();
        git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "one"]);
        let other = tempfile::tempdir().unwrap();
        git(other.path(), &["init", "-q", "-b", "main"]);
        let forged = dir.path().join(".git/worktrees/evil");
        std::fs::create_dir_all(&forged).unwrap();
        let their_git = other.path().join(".git");
        std::fs::write(forged.join("gitdir"), format!("{}\n", their_git.display())).unwrap();
        std::fs::write(forged.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(forged.join("commondir"), "../..\n").unwrap();
        let listed = run(dir.path(), &[], &["worktree", "list", "--porcelain"]).unwrap();
        let theirs = other.path().canonicalize().unwrap();
        assert!(
            listed.contains(&format!("worktree {}\n", theirs.display())),
            "git lists the forged entry: {listed}"
        );
        let main = dir.path().canonicalize().unwrap();
        let ours = |r: &Repo| -> Vec<PathBuf> {
            r.worktrees()
                .iter()
                .map(|p| p.canonicalize().unwrap())
                .collect()
        };
        assert_eq!(ours(&repo), vec![main.clone()]);
        // Nor another clone's linked work tree: its `.git` file leads to its own clone.
        git(
            other.path(),
            &[
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@e.org",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "o",
            ],
        );
        let linked = other.path().join("wt");
        git(
            other.path(),
            &["worktree", "add", "-q", linked.to_str().unwrap()],
        );
        std::fs::write(
            forged.join("gitdir"),
            format!("{}\n", linked.join(".git").display()),
        )
        .unwrap();
        assert_eq!(ours(&repo), vec![main]);
    }
}
