//! A parent task whose sprints ran as stories (docs/spec.md §18.2): its development and
//! review were the stories', and its submission at development is the final QA of the
//! whole once every in-scope story completed; while one is open, it is refused naming it.

use super::super::session::StageStatus;
use super::super::stage::Stage;
use super::super::story;
use super::{Step, WorkflowError};

impl Step<'_> {
    /// The stage a submission at `stage` is for: QA (moved to, with development and
    /// review recorded as built by the stories) when the parent's final QA is due and the
    /// submission names no other stage; refused while a story is open.
    pub(super) fn stories_done(
        &mut self,
        stage: Stage,
        given: Option<Stage>,
    ) -> Result<Stage, WorkflowError> {
        let s = &self.session;
        if !story::takes_stories(s) || !story::runs_as_stories(s) {
            return Ok(stage);
        }
        // Once its sprints run as stories (here, or claimed by another clone on the team's
        // remote), the parent's only submission is the final QA: a report of its own here
        // would stand for sprints the stories build.
        let mut pending: Vec<String> = story::open(s)
            .iter()
            .map(|o| format!("sprint {} (held by {})", o.sprint, o.holder()))
            .collect();
        pending.extend(
            s.claimed
                .iter()
                .map(|c| format!("sprint {} (held by {})", c.sprint, c.holder())),
        );
        for n in story::to_start(s) {
            pending.push(format!("sprint {n} (no story started)"));
        }
        if !pending.is_empty() {
            let verb = if pending.len() == 1 { "is" } else { "are" };
            return Err(WorkflowError::StoriesOpen {
                open: format!("{} {verb}", pending.join(", ")),
            });
        }
        if let Some(given) = given.filter(|g| *g != Stage::Qa) {
            return Err(WorkflowError::StageMismatch {
                given,
                current: Stage::Qa,
            });
        }
        let built: Vec<String> = s
            .stories
            .iter()
            .map(|o| {
                format!(
                    "sprint {} by story `{}` ({})",
                    o.sprint, o.task_name, o.owner
                )
            })
            .collect();
        let said = format!(
            "Built and reviewed as stories, each with its own QA: {}. This is the final QA of the whole: the sprints together, against the PRD and the plan.",
            built.join(", ")
        );
        let track = self.session.track;
        for done in track.between(Stage::approval(), Stage::Qa) {
            if done == Stage::Qa {
                continue;
            }
            let rec = self.session.record_mut(done);
            rec.status = StageStatus::Completed;
            rec.notes.push(said.clone());
        }
        let qa = self.session.record_mut(Stage::Qa);
        qa.status = StageStatus::InProgress;
        qa.notes.push(said.clone());
        self.session.current_stage = Stage::Qa;
        self.facts.notices.push(said);
        Ok(Stage::Qa)
    }
}
