//! A story's own worktree, made by the run when the sprint has none: a git worktree of the
//! project's repository on a branch of its own, from the commit the project stands on (the
//! approved plan must be committed there: the story reads its parent's session and
//! documents as committed). Made again without harm: an existing worktree is taken as it
//! is, an existing branch checked out.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder the run's worktrees go in by default: beside the project,
/// `<project>.stories/`.
pub fn default_base(project: &Path) -> PathBuf {
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "project".into());
    project
        .parent()
        .unwrap_or(project)
        .join(format!("{name}.stories"))
}

/// The branch of `task`'s sprint `sprint`.
pub fn branch(task: &str, sprint: u32) -> String {
    format!("{task}-sprint-{sprint}")
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(|e| format!("git cannot be run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The worktree `dir` of `project` on `branch`, made if it is not there.
pub fn ensure(project: &Path, dir: &Path, branch: &str) -> Result<PathBuf, String> {
    if dir.join(".git").exists() {
        return Ok(dir.to_path_buf());
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let path = dir.display().to_string();
    let known = git(
        project,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{branch}"),
        ],
    )
    .is_ok();
    if known {
        git(project, &["worktree", "add", "-q", &path, branch])?;
    } else {
        git(
            project,
            &["worktree", "add", "-q", "-b", branch, &path, "HEAD"],
        )?;
    }
    dir.canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_is_made_once_and_taken_as_it_is_after() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("app");
        std::fs::create_dir(&project).unwrap();
        let g = |args: &[&str]| git(&project, args).unwrap();
        g(&["init", "-q", "-b", "main"]);
        g(&[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@b",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ]);
        let dir = default_base(&project).join("sprint-1");
        assert!(dir.starts_with(tmp.path().join("app.stories")));
        let made = ensure(&project, &dir, &branch("t", 1)).unwrap();
        assert!(made.join(".git").is_file());
        assert_eq!(
            git(&made, &["branch", "--show-current"]).unwrap(),
            "t-sprint-1"
        );
        assert_eq!(ensure(&project, &dir, "t-sprint-1").unwrap(), made);
        // Gone from the disk, its branch kept: checked out again.
        std::fs::remove_dir_all(&made).unwrap();
        g(&["worktree", "prune"]);
        assert!(ensure(&project, &dir, "t-sprint-1").is_ok());
    }
}
