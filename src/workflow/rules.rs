//! The rules of the workflow in one place (docs/spec.md §3–§5): which action is legal at a
//! (stage, state), and which state follows a submission. The transition function
//! ([`super::machine::apply`]) refuses and moves through these; replies list what is
//! legal through them; and the one rule for a risk accepted ([`risk_in`]). Pure functions,
//! tested as tables.

use super::action::Action;
use super::effects::Risk;
use super::session::{Session, StageRecord, State};
use super::stage::{QualityGate, Stage, Verdict};
use super::track::Track;

/// Submissions below the gate after which the human decides instead of another round.
pub const MAX_BELOW_GATE_SUBMISSIONS: u32 = 5;

/// Whether `action` may be taken at `stage` in `state` in a session of `track`. A stage
/// the track does not run, or a state the stage cannot be in (see [`Stage::states`]),
/// allows nothing but `status`; `promote` is the human's, on a track that promotes
/// (`quick` → `full`), until the session completes.
pub fn is_legal(track: Track, stage: Stage, state: State, action: Action) -> bool {
    use Action::*;
    if action == Status {
        return true;
    }
    if !track.contains(stage) || !stage.states().contains(&state) {
        return false;
    }
    if action == Promote {
        return track.promotes_to().is_some() && state != State::Completed;
    }
    at_stage(stage, state, action)
}

/// What a stage's gate allows in `state`, whatever the track (never `promote`).
fn at_stage(stage: Stage, state: State, action: Action) -> bool {
    use Action::*;
    if !stage.states().contains(&state) {
        return false;
    }
    match state {
        State::Generating | State::Refining => action == Submit,
        State::Clarifying => action == Answer,
        State::AwaitingConfirmation => matches!(action, Confirm | ConfirmSave | Reject),
        State::AwaitingApproval => matches!(action, Approve | Reject),
        State::Completed => false,
    }
}

/// The gate's decisions at (`stage`, `state`) in any track that runs the stage: what the
/// session waits for the human to decide (never `promote`, a choice, not a wait).
pub fn gate_decisions(stage: Stage, state: State) -> Vec<Action> {
    Action::ALL
        .into_iter()
        .filter(|a| a.decides() && at_stage(stage, state, *a))
        .collect()
}

/// The actions legal now, in [`Action::ALL`] order (`status` always among them).
pub fn allowed_actions(track: Track, stage: Stage, state: State) -> Vec<Action> {
    Action::ALL
        .into_iter()
        .filter(|a| is_legal(track, stage, state, *a))
        .collect()
}

/// What the server knows after scoring a submission at a scored stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoredRound {
    /// The chosen candidate's score.
    pub score: u32,
    /// The stage's passing score.
    pub gate: u32,
    /// Whether the server's own check found every section the stage requires, with
    /// content: a score alone does not pass the gate.
    pub complete: bool,
    /// Submissions of the stage that stayed below the gate so far, this one included
    /// when it did (a passing draft the human sent back does not count).
    pub below_gate: u32,
    /// Whether the human has answered questions at this stage before.
    pub answered_before: bool,
    /// Whether this submission asks questions not asked before.
    pub new_questions: bool,
    /// Whether its document is a file someone wrote (the BMAD method's, `document_file`):
    /// below the gate, the human decides on it as it is rather than a model rewriting it.
    pub from_file: bool,
}

/// Where a scored submission leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterScored {
    /// The human answers the new questions first.
    Clarify,
    /// The document passed the gate (its score, and the server's check of its
    /// sections): the human confirms it.
    Confirm,
    /// Still below the gate after [`MAX_BELOW_GATE_SUBMISSIONS`]: the human decides.
    DecideAtCap,
    /// Below the gate: the host revises with guidance.
    Refine,
}

impl AfterScored {
    pub fn state(self) -> State {
        match self {
            AfterScored::Clarify => State::Clarifying,
            AfterScored::Confirm | AfterScored::DecideAtCap => State::AwaitingConfirmation,
            AfterScored::Refine => State::Refining,
        }
    }
}

