//! The six stages and the two engines: order, roles, artifact files, engines and gates.
//! Every per-stage fact lives in one table here so the rest of the code never matches on
//! stage names by hand.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A workflow stage, in delivery order (the derived `Ord` is the workflow order).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Po,
    Architect,
    Sm,
    Dev,
    Review,
    Qa,
}

/// How a stage's submission is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Scored against a threshold, then the human confirms (`po`, `architect`).
    Score(u32),
    /// The human approves the plan and its scope (`sm`).
    Approval,
    /// Accepted as submitted (`dev`, `review`, `qa`).
    None,
}

/// A model engine the host runs on the server's behalf.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    Claude,
    Codex,
}

impl Engine {
    pub fn id(self) -> &'static str {
        match self {
            Engine::Claude => "claude",
            Engine::Codex => "codex",
        }
    }

    /// The `submit` field that carries this engine's result.
    pub fn result_field(self) -> &'static str {
        match self {
            Engine::Claude => "claude_result",
            Engine::Codex => "codex_result",
        }
    }
}

struct StageInfo {
    id: &'static str,
    role: &'static str,
    description: &'static str,
    artifact_file: &'static str,
    gate: Gate,
}

const PASSING_SCORE: u32 = 90;

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Po,
        Stage::Architect,
        Stage::Sm,
        Stage::Dev,
        Stage::Review,
        Stage::Qa,
    ];

    fn info(self) -> StageInfo {
        let (id, role, description, artifact_file, gate) = match self {
            Stage::Po => (
                "po",
                "Product Owner",
                "Requirements analysis: the product requirements document (PRD)",
                "01-product-requirements.md",
                Gate::Score(PASSING_SCORE),
            ),
            Stage::Architect => (
                "architect",
                "System Architect",
                "Technical design: the system architecture document",
                "02-system-architecture.md",
                Gate::Score(PASSING_SCORE),
            ),
            Stage::Sm => (
                "sm",
                "Scrum Master",
                "Sprint planning: the sprint plan",
                "03-sprint-plan.md",
                Gate::Approval,
            ),
            Stage::Dev => (
                "dev",
                "Developer",
                "Implementation: the code and its implementation report",
                "code-implementation.md",
                Gate::None,
            ),
            Stage::Review => (
                "review",
                "Code Reviewer",
                "Code review: the review report",
                "04-dev-reviewed.md",
                Gate::None,
            ),
            Stage::Qa => (
                "qa",
                "QA Engineer",
                "Testing: the QA report",
                "05-qa-report.md",
                Gate::None,
            ),
        };
        StageInfo {
            id,
            role,
            description,
            artifact_file,
            gate,
        }
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

    pub fn gate(self) -> Gate {
        self.info().gate
    }

    /// The passing score of a scored stage.
    pub fn passing_score(self) -> Option<u32> {
        match self.gate() {
            Gate::Score(s) => Some(s),
            _ => None,
        }
    }

    pub fn parse(id: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.id() == id)
    }

    pub fn next(self) -> Option<Stage> {
        let i = Stage::ALL.iter().position(|s| *s == self)?;
        Stage::ALL.get(i + 1).copied()
    }

    /// The engines that generate this stage's document. `dual` is the session's choice,
    /// fixed at `start` from the objective (SPEC §6).
    pub fn engines(self, dual: bool) -> Vec<Engine> {
        match self {
            Stage::Po | Stage::Architect if dual => vec![Engine::Claude, Engine::Codex],
            Stage::Po | Stage::Architect | Stage::Sm => vec![Engine::Claude],
            Stage::Dev | Stage::Review | Stage::Qa => vec![Engine::Codex],
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// Whether an objective asks for the second engine: it names `codex` as a word.
/// A neighbouring CJK character counts as a boundary, so `使用codex` asks for codex too.
pub fn objective_wants_codex(objective: &str) -> bool {
    let lower = objective.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    lower.match_indices("codex").any(|(i, m)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + m.len()).copied();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_in_delivery_order_and_chain() {
        let mut s = Stage::Po;
        let mut seen = vec![s];
        while let Some(n) = s.next() {
            assert!(n > s);
            seen.push(n);
            s = n;
        }
        assert_eq!(seen, Stage::ALL);
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
    fn engines_follow_the_spec_table() {
        assert_eq!(Stage::Po.engines(true), vec![Engine::Claude, Engine::Codex]);
        assert_eq!(Stage::Architect.engines(false), vec![Engine::Claude]);
        assert_eq!(Stage::Sm.engines(true), vec![Engine::Claude]);
        for s in [Stage::Dev, Stage::Review, Stage::Qa] {
            assert_eq!(s.engines(true), vec![Engine::Codex]);
        }
    }

    #[test]
    fn codex_is_recognised_only_as_a_word() {
        assert!(objective_wants_codex("Build a CLI with codex"));
        assert!(objective_wants_codex("使用 codex 构建登录"));
        assert!(objective_wants_codex("Codex: build it"));
        assert!(objective_wants_codex("使用codex开发"));
        assert!(!objective_wants_codex("Build a codexample parser"));
        assert!(!objective_wants_codex("Build a todo app"));
    }

    #[test]
    fn only_po_and_architect_are_scored() {
        assert_eq!(Stage::Po.passing_score(), Some(90));
        assert_eq!(Stage::Architect.passing_score(), Some(90));
        assert_eq!(Stage::Sm.gate(), Gate::Approval);
        assert_eq!(Stage::Qa.gate(), Gate::None);
    }
}
