//! `bmad-mcp lessons list|show|retire|restore`: the project's lessons (`.bmad/lessons/`) as the
//! human sees them, and retiring one (it stays in the folder, marked `retired:`, and is no longer
//! recalled into prompts) or restoring one, each the human's decision recorded in the lesson's file
//! ([`act::human::lesson`](crate::act::human::lesson)), taken only at the human's own terminal,
//! never under an assistant's shell. Damaged files are listed with their reason.

use clap::Subcommand;

use super::{Exit, Outcome};
use crate::act::human::{self, LessonChange};
use crate::code::{clip, visible, visible_lines};
use crate::lessons::{self, Lesson};
use crate::store::Store;
use crate::workflow::Via;

#[derive(Subcommand, Debug)]
pub enum LessonsCommand {
    /// The active lessons, oldest first (`--all`: the retired ones too), and the files
    /// that cannot be read.
    List {
        /// The retired lessons too.
        #[arg(long)]
        all: bool,
    },
    /// One lesson's file as it is.
    Show {
        /// The lesson's id, as `lessons list` shows it.
        id: String,
    },
    /// Retire a lesson: kept in the folder, no longer recalled into prompts (asks on the
    /// terminal).
    Retire {
        /// The lesson's id, as `lessons list` shows it.
        id: String,
    },
    /// Restore a retired lesson: recalled into prompts again (asks on the terminal).
    Restore {
        /// The lesson's id, as `lessons list` shows it.
        id: String,
    },
}

pub(super) fn run(store: &Store, command: Option<LessonsCommand>) -> Outcome {
    let project = store.project(None).map_err(|e| e.to_string())?;
    let loaded = lessons::load(&project).map_err(|e| e.to_string())?;
    match command.unwrap_or(LessonsCommand::List { all: false }) {
        LessonsCommand::List { all } => {
            let shown: Vec<&Lesson> = loaded
                .lessons
                .iter()
                .filter(|l| all || l.is_active())
                .collect();
            println!(
                "{} lesson(s) in {}/{}{}",
                shown.len(),
                project.display(),
                lessons::LESSONS_DIR,
                if all {
                    ""
                } else {
                    " (active; --all for the retired ones too)"
                }
            );
            for l in shown {
                println!(
                    "  {}  {:<16} {:<9} {:<6} {}{}  {}",
                    l.id,
                    l.category.name(),
                    l.role.id(),
                    l.source.name(),
                    visible(&clip(&l.task, 40)),
                    if l.is_active() { "" } else { " (retired)" },
                    visible(&clip(
                        &l.words.split_whitespace().collect::<Vec<_>>().join(" "),
                        80
                    ))
                );
            }
            damaged(&loaded);
            Ok(Exit::Done)
        }
        LessonsCommand::Show { id } => {
            let l = found(&loaded, &id)?;
            println!("{}", l.rel_path());
            print!("{}", visible_lines(&lessons::render(l)));
            Ok(Exit::Done)
        }
        LessonsCommand::Retire { id } => decide(store, &loaded, &id, LessonChange::Retire),
        LessonsCommand::Restore { id } => decide(store, &loaded, &id, LessonChange::Restore),
    }
}

/// Retires or restores a lesson through the one path of a human's decision.
fn decide(store: &Store, loaded: &lessons::Loaded, id: &str, change: LessonChange) -> Outcome {
    let lesson = found(loaded, id)?;
    // Recorded as the human's, so taken only from the human, as a gate decision is.
    let (verb, question, after) = match change {
        LessonChange::Retire => (
            "retire a lesson",
            "Retire it? [y/N] ",
            "Retired, it stays in the folder and is no longer recalled into role prompts; `lessons restore` brings it back.",
        ),
        LessonChange::Restore => (
            "restore a lesson",
            "Restore it? [y/N] ",
            "Restored, it is recalled into role prompts again where it is relevant.",
        ),
    };
    if let Err(exit) = super::provenance::human_at_terminal(
        verb,
        "Which lessons are recalled is the human's decision",
    ) {
        return Ok(exit);
    }
    // What is being decided, then the question, as the other decisions on the terminal ask.
    println!("{}", lesson.rel_path());
    print!("{}", visible_lines(&lessons::render(lesson)));
    println!("{after}");
    if !super::yes(question)? {
        println!("Nothing changed.");
        return Ok(Exit::Failed);
    }
    let said = human::lesson(store, None, id, change, Via::Cli, None)?;
    println!("{}", visible(&said));
    Ok(Exit::Done)
}

fn found<'a>(loaded: &'a lessons::Loaded, id: &str) -> Result<&'a Lesson, String> {
    loaded.find(id).ok_or_else(|| {
        format!(
            "no lesson `{}` in {} (`bmad-mcp lessons list --all` lists them)",
            clip(id, 60),
            lessons::LESSONS_DIR
        )
    })
}

fn damaged(loaded: &lessons::Loaded) {
    if loaded.damaged.is_empty() {
        return;
    }
    println!(
        "{} lesson file(s) cannot be read and are skipped:",
        loaded.damaged.len()
    );
    for (path, why) in &loaded.damaged {
        println!("  DAMAGED {}: {}", visible(path), visible(why));
    }
}
