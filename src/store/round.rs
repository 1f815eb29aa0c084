//! Where a round of development began, read from git: the project's files against the
//! commit checked out then (changed, deleted, or new and not ignored), summed up as a
//! [`WorkTree`]; recorded when the session turns to the developer, and read again for the
//! round's submission (through the call's `GitNow`, which asks git once for what the
//! drift record needs too), which the machine refuses when it claims changes while the
//! two agree (`workflow::round`). Without git, or when git cannot say, nothing is recorded
//! and nothing refused.

use sha2::{Digest, Sha256};

use crate::git::{Repo, MAX_PATHS, PROJECT_FILES};
use crate::workflow::round::WorkTree;

/// The project's files against `commit` now, given those git says differ from it
/// (`Repo::changed_since`): the new files git does not ignore are added to them.
pub(super) fn work_tree(repo: &Repo, commit: &str, mut paths: Vec<String>) -> Option<WorkTree> {
    // As many as git may name: more may have been cut, so no digest can be trusted.
    if paths.len() >= MAX_PATHS {
        return None;
    }
    paths.extend(repo.untracked(&PROJECT_FILES)?);
    paths.sort();
    paths.dedup();
    if paths.len() > MAX_PATHS {
        return None;
    }
    let ids = repo.blob_ids(&paths, commit);
    let mut digest = Sha256::new();
    for (path, id) in paths.iter().zip(&ids) {
        digest.update(path.as_bytes());
        digest.update(b"\0");
        digest.update(id.as_deref().unwrap_or("-").as_bytes());
        digest.update(b"\n");
    }
    Some(WorkTree {
        commit: commit.to_string(),
        files: paths.len(),
        digest: format!("{:x}", digest.finalize()),
    })
}

/// The project's files as a round beginning now finds them: against `head`, the commit
/// checked out (for a story, which begins at its `start`).
pub(super) fn began(repo: &Repo, head: Option<&str>) -> Option<WorkTree> {
    let head = head?;
    work_tree(repo, head, repo.changed_since(head, &PROJECT_FILES)?)
}
