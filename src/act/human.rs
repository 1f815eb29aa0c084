//! The one path of a human's decision, whichever channel it comes through (the terminal,
//! the dashboard, the client's dialog): what the decision would ask now, read once without
//! the lock ([`asking`]); the channel shows it and takes the human's answer; then
//! [`decide`] applies the answer as the human's, bound to the document as it was shown,
//! recorded with the channel and where it came from. A document that changed meanwhile is
//! refused as stale, with its digest now, and nothing changes.

use super::{act_at, Change, Done, Handover};
use crate::error::Error;
use crate::files::Project;
use crate::policy::approval::{Policy, Waiting};
use crate::policy::Watched;
use crate::store::{documents, Located, RefusedWith, SessionKey, Store};
use crate::workflow::machine::{self, Pending};
use crate::workflow::session::Session;
use crate::workflow::{Action, Command, DecidedBy, Decision, Provenance, Via, WorkflowError};

/// A decision waiting for the human, as a channel shows it.
pub struct Asking {
    pub at: Located,
    pub key: SessionKey,
    pub session: Session,
    pub pending: Pending,
}

impl Asking {
    pub fn project(&self) -> &Project {
        &self.at.project
    }

    /// What of `.bmad/config.toml` waits for the human's approval, for a channel that
    /// offers it beside the decision. A policy that cannot be read refuses the decision,
    /// which a channel that asks before it acts learns here, before asking in vain.
    pub fn config_waiting(&self) -> crate::error::Result<Option<Waiting>> {
        Ok(Policy::read(&self.at.project)?.waiting)
    }
}

/// What `action` would ask the human now (the document, its digest, the sprints, the
/// questions), read without the lock and changing nothing. On error, the session when it
/// was found, for a reply that names its state.
pub fn asking(
    store: &Store,
    cwd: Option<&str>,
    key: &SessionKey,
    action: Action,
) -> std::result::Result<Asking, RefusedWith> {
    let at = store.locate(cwd, key).map_err(|e| (e, None))?;
    let session = store.read(&at, key).map_err(|e| (e, None))?;
    match machine::pending(&session, action, &documents(&at.project, &session)) {
        Ok(mut pending) => Ok(Asking {
            pending: {
                pending
                    .notices
                    .extend(teammates(store, &at.project, &session));
                pending
            },
            at,
            key: key.clone(),
            session,
        }),
        Err(e) => Err((e.into(), Some(Box::new(session)))),
    }
}

/// That the task is a teammate's, for a human about to decide on it: who started it, and
/// who decides now (`None` when it is theirs, or either is unknown).
fn teammates(store: &Store, project: &Project, s: &Session) -> Option<String> {
    let owner = s.owner.as_ref()?;
    let me = store.git_now(project, true).person?;
    if me.is(owner) {
        return None;
    }
    Some(format!(
        "This task is {owner}'s: they started it{}. You decide on it as {me}, and the decision is recorded with your name.",
        s.branch
            .as_deref()
            .map(|b| format!(", and it was last changed on branch `{}`", crate::code::clip(b, 60)))
            .unwrap_or_default()
    ))
}

/// The human's answer, as a channel took it.
pub struct Answer {
    pub command: Command,
    pub via: Via,
    /// Who is behind the channel: kept with the decision.
    pub provenance: Provenance,
    /// The digest of the document as the channel showed it (by default the one
    /// [`asking`] read).
    pub seen_digest: Option<String>,
    pub handover: Handover,
}

/// How a decision ended for a channel.
pub enum Decided {
    Done(Box<Done>),
    /// The document changed since it was shown; nothing changed. `sha256` is its digest
    /// now.
    Stale {
        error: Error,
        sha256: String,
    },
    Refused(RefusedWith),
}

/// Applies the human's `answer` to the session at `at` (what [`asking`] found, or the
/// session a channel showed by other means).
pub fn decide(store: &Store, at: &Located, key: &SessionKey, answer: Answer) -> Decided {
    let decision = Decision {
        decided_by: DecidedBy::Human,
        via: answer.via,
        seen_digest: answer.seen_digest,
        provenance: Some(Box::new(answer.provenance)),
        // The person: `BMAD_OWNER`, else git's identity, asked by the change.
        decider: None,
        cannot_ask: None,
    };
    let change = Change {
        command: answer.command,
        decision,
        handover: answer.handover,
    };
    match act_at(store, at, key, change, &Watched::none()) {
        Ok(done) => Decided::Done(Box::new(done)),
        Err((error, session)) => match &error {
            Error::Workflow(WorkflowError::StaleDecision { current, .. }) => Decided::Stale {
                sha256: current.clone(),
                error,
            },
            _ => Decided::Refused((error, session)),
        },
    }
}

/// The digest of the document `asking` read, the default a channel binds its answer to.
pub fn shown_digest(asking: &Asking) -> Option<String> {
    asking.pending.document.as_ref().map(|d| d.sha256.clone())
}

