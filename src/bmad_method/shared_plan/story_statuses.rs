//! Which statuses a change of a session gives its stories in the method's sprint status,
//! as the method's own skills move them: a story follows its session's stage (development
//! `in-progress`, review and QA `review`, completed `done`), from the approval of the plan on
//! (a task that builds its sprints itself is at development once it is approved, as the
//! method's `bmad-build` marks a story `in-progress` when it starts it); a send-back of
//! review or QA puts it back `in-progress` (the method's code review lowers `review` so). A
//! story session moves its own sprint's story; a parent the sprints no story of its holds,
//! and every sprint once it completes; only the parent's completion, its final QA passed,
//! closes the epic.

use crate::workflow::session::{Session, State};
use crate::workflow::stage::Stage;
use crate::workflow::Effects;

use super::status_file::Moves;
use super::{epic_key, epics, retrospective_key};

/// The status the method gives work at `s`'s stage.
pub fn status_now(s: &Session) -> &'static str {
    if s.current_state == State::Completed {
        return "done";
    }
    match s.current_stage {
        Stage::Review | Stage::Qa => "review",
        Stage::Dev => "in-progress",
        _ => "backlog",
    }
}

/// The entries a change that left the session `after` asks of the sprint status, in the
/// method's order (the epic, its stories, its retrospective), each at least at the status
/// given; empty for a session without an epic.
pub fn wanted(after: &Session) -> Vec<(String, &'static str)> {
    let Some(epic) = after.method_epic else {
        return Vec::new();
    };
    let completed = after.current_state == State::Completed;
    let held = |n: u32| after.stories.iter().any(|s| s.sprint == n);
    let mut out = vec![(epic_key(epic), "backlog")];
    for story in epics::stories(after, epic) {
        let own = after.story.is_some() || completed || !held(story.number);
        let status = if own { status_now(after) } else { "backlog" };
        out.push((story.key, status));
    }
    out.push((retrospective_key(epic), "optional"));
    out
}

/// What the change `did` (`None`: a story just started) that left `after` does beyond
/// raising its stories.
pub fn moves(after: &Session, did: Option<&Effects>) -> Moves {
    Moves {
        // A send-back that turns the session to another stage returns it to development.
        sent_back: did.is_some_and(|d| d.rejected && d.moved_stage()),
        closes_epic: after.story.is_none() && did.is_some_and(Effects::completes_task),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Session {
        let mut s = super::super::approved_plan("todo", "Build", &[(1, "API"), (2, "UI")]);
        s.method_epic = Some(3);
        s.current_stage = Stage::Dev;
        s
    }

    #[test]
    fn statuses_follow_the_stage() {
        let after = parent();
        let keys = |w: Vec<(String, &'static str)>| {
            w.into_iter()
                .map(|(k, s)| format!("{k}={s}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(wanted(&after)),
            [
                "epic-3=backlog",
                "3-1-api=in-progress",
                "3-2-ui=in-progress",
                "epic-3-retrospective=optional"
            ]
        );
        let mut review = parent();
        review.current_stage = Stage::Qa;
        review.stories = vec![];
        assert_eq!(keys(wanted(&review))[2], "3-2-ui=review");
        review.current_state = State::Completed;
        assert_eq!(keys(wanted(&review))[1], "3-1-api=done");
        review.method_epic = None;
        assert!(wanted(&review).is_empty());
    }
}
