//! What the completed workflow built: the sprints of the approved scope, and those left
//! out of it with how to build them later (docs/spec.md §10.7).

use crate::error::clip;
use crate::workflow::session::Sprint;
use crate::workflow::{Session, Stage};

/// The most sprints a list names; the plan has them all.
const MAX_NAMED: usize = 20;

fn named(sprints: &[&Sprint]) -> String {
    let mut out: Vec<String> = sprints
        .iter()
        .take(MAX_NAMED)
        .map(|s| format!("{} ({})", s.number, clip(&s.title, 60)))
        .collect();
    if sprints.len() > MAX_NAMED {
        out.push(format!("and {} more", sprints.len() - MAX_NAMED));
    }
    out.join(", ")
}

/// " Sprints built: …. Left out of scope: …; to build them later, …" for the completion
/// message: the sprint plan as approved, read from the session.
pub(super) fn scope_built(s: &Session) -> String {
    let plan = s.record(Stage::approval());
    let path = s.artifact_path(Stage::approval());
    if plan.sprints.is_empty() {
        return format!(" Built: the whole plan ({path} names no sprints).");
    }
    let scope = plan.scope_sprints.clone().unwrap_or_default();
    let (built, left): (Vec<&Sprint>, Vec<&Sprint>) = plan
        .sprints
        .iter()
        .partition(|sp| scope.contains(&sp.number));
    if left.is_empty() {
        return format!(
            " Sprints built: all {} of the plan: {}.",
            built.len(),
            named(&built)
        );
    }
    let numbers: Vec<String> = left.iter().map(|sp| sp.number.to_string()).collect();
    let which = if left.len() == 1 { "sprint" } else { "sprints" };
    format!(
        " Sprints built: {}. Left out of scope: {}; to build them later, start a new BMAD task whose objective names them and the plan, e.g. “Build {which} {} of the plan in {path}”.",
        if built.is_empty() {
            "none".to_string()
        } else {
            named(&built)
        },
        named(&left),
        clip(&numbers.join(", "), 200)
    )
}
