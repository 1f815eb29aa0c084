//! The human's side of a stage: answers to questions, confirming a document, approving
//! the sprint plan, sending a document back (docs/spec.md §3.4–§3.7).

use std::collections::BTreeMap;

use super::super::authorship::{Author, Said};
use super::super::rules;
use super::super::scope::{self, ScopeError};
use super::super::session::{Artifact, ContentRef, Sprint, StageRecord, StageStatus, State};
use super::super::stage::{Engine, QualityGate, Stage};
use super::super::submission;
use super::super::trace::few;
use super::{kept_words, sha256_hex, Step, WorkflowError};
use crate::code::clip;

/// Where the document to confirm came from (see [`Step::reviewed_document`]).
enum Reviewed {
    /// The file the human reviewed, as it is now (edits included).
    OnDisk(String),
    /// The submitted document, because the file was deleted or emptied.
    Submitted(String),
}

impl Step<'_> {
    /// Binds the decision to `document`, the version of `path` it is about: refused as
    /// stale when the decider saw another version; recorded in the history otherwise.
    fn bind(&mut self, path: &str, document: &str) -> Result<(), WorkflowError> {
        let sha = sha256_hex(document);
        if !self.decision.saw(&sha) {
            return Err(WorkflowError::StaleDecision {
                path: path.to_string(),
                given: clip(self.decision.seen_digest.as_deref().unwrap_or(""), 64),
                current: sha.clone(),
            });
        }
        self.decided_digest = Some(sha);
        Ok(())
    }

    /// [`Step::bind`] to the file at `path` as it is now, when it can be read.
    fn bind_file(&mut self, path: &str) -> Result<(), WorkflowError> {
        match self.documents.read(path) {
            Ok(Some(text)) => self.bind(path, &text),
            _ => Ok(()),
        }
    }

    /// The document the human is shown while deciding: a draft that stayed below the
    /// gate, else the stage document (passed the gate, a plan, a report).
    fn shown_path(&self, stage: Stage) -> Option<String> {
        let rec = self.session.record(stage);
        match &rec.draft_ref {
            Some(d) => Some(d.file_path.clone()),
            None => rec
                .artifact
                .is_some()
                .then(|| self.session.artifact_path(stage)),
        }
    }

    pub(super) fn answer(
        &mut self,
        stage: Stage,
        answers: BTreeMap<String, String>,
    ) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage);
        kept_words::check_answers(rec, &answers)?;
        // Questions come with the draft that asked them.
        if let Some(draft) = rec.draft_ref.as_ref().map(|d| d.file_path.clone()) {
            self.bind_file(&draft)?;
        }
        let author = Author::of(self.decision);
        let rec = self.session.record_mut(stage);
        for (id, a) in answers {
            rec.answered_by.insert(id.clone(), author);
            rec.answers.insert(id, a.trim().to_string());
        }
        let unanswered = rec.open_questions();
        let record = serde_json::json!({
            "questions": rec.questions,
            "answers": rec.answers,
        });
        if !unanswered.is_empty() {
            self.facts.notices.push(format!(
                "Unanswered: {}. The next draft should state the assumption it makes for each, on a line `Assumed <id>: …`.",
                unanswered
                    .iter()
                    .map(|q| q.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let path = self.temp_path(stage, "answers", "json");
        // Rendering a `Value` of strings cannot fail; `{}` stands in for the impossible.
        let mut content = serde_json::to_string_pretty(&record).unwrap_or_else(|_| "{}".into());
        content.push('\n');
        self.write(path, content);
        self.session.current_state = State::Refining;
        Ok(())
    }

    /// The file a `confirm` or `approve` at `stage` decides on: the stage document once
    /// written (a document that passed the gate, a plan), else the latest draft (accepted
    /// below the gate).
    pub(super) fn decided_path(&self, stage: Stage) -> String {
        let rec = self.session.record(stage);
        // As `confirm` chooses: a draft still pending is what it accepts.
        match &rec.draft_ref {
            Some(draft) if stage.gate() != QualityGate::Approval => draft.file_path.clone(),
            _ => self.session.artifact_path(stage),
        }
    }

    /// The text a decision at `path` is about ([`Step::reviewed_document`]).
    pub(super) fn reviewed_text(
        &mut self,
        rec: &StageRecord,
        path: &str,
    ) -> Result<String, WorkflowError> {
        let (Reviewed::OnDisk(text) | Reviewed::Submitted(text)) =
            self.reviewed_document(rec, path)?;
        Ok(text)
    }

    pub(super) fn confirm(&mut self, stage: Stage) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage).clone();
        let path = self.session.artifact_path(stage);
        if rec.draft_ref.is_none() {
            // The stage document: it passed the gate, or it is a report whose verdict
            // failed and whose risk the human now accepts.
            self.decide_on_artifact(stage, &rec, &path)?;
        } else {
            // The human accepts a draft that stayed below the gate.
            let draft_path = rec
                .draft_ref
                .as_ref()
                .map(|r| r.file_path.clone())
                .unwrap_or_default();
            let (Reviewed::OnDisk(document) | Reviewed::Submitted(document)) =
                self.reviewed_document(&rec, &draft_path)?;
            self.bind(&draft_path, &document)?;
            self.retrace(stage, &document);
            self.write_artifact(stage, document)?;
            self.session.record_mut(stage).draft_ref = None;
        }
        if let Some(risk) = rules::risk_in(stage, &rec) {
            self.session.record_mut(stage).accepted_risk = true;
            self.facts.notices.push(format!(
                "Risk accepted: {path} does not pass ({}), and the workflow goes on.",
                risk.failure
            ));
            self.accept_open(stage);
            self.risk = Some(risk);
        }
        self.note_confirmed_ids(stage);
        self.facts.review_path = Some(path);
        self.list_artifact(stage);
        self.complete_stage(stage);
        Ok(())
    }

    /// Decides on the stage document at `path` as the human reviewed it
    /// ([`Step::reviewed_document`]): the decision is bound to it and its ids read again;
    /// it is recorded as it is on disk, or saved again from the submission when the file
    /// was deleted. Returns the document.
    fn decide_on_artifact(
        &mut self,
        stage: Stage,
        rec: &StageRecord,
        path: &str,
    ) -> Result<String, WorkflowError> {
        let reviewed = self.reviewed_document(rec, path)?;
        let (Reviewed::OnDisk(document) | Reviewed::Submitted(document)) = &reviewed;
        self.bind(path, document)?;
        self.retrace(stage, document);
        match reviewed {
            Reviewed::OnDisk(on_disk) => {
                self.record_as_reviewed(stage, rec, &on_disk);
                Ok(on_disk)
            }
            Reviewed::Submitted(document) => {
                self.write_artifact(stage, document.clone())?;
                Ok(document)
            }
        }
    }

    /// Records the stage document as it is on disk now (the human's edits included):
    /// its digest and size are what the decision was about.
    fn record_as_reviewed(&mut self, stage: Stage, rec: &StageRecord, on_disk: &str) {
        let path = self.session.artifact_path(stage);
        let sha = sha256_hex(on_disk);
        if rec.artifact.as_ref().map(|a| &a.sha256) != Some(&sha) {
            self.facts.notices.push(format!(
                "{path} was edited after it was submitted; the edited version is the one {}.",
                if stage.gate() == QualityGate::Approval {
                    "approved"
                } else {
                    "confirmed"
                }
            ));
        }
        let rec = self.session.record_mut(stage);
        rec.artifact = Some(Artifact {
            path: path.clone(),
            sha256: sha,
            size: on_disk.len() as u64,
        });
        rec.final_result_ref = Some(ContentRef::new(path, on_disk, self.now));
    }

    /// The document the human was shown at `path`, byte for byte as it is on disk now.
    /// Only when it is absent is it rebuilt from the kept submission, with a notice saying
    /// so; a file that is there but empty or unusable (not UTF-8, a directory, …) is the
    /// human's and is refused, never replaced.
    fn reviewed_document(
        &mut self,
        rec: &StageRecord,
        path: &str,
    ) -> Result<Reviewed, WorkflowError> {
        let unusable = |reason: String| {
            WorkflowError::DocumentUnreadable {
            path: path.to_string(),
            reason,
            todo: "Put the document back as UTF-8 text and decide again, or `reject` with feedback to have it written anew.",
        }
        };
        match self.documents.read(path) {
            Ok(Some(d)) if !d.trim().is_empty() => return Ok(Reviewed::OnDisk(d)),
            Ok(Some(_)) => return Err(unusable("is empty".into())),
            Err(reason) => return Err(unusable(reason)),
            Ok(None) => {}
        }
        let raw_ref = match rec.chosen_engine {
            Some(Engine::Codex) => rec.codex_result_ref.as_ref(),
            _ => rec.claude_result_ref.as_ref(),
        };
        let document = raw_ref
            .and_then(|r| self.documents.read(&r.file_path).ok().flatten())
            .and_then(|raw| submission::read(self.session.current_stage, &raw).ok())
            .ok_or_else(|| WorkflowError::DocumentUnavailable {
                path: path.to_string(),
            })?
            .document;
        self.facts.notices.push(format!(
            "{path} had been deleted; the document as submitted is the one decided on, and is saved as the stage document."
        ));
        Ok(Reviewed::Submitted(document))
    }

    /// Approves the sprint plan as it is on disk now: its sprints are read again from the
    /// file, and the scope must name sprints that this plan has.
    pub(super) fn approve(
        &mut self,
        stage: Stage,
        scope: Option<String>,
    ) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage).clone();
        let path = self.session.artifact_path(stage);
        let document = self.decide_on_artifact(stage, &rec, &path)?;
        let sprints: Vec<Sprint> = submission::sprints(&document)
            .into_iter()
            .map(|(number, title)| Sprint { number, title })
            .collect();
        let text = scope
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "all".into());
        let numbers = scope::read(&text, &sprints).map_err(|e| WorkflowError::InvalidScope {
            problem: match e {
                ScopeError::Unreadable => {
                    format!("`{}` does not read as sprint numbers", clip(&text, 80))
                }
                ScopeError::NotInPlan(missing) => format!(
                    "the plan at {path} has no sprint {}",
                    missing
                        .iter()
                        .take(10)
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
            sprints: sprint_list(&sprints),
        })?;
        let rec = self.session.record_mut(stage);
        rec.sprints = sprints;
        rec.approved = Some(true);
        rec.scope = Some(text);
        rec.scope_sprints = Some(numbers);
        self.note_scope();
        self.complete_stage(stage);
        Ok(())
    }

    /// Sends the document back with the human's feedback. Without feedback there is
    /// nothing to revise by, so the host is told to ask for it: one instruction, not
    /// "ask the human" and "regenerate now" at once.
    pub(super) fn reject(
        &mut self,
        stage: Stage,
        feedback: Option<String>,
    ) -> Result<(), WorkflowError> {
        let feedback =
            kept_words::words(feedback.as_deref()).ok_or(WorkflowError::FeedbackRequired)?;
        self.words = Some(feedback.clone());
        let shown = self.shown_path(stage);
        if let Some(shown) = &shown {
            self.bind_file(shown)?;
        }
        let (to, state) = rules::after_reject(stage);
        if to != stage {
            self.send_back(stage, to, shown.unwrap_or_default(), feedback);
            self.session.current_state = state;
            return Ok(());
        }
        self.take_answers_from(stage, &feedback);
        let rec = self.session.record_mut(stage);
        if stage.gate() == QualityGate::Approval {
            rec.approved = Some(false);
        }
        rec.feedback.push(Said::of(self.decision, feedback));
        self.session.current_state = state;
        Ok(())
    }

    /// A report whose verdict failed, sent back by the human: the work returns to `to`
    /// with the report's findings and the human's words as its feedback, and the stages
    /// after it (this one included) run again on the new work.
    fn send_back(&mut self, stage: Stage, to: Stage, report: String, feedback: String) {
        let verdict = rules::failed_verdict(stage, self.session.record(stage))
            .unwrap_or_else(|| "sent back".into());
        let report = self.keep_round_report(stage, &report);
        // The server's pointer to the report, then the decider's words under their own
        // label: a person's words never sit under the server's.
        let who = Author::of(self.decision).label();
        let pointer = format!(
            "From the {}'s report ({verdict}): read its findings in {report}.",
            stage.role()
        );
        self.note_send_back(stage, to, &format!("{pointer} Added by {who}: {feedback}"));
        let feedback = Said::of(self.decision, feedback);
        let rec = self.session.record_mut(to);
        rec.feedback.push(Said::server(pointer));
        rec.feedback.push(feedback);
        for later in self.session.track.between(to, stage) {
            let rec = self.session.record_mut(later);
            rec.status = StageStatus::Pending;
            // A risk accepted on a report of the earlier work is no longer the question.
            rec.accepted_risk = false;
            rec.trace.accepted.clear();
            let path = self.session.artifact_path(later);
            self.session.artifacts.retain(|a| *a != path);
        }
        let redone = self.session.record_mut(to);
        redone.status = StageStatus::InProgress;
        // Failing checks accepted on the earlier work are no longer the question either.
        redone.accepted_risk = false;
        self.session.current_stage = to;
        self.facts.notices.push(format!(
            "Sent back to the {} ({to}) with the findings of {report}; the stages after it run again.",
            to.role()
        ));
    }
}

/// The plan's sprints for a message: `1 (Core), 2 (UI)`, at most twenty, titles cut.
fn sprint_list(sprints: &[Sprint]) -> String {
    if sprints.is_empty() {
        return "none (the plan has no `## Sprint N: Title` headings, so only `all` applies)"
            .into();
    }
    let listed: Vec<String> = sprints
        .iter()
        .map(|s| format!("{} ({})", s.number, clip(&s.title, 60)))
        .collect();
    few(&listed, 20)
}
