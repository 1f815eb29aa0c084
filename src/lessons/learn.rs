//! Which lessons a change to a session teaches: read from the change's record and the
//! stage's record before and after it (pure; the store writes them with the change). The
//! categories:
//!
//! | what happened | category | whose words |
//! |---|---|---|
//! | the human sent the architecture back | ARCH-MISTAKE | the feedback (the human's, or the host's report of them) |
//! | the human sent any other document back | WRONG-ASSUMPTION | the feedback |
//! | a review or QA report failed and the work was sent back | PROCESS-SKIP | the feedback, else the report's verdict |
//! | the project's checks failed and the work was sent back | CC-FAIL | the feedback, else the checks |
//! | a failing verdict or check accepted as a risk | CC-FAIL (checks) or PROCESS-SKIP (report) | the verdict |
//! | the human answered a question otherwise than the author had assumed (`Assumed q3: …`), not in a send-back's feedback | WRONG-ASSUMPTION | the answer |
//!
//! A lesson comes only from an event that shows a mistake, never from wording: a question
//! that merely mentions an assumption ("should we assume UTC?") teaches nothing until an
//! answer contradicts what the author assumed.
//!
//! CONTEXT-LOSS and HALLUCINATION are the host's to `remember` (or a human's edit); the
//! server cannot tell them from a session.

use super::{id_for, Category, Lesson, Source};
use crate::workflow::rules::{after_reject, failed_checks, failed_verdict};
use crate::workflow::session::{Session, StageRecord};
use crate::workflow::{DecidedBy, Effects, Stage};

/// The words of a lesson are kept to this many characters.
pub const MAX_WORDS_CHARS: usize = 2000;

/// The lessons taught by the change `did`, which took the session from `before` to
/// `after`. `server_failed`: the server failed on the task through a defect of its own
/// since its last change, so a risk accepted now teaches nothing (the failure accepted
/// may be the server's).
pub fn learned(
    before: &Session,
    after: &Session,
    did: &Effects,
    server_failed: bool,
) -> Vec<Lesson> {
    let stage = did.from.stage;
    // The step's time, place, branch and words are in the seed: the same task advanced on
    // two branches (the same place in the history in both) makes two lessons, named
    // apart, that merge side by side instead of as an add/add conflict.
    let seed = |n: usize, words: &str| {
        let branch = after.branch.as_deref().unwrap_or("");
        let (id, at, i) = (&after.session_id, &did.at, did.step());
        format!("{id}:{i}:{n}:{at}:{branch}:{words}")
    };
    let digest = did.decision.as_ref().and_then(|d| d.digest.clone());
    let digest =
        digest.or_else(|| (before.record(stage).artifact.as_ref()).map(|a| a.sha256.clone()));
    taught(before, after, did, server_failed)
        .into_iter()
        .enumerate()
        .map(|(n, (role, category, source, words))| Lesson {
            id: id_for(&did.at, &seed(n, &words)),
            role,
            category,
            source,
            task: after.task_name.clone(),
            stage,
            date: did.at.clone(),
            digest: digest.clone(),
            retired: None,
            decided: None,
            words: crate::code::clip(words.trim(), MAX_WORDS_CHARS),
        })
        .collect()
}

type Taught = (Stage, Category, Source, String);

/// Whose words a lesson of the decision holds: the human's, or the host's report of them.
fn decider(did: &Effects) -> Source {
    match did.decision.as_ref().map(|d| d.by) {
        Some(DecidedBy::Human) => Source::Human,
        _ => Source::Host,
    }
}

