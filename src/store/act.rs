//! A change to a session, made durable: under the project lock, the session is read once
//! (the freshest stored state), the layer above admits the change (the evidence gate:
//! [`Gate`]), the pure machine applies it, whatever the reply will need is made ready, and
//! the outcome's files are written before the session, so that a crash leaves the old
//! session pointing at files that still exist.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::drift::GitNow;
use super::sessions::{json_text, session_rel};
use super::{owner_rel, Located, RefusedWith, SessionKey, Store};
use crate::code::{clip, ErrorCode};
use crate::error::{Error, Result};
use crate::files::{Project, ReadProblem};
use crate::workflow::machine::{self, ProjectFiles};
use crate::workflow::session::Session;
use crate::workflow::{Command, Decision, Evidence, Facts};

/// What the server observed for a change before taking the lock: the checks it ran, bound
/// to the session as it was then (a session that moved on meanwhile refuses the change:
/// the checks may not be about its work).
#[derive(Default)]
pub struct Observed {
    pub evidence: Evidence,
    pub history_len: Option<usize>,
}

/// What the layer above the store decides about a change, under the lock, on the session
/// as it is stored: whether it may be made (a refusal changes nothing), whether it must
/// wait for something observed outside the lock first (the project's checks), and the
/// files and notices that go with it.
pub trait Gate {
    fn admit(
        &self,
        project: &Project,
        session: &Session,
        command: &Command,
        decision: &Decision,
        now: DateTime<Utc>,
    ) -> Result<Admission>;
}

/// A [`Gate`]'s answer.
pub enum Admission {
    /// Make the change, with these files and notices.
    Admit(Admitted),
    /// Nothing now: the gate needs to observe something outside the lock first, then the
    /// change is asked for again with what it observed.
    Defer,
}

/// What [`Store::act`] did.
pub enum Acted {
    Done(Box<Session>, Facts),
    /// Nothing was changed; the gate deferred the change (see [`Admission::Defer`]).
    Deferred,
}

