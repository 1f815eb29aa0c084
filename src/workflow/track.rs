//! The tracks: which rows of the stage table a session runs, and in which order
//! (docs/spec.md §18). A track is data read by the one transition function, not a second
//! machine: the states, gates, evidence checks, dialog and audit of each stage are the
//! stage table's whatever the track. What the tracks make of a stage is here too: the
//! states it can be in (the last stage of a track completes the session), and whether it
//! is the first to build the approved scope.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sections::{self, Section};
use super::stage::{QualityGate, Stage, State};

/// The shape of a session's work, chosen at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Track {
    /// The six stages: PRD, architecture, sprint plan, development, review, QA.
    #[default]
    Full,
    /// A small change: a short technical spec the human confirms, development, review.
    Quick,
    /// A bug: a report with reproduction steps and expected behaviour the human
    /// confirms, development that writes a failing test first, review.
    Fix,
    /// One approved sprint of a parent task: development, review and QA of that sprint
    /// alone (started with `parent` and `sprint`, never by name).
    Story,
}

/// Every per-track fact, one row per track.
struct TrackInfo {
    id: &'static str,
    description: &'static str,
    /// The stages the track runs, in order (each track is increasing in [`Stage`]'s
    /// order, so "later" means the same in every track).
    stages: &'static [Stage],
    /// Sections a stage's document must have in this track beyond the stage's own; a
    /// document without one stops at the human as a failing check does.
    requires: &'static [(Stage, &'static [Section])],
    /// The track a human may promote a session of this track to, keeping what was written.
    promotes_to: Option<Track>,
}

const TABLE: [TrackInfo; 4] = [
    TrackInfo {
        id: "full",
        description: "PRD → architecture → sprint plan → development → review → QA",
        stages: &[
            Stage::Po,
            Stage::Architect,
            Stage::Sm,
            Stage::Dev,
            Stage::Review,
            Stage::Qa,
        ],
        requires: &[],
        promotes_to: None,
    },
    TrackInfo {
        id: "quick",
        description: "technical spec → development → review",
        stages: &[Stage::Spec, Stage::Dev, Stage::Review],
        requires: &[],
        promotes_to: Some(Track::Full),
    },
    TrackInfo {
        id: "fix",
        description: "bug report → development with a failing test first → review",
        stages: &[Stage::Bug, Stage::Dev, Stage::Review],
        requires: &[(Stage::Dev, sections::FAILING_TEST)],
        promotes_to: None,
    },
    TrackInfo {
        id: "story",
        description: "one sprint of a parent task: development → review → QA",
        stages: &[Stage::Dev, Stage::Review, Stage::Qa],
        requires: &[],
        promotes_to: None,
    },
];

impl Track {
    pub const ALL: [Track; 4] = [Track::Full, Track::Quick, Track::Fix, Track::Story];

    fn info(self) -> &'static TrackInfo {
        &TABLE[self as usize]
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    pub fn description(self) -> &'static str {
        self.info().description
    }

    /// A track `start` accepts by name (`story` is started from a parent task).
    pub fn parse(id: &str) -> Option<Track> {
        Track::ALL
            .into_iter()
            .find(|t| t.id() == id && *t != Track::Story)
    }

    pub fn stages(self) -> &'static [Stage] {
        self.info().stages
    }

    pub fn contains(self, stage: Stage) -> bool {
        self.stages().contains(&stage)
    }

    /// The stage a session of this track starts at.
    pub fn first(self) -> Stage {
        self.stages()[0]
    }

    /// The last stage of this track: completing it completes the session.
    pub fn last(self) -> Stage {
        self.stages()[self.stages().len() - 1]
    }

    pub fn is_last(self, stage: Stage) -> bool {
        self.last() == stage
    }

    /// The stage after `stage` in this track (none after the last, or for a stage the
    /// track does not run).
    pub fn next(self, stage: Stage) -> Option<Stage> {
        let at = self.stages().iter().position(|s| *s == stage)?;
        self.stages().get(at + 1).copied()
    }

    /// The stages of this track in `(after, up_to]`, in order.
    pub fn between(self, after: Stage, up_to: Stage) -> impl Iterator<Item = Stage> {
        self.stages()
            .iter()
            .copied()
            .filter(move |s| *s > after && *s <= up_to)
    }

    /// The sections `stage`'s document must have in this track beyond its own.
    pub fn required_sections(self, stage: Stage) -> &'static [Section] {
        self.info()
            .requires
            .iter()
            .find(|(s, _)| *s == stage)
            .map_or(&[], |(_, secs)| *secs)
    }

    pub fn promotes_to(self) -> Option<Track> {
        self.info().promotes_to
    }
}

