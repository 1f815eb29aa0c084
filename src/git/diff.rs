//! The text of what changed in the project's tracked files since a commit, as `git diff`
//! shows it (no external diff, no text conversion, no filter the config names, within the
//! output bound): what a review's layers read.

use super::{is_commit_id, run_bytes, Repo};

impl Repo {
    /// The unified diff from `commit` to the work tree of the tracked files `pathspecs`
    /// select (git's syntax), relative to the project; `None` when the commit is not in this
    /// repository, git fails or says more than the output bound.
    pub fn diff_since(&self, commit: &str, pathspecs: &[String]) -> Option<Vec<u8>> {
        if !is_commit_id(commit) {
            return None;
        }
        let mut args = vec![
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--relative",
            commit,
            "--",
        ];
        args.extend(pathspecs.iter().map(String::as_str));
        run_bytes(&self.dir, &self.without_drivers(), &args)
    }
}
