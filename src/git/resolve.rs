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

    /// The names of the entries of folder `dir` (relative to the project) that `side` has.
    pub fn entries(&self, side: Side, dir: &str) -> Vec<String> {
        let tree = format!("{}:./{dir}", commit(side));
        super::run(&self.dir, &[], &["ls-tree", "--name-only", &tree])
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
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

    /// The files under `dir` (relative to the project) that `side` has and the other side
    /// has not: what that side alone brings to the merge.
    pub fn only_on(&self, side: Side, dir: &str) -> Vec<String> {
        let other = match side {
            Side::Ours => Side::Theirs,
            Side::Theirs => Side::Ours,
        };
        let listed = super::run(
            &self.dir,
            &[],
            &[
                "diff",
                "--name-only",
                "--no-renames",
                "--diff-filter=A",
                "--relative",
                commit(other),
                commit(side),
                "--",
                dir,
            ],
        );
        listed
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Stages `paths` (relative to the project) as the work tree has them.
    pub fn stage(&self, paths: &[String]) -> Result<(), String> {
        let mut args = vec!["add", "--"];
        args.extend(paths.iter().map(String::as_str));
        self.step(&args)
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
