//! What one stage's document says of the requirement ids, as the server read it and the
//! stage's record keeps it (docs/traceability.md): the PRD's requirements, what later
//! documents name, the closing report's results and intent verdict. Reading the documents
//! and building the matrix from these is [`super::trace`]'s.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A requirement or acceptance criterion as the PRD defines it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Requirement {
    pub id: String,
    /// The text after the id on its line, cut to 100 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// For an acceptance criterion: the requirement ids its line names (its scope follows
    /// theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<String>,
}

/// A result the closing report states for an id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    NotTested,
    Fail,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::NotTested => "not tested",
            Outcome::Fail => "fail",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestResult {
    pub outcome: Outcome,
    /// The test, check or manual step given as evidence, cut to 80 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
}

/// Whether the product does what was asked, as the closing report states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Met {
    Met,
    Partly,
    NotMet,
    /// The report states no `Intent:` line, where the session's PRD carries ids.
    NotStated,
}

impl Met {
    pub fn word(self) -> &'static str {
        match self {
            Met::Met => "met",
            Met::Partly => "partly met",
            Met::NotMet => "not met",
            Met::NotStated => "not stated",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Intent {
    pub verdict: Met,
    /// What the product does not do that was asked, as the report names it (cut to 300).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unmet: String,
}

impl Intent {
    /// `Intent: not met (the export is missing)`.
    pub fn describe(&self) -> String {
        format!("Intent: {}", self.verdict_text())
    }

    /// The verdict alone, as a field holds it: `not met (the export is missing)`.
    pub fn verdict_text(&self) -> String {
        if self.unmet.is_empty() {
            self.verdict.word().to_string()
        } else {
            format!("{} ({})", self.verdict.word(), self.unmet)
        }
    }
}

/// An in-scope id without a passing result at the closing stage, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Open {
    pub id: String,
    /// `fail`, `not tested`, `no result`, `pass without evidence`.
    pub why: String,
}

/// What one stage's document says of the ids, as the server read it (kept in the stage's
/// record as `trace`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Traced {
    /// The PRD: its requirements and acceptance criteria, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defined: Vec<Requirement>,
    /// The PRD: duplicate ids, requirement sections without ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// The architecture: id → the components (headings) that name it; the developer's
    /// report: id → where it says it implemented it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub covers: BTreeMap<String, Vec<String>>,
    /// The sprint plan: id → the sprints that name it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sprints: BTreeMap<String, Vec<u32>>,
    /// The closing report: id → its result.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub results: BTreeMap<String, TestResult>,
    /// The closing report's intent verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<Intent>,
    /// The closing stage: in-scope ids without a passing result, when it was submitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<Open>,
    /// The closing stage: the open ids whose risk the human accepted, one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<Open>,
    /// The closing report: the earlier lessons it says this task resolved (`Resolves
    /// lesson: <id>`), retired when the task completes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolves: Vec<String>,
}

impl Traced {
    pub fn is_empty(&self) -> bool {
        *self == Traced::default()
    }
}
