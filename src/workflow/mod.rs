//! The pure workflow core: actions, stages, the stored session and the questions the
//! layers above ask of its history, the rules and the transition function, the record
//! of what each change did, reading submissions and estimating quality. No I/O, no clock, no
//! protocol types.

pub mod action;
pub mod authorship;
mod content;
pub mod decision;
pub mod dev_round;
pub mod effects;
pub mod engine;
pub mod error;
pub mod evidence;
mod failing_test;
pub mod history;
pub mod machine;
pub mod patterns;
pub mod person;
pub mod quality;
mod records;
mod requirement_record;
pub mod rules;
pub mod scope;
pub mod score;
pub mod sections;
pub mod session;
pub mod stage;
pub mod story;
pub mod submission;
pub mod trace;
pub mod track;
pub mod when;
mod written_against;

pub use action::Action;
pub use decision::{DecidedBy, Decision, Provenance, Via};
pub use effects::{Effects, Risk, Written};
pub use error::WorkflowError;
pub use evidence::{CheckOutcome, CheckResult, CheckRun, Evidence, GitState};
pub use machine::{apply, apply_observed, Command, Facts, FileWrite, Outcome};
pub use person::Person;
pub use rules::{allowed_actions, is_legal};
pub use session::{ContentRef, Session, State};
pub use stage::{Engine, Stage};
pub use track::Track;

/// Every regular expression of the core ([`crate::layers`] reads the sources to keep the list
/// whole).
pub static PATTERNS: [&patterns::Pattern; 13] = [
    &failing_test::NAMES_A_TEST,
    &failing_test::SAYS_IT_FAILED,
    &failing_test::DENIES_IT,
    &machine::kept_words::ANSWER_ID,
    &machine::kept_words::ASSUMED,
    &machine::kept_words::NEXT_POINT,
    &quality::QUANTITATIVE,
    &quality::ACCEPTANCE_WORDS,
    &score::SCORE_LINE,
    &submission::FENCE,
    &submission::LINE_BRACE,
    &submission::SPRINT_HEADING,
    &submission::REVIEW_STATUS,
];

/// Reads every pattern with the regex crate's parser (nothing is compiled: microseconds):
/// the binary runs this when it starts, so a pattern this build cannot read (one that
/// needs a regex feature the server's `Cargo.toml` leaves out) stops it there, named,
/// instead of failing the one call whose input reaches it.
pub fn check_patterns() -> Result<(), String> {
    PATTERNS.iter().try_for_each(|p| p.check())
}
