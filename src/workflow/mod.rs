//! The pure workflow core: stages, the stored session, the transition function, reading
//! submissions and estimating quality. No I/O, no clock, no protocol types.

pub mod machine;
pub mod quality;
pub mod session;
pub mod stage;
pub mod submission;

pub use machine::{
    allowed_actions, apply, Command, Facts, FileWrite, Outcome, ProjectFiles, WorkflowError,
};
pub use session::{ContentRef, Session, State};
pub use stage::{Engine, Stage};
