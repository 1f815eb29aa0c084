//! The project's policy for its gates, in one place: the human's policy file (`.bmad/config.toml`,
//! [`config`]), its approval ([`approval`]), the hooks on the host's dialog the human approved
//! ([`hooks`]), running the project's checks ([`checks`]), observing them while a call waits
//! ([`watch`]), and admitting a change to a session ([`admission`]: the checks a submission needs,
//! the decisions the policy keeps for the human). It sits above the store and is asked by
//! [`crate::act`], which orders a change; the pure core keeps only the record of what
//! the checks showed ([`crate::workflow::Evidence`]).

pub mod admission;
mod advice;
pub mod approval;
pub mod checks;
pub mod config;
pub mod hooks;
pub mod watch;

pub use admission::{
    admit, approve_config, approved_checks, config_waiting, human_commands, human_gates, Admitted,
    ChecksToRun,
};
pub use watch::Watched;
