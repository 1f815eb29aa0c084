//! Transition tests: every (state, action) pair, then the rules of docs/spec.md §4–§6 one by one.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use chrono::{Duration, TimeZone, Utc};

use super::*;
use crate::workflow::rules::allowed_actions;
use crate::workflow::session::StageStatus;
use crate::workflow::stage::Engine;
use crate::workflow::{DecidedBy, Decision, Via};

/// An in-memory project: what the machine reads, and what the caller wrote.
#[derive(Default)]
struct Mem(RefCell<HashMap<String, String>>);

impl Mem {
    fn read(&self, rel_path: &str) -> Result<Option<String>, String> {
        Ok(self.0.borrow().get(rel_path).cloned())
    }

    /// What the caller reads for a step on `s`: only the files the machine says it may
    /// read, so that a read it did not announce fails the test.
    fn documents(&self, s: &Session) -> Documents {
        let mut documents = Documents::default();
        for path in Documents::wanted(s)
            .into_iter()
            .chain(Documents::taken_from(s))
        {
            let read = self.read(&path);
            documents.insert(path, read);
        }
        documents
    }
}

/// A session driven through the machine, with its files kept in memory.
struct Run {
    s: Session,
    files: Mem,
    clock: DateTime<Utc>,
    /// The decision the next actions come with.
    decision: Decision,
    /// The checks the server ran for the next action (taken by it).
    evidence: Evidence,
}

/// The document of a scored stage with every section it requires.
fn complete_doc(stage: Stage) -> String {
    crate::workflow::sections::filled(&format!("{} v2", stage.role()), stage.sections())
}

/// A submission that passes the gate of a scored stage: every section, a score of 93.
fn passing(stage: Stage) -> String {
    serde_json::json!({stage.document_fields()[0]: complete_doc(stage), "quality_score": 93})
        .to_string()
}

const LOW_PRD: &str = r##"{"prd_updated": "# PRD low", "quality_score": 70}"##;
const QUESTIONS_PRD: &str = r##"{"prd_draft": "# PRD v1", "quality_score": 72, "gaps": ["platforms"], "questions": [{"question": "Which platforms?"}, "Which users?"]}"##;

impl Run {
    fn new(objective: &str) -> Run {
        let clock = Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
        let s = Session::test()
            .id("6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f")
            .task("build-it")
            .objective(objective)
            .engines(crate::workflow::engine::for_start(objective, None))
            .at(clock)
            .build();
        Run {
            s,
            files: Mem::default(),
            clock,
            decision: Decision::by_host(None),
            evidence: Evidence::None,
        }
    }

    fn try_do(&mut self, c: Command) -> Result<Outcome, WorkflowError> {
        self.clock += Duration::seconds(1);
        let evidence = std::mem::take(&mut self.evidence);
        let out = apply_observed(
            &self.s,
            c,
            &self.decision,
            evidence,
            &self.files.documents(&self.s),
            self.clock,
        )?;
        for w in &out.writes {
            self.files
                .0
                .borrow_mut()
                .insert(w.path.clone(), w.content.clone());
        }
        self.s = out.session.clone();
        Ok(out)
    }

    fn act(&mut self, c: Command) -> Outcome {
        let action = c.action();
        self.try_do(c)
            .unwrap_or_else(|e| panic!("{action} should be legal: {e}"))
    }

    fn submit(&mut self, claude: &str) -> Outcome {
        self.act(submit(Some(claude), None))
    }

    fn state(&self) -> (Stage, State) {
        (self.s.current_stage, self.s.current_state)
    }

    /// Drives a fresh session to a given state (at the first stage where it occurs).
    fn at(state: State) -> Run {
        let mut r = Run::new("Build it");
        match state {
            State::Generating => {}
            State::Clarifying => {
                r.submit(QUESTIONS_PRD);
            }
            State::Refining => {
                r.submit(QUESTIONS_PRD);
                r.act(answer(&[("q1", "Web"), ("q2", "Admins")]));
            }
            State::AwaitingConfirmation => {
                r.submit(&passing(Stage::Po));
            }
            State::AwaitingApproval => r.advance_to(Stage::Sm, true),
            State::Completed => {
                r.advance_to(Stage::Qa, false);
                r.submit("# QA\nIntent: met\nQuality Score: 90/100");
            }
        }
        assert_eq!(r.s.current_state, state);
        r
    }

    /// Advances through the stages before `stage` (and submits the plan when at sm).
    fn advance_to(&mut self, stage: Stage, submit_at_sm: bool) {
        while self.s.current_stage < stage {
            match self.s.current_stage {
                stage @ (Stage::Spec | Stage::Bug | Stage::Po | Stage::Architect) => {
                    self.submit(&passing(stage));
                    self.act(Command::Confirm {
                        action: Action::Confirm,
                        note: None,
                        answers: Default::default(),
                    });
                }
                Stage::Sm => {
                    self.submit(SPRINT_PLAN);
                    self.act(Command::Approve {
                        scope: None,
                        note: None,
                    });
                }
                // The stage's own engine: codex when the session runs it, else claude.
                s if self.s.engines_for(s) == [Engine::Codex] => {
                    self.act(submit(None, Some(PASSING_REPORT)));
                }
                _ => {
                    self.act(submit(Some(PASSING_REPORT), None));
                }
            }
        }
        if stage == Stage::Sm && submit_at_sm {
            self.submit(SPRINT_PLAN);
        }
    }
}

/// A review or QA report whose own verdict fails.
fn failing(stage: Stage) -> &'static str {
    match stage {
        Stage::Review => FAILING_REVIEW,
        _ => FAILING_QA,
    }
}

const FAILING_REVIEW: &str =
    "# Code Review\n\n## Findings\n- critical, `src/api.rs`: no input validation.\n\nReview Status: Fail\n";
const FAILING_QA: &str =
    "# QA Report\n\n## Results\n7 passed, 3 failed.\n\nIntent: met\nQuality Score: 62/100\n";

/// A report of development, review or QA whose own verdict (where it has one) passes.
/// (It shows a failing test written first, as the fix track's development must.)
const PASSING_REPORT: &str = "# Report\nDone.\n\n## Failing Test\n`empty_input` failed before the fix.\n\nReview Status: Pass\nIntent: met\nQuality Score: 95/100\n";

const SPRINT_PLAN: &str = "# Plan\n## Sprint 1: Core\n- a\n## Sprint 2: UI\n- b\n";

fn submit(claude: Option<&str>, codex: Option<&str>) -> Command {
    Command::Submit {
        stage: None,
        claude_result: claude.map(String::from),
        codex_result: codex.map(String::from),
        document_file: None,
    }
}