fn taught(before: &Session, after: &Session, did: &Effects, server_failed: bool) -> Vec<Taught> {
    let stage = did.from.stage;
    let was = before.record(stage);
    let words = did.decision.as_ref().and_then(|d| d.words.as_deref());
    let feedback = words.filter(|f| !f.trim().is_empty());
    let mut out = Vec::new();
    if did.rejected {
        out.extend(sent_back(stage, was, feedback, decider(did)));
    }
    if let Some(risk) = did.risk.as_ref().filter(|_| !server_failed) {
        let (back_to, _) = after_reject(stage);
        out.push((
            back_to,
            category_of_failure(stage, was),
            source_of_failure(stage, was),
            format!("Accepted as a risk: {}", report(&risk.failure, was)),
        ));
    }
    // A send-back's feedback is one lesson already, answers given in it included: the
    // assumptions those answers correct would say the same words twice.
    let sent_back_with_words = did.rejected && feedback.is_some();
    if did.decision.is_some() && !sent_back_with_words {
        out.extend(corrected_assumptions(was, after.record(stage), did));
    }
    out
}

/// What sending `stage` back (its record `was`) teaches: with a failing verdict, a lesson
/// for the role the work returns to, in the decider's words or else the report's; without
/// one, the decider's words, for the stage's own role.
fn sent_back(
    stage: Stage,
    was: &StageRecord,
    feedback: Option<&str>,
    by: Source,
) -> Option<Taught> {
    match failed_verdict(stage, was) {
        Some(failure) => {
            let (back_to, _) = after_reject(stage);
            let category = category_of_failure(stage, was);
            Some(match feedback {
                Some(f) => (back_to, category, by, f.to_string()),
                None => (
                    back_to,
                    category,
                    source_of_failure(stage, was),
                    report(&failure, was),
                ),
            })
        }
        None => {
            let category = if stage == Stage::Architect {
                Category::ArchMistake
            } else {
                Category::WrongAssumption
            };
            feedback.map(|f| (stage, category, by, f.to_string()))
        }
    }
}

fn category_of_failure(stage: Stage, rec: &StageRecord) -> Category {
    let report_failed = stage.verdict().is_some_and(|_| {
        failed_verdict(stage, rec).is_some_and(|f| Some(&f) != failed_checks(stage, rec).as_ref())
    });
    if failed_checks(stage, rec).is_some() && !report_failed {
        Category::CcFail
    } else {
        Category::ProcessSkip
    }
}

fn source_of_failure(stage: Stage, rec: &StageRecord) -> Source {
    match category_of_failure(stage, rec) {
        Category::CcFail => Source::Server,
        _ => Source::Report,
    }
}

/// The failure, with where the report's findings are and the ones its beginning names.
fn report(failure: &str, rec: &StageRecord) -> String {
    let doc = rec.draft_ref.as_ref().or(rec.final_result_ref.as_ref());
    match doc {
        Some(d) => {
            let named = findings(&d.summary);
            if named.is_empty() {
                format!("{failure}. Findings in {}", d.file_path)
            } else {
                format!(
                    "{failure}. Findings in {}: {}",
                    d.file_path,
                    named.join("; ")
                )
            }
        }
        None => failure.to_string(),
    }
}

/// The findings the beginning of a report (`summary`, perhaps cut short with `…`) names,
/// each whole: its list items, else its lines of prose; headings and verdict lines
/// (`Review Status: Fail`) left out, and a last line the cut left unfinished dropped.
fn findings(summary: &str) -> Vec<String> {
    let mut lines: Vec<&str> = summary
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if summary.ends_with('…') {
        lines.pop();
    }
    let verdict = |l: &str| {
        let l = l.to_ascii_lowercase();
        ["review status", "quality score", "intent:", "score:"]
            .iter()
            .any(|v| l.trim_start_matches(['*', '_']).starts_with(v))
    };
    let item = |l: &str| -> Option<String> {
        let rest = l
            .strip_prefix("- ")
            .or_else(|| l.strip_prefix("* "))
            .or_else(|| {
                l.split_once(". ")
                    .filter(|(n, _)| n.parse::<u32>().is_ok())
                    .map(|(_, r)| r)
            })?;
        let rest = rest.trim();
        (!rest.is_empty()).then(|| rest.to_string())
    };
    let kept = lines
        .into_iter()
        .filter(|l| !l.starts_with('#') && !verdict(l));
    let kept: Vec<&str> = kept.collect();
    let items: Vec<String> = kept.iter().filter_map(|l| item(l)).collect();
    if items.is_empty() {
        kept.into_iter().map(str::to_string).collect()
    } else {
        items
    }
}

