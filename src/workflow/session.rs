//! The session as it is stored in `.bmad-task/session-<id>.json`: plain serde types whose
//! field names are the ones users query with `jq`. Large texts never live here, only
//! [`ContentRef`]s pointing at files.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::action::Action;
use super::decision::{DecidedBy, Provenance, Via};
use super::evidence::CheckRun;
use super::person::Person;
use super::stage::{Engine, Stage};
use super::story::{StoryLink, StoryState};
use super::track::Track;

pub use super::basis::Basis;
pub use super::content::{summarize, timestamp, ContentRef, SUMMARY_CHARS};
pub use super::records::StageRecords;
pub use super::stage::State;

/// Bumped whenever the stored layout changes incompatibly.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScoreSource {
    /// The document stated its own score.
    Reported,
    /// No score was stated; the server estimated one from the document's content.
    Estimated,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    pub id: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The clarification round (1, 2, …) in which the question was asked.
    pub round: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Sprint {
    pub number: u32,
    pub title: String,
}

/// A stage document as written to `.claude/specs/<task_name>/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    pub path: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StageRecord {
    pub status: StageStatus,
    /// Submissions accepted in this stage.
    pub iteration: u32,
    /// Scored submissions of this stage that stayed below the gate: what the round cap
    /// counts (a passing draft the human sent back is not one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below_gate: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u32>,
    /// The score of each engine's candidate in the latest submission.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scores: BTreeMap<Engine, u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_source: Option<ScoreSource>,
    /// A score the latest submission stated that is not a number from 0 to 100 (`high`),
    /// as written (clipped): named as unreadable, never as "no score stated".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_unreadable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_passed: Option<bool>,
    /// Sections the stage requires that the server's own check did not find in the
    /// latest scored submission (a score alone does not pass the gate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_sections: Vec<String>,
    /// … and those it found with nothing under their heading.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_sections: Vec<String>,
    /// The engine whose candidate was kept in the latest submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_engine: Option<Engine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_result_ref: Option<ContentRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_result_ref: Option<ContentRef>,
    /// The stage document as saved in `.claude/specs/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_result_ref: Option<ContentRef>,
    /// The latest document that did not (yet) become the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_ref: Option<ContentRef>,
    #[serde(default)]
    pub questions: Vec<Question>,
    #[serde(default)]
    pub answers: BTreeMap<String, String>,
    #[serde(default)]
    pub gaps: Vec<String>,
    /// Every rejection's feedback, oldest first.
    #[serde(default)]
    pub feedback: Vec<String>,
    /// The human's words from decisions on other stages that this stage's role prompt
    /// shows, oldest first: a note given while accepting an earlier stage, the cause of
    /// a send-back that made this stage run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each report of this stage that sent the work back, kept per round in a file of its
    /// own (`<report>.round-<n>.md`), which the send-back's feedback names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_reports: Vec<ContentRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The approval scope as the human gave it (`all`, `sprint 1`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The sprint numbers the approved scope names, all of them sprints of the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_sprints: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sprints: Vec<Sprint>,
    /// `Pass`, `Pass with Risk` or `Fail`, as the review stated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_status: Option<String>,
    /// The human confirmed a document whose own verdict failed (`Review Status: Fail`, a
    /// QA score below the gate): the risk is theirs, and the workflow went on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted_risk: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// The requirement ids this stage's document defines, names or verifies, as the server
    /// read them (docs/traceability.md).
    #[serde(default, skip_serializing_if = "super::trace::Traced::is_empty")]
    pub trace: super::trace::Traced,
    /// The project's checks as the server ran them on the latest submission (dev, QA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckRun>,
    /// In a git repository: the commit the stage document was written against, when it was
    /// saved (what the drift warning compares with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_against: Option<Basis>,
}

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
            }],
            notices_given: Vec::new(),
            created_at: at.clone(),
            updated_at: at,
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

    /// `.claude/specs/<task_name>`, relative to the project.
    pub fn specs_dir(&self) -> String {
        format!(".claude/specs/{}", self.task_name)
    }

    pub fn artifact_path(&self, stage: Stage) -> String {
        format!("{}/{}", self.specs_dir(), stage.artifact_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_session_starts_at_po_generating_with_all_stages() {
        let s = Session::new(
            "id".into(),
            "t".into(),
            "/p".into(),
            "o".into(),
            vec![Engine::Claude],
            Utc::now(),
        );
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