impl Stage {
    /// The first stage to build the approved scope (development).
    pub fn builds_scope(self) -> bool {
        Track::Full.next(Stage::approval()) == Some(self)
    }

    /// The states a session can be in at this stage, as its gate allows.
    pub fn states(self) -> Vec<State> {
        let mut v = vec![State::Generating];
        match self.gate() {
            QualityGate::Score(_) => v.extend([
                State::Clarifying,
                State::Refining,
                State::AwaitingConfirmation,
            ]),
            QualityGate::Approval => v.extend([State::Refining, State::AwaitingApproval]),
            QualityGate::Verdict { .. } => v.push(State::AwaitingConfirmation),
            // A failing check stops at the human too.
            QualityGate::None if self.runs_checks() => v.push(State::AwaitingConfirmation),
            QualityGate::None => {}
        }
        // The last stage of a track completes the session.
        if Track::ALL.into_iter().any(|t| t.is_last(self)) {
            v.push(State::Completed);
        }
        v
    }
}

impl std::fmt::Display for Track {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_track_runs_increasing_rows_of_the_stage_table() {
        for t in Track::ALL {
            let stages = t.stages();
            assert!(stages.windows(2).all(|w| w[0] < w[1]), "{t}");
            assert_eq!(t.next(t.last()), None, "{t}");
            assert!(t
                .last()
                .states()
                .contains(&crate::workflow::State::Completed));
            assert_eq!(serde_json::to_value(t).unwrap(), t.id());
        }
        assert_eq!(Track::default(), Track::Full);
        assert_eq!(Track::Full.first(), Stage::Po);
        assert_eq!(
            Track::Quick.stages(),
            [Stage::Spec, Stage::Dev, Stage::Review]
        );
        assert_eq!(Track::Fix.stages(), [Stage::Bug, Stage::Dev, Stage::Review]);
        assert_eq!(
            Track::Story.stages(),
            [Stage::Dev, Stage::Review, Stage::Qa]
        );
        assert_eq!(Track::Quick.next(Stage::Spec), Some(Stage::Dev));
        assert_eq!(Track::Full.next(Stage::Spec), None);
    }

    #[test]
    fn story_is_not_started_by_name_and_only_quick_promotes() {
        assert_eq!(Track::parse("quick"), Some(Track::Quick));
        assert_eq!(Track::parse("story"), None);
        assert_eq!(Track::parse("Full"), None);
        let promotes: Vec<_> = Track::ALL
            .into_iter()
            .filter_map(|t| t.promotes_to().map(|to| (t, to)))
            .collect();
        assert_eq!(promotes, [(Track::Quick, Track::Full)]);
        assert_eq!(Track::Fix.required_sections(Stage::Dev).len(), 1);
        assert!(Track::Full.required_sections(Stage::Dev).is_empty());
    }

    #[test]
    fn each_stage_has_the_states_its_gate_allows() {
        use State::*;
        assert_eq!(
            Stage::Po.states(),
            [Generating, Clarifying, Refining, AwaitingConfirmation]
        );
        assert_eq!(Stage::Sm.states(), [Generating, Refining, AwaitingApproval]);
        assert_eq!(Stage::Dev.states(), [Generating, AwaitingConfirmation]);
        // Review is the last stage of the quick and fix tracks.
        assert_eq!(
            Stage::Review.states(),
            [Generating, AwaitingConfirmation, Completed]
        );
        for s in [Stage::Spec, Stage::Bug] {
            assert_eq!(s.states(), Stage::Po.states(), "{s}");
        }
        assert_eq!(
            Stage::Qa.states(),
            [Generating, AwaitingConfirmation, Completed]
        );
    }
}
