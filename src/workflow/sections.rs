//! The sections each stage's document is expected to have: their display names and the
//! heading words that count as each. The stage table ([`super::stage`]) points each stage
//! at its list; the quality estimate and the guidance read them from there.

/// A quality a stage's document is checked for beyond its sections, when it falls below
/// the gate; each stage is checked only for what its own prompt asks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Numbers with units.
    Measurable,
    /// Given/When/Then or "acceptance criteria".
    AcceptanceCriteria,
    Dependencies,
    ErrorCases,
    /// A timeline or milestones.
    Timeline,
}

pub const PO_CHECKS: &[Check] = &[
    Check::Measurable,
    Check::AcceptanceCriteria,
    Check::Dependencies,
    Check::ErrorCases,
    Check::Timeline,
];
pub const ARCHITECT_CHECKS: &[Check] = &[Check::Measurable, Check::Dependencies, Check::ErrorCases];
pub const SM_CHECKS: &[Check] = &[Check::Dependencies, Check::Timeline];
pub const DEV_CHECKS: &[Check] = &[];
pub const REVIEW_CHECKS: &[Check] = &[];
pub const QA_CHECKS: &[Check] = &[Check::Measurable];

/// One expected section: its display name and the heading words that count as it.
#[derive(Debug)]
pub struct Section {
    pub name: &'static str,
    pub any_of: &'static [&'static str],
}

const fn sec(name: &'static str, any_of: &'static [&'static str]) -> Section {
    Section { name, any_of }
}

pub const PO: &[Section] = &[
    sec(
        "Executive Summary",
        &["executive summary", "summary", "overview"],
    ),
    sec(
        "Business Goals",
        &["business goal", "business objective", "goals"],
    ),
    sec("User Stories", &["user stor"]),
    sec("Functional Requirements", &["functional requirement"]),
    sec(
        "Technical Requirements",
        &["technical requirement", "non-functional", "nonfunctional"],
    ),
    sec("Success Metrics", &["success metric", "kpi", "metrics"]),
];

pub const ARCHITECT: &[Section] = &[
    sec("System Overview", &["overview", "summary", "context"]),
    sec(
        "Technology Stack",
        &["technology stack", "tech stack", "technolog"],
    ),
    sec("Components", &["component", "module", "service"]),
    sec(
        "Data Model",
        &["data model", "schema", "database", "storage", "format"],
    ),
    // The interface of a service, a library or a command-line tool.
    sec(
        "Interface (API, commands)",
        &["api", "interface", "endpoint", "command", "usage"],
    ),
    sec("Security", &["security", "auth"]),
];

pub const SM: &[Section] = &[
    sec("Sprint Overview", &["overview", "summary", "goal"]),
    sec("Sprints", &["sprint 1", "sprint"]),
    sec("Tasks", &["task", "backlog", "stor"]),
    sec("Estimates", &["estimat", "story point", "effort"]),
    sec("Dependencies", &["dependenc"]),
    sec("Risks", &["risk"]),
];

pub const DEV: &[Section] = &[
    sec("Summary", &["summary", "overview"]),
    sec("Changes", &["change", "files", "implementation"]),
    sec("Tests", &["test"]),
    sec("How to Run", &["run", "usage", "setup", "build"]),
    sec(
        "Known Issues",
        &["known issue", "limitation", "todo", "follow-up"],
    ),
    sec("Sprint Scope", &["sprint", "scope"]),
];

pub const REVIEW: &[Section] = &[
    sec("Summary", &["summary", "overview"]),
    sec("Findings", &["finding", "issue"]),
    sec("Security", &["security"]),
    sec("Performance", &["performance"]),
    sec(
        "Recommendations",
        &["recommendation", "suggest", "action item"],
    ),
    sec("Review Status", &["status", "verdict"]),
];

pub const QA: &[Section] = &[
    sec("Test Strategy", &["strategy", "approach", "scope"]),
    sec("Test Cases", &["test case"]),
    sec("Results", &["result"]),
    sec("Coverage", &["coverage"]),
    sec("Defects", &["defect", "bug", "issue"]),
    sec(
        "Recommendation",
        &["recommendation", "release", "sign-off", "conclusion"],
    ),
];