/// Answers given now to questions whose author had stated an assumption for them
/// (`assumed`), where the answer is not that assumption: the correction is a lesson for
/// the role that assumed. Its words are the answer alone: the lesson is quoted as what
/// the person said, and the question and the assumption are the author's words.
fn corrected_assumptions(was: &StageRecord, now: &StageRecord, did: &Effects) -> Vec<Taught> {
    now.answers
        .iter()
        .filter(|(id, _)| !was.answers.contains_key(*id))
        .filter_map(|(id, answer)| {
            let assumed = was.assumed.get(id)?;
            let same = |a: &str| a.trim().trim_end_matches('.').to_lowercase();
            if same(assumed) == same(answer) {
                return None;
            }
            now.questions.iter().find(|q| &q.id == id)?;
            Some((
                did.from.stage,
                Category::WrongAssumption,
                decider(did),
                answer.clone(),
            ))
        })
        .collect()
}

/// The earlier lessons the change `did` (leaving the session `after`) resolves: when it
/// completes the task, those its closing report names on a `Resolves lesson:` line that
/// its own prompts recalled (a report cannot name a lesson the task never saw). Which of
/// them the line retires is [`report_may_retire`]'s.
pub fn resolved(did: &Effects, after: &Session) -> Vec<String> {
    if !did.completes_task() {
        return Vec::new();
    }
    let recalled: Vec<&String> = after.recalled_lessons().collect();
    after
        .record(after.track.last())
        .trace
        .resolves
        .iter()
        .filter(|id| recalled.contains(id))
        .cloned()
        .collect()
}

/// Whether a closing report's `Resolves lesson:` line retires a lesson whose words are
/// `source`'s: only one of the model's or the server's own (`host`, `report`, `server`).
/// A lesson that holds a person's words (`human`, and `file`, which anyone may have
/// written) stays active: the line proposes it, and only the human retires it, in the
/// terminal or on the dashboard ([`act::human::lesson`](crate::act::human::lesson)).
pub fn report_may_retire(source: Source) -> bool {
    matches!(source, Source::Host | Source::Report | Source::Server)
}

