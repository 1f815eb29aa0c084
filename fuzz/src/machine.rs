//! Drives `workflow::machine::apply` with a fuzzed sequence of commands (and of human
//! edits to the project's files) on an in-memory session, checking after every step the
//! invariants the store relies on.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use arbitrary::Arbitrary;
use bmad_mcp::workflow::machine::Documents;
use bmad_mcp::workflow::session::{ContentRef, StageStatus};
use bmad_mcp::workflow::{
    allowed_actions, apply_observed, rules, Action, CheckOutcome, CheckResult, CheckRun, Command,
    Engine, Evidence, Outcome, Session, Stage, State, Track, WorkflowError,
};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{json, Value};

const SESSION_ID: &str = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
const TASK: &str = "fuzzed-task";

#[derive(Default)]
struct Files(RefCell<BTreeMap<String, String>>);

impl Files {
    /// What a caller reads for a step on `session`: only what the machine asks for, so a
    /// read it did not announce is caught.
    fn documents(&self, session: &Session) -> Documents {
        let mut documents = Documents::default();
        for path in Documents::wanted(session) {
            let read = Ok(self.0.borrow().get(&path).cloned());
            documents.insert(path, read);
        }
        documents
    }
}

#[derive(Debug, Arbitrary)]
pub struct MachineInput {
    pub dual: bool,
    pub steps: Vec<(u16, Step)>,
}

#[derive(Debug, Arbitrary)]
pub enum Step {
    Submit {
        stage: Option<u8>,
        claude: Option<Box<Doc>>,
        codex: Option<Box<Doc>>,
    },
    Answer(Vec<(Qid, String)>),
    Confirm {
        save: bool,
    },
    Approve {
        scope: Option<String>,
    },
    Reject {
        as_action: u8,
        feedback: Option<String>,
    },
    /// The human edits a stage document in `.claude/specs/` between calls.
    EditArtifact(u8, String),
    /// The human deletes a stage document.
    DeleteArtifact(u8),
    /// Something deletes one of the server's own files (index into the file list).
    DeleteAnyFile(u8),
    /// The call a well-behaved host would make next (submit the example fixture of the
    /// stage, answer every open question, confirm, approve), so that short inputs reach
    /// the late stages; the byte picks among variants (draft or final, which engine, …).
    Advance(u8),
}

/// The documents of examples/fixtures, as the scripted example submits them.
const PO_DRAFT: &str = include_str!("../../examples/fixtures/po-draft.json");
const PO_FINAL: &str = include_str!("../../examples/fixtures/po-final.json");
const ARCHITECT_DRAFT: &str = include_str!("../../examples/fixtures/architect-draft.json");
const ARCHITECT_FINAL: &str = include_str!("../../examples/fixtures/architect-final.json");
const SPRINT_PLAN: &str = include_str!("../../examples/fixtures/sprint-plan.md");
const DEV_REPORT: &str = include_str!("../../examples/fixtures/dev-report.md");
const REVIEW: &str = include_str!("../../examples/fixtures/review.md");
const QA_REPORT: &str = include_str!("../../examples/fixtures/qa-report.md");

/// A stage of the session's track, by index (for the full track, as the seeds were
/// written: the six stages in order).
fn pick(session: &Session, i: u8) -> Stage {
    let stages = session.track.stages();
    stages[usize::from(i) % stages.len()]
}

/// A passing first document of a short track's first stage: every section the stage
/// table asks of it, and a score at the gate.
fn first_document(stage: Stage) -> String {
    let mut doc = format!("# {}\n", stage.role());
    for section in stage.sections() {
        doc.push_str(&format!(
            "\n## {}\nGiven a user, when they act, then it works; 30 ms.\n",
            section.name
        ));
    }
    json!({stage.document_fields()[0]: doc, "quality_score": 93}).to_string()
}