/// What a [`Gate`] adds to a change it admits.
#[derive(Default)]
pub struct Admitted {
    /// Files written with the change, before the session (path relative to the project).
    pub files: Vec<(&'static str, String)>,
    /// Said in the reply, not kept in the history.
    pub notices: Vec<String>,
    /// Keys of notices said once per session, kept in the session (`notices_given`).
    pub said_once: Vec<String>,
}

impl Store {
    /// Applies a session action under the project lock, with the clock read under the lock
    /// (never earlier than the session's last entry). `ready` is called with the changed
    /// session before anything is written: what it refuses (a role prompt that cannot be
    /// used) is not written either, and what it records in the session (the lessons the
    /// prompt carried) is. On error, the session when it was read.
    #[allow(clippy::too_many_arguments)]
    pub fn act(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        command: Command,
        decision: &Decision,
        observed: Observed,
        gate: &dyn Gate,
        ready: &mut dyn FnMut(&Project, &mut Session) -> Result<()>,
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> std::result::Result<Acted, RefusedWith> {
        let at = self.locate(cwd, key).map_err(|e| (e, None))?;
        // Asked of git before the lock: who decides, on which branch.
        let git = GitNow::of(&at.project, command.action().decides());
        let mut decision = decision.clone();
        if decision.decider.is_none() {
            decision.decider.clone_from(&git.person);
        }
        // Busy: the reply still names the session's state, read without the lock.
        let _lock = at
            .project
            .lock(self.lock_wait)
            .map_err(|e| (e, self.read(&at, key).ok().map(Box::new)))?;
        let session = self.read(&at, key).map_err(|e| (e, None))?;
        let now = not_before_last_entry(&session, clock());
        self.act_on(
            &at, &session, command, &decision, &git, observed, gate, ready, now,
        )
        .map_err(|e| (e, Some(Box::new(session))))
    }

    #[allow(clippy::too_many_arguments)]
    fn act_on(
        &self,
        at: &Located,
        session: &Session,
        command: Command,
        decision: &Decision,
        git: &GitNow,
        observed: Observed,
        gate: &dyn Gate,
        ready: &mut dyn FnMut(&Project, &mut Session) -> Result<()>,
        now: DateTime<Utc>,
    ) -> Result<Acted> {
        let project = &at.project;
        if observed
            .history_len
            .is_some_and(|n| n != session.history.len())
        {
            return Err(Error::argument(
                ErrorCode::InvalidState,
                format!(
                    "the session moved on while the checks ran (it is now at stage `{}`, state `{}`): nothing was recorded. Check `status`, then submit again if it still applies",
                    session.current_stage, session.current_state
                ),
            ));
        }
        let admitted = match gate.admit(project, session, &command, decision, now)? {
            Admission::Admit(admitted) => admitted,
            Admission::Defer => return Ok(Acted::Deferred),
        };
        let claim = check_owner(project, session)?;
        // A parent acts on its stories as their shared entries say now.
        let session = &super::stories::with_stories(project, session);
        let mut outcome = machine::apply_observed(
            session,
            command,
            decision,
            observed.evidence,
            &Files(project),
            now,
        )?;
        git.record(session, &mut outcome.session);
        ready(project, &mut outcome.session)?;
        // What the change taught, written with it for the team (src/lessons/learn.rs).
        let lessons = crate::lessons::learned(session, &outcome.session);
        for l in &lessons {
            outcome.facts.notices.push(format!(
                "Recorded a lesson for later tasks ({}, {} role): {}",
                l.category,
                l.role.id(),
                l.rel_path()
            ));
        }
        let lesson_files = crate::lessons::write_files(&lessons);
        for key in &admitted.said_once {
            if !outcome.session.notices_given.contains(key) {
                outcome.session.notices_given.push(key.clone());
            }
        }
        let owner_text = format!("{}\n", session.session_id);
        let mut files: Vec<(&str, &[u8])> =
            Vec::with_capacity(outcome.writes.len() + admitted.files.len() + 1);
        if let Some(owner) = &claim {
            files.push((owner, owner_text.as_bytes()));
        }
        files.extend(admitted.files.iter().map(|(p, t)| (*p, t.as_bytes())));
        files.extend(lesson_files.iter().map(|(p, t)| (p.as_str(), t.as_bytes())));
        files.extend(
            outcome
                .writes
                .iter()
                .map(|w| (w.path.as_str(), w.content.as_bytes())),
        );
        for (path, _) in &files {
            project.check(path)?;
        }
        let dirs: BTreeSet<&str> = files
            .iter()
            .filter_map(|(path, _)| path.rsplit_once('/').map(|(dir, _)| dir))
            .collect();
        self.sweep(project, &dirs.into_iter().collect::<Vec<_>>());
        let session_text = json_text(&outcome.session);
        let session_path = session_rel(&outcome.session.session_id);
        project.write_in_order(&[&files, &[(&session_path, session_text.as_bytes())]], &[])?;
        super::stories::follow(project, &outcome.session, self.lock_wait);
        tracing::info!(
            session_id = %outcome.session.session_id,
            stage = %outcome.session.current_stage,
            state = %outcome.session.current_state,
            files = outcome.writes.len(),
            "action applied"
        );
        // Said in the reply, not kept in the history: the policy's, not the step's.
        for notice in admitted.notices {
            if !outcome.facts.notices.contains(&notice) {
                outcome.facts.notices.push(notice);
            }
        }
        Ok(Acted::Done(Box::new(outcome.session), outcome.facts))
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
fn not_before_last_entry(session: &Session, now: DateTime<Utc>) -> DateTime<Utc> {
    session
        .history
        .last()
        .and_then(|h| DateTime::parse_from_rfc3339(&h.at).ok())
        .map(|t| t.with_timezone(&Utc))
        // A millisecond after it at least: stamps (and the temporary files named by
        // them) must not repeat when the clock is behind.
        .map_or(now, |last| {
            now.max(last + chrono::Duration::milliseconds(1))
        })
}

/// The machine's read access to project files, confined like every write.
pub struct Files<'a>(pub &'a Project);

impl ProjectFiles for Files<'_> {
    fn read(&self, rel_path: &str) -> std::result::Result<Option<String>, String> {
        self.0.read(rel_path).map_err(|p| p.to_string())
    }
}