fn answer(pairs: &[(&str, &str)]) -> Command {
    Command::Answer {
        answers: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn every_action() -> Vec<Command> {
    vec![
        submit(Some(&passing(Stage::Po)), None),
        answer(&[("q1", "Web")]),
        Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        },
        Command::Confirm {
            action: Action::ConfirmSave,
            note: None,
            answers: Default::default(),
        },
        Command::Approve {
            scope: None,
            note: None,
        },
        Command::Reject {
            action: Action::Reject,
            feedback: Some("more detail".into()),
        },
        Command::Reject {
            action: Action::Confirm,
            feedback: Some("no".into()),
        },
        Command::Reject {
            action: Action::Approve,
            feedback: Some("no".into()),
        },
        Command::Promote { note: None },
    ]
}

/// The expected result of each legal (state, action) pair; everything else is refused.
fn expected(state: State, c: &Command) -> Option<(Stage, State)> {
    use State::*;
    match (state, c) {
        (Generating, Command::Submit { .. }) => Some((Stage::Po, AwaitingConfirmation)),
        (Refining, Command::Submit { .. }) => Some((Stage::Po, AwaitingConfirmation)),
        (Clarifying, Command::Answer { .. }) => Some((Stage::Po, Refining)),
        (AwaitingConfirmation, Command::Confirm { .. }) => Some((Stage::Architect, Generating)),
        (AwaitingConfirmation, Command::Reject { action, .. }) if *action != Action::Approve => {
            Some((Stage::Po, Refining))
        }
        (AwaitingApproval, Command::Approve { .. }) => Some((Stage::Dev, Generating)),
        (AwaitingApproval, Command::Reject { action, .. }) if *action != Action::Confirm => {
            Some((Stage::Sm, Refining))
        }
        _ => None,
    }
}

#[test]
fn every_state_action_pair_is_legal_or_refused_as_the_table_says() {
    let mut checked = 0;
    for state in State::ALL {
        for command in every_action() {
            let mut run = Run::at(state);
            let before = run.s.clone();
            let files_before = run.files.0.borrow().clone();
            let action = command.action();
            match (expected(state, &command), run.try_do(command.clone())) {
                (Some(want), Ok(out)) => {
                    assert_eq!(run.state(), want, "{state} + {action}");
                    assert_eq!(out.session.history.len(), before.history.len() + 1);
                    let last = out.session.history.last().unwrap();
                    assert_eq!(last.action, action);
                    assert_eq!(last.from, Some(state));
                    assert_eq!(last.to, want.1);
                    for w in &out.writes {
                        assert!(
                            w.path.starts_with(".bmad-task/temp/")
                                || w.path.starts_with(".claude/specs/build-it/"),
                            "{state} + {action} wrote {}",
                            w.path
                        );
                    }
                }
                (None, Err(e)) => {
                    let WorkflowError::IllegalAction {
                        action: a,
                        state: st,
                        allowed,
                        ..
                    } = &e
                    else {
                        panic!("{state} + {action}: wrong error {e}");
                    };
                    assert_eq!((*a, *st), (action, state));
                    assert_eq!(
                        allowed,
                        &allowed_actions(run.s.track, run.s.current_stage, state)
                    );
                    assert_eq!(e.code(), "invalid_state");
                    let msg = e.to_string();
                    assert!(msg.contains(state.id()) && msg.contains("status"), "{msg}");
                    assert_eq!(run.s, before, "the session is unchanged");
                    assert_eq!(*run.files.0.borrow(), files_before, "no file is written");
                }
                (want, got) => panic!("{state} + {action}: expected {want:?}, got {got:?}"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, State::ALL.len() * every_action().len());
}

/// A session of `track` at `stage` in `state`: driven there when the track runs the
/// stage and the stage has that state, else a session with the stage and state written
/// over it (as a hand-edited file might).
fn reach(track: crate::workflow::Track, stage: Stage, state: State) -> Run {
    let mut r = Run::new("Build it");
    r.s.begin_track(track);
    let reachable = track.contains(stage)
        && stage.states().contains(&state)
        && (state != State::Completed || track.is_last(stage));
    if !reachable {
        if track.contains(stage) {
            r.advance_to(stage, false);
        }
        r.s.current_stage = stage;
        r.s.current_state = state;
        return r;
    }
    r.advance_to(stage, false);
    match state {
        State::Generating => {}
        // The stage's own key: a stage reads no other stage's.
        State::Clarifying => {
            r.submit(&QUESTIONS_PRD.replace("prd_draft", stage.document_fields()[0]));
        }
        State::Refining if stage == Stage::Sm => {
            r.submit(SPRINT_PLAN);
            r.act(Command::Reject {
                action: Action::Reject,
                feedback: Some("smaller sprints".into()),
            });
        }
        State::Refining => {
            r.submit(&QUESTIONS_PRD.replace("prd_draft", stage.document_fields()[0]));
            r.act(answer(&[("q1", "Web"), ("q2", "Admins")]));
        }
        State::AwaitingConfirmation if stage.verdict().is_some() => {
            r.act(submit(None, Some(failing(stage))));
        }
        // A stage without a verdict of its own waits for the human on failing checks.
        State::AwaitingConfirmation if stage.runs_checks() => {
            r.evidence = checks_run(&[("test", false)]);
            r.submit("# Implementation Report\n\n## Summary\nBuilt.");
        }
        State::AwaitingConfirmation => {
            r.submit(&passing(stage));
        }
        State::AwaitingApproval => {
            r.submit(SPRINT_PLAN);
        }
        State::Completed => {
            r.submit(PASSING_REPORT);
        }
    }
    assert_eq!(r.state(), (stage, state), "{track}");
    r
}

/// Every (track, stage, state, action): `apply` refuses with `invalid_state` exactly when
/// the legality table says the action is illegal there, and then changes nothing.
#[test]
fn apply_refuses_exactly_the_triples_the_table_calls_illegal() {
    use crate::workflow::Track;
    let mut checked = 0;
    let mut legal_on = BTreeMap::new();
    for track in Track::ALL {
        let mut legal = 0;
        for stage in Stage::ALL {
            for state in State::ALL {
                for command in every_action() {
                    let mut run = reach(track, stage, state);
                    let before = run.s.clone();
                    let files_before = run.files.0.borrow().clone();
                    let action = command.action();
                    let result = run.try_do(command);
                    let what = format!("{track}: {stage}/{state} + {action}");
                    if crate::workflow::is_legal(track, stage, state, action) {
                        legal += 1;
                        if let Err(e) = &result {
                            assert_ne!(e.code(), "invalid_state", "{what}: {e}");
                        }
                    } else {
                        let Err(e) = result else {
                            panic!("{what} was applied")
                        };
                        let WorkflowError::IllegalAction {
                            action: a,
                            state: st,
                            stage: sg,
                            allowed,
                        } = &e
                        else {
                            panic!("{what}: wrong error {e}");
                        };
                        assert_eq!((*a, *st, *sg), (action, state, stage));
                        assert_eq!(allowed, &allowed_actions(track, stage, state));
                        assert_eq!(e.code(), "invalid_state");
                        assert_eq!(run.s, before, "{what}: the session is unchanged");
                        assert_eq!(
                            *run.files.0.borrow(),
                            files_before,
                            "{what}: no file written"
                        );
                    }
                    checked += 1;
                }
            }
        }
        legal_on.insert(track.id(), legal);
    }
    assert_eq!(checked, 4 * 8 * 6 * 9);
    // Full: 30, and development waiting on failing checks: confirm, confirm_save, reject
    // and confirm with `confirmed: false`. Quick: the spec's rows as the PRD's (1 + 1 + 1
    // + 4), development's (1 + 4), review's (1 + 4), and `promote` in each of its 8
    // states before completion. Fix: as quick, without `promote`. Story: development,
    // review and QA as in the full track.
    assert_eq!(
        legal_on,
        BTreeMap::from([("full", 34), ("quick", 25), ("fix", 17), ("story", 15)]),
        "legal triples"
    );
}

#[test]
fn submissions_at_the_unscored_stages_move_as_the_spec_says() {
    let mut r = Run::at(State::Generating);
    r.advance_to(Stage::Sm, false);
    r.submit(SPRINT_PLAN);
    assert_eq!(r.state(), (Stage::Sm, State::AwaitingApproval));
    r.act(Command::Approve {
        scope: None,
        note: None,
    });
    for (stage, next) in [
        (Stage::Dev, (Stage::Review, State::Generating)),
        (Stage::Review, (Stage::Qa, State::Generating)),
        (Stage::Qa, (Stage::Qa, State::Completed)),
    ] {
        assert_eq!(r.s.current_stage, stage);
        r.act(submit(None, Some(PASSING_REPORT)));
        assert_eq!(r.state(), next);
        assert_eq!(r.s.record(stage).status, StageStatus::Completed);
    }
    // Every stage document is listed once, in stage order.
    let want: Vec<String> =
        r.s.track
            .stages()
            .iter()
            .map(|s| r.s.artifact_path(*s))
            .collect();
    assert_eq!(r.s.artifacts, want);
    assert!(r
        .s
        .track
        .stages()
        .iter()
        .all(|s| r.s.record(*s).status == StageStatus::Completed));
}

#[test]
fn first_drafts_with_questions_go_to_clarifying_without_an_artifact() {
    let mut r = Run::new("Build it");
    let out = r.submit(QUESTIONS_PRD);
    assert_eq!(r.state(), (Stage::Po, State::Clarifying));
    let rec = r.s.record(Stage::Po);
    let ids: Vec<_> = rec.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["q1", "q2"]);
    assert_eq!(rec.gaps, ["platforms"]);
    assert_eq!(rec.score, Some(72));
    assert!(rec.draft_ref.is_some());
    assert!(out
        .writes
        .iter()
        .all(|w| !w.path.starts_with(".claude/specs")));
    // Even a passing score asks first when the author still has questions.
    let mut r = Run::new("Build it");
    r.submit(r##"{"prd_draft": "# PRD", "quality_score": 95, "questions": ["Really?"]}"##);
    assert_eq!(r.s.current_state, State::Clarifying);
}

#[test]
fn answers_merge_and_follow_up_questions_start_another_round() {
    let mut r = Run::at(State::Clarifying);
    r.act(answer(&[("q1", "Web")]));
    assert_eq!(r.s.current_state, State::Refining);
    r.submit(r##"{"prd_updated": "# PRD v2", "quality_score": 80, "questions": ["Which users?", "Offline mode?"]}"##);
    assert_eq!(r.state(), (Stage::Po, State::Clarifying));
    let rec = r.s.record(Stage::Po);
    // "Which users?" was already asked: only the new question is added, with a new id.
    let new: Vec<_> = rec.questions.iter().filter(|q| q.round == 2).collect();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].id, "q3");
    assert_eq!(new[0].question, "Offline mode?");
    r.act(answer(&[("q2", "Admins"), ("q3", "No")]));
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.answers.len(), 3, "answers of both rounds are kept");
    assert_eq!(rec.answers["q1"], "Web");
    r.submit(&passing(Stage::Po));
    assert_eq!(r.s.current_state, State::AwaitingConfirmation);
}

#[test]
fn answers_to_unknown_questions_and_empty_answers_are_refused() {
    let mut r = Run::at(State::Clarifying);
    let e = r.try_do(answer(&[("q9", "x")])).unwrap_err();
    assert_eq!(e.code(), "unknown_question");
    assert!(e.to_string().contains("q9") && e.to_string().contains("q1"));
    let e = r.try_do(answer(&[])).unwrap_err();
    assert!(e.to_string().contains("`answers`"));
    let e = r.try_do(answer(&[("q1", "  ")])).unwrap_err();
    assert!(e.to_string().contains("answers.q1"));
    assert_eq!(r.s.current_state, State::Clarifying);
}

#[test]
fn passing_the_gate_writes_the_artifact_for_the_human_to_read() {
    let mut r = Run::at(State::Refining);
    let out = r.submit(&passing(Stage::Po));
    assert_eq!(r.s.current_state, State::AwaitingConfirmation);
    let path = ".claude/specs/build-it/01-product-requirements.md";
    assert_eq!(out.facts.review_path.as_deref(), Some(path));
    assert_eq!(
        r.files.read(path).unwrap().unwrap(),
        complete_doc(Stage::Po)
    );
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.gate_passed, Some(true));
    assert_eq!(
        rec.artifact.as_ref().unwrap().sha256,
        sha256_hex(&r.files.read(path).unwrap().unwrap())
    );
    assert!(r.s.artifacts.is_empty(), "listed only once confirmed");
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(r.s.artifacts, [path]);
    assert_eq!(r.s.record(Stage::Po).status, StageStatus::Completed);
}

#[test]
fn a_below_gate_draft_never_overwrites_the_artifact() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let path = r.s.artifact_path(Stage::Po);
    let saved = r.files.read(&path).unwrap().unwrap();
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("add metrics".into()),
    });
    let out = r.submit(LOW_PRD);
    assert_eq!(r.s.current_state, State::Refining);
    assert!(out.writes.iter().all(|w| w.path != path));
    assert_eq!(r.files.read(&path).unwrap().unwrap(), saved);
    assert!(!out.facts.guidance.is_empty());
    let feedback = &r.s.record(Stage::Po).feedback;
    assert_eq!(feedback.len(), 1);
    assert_eq!(feedback[0].text, "add metrics");
    // The host called `reject` without a dialog: its words are labelled as its own.
    assert_eq!(feedback[0].by, crate::workflow::authorship::Speaker::Host);
}

#[test]
fn five_submissions_below_the_gate_hand_the_decision_to_the_human() {
    let mut r = Run::new("Build it");
    for i in 1..=4 {
        r.submit(LOW_PRD);
        assert_eq!(r.s.current_state, State::Refining, "submission {i}");
        assert_eq!(r.s.record(Stage::Po).iteration, i);
    }
    let out = r.submit(r##"{"prd_updated": "# PRD final draft", "quality_score": 71}"##);
    assert_eq!(r.s.current_state, State::AwaitingConfirmation);
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.gate_passed, Some(false));
    let draft = rec.draft_ref.clone().unwrap();
    assert_eq!(
        out.facts.review_path.as_deref(),
        Some(draft.file_path.as_str())
    );
    assert!(out
        .writes
        .iter()
        .all(|w| !w.path.starts_with(".claude/specs")));
    // Confirming anyway saves the draft as the artifact.
    r.act(Command::Confirm {
        action: Action::ConfirmSave,
        note: None,
        answers: Default::default(),
    });
    let path = r.s.artifact_path(Stage::Po);
    assert_eq!(r.files.read(&path).unwrap().unwrap(), "# PRD final draft");
    assert_eq!(r.state(), (Stage::Architect, State::Generating));
}