/// The state after a scored submission (docs/spec.md §4.5): new questions go to the human before
/// anything else (a question asked beside a passing score is not dropped), except past the
/// round cap, where they are carried into the human's decision; then the gate, which a
/// score passes only when every required section is there; then the cap; else another
/// revision.
pub fn after_scored(r: ScoredRound) -> AfterScored {
    let below_cap = r.below_gate < MAX_BELOW_GATE_SUBMISSIONS;
    if r.new_questions && (!r.answered_before || below_cap) {
        AfterScored::Clarify
    } else if r.score >= r.gate && r.complete {
        AfterScored::Confirm
    } else if !below_cap || r.from_file {
        AfterScored::DecideAtCap
    } else {
        AfterScored::Refine
    }
}

/// Where a submission at a stage without a score gate leads (docs/spec.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPlain {
    /// The human approves the plan and its scope.
    AwaitApproval,
    /// The document's own verdict fails: the human accepts the risk (`confirm`) or sends
    /// the work back with the findings (`reject`).
    AwaitDecision,
    /// The stage is done; the next one begins (or the workflow completes).
    Complete,
}

/// `verdict_fails`: what [`failed_verdict`] found (in the document's own verdict, or in
/// the project's checks the server ran), if anything.
pub fn after_plain(stage: Stage, verdict_fails: bool) -> AfterPlain {
    match stage.gate() {
        QualityGate::Approval => AfterPlain::AwaitApproval,
        QualityGate::Verdict { .. } if verdict_fails => AfterPlain::AwaitDecision,
        QualityGate::None if verdict_fails && stage.runs_checks() => AfterPlain::AwaitDecision,
        QualityGate::Verdict { .. } | QualityGate::Score(_) | QualityGate::None => {
            AfterPlain::Complete
        }
    }
}

/// What fails in a document's own verdict on the work, said for the human: `Review
/// Status: Fail`, a stated QA score below the gate, or no verdict at all (no verdict is
/// optional: leaving it out stops at the human as a failing one does); a score that is
/// there but unreadable (`unreadable_score`, as written) is named as such. `None` when it
/// passes.
pub fn verdict_failure(
    verdict: Verdict,
    review_status: Option<&str>,
    score: Option<u32>,
    unreadable_score: Option<&str>,
) -> Option<String> {
    match verdict {
        Verdict::ReviewStatus => match review_status {
            Some("Fail") => Some("Review Status: Fail".into()),
            Some(_) => None,
            None => Some("Review Status: not stated".into()),
        },
        Verdict::QualityScore(gate) => match (score, unreadable_score) {
            (Some(s), _) if s < gate => {
                Some(format!("Quality Score: {s}/100, below the gate of {gate}"))
            }
            (Some(_), _) => None,
            (None, Some(v)) => Some(format!(
                "Quality Score: \"{v}\" is not a number from 0 to 100"
            )),
            (None, None) => Some("Quality Score: not stated".into()),
        },
    }
}

/// What fails in the verdict of `stage`'s latest report (its record), if the stage has a
/// verdict and it fails, and in the project's checks the server ran on the stage's latest
/// submission: the evidence the human must accept before the stage completes.
pub fn failed_verdict(stage: Stage, rec: &StageRecord) -> Option<String> {
    let report = stage.verdict().and_then(|v| {
        verdict_failure(
            v,
            rec.review_status.as_deref(),
            rec.score,
            rec.score_unreadable.as_deref(),
        )
    });
    let checks = failed_checks(stage, rec);
    // The closing report: in-scope requirements without a passing result, and an intent
    // verdict other than met (docs/traceability.md). Only the stage that closes its track
    // records them (QA, or review in a light track).
    let trace = super::trace::failure(&rec.trace);
    let sections = unwritten_sections(stage, rec);
    let found: Vec<String> = [report, checks, sections, trace]
        .into_iter()
        .flatten()
        .collect();
    (!found.is_empty()).then(|| found.join("; "))
}

