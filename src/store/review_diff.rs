//! The diff a review's layers read: the project's files from the round's base commit to
//! the work tree, new files included and the server's own files left out, as one unified
//! diff. The base is `workflow::dev_round::review_base`, else the commit checked out. Derived from git and the work tree, so
//! the server writes it again at each review.

use super::drift::GitNow;
use crate::files::Project;
use crate::git::{GitPath, PROJECT_FILES};
use crate::workflow::Session;

/// The most of one new file shown in the diff.
const MAX_NEW_FILE: u64 = 256 * 1024;
/// The most bytes of the whole diff: past it, the files left out are named.
const MAX_DIFF: usize = 4 * 1024 * 1024;

/// A round's diff: its text and the files it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewDiff {
    pub text: String,
    pub files: Vec<String>,
}

impl GitNow {
    /// The diff of `session`'s round in `project`, less `pending` (the files the server
    /// writes with the change); `None` outside a repository or where git cannot say.
    pub fn review_diff(
        &self,
        project: &Project,
        session: &Session,
        pending: &[String],
    ) -> Option<ReviewDiff> {
        let repo = self.repo()?;
        let base = crate::workflow::dev_round::review_base(session);
        let commit = base.or(self.head())?.to_string();
        let written = self.written(repo);
        // As git said them earlier in this call (the round's reading), where it did: the
        // files the server wrote since are its own, left out below either way.
        let tracked = self.changed_since(repo, &commit, false)?;
        let untracked = self.untracked(repo, false)?;
        let ids = repo.blob_ids(&tracked, &commit);
        let ours = |p: &GitPath, id: Option<&str>| {
            let key = p.key();
            pending.contains(&key) || written.is_ours(&key, id)
        };
        let (theirs, left): (Vec<_>, Vec<_>) = tracked
            .iter()
            .zip(&ids)
            .partition(|(p, id)| !ours(p, id.as_deref()));
        let mut specs: Vec<String> = PROJECT_FILES.iter().map(|s| s.to_string()).collect();
        specs.extend(
            left.iter()
                .map(|(p, _)| format!(":(exclude,literal){}", p.key())),
        );
        let mut files: Vec<String> = theirs.iter().map(|(p, _)| p.key()).collect();
        let mut text = if files.is_empty() {
            String::new()
        } else {
            String::from_utf8_lossy(&repo.diff_since(&commit, &specs)?).into_owned()
        };
        let new_ids = repo.blob_ids(&untracked, &commit);
        let mut cut = Vec::new();
        for (path, id) in untracked.iter().zip(&new_ids) {
            let key = path.key();
            if ours(path, id.as_deref()) {
                continue;
            }
            if text.len() > MAX_DIFF {
                cut.push(key);
                continue;
            }
            text.push_str(&new_file(project, &key));
            files.push(key);
        }
        if !cut.is_empty() {
            text.push_str(&format!(
                "\n# Past {MAX_DIFF} bytes, these new files are left out: {}\n",
                cut.join(", ")
            ));
            files.extend(cut);
        }
        let head = format!(
            "# The changes since commit {commit}, new files included (the server's own files left out): {} file(s).\n",
            files.len()
        );
        Some(ReviewDiff {
            text: head + &text,
            files,
        })
    }
}

/// A new file as a diff shows one: every line added; one too large, not text or not
/// readable is named with why.
fn new_file(project: &Project, rel: &str) -> String {
    let head = format!("diff --git a/{rel} b/{rel}\nnew file\n--- /dev/null\n+++ b/{rel}\n");
    match project.read_in_project(rel, MAX_NEW_FILE) {
        Ok(Some(text)) if !text.is_empty() => {
            let lines: Vec<&str> = text.lines().collect();
            let mut out = format!("{head}@@ -0,0 +1,{} @@\n", lines.len());
            for l in lines {
                out.push('+');
                out.push_str(l);
                out.push('\n');
            }
            out
        }
        Ok(Some(_)) => format!("{head}(an empty file)\n"),
        Ok(None) => format!("{head}(gone since git listed it)\n"),
        Err(why) => format!("{head}(not shown: {why})\n"),
    }
}