/// The next call of a well-behaved host in the session's state.
fn advance(s: &Session, v: u8) -> Command {
    let stage = s.current_stage;
    let submit = |claude: Option<&str>, codex: Option<&str>| Command::Submit {
        stage: (v & 8 != 0).then_some(stage),
        claude_result: claude.map(String::from),
        codex_result: codex.map(String::from),
        document_file: None,
    };
    match s.current_state {
        State::Generating | State::Refining => {
            let draft = v.is_multiple_of(4);
            // The "draft" of a review or QA report is one whose verdict fails.
            // A review that closes a light track states the intent verdict too.
            let review = if s.track.is_last(Stage::Review) {
                format!("{REVIEW}\nIntent: met\n")
            } else {
                REVIEW.to_string()
            };
            let failing_review = review.replace("Pass with Risk", "Fail");
            let failing_qa = QA_REPORT.replace("Quality Score: 91/100", "Quality Score: 72/100");
            let spec = first_document(Stage::Spec);
            let bug = first_document(Stage::Bug);
            // The fix track's development report shows its failing test first.
            let fix_dev = format!(
                "{DEV_REPORT}\n## Failing Test\n`parses_empty_input` failed before the fix.\n"
            );
            let dev = if s.track == Track::Fix && v & 32 == 0 {
                fix_dev.as_str()
            } else {
                DEV_REPORT
            };
            let (d, f) = match stage {
                Stage::Spec => (PO_DRAFT, spec.as_str()),
                Stage::Bug => (PO_DRAFT, bug.as_str()),
                Stage::Po => (PO_DRAFT, PO_FINAL),
                Stage::Architect => (ARCHITECT_DRAFT, ARCHITECT_FINAL),
                Stage::Sm => (SPRINT_PLAN, SPRINT_PLAN),
                Stage::Dev => (dev, dev),
                Stage::Review => (failing_review.as_str(), review.as_str()),
                Stage::Qa => (failing_qa.as_str(), QA_REPORT),
            };
            let doc = if draft { d } else { f };
            match (stage.passing_score().is_some(), v & 16 != 0) {
                // Both engines, the other one with the draft.
                (true, true) => submit(Some(doc), Some(d)),
                (true, false) => submit(Some(doc), None),
                // The unscored stages, by their own engine or the other one.
                (false, other) => {
                    let own = s.engines_for(stage)[0] == Engine::Claude;
                    if own != other {
                        submit(Some(doc), None)
                    } else {
                        submit(None, Some(doc))
                    }
                }
            }
        }
        State::Clarifying => Command::Answer {
            answers: s
                .current()
                .open_questions()
                .into_iter()
                .map(|q| (q.id.clone(), format!("Answer to {}", q.id)))
                .collect(),
        },
        // A failing report: the human sends the work back, or accepts the risk.
        State::AwaitingConfirmation
            if matches!(stage, Stage::Dev | Stage::Review | Stage::Qa) && v & 2 != 0 =>
        {
            Command::Reject {
                action: Action::Reject,
                feedback: Some("Fix the findings first.".into()),
            }
        }
        State::AwaitingConfirmation => Command::Confirm {
            action: if v & 1 == 0 {
                Action::Confirm
            } else {
                Action::ConfirmSave
            },
            note: None,
            answers: Default::default(),
        },
        State::AwaitingApproval => Command::Approve {
            scope: (v & 1 == 1).then(|| "sprint 1".to_string()),
            note: None,
        },
        // Nothing is legal: the refusal is checked.
        State::Completed => Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        },
    }
}

#[derive(Debug, Arbitrary)]
pub enum Qid {
    Question(u8),
    Other(String),
}

/// A submitted text: free text, a JSON submission, or markdown with a score line.
#[derive(Debug, Arbitrary)]
pub enum Doc {
    Free(String),
    Json {
        field: u8,
        body: Body,
        score: Option<Score>,
        questions: Vec<String>,
        gaps: Vec<String>,
        fenced: bool,
    },
    Markdown {
        body: Body,
        score: Option<u8>,
        review: Option<u8>,
    },
}

#[derive(Debug, Arbitrary)]
pub enum Score {
    Int(u8),
    Float(f64),
    Text(String),
}

/// A document made of known section headings (to reach the estimate and the sprint
/// reading) and free text.
#[derive(Debug, Arbitrary)]
pub struct Body {
    pub headings: Vec<u8>,
    pub text: String,
}

