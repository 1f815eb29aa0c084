//! A round of development that reports changes git does not show (docs/spec.md, "Work the
//! diff shows"): the state of the project's files a round is measured from, recorded by the
//! caller when the session first turns to the developer and at each accepted submission;
//! the same state now, read by the caller for a submission and handed in as a value;
//! whether the report claims changes; and the refusal when it does while the files are as
//! they were.

use super::error::WorkflowError;
use super::sections;
use super::session::{Session, State};
use super::stage::Stage;
pub use super::written_against::WorkTree;

/// Whether a round of development begins with this change: the session now waits for the
/// developer's submission and did not before (the plan approved, the spec confirmed, the
/// work sent back by the human, the review or QA).
pub fn begins(before: &Session, after: &Session) -> bool {
    let waits = |s: &Session| s.current_stage == Stage::Dev && s.current_state == State::Generating;
    waits(after) && !waits(before)
}

/// Whether the change from `before` to `after` takes a new reading of where the round of
/// development is measured from (docs/spec.md §7.15): an accepted submission of
/// development (what is done while the task then waits for the human counts for the next
/// one), or a round that begins with no such reading before it.
pub fn measures(before: &Session, after: &Session) -> bool {
    let dev = |s: &Session| s.record(Stage::Dev).iteration;
    let submitted = dev(after) > dev(before);
    let unread = dev(before) == 0 || after.record(Stage::Dev).round_began.is_none();
    submitted || (begins(before, after) && unread)
}

/// Where the round of development `session` is in is measured from, while it waits at
/// development; `None` elsewhere or when no reading was taken.
pub fn basis(session: &Session) -> Option<&WorkTree> {
    if session.current_stage != Stage::Dev {
        return None;
    }
    session.record(Stage::Dev).round_began.as_ref()
}

/// The commit a review of `session`'s development measures its changes from: the one
/// the document development was planned from was written against (the plan, the short
/// spec, the bug report), else where the round of development was measured from.
pub fn review_base(session: &Session) -> Option<&str> {
    let planned = (session.track.stages().iter())
        .take_while(|s| **s != Stage::Dev)
        .filter_map(|s| session.record(*s).written_against.as_ref())
        .last()
        .map(|b| b.commit.as_str());
    let round = session.record(Stage::Dev).round_began.as_ref();
    planned.or_else(|| round.map(|r| r.commit.as_str()))
}

/// Keeps `reading` as where `session`'s round of development is measured from.
pub fn set_basis(session: &mut Session, reading: Option<WorkTree>) {
    session.record_mut(Stage::Dev).round_began = reading;
}

/// Refuses a report that claims changes when the files are as the round found them.
/// `began`: the state recorded when the round began; `now`: the same read now, against the
/// same commit (`None`: git could not say, and nothing is refused).
pub fn check(
    began: Option<&WorkTree>,
    now: Option<&WorkTree>,
    report: &str,
) -> Result<(), WorkflowError> {
    let (Some(began), Some(now)) = (began, now) else {
        return Ok(());
    };
    if began != now || !claims_changes(report) {
        return Ok(());
    }
    Err(WorkflowError::NothingChanged {
        commit: began.commit.chars().take(12).collect(),
        uncommitted: began.files,
    })
}

/// Whether the report's `Changes` section names changes: it has text, and that text does
/// not begin by saying there were none.
pub fn claims_changes(report: &str) -> bool {
    let Some(text) = sections::text_of(&sections::DEV[1], report) else {
        return false;
    };
    let first = text
        .lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', '+', ' ']).trim())
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_lowercase();
    let none = ["none", "no change", "no file", "nothing", "no code"];
    !none.iter().any(|n| first.starts_with(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(digest: &str) -> WorkTree {
        WorkTree {
            commit: "a".repeat(40),
            files: 1,
            digest: digest.into(),
        }
    }

    const CLAIMS: &str = "# Implementation Report\n\n## Summary\nAdded login.\n\n## Changes\n- `src/login.rs`: the form\n\n## Tests\ncargo test: 3 passed\n";

    #[test]
    fn a_report_naming_files_claims_changes_and_one_saying_none_does_not() {
        assert!(claims_changes(CLAIMS));
        for none in [
            "## Changes\nNone: this round only ran the tests again.\n",
            "## Changes\n- No changes were needed.\n",
            "## Changes\n\nNothing changed.\n",
            "## Summary\nRan the tests.\n",
        ] {
            assert!(!claims_changes(none), "{none}");
        }
    }

    #[test]
    fn claimed_changes_with_the_files_as_they_were_are_refused() {
        let e = check(Some(&tree("d1")), Some(&tree("d1")), CLAIMS).unwrap_err();
        assert_eq!(e.code(), crate::code::ErrorCode::NothingChanged);
        let said = e.to_string();
        assert!(said.contains("aaaaaaaaaaaa"), "{said}");
        assert!(said.contains("1 file"), "{said}");
        // The files moved on, the report claims nothing, or git could not say: accepted.
        assert!(check(Some(&tree("d1")), Some(&tree("d2")), CLAIMS).is_ok());
        assert!(check(Some(&tree("d1")), Some(&tree("d1")), "## Changes\nnone\n").is_ok());
        assert!(check(Some(&tree("d1")), None, CLAIMS).is_ok());
        assert!(check(None, Some(&tree("d1")), CLAIMS).is_ok());
    }

    #[test]
    fn a_round_begins_when_the_session_turns_to_the_developer() {
        let mut before = Session::test().build();
        before.current_stage = Stage::Sm;
        before.current_state = State::AwaitingApproval;
        let mut after = before.clone();
        after.current_stage = Stage::Dev;
        after.current_state = State::Generating;
        assert!(begins(&before, &after));
        assert!(!begins(&after, &after), "a call that stays in the round");
        before.current_stage = Stage::Dev;
        before.current_state = State::AwaitingConfirmation;
        assert!(begins(&before, &after), "sent back after failing checks");
    }
}