/// A below-gate draft that the human deleted or emptied before confirming it anyway is
/// replaced by the draft as submitted: an empty document is never confirmed.
#[test]
fn a_below_gate_draft_deleted_is_confirmed_as_submitted_and_an_emptied_one_is_refused() {
    for emptied in [true, false] {
        let mut r = Run::new("Build it");
        for _ in 1..=4 {
            r.submit(LOW_PRD);
        }
        r.submit(r##"{"prd_updated": "# PRD final draft", "quality_score": 71}"##);
        let draft = r.s.record(Stage::Po).draft_ref.clone().unwrap().file_path;
        let confirm = Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        };
        if emptied {
            // The human's (empty) file is theirs: refused, nothing changes.
            r.files
                .0
                .borrow_mut()
                .insert(draft.clone(), "\n  \n".into());
            let before = r.s.clone();
            let e = r.try_do(confirm).unwrap_err();
            assert_eq!(e.code(), "document_unreadable");
            assert!(
                e.to_string()
                    .starts_with(&format!("{draft} is empty; nothing was changed.")),
                "{e}"
            );
            assert_eq!(r.s, before);
            assert_eq!(r.files.read(&draft).unwrap().unwrap(), "\n  \n");
            continue;
        }
        r.files.0.borrow_mut().remove(&draft);
        let out = r.act(confirm);
        let path = r.s.artifact_path(Stage::Po);
        assert_eq!(r.files.read(&path).unwrap().unwrap(), "# PRD final draft");
        let a = r.s.record(Stage::Po).artifact.clone().unwrap();
        assert_eq!(a.sha256, sha256_hex("# PRD final draft"));
        assert!(
            out.facts
                .notices
                .iter()
                .any(|n| n.contains("had been deleted")),
            "{:?}",
            out.facts.notices
        );
        assert_eq!(r.state(), (Stage::Architect, State::Generating));
    }
}

#[test]
fn the_dual_engine_keeps_the_better_candidate() {
    let doc = |engine: &str, score: u32| {
        let text = crate::workflow::sections::filled(engine, Stage::Po.sections());
        serde_json::json!({"prd_updated": text, "quality_score": score}).to_string()
    };
    let cases = [
        ((95, 92), Engine::Claude),
        ((80, 91), Engine::Codex),
        ((88, 89), Engine::Codex),
        ((90, 90), Engine::Claude),
        ((96, 91), Engine::Claude),
    ];
    for ((c, x), want) in cases {
        let mut r = Run::new("Build it with codex");
        assert_eq!(r.s.engines, [Engine::Claude, Engine::Codex]);
        r.act(submit(Some(&doc("claude", c)), Some(&doc("codex", x))));
        let rec = r.s.record(Stage::Po);
        assert_eq!(rec.chosen_engine, Some(want), "{c} vs {x}");
        assert_eq!(rec.score, Some(c.max(x)));
        assert_eq!(rec.scores.len(), 2);
        assert!(rec.claude_result_ref.is_some() && rec.codex_result_ref.is_some());
    }
}

#[test]
fn an_engine_that_did_not_submit_is_never_scored() {
    let mut r = Run::new("Build it with codex");
    r.act(submit(None, Some(&passing(Stage::Po))));
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.scores, BTreeMap::from([(Engine::Codex, 93)]));
    assert!(rec.claude_result_ref.is_none());
    // An empty string is not a submission either.
    let mut r = Run::new("Build it with codex");
    r.act(submit(Some("  "), Some(&passing(Stage::Po))));
    assert_eq!(r.s.record(Stage::Po).scores.len(), 1);
}

#[test]
fn empty_documents_and_missing_results_are_refused_and_nothing_is_written() {
    let mut r = Run::new("Build it");
    for (c, code) in [
        (submit(None, None), "missing_field"),
        (submit(Some(""), None), "missing_field"),
        (
            submit(Some(r##"{"prd_draft": "", "quality_score": 95}"##), None),
            "empty_document",
        ),
        (
            submit(Some(&passing(Stage::Po)), Some("   {\"prd_draft\": \" \"}")),
            "empty_document",
        ),
    ] {
        let e = r.try_do(c).unwrap_err();
        assert_eq!(e.code(), code, "{e}");
        if code == "missing_field" {
            // Either engine's result is accepted, so the message names both.
            assert!(
                e.to_string()
                    .contains("needs the document in `claude_result` or `codex_result`"),
                "{e}"
            );
        }
    }
    assert!(r.files.0.borrow().is_empty());
    assert_eq!(r.s.record(Stage::Po).iteration, 0);
}

#[test]
fn a_stage_other_than_the_current_one_is_refused() {
    let mut r = Run::new("Build it");
    let e = r
        .try_do(Command::Submit {
            stage: Some(Stage::Qa),
            claude_result: Some(passing(Stage::Po)),
            codex_result: None,
            document_file: None,
        })
        .unwrap_err();
    assert_eq!(e.code(), "stage_mismatch");
    assert!(e.to_string().contains("`qa`") && e.to_string().contains("`po`"));
    r.act(Command::Submit {
        stage: Some(Stage::Po),
        claude_result: Some(passing(Stage::Po)),
        codex_result: None,
        document_file: None,
    });
}

#[test]
fn estimated_scores_never_pass_the_gate() {
    let mut r = Run::new("Build it");
    r.submit("## Executive Summary\n## Business Goals\n## User Stories\n## Functional Requirements\n## Technical Requirements\n## Success Metrics\n99% uptime\nAcceptance criteria: all");
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.score, Some(85));
    assert_eq!(
        rec.score_source,
        Some(crate::workflow::session::ScoreSource::Estimated)
    );
    assert_eq!(r.s.current_state, State::Refining);
}

#[test]
fn the_sprint_plan_is_approved_with_a_scope_or_sent_back() {
    let mut r = Run::at(State::AwaitingApproval);
    let rec = r.s.record(Stage::Sm);
    assert_eq!(rec.sprints.len(), 2);
    assert_eq!(rec.sprints[1].title, "UI");
    r.act(Command::Reject {
        action: Action::Approve,
        feedback: Some("split sprint 2".into()),
    });
    assert_eq!(r.state(), (Stage::Sm, State::Refining));
    assert_eq!(r.s.record(Stage::Sm).approved, Some(false));
    r.submit("# Plan\n## Sprint 1: Core\n## Sprint 2: UI list\n## Sprint 3: UI detail");
    let path = r.s.artifact_path(Stage::Sm);
    assert_eq!(r.s.artifacts.iter().filter(|a| **a == path).count(), 1);
    assert!(r.files.read(&path).unwrap().unwrap().contains("Sprint 3"));
    r.act(Command::Approve {
        scope: Some("sprint 1".into()),
        note: None,
    });
    let rec = r.s.record(Stage::Sm);
    assert_eq!(
        (rec.approved, rec.scope.as_deref()),
        (Some(true), Some("sprint 1"))
    );
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
}

#[test]
fn approval_scope_defaults_to_all() {
    let mut r = Run::at(State::AwaitingApproval);
    r.act(Command::Approve {
        scope: Some(" ".into()),
        note: None,
    });
    assert_eq!(r.s.record(Stage::Sm).scope.as_deref(), Some("all"));
}

#[test]
fn the_unscored_stages_take_the_other_engine_when_theirs_is_absent() {
    // With codex: development is codex's; claude's report stands in, and it is said.
    let mut r = Run::new("Build it with codex");
    r.advance_to(Stage::Dev, false);
    assert_eq!(r.s.engines_for(Stage::Dev), [Engine::Codex]);
    let out = r.act(submit(Some("# Dev by claude"), None));
    assert_eq!(r.s.record(Stage::Dev).chosen_engine, Some(Engine::Claude));
    assert!(
        out.facts.notices[0].contains("`claude_result` was taken in place of `codex_result`"),
        "{:?}",
        out.facts.notices
    );
    let out = r.act(submit(
        Some("# Review A\nReview Status: Fail"),
        Some("# Review B\nReview Status: Pass"),
    ));
    let rec = r.s.record(Stage::Review);
    assert_eq!(rec.chosen_engine, Some(Engine::Codex));
    assert_eq!(rec.review_status.as_deref(), Some("Pass"));
    assert!(out.facts.notices[0].contains("claude_result"));
}

#[test]
fn a_session_of_claude_alone_is_never_asked_for_codex() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    for stage in Stage::ALL {
        assert_eq!(r.s.engines_for(stage), [Engine::Claude], "{stage}");
    }
    let out = r.act(submit(Some("# Dev by claude"), None));
    assert_eq!(r.s.record(Stage::Dev).chosen_engine, Some(Engine::Claude));
    assert!(out.facts.notices.is_empty(), "{:?}", out.facts.notices);
    // A codex result is still taken, and the host is told what it is for.
    let out = r.act(submit(None, Some("# Review\nReview Status: Pass")));
    assert_eq!(r.s.record(Stage::Review).chosen_engine, Some(Engine::Codex));
    assert!(
        out.facts.notices[0].contains("runs claude alone"),
        "{:?}",
        out.facts.notices
    );
}

#[test]
fn one_result_where_two_engines_write_gets_a_notice() {
    let prd = passing(Stage::Po);
    let prd = prd.as_str();
    let mut r = Run::new("Build it with codex");
    let out = r.act(submit(Some(prd), None));
    let notice = out
        .facts
        .notices
        .iter()
        .find(|n| n.starts_with("Only `claude_result` was given"))
        .unwrap_or_else(|| panic!("{:?}", out.facts.notices));
    assert!(notice.contains("no `codex_result` was scored"), "{notice}");
    assert!(notice.contains("engines: [\"claude\"]"), "{notice}");
    // The host's model may be the one that failed: codex alone is scored, and said.
    let mut r = Run::new("Build it with codex");
    let out = r.act(submit(None, Some(prd)));
    assert!(out
        .facts
        .notices
        .iter()
        .any(|n| n.contains("no `claude_result`")));
    assert_eq!(r.s.current().chosen_engine, Some(Engine::Codex));
    // Two results in a session of two engines: nothing to say.
    let mut r = Run::new("Build it with codex");
    let out = r.act(submit(Some(prd), Some(LOW_PRD)));
    // (The PRD of these tests gives its requirements no ids: only that is said.)
    assert!(
        out.facts
            .notices
            .iter()
            .all(|n| n.starts_with("Requirement ids:")),
        "{:?}",
        out.facts.notices
    );
}