const HEADINGS: [&str; 14] = [
    "## Executive Summary",
    "## Business Goals",
    "## User Stories",
    "## Functional Requirements",
    "## Technical Requirements",
    "## Success Metrics",
    "## Technology Stack",
    "## Components",
    "## Data Model",
    "## API Design",
    "## Security",
    "## Sprint 1: Core",
    "## Sprint 2 - UI",
    "## Test Cases",
];

const FIELDS: [&str; 6] = [
    "prd_draft",
    "prd_updated",
    "architecture_draft",
    "sprint_plan",
    "content",
    "result",
];

impl Body {
    fn build(&self) -> String {
        let mut s = String::from("# Document\n");
        for h in &self.headings {
            s.push_str(HEADINGS[usize::from(*h) % HEADINGS.len()]);
            s.push_str("\nSome text.\n");
        }
        s.push_str(&self.text);
        s
    }
}

impl Doc {
    fn build(&self) -> String {
        match self {
            Doc::Free(s) => s.clone(),
            Doc::Json {
                field,
                body,
                score,
                questions,
                gaps,
                fenced,
            } => {
                let mut o = serde_json::Map::new();
                o.insert(
                    FIELDS[usize::from(*field) % FIELDS.len()].into(),
                    body.build().into(),
                );
                if let Some(score) = score {
                    let v = match score {
                        // Mostly passing scores, so the fuzzer reaches the later stages.
                        Score::Int(n) => json!(50 + u32::from(*n) % 60),
                        Score::Float(f) => {
                            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
                        }
                        Score::Text(t) => json!(t),
                    };
                    o.insert("quality_score".into(), v);
                }
                o.insert("questions".into(), json!(questions));
                o.insert("gaps".into(), json!(gaps));
                let j = serde_json::to_string_pretty(&o).unwrap();
                if *fenced {
                    format!("Here it is.\n\n```json\n{j}\n```\n")
                } else {
                    j
                }
            }
            Doc::Markdown {
                body,
                score,
                review,
            } => {
                let mut s = body.build();
                if let Some(n) = score {
                    s.push_str(&format!("\n\nQuality Score: {n}/100\n"));
                }
                if let Some(r) = review {
                    let v = ["Pass", "Pass with Risk", "Fail"][usize::from(*r) % 3];
                    s.push_str(&format!("\nReview Status: {v}\n"));
                }
                s
            }
        }
    }
}

/// The project's checks as the server would have run them for a submission: a well-behaved
/// host's step of 0xFE says they failed, 0xFD that they passed; otherwise none ran (the
/// seeds were written before checks, and keep their ends).
fn evidence(step: &Step, session: &Session) -> Evidence {
    let Step::Advance(v) = step else {
        return Evidence::None;
    };
    if !session.current_stage.runs_checks() || !matches!(v, 0xFD | 0xFE) {
        return Evidence::None;
    }
    let passed = *v == 0xFD;
    let check = CheckResult {
        name: "test".into(),
        command: "cargo test".into(),
        outcome: if passed {
            CheckOutcome::Passed
        } else {
            CheckOutcome::Failed
        },
        exit_code: Some(if passed { 0 } else { 101 }),
        signal: None,
        duration_ms: u64::from(*v),
        output_bytes: 0,
        output_sha256: String::new(),
        output: None,
        tail: String::new(),
    };
    Evidence::Ran {
        run: CheckRun {
            at: "2026-11-21T12:00:00.000Z".into(),
            config_sha256: "0".repeat(64),
            git: None,
            checks: vec![check],
        },
        outputs: vec![if passed {
            String::new()
        } else {
            "test failed\n".into()
        }],
    }
}

