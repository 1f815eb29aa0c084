//! When a task completes in a project with the method's retrospective installed: the
//! sentence of the reply that says it can run, naming the skill as installed for the
//! project's tools and the task's epic where the method's epics file names the task; and
//! the lessons the server recorded during the task (its own and its stories'), written
//! for the retrospective to read as the epic's session record, in
//! `{implementation_artifacts}/bmad-mcp-lessons-<task>.md`. That file is derived from
//! `.bmad/lessons/` (rewritten at each completion, one per task, so clones merge), begins
//! with [`LESSONS_MARK`], and a file of that name without it is someone's own, left as it
//! is.

use crate::files::Project;
use crate::lessons::Lesson;
use crate::workflow::{Effects, Session};

use super::{MAX_READ_BYTES, SKILL};
use crate::bmad_method::{one_line, Install, Method, MethodSettings, Skill};

/// How the lessons file begins: a file there that does not is someone's own.
pub const LESSONS_MARK: &str = "<!-- Lessons bmad-mcp recorded during task ";

/// The method's epics file, in `planning_artifacts`.
pub const EPICS_FILE: &str = "epics.md";

/// The most lessons the file holds (the oldest first).
const MAX_LESSONS: usize = 50;

/// The longest lesson's words in the file, in characters.
const WORDS_CHARS: usize = 1_000;

/// The lessons file's name for `task`.
pub fn file_name(task: &str) -> String {
    format!("bmad-mcp-lessons-{task}.md")
}

/// What the completion offers the retrospective: the reply's sentence that it can run
/// (`run`), the lessons file to write (path, content) when there are lessons and a folder
/// for them, and what the reply says of the lessons once that file is written (or why
/// there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub run: String,
    pub file: Option<(String, String)>,
    pub lessons: String,
}

impl Offer {
    /// The reply's notice once the file is written (or there was none to write).
    pub fn said(&self) -> String {
        format!("{} {}", self.run, self.lessons)
    }
}

/// The offer when the change `did` (leaving the session `after`) completes a task (not a
/// story: its parent's completion speaks for the epic) in a project whose install has the
/// retrospective; `None` otherwise, and for a quick change or a fix that no epic names (the
/// retrospective is an epic's). `method`: the call's install.
pub fn at_completion(method: &Method, did: &Effects, after: &Session) -> Option<Offer> {
    if !did.completes_task() || after.story.is_some() {
        return None;
    }
    let project = method.project();
    let install = method.install()?;
    let skill = install
        .skills
        .iter()
        .find(|s| s.name == SKILL && s.folder.is_some())?;
    let lessons = task_lessons(project, after);
    offer(project, install, skill, after, &lessons)
}

/// [`at_completion`]'s offer, from what was read.
fn offer(
    project: &Project,
    install: &Install,
    skill: &Skill,
    task: &Session,
    lessons: &[Lesson],
) -> Option<Offer> {
    let settings = &install.settings;
    // The epic the server numbered when it wrote the plan as the method's epics, else the
    // one a hand-written epics file gives the task.
    let epic = task
        .method_epic
        .or_else(|| epic_of(project, settings, &task.task_name));
    // A full task with no epic may be one the human names; a quick change or a fix is none.
    if epic.is_none() && task.track != crate::workflow::Track::Full {
        return None;
    }
    let run = run_sentence(install, skill, epic, task.method_epic.is_some());
    let folder = settings.implementation_artifacts.as_deref();
    let (file, said) = match (folder, lessons.is_empty()) {
        (_, true) => (None, "No lesson was recorded during this task, so none is offered to it.".to_string()),
        (None, false) => (None, "The method's `implementation_artifacts` is not a folder of the project, so the task's lessons (.bmad/lessons/) were not offered to it.".to_string()),
        (Some(folder), false) => {
            let path = format!("{folder}/{}", file_name(&task.task_name));
            match left_alone(project, &path) {
                Some(why) => (None, format!(
                    "{path} {why}, so it was left as it is: the task's lessons are in .bmad/lessons/."
                )),
                None => {
                    let said = format!(
                        "Give it {path}, the task's {} lesson(s).",
                        lessons.len()
                    );
                    (Some((path, render(task, epic, lessons))), said)
                }
            }
        }
    };
    Some(Offer {
        run,
        file,
        lessons: said,
    })
}

