//! The transition function: `(Session, Command) → Outcome | WorkflowError` (docs/spec.md §3–§5).
//! It decides everything (the next state, the files to write, the facts for the reply)
//! and does no I/O of its own: the caller passes the clock and the documents it read
//! for the step ([`Documents`]), and writes the outcome. Which action is legal where, and which state
//! follows a submission, are the rules of [`super::rules`]; this module carries them out.
//! Submissions are handled in `submit`, the human's decisions in `decide`. What a step
//! did comes back as its record ([`Effects`]), which whatever follows the change reads.

mod decide;
mod documents;
pub(in crate::workflow) mod kept_words;
mod pending;
mod promote;
mod stories;
mod submit;
mod trace;

pub use documents::{Documents, FileDraft, FileText};
pub use pending::{pending, Asked, Pending, Shown};

use std::collections::BTreeMap;

/// How the notice of the checks a submission ran begins: it says what the reply's
/// `checks` field shows, for a reader of the notices alone.
pub const CHECKS_RAN: &str = "The server ran the project's checks: ";

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::action::Action;
use super::decision::Decision;
use super::effects::{Effects, Risk};
use super::error::WorkflowError;
use super::evidence::Evidence;
use super::rules;
use super::session::{timestamp, Artifact, ContentRef, HistoryEntry, Session, StageStatus, State};
use super::stage::Stage;

/// A session action, already validated for shape by the adapter.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Submit {
        stage: Option<Stage>,
        claude_result: Option<String>,
        codex_result: Option<String>,
        /// A file of the project whose text is the document (a BMAD method document),
        /// read by the caller into [`Documents::file_draft`]; `claude_result` then holds
        /// at most the JSON of the score, questions and gaps.
        document_file: Option<String>,
    },
    Answer {
        answers: BTreeMap<String, String>,
    },
    /// `confirm` or its alias `confirm_save` (named by `action`), with `confirmed: true`.
    Confirm {
        action: Action,
        /// The human's words given with the acceptance ("looks good, but add X"): kept
        /// with the decision and shown to the roles after it.
        note: Option<String>,
        /// Answers to the stage's open questions given while accepting, recorded as an
        /// `answer` would record them.
        answers: BTreeMap<String, String>,
    },
    Approve {
        scope: Option<String>,
        /// As for `Confirm`: the human's words given with the approval.
        note: Option<String>,
    },
    /// `reject`, or `confirm`/`confirm_save`/`approve` with `false`; `action` is the one
    /// the caller used, and decides where the rejection is legal.
    Reject {
        action: Action,
        feedback: Option<String>,
    },
    /// The human moves the session to the track its own promotes to (`quick` → `full`),
    /// keeping every document written; `note` says why.
    Promote {
        note: Option<String>,
    },
}

impl Command {
    /// The action the caller named.
    pub fn action(&self) -> Action {
        match self {
            Command::Submit { .. } => Action::Submit,
            Command::Answer { .. } => Action::Answer,
            Command::Confirm { action, .. } | Command::Reject { action, .. } => *action,
            Command::Approve { .. } => Action::Approve,
            Command::Promote { .. } => Action::Promote,
        }
    }
}

/// A file the caller must write (atomically) before it stores the new session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// Relative to the project directory; always under `.bmad-task/` or `.claude/specs/`.
    pub path: String,
    pub content: String,
}

/// Facts about the step just taken that the reply reports and the session does not keep.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Facts {
    /// Improvement guidance for a below-gate draft.
    pub guidance: Vec<String>,
    /// Things the caller should know (an ignored field, an edited artifact, …).
    pub notices: Vec<String>,
    /// The document the human is asked to read now.
    pub review_path: Option<String>,
    /// The requirements trace reads as it did before this step, so the reply to the step
    /// before gave it already.
    pub trace_unchanged: bool,
    /// The trace after this step (`Some(None)`: the session has none), built once for the
    /// reply; `None` where no step built it.
    pub trace: Option<Box<Option<super::trace::Summary>>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub session: Session,
    pub writes: Vec<FileWrite>,
    pub facts: Facts,
    /// What the change did, as the machine decided it; the shell adds what it wrote.
    pub effects: Effects,
}