#[test]
fn confirming_records_the_digest_of_the_document_on_disk() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let path = r.s.artifact_path(Stage::Po);
    r.files
        .0
        .borrow_mut()
        .insert(path.clone(), "# PRD edited by the human".into());
    let out = r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    let a = r.s.record(Stage::Po).artifact.clone().unwrap();
    assert_eq!(a.sha256, sha256_hex("# PRD edited by the human"));
    assert!(out.facts.notices.iter().any(|n| n.contains("edited")));
    assert!(r.s.history.last().unwrap().note.is_some());
}

#[test]
fn a_deleted_artifact_is_rebuilt_from_the_submission_at_confirmation() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let path = r.s.artifact_path(Stage::Po);
    r.files.0.borrow_mut().remove(&path);
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(
        r.files.read(&path).unwrap().unwrap(),
        complete_doc(Stage::Po)
    );
}

#[test]
fn an_emptied_or_unreadable_artifact_is_refused_at_confirmation_and_left_alone() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let path = r.s.artifact_path(Stage::Po);
    let mut unreadable = r.files.documents(&r.s);
    let not_utf8 = "is not UTF-8 text (the first byte that is not is at offset 3)";
    unreadable.insert(path.clone(), Err(not_utf8.into()));
    let confirm = || Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    };
    let e = apply(
        &r.s,
        confirm(),
        &Decision::by_host(None),
        &unreadable,
        r.clock,
    )
    .unwrap_err();
    assert_eq!(e.code(), "document_unreadable");
    assert!(e.to_string().contains("is not UTF-8 text"), "{e}");
    assert!(e.to_string().contains("nothing was changed"), "{e}");

    r.files
        .0
        .borrow_mut()
        .insert(path.clone(), " \n\t\n".into());
    let before = r.s.clone();
    let e = r.try_do(confirm()).unwrap_err();
    assert_eq!(e.code(), "document_unreadable");
    assert_eq!(r.s, before);
    assert_eq!(r.files.read(&path).unwrap().unwrap(), " \n\t\n");
}

#[test]
fn after_completion_every_action_is_refused() {
    let r = Run::at(State::Completed);
    for c in every_action() {
        let e = apply(&r.s, c, &r.decision, &r.files.documents(&r.s), r.clock).unwrap_err();
        assert_eq!(e.code(), "invalid_state");
        assert!(e.to_string().contains("completed"));
    }
}

#[test]
fn each_accepted_action_adds_one_history_entry() {
    let r = Run::at(State::Refining);
    let n = r.s.history.len();
    assert_eq!(n, 3, "start, submit, answer");
    let actions: Vec<_> = r.s.history.iter().map(|h| h.action).collect();
    assert_eq!(actions, [Action::Start, Action::Submit, Action::Answer]);
}

#[test]
fn the_round_cap_counts_only_rounds_below_the_gate() {
    // Four passing drafts, each sent back by the human: none stayed below the gate.
    let mut r = Run::new("Build it");
    for i in 1..=4 {
        r.submit(&passing(Stage::Po));
        assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation), "{i}");
        r.act(Command::Reject {
            action: Action::Reject,
            feedback: Some("one more thing".into()),
        });
    }
    // The fifth submission, below the gate, is a first below-gate round: revise.
    r.submit(LOW_PRD);
    assert_eq!(r.state(), (Stage::Po, State::Refining));
    let rec = r.s.record(Stage::Po);
    assert_eq!((rec.iteration, rec.below_gate), (5, 1));
    for _ in 0..3 {
        r.submit(LOW_PRD);
    }
    assert_eq!(r.state(), (Stage::Po, State::Refining));
    let out = r.submit(LOW_PRD);
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
    assert_eq!(r.s.record(Stage::Po).below_gate, 5);
    assert!(
        out.facts
            .notices
            .iter()
            .any(|n| n.starts_with("5 submissions at this stage have stayed below the gate")),
        "{:?}",
        out.facts.notices
    );
}

#[test]
fn follow_up_questions_beside_a_passing_score_go_to_the_human_first() {
    let mut r = Run::at(State::Refining);
    let passing_with_question =
        r##"{"prd_updated": "# PRD v2", "quality_score": 95, "questions": ["Is SSO required?"]}"##;
    r.submit(passing_with_question);
    assert_eq!(r.state(), (Stage::Po, State::Clarifying));
    let open = r.s.current().open_questions();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].question, "Is SSO required?");
    // Answered, the same passing document goes to the gate.
    let id = open[0].id.clone();
    r.act(answer(&[(&id, "Yes")]));
    r.submit(&passing(Stage::Po));
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
}

#[test]
fn past_the_round_cap_new_questions_are_carried_into_the_decision() {
    let mut r = Run::at(State::Refining);
    for _ in 0..3 {
        r.submit(LOW_PRD);
    }
    assert_eq!(r.s.current().iteration, 4);
    r.submit(
        r##"{"prd_updated": "# PRD low", "quality_score": 70, "questions": ["Offline mode?"]}"##,
    );
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
    let open = r.s.current().open_questions();
    assert_eq!(open.len(), 1, "kept, not dropped");
    assert_eq!(open[0].question, "Offline mode?");
}

