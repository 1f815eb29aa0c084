//! Stories: each approved sprint of a full-track task run as a session of its own (the
//! `story` track: development, review, QA of that sprint), linked to its parent
//! (docs/spec.md §18.2). This is the pure part: what a story's shared entry says, which
//! sprints a parent's stories must cover, and when the parent's final QA is due. Where
//! the entries live (the git common directory) is the store's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::session::{Session, State};
use super::stage::Stage;
use super::track::Track;

/// A story's link to its parent task, and who runs it where .
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoryLink {
    pub parent_session_id: String,
    pub parent_task: String,
    /// The sprint of the parent's approved plan this story builds.
    pub sprint: u32,
    pub sprint_title: String,
    /// Who runs it (`BMAD_OWNER`, else git's `user.name` and `user.email`).
    pub owner: String,
    /// The git branch checked out where it runs (none outside git).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The directory (git worktree) it runs in.
    pub worktree: String,
}

/// One story as its shared entry records it: who holds the sprint, where, and how far
/// the story got. The parent's `stories` are these entries as last read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoryState {
    pub sprint: u32,
    pub session_id: String,
    pub task_name: String,
    pub owner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub worktree: String,
    pub stage: Stage,
    pub state: State,
    pub updated_at: String,
}

impl StoryState {
    pub fn completed(&self) -> bool {
        self.state == State::Completed
    }

    /// Who holds the sprint, for a refusal or a listing: "alice on branch `s1` in /wt
    /// (story `t-sprint-1`, at dev/generating)".
    pub fn holder(&self) -> String {
        format!(
            "{}{} in {} (story `{}`, at {}/{})",
            self.owner,
            self.branch
                .as_deref()
                .map(|b| format!(" on branch `{b}`"))
                .unwrap_or_default(),
            self.worktree,
            self.task_name,
            self.stage,
            self.state
        )
    }
}

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

/// Whether the parent's final QA of the whole is due: every in-scope sprint was built
/// by a story that completed, and none is still open.
pub fn final_qa_due(parent: &Session) -> bool {
    takes_stories(parent)
        && open(parent).is_empty()
        && in_scope(parent).iter().all(|n| {
            parent
                .stories
                .iter()
                .any(|s| s.sprint == *n && s.completed())
        })
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
