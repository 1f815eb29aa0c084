//! `bmad-mcp resolve <task> --ours|--theirs`: a task that a merge left in two versions
//! is resolved to one of them as a unit (its session, its documents, its drafts), so that
//! nothing of the other version stays beside it, and the merge can be committed.

use super::{Exit, Outcome};
use crate::code::visible;
use crate::git::{Repo, Side};
use crate::store::{is_valid_task_name, Store};

pub(super) fn resolve(store: &Store, task: &str, side: Side) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let Some(repo) = Repo::at(&project.root) else {
        return Err(format!("{} is not in a git repository", project.display()));
    };
    if !repo.merging() {
        return Err("no merge is under way here: `resolve` keeps one side of a task while git merges two branches".into());
    }
    if !is_valid_task_name(task) {
        return Err(format!("{} is not a task name", visible(task)));
    }
    // The task's id, from the folder marker of either side.
    let marker = format!(".claude/specs/{task}/.bmad-session");
    let id = [Side::Ours, Side::Theirs]
        .into_iter()
        .find_map(|s| repo.show(s, &marker))
        .map(|t| t.trim().to_string())
        .filter(|id| uuid::Uuid::parse_str(id).is_ok())
        .ok_or_else(|| {
            format!(
                "no task {} in either branch of the merge ({marker} is in neither)",
                visible(task)
            )
        })?;
    let paths = [
        format!(".bmad-task/session-{id}.json"),
        format!(".claude/specs/{task}"),
        format!(".bmad-task/temp/{id}"),
    ];
    repo.keep_side(side, &paths)?;
    let which = match side {
        Side::Ours => "your branch's",
        Side::Theirs => "the merged branch's",
    };
    println!(
        "Kept {which} version of task {} as a whole: {}. Nothing of the other version stays. Commit the merge (`git commit --no-edit`) when every conflict is resolved.",
        visible(task),
        paths.join(", ")
    );
    Ok(Exit::Done)
}
