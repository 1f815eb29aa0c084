//! Who runs a story, and where: the owner, the git branch and the worktree, and the git
//! common directory that every worktree of a repository shares. Read from git's own files
//! (`.git`, `HEAD`, `commondir`); the owner from `git config user.name`, else the login.

use std::path::{Path, PathBuf};

/// A worktree's git directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitDirs {
    /// This worktree's own git directory (`.git`, or `.git/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// The directory every worktree of the repository shares.
    pub common_dir: PathBuf,
}

/// The git directories of the repository `dir` is in, as git finds them: the nearest
/// ancestor holding `.git`, a directory, or a file naming the worktree's git directory.
pub fn git_dirs(dir: &Path) -> Option<GitDirs> {
    let (top, dot) = dir
        .ancestors()
        .map(|a| (a, a.join(".git")))
        .find(|(_, d)| d.exists())?;
    let git_dir = if dot.is_dir() {
        dot
    } else {
        let text = std::fs::read_to_string(&dot).ok()?;
        let named = text.trim().strip_prefix("gitdir:")?.trim();
        top.join(named)
    };
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(c) => git_dir.join(c.trim()),
        Err(_) => git_dir.clone(),
    };
    let common_dir = common_dir.canonicalize().ok()?;
    Some(GitDirs {
        git_dir,
        common_dir,
    })
}

/// The branch checked out in the worktree (none when detached).
pub fn branch(dirs: &GitDirs) -> Option<String> {
    let head = std::fs::read_to_string(dirs.git_dir.join("HEAD")).ok()?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .map(|b| crate::code::clip(b, 200))
}

/// Who runs the story: `BMAD_OWNER`, else git's `user.name` in the worktree, else the
/// login name, else "unknown".
pub fn owner(dir: &Path) -> String {
    let set = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    set(std::env::var("BMAD_OWNER").ok())
        .or_else(|| {
            let out = std::process::Command::new("git")
                .args(["config", "user.name"])
                .current_dir(dir)
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            set(String::from_utf8(out.stdout).ok())
        })
        .or_else(|| set(std::env::var("USER").ok()))
        .or_else(|| set(std::env::var("USERNAME").ok()))
        .map(|o| crate::code::clip(&o, 100))
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_names_the_common_directory_and_its_branch() {
        let repo = tempfile::tempdir().unwrap();
        let main = repo.path().join(".git");
        std::fs::create_dir_all(main.join("worktrees/wt1")).unwrap();
        std::fs::write(main.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let wt = tempfile::tempdir().unwrap();
        std::fs::write(
            wt.path().join(".git"),
            format!("gitdir: {}\n", main.join("worktrees/wt1").display()),
        )
        .unwrap();
        std::fs::write(main.join("worktrees/wt1/commondir"), "../..\n").unwrap();
        std::fs::write(main.join("worktrees/wt1/HEAD"), "ref: refs/heads/s1\n").unwrap();
        let linked = git_dirs(&wt.path().join("sub")).unwrap();
        let first = git_dirs(repo.path()).unwrap();
        assert_eq!(linked.common_dir, first.common_dir);
        assert_eq!(branch(&linked).as_deref(), Some("s1"));
        assert_eq!(branch(&first).as_deref(), Some("main"));
        let outside = tempfile::tempdir().unwrap();
        // A temporary directory may itself sit inside a repository; only check it is
        // not this one.
        assert!(git_dirs(outside.path()).is_none_or(|d| d.common_dir != first.common_dir));
    }
}