pub fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// Applies one action to a session. On error nothing is to be written and the session
/// stays as it was. No checks ran: see [`apply_observed`].
pub fn apply(
    session: &Session,
    command: Command,
    decision: &Decision,
    documents: &Documents,
    now: DateTime<Utc>,
) -> Result<Outcome, WorkflowError> {
    apply_observed(session, command, decision, Evidence::None, documents, now)
}

/// [`apply`], with what the server observed beside the command: the project's checks as
/// it ran them for this submission. A submission of a stage that runs checks records them,
/// and stops at the human while one fails.
pub fn apply_observed(
    session: &Session,
    command: Command,
    decision: &Decision,
    evidence: Evidence,
    documents: &Documents,
    now: DateTime<Utc>,
) -> Result<Outcome, WorkflowError> {
    let stage = session.current_stage;
    let state = session.current_state;
    let action = command.action();
    let track = session.track;
    if !rules::is_legal(track, stage, state, action) {
        return Err(WorkflowError::IllegalAction {
            action,
            state,
            stage,
            allowed: rules::allowed_actions(track, stage, state),
        });
    }

    let rejected = matches!(command, Command::Reject { .. });
    let mut step = Step {
        session: session.clone(),
        completed: None,
        risk: None,
        writes: Vec::new(),
        facts: Facts::default(),
        documents,
        decision,
        decided_digest: None,
        evidence,
        words: None,
        drafted: None,
        now,
        stamp: now.format("%Y%m%dT%H%M%S%6fZ").to_string(),
    };
    match command {
        Command::Submit {
            stage: given,
            claude_result,
            codex_result,
            document_file,
        } => step.submit(stage, given, claude_result, codex_result, document_file)?,
        Command::Answer { answers } => step.answer(stage, answers)?,
        Command::Confirm { note, answers, .. } => {
            step.accept_answers(stage, answers)?;
            step.confirm(stage)?;
            step.keep_note(stage, note);
        }
        Command::Approve { scope, note } => {
            step.approve(stage, scope)?;
            step.keep_note(stage, note);
        }
        Command::Reject { feedback, .. } => step.reject(stage, feedback)?,
        Command::Promote { note } => step.promote(stage, note),
    }
    step.finish(action, stage, state);
    let summary = super::trace::summary;
    let after = summary(&step.session);
    step.facts.trace_unchanged = summary(session) == after;
    step.facts.trace = Some(Box::new(after));
    let done = (step.completed, step.risk.take());
    Ok(Outcome {
        effects: Effects::of_step(session, &step.session, rejected, done),
        session: step.session,
        writes: step.writes,
        facts: step.facts,
    })
}

/// One application of an action: the session being changed, and what it produces.
struct Step<'a> {
    session: Session,
    /// The stage this step completed.
    completed: Option<Stage>,
    /// The risk this step accepted.
    risk: Option<Risk>,
    writes: Vec<FileWrite>,
    facts: Facts,
    documents: &'a Documents,
    /// Who decides, and which version of the document they saw.
    decision: &'a Decision,
    /// The digest of the document a decision was about, read when it was taken.
    decided_digest: Option<String>,
    /// The checks the server ran for a submission, taken when it is recorded.
    evidence: Evidence,
    /// The human's words given with this decision, kept in its history entry.
    words: Option<String>,
    /// The file a submission's document was taken from, recorded with the submission.
    drafted: Option<super::authorship::FromFile>,
    now: DateTime<Utc>,
    stamp: String,
}

