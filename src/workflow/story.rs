//! Stories: each approved sprint of a full-track task run as a session of its own (the
//! `story` track: development, review, QA of that sprint), linked to its parent
//! (docs/spec.md §18.2). This is the pure part: which sprints a parent's stories must
//! cover, and when the parent's final QA is due. A story's link and its shared entry are
//! stored in the sessions ([`StoryLink`], [`StoryState`]); where the entries live (the git
//! common directory) is the store's.

use super::session::{Session, State};
pub use super::session::{SprintClaim, StoryLink, StoryState};
use super::stage::Stage;
use super::track::Track;

/// The sprints the parent's approved scope names (every sprint of the plan when the scope
/// named none), once the plan is approved; empty before.
pub fn in_scope(parent: &Session) -> Vec<u32> {
    let plan = parent.record(Stage::approval());
    if plan.approved != Some(true) {
        return Vec::new();
    }
    match &plan.scope_sprints {
        Some(n) if !n.is_empty() => n.clone(),
        _ => plan.sprints.iter().map(|s| s.number).collect(),
    }
}

/// Whether a session may have stories: a full-track task whose plan is approved, at the
/// stage that builds the scope.
pub fn takes_stories(parent: &Session) -> bool {
    parent.track == Track::Full
        && parent.current_stage.builds_scope()
        && parent.current_state == State::Generating
        && !in_scope(parent).is_empty()
}

/// The parent's stories not completed yet.
pub fn open(parent: &Session) -> Vec<&StoryState> {
    parent.stories.iter().filter(|s| !s.completed()).collect()
}

/// Whether the parent's sprints run as stories: one of its stories is seen here, or a
/// sprint of it is claimed on the team's remote (another clone's story, `claimed`).
pub fn runs_as_stories(parent: &Session) -> bool {
    !parent.stories.is_empty() || !parent.claimed.is_empty()
}

/// Whether `sprint` of the parent has a story, here or claimed on the remote.
fn has_story(parent: &Session, sprint: u32) -> bool {
    parent.stories.iter().any(|s| s.sprint == sprint)
        || parent.claimed.iter().any(|c| c.sprint == sprint)
}

/// The in-scope sprints no story holds, here or on the remote: each is still to start
/// as a story.
pub fn to_start(parent: &Session) -> Vec<u32> {
    in_scope(parent)
        .into_iter()
        .filter(|n| !has_story(parent, *n))
        .collect()
}

/// The sprints two stories or more hold (stories seen here, claims of other clones), each
/// with who holds it: one sprint is built once, and which to keep is the human's.
pub fn twice(parent: &Session) -> Vec<(u32, Vec<String>)> {
    let mut sprints: Vec<u32> = parent
        .stories
        .iter()
        .map(|s| s.sprint)
        .chain(parent.claimed.iter().map(|c| c.sprint))
        .collect();
    sprints.sort_unstable();
    sprints.dedup();
    sprints
        .into_iter()
        .filter_map(|n| {
            let holders: Vec<String> = parent
                .stories
                .iter()
                .filter(|s| s.sprint == n)
                .map(|s| format!("story `{}` of {}", s.task_name, s.holder()))
                .chain(
                    parent
                        .claimed
                        .iter()
                        .filter(|c| c.sprint == n)
                        .map(|c| format!("the story of {}", c.holder())),
                )
                .collect();
            (holders.len() > 1).then_some((n, holders))
        })
        .collect()
}

/// Whether the parent's final QA of the whole is due: every in-scope sprint was built
/// by a story that completed (and merged here), none is still open, and no other clone
/// holds a sprint of it.
pub fn final_qa_due(parent: &Session) -> bool {
    takes_stories(parent)
        && open(parent).is_empty()
        && parent.claimed.is_empty()
        && in_scope(parent).iter().all(|n| {
            parent
                .stories
                .iter()
                .any(|s| s.sprint == *n && s.completed())
        })
}

/// Whether the parent waits on its stories: they run its sprints, each in a session of its
/// own with its own prompts, and nothing is written in the parent until the final QA.
pub fn waits_on_stories(parent: &Session) -> bool {
    takes_stories(parent) && !parent.stories.is_empty() && !final_qa_due(parent)
}

/// The stage whose role prompt the host needs now: QA when the final QA is due, else
/// the current stage.
pub fn prompt_stage(s: &Session) -> Stage {
    if final_qa_due(s) {
        Stage::Qa
    } else {
        s.current_stage
    }
}
