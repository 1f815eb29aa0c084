//! The session as it is stored in `.bmad-task/session-<id>.json`: plain serde types whose
//! field names are the ones users query with `jq`. Large texts never live here, only
//! [`ContentRef`]s pointing at files. The parts a session is made of that live in files
//! of their own (its per-stage records, its state) are re-exported here.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::action::Action;
use super::decision::{DecidedBy, Provenance, Via};
use super::person::Person;
use super::stage::{Engine, Stage};
use super::track::Track;

pub use super::content::{summarize, timestamp, ContentRef, SUMMARY_CHARS};
pub use super::records::{
    Artifact, Question, ScoreSource, Sprint, StageRecord, StageRecords, StageStatus,
};
pub use super::stage::State;
pub use super::written_against::Basis;

/// Bumped whenever the stored layout changes incompatibly.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryEntry {
    pub at: String,
    pub action: Action,
    pub stage: Stage,
    pub from: Option<State>,
    pub to: State,
    /// For a decision (`answer`, `confirm`, `approve`, `reject`): who made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// … how it reached the server …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// … the person at the keyboard, as git (or `BMAD_OWNER`) names them …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decider: Option<Person>,
    /// … and the SHA-256 of the document it was about, as read at that moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// For a decision typed in the terminal: where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The human's own words given with the decision: the feedback of a `reject`, or the
    /// note given with a `confirm` or `approve` ("looks good, but add X").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// The lessons from earlier tasks that the role prompt handed with this step's reply
    /// carried: their ids, the files `.bmad/lessons/<id>.md` (docs/lessons.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lessons: Vec<String>,
    /// The SHA-256 of the words of each lesson this decision of the human's taught: a
    /// lesson file is quoted as the human's only where its words are ones of these (its
    /// task, stage and time can be copied from here; words other than the human's cannot
    /// pass for theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taught: Vec<String>,
}

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
    /// What the story's review stated (`Review Status:`), once stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_status: Option<String>,
    /// Whether its worktree was gone when last read (a deleted clone or worktree).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
}

impl StoryState {
    pub fn completed(&self) -> bool {
        self.state == State::Completed
    }

    /// The entry of a sprint built outside the server (the BMAD method's build) that a
    /// person accepted: completed, as after its QA, under `id` and `name`, `note` saying
    /// who accepted it and on what.
    pub fn accepted(
        sprint: u32,
        (id, name): (String, String),
        by: &str,
        worktree: String,
        note: String,
    ) -> StoryState {
        StoryState {
            sprint,
            session_id: id,
            task_name: name,
            owner: by.to_string(),
            branch: None,
            worktree,
            stage: Stage::Qa,
            state: State::Completed,
            updated_at: timestamp(chrono::Utc::now()),
            review_status: Some(note),
            gone: false,
        }
    }

    /// Who holds the sprint, for a refusal or a listing: "alice on branch `s1` in /wt
    /// (story `t-sprint-1`, at dev/generating)"; a worktree that is gone says so.
    pub fn holder(&self) -> String {
        let worktree = if self.gone {
            format!("{} (gone)", self.worktree)
        } else {
            self.worktree.clone()
        };
        format!(
            "{} (story `{}`, at {}/{})",
            held_by(&self.owner, self.branch.as_deref(), &worktree),
            self.task_name,
            self.stage,
            self.state
        )
    }
}

/// "Mia on branch `s1` in /w/mia": who holds a sprint, where.
pub fn held_by(owner: &str, branch: Option<&str>, worktree: &str) -> String {
    let branch = branch
        .map(|b| format!(" on branch `{b}`"))
        .unwrap_or_default();
    format!("{owner}{branch} in {worktree}")
}

/// A sprint of a parent claimed on the team's remote by a story this clone has not seen (one
/// of another clone, whose branch is not merged here), as the clone's last fetch of the
/// claims says: the sprint runs as a story elsewhere. Another clone's words: untrusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SprintClaim {
    pub sprint: u32,
    pub owner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub worktree: String,
    /// The machine the claim was taken on, when it is another than this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The remote that holds the claim.
    pub remote: String,
    /// When it was claimed (the claim's commit time).
    pub since: String,
    /// Its worktree is gone (claimed on this machine, no folder at its path now).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gone: bool,
    /// Its story completed in its clone; it counts here once its branch is merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
}

