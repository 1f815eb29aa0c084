//! The BMAD method's retrospective (`bmad-retrospective`, v6), both ways: what it left in
//! `{implementation_artifacts}/sprint-status.yaml` (its `action_items`, and the retrospective
//! documents they point to) read as the team's commitments
//! ([`action_items.rs`](crate::bmad_method::retro::action_items)) and recalled into the role
//! prompts they concern ([`recall.rs`](crate::bmad_method::retro::recall)); and, when a task
//! completes, the lessons the server recorded during it written where the retrospective can read
//! them, with the reply's sentence that names the skill and the epic
//! ([`offer.rs`](crate::bmad_method::retro::offer)).
//!
//! What the retrospective wrote is the project's text, written by whoever ran it: read
//! through the project's confined, bounded reader, shown clipped and labelled, and a file
//! that cannot be read is a notice, never an error.

pub mod action_items;
pub mod offer;
pub mod recall;

/// The method's retrospective skill, by its installed name.
pub const SKILL: &str = "bmad-retrospective";

/// The method's sprint status, in `implementation_artifacts`.
pub const SPRINT_STATUS: &str = "sprint-status.yaml";

/// The largest sprint status, epics file or retrospective document read.
pub const MAX_READ_BYTES: u64 = 256 * 1024;

/// A path the retrospective wrote (`{project-root}/…`, the project's absolute path, or
/// relative) as a path relative to `project`; `None` when it lies outside it.
pub fn relative(project: &crate::files::Project, path: &str) -> Option<String> {
    let root = project.path("");
    let root = root.to_str()?.trim_end_matches('/');
    let path = match path.strip_prefix(root) {
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => path,
    };
    super::bmm_config::in_project(path)
}