#[test]
fn with_two_candidates_only_the_chosen_ones_questions_and_gaps_are_kept() {
    let mut r = Run::new("Build it with codex");
    let claude = r##"{"prd_draft": "# by claude", "quality_score": 60, "gaps": ["claude gap"], "questions": ["Claude asks?"]}"##;
    let codex = r##"{"prd_draft": "# by codex", "quality_score": 80, "gaps": ["codex gap"], "questions": ["Codex asks?"]}"##;
    r.act(submit(Some(claude), Some(codex)));
    let rec = r.s.current();
    assert_eq!(rec.chosen_engine, Some(Engine::Codex));
    assert_eq!(rec.gaps, ["codex gap"]);
    let asked: Vec<&str> = rec.questions.iter().map(|q| q.question.as_str()).collect();
    assert_eq!(asked, ["Codex asks?"]);
    assert!(rec.codex_result_ref.is_some() && rec.claude_result_ref.is_some());
    // The next round only claude submits: codex's earlier result is no longer referenced.
    r.act(answer(&[("q1", "Yes")]));
    r.act(submit(
        Some(r##"{"prd_updated": "# claude v2", "quality_score": 70}"##),
        None,
    ));
    let rec = r.s.current();
    assert_eq!(
        rec.codex_result_ref, None,
        "a stale reference to the earlier round"
    );
    assert_eq!(rec.chosen_engine, Some(Engine::Claude));
    assert!(rec.gaps.is_empty());
}

#[test]
fn a_document_under_an_unexpected_key_is_refused_naming_the_keys_accepted_and_seen() {
    let mut r = Run::new("Build it");
    let e = r
        .try_do(submit(
            Some(r##"{"prd": "# PRD\n\nBody.", "quality_score": 92}"##),
            None,
        ))
        .unwrap_err();
    assert_eq!(e.code(), "missing_field");
    let msg = e.to_string();
    assert!(
        msg.contains("`prd_draft`, `prd_updated`, `draft`, `result`, `content`")
            && msg.contains("keys were `prd`, `quality_score`"),
        "{msg}"
    );
    // At the architect stage, its own keys.
    r.advance_to(Stage::Architect, false);
    let e = r
        .try_do(submit(Some(r##"{"architecture": "# A"}"##), None))
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("`architecture_draft`, `architecture_updated`"),
        "{e}"
    );
}

#[test]
fn a_codex_result_in_a_single_engine_session_is_scored_with_a_notice() {
    let mut r = Run::new("Build it");
    let out = r.act(submit(None, Some(&passing(Stage::Po))));
    assert!(
        out.facts
            .notices
            .iter()
            .any(|n| n.contains("runs claude alone")),
        "{:?}",
        out.facts.notices
    );
    let mut dual = Run::new("Build it with codex");
    let out = dual.act(submit(Some(&passing(Stage::Po)), Some(&passing(Stage::Po))));
    // (The PRD of these tests gives its requirements no ids: only that is said.)
    assert!(
        out.facts
            .notices
            .iter()
            .all(|n| n.starts_with("Requirement ids:")),
        "{:?}",
        out.facts.notices
    );
}

#[test]
fn a_rejection_without_feedback_is_refused_and_tells_the_host_to_ask() {
    for (state, action) in [
        (State::AwaitingConfirmation, Action::Reject),
        (State::AwaitingConfirmation, Action::Confirm),
        (State::AwaitingApproval, Action::Approve),
    ] {
        for feedback in [None, Some("   ".to_string())] {
            let mut r = Run::at(state);
            let before = r.s.clone();
            let e = r
                .try_do(Command::Reject {
                    action,
                    feedback: feedback.clone(),
                })
                .unwrap_err();
            assert_eq!(e.code(), "missing_field");
            // The message says what is missing; what the host does, its next step.
            assert!(e.to_string().contains("in the human's words"), "{e}");
            assert!(
                e.next_step()
                    .is_some_and(|n| n.contains("Ask the human what should change")),
                "{e}"
            );
            assert_eq!(r.s, before, "{state} {action} {feedback:?}");
        }
    }
}

#[test]
fn every_decision_is_recorded_with_who_how_and_the_digest_of_its_document() {
    let mut r = Run::at(State::Clarifying);
    let draft = r.s.current().draft_ref.clone().unwrap().file_path;
    let draft_sha = sha256_hex(&r.files.read(&draft).unwrap().unwrap());
    r.act(answer(&[("q1", "Web"), ("q2", "Admins")]));
    r.submit(&passing(Stage::Po));
    let path = r.s.artifact_path(Stage::Po);
    let sha = sha256_hex(&r.files.read(&path).unwrap().unwrap());
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    type Entry = (Action, Option<DecidedBy>, Option<Via>, Option<String>);
    let entries: Vec<Entry> =
        r.s.history
            .iter()
            .map(|h| (h.action, h.decided_by, h.via, h.digest.clone()))
            .collect();
    let host = (Some(DecidedBy::Host), Some(Via::Tool));
    assert_eq!(
        entries,
        [
            (Action::Start, None, None, None),
            (Action::Submit, None, None, None),
            (Action::Answer, host.0, host.1, Some(draft_sha)),
            (Action::Submit, None, None, None),
            (Action::Confirm, host.0, host.1, Some(sha)),
        ]
    );
}

#[test]
fn a_decision_about_another_version_of_the_document_is_refused_as_stale() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let path = r.s.artifact_path(Stage::Po);
    let shown = sha256_hex(&r.files.read(&path).unwrap().unwrap());
    // The human saw this version; the file changed before the decision arrived.
    r.decision = Decision::by_host(Some(shown[..12].to_string()));
    r.files
        .0
        .borrow_mut()
        .insert(path.clone(), "# PRD, edited after it was shown".into());
    let before = r.s.clone();
    let e = r
        .try_do(Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        })
        .unwrap_err();
    assert_eq!(e.code(), "stale_decision");
    assert!(e.to_string().contains(&path), "{e}");
    assert_eq!(r.s, before);
    // With the digest of what is on disk now, it goes through, and that digest is kept.
    let now = sha256_hex("# PRD, edited after it was shown");
    r.decision = Decision::by_host(Some(now[..16].to_uppercase()));
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(
        r.s.history.last().unwrap().digest.as_deref(),
        Some(now.as_str())
    );
}

/// A PRD of four lines: a score alone does not reach the gate.
const SHORT_PRD: &str =
    "# PRD: Todo app\n## Executive Summary\nA todo app for teams.\nQuality Score: 95/100\n";

#[test]
fn a_reported_score_passes_the_gate_only_with_every_required_section() {
    let mut r = Run::new("Build it");
    let out = r.submit(SHORT_PRD);
    assert_eq!(r.state(), (Stage::Po, State::Refining));
    let rec = r.s.record(Stage::Po);
    assert_eq!(
        rec.score,
        Some(95),
        "the author's score is kept as reported"
    );
    assert_eq!(rec.gate_passed, Some(false));
    assert_eq!(
        rec.missing_sections,
        [
            "Business Goals",
            "User Stories",
            "Functional Requirements",
            "Technical Requirements",
            "Success Metrics"
        ]
    );
    assert!(rec.empty_sections.is_empty());
    assert!(out
        .writes
        .iter()
        .all(|w| !w.path.starts_with(".claude/specs")));
    let guidance = out.facts.guidance.join("\n");
    assert!(
        guidance.contains("Add a \"User Stories\" section."),
        "{guidance}"
    );
    // A heading with nothing under it is named as empty.
    let hollow = SHORT_PRD.replace(
        "## Executive Summary\nA todo app for teams.\n",
        "## Executive Summary\n\n",
    );
    let hollow = format!(
        "{hollow}\n{}",
        complete_doc(Stage::Po).replacen("## Executive Summary", "## Intro", 1)
    );
    let out = r.submit(&hollow);
    assert_eq!(
        r.s.current().empty_sections,
        ["Executive Summary"],
        "{hollow}"
    );
    assert!(r.s.current().missing_sections.is_empty());
    assert!(out.facts.guidance[0]
        .contains("\"Executive Summary\" section: its heading has nothing under it"));
    // With every section filled, the same score passes.
    r.submit(&format!(
        "{}\nQuality Score: 95/100",
        complete_doc(Stage::Po)
    ));
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
    assert!(r.s.current().missing_sections.is_empty());
}

#[test]
fn a_complete_candidate_at_the_gate_beats_a_higher_score_lacking_sections() {
    let mut r = Run::new("Build it with codex");
    r.act(submit(Some(SHORT_PRD), Some(&passing(Stage::Po))));
    assert_eq!(r.s.current().chosen_engine, Some(Engine::Codex));
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
}

#[test]
fn past_the_round_cap_a_score_lacking_sections_goes_to_the_human_as_below_the_gate() {
    let mut r = Run::new("Build it");
    for _ in 0..5 {
        r.submit(SHORT_PRD);
    }
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
    let rec = r.s.current();
    assert_eq!(rec.gate_passed, Some(false));
    assert!(rec.draft_ref.is_some() && rec.artifact.is_none());
}

#[test]
fn a_failing_review_stops_at_the_human_who_may_accept_the_risk() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Review, false);
    let out = r.act(submit(None, Some(FAILING_REVIEW)));
    assert_eq!(r.state(), (Stage::Review, State::AwaitingConfirmation));
    let path = r.s.artifact_path(Stage::Review);
    assert_eq!(out.facts.review_path.as_deref(), Some(path.as_str()));
    assert_eq!(r.files.read(&path).unwrap().unwrap(), FAILING_REVIEW);
    let rec = r.s.record(Stage::Review);
    assert_eq!(rec.review_status.as_deref(), Some("Fail"));
    assert_eq!(rec.gate_passed, Some(false));
    assert!(!r.s.artifacts.contains(&path), "listed once decided");
    assert_eq!(out.effects.completed, None);

    let out = r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(r.state(), (Stage::Qa, State::Generating));
    assert_eq!(out.effects.completed, Some(Stage::Review));
    let rec = r.s.record(Stage::Review);
    assert!(rec.accepted_risk);
    assert_eq!(rec.status, StageStatus::Completed);
    assert!(r.s.artifacts.contains(&path));
    let last = r.s.history.last().unwrap();
    assert_eq!(
        (last.action, last.decided_by, last.via),
        (Action::Confirm, Some(DecidedBy::Host), Some(Via::Tool))
    );
    assert_eq!(
        last.digest.as_deref(),
        Some(sha256_hex(FAILING_REVIEW).as_str())
    );
    let note = last.note.clone().unwrap_or_default();
    assert!(
        note.contains("Risk accepted") && note.contains("Review Status: Fail"),
        "{note}"
    );
    // A passing QA report completes the workflow; the review's risk stays recorded.
    r.act(submit(
        None,
        Some("# QA\n\nIntent: met\nQuality Score: 93/100"),
    ));
    assert_eq!(r.state(), (Stage::Qa, State::Completed));
    assert!(r.s.record(Stage::Review).accepted_risk);
}

#[test]
fn a_failing_review_sent_back_returns_the_work_to_dev_with_the_findings() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Review, false);
    r.act(submit(None, Some(FAILING_REVIEW)));
    let report = r.s.artifact_path(Stage::Review);
    // Without feedback there is nothing to revise by.
    for feedback in [None, Some(" ".to_string())] {
        let e = r
            .try_do(Command::Reject {
                action: Action::Reject,
                feedback,
            })
            .unwrap_err();
        assert_eq!(e.code(), "missing_field");
    }
    let dev_reports = r.s.record(Stage::Dev).iteration;
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Validate the input first.".into()),
    });
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
    let last = r.s.history.last().unwrap();
    assert_eq!((last.stage, last.to), (Stage::Review, State::Generating));
    assert_eq!(
        last.digest.as_deref(),
        Some(sha256_hex(FAILING_REVIEW).as_str())
    );
    let dev = r.s.record(Stage::Dev);
    assert_eq!(dev.status, StageStatus::InProgress);
    // The server's pointer to the report, then the decider's words under their label.
    let [pointer, words] = &dev.feedback[..] else {
        panic!("{:?}", dev.feedback);
    };
    assert_eq!(pointer.by, crate::workflow::authorship::Speaker::Server);
    assert!(!pointer.text.contains("Validate the input"), "{pointer:?}");
    assert_eq!(words.by, crate::workflow::authorship::Speaker::Host);
    assert_eq!(words.text, "Validate the input first.");
    let feedback = &format!(
        "{} Added by {}: {}",
        pointer.text,
        words.label(),
        words.text
    );
    // The report of this round keeps a file of its own, which the feedback names: the
    // next round's review replaces the stage document, not this.
    let round_one = report.replace(".md", ".round-1.md");
    assert_eq!(
        r.s.record(Stage::Review).round_reports[0].file_path,
        round_one
    );
    // The review runs again: its prompt is told why.
    assert!(r.s.record(Stage::Review).notes[0].contains(feedback.as_str()));
    assert!(
        feedback.contains(&round_one)
            && feedback.contains("Review Status: Fail")
            && feedback.contains("Validate the input first."),
        "{feedback}"
    );
    assert_eq!(r.s.record(Stage::Review).status, StageStatus::Pending);
    assert!(!r.s.artifacts.contains(&report));
    assert!(r.s.artifacts.contains(&r.s.artifact_path(Stage::Dev)));

    // The new work is reviewed again; this time it passes.
    r.act(submit(None, Some("# Report\n\nInput validated.")));
    assert_eq!(r.s.record(Stage::Dev).iteration, dev_reports + 1);
    assert_eq!(r.state(), (Stage::Review, State::Generating));
    r.act(submit(None, Some("# Review\n\nReview Status: Pass")));
    assert_eq!(r.state(), (Stage::Qa, State::Generating));
    let rec = r.s.record(Stage::Review);
    assert_eq!(
        (rec.review_status.as_deref(), rec.accepted_risk),
        (Some("Pass"), false)
    );
    assert_eq!(r.s.artifacts.iter().filter(|a| **a == report).count(), 1);
}

#[test]
fn a_qa_score_below_the_gate_stops_at_the_human_and_can_send_everything_after_dev_back() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Qa, false);
    r.act(submit(None, Some(FAILING_QA)));
    assert_eq!(r.state(), (Stage::Qa, State::AwaitingConfirmation));
    assert_eq!(r.s.record(Stage::Qa).score, Some(62));
    r.act(Command::Reject {
        action: Action::Confirm,
        feedback: Some("Three cases fail: fix them.".into()),
    });
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
    for later in [Stage::Review, Stage::Qa] {
        assert_eq!(r.s.record(later).status, StageStatus::Pending, "{later}");
        assert!(!r.s.artifacts.contains(&r.s.artifact_path(later)));
    }
    let feedback: Vec<&str> =
        r.s.record(Stage::Dev)
            .feedback
            .iter()
            .map(|f| f.text.as_str())
            .collect();
    let feedback = feedback.join("\n");
    let round_one = r.s.artifact_path(Stage::Qa).replace(".md", ".round-1.md");
    assert!(
        feedback.contains("Quality Score: 62/100, below the gate of 90")
            && feedback.contains(&round_one),
        "{feedback}"
    );
    assert_eq!(r.s.record(Stage::Qa).round_reports[0].file_path, round_one);
    // Review and QA run again, and each is told why.
    for again in [Stage::Review, Stage::Qa] {
        let notes = r.s.record(again).notes.join("\n");
        assert!(
            notes.contains(&round_one) && notes.contains("Three cases fail"),
            "{notes}"
        );
    }
    // Round two: dev, review, then QA below the gate again, and the human accepts it.
    r.act(submit(None, Some("# Report\nFixed.")));
    r.act(submit(
        None,
        Some("# Review\nReview Status: Pass with Risk"),
    ));
    r.act(submit(None, Some("# QA\nQuality Score: 85/100")));
    assert_eq!(r.state(), (Stage::Qa, State::AwaitingConfirmation));
    r.act(Command::Confirm {
        action: Action::ConfirmSave,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(r.state(), (Stage::Qa, State::Completed));
    assert!(r.s.record(Stage::Qa).accepted_risk);
    let want: Vec<String> =
        r.s.track
            .stages()
            .iter()
            .map(|s| r.s.artifact_path(*s))
            .collect();
    let mut listed = r.s.artifacts.clone();
    listed.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(listed, want_sorted, "every document listed once");
}

#[test]
fn reports_that_pass_go_on_without_the_human() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Review, false);
    r.act(submit(
        None,
        Some("# Review\nReview Status: Pass with Risk"),
    ));
    r.act(submit(
        None,
        Some("# QA\nIntent: met\nQuality Score: 90/100"),
    ));
    assert_eq!(r.state(), (Stage::Qa, State::Completed));
    assert!(!r.s.record(Stage::Review).accepted_risk);
}

