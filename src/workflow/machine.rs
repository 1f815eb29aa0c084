//! The transition function: `(Session, Command) → Outcome | WorkflowError` (SPEC §3–§5).
//! It decides everything (the next state, the files to write, the facts for the reply)
//! and does no I/O of its own: the caller passes the clock and a read-only view of the
//! project's files, and writes the outcome.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use super::quality;
use super::session::{
    timestamp, Artifact, ContentRef, HistoryEntry, Question, ScoreSource, Session, Sprint,
    StageRecord, StageStatus, State,
};
use super::stage::{Engine, Gate, Stage};
use super::submission::{self, Submission, SubmissionError};

/// Submissions below the gate after which the human decides instead of another round.
pub const MAX_BELOW_GATE_SUBMISSIONS: u32 = 5;

/// A session action, already validated for shape by the adapter.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Submit {
        stage: Option<Stage>,
        claude_result: Option<String>,
        codex_result: Option<String>,
    },
    Answer {
        answers: BTreeMap<String, String>,
    },
    /// `confirm` or its alias `confirm_save` (named by `action`), with `confirmed: true`.
    Confirm {
        action: &'static str,
    },
    Approve {
        scope: Option<String>,
    },
    /// `reject`, or `confirm`/`approve` with `false`; `action` is the name the caller used.
    Reject {
        action: &'static str,
        feedback: Option<String>,
    },
}

impl Command {
    pub fn action(&self) -> &'static str {
        match self {
            Command::Submit { .. } => "submit",
            Command::Answer { .. } => "answer",
            Command::Confirm { action } => action,
            Command::Approve { .. } => "approve",
            Command::Reject { action, .. } => action,
        }
    }
}

/// The actions that are legal in a state (always including the read-only `status`).
pub fn allowed_actions(state: State) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = match state {
        State::Generating | State::Refining => vec!["submit"],
        State::Clarifying => vec!["answer"],
        State::AwaitingConfirmation => vec!["confirm", "confirm_save", "reject"],
        State::AwaitingApproval => vec!["approve", "reject"],
        State::Completed => vec![],
    };
    v.push("status");
    v
}

/// Read access to the project's files, relative to the project directory.
pub trait ProjectFiles {
    fn read(&self, rel_path: &str) -> Option<String>;
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
    /// The stage that this action completed.
    pub completed_stage: Option<Stage>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub session: Session,
    pub writes: Vec<FileWrite>,
    pub facts: Facts,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkflowError {
    #[error("`{action}` is not allowed now: the session is in state `{state}` at stage `{stage}`; allowed actions: {}", .allowed.join(", "))]
    IllegalAction {
        action: &'static str,
        state: State,
        stage: Stage,
        allowed: Vec<&'static str>,
    },
    #[error(
        "field `stage`: `{given}` is not the current stage; the session is at stage `{current}`"
    )]
    StageMismatch { given: Stage, current: Stage },
    #[error("`submit` at stage `{stage}` needs the document in `{}` (a non-empty string)", .fields.join("` or `"))]
    MissingResult {
        stage: Stage,
        fields: Vec<&'static str>,
    },
    #[error(
        "field `{field}`: the submission holds no document text (an empty document is never saved)"
    )]
    EmptyDocument { field: &'static str },
    #[error("field `answers`: no question with id {} in this round; open questions: {}", quote_list(.unknown), quote_list(.known))]
    UnknownQuestions {
        unknown: Vec<String>,
        known: Vec<String>,
    },
    #[error("field `answers`: give at least one answer, as {{\"<question id>\": \"<answer>\"}}; open questions: {}", quote_list(.known))]
    NoAnswers { known: Vec<String> },
    #[error("field `answers.{id}`: the answer is empty")]
    EmptyAnswer { id: String },
    #[error("the document to confirm ({path}) is missing and cannot be recovered; `reject` the stage and submit it again")]
    DocumentUnavailable { path: String },
}

fn quote_list(items: &[String]) -> String {
    if items.is_empty() {
        return "(none)".into();
    }
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl WorkflowError {
    pub fn code(&self) -> &'static str {
        match self {
            WorkflowError::IllegalAction { .. } => "invalid_state",
            WorkflowError::StageMismatch { .. } => "stage_mismatch",
            WorkflowError::MissingResult { .. } => "missing_field",
            WorkflowError::EmptyDocument { .. } => "empty_document",
            WorkflowError::UnknownQuestions { .. } => "unknown_question",
            WorkflowError::NoAnswers { .. } | WorkflowError::EmptyAnswer { .. } => {
                "invalid_argument"
            }
            WorkflowError::DocumentUnavailable { .. } => "document_missing",
        }
    }
}

