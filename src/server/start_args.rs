//! `start`'s arguments: the objective, the engines, the track, and for a story its parent
//! and sprint (docs/spec.md §18); and `promote`, which the tool refuses (the human's).

use super::args::{clip, BmadTaskArgs, Call};
use super::limits::check_size;
use super::limits::Limits;
use crate::code::ErrorCode;
use crate::error::{Error, Result};
use crate::store::SessionKey;
use crate::workflow::engine;
use crate::workflow::{Stage, Track};

/// A checked `start`.
pub(super) fn start(args: &BmadTaskArgs, cwd: Option<String>, limits: &Limits) -> Result<Call> {
    let story =
        match (&args.parent, args.sprint) {
            (Some(parent), Some(sprint)) => {
                let parent = parent.trim().to_string();
                if !crate::store::is_valid_task_name(&parent) {
                    return Err(Error::argument(
                        ErrorCode::InvalidTaskName,
                        format!(
                            "field `parent`: `{}` is not a task name (as returned by `start`)",
                            clip(&parent)
                        ),
                    ));
                }
                Some((parent, sprint))
            }
            (None, None) => None,
            (Some(_), None) => return Err(Error::argument(
                ErrorCode::MissingField,
                "field `sprint` is required with `parent`: the approved sprint the story builds",
            )),
            (None, Some(_)) => return Err(Error::argument(
                ErrorCode::MissingField,
                "field `parent` is required with `sprint`: the task whose plan the sprint is in",
            )),
        };
    let track = match args.track.as_deref().map(str::trim) {
        None => Track::Full,
        Some(name) => Track::parse(name).ok_or_else(|| {
            Error::argument(
                ErrorCode::InvalidArgument,
                format!(
                    "field `track`: `{}` is not a track; expected one of `full`, `quick`, `fix` (a story is started with `parent` and `sprint`)",
                    clip(name)
                ),
            )
        })?,
    };
    if story.is_some() && args.track.is_some() {
        return Err(Error::argument(
            ErrorCode::InvalidArgument,
            "field `track`: a story runs development, review and QA of its sprint; leave `track` out with `parent` and `sprint`",
        ));
    }
    let objective = args.objective.as_deref().map(str::trim).unwrap_or("");
    if objective.is_empty() && story.is_none() {
        return Err(Error::argument(
            ErrorCode::MissingField,
            "field `objective` is required for `start`: say what to build",
        ));
    }
    check_size("objective", objective, limits.objective_bytes)?;
    let engines = match &args.engines {
        Some(names) => Some(
            engine::check_list(names, &Stage::required_engines()).map_err(|why| {
                Error::argument(
                    ErrorCode::InvalidArgument,
                    format!("field `engines`: {why}"),
                )
            })?,
        ),
        None => None,
    };
    Ok(Call::Start {
        cwd,
        objective: objective.to_string(),
        engines,
        track: if story.is_some() { Track::Story } else { track },
        story,
    })
}

/// `promote` over the tool: refused, naming the human's command.
pub(super) fn promote(key: &SessionKey) -> Error {
    let task = match key {
        SessionKey::TaskName(t) | SessionKey::Both { task_name: t, .. } => t.clone(),
        SessionKey::Id(_) => "<task>".into(),
    };
    Error::argument(
        ErrorCode::HumanRequired,
        format!(
            "`promote` is the human's decision: they run `bmad-mcp promote {task}` in a terminal in the project; ask them whether the task outgrew the quick track"
        ),
    )
}