impl SprintClaim {
    /// "Mia on branch `s1` in /w/mia (on lab-7), claimed on the remote `origin` since …".
    pub fn holder(&self) -> String {
        let there = match (&self.host, self.gone) {
            (_, true) => " (gone)".to_string(),
            (Some(h), false) => format!(" (on {h})"),
            (None, false) => String::new(),
        };
        let done = self
            .done
            .as_ref()
            .map(|story| {
                format!(
                    "; its story `{story}` completed there, and counts here once its branch is merged"
                )
            })
            .unwrap_or_default();
        format!(
            "{}{there}, claimed on the remote `{}` since {}{done}",
            held_by(&self.owner, self.branch.as_deref(), &self.worktree),
            self.remote,
            self.since
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Session {
    pub schema_version: u32,
    pub session_id: String,
    pub task_name: String,
    /// Absolute path of the project directory where the session was last written. Never
    /// trusted: a session pulled into another clone is where it was found.
    pub cwd: String,
    /// Who started the task: `BMAD_OWNER`, else git's `user.name`/`user.email`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Person>,
    /// The git branch checked out at the latest change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub objective: String,
    /// The engines the host runs, fixed at `start`: `claude` (the host's own model) and,
    /// when listed, `codex` (a second model); the stage table says who writes each stage.
    pub engines: Vec<Engine>,
    /// The stages it runs (`full`, `quick`, `fix`, `story`); a file without it: `full`.
    #[serde(default)]
    pub track: Track,
    /// A story's parent task, sprint, owner, branch and worktree (docs/spec.md §18.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<StoryLink>,
    /// A parent's stories, as their shared entries said at its last change or `status`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stories: Vec<StoryState>,
    /// A parent's sprints claimed on the team's remote by stories of other clones not seen
    /// in `stories`, as the clone's last fetch of the claims said at its last change or
    /// `status`: they run as stories too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claimed: Vec<SprintClaim>,
    /// The task's epic in an installed BMAD method's sprint status and epics, chosen at the
    /// first approval of its plan so that it collides with no other epic there, and kept;
    /// a story has its parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_epic: Option<u32>,
    pub current_stage: Stage,
    pub current_state: State,
    #[schemars(with = "BTreeMap<Stage, StageRecord>")]
    pub stages: StageRecords,
    /// Paths of the saved stage documents, relative to the project, each once.
    pub artifacts: Vec<String>,
    pub history: Vec<HistoryEntry>,
    /// The notices of the policy said once per session, by key (`no_checks`): given in
    /// one reply, not repeated in the next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices_given: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl Session {
    pub fn new(
        session_id: String,
        task_name: String,
        cwd: String,
        objective: String,
        engines: Vec<Engine>,
        now: DateTime<Utc>,
    ) -> Session {
        let mut stages = StageRecords::default();
        stages.get_mut(Stage::FIRST).status = StageStatus::InProgress;
        let at = timestamp(now);
        Session {
            schema_version: SCHEMA_VERSION,
            session_id,
            task_name,
            cwd,
            owner: None,
            branch: None,
            objective,
            engines,
            track: Track::Full,
            story: None,
            stories: Vec::new(),
            claimed: Vec::new(),
            method_epic: None,
            current_stage: Stage::FIRST,
            current_state: State::Generating,
            stages,
            artifacts: Vec::new(),
            history: vec![HistoryEntry {
                at: at.clone(),
                action: Action::Start,
                stage: Stage::FIRST,
                from: None,
                to: State::Generating,
                decided_by: None,
                via: None,
                decider: None,
                digest: None,
                provenance: None,
                note: None,
                feedback: None,
                lessons: Vec::new(),
                taught: Vec::new(),
            }],
            notices_given: Vec::new(),
            created_at: at.clone(),
            updated_at: at,
        }
    }

    /// The one way a unit test makes a session: [`Session::new`] with the values no test
    /// cares about (a fixed id, task `t`, objective `o`, in `/p`, written by Claude alone,
    /// started now), each set by name where it matters ([`TestSession`]).
    #[cfg(test)]
    pub(crate) fn test() -> TestSession {
        TestSession {
            id: "00000000-0000-4000-8000-000000000000".into(),
            task: "t".into(),
            objective: "o".into(),
            engines: vec![Engine::Claude],
            at: Utc::now(),
        }
    }

    /// Puts a session that has not moved yet on `track`, at its first stage.
    pub fn begin_track(&mut self, track: Track) {
        let first = track.first();
        for rec in self.stages.iter_mut() {
            rec.status = StageStatus::Pending;
        }
        self.stages.get_mut(first).status = StageStatus::InProgress;
        self.track = track;
        self.current_stage = first;
        if let [entry] = self.history.as_mut_slice() {
            entry.stage = first;
        }
    }

    /// Whether the session's stage waits for its first draft: nothing was submitted there
    /// yet.
    pub fn awaits_first_draft(&self) -> bool {
        self.current_state == State::Generating && self.current().iteration == 0
    }

    /// Whether the session runs a second model beside the host's.
    pub fn dual_engine(&self) -> bool {
        self.engines.len() > 1
    }

    /// The engines that write `stage`'s document in this session.
    pub fn engines_for(&self, stage: Stage) -> Vec<Engine> {
        stage.engines(&self.engines)
    }

    pub fn record(&self, stage: Stage) -> &StageRecord {
        self.stages.get(stage)
    }

    pub fn record_mut(&mut self, stage: Stage) -> &mut StageRecord {
        self.stages.get_mut(stage)
    }

    pub fn current(&self) -> &StageRecord {
        self.record(self.current_stage)
    }

    /// The file that holds the session `id`, relative to the project.
    pub fn file_of(id: &str) -> String {
        format!(".bmad-task/session-{id}.json")
    }

    /// The mark in a task's specs folder that names the session it belongs to.
    pub fn owner_mark_of(task_name: &str) -> String {
        format!(".claude/specs/{task_name}/.bmad-session")
    }

    /// `.claude/specs/<task_name>`, relative to the project.
    pub fn specs_dir(&self) -> String {
        format!(".claude/specs/{}", self.task_name)
    }

    pub fn artifact_path(&self, stage: Stage) -> String {
        format!("{}/{}", self.specs_dir(), stage.artifact_file())
    }
}

/// A session for a unit test, made by [`Session::test`]: set what the test is about, then
/// [`TestSession::build`].
#[cfg(test)]
pub(crate) struct TestSession {
    id: String,
    task: String,
    objective: String,
    engines: Vec<Engine>,
    at: DateTime<Utc>,
}

#[cfg(test)]
impl TestSession {
    pub(crate) fn id(mut self, id: impl Into<String>) -> TestSession {
        self.id = id.into();
        self
    }

    pub(crate) fn task(mut self, task: impl Into<String>) -> TestSession {
        self.task = task.into();
        self
    }

    pub(crate) fn objective(mut self, objective: impl Into<String>) -> TestSession {
        self.objective = objective.into();
        self
    }

    pub(crate) fn engines(mut self, engines: Vec<Engine>) -> TestSession {
        self.engines = engines;
        self
    }

    /// When it started (its first history entry, `created_at`).
    pub(crate) fn at(mut self, at: DateTime<Utc>) -> TestSession {
        self.at = at;
        self
    }

    pub(crate) fn build(self) -> Session {
        Session::new(
            self.id,
            self.task,
            "/p".into(),
            self.objective,
            self.engines,
            self.at,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_starts_at_po_generating_with_all_stages() {
        let s = Session::test().id("id").build();
        assert_eq!(s.current_stage, Stage::Po);
        assert_eq!(s.current_state, State::Generating);
        assert_eq!(s.stages.len(), Stage::ALL.len());
        assert_eq!(s.track, Track::Full);
        assert_eq!(s.record(Stage::FIRST).status, StageStatus::InProgress);
        assert_eq!(s.engines, vec![Engine::Claude]);
        let json = serde_json::to_value(&s).unwrap();
        // Stage keys are the stage ids, in workflow order, as jq users read them.
        let keys: Vec<_> = json["stages"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys.len(), Stage::ALL.len());
        assert!(json["stages"]["po"]["status"] == "in_progress");
    }
}
