//! `bmad-mcp resolve <task> --ours|--theirs`: a task that a merge left in two versions
//! is resolved to one of them as a unit (its session, its documents, its drafts), so that
//! nothing of the other version stays beside it, and the merge can be committed. The
//! lessons learnt from the other version's decisions are retired with it (restorable).

use super::{Exit, Outcome};
use crate::act::human::LessonChange;
use crate::code::visible;
use crate::git::{Repo, Side};
use crate::store::{is_valid_task_name, Store};
use crate::workflow::Via;

pub(super) fn resolve(store: &Store, task: &str, side: Side) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let Some(repo) = Repo::at(&project.root) else {
        return Err(format!("{} is not in a git repository", project.display()));
    };
    if !repo.merging() {
        return Err("no merge is under way here: `resolve` keeps one side of a task while git merges two branches".into());
    }
    let task = &named(&repo, task)?;
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
        "Kept {which} version of task {} as a whole: {}.",
        visible(task),
        paths.join(", ")
    );
    let discarded = match side {
        Side::Ours => Side::Theirs,
        Side::Theirs => Side::Ours,
    };
    lessons_of_the_other_side(store, &repo, discarded, task)?;
    println!("Commit the merge (`git commit --no-edit`) when every conflict is resolved.");
    Ok(Exit::Done)
}

/// The task `given` names in either branch of the merge: its full name, or the beginning
/// of one up to a `-` (`add-login` for `add-login-ada-1a2b`), as every other command takes
/// it; several that begin so are named for the person to choose.
fn named(repo: &Repo, given: &str) -> Result<String, String> {
    if !is_valid_task_name(given) {
        return Err(format!("{} is not a task name", visible(given)));
    }
    let mut tasks: Vec<String> = [Side::Ours, Side::Theirs]
        .into_iter()
        .flat_map(|side| repo.entries(side, ".claude/specs"))
        .collect();
    tasks.sort();
    tasks.dedup();
    if tasks.iter().any(|t| t == given) {
        return Ok(given.to_string());
    }
    let prefix = format!("{given}-");
    let begun: Vec<&String> = tasks.iter().filter(|t| t.starts_with(&prefix)).collect();
    match begun.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Ok(given.to_string()),
        many => Err(format!(
            "{} begins the names of several tasks in the merge: {}; name one in full",
            visible(given),
            many.iter()
                .map(|t| visible(t))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The lessons learnt from the discarded version's decisions (files only that side
/// brought) would go on teaching what nobody kept: retired, restorable, when a person runs
/// `resolve`; under an assistant's shell they are named for the human to retire.
fn lessons_of_the_other_side(
    store: &Store,
    repo: &Repo,
    discarded: Side,
    task: &str,
) -> Result<(), String> {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let brought = repo.only_on(discarded, crate::lessons::LESSONS_DIR);
    let loaded = crate::lessons::load(&project).map_err(|e| e.to_string())?;
    let theirs: Vec<&crate::lessons::Lesson> = loaded
        .lessons
        .iter()
        .filter(|l| l.task == task && l.is_active() && brought.contains(&l.rel_path()))
        .collect();
    if theirs.is_empty() {
        println!("Nothing of the other version stays.");
        return Ok(());
    }
    if let Some(why) = super::provenance::read().assistant {
        let ids: Vec<&str> = theirs.iter().map(|l| l.id.as_str()).collect();
        println!(
            "{} lesson(s) learnt on the other version stay active, as retiring them is the human's decision and this runs under an assistant's shell ({}): retire each yourself with `bmad-mcp lessons retire <id>`: {}.",
            theirs.len(),
            visible(&why),
            ids.join(", ")
        );
        return Ok(());
    }
    for l in &theirs {
        crate::act::human::lesson(store, None, &l.id, LessonChange::Retire, Via::Cli, None)?;
    }
    // Staged, so that the merge's commit carries them retired.
    repo.stage(&theirs.iter().map(|l| l.rel_path()).collect::<Vec<_>>())?;
    let ids: Vec<&str> = theirs.iter().map(|l| l.id.as_str()).collect();
    println!(
        "Retired {} lesson(s) learnt on the other version, so that they are no longer recalled: {}. Each stays in {} (`bmad-mcp lessons restore <id>` brings one back); nothing else of the other version stays.",
        theirs.len(),
        ids.join(", "),
        crate::lessons::LESSONS_DIR
    );
    Ok(())
}
