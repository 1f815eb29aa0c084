//! What one change did, as one typed record: the stage and state it moved, the decision and who
//! made it on which channel, the stage it completed, the risk it accepted, the story whose shared
//! entry follows it; and, added by the shell that does the writing ([`crate::act`]),
//! every file the server wrote with it (path and git blob id), the statuses it gave the task's
//! stories in the BMAD method's sprint status, and the lessons it recalled, taught and retired. The
//! machine fills what it decides ([`Effects::of_step`]); everything that follows a change (the
//! reply, the lessons, drift and the empty-diff check, the method's files) reads this record rather
//! than the session's history, so that what a change did is said once, here.

use super::action::Action;
use super::decision::{DecidedBy, Via};
use super::person::Person;
use super::session::{HistoryEntry, Session, State};
use super::stage::Stage;

/// A stage and a state of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub stage: Stage,
    pub state: State,
}

impl Place {
    pub fn of(s: &Session) -> Place {
        Place {
            stage: s.current_stage,
            state: s.current_state,
        }
    }
}

/// A decision, as the change recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    /// The human, or the host's word.
    pub by: DecidedBy,
    /// The channel it came through (the dialog, the terminal, the dashboard, a tool call).
    pub via: Via,
    /// The person deciding, as git (or `BMAD_OWNER`) names them.
    pub decider: Option<Person>,
    /// The SHA-256 of the document decided on, as read when it was taken.
    pub digest: Option<String>,
    /// The decider's own words given with it: a send-back's feedback, a note.
    pub words: Option<String>,
}

/// A risk accepted: a stage confirmed while its report's verdict or the project's checks
/// fail (the one rule: [`super::rules::risk_in`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Risk {
    pub stage: Stage,
    /// Everything that fails, as the human was told it.
    pub failure: String,
    /// What fails in the project's checks, when they are among it.
    pub checks: Option<String>,
}

/// A file the server wrote with the change: its path (relative to the project) and the
/// id git gives the bytes the file holds once written (`git hash-object --no-filters`);
/// `None` only where the server added to a file it could not read whole (an append to a
/// ledger too large to read), so the file as a whole is not known to be the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub path: String,
    pub blob: Option<String>,
}

/// The lessons a change moved, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LessonsMoved {
    /// Carried by the role prompt handed over with the change's reply.
    pub recalled: Vec<String>,
    /// Taught by the change, written with it.
    pub taught: Vec<String>,
    /// Resolved by the change (a completed task's closing report names them), retired.
    pub retired: Vec<String>,
}

/// What one change did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// The action as the caller named it (`confirm` with `confirmed: false` is a
    /// `confirm` that [`Effects::rejected`]).
    pub action: Action,
    /// The decision sent the document back (`reject`, or `confirm` or `approve` with
    /// `false`).
    pub rejected: bool,
    /// The time of the change's history entry.
    pub at: String,
    pub from: Place,
    pub to: Place,
    /// For a decision: who made it, on which channel, about which document.
    pub decision: Option<Decided>,
    /// The stage the change completed.
    pub completed: Option<Stage>,
    /// The failing report or checks the change accepted as a risk.
    pub risk: Option<Risk>,
    /// For a story: its parent session and sprint, whose shared entry follows the change.
    pub story: Option<(String, u32)>,
    /// Every file the server wrote with the change, in the order written.
    pub written: Vec<Written>,
    /// The statuses the change gave the task's stories (and epic) in the BMAD method's
    /// sprint status, by key.
    pub statuses: Vec<(String, String)>,
    pub lessons: LessonsMoved,
    /// Where the change's entry is in the session's history.
    step: usize,
}

