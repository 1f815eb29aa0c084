//! The matrix in brief, as every view shows it: counts, and the ids that need attention,
//! bounded whatever the PRD's size.

use schemars::JsonSchema;
use serde::Serialize;

/// The matrix as every view shows it: counts, and the ids that need attention (at most ten
/// per list, then how many more), whatever the PRD's size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Summary {
    /// Requirements (`FR`, `NFR`) and acceptance criteria (`AC`) the PRD defines.
    pub requirements: usize,
    pub criteria: usize,
    /// Requirements a component names, and a sprint plans.
    pub designed: usize,
    pub planned: usize,
    /// Ids in the approved scope, once approved; with a passing result, once verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_scope: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passing: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unplanned: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undesigned: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub without_pass: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accepted_risk: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// The whole matrix, one row per id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
}

impl Summary {
    /// One paragraph: `Trace: 3 requirements, 0 criteria; designed 3, planned 2, in scope
    /// 2, passing 1. Planned nowhere: FR-3. …`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "Trace: {}, {}; designed {}, planned {}",
            super::count(self.requirements, "requirement", "requirements"),
            super::count(self.criteria, "acceptance criterion", "acceptance criteria"),
            self.designed,
            self.planned
        );
        if let Some(n) = self.in_scope {
            out.push_str(&format!(", in scope {n}"));
        }
        if let Some(n) = self.passing {
            out.push_str(&format!(", passing {n}"));
        }
        out.push('.');
        for (label, list) in [
            ("Planned in no sprint", &self.unplanned),
            ("Left out of the approved scope", &self.left_out),
            ("Named by no component", &self.undesigned),
            ("In scope without a passing result", &self.without_pass),
            ("Accepted as a risk", &self.accepted_risk),
            ("Ids the PRD does not define", &self.unknown),
        ] {
            if !list.is_empty() {
                out.push_str(&format!(" {label}: {}.", list.join(", ")));
            }
        }
        if let Some(i) = &self.intent {
            out.push_str(&format!(" Intent: {i}."));
        }
        if let Some(m) = &self.matrix {
            out.push_str(&format!(" Matrix: {m}."));
        }
        out
    }
}
