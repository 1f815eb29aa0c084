//! The session's history as the layers above may ask it: each question they have of it is
//! a function here (the audit, the decisions, a stage's steps, when a round began, who
//! accepted a risk, where two merged histories fork), so that the history is read in the
//! core only (a test in [`crate::layers`] keeps it so). What one change did is not read here:
//! it is the change's record ([`super::Effects`]).

use super::action::Action;
use super::decision::DecidedBy;
use super::session::{HistoryEntry, Session};
use super::stage::Stage;

impl Session {
    /// How many steps the history holds: it grows with every change, so a change that
    /// waited (for the checks) knows whether another came first.
    pub fn steps(&self) -> usize {
        self.history.len()
    }

    /// How many times the work went back from review or QA to development (the step that
    /// left review or QA, then development next, or now): the method's review loopbacks.
    pub fn loopbacks(&self) -> usize {
        let stages: Vec<Stage> = (self.history.iter().map(|h| h.stage))
            .chain([self.current_stage])
            .collect();
        (stages.windows(2))
            .filter(|w| matches!(w[0], Stage::Review | Stage::Qa) && w[1] == Stage::Dev)
            .count()
    }

    /// The latest step.
    pub fn last_step(&self) -> Option<&HistoryEntry> {
        self.history.last()
    }

    /// Every step, oldest first: the audit a person reads.
    pub fn audit(&self) -> &[HistoryEntry] {
        &self.history
    }

    /// The decisions taken (steps that record who decided), oldest first.
    pub fn decisions(&self) -> impl Iterator<Item = &HistoryEntry> {
        self.history.iter().filter(|h| h.decided_by.is_some())
    }

    /// The steps taken at `stage`, oldest first.
    pub fn steps_at(&self, stage: Stage) -> Vec<&HistoryEntry> {
        self.history.iter().filter(|h| h.stage == stage).collect()
    }

    /// Who accepted the risk of `stage`'s failing report or checks, as the latest
    /// confirmation there recorded it: `None` when no risk stands accepted there,
    /// `Some(None)` when the step does not say who.
    pub fn risk_accepted_by(&self, stage: Stage) -> Option<Option<DecidedBy>> {
        if !self.record(stage).accepted_risk {
            return None;
        }
        let confirmed = self.history.iter().rev().find(|h| {
            h.stage == stage && matches!(h.action, Action::Confirm | Action::ConfirmSave)
        });
        Some(confirmed.and_then(|h| h.decided_by))
    }

    /// When the round of `stage`'s latest submission began: the time of the step before
    /// that submission (the session's last change when there is none).
    pub fn round_began_at(&self, stage: Stage) -> &str {
        let submitted = self
            .history
            .iter()
            .rposition(|h| h.stage == stage && h.action == Action::Submit);
        match submitted {
            Some(i) if i > 0 => &self.history[i - 1].at,
            _ => &self.updated_at,
        }
    }

    /// Every lesson the task's role prompts carried, in the order recalled.
    pub fn recalled_lessons(&self) -> impl Iterator<Item = &String> {
        self.history.iter().flat_map(|h| &h.lessons)
    }

    /// Where the history forks, as two histories merged into one file look: a step older
    /// than the one before it (the server never writes one), or a second `start`. The
    /// step's place, the step and the one before it.
    pub fn fork(&self) -> Option<(usize, &HistoryEntry, &HistoryEntry)> {
        self.history.windows(2).enumerate().find_map(|(i, pair)| {
            let (a, b) = (&pair[0], &pair[1]);
            (b.at < a.at || b.action == Action::Start).then_some((i + 1, b, a))
        })
    }

    /// Keeps the latest `n` steps, for a copy of the session bounded for a reply; how
    /// many there were.
    pub fn keep_last_steps(&mut self, n: usize) -> usize {
        let all = self.history.len();
        if all > n {
            self.history.drain(..all - n);
        }
        all
    }

    /// The words kept with each step (the decider's), for a copy bounded for a reply.
    pub fn step_words_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.history.iter_mut().filter_map(|h| h.feedback.as_mut())
    }

    /// Keeps in the first step the lessons the first role's prompt carried.
    pub fn carry_lessons(&mut self, ids: &[String]) {
        if let Some(start) = self.history.first_mut() {
            start.lessons = ids.to_vec();
        }
    }
}

/// The steps of a session stored as JSON, read as far as they read (a version a merge
/// left conflicted, a session a lesson is checked against): each as it is.
pub fn stored_steps(session: &serde_json::Value) -> &[serde_json::Value] {
    session["history"].as_array().map_or(&[], Vec::as_slice)
}