/// What a document of a stage without a score gate lacks of the sections its track
/// requires (the fix track's failing test), recorded at its submission.
pub fn unwritten_sections(stage: Stage, rec: &StageRecord) -> Option<String> {
    if stage.gate() != QualityGate::None {
        return None;
    }
    let lacking: Vec<&String> = rec
        .missing_sections
        .iter()
        .chain(&rec.empty_sections)
        .collect();
    let mut found: Vec<String> = Vec::new();
    if !lacking.is_empty() {
        let names: Vec<String> = lacking.iter().map(|s| format!("`{s}`")).collect();
        found.push(format!(
            "the report has no {} section (this track writes a test that fails before the fix, and shows it failing)",
            names.join(", ")
        ));
    }
    found.extend(rec.short_sections.iter().map(|s| {
        format!("the report's {s} (this track writes a test that fails before the fix, and shows it failing)")
    }));
    (!found.is_empty()).then(|| found.join("; "))
}

/// The one rule for a risk accepted: confirming `stage` while what its latest submission
/// is judged by fails (its report's verdict, the project's checks, the closing trace or the
/// sections its track requires: [`failed_verdict`]; `rec` is its record as the decision
/// finds it) accepts that failure, and the workflow goes on. `None` when the stage passes:
/// confirming it accepts no risk. The machine applies it, and says so in the change's
/// record (`Effects::risk`); the policy asks it before the change, to keep a failure of
/// the checks from being accepted on the host's word.
pub fn risk_in(stage: Stage, rec: &StageRecord) -> Option<Risk> {
    Some(Risk {
        stage,
        failure: failed_verdict(stage, rec).or_else(|| below_gate(stage, rec))?,
        checks: failed_checks(stage, rec),
    })
}

/// What keeps a scored stage's pending draft below its gate, said for the human: its
/// score, and the sections the server's check found lacking. `None` when the stage has no
/// score gate, nothing below it is pending, or it passed.
pub fn below_gate(stage: Stage, rec: &StageRecord) -> Option<String> {
    let QualityGate::Score(gate) = stage.gate() else {
        return None;
    };
    if rec.gate_passed != Some(false) || rec.draft_ref.is_none() {
        return None;
    }
    let mut said = match rec.score {
        Some(score) if score < gate => format!("a score of {score}, below the gate of {gate}"),
        _ => "below the gate".to_string(),
    };
    let named = |list: &[String]| {
        let quoted: Vec<String> = list.iter().map(|s| format!("`{s}`")).collect();
        quoted.join(", ")
    };
    if !rec.missing_sections.is_empty() {
        said.push_str(&format!("; missing {}", named(&rec.missing_sections)));
    }
    if !rec.empty_sections.is_empty() {
        said.push_str(&format!("; empty {}", named(&rec.empty_sections)));
    }
    Some(said)
}

/// The risk the human is asked to accept now: while `s` waits for the confirmation of its
/// stage, what fails there ([`risk_in`]).
pub fn risk_asked(s: &Session) -> Option<Risk> {
    let waits = s.current_state == State::AwaitingConfirmation;
    risk_in(s.current_stage, s.current()).filter(|_| waits)
}

/// What fails in the checks run on `stage`'s latest submission, if it runs checks.
pub fn failed_checks(stage: Stage, rec: &StageRecord) -> Option<String> {
    if !stage.runs_checks() {
        return None;
    }
    rec.checks.as_ref().and_then(|run| run.failure())
}