/// A human's decision on one of the project's lessons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LessonChange {
    /// Kept in the folder, no longer recalled into prompts.
    Retire,
    /// Recalled again.
    Restore,
}

/// Releases the claim `held` on the team's remote, the human's decision: bound to the
/// claim as it was shown (refused when it moved since), recorded on the remote with the
/// person and the channel. What to tell the human.
pub fn release_claim(
    store: &Store,
    cwd: Option<&str>,
    held: &crate::store::stories::board::Held,
    via: Via,
) -> std::result::Result<String, String> {
    use crate::workflow::authorship::{label, Speaker};
    let project = store.project(cwd).map_err(|e| e.to_string())?;
    let person = store.git_now(&project, true).person;
    let channel = label(Speaker::Human, Some(via));
    let who = person.map_or_else(|| "someone unnamed".to_string(), |p| p.to_string());
    crate::store::stories::board::release(&project, held, &who, &channel).map_err(|why| {
        format!("the claim was not released: {why}. It may have been taken or released meanwhile: `bmad-mcp claims` shows it as it is now")
    })?;
    tracing::info!(parent = %held.parent_id, sprint = held.sprint, by = %who, "a claim released");
    Ok(format!(
        "Released sprint {} (recorded on the remote as released by {who}, {channel}): anyone may claim it now. Work already done for it stays on its branch.",
        held.sprint
    ))
}

/// Gives `sprint` of the parent `parent_id`, which two stories hold, to the story the
/// human keeps (`kept`, its claim), the human's decision: the claim on the remote is made
/// to name it, bound to the claim shown (`was`: refused when it moved since), and the one
/// it replaced recorded as released by the person through the channel. What to tell the
/// human.
pub fn keep_story(
    store: &Store,
    (parent_id, sprint): (&str, u32),
    kept: &crate::store::stories::Claimant,
    was: Option<&crate::store::stories::board::Held>,
    via: Via,
) -> std::result::Result<String, String> {
    use crate::workflow::authorship::{label, Speaker};
    let project = store.project(None).map_err(|e| e.to_string())?;
    let person = store.git_now(&project, true).person;
    let channel = label(Speaker::Human, Some(via));
    let who = person.map_or_else(|| "someone unnamed".to_string(), |p| p.to_string());
    let mut kept = kept.clone();
    kept.kept_by = Some(format!("{who}, {channel}"));
    crate::store::stories::board::keep(&project, (parent_id, sprint), &kept, was, (&who, &channel))
        .map_err(|why| {
            format!("the choice was not recorded: {why}. The claim may have moved meanwhile: `bmad-mcp claims` shows it as it is now")
        })?;
    tracing::info!(parent = %parent_id, sprint, by = %who, "a story kept");
    Ok(format!(
        "Sprint {sprint} is kept for the story of {} (recorded on the remote as chosen by {who}, {channel}): the claim names it, and the other story is stopped at its next call. Its work stays on its branch.",
        crate::code::visible(&crate::code::clip(&kept.named(), 300))
    ))
}

/// Retires or restores the lesson `id` of the project, as the human's decision through
/// `via`, under the project's lock (read again there: another decision may have just
/// written it), bound to what the channel showed of it (`seen`: at least 12 digits of its
/// `Lesson::shown_sha256`) when it showed it. The file keeps the decision (`decided:`):
/// what, by whom (the person the settings or git name, and the channel) and when. Returns
/// it in words, or why not.
pub fn lesson(
    store: &Store,
    cwd: Option<&str>,
    id: &str,
    change: LessonChange,
    via: Via,
    seen: Option<&str>,
) -> std::result::Result<String, String> {
    use crate::lessons;
    use crate::workflow::authorship::{label, Speaker};
    let project = store.project(cwd).map_err(|e| e.to_string())?;
    let person = store.git_now(&project, true).person;
    let _lock = store.lock(&project).map_err(|e| e.to_string())?;
    let loaded = lessons::load(&project).map_err(|e| e.to_string())?;
    let Some(found) = loaded.find(id) else {
        return Err(format!(
            "no lesson `{}` in {}",
            crate::code::clip(id, 60),
            lessons::LESSONS_DIR
        ));
    };
    if let Some(seen) = seen {
        let now = found.shown_sha256();
        if seen.len() < 12 || !now.starts_with(seen) {
            return Err(format!(
                "{} changed since it was shown (sha256 now {}): read it again before deciding",
                found.rel_path(),
                &now[..12]
            ));
        }
    }
    let mut l = found.clone();
    let (verb, already) = match change {
        LessonChange::Retire => ("retired", l.retired.is_some()),
        LessonChange::Restore => ("restored", l.retired.is_none()),
    };
    if already {
        return Ok(format!("{} was already {verb}.", l.id));
    }
    let now = crate::workflow::session::timestamp(chrono::Utc::now());
    l.retired = (change == LessonChange::Retire).then(|| now.clone());
    let channel = label(Speaker::Human, Some(via));
    let who = match &person {
        Some(p) => format!("{p} ({channel})"),
        None => channel,
    };
    l.decided = Some(format!("{verb} by {who} at {now}"));
    project
        .write_atomic(&l.rel_path(), lessons::render(&l).as_bytes())
        .map_err(|e| e.to_string())?;
    tracing::info!(lesson = %l.id, decision = verb, by = %who, "a lesson decided");
    Ok(match change {
        LessonChange::Retire => format!(
            "Retired {}: it stays in {} and is no longer recalled into prompts.",
            l.id,
            l.rel_path()
        ),
        LessonChange::Restore => format!("Restored {}: it is recalled into prompts again.", l.id),
    })
}