impl Step<'_> {
    fn temp_path(&self, stage: Stage, kind: &str, ext: &str) -> String {
        format!(
            ".bmad-task/temp/{}/{}_{}_{}.{}",
            self.session.session_id, stage, kind, self.stamp, ext
        )
    }

    /// Queues a file and returns its content reference.
    fn write(&mut self, path: String, content: String) -> ContentRef {
        let r = ContentRef::new(path.clone(), &content, self.now);
        self.writes.push(FileWrite { path, content });
        r
    }

    fn write_temp(&mut self, stage: Stage, kind: &str, content: String) -> ContentRef {
        let path = self.temp_path(stage, kind, "md");
        self.write(path, content)
    }

    /// Records the checks run for this submission of `stage` (none when none ran), each
    /// check's kept output as a file of its own beside the session's other texts.
    fn record_checks(&mut self, stage: Stage) {
        let run = match std::mem::take(&mut self.evidence) {
            Evidence::None => None,
            Evidence::Ran { mut run, outputs } => {
                for (check, output) in run.checks.iter_mut().zip(outputs) {
                    if output.trim().is_empty() {
                        continue;
                    }
                    let path = self.temp_path(stage, &format!("check-{}", check.name), "log");
                    check.output = Some(self.write(path, output));
                }
                self.facts.notices.push(match run.failure() {
                    None => format!(
                        "{CHECKS_RAN}{} passed.",
                        run.checks
                            .iter()
                            .map(|c| format!("`{}`", c.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Some(failure) => format!("{CHECKS_RAN}{failure}."),
                });
                Some(run)
            }
        };
        self.session.record_mut(stage).checks = run;
    }

    /// Writes the stage document to `.claude/specs/<task>/` and records it. A file there
    /// that differs from what the server last saved was changed by the human: it is kept
    /// under `.bmad-task/temp/` first, and the reply says where.
    fn write_artifact(&mut self, stage: Stage, document: String) -> Result<(), WorkflowError> {
        let path = self.session.artifact_path(stage);
        match self.documents.read(&path) {
            Ok(None) => {}
            Ok(Some(on_disk)) => {
                let saved = self.session.record(stage).artifact.as_ref();
                let changed = saved.is_none_or(|a| a.sha256 != sha256_hex(&on_disk));
                if changed && on_disk != document && !on_disk.trim().is_empty() {
                    let kept = self.write_temp(stage, "human-edit", on_disk);
                    self.facts.notices.push(format!(
                        "{path} had been changed since the server saved it; that version is kept as {} before the new document replaces it.",
                        kept.file_path
                    ));
                }
            }
            Err(reason) => {
                return Err(WorkflowError::DocumentUnreadable {
                    path,
                    reason,
                    todo: "It is not replaced, to lose nothing: once it is moved out of the way, the work can be submitted again.",
                })
            }
        }
        let artifact = Artifact {
            path: path.clone(),
            sha256: sha256_hex(&document),
            size: document.len() as u64,
        };
        let r = self.write(path.clone(), document);
        let rec = self.session.record_mut(stage);
        rec.final_result_ref = Some(r);
        rec.artifact = Some(artifact);
        self.facts.review_path = Some(path);
        Ok(())
    }

    fn list_artifact(&mut self, stage: Stage) {
        let path = self.session.artifact_path(stage);
        if !self.session.artifacts.contains(&path) {
            self.session.artifacts.push(path);
        }
    }

    /// Marks `stage` done and moves to the next stage of the session's track (or
    /// completes the workflow after the track's last one).
    fn complete_stage(&mut self, stage: Stage) {
        self.session.record_mut(stage).status = StageStatus::Completed;
        self.completed = Some(stage);
        match self.session.track.next(stage) {
            Some(next) => {
                self.session.record_mut(next).status = StageStatus::InProgress;
                self.session.current_stage = next;
                self.session.current_state = State::Generating;
            }
            None => self.session.current_state = State::Completed,
        }
    }

    fn finish(&mut self, action: Action, stage: Stage, from: State) {
        let at = timestamp(self.now);
        let decides = action.decides();
        self.session.history.push(HistoryEntry {
            at: at.clone(),
            action,
            stage,
            from: Some(from),
            to: self.session.current_state,
            decided_by: decides.then_some(self.decision.decided_by),
            via: decides.then_some(self.decision.via),
            decider: self.decision.decider.clone().filter(|_| decides),
            digest: self.decided_digest.take(),
            provenance: self
                .decision
                .provenance
                .as_deref()
                .cloned()
                .filter(|_| decides),
            note: (!self.facts.notices.is_empty()).then(|| self.facts.notices.join(" ")),
            feedback: self.words.take(),
            lessons: Vec::new(),
            taught: Vec::new(),
        });
        self.session.updated_at = at;
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