/// Where `reject` leads from a stage's decision: its own `refining`, or for a stage whose
/// verdict failed, the generation of the stage the work goes back to (development); a
/// stage without a gate whose checks failed generates again.
pub fn after_reject(stage: Stage) -> (Stage, State) {
    match stage.gate() {
        QualityGate::Verdict { back_to, .. } => (back_to, State::Generating),
        QualityGate::None => (stage, State::Generating),
        QualityGate::Score(_) | QualityGate::Approval => (stage, State::Refining),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    #[test]
    fn legality_follows_the_spec_table() {
        use State::*;
        let decide: &[Action] = &[Confirm, ConfirmSave, Reject, Status];
        let rows: [(Stage, State, &[Action]); 17] = [
            (Stage::Po, Generating, &[Submit, Status]),
            (Stage::Po, Clarifying, &[Answer, Status]),
            (Stage::Po, Refining, &[Submit, Status]),
            (
                Stage::Po,
                AwaitingConfirmation,
                &[Confirm, ConfirmSave, Reject, Status],
            ),
            (Stage::Po, AwaitingApproval, &[Status]),
            (Stage::Architect, Clarifying, &[Answer, Status]),
            (Stage::Sm, Refining, &[Submit, Status]),
            (Stage::Sm, AwaitingApproval, &[Approve, Reject, Status]),
            (Stage::Sm, AwaitingConfirmation, &[Status]),
            (Stage::Dev, Generating, &[Submit, Status]),
            (Stage::Dev, AwaitingConfirmation, decide),
            (Stage::Review, Clarifying, &[Status]),
            (Stage::Review, AwaitingConfirmation, decide),
            (Stage::Review, Refining, &[Status]),
            (Stage::Qa, Generating, &[Submit, Status]),
            (Stage::Qa, AwaitingConfirmation, decide),
            (Stage::Qa, Completed, &[Status]),
        ];
        for (stage, state, want) in rows {
            assert_eq!(
                allowed_actions(Track::Full, stage, state),
                want,
                "{stage}/{state}"
            );
        }
        for track in Track::ALL {
            for stage in Stage::ALL {
                for state in State::ALL {
                    let allowed = allowed_actions(track, stage, state);
                    assert!(!allowed.contains(&Start) && !allowed.contains(&List));
                    assert!(allowed.contains(&Status));
                    if !track.contains(stage) {
                        assert_eq!(allowed, [Status], "{track}: {stage}/{state}");
                    }
                }
            }
        }
    }

    #[test]
    fn each_track_uses_its_rows_and_only_quick_promotes() {
        use State::*;
        // The quick and fix tracks: their first document is scored and confirmed, as the
        // PRD is; review is their last stage.
        for (track, first) in [(Track::Quick, Stage::Spec), (Track::Fix, Stage::Bug)] {
            let promote: &[Action] = if track == Track::Quick {
                &[Answer, Promote, Status]
            } else {
                &[Answer, Status]
            };
            assert_eq!(allowed_actions(track, first, Clarifying), promote);
            assert_eq!(allowed_actions(track, Stage::Review, Completed), [Status]);
            assert_eq!(allowed_actions(track, Stage::Qa, Generating), [Status]);
            assert_eq!(allowed_actions(track, Stage::Po, Generating), [Status]);
        }
        assert_eq!(
            allowed_actions(Track::Quick, Stage::Spec, AwaitingConfirmation),
            [Confirm, ConfirmSave, Reject, Promote, Status]
        );
        assert_eq!(
            allowed_actions(Track::Quick, Stage::Dev, Generating),
            [Submit, Promote, Status]
        );
        assert_eq!(
            allowed_actions(Track::Fix, Stage::Dev, Generating),
            [Submit, Status]
        );
        assert_eq!(
            allowed_actions(Track::Story, Stage::Dev, Generating),
            [Submit, Status]
        );
        assert_eq!(
            allowed_actions(Track::Story, Stage::Sm, AwaitingApproval),
            [Status]
        );
        for track in Track::ALL {
            for stage in Stage::ALL {
                for state in State::ALL {
                    let promotes = is_legal(track, stage, state, Promote);
                    assert_eq!(
                        promotes,
                        track == Track::Quick
                            && track.contains(stage)
                            && stage.states().contains(&state)
                            && state != Completed,
                        "{track}: {stage}/{state}"
                    );
                }
            }
        }
    }

    fn round(
        score: u32,
        below_gate: u32,
        answered_before: bool,
        new_questions: bool,
    ) -> ScoredRound {
        ScoredRound {
            score,
            gate: 90,
            complete: true,
            below_gate,
            answered_before,
            new_questions,
            from_file: false,
        }
    }

    #[test]
    fn the_state_after_a_scored_submission_follows_the_spec_table() {
        use AfterScored::*;
        // (score, below-gate rounds, answered before, new questions) → next
        let rows = [
            (72, 1, false, true, Clarify),
            (95, 1, false, true, Clarify),
            (95, 1, false, false, Confirm),
            (90, 1, false, false, Confirm),
            (89, 1, false, false, Refine),
            (95, 2, true, true, Clarify),
            (95, 2, true, false, Confirm),
            (70, 2, true, true, Clarify),
            (70, 2, true, false, Refine),
            (70, 4, true, false, Refine),
            (70, 5, true, false, DecideAtCap),
            (70, 5, true, true, DecideAtCap),
            (70, 5, false, true, Clarify),
            (70, 9, false, false, DecideAtCap),
            (95, 5, true, false, Confirm),
        ];
        for (score, iteration, answered, asked, want) in rows {
            let r = round(score, iteration, answered, asked);
            assert_eq!(after_scored(r), want, "{r:?}");
        }
        // A score at the gate with a section missing or empty is below the gate.
        let rows = [
            (95, 1, false, false, Refine),
            (100, 4, true, false, Refine),
            (95, 5, true, false, DecideAtCap),
            (95, 1, false, true, Clarify),
        ];
        for (score, iteration, answered, asked, want) in rows {
            let r = ScoredRound {
                complete: false,
                ..round(score, iteration, answered, asked)
            };
            assert_eq!(after_scored(r), want, "{r:?}");
        }
        // A file someone wrote, below the gate, goes to the human as it is; its questions
        // first.
        for (score, complete, asked, want) in [
            (80, true, false, DecideAtCap),
            (95, false, false, DecideAtCap),
            (95, true, false, Confirm),
            (80, true, true, Clarify),
        ] {
            let r = ScoredRound {
                complete,
                from_file: true,
                ..round(score, 1, false, asked)
            };
            assert_eq!(after_scored(r), want, "{r:?}");
        }
        assert_eq!(Clarify.state(), State::Clarifying);
        assert_eq!(DecideAtCap.state(), State::AwaitingConfirmation);
    }

    #[test]
    fn only_the_sprint_plan_waits_for_approval_and_a_failing_verdict_for_the_human() {
        use AfterPlain::*;
        for stage in Stage::ALL {
            let (passing, failing) = match stage {
                Stage::Sm => (AwaitApproval, AwaitApproval),
                // Dev fails only on its checks; review and QA on their report or checks.
                Stage::Dev | Stage::Review | Stage::Qa => (Complete, AwaitDecision),
                _ => (Complete, Complete),
            };
            assert_eq!(after_plain(stage, false), passing, "{stage}");
            assert_eq!(after_plain(stage, true), failing, "{stage}");
        }
    }

    #[test]
    fn a_verdict_fails_on_review_status_fail_or_a_qa_score_below_the_gate() {
        let review = Verdict::ReviewStatus;
        assert_eq!(
            verdict_failure(review, Some("Fail"), None, None).as_deref(),
            Some("Review Status: Fail")
        );
        for status in [Some("Pass"), Some("Pass with Risk")] {
            assert_eq!(
                verdict_failure(review, status, Some(10), None),
                None,
                "{status:?}"
            );
        }
        let qa = Verdict::QualityScore(90);
        assert_eq!(
            verdict_failure(qa, None, Some(89), None).as_deref(),
            Some("Quality Score: 89/100, below the gate of 90")
        );
        assert_eq!(verdict_failure(qa, Some("Fail"), Some(90), None), None);
    }

    #[test]
    fn no_verdict_is_optional_and_an_unreadable_score_is_named() {
        // A verdict left out fails as a failing one does.
        assert_eq!(
            verdict_failure(Verdict::ReviewStatus, None, Some(95), None).as_deref(),
            Some("Review Status: not stated")
        );
        let qa = Verdict::QualityScore(90);
        assert_eq!(
            verdict_failure(qa, None, None, None).as_deref(),
            Some("Quality Score: not stated")
        );
        assert_eq!(
            verdict_failure(qa, None, None, Some("high")).as_deref(),
            Some("Quality Score: \"high\" is not a number from 0 to 100")
        );
    }

    #[test]
    fn a_rejection_sends_back_to_refining_or_a_failed_verdict_to_development() {
        for stage in Stage::ALL {
            let (to, state) = after_reject(stage);
            let want = match stage {
                Stage::Dev | Stage::Review | Stage::Qa => (Stage::Dev, State::Generating),
                _ => (stage, State::Refining),
            };
            assert_eq!((to, state), want, "{stage}");
            if stage.states().contains(&State::AwaitingConfirmation)
                || stage.states().contains(&State::AwaitingApproval)
            {
                assert!(to.states().contains(&state), "{stage}: {to}/{state}");
            }
        }
    }
}