pub fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

/// Applies one action to a session. On error nothing is to be written and the session
/// stays as it was.
pub fn apply(
    session: &Session,
    command: Command,
    files: &dyn ProjectFiles,
    now: DateTime<Utc>,
) -> Result<Outcome, WorkflowError> {
    let state = session.current_state;
    let action = command.action();
    let legal = matches!(
        (&command, state),
        (Command::Submit { .. }, State::Generating | State::Refining)
            | (Command::Answer { .. }, State::Clarifying)
            | (Command::Confirm { .. }, State::AwaitingConfirmation)
            | (Command::Approve { .. }, State::AwaitingApproval)
            | (
                Command::Reject { .. },
                State::AwaitingConfirmation | State::AwaitingApproval
            )
    ) && !matches!(
        (&command, state),
        (
            Command::Reject {
                action: "confirm" | "confirm_save",
                ..
            },
            State::AwaitingApproval
        ) | (
            Command::Reject {
                action: "approve",
                ..
            },
            State::AwaitingConfirmation
        )
    );
    if !legal {
        return Err(WorkflowError::IllegalAction {
            action,
            state,
            stage: session.current_stage,
            allowed: allowed_actions(state),
        });
    }

    let mut step = Step {
        session: session.clone(),
        writes: Vec::new(),
        facts: Facts::default(),
        files,
        now,
        stamp: now.format("%Y%m%dT%H%M%S%6fZ").to_string(),
    };
    let stage = session.current_stage;
    match command {
        Command::Submit {
            stage: given,
            claude_result,
            codex_result,
        } => {
            if let Some(given) = given {
                if given != stage {
                    return Err(WorkflowError::StageMismatch {
                        given,
                        current: stage,
                    });
                }
            }
            match stage.gate() {
                Gate::Score(gate) => {
                    step.submit_scored(stage, gate, claude_result, codex_result)?
                }
                Gate::Approval | Gate::None => {
                    step.submit_plain(stage, claude_result, codex_result)?
                }
            }
        }
        Command::Answer { answers } => step.answer(stage, answers)?,
        Command::Confirm { .. } => step.confirm(stage)?,
        Command::Approve { scope } => step.approve(stage, scope),
        Command::Reject { feedback, .. } => step.reject(stage, feedback),
    }
    step.finish(action, stage, state);
    Ok(Outcome {
        session: step.session,
        writes: step.writes,
        facts: step.facts,
    })
}

struct Step<'a> {
    session: Session,
    writes: Vec<FileWrite>,
    facts: Facts,
    files: &'a dyn ProjectFiles,
    now: DateTime<Utc>,
    stamp: String,
}

/// One engine's parsed submission with its score.
struct Candidate {
    engine: Engine,
    submission: Submission,
    score: u32,
    source: ScoreSource,
}

/// Where the document to confirm came from (see [`Step::reviewed_document`]).
enum Reviewed {
    /// The file the human reviewed, as it is now (edits included).
    OnDisk(String),
    /// The submitted document, because the file was deleted or emptied.
    Submitted(String),
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

    /// Writes the stage document to `.claude/specs/<task>/` and records it.
    fn write_artifact(&mut self, stage: Stage, document: String) {
        let path = self.session.artifact_path(stage);
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
    }

    fn list_artifact(&mut self, stage: Stage) {
        let path = self.session.artifact_path(stage);
        if !self.session.artifacts.contains(&path) {
            self.session.artifacts.push(path);
        }
    }

    /// Reads and scores each given result; an empty document is refused. Nothing is
    /// queued for writing until every candidate has been read.
    fn candidates(
        &self,
        stage: Stage,
        given: &[(Engine, String)],
    ) -> Result<Vec<Candidate>, WorkflowError> {
        let mut out = Vec::new();
        for (engine, text) in given {
            let engine = *engine;
            let submission = submission::read(text).map_err(|e| match e {
                SubmissionError::Empty => WorkflowError::EmptyDocument {
                    field: engine.result_field(),
                },
            })?;
            let (score, source) = match submission.reported_score {
                Some(s) => (s, ScoreSource::Reported),
                None => (
                    quality::estimate(stage, &submission.document),
                    ScoreSource::Estimated,
                ),
            };
            out.push(Candidate {
                engine,
                submission,
                score,
                source,
            });
        }
        Ok(out)
    }

