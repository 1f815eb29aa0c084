//! Where a round of development is measured from, read from git: the project's files against a
//! commit (changed, deleted, or new and not ignored), less those that hold what the server last
//! wrote there ([`written.rs`](crate::store::written)) or that the server writes in the same step,
//! summed up as a [`WorkTree`]. Recorded when the session turns to the developer for the first time
//! and at each accepted submission of development (so that work done while the task then waits for
//! the human counts for the next one), and read again for a round's submission (through the call's
//! `GitNow`, which asks git once for what the drift record needs too), which the machine refuses
//! when it claims changes while the two agree
//! ([`workflow::dev_round`](crate::workflow::dev_round)). Without git, or when git cannot say,
//! nothing is recorded and nothing refused.

use sha2::{Digest, Sha256};

use super::written::Written;
use crate::git::{GitPath, Repo, MAX_PATHS, PROJECT_FILES};
use crate::workflow::dev_round::WorkTree;

/// The project's files against `commit` now, given every path git says differs from it
/// (tracked and new, sorted), less the server's own files and `pending`, the paths the
/// server writes in the same step.
pub(super) fn work_tree(
    repo: &Repo,
    commit: &str,
    paths: &[GitPath],
    written: &Written,
    pending: &[String],
) -> Option<WorkTree> {
    // As many as git may name: more may have been cut, so no digest can be trusted.
    if paths.len() >= MAX_PATHS {
        return None;
    }
    let ids = repo.blob_ids(paths, commit);
    let mut digest = Sha256::new();
    let mut files = 0;
    for (path, id) in paths.iter().zip(&ids) {
        let key = path.key();
        if pending.contains(&key) || written.is_ours(&key, id.as_deref()) {
            continue;
        }
        files += 1;
        digest.update(path.as_bytes());
        digest.update(b"\0");
        digest.update(id.as_deref().unwrap_or("-").as_bytes());
        digest.update(b"\n");
    }
    Some(WorkTree {
        commit: commit.to_string(),
        files,
        digest: format!("{:x}", digest.finalize()),
    })
}

/// The paths that differ from a commit, tracked and new, sorted once.
pub(super) fn all(mut tracked: Vec<GitPath>, untracked: &[GitPath]) -> Vec<GitPath> {
    tracked.extend_from_slice(untracked);
    tracked.sort();
    tracked.dedup();
    tracked
}

/// The project's files as a round beginning now finds them, against `head`, the commit
/// checked out (for a story, which begins at its `start`), less `pending`, what the server
/// writes for the same step.
pub(super) fn began(repo: &Repo, head: Option<&str>, pending: &[String]) -> Option<WorkTree> {
    let head = head?;
    let tracked = repo.changed_since(head, &PROJECT_FILES)?;
    if tracked.len() >= MAX_PATHS {
        return None;
    }
    let paths = all(tracked, &repo.untracked(&PROJECT_FILES)?);
    work_tree(repo, head, &paths, &Written::read(repo), pending)
}