/// A report that states no verdict stops at the human as a failing one does; a score that
/// is there but unreadable is named as such.
#[test]
fn reports_that_state_no_verdict_stop_at_the_human() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Review, false);
    r.act(submit(None, Some("# Review\nNo status line.")));
    assert_eq!(r.state(), (Stage::Review, State::AwaitingConfirmation));
    let rec = r.s.record(Stage::Review);
    assert_eq!(rec.gate_passed, Some(false));
    assert_eq!(
        rules::failed_verdict(Stage::Review, rec).as_deref(),
        Some("Review Status: not stated")
    );
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert!(r.s.record(Stage::Review).accepted_risk);
    r.act(submit(None, Some("# QA\nNo score line.")));
    assert_eq!(r.state(), (Stage::Qa, State::AwaitingConfirmation));
    assert_eq!(
        rules::failed_verdict(Stage::Qa, r.s.current()).as_deref(),
        Some("Quality Score: not stated; Intent: not stated")
    );
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("State the score.".into()),
    });
    r.advance_to(Stage::Qa, false);
    let qa = r##"{"qa_report": "# QA\nAll good.\nIntent: met", "quality_score": "high"}"##;
    r.act(submit(None, Some(qa)));
    assert_eq!(r.state(), (Stage::Qa, State::AwaitingConfirmation));
    let rec = r.s.current();
    assert_eq!(rec.score_unreadable.as_deref(), Some("high"));
    assert_eq!(
        rules::failed_verdict(Stage::Qa, rec).as_deref(),
        Some("Quality Score: \"high\" is not a number from 0 to 100")
    );
}

/// A document submitted again as the human sent it back is flagged.
#[test]
fn a_document_submitted_unchanged_after_a_rejection_is_flagged() {
    let mut r = Run::at(State::AwaitingConfirmation);
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Add offline mode.".into()),
    });
    let out = r.submit(&passing(Stage::Po));
    assert!(
        out.facts.notices.iter().any(|n| n.starts_with(
            "Unchanged: the Product Owner's document is the same one that was sent back"
        )),
        "{:?}",
        out.facts.notices
    );
    let p = pending(&r.s, Action::Confirm, &r.files.documents(&r.s)).unwrap();
    assert!(
        p.notices.iter().any(|n| n.starts_with("Unchanged:")),
        "{:?}",
        p.notices
    );
    // A changed document is not flagged.
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Still no offline mode.".into()),
    });
    let changed = passing(Stage::Po).replace("v2", "v3");
    let out = r.submit(&changed);
    assert!(
        !out.facts
            .notices
            .iter()
            .any(|n| n.starts_with("Unchanged:")),
        "{:?}",
        out.facts.notices
    );
}

/// What the server would have observed running checks named `name`, passing or not.
fn checks_run(checks: &[(&str, bool)]) -> Evidence {
    use crate::workflow::{CheckOutcome, CheckResult, CheckRun};
    let results = checks
        .iter()
        .map(|(name, passed)| CheckResult {
            name: name.to_string(),
            command: format!("run {name}"),
            outcome: if *passed {
                CheckOutcome::Passed
            } else {
                CheckOutcome::Failed
            },
            exit_code: Some(if *passed { 0 } else { 1 }),
            signal: None,
            duration_ms: 1200,
            output_bytes: 3,
            output_sha256: "a".repeat(64),
            output: None,
            tail: "out".into(),
        })
        .collect();
    Evidence::Ran {
        run: CheckRun {
            at: "2026-11-21T12:00:00.000Z".into(),
            config_sha256: "c".repeat(64),
            git: None,
            checks: results,
        },
        outputs: checks
            .iter()
            .map(|(n, _)| format!("{n} said out\n"))
            .collect(),
    }
}

#[test]
fn failing_checks_stop_development_until_the_human_accepts_them_or_sends_the_work_back() {
    let report = "# Implementation Report\n\n## Summary\nBuilt.";
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    r.evidence = checks_run(&[("lint", true), ("test", false)]);
    let out = r.submit(report);
    assert_eq!(r.state(), (Stage::Dev, State::AwaitingConfirmation));
    let rec = r.s.record(Stage::Dev);
    assert_eq!(rec.gate_passed, Some(false));
    let run = rec.checks.as_ref().expect("the run is recorded");
    // Each check's kept output is a file of the session's, named by the check.
    for c in &run.checks {
        let path = &c.output.as_ref().expect("the output is kept").file_path;
        assert!(path.contains(&format!("dev_check-{}_", c.name)), "{path}");
        assert_eq!(
            r.files.read(path).unwrap().unwrap(),
            format!("{} said out\n", c.name)
        );
    }
    assert!(
        out.facts
            .notices
            .iter()
            .any(|n| n.contains("check `test` failed (exit 1)")),
        "{:?}",
        out.facts.notices
    );
    assert_eq!(
        rules::failed_verdict(Stage::Dev, r.s.record(Stage::Dev)).as_deref(),
        Some("check `test` failed (exit 1)")
    );

    // Sent back: development again, with the human's words.
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Make the tests pass.".into()),
    });
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
    assert_eq!(
        r.s.record(Stage::Dev).feedback[0].text,
        "Make the tests pass."
    );

    // Failing again, and accepted by the human: the risk is recorded, review begins.
    r.evidence = checks_run(&[("test", false)]);
    r.submit(report);
    r.decision = Decision {
        decided_by: DecidedBy::Human,
        via: Via::Cli,
        provenance: None,
        seen_digest: None,
        decider: None,
        cannot_ask: None,
    };
    let out = r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(r.state(), (Stage::Review, State::Generating));
    assert!(r.s.record(Stage::Dev).accepted_risk);
    assert_eq!(out.effects.completed, Some(Stage::Dev));

    // Passing checks go on at once; none run (no config) go on as before.
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    r.evidence = checks_run(&[("test", true)]);
    r.submit(report);
    assert_eq!(r.state(), (Stage::Review, State::Generating));
    assert_eq!(r.s.record(Stage::Dev).gate_passed, Some(true));
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    r.submit(report);
    assert_eq!(r.state(), (Stage::Review, State::Generating));
    assert!(r.s.record(Stage::Dev).checks.is_none());
}

#[test]
fn qa_does_not_complete_on_a_passing_score_while_a_check_fails() {
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Qa, false);
    r.evidence = checks_run(&[("test", false)]);
    r.submit("# QA\nIntent: met\nQuality Score: 95/100");
    assert_eq!(r.state(), (Stage::Qa, State::AwaitingConfirmation));
    let rec = r.s.record(Stage::Qa);
    assert_eq!(rec.gate_passed, Some(false));
    assert_eq!(
        rules::failed_verdict(Stage::Qa, rec).as_deref(),
        Some("check `test` failed (exit 1)")
    );
    // A failing score and failing checks are both named.
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Qa, false);
    r.evidence = checks_run(&[("test", false)]);
    r.submit(FAILING_QA);
    assert_eq!(
        rules::failed_verdict(Stage::Qa, r.s.record(Stage::Qa)).as_deref(),
        Some("Quality Score: 62/100, below the gate of 90; check `test` failed (exit 1)")
    );
    // Sending it back returns the work to development.
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Fix it.".into()),
    });
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
}

/// A quick task promoted at development keeps its spec and its development record, and
/// starts the full track at `po` with a note naming what was written.
#[test]
fn promoting_a_quick_task_keeps_what_was_written_and_starts_the_full_track() {
    use crate::workflow::Track;
    let mut r = Run::new("Add a flag");
    r.s.begin_track(Track::Quick);
    assert_eq!(r.state(), (Stage::Spec, State::Generating));
    r.submit(&passing(Stage::Spec));
    r.act(Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    });
    assert_eq!(r.state(), (Stage::Dev, State::Generating));
    let spec = r.s.record(Stage::Spec).clone();
    r.decision = Decision {
        decided_by: DecidedBy::Human,
        via: Via::Cli,
        ..Decision::by_host(None)
    };
    r.act(Command::Promote {
        note: Some("it needs a data model".into()),
    });
    assert_eq!(r.s.track, Track::Full);
    assert_eq!(r.state(), (Stage::Po, State::Generating));
    assert_eq!(r.s.record(Stage::Spec), &spec, "the spec is kept as it was");
    assert_eq!(r.s.record(Stage::Dev).status, StageStatus::Pending);
    assert_eq!(r.s.record(Stage::Po).status, StageStatus::InProgress);
    let note = &r.s.record(Stage::Po).notes[0];
    assert!(
        note.contains(".claude/specs/build-it/01-technical-spec.md"),
        "{note}"
    );
    assert!(note.contains("it needs a data model"), "{note}");
    let last = r.s.history.last().unwrap();
    assert_eq!(last.action, Action::Promote);
    assert_eq!(last.decided_by, Some(DecidedBy::Human));
    assert_eq!(last.feedback.as_deref(), Some("it needs a data model"));
    // The full track does not promote.
    let e = r.try_do(Command::Promote { note: None }).unwrap_err();
    assert_eq!(e.code(), "invalid_state");
}