/// A story of the parent `task`'s `sprint` that the BMAD method built, as a channel showed
/// it: the file that says it is built and the SHA-256 of its text then, and what the
/// project's checks said of the work.
pub struct Built<'a> {
    pub task: &'a str,
    pub sprint: u32,
    pub seen_sha256: &'a str,
    pub checks: &'a str,
}

/// Accepts `built`, the human's decision through `via`, under the project's lock: refused
/// unless the method still holds the sprint as built (`done` or in review, never while it
/// builds) and its file is as it was shown. The sprint then counts as a completed story of
/// the parent (its entry records who accepted it, the channel and the checks), and the
/// method's sprint status says `done`; the epic waits for the parent's final QA. What to
/// tell the human, or why not.
pub fn accept_built(store: &Store, built: &Built, via: Via) -> std::result::Result<String, String> {
    use crate::workflow::authorship::{label, Speaker};
    let project = store.project(None).map_err(|e| e.to_string())?;
    let person = store.git_now(&project, true).person;
    let channel = label(Speaker::Human, Some(via));
    let who = person.map_or_else(|| "someone unnamed".to_string(), |p| p.to_string());
    let _lock = store.lock(&project).map_err(|e| e.to_string())?;
    let key = SessionKey::from_task(built.task);
    let (_, parent) = store.load(None, &key).map_err(|e| e.to_string())?;
    let parent = crate::store::stories::with_stories(&project, &parent);
    let method = crate::bmad_method::Method::of(&project);
    let held = &held_as_built(store, &method, &parent, built.sprint)?;
    let now = built_sha256(&project, &held.file);
    if now.as_deref() != Some(built.seen_sha256) {
        return Err(format!(
            "{} changed since it was shown: nothing was accepted; show it again",
            crate::code::visible(&held.file)
        ));
    }
    let by = format!("{who}, {channel}; the project's checks: {}", built.checks);
    store
        .record_accepted(&project, &parent, held, &by)
        .map_err(|e| format!("the acceptance was not recorded: {e}"))?;
    let status = super::method_files::story_accepted(&method, &parent, &held.key);
    if let Ok(Some(path)) = &status {
        crate::store::wrote(&project, std::slice::from_ref(path));
    }
    tracing::info!(task = %parent.task_name, sprint = built.sprint, by = %who, "a story the method built accepted");
    let said = match status {
        Ok(Some(path)) => format!(
            "`{}` is `done` in {}",
            held.key,
            crate::code::visible(&path)
        ),
        Ok(None) => format!(
            "`{}` was already `done` in the method's sprint status",
            held.key
        ),
        Err(why) => format!("the method's sprint status was not updated: {why}"),
    };
    Ok(format!(
        "Sprint {} of `{}`, built by the BMAD method, is accepted (recorded as accepted by {who}, {channel}) and counts as a completed story; {said}. The epic is `done` once the task's final QA passes.",
        built.sprint, parent.task_name
    ))
}

/// The sprint `sprint` of `parent` as the method holds it, built: why not when it holds
/// none, or builds it still.
pub fn held_as_built(
    store: &Store,
    method: &crate::bmad_method::Method,
    parent: &Session,
    sprint: u32,
) -> std::result::Result<crate::bmad_method::shared_plan::held::Held, String> {
    let task = crate::code::visible(&parent.task_name);
    let holds = store.method_holds(method, parent);
    let Some(held) = holds.held.into_iter().find(|h| h.sprint == sprint) else {
        return Err(format!("sprint {sprint} of {task} is not held by the BMAD method now: nothing to accept (`bmad-mcp status {task}` shows what it holds)"));
    };
    if !held.built() {
        return Err(format!("sprint {sprint} is still `in-progress` in {}: the method's /bmad-build is building it; accept it once it is built", crate::code::visible(&held.file)));
    }
    Ok(held)
}

/// The SHA-256 of the text of `path` in `project`, read as [`Store::method_holds`] reads it.
pub fn built_sha256(project: &Project, path: &str) -> Option<String> {
    use sha2::Digest as _;
    let text = project
        .read_in_project(path, crate::bmad_method::MAX_FILE_BYTES)
        .ok()??;
    Some(format!("{:x}", sha2::Sha256::digest(text.as_bytes())))
}
