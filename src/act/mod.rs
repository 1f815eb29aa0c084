//! One change to a session, top to bottom, whichever channel asks for it (the tool's calls,
//! the terminal, the dashboard, the client's dialog):
//!
//! 1. find the session (its id names its file; a task name goes through the mapping);
//! 2. ask git once: who decides, on which branch;
//! 3. take the project lock and read the session;
//! 4. refuse what the policy keeps for the human;
//! 5. run the checks a submission needs: with the lock dropped (minutes of checks must not
//!    make every other call `busy`), then the lock taken and the session read again, which
//!    must not have moved meanwhile (the checks may not be about the work otherwise);
//! 6. let the machine decide (`machine::apply_observed`): the next state, the documents,
//!    the facts for the reply;
//! 7. resolve the role prompt the reply hands over, before anything is written (a broken
//!    override refuses the call and changes nothing), and the lessons the change taught;
//! 8. write the documents, the lessons and the policy's records, then the session.
//!
//! A human's decision comes here through [`human`], its one path. The BMAD method's own
//! files follow the change, written after it ([`method_files`]).

pub mod human;
mod method_files;
mod review_layers;
mod start;

pub use start::{start, Start, Started};

use chrono::Utc;

use crate::bmad_method::Method;
use crate::error::{Error, Result};
use crate::files::Project;
use crate::lessons::Lesson;
use crate::policy::{self, Admitted, Watched};
use crate::prompts::{self, Template};
use crate::store::{
    faults, not_before_last_entry, GitNow, Located, RefusedWith, Seen, SessionKey, Store,
};
use crate::workflow::machine::{self, Documents};
use crate::workflow::session::Session;
use crate::workflow::{Action, Command, Decision, Evidence, Facts};

/// Whether the change hands the host the next role prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handover {
    /// The tool's calls: the reply carries the prompt, and the history the lessons it
    /// carried.
    Prompt,
    /// A decision in the terminal or on the dashboard: no host reads the reply there; the
    /// host's next call asks for the prompt.
    Nothing,
}

/// A change a channel asks for.
pub struct Change {
    pub command: Command,
    pub decision: Decision,
    pub handover: Handover,
}

/// A change made: the session as written, and what the reply needs.
pub struct Done {
    pub project: Project,
    pub session: Session,
    pub facts: Facts,
    /// The role prompt the reply hands over (with [`Handover::Prompt`], when the new
    /// state asks for one).
    pub prompt: Option<Template>,
    /// What a reply asking the human needs, when the new state asks them.
    pub human: Option<ForHuman>,
    /// What git said of the project's files during the change, for the reply's drift.
    pub seen: Option<Seen>,
}

/// What a reply that asks the human to decide needs of the project, read with the change
/// (or the read that gives the state) so that the reply reads nothing again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForHuman {
    /// The gates policy, cited, when it keeps the decision for the human.
    pub gates: Option<String>,
    /// The dashboard's page for the task, while a dashboard serves the project.
    pub dashboard: Option<String>,
}

/// [`ForHuman`] for `session` in `project` when its state asks the human to decide.
/// `gates`: the policy's answer when the change already read it (see
/// [`Admitted::human_gates`]); `cannot_ask`: who cannot ask the human.
pub fn for_human(
    project: &Project,
    session: &Session,
    gates: Option<Option<String>>,
    cannot_ask: Option<&str>,
) -> Option<ForHuman> {
    let asks =
        !crate::store::human_decisions(session.current_stage, session.current_state).is_empty();
    asks.then(|| ForHuman {
        gates: gates.unwrap_or_else(|| policy::human_gates(project, cannot_ask)),
        dashboard: crate::store::task_link(project, &session.session_id),
    })
}

/// Makes `change` to the session `key` names. On error, the session when it was read, for
/// a reply that names its state.
pub fn act(
    store: &Store,
    cwd: Option<&str>,
    key: &SessionKey,
    change: Change,
    watched: &Watched,
) -> std::result::Result<Done, RefusedWith> {
    let at = store.locate(cwd, key).map_err(|e| (e, None))?;
    act_at(store, &at, key, change, watched)
}