impl Effects {
    /// The record of the step the machine just took from `before` to `after` (whose last
    /// history entry is the step's).
    pub(super) fn of_step(
        before: &Session,
        after: &Session,
        rejected: bool,
        (completed, risk): (Option<Stage>, Option<Risk>),
    ) -> Effects {
        let step = after.history.len().saturating_sub(1);
        let entry = &after.history[step];
        let decision = entry.decided_by.zip(entry.via).map(|(by, via)| Decided {
            by,
            via,
            decider: entry.decider.clone(),
            digest: entry.digest.clone(),
            words: entry.feedback.clone(),
        });
        Effects {
            action: entry.action,
            rejected,
            at: entry.at.clone(),
            // The stage and state the step was taken at, as its entry records them.
            from: Place {
                stage: entry.stage,
                state: entry.from.unwrap_or(before.current_state),
            },
            to: Place::of(after),
            decision,
            completed,
            risk,
            story: (after.story.as_ref()).map(|l| (l.parent_session_id.clone(), l.sprint)),
            written: Vec::new(),
            statuses: Vec::new(),
            lessons: LessonsMoved::default(),
            step,
        }
    }

    /// For the tests of what follows a change: the record of a step a test built by
    /// hand, `after`'s last history entry.
    #[cfg(test)]
    pub fn of_built_step(
        before: &Session,
        after: &Session,
        rejected: bool,
        risk: Option<Risk>,
    ) -> Effects {
        Effects::of_step(before, after, rejected, (None, risk))
    }

    /// The change's place in the session's history: how many steps came before it (the
    /// same task advanced on two branches has two changes at one place).
    pub fn step(&self) -> usize {
        self.step
    }

    /// Whether the change confirmed a stage (`confirm` or its alias).
    pub fn confirms(&self) -> bool {
        matches!(self.action, Action::Confirm | Action::ConfirmSave) && !self.rejected
    }

    /// Whether the change is the approval of the sprint plan.
    pub fn approves_plan(&self) -> bool {
        self.action == Action::Approve && !self.rejected && self.from.stage == Stage::approval()
    }

    /// Whether the change completed the task.
    pub fn completes_task(&self) -> bool {
        self.to.state == State::Completed && self.from.state != State::Completed
    }

    /// Whether the change turned the session to another stage.
    pub fn moved_stage(&self) -> bool {
        self.from.stage != self.to.stage
    }

    /// The human's channel, when the human decided.
    pub fn human_via(&self) -> Option<Via> {
        let d = self.decision.as_ref()?;
        (d.by == DecidedBy::Human).then_some(d.via)
    }

    /// The risk the change accepted at `stage`.
    pub fn accepted_risk_at(&self, stage: Stage) -> Option<&Risk> {
        self.risk.as_ref().filter(|r| r.stage == stage)
    }

    /// Notes a file the server wrote with the change.
    pub fn wrote(&mut self, path: impl Into<String>, blob: Option<String>) {
        self.written.push(Written {
            path: path.into(),
            blob,
        });
    }

    /// The blob id the server last wrote at `path` with this change.
    pub fn blob_of(&self, path: &str) -> Option<&str> {
        self.written
            .iter()
            .rev()
            .find(|w| w.path == path)
            .and_then(|w| w.blob.as_deref())
    }

    /// The change's own history entry in `session` (the session the change produced).
    pub fn entry<'a>(&self, session: &'a Session) -> Option<&'a HistoryEntry> {
        session.history.get(self.step)
    }

    fn entry_mut<'a>(&self, session: &'a mut Session) -> Option<&'a mut HistoryEntry> {
        session.history.get_mut(self.step)
    }

    /// The lessons the role prompt handed over with the change carries: kept in the
    /// change's history entry, where the human sees them, and in the record.
    pub fn recall(&mut self, session: &mut Session, ids: &[String]) {
        if let Some(e) = self.entry_mut(session) {
            e.lessons = ids.to_vec();
        }
        self.lessons.recalled = ids.to_vec();
    }

    /// A lesson the change taught (`id`); `words_digest` for one in the human's words,
    /// kept in the human's decision so that the lesson file is read as theirs only where
    /// its words are these.
    pub fn taught(&mut self, session: &mut Session, id: &str, words_digest: Option<String>) {
        let human = self.human_via().is_some();
        if let (Some(d), true) = (words_digest, human) {
            if let Some(e) = self.entry_mut(session) {
                e.taught.push(d);
            }
        }
        self.lessons.taught.push(id.to_string());
    }
}
