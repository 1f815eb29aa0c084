//! The human's side of a stage: answers to questions, confirming a document, approving
//! the sprint plan, sending a document back (SPEC §3).

use std::collections::BTreeMap;

use super::super::session::{Artifact, ContentRef, StageRecord, State};
use super::super::stage::{Engine, Gate, Stage};
use super::super::submission;
use super::{sha256_hex, Step, WorkflowError};

/// Where the document to confirm came from (see [`Step::reviewed_document`]).
enum Reviewed {
    /// The file the human reviewed, as it is now (edits included).
    OnDisk(String),
    /// The submitted document, because the file was deleted or emptied.
    Submitted(String),
}

impl Step<'_> {
    pub(super) fn answer(
        &mut self,
        stage: Stage,
        answers: BTreeMap<String, String>,
    ) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage);
        let open_ids = || rec.open_questions().into_iter().map(|q| q.id).collect();
        if answers.is_empty() {
            return Err(WorkflowError::NoAnswers { known: open_ids() });
        }
        let unknown: Vec<String> = answers
            .keys()
            .filter(|k| !rec.questions.iter().any(|q| &q.id == *k))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(WorkflowError::UnknownQuestions {
                unknown,
                known: open_ids(),
            });
        }
        if let Some((id, _)) = answers.iter().find(|(_, a)| a.trim().is_empty()) {
            return Err(WorkflowError::EmptyAnswer { id: id.clone() });
        }
        let rec = self.session.record_mut(stage);
        for (id, a) in answers {
            rec.answers.insert(id, a.trim().to_string());
        }
        let unanswered = rec.open_questions();
        let record = serde_json::json!({
            "questions": rec.questions,
            "answers": rec.answers,
        });
        if !unanswered.is_empty() {
            self.facts.notices.push(format!(
                "Unanswered: {}. The next draft should state the assumption it makes for each.",
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

    pub(super) fn confirm(&mut self, stage: Stage) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage).clone();
        let path = self.session.artifact_path(stage);
        if rec.gate_passed == Some(true) {
            match self.reviewed_document(&rec, &path)? {
                Reviewed::OnDisk(on_disk) => {
                    let sha = sha256_hex(&on_disk);
                    if rec.artifact.as_ref().map(|a| &a.sha256) != Some(&sha) {
                        self.facts.notices.push(format!(
                            "{path} was edited after it was submitted; the edited version is the one confirmed."
                        ));
                    }
                    let rec = self.session.record_mut(stage);
                    rec.artifact = Some(Artifact {
                        path: path.clone(),
                        sha256: sha,
                        size: on_disk.len() as u64,
                    });
                    rec.final_result_ref = Some(ContentRef::new(path.clone(), &on_disk, self.now));
                }
                Reviewed::Submitted(document) => self.write_artifact(stage, document),
            }
        } else {
            // The human accepts a draft that stayed below the gate.
            let draft_path = rec
                .draft_ref
                .as_ref()
                .map(|r| r.file_path.clone())
                .unwrap_or_default();
            let (Reviewed::OnDisk(document) | Reviewed::Submitted(document)) =
                self.reviewed_document(&rec, &draft_path)?;
            self.write_artifact(stage, document);
            self.session.record_mut(stage).draft_ref = None;
        }
        self.facts.review_path = Some(path);
        self.list_artifact(stage);
        self.complete_stage(stage);
        Ok(())
    }

    /// The document the human was shown at `path`, as it is on disk now; when it was
    /// deleted or emptied, the document as submitted, read from the kept submission (an
    /// empty document is never confirmed), with a notice saying so.
    fn reviewed_document(
        &mut self,
        rec: &StageRecord,
        path: &str,
    ) -> Result<Reviewed, WorkflowError> {
        let what = match self.files.read(path) {
            Some(d) if !d.trim().is_empty() => return Ok(Reviewed::OnDisk(d)),
            Some(_) => "was empty",
            None => "had been deleted",
        };
        let raw_ref = match rec.chosen_engine {
            Some(Engine::Codex) => rec.codex_result_ref.as_ref(),
            _ => rec.claude_result_ref.as_ref(),
        };
        let document = raw_ref
            .and_then(|r| self.files.read(&r.file_path))
            .and_then(|raw| submission::read(&raw).ok())
            .ok_or_else(|| WorkflowError::DocumentUnavailable {
                path: path.to_string(),
            })?
            .document;
        self.facts.notices.push(format!(
            "{path} {what}; the document as submitted is the one confirmed."
        ));
        Ok(Reviewed::Submitted(document))
    }

    pub(super) fn approve(&mut self, stage: Stage, scope: Option<String>) {
        let rec = self.session.record_mut(stage);
        rec.approved = Some(true);
        rec.scope = Some(
            scope
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "all".into()),
        );
        self.complete_stage(stage);
    }

    pub(super) fn reject(&mut self, stage: Stage, feedback: Option<String>) {
        let feedback = feedback
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty());
        let rec = self.session.record_mut(stage);
        if stage.gate() == Gate::Approval {
            rec.approved = Some(false);
        }
        match feedback {
            Some(f) => rec.feedback.push(f),
            None => self.facts.notices.push(
                "No feedback was given: ask the human what should change before regenerating."
                    .into(),
            ),
        }
        self.session.current_state = State::Refining;
    }
}