impl Step {
    fn command(&self, session: &Session) -> Option<Command> {
        let stage = session.current_stage;
        Some(match self {
            Step::Advance(v) => advance(session, *v),
            Step::Submit {
                stage: given,
                claude,
                codex,
            } => Command::Submit {
                // Mostly no stage (the common case), sometimes the right or a wrong one.
                stage: given.and_then(|i| match i % 3 {
                    0 => Some(stage),
                    1 => Some(pick(session, i / 3)),
                    _ => None,
                }),
                claude_result: claude.as_deref().map(Doc::build),
                codex_result: codex.as_deref().map(Doc::build),
                document_file: None,
            },
            Step::Answer(pairs) => Command::Answer {
                answers: pairs
                    .iter()
                    .map(|(q, a)| {
                        let id = match q {
                            Qid::Question(n) => format!("q{}", n % 6),
                            Qid::Other(s) => s.clone(),
                        };
                        (id, a.clone())
                    })
                    .collect(),
            },
            Step::Confirm { save } => Command::Confirm {
                action: if *save {
                    Action::ConfirmSave
                } else {
                    Action::Confirm
                },
                note: None,
                answers: Default::default(),
            },
            Step::Approve { scope } => Command::Approve {
                scope: scope.clone(),
                note: None,
            },
            Step::Reject {
                as_action,
                feedback,
            } => Command::Reject {
                action: [
                    Action::Reject,
                    Action::Confirm,
                    Action::ConfirmSave,
                    Action::Approve,
                ][usize::from(*as_action) % 4],
                feedback: feedback.clone(),
            },
            _ => return None,
        })
    }
}

struct Run {
    session: Session,
    files: Files,
    now: DateTime<Utc>,
    /// A file of the server's own was deleted: references may dangle from now on.
    tampered: bool,
    /// Stage documents the human changed or removed.
    edited: BTreeSet<String>,
}

/// Runs the steps on a full-track session, checking after each; returns where the
/// session ended.
pub fn run(input: &MachineInput) -> (Stage, State) {
    run_on(Track::Full, input)
}

/// [`run`], on a session of `track`.
pub fn run_on(track: Track, input: &MachineInput) -> (Stage, State) {
    let now = Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
    let objective = if input.dual {
        "Build it with codex"
    } else {
        "Build it"
    };
    let session = Session::new(
        SESSION_ID.into(),
        TASK.into(),
        "/project".into(),
        objective.into(),
        if input.dual {
            vec![Engine::Claude, Engine::Codex]
        } else {
            vec![Engine::Claude]
        },
        now,
    );
    let mut session = session;
    session.begin_track(track);
    let mut r = Run {
        session,
        files: Files::default(),
        now,
        tampered: false,
        edited: BTreeSet::new(),
    };
    check_session(&r);
    for (dt, step) in &input.steps {
        // The clock never goes back; two calls may share a millisecond.
        r.now += Duration::milliseconds(i64::from(*dt));
        match step.command(&r.session) {
            Some(command) => r.apply(command, evidence(step, &r.session)),
            None => r.human(step),
        }
        check_session(&r);
    }
    (r.session.current_stage, r.session.current_state)
}

impl Run {
    fn apply(&mut self, command: Command, evidence: Evidence) {
        let before = self.session.clone();
        let action = command.action();
        let decision = bmad_mcp::workflow::Decision::by_host(None);
        let run = |evidence: Evidence| {
            apply_observed(
                &before,
                command.clone(),
                &decision,
                evidence,
                &self.files.documents(&before),
                self.now,
            )
        };
        let result = run(evidence.clone());
        // No hidden input: the same call gives the same answer.
        assert_eq!(result, run(evidence));
        match result {
            Ok(out) => self.accepted(&before, &command, out),
            Err(e) => refused(&before, &command, action, &e),
        }
    }

