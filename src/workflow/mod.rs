//! The pure workflow core: actions, stages, the stored session, the rules and the
//! transition function, reading submissions and estimating quality. No I/O, no clock, no
//! protocol types.

pub mod action;
mod basis;
mod content;
pub mod decision;
pub mod engine;
pub mod error;
pub mod evidence;
mod failing_test;
pub mod machine;
pub mod person;
pub mod quality;
mod records;
pub mod rules;
pub mod said;
pub mod scope;
pub mod score;
pub mod sections;
pub mod session;
pub mod stage;
pub mod story;
pub mod submission;
pub mod trace;
mod traced;
pub mod track;

pub use action::Action;
pub use decision::{DecidedBy, Decision, Provenance, Via};
pub use error::WorkflowError;
pub use evidence::{CheckOutcome, CheckResult, CheckRun, Evidence, GitState};
pub use machine::{apply, apply_observed, Command, Facts, FileWrite, Outcome};
pub use person::Person;
pub use rules::{allowed_actions, is_legal};
pub use session::{ContentRef, Session, State};
pub use stage::{Engine, Stage};
pub use track::Track;