/// A lesson the host asks the server to keep (`remember`): always marked as the host's.
pub fn remembered(
    role: Stage,
    category: Category,
    task: Option<&str>,
    words: &str,
    at: &str,
    seed: &str,
) -> Lesson {
    Lesson {
        id: id_for(at, &format!("remember:{seed}:{words}")),
        role,
        category,
        source: Source::Host,
        task: task.unwrap_or("(none)").to_string(),
        stage: role,
        date: at.to_string(),
        digest: None,
        retired: None,
        decided: None,
        words: crate::code::clip(words.trim(), MAX_WORDS_CHARS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::rules::risk_in;
    use crate::workflow::session::{ContentRef, HistoryEntry, Question, State};
    use crate::workflow::{Action, DecidedBy, Engine, Via};
    use chrono::Utc;

    fn session() -> Session {
        Session::new(
            "00000000-0000-4000-8000-000000000000".into(),
            "notes".into(),
            "/p".into(),
            "Notes".into(),
            vec![Engine::Claude],
            Utc::now(),
        )
    }

    /// A decision's history entry (the start entry changed: new fields keep their defaults).
    fn entry(action: Action, stage: Stage, by: DecidedBy, feedback: Option<&str>) -> HistoryEntry {
        let mut e = session().history[0].clone();
        e.at = "2026-11-24T21:00:00.000Z".into();
        e.action = action;
        e.stage = stage;
        e.from = Some(State::AwaitingConfirmation);
        e.to = State::Generating;
        e.decided_by = Some(by);
        e.via = Some(Via::Tool);
        e.digest = Some("ab".repeat(32));
        e.feedback = feedback.map(String::from);
        e
    }

    #[test]
    fn a_failed_review_sent_back_teaches_the_developer() {
        let mut before = session();
        let review = before.record_mut(Stage::Review);
        review.review_status = Some("Fail".into());
        review.draft_ref = Some(ContentRef::new(
            ".claude/specs/notes/04-dev-reviewed.md".into(),
            "Review Status: Fail\nNo input validation on the import form.",
            Utc::now(),
        ));
        let mut after = before.clone();
        after
            .history
            .push(entry(Action::Reject, Stage::Review, DecidedBy::Host, None));
        let did = Effects::of_built_step(&before, &after, true, None);
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1);
        let l = &got[0];
        assert_eq!(
            (l.role, l.stage, l.category, l.source),
            (
                Stage::Dev,
                Stage::Review,
                Category::ProcessSkip,
                Source::Report
            )
        );
        assert_eq!(
            l.words,
            "Review Status: Fail. Findings in .claude/specs/notes/04-dev-reviewed.md: No input validation on the import form."
        );
        assert_eq!(l.digest.as_deref(), Some("ab".repeat(32).as_str()));
    }

    /// A failing review whose risk is accepted teaches, unless the server failed on the
    /// task since its last change: the failure accepted may then be the server's.
    #[test]
    fn a_risk_accepted_after_a_fault_of_the_servers_teaches_nothing() {
        let mut before = session();
        let review = before.record_mut(Stage::Review);
        review.review_status = Some("Fail".into());
        review.final_result_ref = Some(ContentRef::new(
            ".claude/specs/notes/04-dev-reviewed.md".into(),
            "Review Status: Fail\nThe import form is not validated.",
            Utc::now(),
        ));
        let mut after = before.clone();
        after.record_mut(Stage::Review).accepted_risk = true;
        let mut confirm = entry(Action::Confirm, Stage::Review, DecidedBy::Human, None);
        confirm.to = State::Completed;
        after.history.push(confirm);
        let risk = risk_in(Stage::Review, before.record(Stage::Review));
        assert!(
            risk.is_some(),
            "a failing review confirmed is a risk accepted"
        );
        let did = Effects::of_built_step(&before, &after, false, risk);
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].words.starts_with("Accepted as a risk: "),
            "{}",
            got[0].words
        );
        assert_eq!(learned(&before, &after, &did, true), []);
        // A confirmation that accepts nothing teaches nothing.
        let passing = Effects::of_built_step(&before, &after, false, None);
        assert_eq!(learned(&before, &after, &passing, false), []);
    }

    /// A lesson names a report's findings, each whole: not its headings and verdict, and
    /// not a finding the report's cut beginning left unfinished.
    #[test]
    fn an_accepted_risk_names_the_findings_whole() {
        let report = "# Code Review\n\n## Findings\n- The token is logged at debug level.\n- Passwords are compared in variable time.\n\nReview Status: Fail\n";
        assert_eq!(
            findings(report),
            [
                "The token is logged at debug level.",
                "Passwords are compared in variable time."
            ]
        );
        let long = format!(
            "# Code Review\n\n- First finding.\n- {}",
            "word ".repeat(80)
        );
        let cut = crate::workflow::session::summarize(&long);
        assert_eq!(findings(&cut), ["First finding."]);
        assert_eq!(
            findings("# Review\n\nReview Status: Fail"),
            Vec::<String>::new()
        );
        assert_eq!(
            findings("The form is not validated."),
            ["The form is not validated."]
        );
    }

    /// Only an answer that contradicts what the author assumed teaches: not a question
    /// that merely mentions an assumption, nor an answer that confirms one.
    #[test]
    fn an_answer_that_corrects_an_assumption_teaches() {
        let mut before = session();
        let q = |id: &str, question: &str| Question {
            id: id.into(),
            question: question.into(),
            context: None,
            round: 1,
        };
        before.record_mut(Stage::Po).questions = vec![
            q("q1", "Which platforms?"),
            q("q2", "Should we assume UTC?"),
            q("q3", "Which colour?"),
        ];
        let assumed = &mut before.record_mut(Stage::Po).assumed;
        assumed.insert("q1".into(), "web only".into());
        assumed.insert("q3".into(), "Blue.".into());
        let mut after = before.clone();
        for (id, a) in [
            ("q1", "No: Android first"),
            ("q2", "No, local time"),
            ("q3", "blue"),
        ] {
            after
                .record_mut(Stage::Po)
                .answers
                .insert(id.into(), a.into());
        }
        after
            .history
            .push(entry(Action::Answer, Stage::Po, DecidedBy::Human, None));
        let did = Effects::of_built_step(&before, &after, false, None);
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1, "only the answer that corrected an assumption");
        assert_eq!(
            (got[0].category, got[0].source),
            (Category::WrongAssumption, Source::Human)
        );
        assert_eq!(
            got[0].words, "No: Android first",
            "the person's words alone"
        );
    }

    /// A send-back whose feedback also answers a question the author had assumed is one
    /// lesson, the feedback: not a second one for the answer inside it.
    #[test]
    fn a_send_back_that_answers_an_assumed_question_is_one_lesson() {
        let mut before = session();
        before.record_mut(Stage::Po).questions = vec![Question {
            id: "q4".into(),
            question: "Accept @reboot?".into(),
            context: None,
            round: 1,
        }];
        let po = before.record_mut(Stage::Po);
        po.assumed.insert("q4".into(), "No, an error".into());
        let mut after = before.clone();
        let feedback = "1) q4: accept @reboot. 2) Add a requirement: immutable.";
        let po = after.record_mut(Stage::Po);
        po.answers.insert("q4".into(), "accept @reboot.".into());
        after.history.push(entry(
            Action::Reject,
            Stage::Po,
            DecidedBy::Human,
            Some(feedback),
        ));
        let did = Effects::of_built_step(&before, &after, true, None);
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].category, got[0].words.as_str()),
            (Category::WrongAssumption, feedback)
        );
    }

    /// A human's rejection of the architecture teaches; one without words does not.
    #[test]
    fn a_human_rejection_teaches_its_words() {
        let before = session();
        let sent_back = |stage: Stage, words: Option<&str>| {
            let mut after = before.clone();
            after
                .history
                .push(entry(Action::Reject, stage, DecidedBy::Human, words));
            let did = Effects::of_built_step(&before, &after, true, None);
            (after, did)
        };
        let (after, did) = sent_back(Stage::Architect, Some("No Kafka"));
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1);
        assert_eq!(
            (got[0].category, got[0].source, got[0].words.as_str()),
            (Category::ArchMistake, Source::Human, "No Kafka")
        );
        let (silent, did_silent) = sent_back(Stage::Po, None);
        assert_eq!(learned(&before, &silent, &did_silent, false), []);
        // The same step of the same task on another branch, or with other words, is
        // another lesson file: two clones' lessons merge side by side.
        let mut elsewhere = after.clone();
        elsewhere.branch = Some("feature".into());
        assert_ne!(learned(&before, &elsewhere, &did, false)[0].id, got[0].id);
        let (other, did_other) = sent_back(Stage::Architect, Some("No Kafka, use NATS"));
        assert_ne!(learned(&before, &other, &did_other, false)[0].id, got[0].id);
    }

    /// A document sent back through `confirm` with `confirmed: false` (the history names
    /// the `confirm` the host called) teaches as a `reject` does: the change's record says
    /// it was sent back.
    #[test]
    fn a_send_back_through_confirm_false_teaches() {
        let before = session();
        let mut after = before.clone();
        let words = Some("The PRD forgets the offline mode");
        after
            .history
            .push(entry(Action::Confirm, Stage::Po, DecidedBy::Human, words));
        let did = Effects::of_built_step(&before, &after, true, None);
        let got = learned(&before, &after, &did, false);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(
            (got[0].category, got[0].source, got[0].words.as_str()),
            (
                Category::WrongAssumption,
                Source::Human,
                "The PRD forgets the offline mode"
            )
        );
    }
}
