//! Keeping one side of a task a merge left in two versions, as a unit: its session file,
//! its documents and its drafts taken whole from one branch (files the other branch added
//! go, files it changed come back as this side had them), so that no document of one
//! version stays beside the other's session. Run by the human (`bmad-mcp resolve`), never
//! by a call of the tool; no hook runs.

use super::claim::git;
use super::Repo;

/// Which version to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The branch checked out (`HEAD`).
    Ours,
    /// The branch being merged (`MERGE_HEAD`).
    Theirs,
}

impl Repo {
    /// Whether a merge is under way here.
    pub fn merging(&self) -> bool {
        self.git_dir.join("MERGE_HEAD").is_file()
    }

    /// The text of `rel` (relative to the project) on `side`, when it has it.
    pub fn show(&self, side: Side, rel: &str) -> Option<String> {
        super::run(
            &self.dir,
            &[],
            &["show", &format!("{}:./{rel}", commit(side))],
        )
    }

    /// Replaces each of `paths` (files or folders, relative to the project) in the work
    /// tree and the index by what `side` has there: removed where it has nothing. `Err`
    /// with git's words when a step fails (what was done before stays staged).
    pub fn keep_side(&self, side: Side, paths: &[String]) -> Result<(), String> {
        if !self.merging() {
            return Err("no merge is under way here".into());
        }
        for p in paths {
            self.step(&["rm", "-r", "-q", "-f", "--ignore-unmatch", "--", p])?;
            let there = format!("{}:./{p}", commit(side));
            if super::run(&self.dir, &[], &["cat-file", "-e", &there]).is_some() {
                self.step(&["checkout", commit(side), "--", p])?;
            }
        }
        Ok(())
    }

    fn step(&self, args: &[&str]) -> Result<(), String> {
        let out = git(&self.dir)
            .args(args)
            .output()
            .map_err(|e| format!("git could not be started: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "`git {}` failed: {}",
            args.join(" "),
            said.lines().last().unwrap_or("").trim()
        ))
    }
}

fn commit(side: Side) -> &'static str {
    match side {
        Side::Ours => "HEAD",
        Side::Theirs => "MERGE_HEAD",
    }
}