/// Why the file at `path` is not the server's to write: `None` when it is absent or one
/// of ours; a file that cannot be read (too large, not UTF-8, a link) may be a person's.
fn left_alone(project: &Project, path: &str) -> Option<String> {
    match project.read(path) {
        Ok(None) => None,
        Ok(Some(there)) if there.starts_with(LESSONS_MARK) => None,
        Ok(Some(_)) => Some("is not a file the server wrote".into()),
        Err(problem) => Some(format!("could not be read ({problem})")),
    }
}

/// "The BMAD method's retrospective can run for epic N: `/bmad-retrospective` in Claude
/// Code." A real run's every byte is read by the model: the epic and how to call the skill,
/// nothing it can look up (the skill's folder only where no host's call is known).
fn run_sentence(
    install: &Install,
    skill: &Skill,
    epic: Option<u32>,
    numbered_here: bool,
) -> String {
    let settings = &install.settings;
    let which = match (epic, settings.planning_artifacts.as_deref()) {
        (Some(n), _) if numbered_here => format!("epic {n}"),
        (Some(n), Some(p)) => format!("epic {n} (of {p}/{EPICS_FILE})"),
        (None, Some(p)) => {
            format!("this task's epic (no epic in {p}/{EPICS_FILE} names the task; it asks which)")
        }
        (_, None) => "this task's epic (it asks which)".into(),
    };
    let mut how: Vec<String> = Vec::new();
    if install.tools.iter().any(|t| t == "claude-code") {
        how.push(format!("`/{SKILL}` in Claude Code"));
    }
    if install.tools.iter().any(|t| t == "codex") {
        how.push(format!("`${SKILL}` in Codex"));
    }
    let how = if how.is_empty() {
        format!("the skill `{SKILL}` ({})", skill.dir().unwrap_or_default())
    } else {
        how.join(", ")
    };
    format!("The BMAD method's retrospective can run for {which}: {how}.")
}

/// The epic of the method's epics file (`## Epic N: …`) whose section names `task`.
pub fn epic_of(project: &Project, settings: &MethodSettings, task: &str) -> Option<u32> {
    let folder = settings.planning_artifacts.as_deref()?;
    let text = project
        .read_in_project(&format!("{folder}/{EPICS_FILE}"), MAX_READ_BYTES)
        .ok()??;
    epic_naming(&text, task)
}

/// [`epic_of`] on the epics file's text.
fn epic_naming(text: &str, task: &str) -> Option<u32> {
    let mut current: Option<u32> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("## ") {
            current = rest
                .strip_prefix("Epic ")
                .and_then(|r| r.split(':').next())
                .and_then(|n| n.trim().parse().ok());
        }
        if current.is_some() && line.contains(task) {
            return current;
        }
    }
    None
}

/// The lessons recorded during `task` and its stories, oldest first.
fn task_lessons(project: &Project, task: &Session) -> Vec<Lesson> {
    let Ok(loaded) = crate::lessons::load(project) else {
        return Vec::new();
    };
    let ours =
        |name: &str| name == task.task_name || task.stories.iter().any(|s| s.task_name == name);
    let mut lessons: Vec<Lesson> = loaded
        .lessons
        .into_iter()
        .filter(|l| ours(&l.task))
        .collect();
    lessons.sort_by(|a, b| a.date.cmp(&b.date).then_with(|| a.id.cmp(&b.id)));
    lessons
}

