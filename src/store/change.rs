//! The store's primitives for changing a session: take the project lock and read the
//! session under it, ask git once for what the change records (who decides, on which
//! branch, against which commit), and write the change in order, the documents and other
//! files before the session, so that a crash leaves the old session pointing at files that
//! still exist. The order of a change (what is refused, when checks run, what the machine
//! decides) is the caller's: [`crate::act`].

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::drift::GitNow;
use super::sessions::{json_text, session_rel};
use super::{owner_rel, Located, RefusedWith, SessionKey, Store};
use crate::code::clip;
use crate::error::{Error, Result};
use crate::files::{Held, Project, ReadProblem};
use crate::workflow::machine::Documents;
use crate::workflow::session::Session;

impl Store {
    /// Takes the project lock and reads the session under it: the freshest stored state.
    /// When the lock is busy the refusal carries the session read without it, so that the
    /// reply still names its state.
    pub fn lock_and_read(
        &self,
        at: &Located,
        key: &SessionKey,
    ) -> std::result::Result<(Held, Session), RefusedWith> {
        let lock = at
            .project
            .lock(self.lock_wait)
            .map_err(|e| (e, self.read(at, key).ok().map(Box::new)))?;
        let session = self.read(at, key).map_err(|e| (e, None))?;
        Ok((lock, session))
    }

    /// Takes the project lock, for a change that is no session's (a lesson written or
    /// retired, the policy approved): every lock on a project is taken in this module,
    /// with the same wait.
    pub fn lock(&self, project: &Project) -> Result<Held> {
        project.lock(self.lock_wait)
    }

    /// What git says of the project now (the branch, and with `decides` the person),
    /// asked once per call and kept while the repository does not move.
    pub fn git_now(&self, project: &Project, decides: bool) -> GitNow {
        GitNow::of(project, decides, self.owner.as_ref())
    }

    /// Writes a change made under the lock: the mark that the specs folder is this
    /// session's (refused when another session's mark is there), `files` (paths relative
    /// to the project), then the session; then a story's entry in its parent follows it.
    /// Returns the files it wrote beside `files` (the mark, when written, and the
    /// session), each with its text, for the change's record.
    pub fn write_change(
        &self,
        project: &Project,
        before: &Session,
        after: &Session,
        files: &[(String, String)],
    ) -> Result<Vec<(String, String)>> {
        let claim = check_owner(project, before)?;
        let owner_text = format!("{}\n", before.session_id);
        let mut all: Vec<(&str, &[u8])> = Vec::with_capacity(files.len() + 1);
        if let Some(owner) = &claim {
            all.push((owner, owner_text.as_bytes()));
        }
        all.extend(files.iter().map(|(p, t)| (p.as_str(), t.as_bytes())));
        for (path, _) in &all {
            project.check(path)?;
        }
        let dirs: BTreeSet<&str> = all
            .iter()
            .filter_map(|(path, _)| path.rsplit_once('/').map(|(dir, _)| dir))
            .collect();
        self.sweep(project, &dirs.into_iter().collect::<Vec<_>>());
        let session_text = json_text(after);
        let session_path = session_rel(&after.session_id);
        project.write_in_order(&[&all, &[(&session_path, session_text.as_bytes())]], &[])?;
        super::stories::follow(project, after, self.lock_wait);
        if self.claims_on_remote {
            super::stories::completed(project, before, after);
        }
        tracing::info!(
            session_id = %after.session_id,
            stage = %after.current_stage,
            state = %after.current_state,
            files = files.len(),
            "action applied"
        );
        let mut also: Vec<(String, String)> = claim.map(|o| (o, owner_text)).into_iter().collect();
        also.push((session_path, session_text));
        Ok(also)
    }
}

/// Refuses a session whose specs folder belongs to another session (two sessions with
/// one task name, as a merge of two branches can leave). A folder with no owner mark
/// (made before marks existed) is claimed: the returned path is to be written.
fn check_owner(project: &Project, session: &Session) -> Result<Option<String>> {
    let rel = owner_rel(&session.task_name);
    let folder = session.specs_dir();
    let owner = match project.read(&rel) {
        Ok(None) => return Ok(Some(rel)),
        Ok(Some(text)) => text.trim().to_string(),
        Err(ReadProblem::Unsafe(e)) => return Err(e),
        Err(problem) => format!("(unreadable: {rel} {problem})"),
    };
    if owner == session.session_id {
        return Ok(None);
    }
    Err(Error::SpecsFolderTaken {
        folder,
        owner: clip(&owner, 80),
        session_id: session.session_id.clone(),
    })
}

/// The time of a new history entry: the clock, but after the session's last entry (a
/// clock set back, or two machines sharing a project, must not reorder history).
pub fn not_before_last_entry(session: &Session, now: DateTime<Utc>) -> DateTime<Utc> {
    session
        .last_step()
        .and_then(|h| DateTime::parse_from_rfc3339(&h.at).ok())
        .map(|t| t.with_timezone(&Utc))
        // A millisecond after it at least: stamps (and the temporary files named by
        // them) must not repeat when the clock is behind.
        .map_or(now, |last| {
            now.max(last + chrono::Duration::milliseconds(1))
        })
}

/// The documents a step on `session` may read, read now through the project (confined
/// like every write), for the machine to decide on.
pub fn documents(project: &Project, session: &Session) -> Documents {
    let mut documents = Documents::default();
    for path in Documents::wanted(session) {
        let read = project.read(&path).map_err(|p| p.to_string());
        documents.insert(path, read);
    }
    // The method's file a draft was taken from, read as `document_file` read it.
    if let Some(path) = Documents::taken_from(session) {
        let limit = crate::bmad_method::begin::MAX_DRAFT_BYTES;
        let read = (project.read_one_name_in_project(&path, limit)).map_err(|p| p.to_string());
        documents.insert(path, read);
    }
    documents
}