/// A parent whose sprints run as stories refuses its own submission while one is open,
/// naming it; once every in-scope story completed, its submission at `dev` is the final QA
/// of the whole, and completes it.
#[test]
fn a_parent_runs_its_final_qa_only_once_every_story_completed() {
    use crate::workflow::story::StoryState;
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    assert_eq!(r.s.record(Stage::Sm).scope_sprints, Some(vec![1, 2]));
    let entry = |sprint: u32, stage: Stage, state: State| StoryState {
        sprint,
        session_id: format!("story-{sprint}"),
        task_name: format!("build-it-sprint-{sprint}"),
        owner: format!("Dev {sprint}"),
        branch: Some(format!("sprint-{sprint}")),
        worktree: format!("/wt{sprint}"),
        stage,
        state,
        updated_at: "2026-11-21T12:00:00.000Z".into(),
        review_status: None,
        gone: false,
    };
    r.s.stories = vec![
        entry(1, Stage::Qa, State::Completed),
        entry(2, Stage::Review, State::Generating),
    ];
    let qa = submit(Some(PASSING_REPORT), None);
    let e = r.try_do(qa.clone()).unwrap_err();
    assert_eq!(e.code(), "invalid_state");
    let msg = e.to_string();
    assert!(
        msg.contains("sprint 2 (held by Dev 2 on branch `sprint-2` in /wt2"),
        "{msg}"
    );
    // Only sprint 1 ran as a story: sprint 2 has none, so no final QA is due either, and
    // the parent's own development report is refused, naming the sprint without a story.
    r.s.stories = vec![entry(1, Stage::Qa, State::Completed)];
    assert!(!crate::workflow::story::final_qa_due(&r.s));
    let e = r.try_do(qa.clone()).unwrap_err();
    assert_eq!(e.code(), "invalid_state");
    assert!(e.to_string().contains("sprint 2 (no story started)"), "{e}");
    let e = r
        .try_do(Command::Submit {
            stage: Some(Stage::Dev),
            claude_result: Some(PASSING_REPORT.into()),
            codex_result: None,
            document_file: None,
        })
        .unwrap_err();
    assert_eq!(e.code(), "invalid_state");
    r.s.stories.push(entry(2, Stage::Qa, State::Completed));
    assert!(crate::workflow::story::final_qa_due(&r.s));
    assert_eq!(crate::workflow::story::prompt_stage(&r.s), Stage::Qa);
    // A submission naming another stage than QA is refused as a stage mismatch.
    let e = r
        .try_do(Command::Submit {
            stage: Some(Stage::Review),
            claude_result: Some(PASSING_REPORT.into()),
            codex_result: None,
            document_file: None,
        })
        .unwrap_err();
    assert_eq!(e.code(), "stage_mismatch");
    r.act(Command::Submit {
        stage: Some(Stage::Qa),
        claude_result: Some(PASSING_REPORT.into()),
        codex_result: None,
        document_file: None,
    });
    assert_eq!(r.state(), (Stage::Qa, State::Completed));
    for st in [Stage::Dev, Stage::Review, Stage::Qa] {
        assert_eq!(r.s.record(st).status, StageStatus::Completed, "{st}");
    }
    assert!(r.s.record(Stage::Dev).notes[0].contains("sprint 1 by story `build-it-sprint-1`"));
    assert!(
        r.s.record(Stage::Dev).artifact.is_none(),
        "the parent built nothing itself"
    );
}

/// A parent none of whose stories runs here, one sprint of it claimed on the team's remote
/// by another clone's story (a value the store read): its sprints run as stories, a plain
/// development report is refused naming the holder, and no final QA is due while the
/// claim stands.
#[test]
fn a_sprint_claimed_by_another_clone_runs_as_a_story() {
    use crate::workflow::story::{self, SprintClaim};
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Dev, false);
    let dev = |stage| Command::Submit {
        stage,
        claude_result: Some(PASSING_REPORT.into()),
        codex_result: None,
        document_file: None,
    };
    assert!(!story::runs_as_stories(&r.s));
    r.s.claimed = vec![SprintClaim {
        sprint: 1,
        owner: "Mia <mia@example.org>".into(),
        branch: Some("main".into()),
        worktree: "/w/mia".into(),
        host: None,
        remote: "origin".into(),
        since: "2026-11-29T08:00:00+00:00".into(),
        gone: false,
        done: None,
    }];
    assert!(story::runs_as_stories(&r.s));
    assert_eq!(story::to_start(&r.s), vec![2]);
    for stage in [None, Some(Stage::Dev)] {
        let e = r.try_do(dev(stage)).unwrap_err();
        assert_eq!(e.code(), "invalid_state");
        let msg = e.to_string();
        assert!(
            msg.contains("sprint 1 (held by Mia <mia@example.org> on branch `main` in /w/mia, claimed on the remote `origin` since 2026-11-29T08:00:00+00:00)")
                && msg.contains("sprint 2 (no story started)"),
            "{msg}"
        );
    }
    // Even with every sprint's story completed here, another clone's claim of one of them
    // is a second story of that sprint: no final QA until the human keeps one.
    r.s.stories = (1..=2)
        .map(|sprint| crate::workflow::story::StoryState {
            sprint,
            session_id: format!("story-{sprint}"),
            task_name: format!("build-it-sprint-{sprint}"),
            owner: "Lea".into(),
            branch: None,
            worktree: format!("/wt{sprint}"),
            stage: Stage::Qa,
            state: State::Completed,
            updated_at: "2026-11-21T12:00:00.000Z".into(),
            review_status: None,
            gone: false,
        })
        .collect();
    assert!(!story::final_qa_due(&r.s));
    let twice = story::twice(&r.s);
    assert_eq!(twice.len(), 1);
    assert_eq!(twice[0].0, 1);
    assert!(twice[0].1[1].contains("Mia"), "{twice:?}");
}

/// A question the author answered with an assumption is no longer open but shown as
/// assumed; one the human answers in the feedback of a rejection counts as answered.
#[test]
fn assumptions_are_kept_apart_and_answers_in_feedback_count() {
    let mut r = Run::new("Build it");
    r.submit(QUESTIONS_PRD);
    r.act(answer(&[("q1", "Web")]));
    let doc = format!(
        "{}\nAssumed q2: team admins only.\n",
        complete_doc(Stage::Po)
    );
    let scored = serde_json::json!({"prd_updated": doc, "quality_score": 93}).to_string();
    r.submit(&scored);
    assert_eq!(r.state(), (Stage::Po, State::AwaitingConfirmation));
    let rec = r.s.record(Stage::Po);
    assert!(
        rec.open_questions().is_empty(),
        "{:?}",
        rec.open_questions()
    );
    let assumed = rec.assumed_questions();
    assert_eq!(assumed.len(), 1);
    assert_eq!(
        (assumed[0].0.id.as_str(), assumed[0].1.as_str()),
        ("q2", "team admins only.")
    );

    let out = r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Shorter please. q2: team leads approve; admins do not".into()),
    });
    let rec = r.s.record(Stage::Po);
    assert_eq!(rec.answers["q2"], "team leads approve; admins do not");
    assert!(rec.assumed_questions().is_empty());
    assert!(out
        .facts
        .notices
        .iter()
        .any(|n| n.contains("The feedback answers q2")));
    // An id the stage never asked, or one already answered, is not taken from feedback.
    let taken = super::kept_words::answers_in("q1: mobile. q9: never asked", rec);
    assert!(taken.is_empty(), "{taken:?}");
}

/// An answer given in feedback runs to the next point of the feedback, not over it: the
/// rest is the human's other change, not part of the answer.
#[test]
fn an_answer_in_feedback_ends_at_the_next_point() {
    let mut r = Run::new("Build it");
    r.submit(QUESTIONS_PRD);
    let rec = r.s.record(Stage::Po);
    for (feedback, answer) in [
        (
            "Two changes. 1) q2: admins only; see parse() and next(). 2) Add a requirement: it is immutable.",
            "admins only; see parse() and next().",
        ),
        ("Changes:\n- q2: admins only\n- add a requirement", "admins only"),
        ("q2: admins only\n\nAlso make it shorter.", "admins only"),
        ("q2: admins only, on 3.9 and 3.11", "admins only, on 3.9 and 3.11"),
    ] {
        let taken = super::kept_words::answers_in(feedback, rec);
        assert_eq!(taken.get("q2").map(String::as_str), Some(answer), "{feedback}");
    }
}

const FILE: &str = "plans/prd.md";

/// A `submit` naming [`FILE`], beside `meta` and `codex`.
fn with_file(meta: Option<&str>, codex: Option<&str>) -> Command {
    Command::Submit {
        stage: None,
        claude_result: meta.map(String::from),
        codex_result: codex.map(String::from),
        document_file: Some(FILE.into()),
    }
}

/// The method's PRD as the caller read it, with its front matter.
fn method_prd() -> String {
    format!("---\nstatus: final\n---\n{}", complete_doc(Stage::Po))
}

