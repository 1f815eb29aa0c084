//! Where a round of development began, read from git: the project's files against the
//! commit checked out then (changed, deleted, or new and not ignored), summed up as a
//! [`WorkTree`]; recorded when the session turns to the developer, and read again for the
//! round's submission, which the machine refuses when it claims changes while the two
//! agree (`workflow::round`). Without git, or when git cannot say, nothing is recorded
//! and nothing refused.

use sha2::{Digest, Sha256};

use crate::files::Project;
use crate::git::{Repo, MAX_PATHS, PROJECT_FILES};
use crate::workflow::round::WorkTree;
use crate::workflow::session::Session;
use crate::workflow::stage::Stage;

/// The project's files against `commit` now.
pub(super) fn work_tree(repo: &Repo, commit: &str) -> Option<WorkTree> {
    let mut paths = repo.changed_since(commit, &PROJECT_FILES)?;
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
/// checked out.
pub(super) fn began(repo: &Repo, head: Option<&str>) -> Option<WorkTree> {
    work_tree(repo, head?)
}

/// For a submission at `dev`: the project's files now, against the commit the round began
/// from; `None` when no round was recorded or git cannot say.
pub fn work_tree_now(project: &Project, session: &Session) -> Option<WorkTree> {
    if session.current_stage != Stage::Dev {
        return None;
    }
    let began = session.record(Stage::Dev).round_began.as_ref()?;
    work_tree(&Repo::at(&project.root)?, &began.commit)
}
