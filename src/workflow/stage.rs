//! The stages and the two engines: order, roles, artifact files, engines and gates, and
//! the states a stage goes through ([`State`]). Every per-stage fact lives in one table here so the rest of the code never matches on
//! stage names by hand; which of them a session runs, and in which order, is its track's
//! ([`super::track`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::engine::Engine;
use super::sections::{self, Check, Section};

/// A workflow stage. The derived `Ord` is an order in which every track's stages
/// increase (the first stages of the short tracks come before the full track's).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Spec,
    Bug,
    Po,
    Architect,
    Sm,
    Dev,
    Review,
    Qa,
}

/// How a stage's submission is judged: the gate its document passes (a score, the human's
/// approval, the document's own verdict), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QualityGate {
    /// Scored against a threshold, then the human confirms (`po`, `architect`).
    Score(u32),
    /// The human approves the plan and its scope (`sm`).
    Approval,
    /// Accepted as submitted while the document's own verdict passes; a failing one stops
    /// at the human, who accepts the risk or sends the work back to the generation of
    /// `back_to` with the findings (`review`, `qa`).
    Verdict { verdict: Verdict, back_to: Stage },
    /// Accepted as submitted (`dev`), unless the project's checks fail (see
    /// [`Stage::runs_checks`]).
    None,
}

/// What a document says of the work it judges, and when that fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `Review Status: Fail` fails.
    ReviewStatus,
    /// A stated `Quality Score: N/100` below this fails.
    QualityScore(u32),
}

/// A marker a stage's document carries, read by the server from the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// `## Sprint N: Title` headings: the sprints the human chooses the scope from.
    Sprints,
    /// `Review Status: Pass|Pass with Risk|Fail`.
    ReviewStatus,
    /// `Quality Score: N/100` closing the report.
    QualityScore,
}

/// Which of the session's engines write a stage's document (docs/spec.md §6.3, with the session's
/// engines as the host declared them at `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engines {
    /// This engine, in every session: the session must run it.
    Only(Engine),
    /// Every engine the session runs, each on its own; the better draft is kept.
    Every,
    /// This engine when the session runs it, else the session's first (the host's own
    /// model): a host without a second model is never asked for one.
    Prefer(Engine),
}

/// Every per-stage fact, one row per stage.
struct StageInfo {
    id: &'static str,
    role: &'static str,
    description: &'static str,
    artifact_file: &'static str,
    gate: QualityGate,
    engines: Engines,
    markers: &'static [Marker],
    /// The submission fields that carry this stage's document, in order of preference.
    document_fields: &'static [&'static str],
    sections: &'static [Section],
    /// What a below-gate document is checked for beyond its sections.
    checks: &'static [Check],
    /// The role prompt (`prompts/<stage>.md`), embedded at build time.
    prompt: &'static str,
    /// Whether the server runs the project's checks on a submission of this stage, which
    /// cannot complete while one fails unless the human accepts the failure.
    runs_checks: bool,
}

const PASSING_SCORE: u32 = 90;