/// [`act`] on a session already found.
pub fn act_at(
    store: &Store,
    at: &Located,
    key: &SessionKey,
    change: Change,
    watched: &Watched,
) -> std::result::Result<Done, RefusedWith> {
    let Change {
        command,
        mut decision,
        handover,
    } = change;
    let git = store.git_now(&at.project, command.action().decides());
    if decision.decider.is_none() {
        decision.decider.clone_from(&git.person);
    }
    let (lock, session) = store.lock_and_read(at, key)?;
    crate::store::stories::stale_parent(&at.project, &session).map_err(|e| refused(e, &session))?;
    // The BMAD install, read at its first use in this change and once.
    let method = Method::of(&at.project);
    let submits = command.action() == Action::Submit;
    let read = ReadUnderLock::now(&method, &session, submits.then_some(&git));
    let now = not_before_last_entry(&read.before, Utc::now());
    let mut admitted = policy::admit(
        &at.project,
        &read.before,
        &read.documents,
        &command,
        &decision,
        now,
        store.check_timeout(),
    )
    .map_err(|e| refused(e, &session))?;
    let (_lock, session, read, observed) = match admitted.checks.take() {
        None => (lock, session, read, Evidence::default()),
        Some(run) => {
            drop(lock);
            let planned_at = run.history_len;
            let observed = policy::watch::run_checks(run, watched);
            let (lock, session) = store.lock_and_read(at, key)?;
            unmoved(&session, planned_at).map_err(|e| refused(e, &session))?;
            let read = ReadUnderLock::now(&method, &session, submits.then_some(&git));
            (lock, session, read, observed)
        }
    };
    let step = Applying {
        store,
        project: &at.project,
        method: &method,
        git: &git,
        handover,
    };
    step.apply(read, command, &decision, observed, admitted)
        .map_err(|e| refused(e, &session))
}

/// What a step acts on, read under the lock: the session (a parent with its stories as
/// their shared entries say now) and the documents the machine may read for it (for a
/// submission, the project's files as the developer's round left them).
struct ReadUnderLock {
    before: Session,
    documents: Documents,
}

impl ReadUnderLock {
    /// `submits`: what git says now, for a submission; `method`: the call's install.
    fn now(method: &Method, session: &Session, submits: Option<&GitNow>) -> ReadUnderLock {
        let project = method.project();
        let before = crate::store::stories::with_stories(project, session);
        let mut documents = crate::store::documents(project, &before);
        if let Some(git) = submits {
            documents.work_tree = git.work_tree_now(&before);
            documents.review_in_layers = review_layers::required(method, &before);
        }
        ReadUnderLock { before, documents }
    }
}

/// Said when a person decides on a task someone else owns: the team sees it in the reply
/// and the history records who decided.
fn others_task(before: &Session, decision: &Decision) -> Option<String> {
    let (owner, decider) = (before.owner.as_ref()?, decision.decider.as_ref()?);
    if owner.is(decider) {
        return None;
    }
    Some(format!(
        "{} decided on a task that {} owns; the history records who decided.",
        crate::code::clip(&decider.to_string(), 120),
        crate::code::clip(&owner.to_string(), 120)
    ))
}

/// The earlier lessons this change resolves (the closing report names them, the task
/// recalled them), retired with why, to be written with the change; each said in a
/// notice. A lesson that cannot be read now is passed over.
fn retire_resolved(
    project: &Project,
    before: &Session,
    outcome: &mut machine::Outcome,
) -> Vec<crate::lessons::Lesson> {
    let ids = crate::lessons::resolved(before, &outcome.session);
    if ids.is_empty() {
        return Vec::new();
    }
    let Ok(loaded) = crate::lessons::load(project) else {
        return Vec::new();
    };
    let task = &outcome.session.task_name;
    let mut retired = Vec::new();
    for id in ids {
        let Some(mut l) = loaded.find(&id).filter(|l| l.is_active()).cloned() else {
            continue;
        };
        l.retired = Some(format!(
            "{} (resolved by task `{task}`)",
            outcome.session.updated_at
        ));
        outcome.facts.notices.push(format!(
            "Retired lesson {}: the closing report says task `{task}` resolved its cause ({}).",
            l.id,
            l.rel_path()
        ));
        retired.push(l);
    }
    retired
}

fn refused(e: Error, session: &Session) -> (Error, Option<Box<Session>>) {
    (e, Some(Box::new(session.clone())))
}

/// Refuses a submission whose session moved on while its checks ran.
fn unmoved(session: &Session, planned_at: usize) -> Result<()> {
    if session.history.len() == planned_at {
        return Ok(());
    }
    Err(Error::argument(
        crate::code::ErrorCode::InvalidState,
        format!(
            "the session moved on while the checks ran (it is now at stage `{}`, state `{}`): nothing was recorded. Check `status`, then submit again if it still applies",
            session.current_stage, session.current_state
        ),
    ))
}