    fn store_raw(&mut self, stage: Stage, engine: Engine, text: String) {
        let r = self.write_temp(stage, engine.result_field(), text);
        let rec = self.session.record_mut(stage);
        match engine {
            Engine::Claude => rec.claude_result_ref = Some(r),
            Engine::Codex => rec.codex_result_ref = Some(r),
        }
    }

    fn submit_scored(
        &mut self,
        stage: Stage,
        gate: u32,
        claude: Option<String>,
        codex: Option<String>,
    ) -> Result<(), WorkflowError> {
        let given: Vec<(Engine, String)> = [(Engine::Claude, claude), (Engine::Codex, codex)]
            .into_iter()
            .filter_map(|(e, t)| t.filter(|t| !t.trim().is_empty()).map(|t| (e, t)))
            .collect();
        if given.is_empty() {
            // Every result given is scored (SPEC §4.1), so either field will do; the
            // session's own engines are named first.
            let mut engines = self.session.engines_for(stage);
            for e in [Engine::Claude, Engine::Codex] {
                if !engines.contains(&e) {
                    engines.push(e);
                }
            }
            return Err(WorkflowError::MissingResult {
                stage,
                fields: engines.into_iter().map(Engine::result_field).collect(),
            });
        }
        let mut candidates = self.candidates(stage, &given)?;
        for (engine, text) in given {
            self.store_raw(stage, engine, text);
        }

        // At or above the gate beats below it; then the higher score; a tie keeps claude
        // (candidates are in claude, codex order and only a strictly better one replaces).
        let key = |c: &Candidate| (c.score >= gate, c.score);
        let chosen_at = (1..candidates.len()).fold(0, |best, i| {
            if key(&candidates[i]) > key(&candidates[best]) {
                i
            } else {
                best
            }
        });
        let chosen = &candidates[chosen_at];

        // Questions of all candidates, same text once, minus those asked in earlier rounds.
        let rec = self.session.record(stage);
        let mut seen: BTreeSet<String> = rec.questions.iter().map(|q| norm(&q.question)).collect();
        let round = rec.rounds() + 1;
        let mut next_id = rec.questions.len() + 1;
        let mut new_questions = Vec::new();
        for q in candidates.iter().flat_map(|c| &c.submission.questions) {
            if seen.insert(norm(&q.question)) {
                new_questions.push(Question {
                    id: format!("q{next_id}"),
                    question: q.question.clone(),
                    context: q.context.clone(),
                    round,
                });
                next_id += 1;
            }
        }
        let mut gaps: Vec<String> = Vec::new();
        for g in candidates.iter().flat_map(|c| &c.submission.gaps) {
            if !gaps.contains(g) {
                gaps.push(g.clone());
            }
        }
        let answered_before = !rec.answers.is_empty();
        let (score, source, engine) = (chosen.score, chosen.source, chosen.engine);
        let reported = source == ScoreSource::Reported;
        // Documents can be megabytes: the chosen one is moved, not copied.
        let document = std::mem::take(&mut candidates[chosen_at].submission.document);

        let rec = self.session.record_mut(stage);
        rec.iteration += 1;
        rec.score = Some(score);
        rec.scores = candidates.iter().map(|c| (c.engine, c.score)).collect();
        rec.score_source = Some(source);
        rec.chosen_engine = Some(engine);
        rec.gate_passed = Some(score >= gate);
        rec.gaps = gaps;
        let iteration = rec.iteration;

        let next_state = if !answered_before && !new_questions.is_empty() {
            State::Clarifying
        } else if score >= gate {
            State::AwaitingConfirmation
        } else if iteration >= MAX_BELOW_GATE_SUBMISSIONS {
            self.facts.notices.push(format!(
                "{iteration} submissions at this stage have stayed below the gate of {gate}: the human decides now whether to confirm this draft anyway or reject it with feedback."
            ));
            State::AwaitingConfirmation
        } else if !new_questions.is_empty() {
            State::Clarifying
        } else {
            self.facts.guidance = quality::guidance(stage, &document, reported);
            State::Refining
        };

        if next_state == State::AwaitingConfirmation && score >= gate {
            self.write_artifact(stage, document);
            self.session.record_mut(stage).draft_ref = None;
        } else {
            let r = self.write_temp(stage, "draft", document);
            self.facts.review_path = Some(r.file_path.clone());
            self.session.record_mut(stage).draft_ref = Some(r);
        }
        if next_state == State::Clarifying {
            self.session
                .record_mut(stage)
                .questions
                .extend(new_questions);
        }
        self.session.current_state = next_state;
        Ok(())
    }