const TABLE: [StageInfo; 8] = [
    StageInfo {
        id: "spec",
        role: "Tech Lead",
        description: "A small change: the short technical spec",
        artifact_file: "01-technical-spec.md",
        gate: QualityGate::Score(PASSING_SCORE),
        engines: Engines::Only(Engine::Claude),
        markers: &[Marker::QualityScore],
        document_fields: &["technical_spec", "spec_updated"],
        sections: sections::SPEC,
        checks: &[Check::AcceptanceCriteria],
        prompt: include_str!("../../prompts/spec.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "bug",
        role: "Bug Triager",
        description: "A bug: the report with reproduction steps and expected behaviour",
        artifact_file: "01-bug-report.md",
        gate: QualityGate::Score(PASSING_SCORE),
        engines: Engines::Only(Engine::Claude),
        markers: &[Marker::QualityScore],
        document_fields: &["bug_report", "bug_report_updated"],
        sections: sections::BUG,
        checks: &[],
        prompt: include_str!("../../prompts/bug.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "po",
        role: "Product Owner",
        description: "Requirements analysis: the product requirements document (PRD)",
        artifact_file: "01-product-requirements.md",
        gate: QualityGate::Score(PASSING_SCORE),
        engines: Engines::Every,
        markers: &[Marker::QualityScore],
        document_fields: &["prd_draft", "prd_updated"],
        sections: sections::PO,
        checks: &[
            Check::Measurable,
            Check::AcceptanceCriteria,
            Check::Dependencies,
            Check::ErrorCases,
            Check::Timeline,
        ],
        prompt: include_str!("../../prompts/po.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "architect",
        role: "System Architect",
        description: "Technical design: the system architecture document",
        artifact_file: "02-system-architecture.md",
        gate: QualityGate::Score(PASSING_SCORE),
        engines: Engines::Every,
        markers: &[Marker::QualityScore],
        document_fields: &["architecture_draft", "architecture_updated"],
        sections: sections::ARCHITECT,
        checks: &[Check::Measurable, Check::Dependencies, Check::ErrorCases],
        prompt: include_str!("../../prompts/architect.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "sm",
        role: "Scrum Master",
        description: "Sprint planning: the sprint plan",
        artifact_file: "03-sprint-plan.md",
        gate: QualityGate::Approval,
        engines: Engines::Only(Engine::Claude),
        markers: &[Marker::Sprints],
        document_fields: &["sprint_plan", "sprint_plan_updated"],
        sections: sections::SM,
        checks: &[Check::Dependencies, Check::Timeline],
        prompt: include_str!("../../prompts/sm.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "dev",
        role: "Developer",
        description: "Implementation: the code and its implementation report",
        artifact_file: "code-implementation.md",
        gate: QualityGate::None,
        engines: Engines::Prefer(Engine::Codex),
        markers: &[],
        document_fields: &["implementation", "dev_result"],
        sections: sections::DEV,
        checks: &[],
        prompt: include_str!("../../prompts/dev.md"),
        runs_checks: true,
    },
    StageInfo {
        id: "review",
        role: "Code Reviewer",
        description: "Code review: the review report",
        artifact_file: "04-dev-reviewed.md",
        gate: QualityGate::Verdict {
            verdict: Verdict::ReviewStatus,
            back_to: Stage::Dev,
        },
        engines: Engines::Prefer(Engine::Codex),
        markers: &[Marker::ReviewStatus],
        document_fields: &["review", "review_result"],
        sections: sections::REVIEW,
        checks: &[],
        prompt: include_str!("../../prompts/review.md"),
        runs_checks: false,
    },
    StageInfo {
        id: "qa",
        role: "QA Engineer",
        description: "Testing: the QA report",
        artifact_file: "05-qa-report.md",
        gate: QualityGate::Verdict {
            verdict: Verdict::QualityScore(PASSING_SCORE),
            back_to: Stage::Dev,
        },
        engines: Engines::Prefer(Engine::Codex),
        markers: &[Marker::QualityScore],
        document_fields: &["qa_report", "test_report"],
        sections: sections::QA,
        checks: &[Check::Measurable],
        prompt: include_str!("../../prompts/qa.md"),
        runs_checks: true,
    },
];

/// Fields that may carry any stage's document, after the stages' own.
pub const GENERIC_DOCUMENT_FIELDS: [&str; 3] = ["draft", "result", "content"];

impl Stage {
    pub const ALL: [Stage; 8] = [
        Stage::Spec,
        Stage::Bug,
        Stage::Po,
        Stage::Architect,
        Stage::Sm,
        Stage::Dev,
        Stage::Review,
        Stage::Qa,
    ];

    /// The stage a session of the default (full) track starts at.
    pub const FIRST: Stage = Stage::Po;

    /// The position in delivery order (0 for the first stage).
    pub fn index(self) -> usize {
        self as usize
    }

    fn info(self) -> &'static StageInfo {
        &TABLE[self.index()]
    }

    pub fn id(self) -> &'static str {
        self.info().id
    }

    pub fn role(self) -> &'static str {
        self.info().role
    }

    pub fn description(self) -> &'static str {
        self.info().description
    }

    pub fn artifact_file(self) -> &'static str {
        self.info().artifact_file
    }

    pub fn gate(self) -> QualityGate {
        self.info().gate
    }

    pub fn markers(self) -> &'static [Marker] {
        self.info().markers
    }

    pub fn has_marker(self, marker: Marker) -> bool {
        self.markers().contains(&marker)
    }

    pub fn document_fields(self) -> &'static [&'static str] {
        self.info().document_fields
    }

    pub fn sections(self) -> &'static [Section] {
        self.info().sections
    }

    pub fn checks(self) -> &'static [Check] {
        self.info().checks
    }

    pub fn prompt_source(self) -> &'static str {
        self.info().prompt
    }

    /// Whether a submission of this stage is checked by running the project's checks.
    pub fn runs_checks(self) -> bool {
        self.info().runs_checks
    }

    /// The passing score of a scored stage.
    pub fn passing_score(self) -> Option<u32> {
        match self.gate() {
            QualityGate::Score(s) => Some(s),
            _ => None,
        }
    }

    /// The verdict a stage's document gives on the work, when a failing one stops at the
    /// human.
    pub fn verdict(self) -> Option<Verdict> {
        match self.gate() {
            QualityGate::Verdict { verdict, .. } => Some(verdict),
            _ => None,
        }
    }

    pub fn parse(id: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The stage whose document the human approves with a scope (the sprint plan).
    pub fn approval() -> Stage {
        Stage::ALL
            .into_iter()
            .find(|s| s.gate() == QualityGate::Approval)
            .unwrap_or(Stage::FIRST)
    }

    /// Whether this stage works within the scope approved at [`Stage::approval`].
    pub fn works_in_scope(self) -> bool {
        self > Stage::approval()
    }

    /// The engines that write this stage's document in a session that runs `session`
    /// (its engines, fixed at `start`); never one the session does not run, unless the
    /// stage table gives the stage to it alone (then every session must run it, see
    /// [`Stage::required_engines`]).
    pub fn engines(self, session: &[Engine]) -> Vec<Engine> {
        let first = session.first().copied().unwrap_or(Engine::HOST);
        match self.info().engines {
            Engines::Every if session.is_empty() => vec![first],
            Engines::Every => session.to_vec(),
            Engines::Only(e) => vec![e],
            Engines::Prefer(e) if session.contains(&e) => vec![e],
            Engines::Prefer(_) => vec![first],
        }
    }

    /// The engines some stage is given alone: every session's list must hold them.
    pub fn required_engines() -> Vec<Engine> {
        let mut out: Vec<Engine> = Vec::new();
        for s in Stage::ALL {
            if let Engines::Only(e) = s.info().engines {
                if !out.contains(&e) {
                    out.push(e);
                }
            }
        }
        out
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Generating,
    Clarifying,
    Refining,
    AwaitingConfirmation,
    AwaitingApproval,
    Completed,
}

impl State {
    pub const ALL: [State; 6] = [
        State::Generating,
        State::Clarifying,
        State::Refining,
        State::AwaitingConfirmation,
        State::AwaitingApproval,
        State::Completed,
    ];

    pub fn id(self) -> &'static str {
        match self {
            State::Generating => "generating",
            State::Clarifying => "clarifying",
            State::Refining => "refining",
            State::AwaitingConfirmation => "awaiting_confirmation",
            State::AwaitingApproval => "awaiting_approval",
            State::Completed => "completed",
        }
    }

    /// Whether the host writes in this state: the stage's document, first or again (the
    /// states in which a role prompt is handed over).
    pub fn host_writes(self) -> bool {
        matches!(self, State::Generating | State::Refining)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::super::track::Track;
    use super::*;

    #[test]
    fn every_stage_is_in_some_track_and_the_full_track_chains_from_first() {
        let mut s = Stage::FIRST;
        let mut seen = vec![s];
        while let Some(n) = Track::Full.next(s) {
            assert!(n > s);
            seen.push(n);
            s = n;
        }
        assert_eq!(seen, Track::Full.stages());
        for s in Stage::ALL {
            assert!(Track::ALL.into_iter().any(|t| t.contains(s)), "{s}");
        }
    }

    #[test]
    fn ids_round_trip_through_parse_and_serde() {
        for s in Stage::ALL {
            assert_eq!(Stage::parse(s.id()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.id());
        }
        assert_eq!(Stage::parse("../po"), None);
    }

    #[test]
    fn engines_follow_the_spec_table_within_the_sessions_engines() {
        use Engine::*;
        let both = [Claude, Codex];
        assert_eq!(Stage::Po.engines(&both), [Claude, Codex]);
        assert_eq!(Stage::Architect.engines(&[Claude]), [Claude]);
        assert_eq!(Stage::Sm.engines(&both), [Claude]);
        for s in [Stage::Dev, Stage::Review, Stage::Qa] {
            assert_eq!(s.engines(&both), [Codex], "{s}");
            // A session without a second model is never asked for one.
            assert_eq!(s.engines(&[Claude]), [Claude], "{s}");
        }
        for s in Stage::ALL {
            for session in [&[Claude][..], &both[..]] {
                let engines = s.engines(session);
                assert!(!engines.is_empty());
                assert!(engines.iter().all(|e| session.contains(e)), "{s}");
            }
        }
        assert_eq!(Stage::required_engines(), [Claude]);
    }

    #[test]
    fn the_table_rows_are_in_the_enum_order() {
        for (i, s) in Stage::ALL.into_iter().enumerate() {
            assert_eq!(s.index(), i);
            assert_eq!(serde_json::to_value(s).unwrap(), TABLE[i].id);
            assert!(!s.document_fields().is_empty() && !s.sections().is_empty());
            assert!(s.prompt_source().contains("# Role:"), "{s}");
        }
        assert_eq!(Track::Full.first(), Stage::FIRST);
    }

    #[test]
    fn the_sprint_plan_is_the_approved_scope_that_later_stages_work_in() {
        assert_eq!(Stage::approval(), Stage::Sm);
        assert!(Stage::Sm.has_marker(Marker::Sprints));
        assert!(Stage::Review.has_marker(Marker::ReviewStatus));
        assert!(Stage::Qa.has_marker(Marker::QualityScore));
        let in_scope: Vec<Stage> = Stage::ALL
            .into_iter()
            .filter(|s| s.works_in_scope())
            .collect();
        assert_eq!(in_scope, [Stage::Dev, Stage::Review, Stage::Qa]);
        let builders: Vec<Stage> = Stage::ALL
            .into_iter()
            .filter(|s| s.builds_scope())
            .collect();
        assert_eq!(builders, [Stage::Dev]);
    }

    #[test]
    fn only_the_first_documents_of_each_track_are_scored() {
        assert_eq!(Stage::Spec.passing_score(), Some(90));
        assert_eq!(Stage::Bug.passing_score(), Some(90));
        assert_eq!(Stage::Po.passing_score(), Some(90));
        assert_eq!(Stage::Architect.passing_score(), Some(90));
        assert_eq!(Stage::Sm.gate(), QualityGate::Approval);
        assert_eq!(Stage::Dev.gate(), QualityGate::None);
        assert_eq!(Stage::Qa.passing_score(), None);
    }

    #[test]
    fn a_failing_review_or_qa_report_sends_the_work_back_to_development() {
        let judged: Vec<(Stage, Verdict)> = Stage::ALL
            .into_iter()
            .filter_map(|s| s.verdict().map(|v| (s, v)))
            .collect();
        assert_eq!(
            judged,
            [
                (Stage::Review, Verdict::ReviewStatus),
                (Stage::Qa, Verdict::QualityScore(90))
            ]
        );
        for (stage, _) in judged {
            let QualityGate::Verdict { back_to, .. } = stage.gate() else {
                unreachable!()
            };
            assert!(back_to.builds_scope() && back_to < stage, "{stage}");
            // The verdict is read from a marker the stage's document carries.
            assert!(!stage.markers().is_empty());
        }
    }
}