    fn accepted(&mut self, before: &Session, command: &Command, out: Outcome) {
        let after = &out.session;
        let action = command.action();
        assert!(
            allowed_actions(before.track, before.current_stage, before.current_state)
                .contains(&action),
            "{action} accepted in {}",
            before.current_state
        );
        // Exactly one history entry, appended, describing this step.
        assert_eq!(after.history.len(), before.history.len() + 1);
        assert_eq!(after.history[..before.history.len()], before.history[..]);
        let last = after.history.last().unwrap();
        assert_eq!(last.action, action);
        assert_eq!(last.stage, before.current_stage);
        assert_eq!(last.from, Some(before.current_state));
        assert_eq!(last.to, after.current_state);
        assert_eq!(last.at, after.updated_at);
        // The step's record says the same, and that a rejection is one.
        let did = &out.effects;
        assert_eq!((did.action, &did.at), (action, &last.at));
        assert_eq!(
            (did.from.stage, did.from.state),
            (before.current_stage, before.current_state)
        );
        assert_eq!(
            (did.to.stage, did.to.state),
            (after.current_stage, after.current_state)
        );
        assert_eq!(did.rejected, matches!(command, Command::Reject { .. }));
        assert_eq!(did.decision.is_some(), action.decides());
        assert_eq!(did.entry(after), Some(last));
        // Fixed at start.
        assert_eq!(after.session_id, before.session_id);
        assert_eq!(after.task_name, before.task_name);
        assert_eq!(after.engines, before.engines);
        assert_eq!(after.created_at, before.created_at);
        check_engine_notices(before, command, &out.facts.notices);
        // The stage moves forward by at most one, and only by completing the current one;
        // it moves back only when the human sends a failing review or QA report back, and
        // then to development.
        let advanced = after.current_stage > before.current_stage;
        if advanced {
            assert_eq!(
                Some(after.current_stage),
                before.track.next(before.current_stage)
            );
        }
        if after.current_stage < before.current_stage {
            assert!(
                matches!(command, Command::Reject { .. }),
                "{action} moved back"
            );
            assert!(matches!(before.current_stage, Stage::Review | Stage::Qa));
            assert_eq!(before.current_state, State::AwaitingConfirmation);
            assert_eq!(
                (after.current_stage, after.current_state),
                (Stage::Dev, State::Generating)
            );
            // The feedback names the report: this round's own file (kept, so that the next
            // round's report does not replace it), or the stage document when the report
            // could not be read to keep it.
            // A send-back adds the server's pointer to the report and, apart, the person's
            // words: the pointer is among the entries this step added.
            let added =
                &after.record(Stage::Dev).feedback[before.record(Stage::Dev).feedback.len()..];
            assert!(!added.is_empty(), "a send-back adds feedback");
            let feedback = &added
                .iter()
                .map(|f| f.text.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let report = after.artifact_path(before.current_stage);
            let round = report.replace(
                ".md",
                &format!(
                    ".round-{}.md",
                    before.record(before.current_stage).iteration.max(1)
                ),
            );
            if feedback.contains(&round) {
                assert!(out.writes.iter().any(|w| w.path == round), "{round} kept");
                let kept = &after.record(before.current_stage).round_reports;
                assert_eq!(kept.last().map(|r| &r.file_path), Some(&round));
            } else {
                assert!(feedback.contains(&report), "{feedback}");
            }
        }
        if advanced || after.current_state == State::Completed {
            assert_eq!(out.effects.completed, Some(before.current_stage));
        } else {
            assert_eq!(out.effects.completed, None);
        }
        // Every file the machine asks for is the session's own, under the two roots.
        let temp = format!(".bmad-task/temp/{SESSION_ID}/");
        let specs = format!(".claude/specs/{TASK}/");
        for w in &out.writes {
            assert!(
                w.path.starts_with(&temp) || w.path.starts_with(&specs),
                "write outside the session's directories: {}",
                w.path
            );
            let name = w.path.rsplit('/').next().unwrap_or("");
            assert!(!name.is_empty() && !name.starts_with('.') && !name.contains('\\'));
            if w.path.starts_with(&temp) && !self.tampered {
                assert!(!w.content.trim().is_empty(), "empty file {}", w.path);
            }
        }
        for w in &out.writes {
            self.files
                .0
                .borrow_mut()
                .insert(w.path.clone(), w.content.clone());
            self.edited.remove(&w.path);
        }
        self.session = out.session;
    }

    fn human(&mut self, step: &Step) {
        let paths: Vec<String> = self.files.0.borrow().keys().cloned().collect();
        match step {
            Step::EditArtifact(i, text) => {
                let stage = pick(&self.session, *i);
                let path = self.session.artifact_path(stage);
                if self.files.0.borrow().contains_key(&path) {
                    self.files.0.borrow_mut().insert(path.clone(), text.clone());
                    self.edited.insert(path);
                }
            }
            Step::DeleteArtifact(i) => {
                let stage = pick(&self.session, *i);
                let path = self.session.artifact_path(stage);
                if self.files.0.borrow_mut().remove(&path).is_some() {
                    self.edited.insert(path);
                }
            }
            Step::DeleteAnyFile(i) => {
                if !paths.is_empty() {
                    let path = &paths[usize::from(*i) % paths.len()];
                    self.files.0.borrow_mut().remove(path);
                    self.tampered = true;
                    self.edited.insert(path.clone());
                }
            }
            _ => unreachable!("commands are applied"),
        }
    }
}

fn refused(before: &Session, command: &Command, action: Action, e: &WorkflowError) {
    assert!(!e.code().as_str().is_empty());
    assert!(!e.to_string().trim().is_empty());
    let allowed =
        allowed_actions(before.track, before.current_stage, before.current_state).contains(&action);
    match e {
        WorkflowError::IllegalAction { state, stage, .. } => {
            assert!(!allowed, "{action} refused as illegal in {state}");
            assert_eq!(
                (*state, *stage),
                (before.current_state, before.current_stage)
            );
        }
        // The fuzzed session is never a parent with stories.
        WorkflowError::StoriesOpen { .. } => panic!("stories refused a session without any"),
        // The fuzzed steps read no work tree: the machine has nothing to compare.
        WorkflowError::NothingChanged { .. } => panic!("nothing_changed without a work tree read"),
        // The fuzzed submissions name no file.
        WorkflowError::DocumentFile { .. } => panic!("document_file refused without one named"),
        // The fuzzed documents come without a BMAD install: no review is asked for layers.
        WorkflowError::LayersUnreported { .. } => panic!("layers asked for without an install"),
        WorkflowError::StageMismatch { given, current } => {
            assert!(allowed);
            assert_ne!(given, current);
            assert_eq!(*current, before.current_stage);
            assert!(matches!(command, Command::Submit { stage: Some(s), .. } if s == given));
        }
        WorkflowError::MissingResult { .. }
        | WorkflowError::EmptyDocument { .. }
        | WorkflowError::NoDocumentField { .. }
        | WorkflowError::SubmissionTooLarge { .. }
        | WorkflowError::ContradictoryVerdict { .. } => {
            assert!(allowed);
            assert!(matches!(command, Command::Submit { .. }));
        }
        WorkflowError::UnknownQuestions { .. }
        | WorkflowError::NoAnswers { .. }
        | WorkflowError::EmptyAnswer { .. } => {
            assert!(allowed);
            // Answers also come with a `confirm` that accepts the document.
            assert!(matches!(
                command,
                Command::Answer { .. } | Command::Confirm { .. }
            ));
        }
        WorkflowError::DocumentUnavailable { .. } => {
            assert!(allowed);
            assert!(matches!(
                command,
                Command::Confirm { .. } | Command::Approve { .. }
            ));
        }
        WorkflowError::DocumentUnreadable { reason, .. } => {
            // In memory the only unusable document is one the human emptied.
            assert!(allowed);
            assert_eq!(reason, "is empty");
            assert!(matches!(
                command,
                Command::Confirm { .. } | Command::Approve { .. }
            ));
        }
        WorkflowError::StaleDecision { .. } => panic!("no digest was given, none can be stale"),
        WorkflowError::FeedbackRequired => {
            assert!(allowed);
            assert!(
                matches!(command, Command::Reject { feedback, .. } if feedback.as_deref().is_none_or(|f| f.trim().is_empty()))
            );
        }
        WorkflowError::InvalidScope { .. } => {
            assert!(allowed);
            assert!(matches!(command, Command::Approve { .. }));
        }
    }
}

/// A submission whose engines are not the ones the stage asks for is pointed out: a
/// codex result in a session without a second model, one result where two engines
/// write, the other engine's result standing in for the stage's own.
fn check_engine_notices(before: &Session, command: &Command, notices: &[String]) {
    let Command::Submit {
        claude_result,
        codex_result,
        ..
    } = command
    else {
        return;
    };
    let non_blank = |t: &Option<String>| t.as_deref().is_some_and(|t| !t.trim().is_empty());
    let given: Vec<Engine> = [
        (Engine::Claude, non_blank(claude_result)),
        (Engine::Codex, non_blank(codex_result)),
    ]
    .into_iter()
    .filter_map(|(e, g)| g.then_some(e))
    .collect();
    let asked = before.engines_for(before.current_stage);
    let says = |e: Engine| notices.iter().any(|n| n.contains(e.result_field()));
    if given.contains(&Engine::Codex) && !before.engines.contains(&Engine::Codex) {
        assert!(
            says(Engine::Codex),
            "codex in a claude session: {notices:?}"
        );
    }
    if let [only] = given[..] {
        if asked.len() > 1 {
            assert!(
                says(only.other()),
                "one of two engines, unsaid: {notices:?}"
            );
        } else if asked != [only] {
            assert!(says(only), "{only} stood in, unsaid: {notices:?}");
        }
    }
}

fn check_ref(r: &Run, c: &ContentRef, what: &str) {
    assert!(
        c.file_path.starts_with(".bmad-task/") || c.file_path.starts_with(".claude/specs/"),
        "{what} points at {}",
        c.file_path
    );
    if r.tampered || r.edited.contains(&c.file_path) {
        return;
    }
    let files = r.files.0.borrow();
    let content = files
        .get(&c.file_path)
        .unwrap_or_else(|| panic!("{what} points at missing {}", c.file_path));
    assert_eq!(c.size, content.len() as u64, "{what} size");
}

fn check_session(r: &Run) {
    let s = &r.session;
    let stage = s.current_stage;
    let state = s.current_state;
    // The state is one the stage can be in.
    let ok = match state {
        State::Generating => true,
        State::Clarifying => matches!(
            stage,
            Stage::Spec | Stage::Bug | Stage::Po | Stage::Architect
        ),
        // Review and QA too, when their report's own verdict failed; development and QA
        // when the project's checks failed.
        State::AwaitingConfirmation => {
            matches!(
                stage,
                Stage::Spec
                    | Stage::Bug
                    | Stage::Po
                    | Stage::Architect
                    | Stage::Dev
                    | Stage::Review
                    | Stage::Qa
            )
        }
        State::Refining => matches!(
            stage,
            Stage::Spec | Stage::Bug | Stage::Po | Stage::Architect | Stage::Sm
        ),
        State::AwaitingApproval => stage == Stage::Sm,
        // The last stage of the session's track: QA, or review on the quick and fix tracks.
        State::Completed => match s.track {
            Track::Quick | Track::Fix => stage == Stage::Review,
            Track::Full | Track::Story => stage == Stage::Qa,
        },
    };
    // Only the track's own stages are ever current.
    assert!(
        s.track.contains(stage),
        "{stage} is not a stage of {}",
        s.track
    );
    assert!(ok, "state {state} at stage {stage}");
    // The stage table agrees with this independent list.
    assert!(
        stage.states().contains(&state),
        "the table lacks {state} at {stage}"
    );
    assert_eq!(s.stages.len(), Stage::ALL.len());
    // Every stage is written by engines the session runs, the host's own model first.
    assert_eq!(s.engines.first(), Some(&Engine::Claude));
    for st in Stage::ALL {
        let engines = s.engines_for(st);
        assert!(!engines.is_empty(), "{st} has no engine");
        assert!(
            engines.iter().all(|e| s.engines.contains(e)),
            "{st}: {engines:?} of {:?}",
            s.engines
        );
    }
    for (st, rec) in s.stages.iter() {
        let st = &st;
        let want = if !s.track.contains(*st) {
            StageStatus::Pending
        } else if *st < stage || (*st == stage && state == State::Completed) {
            StageStatus::Completed
        } else if *st == stage {
            StageStatus::InProgress
        } else {
            StageStatus::Pending
        };
        assert_eq!(rec.status, want, "status of {st} while at {stage}/{state}");
        // A risk is accepted only on a review or QA report, or on failing checks of
        // development, and completes its stage.
        if rec.accepted_risk {
            assert!(
                matches!(st, Stage::Dev | Stage::Review | Stage::Qa),
                "risk accepted at {st}"
            );
            assert_eq!(rec.status, StageStatus::Completed);
        }
        if let Some(n) = rec.score {
            assert!(n <= 100);
        }
        assert!(rec.scores.values().all(|n| *n <= 100));
        // Only engines that submitted are scored (docs/spec.md §4.3); the chosen one among them.
        if let Some(e) = rec.chosen_engine {
            // Scored at a gate; elsewhere only a score the document states (QA).
            if st.passing_score().is_some() {
                assert!(
                    rec.scores.contains_key(&e),
                    "{e:?} chosen but not scored at {st}"
                );
            } else {
                assert!(rec.scores.len() <= 1);
                assert_eq!(rec.score.is_some(), rec.score_source.is_some());
            }
            if rec.score.is_some() || !rec.scores.is_empty() {
                assert_eq!(rec.score, rec.scores.get(&e).copied());
            }
        }
        // Question ids are q1, q2, … in order; answers only to asked questions.
        for (i, q) in rec.questions.iter().enumerate() {
            assert_eq!(q.id, format!("q{}", i + 1));
            assert!(!q.question.trim().is_empty());
        }
        for (id, a) in &rec.answers {
            assert!(rec.questions.iter().any(|q| &q.id == id), "answer to {id}");
            assert!(!a.trim().is_empty());
        }
        if let Some(a) = &rec.artifact {
            assert_eq!(a.path, s.artifact_path(*st));
        }
        for (c, what) in [
            (&rec.claude_result_ref, "claude_result_ref"),
            (&rec.codex_result_ref, "codex_result_ref"),
            (&rec.final_result_ref, "final_result_ref"),
            (&rec.draft_ref, "draft_ref"),
        ] {
            if let Some(c) = c {
                check_ref(r, c, what);
            }
        }
        // The kept output of each check the server ran is a file of the session's.
        for c in rec.checks.iter().flat_map(|run| run.checks.iter()) {
            if let Some(o) = &c.output {
                check_ref(r, o, "a check's output");
            }
        }
    }
    let cur = s.current();
    match state {
        State::Clarifying => assert!(
            !cur.open_questions().is_empty(),
            "clarifying, nothing asked"
        ),
        State::AwaitingConfirmation if matches!(stage, Stage::Dev | Stage::Review | Stage::Qa) => {
            // A report whose verdict failed or is not stated: Review Status: Fail or none,
            // a QA score below 90 or none; or a check the server ran that failed
            // (development, QA).
            let report = match stage {
                Stage::Review => !matches!(
                    cur.review_status.as_deref(),
                    Some("Pass" | "Pass with Risk")
                ),
                Stage::Qa => cur.score.is_none_or(|n| n < 90),
                _ => false,
            };
            let checks =
                stage.runs_checks() && cur.checks.as_ref().is_some_and(|run| !run.passed());
            // The closing report's intent verdict, other than met or not stated.
            let intent = bmad_mcp::workflow::trace::failure(&cur.trace).is_some();
            // The fix track's development report without its failing test.
            let untested = rules::unwritten_sections(stage, cur).is_some();
            assert_eq!(
                untested,
                s.track == Track::Fix && stage == Stage::Dev && untested
            );
            assert!(
                report || checks || untested || intent,
                "{stage} awaits the human with a passing report"
            );
            assert_eq!(rules::failed_checks(stage, cur).is_some(), checks);
            assert_eq!(cur.gate_passed, Some(false));
            assert!(rules::failed_verdict(stage, cur).is_some());
            assert!(cur.artifact.is_some() && cur.draft_ref.is_none());
            assert!(!cur.accepted_risk);
        }
        State::AwaitingConfirmation => match cur.gate_passed {
            Some(true) => assert!(cur.artifact.is_some() && cur.final_result_ref.is_some()),
            Some(false) => assert!(cur.draft_ref.is_some()),
            None => panic!("awaiting confirmation of an unscored draft"),
        },
        State::AwaitingApproval => assert!(cur.artifact.is_some()),
        _ => {}
    }
    // Artifacts are listed once each, only for stages reached.
    let mut seen = BTreeSet::new();
    for a in &s.artifacts {
        assert!(seen.insert(a), "{a} listed twice");
        assert!(
            Stage::ALL
                .iter()
                .any(|st| *st <= stage && s.artifact_path(*st) == *a),
            "artifact {a} of a stage not reached"
        );
    }
    assert_eq!(s.updated_at, s.history.last().unwrap().at);
    // What the store writes can be read back as the same session.
    let stored = serde_json::to_string(s).unwrap();
    let back: Session = serde_json::from_str(&stored).unwrap();
    assert_eq!(&back, s);
}