/// The lessons file for `task`.
fn render(task: &Session, epic: Option<u32>, lessons: &[Lesson]) -> String {
    let name = &task.task_name;
    let mut out = format!(
        "{LESSONS_MARK}`{name}` for the BMAD method's retrospective; rewritten when the task completes. The lessons' own files, in .bmad/lessons/, are the originals. -->\n\n# Lessons from bmad-mcp task `{name}`\n\n"
    );
    let objective = one_line(&task.objective, 300).unwrap_or_default();
    out.push_str(&format!("- Objective: {objective}\n"));
    if let Some(n) = epic {
        out.push_str(&format!("- Epic: {n}\n"));
    }
    out.push_str("\nWhat went wrong during the task, as bmad-mcp recorded it: each lesson's category, the role whose work it was about, whose words it holds (those words are quoted as recorded), and its file.\n\n");
    for l in lessons.iter().take(MAX_LESSONS) {
        let words = one_line(&l.words, WORDS_CHARS).unwrap_or_default();
        let retired = if l.is_active() { "" } else { ", retired since" };
        out.push_str(&format!(
            "- **{}**, {} role, task `{}`, {}{retired} (`{}`, {}): {words}\n",
            l.category,
            l.role.id(),
            l.task,
            l.source.said_by(),
            l.rel_path(),
            l.date
        ));
    }
    if lessons.len() > MAX_LESSONS {
        out.push_str(&format!(
            "\n{} more in .bmad/lessons/ (task `{name}`).\n",
            lessons.len() - MAX_LESSONS
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lessons::{Category, Source};
    use crate::workflow::{Stage, Track};

    #[test]
    fn the_epic_is_the_one_whose_section_names_the_task() {
        let epics = "# Epics\n\n## Epic 1: Login\n\nTask `ada-login-1a2b`.\n\n### Story 1.1: Form\n\n## Epic 2: Notes\n\nFrom bmad-mcp task `ada-notes-3c4d`.\n";
        assert_eq!(epic_naming(epics, "ada-notes-3c4d"), Some(2));
        assert_eq!(epic_naming(epics, "ada-login-1a2b"), Some(1));
        assert_eq!(epic_naming(epics, "other"), None);
        assert_eq!(
            epic_naming("## Overview\nada-notes-3c4d\n", "ada-notes-3c4d"),
            None
        );
    }

    fn lesson(id: &str, task: &str) -> Lesson {
        Lesson {
            id: id.into(),
            role: Stage::Dev,
            category: Category::CcFail,
            source: Source::Server,
            task: task.into(),
            stage: Stage::Dev,
            date: "2026-11-27T10:00:00.000Z".into(),
            digest: None,
            retired: None,
            decided: None,
            words: "The checks failed:\n`cargo test` exited 101.\u{202e}".into(),
        }
    }

    /// The task `notes`, just started.
    fn notes_task() -> Session {
        Session::test()
            .id("s1")
            .task("notes")
            .objective("Build a notes app")
            .build()
    }

    #[test]
    fn the_file_holds_each_lesson_on_a_line_marked_as_ours() {
        let task = notes_task();
        let text = render(&task, Some(2), &[lesson("2026-11-27-00aa11bb", "notes")]);
        assert!(text.starts_with(LESSONS_MARK), "{text}");
        assert!(
            text.contains("- Objective: Build a notes app\n- Epic: 2\n"),
            "{text}"
        );
        assert!(
            text.contains("- **CC-FAIL**, dev role, task `notes`, the server's checks showed (`.bmad/lessons/2026-11-27-00aa11bb.md`, 2026-11-27T10:00:00.000Z): The checks failed: `cargo test` exited 101.\\u{202e}\n"),
            "{text}"
        );
    }

    #[test]
    fn a_file_of_that_name_the_server_did_not_write_is_left_alone() {
        let (dir, project) = crate::files::project::tests::project();
        let path = "impl/bmad-mcp-lessons-notes.md";
        assert_eq!(left_alone(&project, path), None);
        std::fs::create_dir_all(dir.path().join("impl")).unwrap();
        std::fs::write(
            dir.path().join(path),
            format!("{LESSONS_MARK}`notes` -->\n"),
        )
        .unwrap();
        assert_eq!(left_alone(&project, path), None);
        std::fs::write(dir.path().join(path), "# My own notes\n").unwrap();
        assert!(left_alone(&project, path)
            .unwrap()
            .contains("not a file the server wrote"));
    }

    /// A task `notes`, and an install for Claude Code with the retrospective, whose epics
    /// file names the task under epic 3 and whose sprint status lists its retrospective.
    fn installed(dir: &std::path::Path) -> (Session, Skill, Install) {
        let task = notes_task();
        let skill = Skill {
            name: SKILL.into(),
            description: String::new(),
            folder: Some(".claude/skills"),
        };
        let mut install = Install {
            tools: vec!["claude-code".into()],
            skills: vec![skill.clone()],
            ..Install::default()
        };
        install.settings.planning_artifacts = Some("plan".into());
        install.settings.implementation_artifacts = Some("impl".into());
        for folder in ["plan", "impl"] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
        }
        std::fs::write(
            dir.join("plan/epics.md"),
            "## Epic 3: Notes\nTask `notes`.\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("impl/sprint-status.yaml"),
            "development_status:\n  epic-3: done\n  epic-3-retrospective: optional\n",
        )
        .unwrap();
        (task, skill, install)
    }

    #[test]
    fn the_offer_names_the_skill_and_the_epic_and_says_where_the_lessons_are_or_why_not() {
        let (dir, project) = crate::files::project::tests::project();
        let (task, skill, mut install) = installed(dir.path());
        let none = offer(&project, &install, &skill, &task, &[]).unwrap();
        assert_eq!(
            none.run,
            "The BMAD method's retrospective can run for epic 3 (of plan/epics.md): `/bmad-retrospective` in Claude Code."
        );
        assert_eq!(none.file, None);
        assert!(
            none.said().ends_with("so none is offered to it."),
            "{}",
            none.said()
        );

        let lessons = [lesson("2026-11-27-00aa11bb", "notes")];
        let some = offer(&project, &install, &skill, &task, &lessons).unwrap();
        let (path, text) = some.file.clone().unwrap();
        assert_eq!(path, "impl/bmad-mcp-lessons-notes.md");
        assert!(text.contains("- Epic: 3\n"), "{text}");
        assert_eq!(
            some.lessons,
            "Give it impl/bmad-mcp-lessons-notes.md, the task's 1 lesson(s)."
        );

        std::fs::write(dir.path().join(&path), "mine\n").unwrap();
        let left = offer(&project, &install, &skill, &task, &lessons).unwrap();
        assert_eq!(left.file, None);
        assert!(
            left.lessons.contains("is not a file the server wrote"),
            "{}",
            left.lessons
        );

        install.settings.planning_artifacts = None;
        install.tools = vec!["cursor".into()];
        let unknown = offer(&project, &install, &skill, &task, &[]).unwrap();
        assert!(
            unknown
                .run
                .contains("for this task's epic (it asks which): the skill `bmad-retrospective`"),
            "{}",
            unknown.run
        );
        assert!(
            unknown
                .run
                .ends_with("(.claude/skills/bmad-retrospective)."),
            "{}",
            unknown.run
        );
    }

    #[test]
    fn a_quick_change_or_a_fix_no_epic_names_is_offered_no_retrospective() {
        let (dir, project) = crate::files::project::tests::project();
        let (mut task, skill, install) = installed(dir.path());
        let lessons = [lesson("2026-11-27-00aa11bb", "notes")];
        for track in [Track::Quick, Track::Fix] {
            task.track = track;
            let named = offer(&project, &install, &skill, &task, &lessons);
            assert!(named.is_some_and(|o| o.run.contains("epic 3")), "{track:?}");
            task.task_name = "a-fix-of-its-own".into();
            assert_eq!(
                offer(&project, &install, &skill, &task, &lessons),
                None,
                "{track:?}"
            );
            task.task_name = "notes".into();
        }
        task.track = Track::Full;
        task.task_name = "a-task-of-its-own".into();
        let full = offer(&project, &install, &skill, &task, &[]).unwrap();
        assert!(full.run.contains("this task's epic"), "{}", full.run);
    }
}