/// Steps 6 to 8, under the lock.
struct Applying<'a> {
    store: &'a Store,
    project: &'a Project,
    /// The call's BMAD install, read once for every step that uses it.
    method: &'a Method,
    git: &'a GitNow,
    handover: Handover,
}

impl Applying<'_> {
    fn apply(
        &self,
        read: ReadUnderLock,
        command: Command,
        decision: &Decision,
        observed: Evidence,
        mut admitted: Admitted,
    ) -> Result<Done> {
        let project = self.project;
        let ReadUnderLock { before, documents } = read;
        let documents = with_file_draft(self.method, &before, &command, documents)?;
        let now = not_before_last_entry(&before, Utc::now());
        let mut outcome = {
            let _deciding = crate::fault::doing(
                "machine",
                format!("apply the `{}` to the session", command.action().name()),
            );
            machine::apply_observed(&before, command, decision, observed, &documents, now)?
        };
        let seen = self.git.record(&before, &mut outcome.session);
        (outcome.facts.notices).extend(begin_offer(self.method, &before, &outcome.session));
        let prompt = self.prompt_for(&mut outcome.session)?;
        // What the change taught, written with it for the team.
        let lessons = self.taught(&before, &mut outcome);
        for key in &admitted.said_once {
            if !outcome.session.notices_given.contains(key) {
                outcome.session.notices_given.push(key.clone());
            }
        }
        let said = [
            others_task(&before, decision),
            crate::store::went_back(project, &before),
        ];
        outcome.facts.notices.extend(said.into_iter().flatten());
        let retired = retire_resolved(project, &before, &mut outcome);
        let mut files = std::mem::take(&mut admitted.files);
        files.extend(crate::lessons::write_files(&lessons));
        files.extend(crate::lessons::write_files(&retired));
        files.extend(outcome.writes.into_iter().map(|w| (w.path, w.content)));
        let method = method_files::prepare(
            self.method,
            &before,
            &mut outcome.session,
            &files,
            now,
            false,
        );
        {
            let _writing = crate::fault::doing("write", "write the change");
            self.store
                .write_change(project, &before, &outcome.session, &files)?;
        }
        // After the change and apart from it: a file for the method that cannot be
        // written is said, and the change stands.
        let notices = &mut outcome.facts.notices;
        for_the_method(
            self.method,
            &before,
            &outcome.session,
            &files,
            method,
            notices,
        );
        // Said in the reply, not kept in the history: the policy's, not the step's.
        for notice in std::mem::take(&mut admitted.notices) {
            if !outcome.facts.notices.contains(&notice) {
                outcome.facts.notices.push(notice);
            }
        }
        let cannot_ask = decision.cannot_ask.as_deref();
        Ok(Done {
            human: for_human(project, &outcome.session, admitted.human_gates, cannot_ask),
            project: project.clone(),
            session: outcome.session,
            facts: outcome.facts,
            prompt,
            seen,
        })
    }

    /// The lessons the change teaches, each said in a notice. A risk accepted on work
    /// whose round saw a fault of the server's own on the task (newer than the step
    /// before the work's latest submission, even with a submission since) teaches none:
    /// the failure accepted may be the server's, not the work's; the decision is recorded
    /// all the same.
    fn taught(&self, before: &Session, outcome: &mut machine::Outcome) -> Vec<Lesson> {
        let accepts = crate::lessons::accepts_risk(before, &outcome.session);
        let fault = accepts
            .then(|| faults::during_round(self.project, before, before.current_stage))
            .flatten();
        let lessons = crate::lessons::learned(before, &outcome.session, fault.is_some());
        bind_to_words(before, &mut outcome.session, &lessons);
        if let Some(f) = fault {
            outcome.facts.notices.push(format!(
                "No lesson was recorded for the risk accepted: the server failed on this task at {} (it could not {}) while the work accepted was made, so the failure accepted may be the server's, not the work's. The fault's record is {}.",
                f.at,
                crate::code::clip(&f.doing, 200),
                faults::rel_path(f.session_id.as_deref())
            ));
        }
        for l in &lessons {
            outcome.facts.notices.push(format!(
                "Recorded a lesson for later tasks ({}, {} role): {}",
                l.category,
                l.role.id(),
                l.rel_path()
            ));
        }
        lessons
    }

    /// The role prompt the reply hands over, with the lessons it carries kept in the
    /// history, where the human can see them.
    fn prompt_for(&self, session: &mut Session) -> Result<Option<Template>> {
        if self.handover == Handover::Nothing {
            return Ok(None);
        }
        let _rendering = crate::fault::doing("prompt", "render the role prompt of the next step");
        let prompt = prompts::needed(self.method, self.store.user_prompts(), session)?;
        if let (Some(t), Some(entry)) = (&prompt, session.history.last_mut()) {
            entry.lessons = t.lessons.ids.clone();
        }
        Ok(prompt)
    }
}