/// A submission naming `document_file`: the file's text (read by the caller) is the
/// document, whole, through the same gate; the record keeps the file and its digest. Not
/// read, or beside a second model's result, it is refused.
#[test]
fn a_files_draft_is_scored_as_any_draft_and_recorded_as_the_files() {
    let r = Run::new("Build it");
    let text = method_prd();
    let mut documents = r.files.documents(&r.s);
    let unread = apply(
        &r.s,
        with_file(None, None),
        &r.decision,
        &documents,
        r.clock,
    );
    assert!(
        matches!(unread, Err(WorkflowError::DocumentFile { .. })),
        "{unread:?}"
    );
    documents.file_draft = Some(super::FileDraft {
        path: FILE.into(),
        text: text.clone(),
        author: Some("last committed in 1a2b3c4 by Ada <ada@example.org> (2026-11-28)".into()),
    });
    let two = apply(
        &r.s,
        with_file(None, Some("x")),
        &r.decision,
        &documents,
        r.clock,
    );
    assert!(
        matches!(two, Err(WorkflowError::DocumentFile { .. })),
        "{two:?}"
    );
    let meta = Some(r#"{"quality_score": 93}"#);
    let out = apply(
        &r.s,
        with_file(meta, None),
        &r.decision,
        &documents,
        r.clock,
    )
    .unwrap();
    assert_eq!(out.session.current_state, State::AwaitingConfirmation);
    let from = out
        .session
        .record(Stage::Po)
        .from_file
        .clone()
        .expect("recorded");
    assert_eq!(
        (from.path.as_str(), from.sha256),
        (FILE, super::sha256_hex(&text))
    );
    let kept = out.session.artifact_path(Stage::Po);
    let artifact = out.writes.iter().find(|w| w.path == kept);
    assert_eq!(artifact.map(|w| w.content.as_str()), Some(text.as_str()));
    let said = "the file `plans/prd.md` where the BMAD method leaves its documents";
    assert!(out.facts.notices.iter().any(|n| n.contains(said)));
    // Whose it is, as the caller read it from git; never that the assistant did not write it.
    assert!(out
        .facts
        .notices
        .iter()
        .any(|n| n.contains("by Ada <ada@example.org>")));
    assert!(!out
        .facts
        .notices
        .iter()
        .any(|n| n.contains("not written by")));
}

/// The human deciding on a file's draft is told whose it is; the model's next draft,
/// after a rejection, is its own again.
#[test]
fn the_human_is_told_a_draft_is_the_files_until_the_model_writes_one() {
    let mut r = Run::new("Build it");
    let mut documents = r.files.documents(&r.s);
    documents.file_draft = Some(super::FileDraft {
        path: FILE.into(),
        text: method_prd(),
        author: None,
    });
    let meta = Some(r#"{"quality_score": 93}"#);
    let out = apply(
        &r.s,
        with_file(meta, None),
        &r.decision,
        &documents,
        r.clock,
    )
    .unwrap();
    for w in &out.writes {
        r.files
            .0
            .borrow_mut()
            .insert(w.path.clone(), w.content.clone());
    }
    r.s = out.session;
    // The method's file, as it was read.
    r.files.0.borrow_mut().insert(FILE.into(), method_prd());
    let p = pending(&r.s, Action::Confirm, &r.files.documents(&r.s)).unwrap();
    let told = |p: &Pending, what: &str| p.notices.iter().any(|n| n.starts_with(what));
    assert!(
        told(
            &p,
            "This draft is the file `plans/prd.md` where the BMAD method leaves"
        ),
        "{:?}",
        p.notices
    );
    // The method's file edited after it was taken: no longer "taken as it is".
    r.files
        .0
        .borrow_mut()
        .insert(FILE.into(), method_prd() + "\nA line added by hand.\n");
    let p = pending(&r.s, Action::Confirm, &r.files.documents(&r.s)).unwrap();
    assert!(
        told(&p, "This draft was taken from the file `plans/prd.md`"),
        "{:?}",
        p.notices
    );
    assert!(
        p.notices.iter().all(|n| !n.contains("taken as it is")),
        "{:?}",
        p.notices
    );
    assert!(
        p.notices
            .iter()
            .any(|n| n.contains("that file has changed since")),
        "{:?}",
        p.notices
    );
    r.files.0.borrow_mut().insert(FILE.into(), method_prd());
    let path = r.s.artifact_path(Stage::Po);
    r.files
        .0
        .borrow_mut()
        .insert(path, "# Edited by hand\n".into());
    let p = pending(&r.s, Action::Confirm, &r.files.documents(&r.s)).unwrap();
    assert!(told(&p, "This draft was taken from"), "{:?}", p.notices);
    assert!(
        p.notices.iter().all(|n| !n.contains("taken as it is")),
        "{:?}",
        p.notices
    );
    r.act(Command::Reject {
        action: Action::Reject,
        feedback: Some("Shorter.".into()),
    });
    r.submit(&passing(Stage::Po));
    assert_eq!(r.s.record(Stage::Po).from_file, None);
}

/// The record of a submission: where the session moved, and that no one decided; the
/// files written are the shell's to add.
#[test]
fn a_submissions_record_says_where_it_moved_and_that_no_one_decided() {
    let mut r = Run::new("Build it");
    let out = r.submit(&passing(Stage::Po));
    let e = &out.effects;
    assert_eq!((e.action, e.rejected), (Action::Submit, false));
    assert_eq!((e.from.stage, e.from.state), (Stage::Po, State::Generating));
    assert_eq!(
        (e.to.stage, e.to.state),
        (Stage::Po, State::AwaitingConfirmation)
    );
    assert_eq!((&e.decision, e.completed, &e.risk), (&None, None, &None));
    assert!(!e.confirms() && !e.moved_stage() && !e.completes_task());
    assert!(e.written.is_empty() && e.statuses.is_empty() && e.story.is_none());
    assert_eq!(e.entry(&out.session), out.session.history.last());
    assert_eq!(e.at, out.session.updated_at);
    assert_eq!(e.step(), out.session.history.len() - 1);
}

/// The record of a confirmation: who decided, on which channel, about which version of
/// the document, with which words, and the stage it completed.
#[test]
fn a_confirmations_record_names_the_decider_the_channel_the_document_and_the_stage() {
    let mut r = Run::at(State::AwaitingConfirmation);
    let sha = sha256_hex(
        &r.files
            .read(&r.s.artifact_path(Stage::Po))
            .unwrap()
            .unwrap(),
    );
    r.decision = Decision {
        decided_by: DecidedBy::Human,
        via: Via::Dashboard,
        seen_digest: None,
        provenance: None,
        decider: crate::workflow::Person::parse("Ada Lovelace <ada@example.org>"),
        cannot_ask: None,
    };
    let out = r.act(Command::Confirm {
        action: Action::Confirm,
        note: Some("Keep the export".into()),
        answers: Default::default(),
    });
    let e = &out.effects;
    assert!(e.confirms() && e.moved_stage() && !e.approves_plan() && !e.rejected);
    assert_eq!(e.completed, Some(Stage::Po));
    assert_eq!(
        (e.to.stage, e.to.state),
        (Stage::Architect, State::Generating)
    );
    assert_eq!(e.human_via(), Some(Via::Dashboard));
    let d = e.decision.as_ref().unwrap();
    assert_eq!(d.digest.as_deref(), Some(sha.as_str()));
    assert_eq!(d.words.as_deref(), Some("Keep the export"));
    assert_eq!(
        d.decider.as_ref().map(|p| p.to_string()).as_deref(),
        Some("Ada Lovelace <ada@example.org>")
    );
    assert_eq!(e.risk, None, "a passing document confirmed accepts no risk");
}

/// The approval of the plan is said by its record; a plan sent back is not approved.
#[test]
fn an_approvals_record_is_the_plans_approval_and_a_send_back_is_not() {
    let mut r = Run::at(State::AwaitingApproval);
    let out = r.act(Command::Approve {
        scope: Some("1".into()),
        note: None,
    });
    let e = &out.effects;
    assert!(e.approves_plan() && !e.confirms());
    assert_eq!(e.completed, Some(Stage::Sm));
    assert_eq!((e.to.stage, e.to.state), (Stage::Dev, State::Generating));
    assert_eq!(e.human_via(), None, "the host's word");
    assert_eq!(e.decision.as_ref().map(|d| d.by), Some(DecidedBy::Host));
    let mut r = Run::at(State::AwaitingApproval);
    let out = r.act(Command::Reject {
        action: Action::Approve,
        feedback: Some("Smaller sprints".into()),
    });
    let e = &out.effects;
    assert!(e.rejected && !e.approves_plan());
    assert_eq!((e.action, e.completed), (Action::Approve, None));
    assert_eq!((e.to.stage, e.to.state), (Stage::Sm, State::Refining));
}

/// A document sent back is recorded as sent back whether `reject` or `confirm` with
/// `confirmed: false` named it: nothing that follows mistakes it for a confirmation.
#[test]
fn a_send_back_is_recorded_as_one_whichever_action_named_it() {
    for action in [Action::Reject, Action::Confirm] {
        let mut r = Run::at(State::AwaitingConfirmation);
        let out = r.act(Command::Reject {
            action,
            feedback: Some("Name the platforms".into()),
        });
        let e = &out.effects;
        assert_eq!(e.action, action);
        assert!(e.rejected && !e.confirms(), "{action}");
        assert_eq!(
            e.decision.as_ref().and_then(|d| d.words.as_deref()),
            Some("Name the platforms")
        );
        assert_eq!(e.completed, None);
        assert_eq!((e.to.stage, e.to.state), (Stage::Po, State::Refining));
    }
}

/// A risk is accepted by one rule (`rules::risk_in`), and the record says which: a
/// failing review's, or failing checks' (named apart, for the policy); a stage that
/// passes accepts none.
#[test]
fn a_risk_accepted_is_in_the_record_by_the_one_rule() {
    use crate::workflow::Track;
    let confirm = || Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    };
    let mut r = reach(Track::Full, Stage::Review, State::AwaitingConfirmation);
    let asked = rules::risk_in(Stage::Review, r.s.current()).expect("a failing review");
    assert_eq!(rules::risk_asked(&r.s), Some(asked.clone()));
    let out = r.act(confirm());
    let e = &out.effects;
    assert_eq!(e.risk, Some(asked));
    assert!(e.accepted_risk_at(Stage::Review).is_some());
    assert!(e.accepted_risk_at(Stage::Qa).is_none());
    assert_eq!(
        e.risk.as_ref().unwrap().checks,
        None,
        "the report failed, not checks"
    );
    assert!(out.session.record(Stage::Review).accepted_risk);
    let mut r = reach(Track::Full, Stage::Dev, State::AwaitingConfirmation);
    let out = r.act(confirm());
    let risk = out.effects.risk.expect("failing checks accepted");
    assert_eq!(risk.stage, Stage::Dev);
    assert!(
        risk.checks.as_ref().is_some_and(|c| c.contains("test")),
        "{risk:?}"
    );
    assert_eq!(rules::risk_asked(&out.session), None, "nothing asked now");
}

/// A story's change names its parent and sprint, whose shared entry follows it; the
/// change that completes a task says so.
#[test]
fn a_storys_record_names_its_parent_and_the_last_change_completes_the_task() {
    use crate::workflow::session::StoryLink;
    use crate::workflow::Track;
    let mut r = Run::new("Build sprint 2");
    r.s.begin_track(Track::Story);
    r.s.story = Some(StoryLink {
        parent_session_id: "00000000-0000-4000-8000-00000000000a".into(),
        parent_task: "build-it".into(),
        sprint: 2,
        sprint_title: "UI".into(),
        owner: "Ada".into(),
        branch: Some("s2".into()),
        worktree: "/w/s2".into(),
    });
    let first = r.s.current_stage;
    let out = r.submit(PASSING_REPORT);
    assert_eq!(
        out.effects.story,
        Some(("00000000-0000-4000-8000-00000000000a".to_string(), 2))
    );
    assert_eq!(out.effects.from.stage, first);
    let mut r = Run::new("Build it");
    r.advance_to(Stage::Qa, false);
    let out = r.submit("# QA\nIntent: met\nQuality Score: 90/100");
    assert!(out.effects.completes_task());
    assert_eq!(out.effects.completed, Some(Stage::Qa));
    assert_eq!(out.effects.story, None);
}
