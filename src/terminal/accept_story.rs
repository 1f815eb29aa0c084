//! `bmad-mcp accept <task> <sprint>`: a story the BMAD method's `/bmad-build` built, accepted
//! by the human in one step instead of a development, review and QA round of bmad-mcp's. It
//! shows what the method says of the story (its spec's intent, code map, acceptance criteria
//! and deferred findings, the method's words, escaped and clipped), runs the project's checks
//! as last approved (`.bmad/config.toml`), shows what they said, and asks; the acceptance is
//! the human's decision ([`act::human::accept_built`](crate::act::human::accept_built)), bound
//! to the file as shown, never under an assistant's shell.

use super::{yes, Exit, Outcome};
use crate::act::human::{self, Built};
use crate::bmad_method::shared_plan::spec_file;
use crate::bmad_method::Method;
use crate::code::{clip, visible};
use crate::files::Project;
use crate::store::{SessionKey, Store};
use crate::workflow::{Evidence, Via};

/// The most characters shown of each line the method wrote.
const LINE_CHARS: usize = 300;

pub(super) fn accept(store: &Store, task: &str, sprint: u32) -> Outcome {
    if let Err(exit) = super::provenance::human_at_terminal(
        "accept a story the BMAD method built",
        "Accepting work the method built is the human's decision",
    ) {
        return Ok(exit);
    }
    let (project, parent) = store
        .load(None, &SessionKey::from_task(task))
        .map_err(|e| e.to_string())?;
    let parent = crate::store::stories::with_stories(&project, &parent);
    let method = Method::of(&project);
    let held = human::held_as_built(store, &method, &parent, sprint)?;
    let Some(seen) = human::built_sha256(&project, &held.file) else {
        return Err(format!("{} could not be read", visible(&held.file)));
    };
    println!(
        "Sprint {sprint} of {}: the method's story `{}` is `{}` in {}.",
        visible(&parent.task_name),
        visible(&held.key),
        visible(&held.status),
        visible(&held.file)
    );
    show_spec(&project, &held.file);
    let checks = run_checks(store, &project)?;
    if !yes(&format!(
        "Accept sprint {sprint} as the method built it, a completed story of {}? [y/N] ",
        visible(&parent.task_name)
    ))? {
        println!("Not accepted: nothing changed.");
        return Ok(Exit::Failed);
    }
    let built = Built {
        task,
        sprint,
        seen_sha256: &seen,
        checks: &checks,
    };
    let said = human::accept_built(store, &built, Via::Cli)?;
    println!("{}", visible(&said));
    Ok(Exit::Done)
}

/// What the spec at `path` says of the story, the method's words shown as such.
fn show_spec(project: &Project, path: &str) {
    let text = project
        .read_in_project(path, crate::bmad_method::MAX_FILE_BYTES)
        .ok()
        .flatten();
    let Some(spec) = text.as_deref().and_then(spec_file::read) else {
        return;
    };
    println!("What the method's spec says (its words, quoted):");
    let parts = [
        ("Intent", &spec.intent),
        ("Code map", &spec.code_map),
        ("Acceptance criteria", &spec.acceptance),
    ];
    for (name, lines) in parts {
        if lines.is_empty() {
            continue;
        }
        println!("  {name}:");
        for l in lines {
            println!("    > {}", visible(&clip(l, LINE_CHARS)));
        }
    }
    if !spec.deferred.is_empty() {
        println!("  Deferred by its review:");
        for (summary, _) in &spec.deferred {
            println!("    > {}", visible(&clip(summary, LINE_CHARS)));
        }
    }
}

/// Runs the project's checks as last approved, printing what each said: the summary
/// recorded with the acceptance.
fn run_checks(store: &Store, project: &Project) -> Result<String, String> {
    let policy = crate::policy::approval::Policy::read(project).map_err(|e| e.to_string())?;
    let Some(run) = crate::policy::approved_checks(project, &policy, store.check_timeout()) else {
        println!("The project names no approved checks (.bmad/config.toml): none ran.");
        return Ok("none approved".into());
    };
    println!("Running the project's checks ({})…", run.planned.len());
    let observed = crate::policy::watch::run_checks(run, &crate::policy::Watched::none());
    let Evidence::Ran { run, .. } = observed else {
        return Ok("none ran".into());
    };
    for c in &run.checks {
        println!(
            "  {}: {} ({} ms)",
            visible(&c.name),
            c.outcome.id(),
            c.duration_ms
        );
    }
    let passed = run.checks.iter().filter(|c| c.outcome.id() == "passed");
    let summary = format!("{} of {} passed", passed.count(), run.checks.len());
    if !run.passed() {
        println!("Not every check passed ({summary}): accepting it accepts that risk.");
    }
    Ok(summary)
}
