//! What a human is asked to decide, read without changing anything: the document as it
//! is now (path, size, SHA-256), the score, the plan's sprints, the open questions. The
//! channels that ask the human (the client's dialog, the terminal) show this, and bind
//! the answer to the digest read here, so that a document changed in between makes the
//! answer stale rather than applied to a version nobody saw.

use super::super::action::Action;
use super::super::decision::Decision;
use super::super::rules;
use super::super::session::{Question, Session, Sprint, StageRecord, State};
use super::super::stage::{QualityGate, Stage};
use super::super::submission;
use super::{sha256_hex, Documents, Facts, Step, WorkflowError};

/// The kind of question, from the state the session is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Confirm the document, or send it back with feedback.
    Confirm,
    /// Approve the sprint plan and a scope, or send it back with feedback.
    Approve,
    /// Answer the open clarification questions.
    Answer,
}

/// The document a decision is about, as read now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub path: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub asked: Asked,
    pub stage: Stage,
    pub task_name: String,
    pub session_id: String,
    /// `None` only for a rejection whose document cannot be read (sending it back needs
    /// no reading).
    pub document: Option<Shown>,
    /// The kept candidate's score, and the stage's passing score, where it has one.
    pub score: Option<u32>,
    pub gate: Option<u32>,
    /// For [`Asked::Approve`]: the sprints of the plan as it is on disk now.
    pub sprints: Vec<Sprint>,
    /// For [`Asked::Answer`]: the questions not yet answered.
    pub questions: Vec<Question>,
    /// For [`Asked::Confirm`]: the questions the author answered with an assumption, and
    /// what it assumed; confirming accepts them.
    pub assumed: Vec<(Question, String)>,
    /// Things the human should know (the document was edited, deleted, …).
    pub notices: Vec<String>,
    /// For a report whose own verdict failed (review, QA): what failed. Confirming then
    /// accepts the risk; sending it back returns the work to development.
    pub failed_verdict: Option<String>,
}

impl Pending {
    /// The first 12 hex digits of the document's SHA-256, as shown to people.
    pub fn short_digest(&self) -> Option<&str> {
        self.document.as_ref().map(|d| &d.sha256[..12])
    }
}

/// What `action` at `session`'s current state would ask the human. Refused as the
/// transition itself would refuse it: an illegal action, or a document that cannot be
/// decided on.
pub fn pending(
    session: &Session,
    action: Action,
    documents: &Documents,
) -> Result<Pending, WorkflowError> {
    let stage = session.current_stage;
    let asked = asked_for(session, action)?;
    let decision = Decision::by_host(None);
    let mut step = Step {
        session: session.clone(),
        completed: None,
        risk: None,
        writes: Vec::new(),
        facts: Facts::default(),
        documents,
        decision: &decision,
        decided_digest: None,
        evidence: Default::default(),
        words: None,
        drafted: None,
        now: chrono::DateTime::UNIX_EPOCH,
        stamp: String::new(),
    };
    let rec = session.record(stage).clone();
    let (path, text) = step.document_asked(&rec, asked, action)?;
    let document = path.zip(text.as_ref()).map(|(path, text)| Shown {
        path,
        sha256: sha256_hex(text),
        size: text.len() as u64,
    });
    let mut sprints = Vec::new();
    if let (Asked::Approve, Some(text)) = (asked, &text) {
        sprints = submission::sprints(text)
            .into_iter()
            .map(|(number, title)| Sprint { number, title })
            .collect();
        // The plan as it is now, read for the requirements no sprint plans.
        step.trace(stage, text);
    }
    let gate = match stage.gate() {
        QualityGate::Score(g) => Some(g),
        _ => None,
    };
    let score = rec.chosen_engine.and_then(|e| rec.scores.get(&e).copied());
    let mut notices = step.facts.notices;
    notices.extend(whose_draft(&rec, document.as_ref(), documents));
    if let Some(below) = rules::below_gate(stage, &rec).filter(|_| asked == Asked::Confirm) {
        notices.push(format!(
            "It stays below the gate ({below}): confirming accepts it as it is, recorded as an accepted risk; rejecting sends it back with your feedback for a rewrite."
        ));
    }
    if let Some(n) = document
        .as_ref()
        .and_then(|d| super::submit::since_rejection(session, stage, &d.sha256))
    {
        notices.push(n);
    }
    Ok(Pending {
        asked,
        stage,
        task_name: session.task_name.clone(),
        session_id: session.session_id.clone(),
        document,
        score,
        gate,
        sprints,
        questions: if asked == Asked::Answer {
            rec.open_questions()
        } else {
            Vec::new()
        },
        assumed: if asked == Asked::Confirm {
            rec.assumed_questions()
        } else {
            Vec::new()
        },
        notices,
        failed_verdict: rules::failed_verdict(stage, &rec),
    })
}

/// Whose draft the human decides on, when it was taken from a file (`document_file`): the
/// file's, while both the document and the file are the text read; else one taken from it,
/// which changed since (the document, or the file in `documents`).
fn whose_draft(
    rec: &StageRecord,
    document: Option<&Shown>,
    documents: &Documents,
) -> Option<String> {
    if let (None, Some(file)) = (&rec.from_file, &rec.rewrites) {
        return Some(super::submit::rewritten(file));
    }
    let from = rec.from_file.as_ref()?;
    let same = document.is_some_and(|d| d.sha256 == from.sha256);
    let file_same =
        matches!(documents.taken(&from.path), Some(Ok(Some(t))) if sha256_hex(t) == from.sha256);
    Some(match (same, file_same) {
        (true, true) => format!("This draft is {}.", from.label()),
        (true, false) => format!(
            "This draft was taken from {}; that file has changed since, and the draft is its text as it was read.",
            from.origin()
        ),
        (false, _) => format!(
            "This draft was taken from {}, and it has changed since.",
            from.origin()
        ),
    })
}

/// What kind of question `action` answers at the session's state; refused where the
/// action is not a decision legal there.
fn asked_for(session: &Session, action: Action) -> Result<Asked, WorkflowError> {
    let (stage, state, track) = (session.current_stage, session.current_state, session.track);
    if !rules::is_legal(track, stage, state, action) || !action.decides() {
        return Err(WorkflowError::IllegalAction {
            action,
            state,
            stage,
            allowed: rules::allowed_actions(track, stage, state),
        });
    }
    Ok(match state {
        State::Clarifying => Asked::Answer,
        State::AwaitingApproval => Asked::Approve,
        _ => Asked::Confirm,
    })
}

impl Step<'_> {
    /// The document the human is asked about, by path, and its text: the draft whose
    /// questions they answer, or the document they decide on (whose text a `reject` does
    /// not need: the human may send back what cannot be read).
    fn document_asked(
        &mut self,
        rec: &StageRecord,
        asked: Asked,
        action: Action,
    ) -> Result<(Option<String>, Option<String>), WorkflowError> {
        match asked {
            Asked::Answer => Ok(match rec.draft_ref.as_ref().map(|d| d.file_path.clone()) {
                Some(path) => {
                    let text = self.documents.read(&path).ok().flatten();
                    (Some(path), text)
                }
                None => (None, None),
            }),
            Asked::Confirm | Asked::Approve => {
                let path = self.decided_path(self.session.current_stage);
                match self.reviewed_text(rec, &path) {
                    Ok(text) => Ok((Some(path), Some(text))),
                    Err(_) if action == Action::Reject => Ok((Some(path), None)),
                    Err(e) => Err(e),
                }
            }
        }
    }
}
