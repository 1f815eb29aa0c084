//! Where a story runs: the git common directory that every worktree of a repository
//! shares (read from git's own files, `.git` and `commondir`, so it is found without a
//! process), who runs it on which branch (asked of [`crate::git`]), and on which machine
//! (its host name, so that a path another machine named is never looked for here).

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

/// The name of the machine this runs on (the kernel's node name), read once; `None` when
/// it has none.
pub fn host() -> Option<&'static str> {
    static HOST: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        #[cfg(unix)]
        let name = rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned();
        #[cfg(not(unix))]
        let name = std::env::var("COMPUTERNAME").unwrap_or_default();
        Some(name.trim().to_string()).filter(|n| !n.is_empty())
    })
    .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_worktree_names_the_common_directory_of_its_repository() {
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
        assert_eq!(linked.git_dir, main.join("worktrees/wt1"));
        let outside = tempfile::tempdir().unwrap();
        // A temporary directory may itself sit inside a repository; only check it is
        // not this one.
        assert!(git_dirs(outside.path()).is_none_or(|d| d.common_dir != first.common_dir));
    }
}