    fn submit_plain(
        &mut self,
        stage: Stage,
        claude: Option<String>,
        codex: Option<String>,
    ) -> Result<(), WorkflowError> {
        let own = self.session.engines_for(stage)[0];
        let (mut own_text, mut other_text) = match own {
            Engine::Claude => (claude, codex),
            Engine::Codex => (codex, claude),
        };
        let present = |t: &mut Option<String>| t.take().filter(|t| !t.trim().is_empty());
        let own_text = present(&mut own_text);
        let other_text = present(&mut other_text);
        let other = match own {
            Engine::Claude => Engine::Codex,
            Engine::Codex => Engine::Claude,
        };
        let (engine, text) = match (own_text, other_text) {
            (Some(t), ignored) => {
                if ignored.is_some() {
                    self.facts.notices.push(format!(
                        "`{}` was ignored: stage `{stage}` is generated by {}, and `{}` was given.",
                        other.result_field(),
                        own.id(),
                        own.result_field()
                    ));
                }
                (own, t)
            }
            (None, Some(t)) => (other, t),
            (None, None) => {
                return Err(WorkflowError::MissingResult {
                    stage,
                    fields: vec![own.result_field(), other.result_field()],
                })
            }
        };
        let given = [(engine, text)];
        let candidate = self
            .candidates(stage, &given)?
            .pop()
            .expect("one candidate");
        let [(engine, text)] = given;
        self.store_raw(stage, engine, text);
        let document = candidate.submission.document;

        let rec = self.session.record_mut(stage);
        rec.iteration += 1;
        rec.score = Some(candidate.score);
        rec.scores = BTreeMap::from([(engine, candidate.score)]);
        rec.score_source = Some(candidate.source);
        rec.chosen_engine = Some(engine);
        match stage {
            Stage::Sm => {
                rec.sprints = submission::sprints(&document)
                    .into_iter()
                    .map(|(number, title)| Sprint { number, title })
                    .collect();
                if rec.sprints.is_empty() {
                    self.facts.notices.push(
                        "No sprint headings were found; the plan should use `## Sprint N: Title` headings so the human can choose a scope.".into(),
                    );
                }
            }
            Stage::Review => rec.review_status = submission::review_status(&document),
            _ => {}
        }
        self.write_artifact(stage, document);
        self.list_artifact(stage);

        if stage == Stage::Sm {
            self.session.current_state = State::AwaitingApproval;
        } else {
            self.complete_stage(stage);
        }
        Ok(())
    }

    fn answer(
        &mut self,
        stage: Stage,
        answers: BTreeMap<String, String>,
    ) -> Result<(), WorkflowError> {
        let rec = self.session.record(stage);
        let known: Vec<String> = rec.questions.iter().map(|q| q.id.clone()).collect();
        if answers.is_empty() {
            return Err(WorkflowError::NoAnswers {
                known: rec.open_questions().into_iter().map(|q| q.id).collect(),
            });
        }
        let unknown: Vec<String> = answers
            .keys()
            .filter(|k| !known.contains(k))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(WorkflowError::UnknownQuestions {
                unknown,
                known: rec.open_questions().into_iter().map(|q| q.id).collect(),
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
        let mut content = serde_json::to_string_pretty(&record).expect("plain JSON values");
        content.push('\n');
        self.write(path, content);
        self.session.current_state = State::Refining;
        Ok(())
    }

    fn confirm(&mut self, stage: Stage) -> Result<(), WorkflowError> {
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

    fn approve(&mut self, stage: Stage, scope: Option<String>) {
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

    fn reject(&mut self, stage: Stage, feedback: Option<String>) {
        let feedback = feedback
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty());
        let rec = self.session.record_mut(stage);
        if stage == Stage::Sm {
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

    /// Marks `stage` done and moves to the next stage's generation (or completes the
    /// workflow after the last one).
    fn complete_stage(&mut self, stage: Stage) {
        self.session.record_mut(stage).status = StageStatus::Completed;
        self.facts.completed_stage = Some(stage);
        match stage.next() {
            Some(next) => {
                self.session.record_mut(next).status = StageStatus::InProgress;
                self.session.current_stage = next;
                self.session.current_state = State::Generating;
            }
            None => self.session.current_state = State::Completed,
        }
    }

    fn finish(&mut self, action: &'static str, stage: Stage, from: State) {
        let at = timestamp(self.now);
        self.session.history.push(HistoryEntry {
            at: at.clone(),
            action: action.into(),
            stage,
            from: Some(from),
            to: self.session.current_state,
            note: (!self.facts.notices.is_empty()).then(|| self.facts.notices.join(" ")),
        });
        self.session.updated_at = at;
    }
}

fn norm(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