/// Keeps in the human's decision the digest of the words of each lesson it taught (the
/// lessons the server writes with the decision's task, stage and time): a lesson file is
/// read as the human's only where its words are these (`lessons::load`), so a file that
/// copies a decision's time with other words is a hand-written one.
fn bind_to_words(before: &Session, after: &mut Session, lessons: &[Lesson]) {
    let new = before.history.len().min(after.history.len());
    for l in lessons
        .iter()
        .filter(|l| l.source == crate::lessons::Source::Human)
    {
        let entry = after.history[new..].iter_mut().find(|e| {
            e.at == l.date
                && e.stage == l.stage
                && e.decided_by == Some(crate::workflow::DecidedBy::Human)
        });
        if let Some(e) = entry {
            e.taught.push(crate::lessons::words_digest(&l.words));
        }
    }
}

/// The files the server writes for the BMAD method after a change, apart from it: the
/// shared plan's (`method_files`), a completed task's lessons for its retrospective, the
/// review's layer files and deferred findings (`review_layers`). Each failure is a notice.
fn for_the_method(
    installed: &Method,
    before: &Session,
    after: &Session,
    files: &[(String, String)],
    method: method_files::ForMethod,
    notices: &mut Vec<String>,
) {
    method_files::write(installed.project(), method, notices);
    notices.extend(method_files::offer_retrospective(installed, before, after));
    notices.extend(review_layers::defer_findings(
        installed, before, after, files,
    ));
    notices.extend(review_layers::write_layer_files(installed, after));
}

/// The BMAD method's document a submission names (`document_file`), read through the
/// project's confined reader as the draft of the stage the session is at; refused with
/// the reason when it cannot be taken.
fn with_file_draft(
    method: &Method,
    before: &Session,
    command: &Command,
    mut documents: Documents,
) -> Result<Documents> {
    let Command::Submit {
        document_file: Some(path),
        ..
    } = command
    else {
        return Ok(documents);
    };
    // A submission the state does not allow is refused as such by the machine, whatever
    // the file.
    let (track, stage, state) = (before.track, before.current_stage, before.current_state);
    if !crate::workflow::is_legal(track, stage, state, Action::Submit) {
        return Ok(documents);
    }
    let stage = crate::workflow::story::prompt_stage(before);
    let draft = crate::bmad_method::begin::read_draft(method, stage, path)
        .map_err(|problem| crate::workflow::WorkflowError::DocumentFile { problem })?;
    documents.file_draft = Some(machine::FileDraft {
        path: draft.path,
        text: draft.text,
    });
    Ok(documents)
}

/// The offer to begin the stage a change turned to from the BMAD method's document of it
/// (`bmad_method::begin`), when the project has one.
fn begin_offer(method: &Method, before: &Session, after: &Session) -> Option<String> {
    if after.current_stage == before.current_stage {
        return None;
    }
    offer_to_begin(method, after)
}

/// The offer to begin the stage `session` is at from the BMAD method's document of it,
/// while nothing was submitted there yet (for `status`, after a decision made in the
/// terminal or on the dashboard, whose reply no host read). `method`: the call's install.
pub fn offer_to_begin(method: &Method, session: &Session) -> Option<String> {
    let fresh = session.current_state == crate::workflow::State::Generating
        && session.record(session.current_stage).iteration == 0;
    fresh
        .then(|| crate::bmad_method::begin::offer(method, session.current_stage))
        .flatten()
}

#[cfg(test)]
mod once_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::person::Person;

    #[test]
    fn a_decision_on_someone_elses_task_is_said() {
        let mut s = Session::new(
            "00000000-0000-4000-8000-000000000000".into(),
            "add-login-ada-0000".into(),
            "/p".into(),
            "Add login".into(),
            vec![crate::workflow::Engine::Claude],
            Utc::now(),
        );
        s.owner = Person::parse("Ada Lovelace <ada@example.org>");
        let mut decision = Decision::by_host(None);
        decision.decider = Person::parse("Bob Smith <bob@example.org>");
        let said = others_task(&s, &decision).unwrap();
        assert!(
            said.starts_with("Bob Smith <bob@example.org> decided on a task that Ada Lovelace"),
            "{said}"
        );
        decision.decider = Person::parse("Ada L. <ada@example.org>");
        assert_eq!(
            others_task(&s, &decision),
            None,
            "the same email is the same person"
        );
    }
}
