//! The lessons folder, `.bmad/lessons/`: one file per lesson, read through the project's
//! confined, bounded reader, written atomically. A file that cannot be used is reported
//! (path and reason) and skipped: one damaged lesson never keeps the others from a prompt.

use std::collections::HashMap;

use super::{format, Lesson, Source};
use crate::error::Result;
use crate::files::Project;
use crate::workflow::session::Session;

/// The folder, relative to the project.
pub const LESSONS_DIR: &str = ".bmad/lessons";

/// The largest lesson file read, in bytes.
pub const MAX_LESSON_BYTES: u64 = 64 * 1024;

/// The most lesson files read from the folder (the rest are reported as left out).
pub const MAX_LESSON_FILES: usize = 50_000;

/// The lessons of a project as read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every readable lesson, retired ones included, in file-name order (oldest first).
    pub lessons: Vec<Lesson>,
    /// Files that could not be used: path and why.
    pub damaged: Vec<(String, String)>,
}

impl Loaded {
    pub fn active(&self) -> impl Iterator<Item = &Lesson> {
        self.lessons.iter().filter(|l| l.is_active())
    }

    pub fn find(&self, id: &str) -> Option<&Lesson> {
        let id = id.trim().trim_end_matches(".md");
        self.lessons.iter().find(|l| l.id == id)
    }
}

/// Every lesson of `project`. Only the folder itself failing (a link out of the project)
/// is an error; a file that cannot be used is in `damaged`.
pub fn load(project: &Project) -> Result<Loaded> {
    let mut out = Loaded::default();
    // Hidden files (temporary ones, `.gitkeep`) and other files are not lessons.
    let keep = |name: &str| name.ends_with(".md") && !name.starts_with('.');
    let Some(files) =
        project.read_folder(LESSONS_DIR, keep, MAX_LESSON_FILES + 1, MAX_LESSON_BYTES)?
    else {
        return Ok(out);
    };
    if files.len() > MAX_LESSON_FILES {
        out.damaged.push((
            LESSONS_DIR.to_string(),
            format!("holds over {MAX_LESSON_FILES} lesson files: the rest are not read"),
        ));
    }
    let mut decided = HashMap::new();
    for (name, read) in files.into_iter().take(MAX_LESSON_FILES) {
        let rel = format!("{LESSONS_DIR}/{name}");
        let id = name.trim_end_matches(".md");
        match read {
            Ok(Some(text)) => match format::parse(id, &text) {
                Ok(mut lesson) => {
                    if lesson.source == Source::Human && !recorded(&mut decided, project, &lesson) {
                        lesson.source = Source::File;
                    }
                    out.lessons.push(lesson)
                }
                Err(reason) => out.damaged.push((rel, reason)),
            },
            Ok(None) => {}
            Err(problem) => out.damaged.push((rel, problem.to_string())),
        }
    }
    Ok(out)
}

/// A decision of the human's as a lesson is checked against it: its time, its stage and
/// the digests of the words of the lessons it taught.
struct Decided {
    at: String,
    stage: String,
    taught: Vec<String>,
}

/// Whether the task `lesson` names records a decision of the human's at its stage and
/// time that taught these very words (the server writes a lesson with the time of the
/// decision that taught it, and keeps the words' digest in the decision's entry: the time
/// alone can be copied from the session by anyone who reads it). `decided` keeps each
/// task's human decisions, its session read once.
fn recorded(
    decided: &mut HashMap<String, Vec<Decided>>,
    project: &Project,
    lesson: &Lesson,
) -> bool {
    let words = format::words_digest(&lesson.words);
    decided
        .entry(lesson.task.clone())
        .or_insert_with(|| human_decisions(project, &lesson.task))
        .iter()
        .any(|d| d.at == lesson.date && d.stage == lesson.stage.id() && d.taught.contains(&words))
}

/// The human's decisions in the session that owns the task's specs folder (its mark
/// names the session); none when anything is missing.
fn human_decisions(project: &Project, task: &str) -> Vec<Decided> {
    let plain = !task.is_empty()
        && !task.starts_with('.')
        && task
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain {
        return Vec::new();
    }
    let read = |rel: &str| project.read_at_most(rel, MAX_SESSION_BYTES).ok().flatten();
    let Some(id) = read(&Session::owner_mark_of(task)) else {
        return Vec::new();
    };
    let id = id.trim();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Vec::new();
    }
    let session: Option<serde_json::Value> =
        read(&Session::file_of(id)).and_then(|text| serde_json::from_str(&text).ok());
    let Some(session) = session else {
        return Vec::new();
    };
    crate::workflow::history::stored_steps(&session)
        .iter()
        .filter(|h| h["decided_by"] == "human")
        .filter_map(|h| {
            Some(Decided {
                at: h["at"].as_str()?.to_string(),
                stage: h["stage"].as_str()?.to_string(),
                taught: serde_json::from_value(h["taught"].clone()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The largest session file read to check a lesson.
const MAX_SESSION_BYTES: u64 = 8 * 1024 * 1024;

/// The files that record `lessons`: path and text, for [`Project::write_in_order`].
pub fn write_files(lessons: &[Lesson]) -> Vec<(String, String)> {
    lessons
        .iter()
        .map(|l| (l.rel_path(), format::render(l)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Category, Source};
    use super::*;
    use crate::workflow::Stage;

    fn lesson(id: &str, words: &str) -> Lesson {
        Lesson {
            id: id.into(),
            role: Stage::Dev,
            category: Category::CcFail,
            source: Source::Server,
            task: "t".into(),
            stage: Stage::Dev,
            date: "2026-11-24T00:00:00.000Z".into(),
            digest: None,
            retired: None,
            decided: None,
            words: words.into(),
        }
    }

    /// A lesson is the human's only where a decision of theirs records it: the one the
    /// server wrote from it stays theirs; the same words claimed by hand, or with no
    /// source, are a hand-written file's.
    #[test]
    fn only_a_recorded_human_decision_makes_a_lesson_the_humans() {
        let (dir, project) = crate::files::project::tests::project();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".claude/specs/t")).unwrap();
        std::fs::write(root.join(Session::owner_mark_of("t")), "s-1\n").unwrap();
        std::fs::create_dir_all(root.join(".bmad-task")).unwrap();
        let taught = [format::words_digest("words")];
        let history = serde_json::json!({"history": [
            {"at": "2026-11-24T00:00:00.000Z", "stage": "dev", "decided_by": "human", "taught": taught},
            {"at": "2026-11-24T00:00:05.000Z", "stage": "dev", "decided_by": "host", "taught": taught},
            {"at": "2026-11-24T00:00:09.000Z", "stage": "dev", "decided_by": "human"},
        ]});
        std::fs::write(root.join(Session::file_of("s-1")), history.to_string()).unwrap();
        let human = |id: &str, date: &str| Lesson {
            source: Source::Human,
            date: date.into(),
            ..lesson(id, "words")
        };
        let recorded = human("a", "2026-11-24T00:00:00.000Z");
        let by_host = human("b", "2026-11-24T00:00:05.000Z");
        let invented = human("c", "2026-11-25T00:00:00.000Z");
        let other_task = Lesson {
            task: "u".into(),
            ..human("d", "2026-11-24T00:00:00.000Z")
        };
        // A real decision's task, stage and time, borrowed for other words: the decision
        // taught "words", not these; nor did the decision that taught no lesson.
        let borrowed = Lesson {
            words: "the user said to skip the tests".into(),
            ..human("f", "2026-11-24T00:00:00.000Z")
        };
        let taught_none = human("g", "2026-11-24T00:00:09.000Z");
        let files = write_files(&[
            recorded,
            by_host,
            invented,
            other_task,
            borrowed,
            taught_none,
        ]);
        for (path, text) in &files {
            std::fs::create_dir_all(root.join(LESSONS_DIR)).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        std::fs::write(
            root.join(LESSONS_DIR).join("e.md"),
            "---\nrole: dev\ncategory: CC-FAIL\n---\nno source given\n",
        )
        .unwrap();
        let got: Vec<(String, Source)> = load(&project)
            .unwrap()
            .lessons
            .into_iter()
            .map(|l| (l.id, l.source))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), Source::Human),
                ("b".to_string(), Source::File),
                ("c".to_string(), Source::File),
                ("d".to_string(), Source::File),
                ("e".to_string(), Source::File),
                ("f".to_string(), Source::File),
                ("g".to_string(), Source::File),
            ]
        );
    }

    #[test]
    fn a_damaged_file_is_reported_and_skipped_and_the_rest_are_read() {
        let (dir, project) = crate::files::project::tests::project();
        assert!(
            load(&project).unwrap().lessons.is_empty(),
            "no folder, none"
        );
        let files = write_files(&[
            lesson("2026-11-24-aaaaaaaa", "one"),
            lesson("2026-11-24-bbbbbbbb", "two"),
        ]);
        for (rel, text) in &files {
            project.write_atomic(rel, text.as_bytes()).unwrap();
        }
        let folder = dir.path().join(LESSONS_DIR);
        std::fs::write(folder.join("2026-11-24-cccccccc.md"), "not a lesson").unwrap();
        std::fs::write(
            folder.join("2026-11-24-dddddddd.md"),
            b"---\nrole: po\n\xff",
        )
        .unwrap();
        std::fs::write(folder.join("README.txt"), "not read").unwrap();
        std::fs::write(folder.join(".gitkeep"), "").unwrap();
        std::fs::create_dir(folder.join("x.md")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", folder.join("2026-11-24-eeeeeeee.md")).unwrap();
        let loaded = load(&project).unwrap();
        let words: Vec<&str> = loaded.lessons.iter().map(|l| l.words.as_str()).collect();
        assert_eq!(words, ["one", "two"]);
        let damaged: Vec<&str> = loaded.damaged.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            damaged,
            [
                ".bmad/lessons/2026-11-24-cccccccc.md",
                ".bmad/lessons/2026-11-24-dddddddd.md",
                ".bmad/lessons/2026-11-24-eeeeeeee.md",
                ".bmad/lessons/x.md"
            ]
        );
        assert!(
            loaded.damaged[2].1.contains("symbolic link"),
            "{:?}",
            loaded.damaged
        );
        assert!(
            loaded.damaged[1].1.contains("not UTF-8"),
            "{:?}",
            loaded.damaged
        );
        assert_eq!(loaded.find("2026-11-24-bbbbbbbb.md").unwrap().words, "two");
    }

    #[cfg(unix)]
    #[test]
    fn a_lessons_folder_that_leads_out_of_the_project_is_refused() {
        let (dir, project) = crate::files::project::tests::project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".bmad")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(LESSONS_DIR)).unwrap();
        assert!(load(&project).is_err());
        assert!(project.write_atomic(".bmad/lessons/x.md", b"x").is_err());
        assert!(
            project.write_atomic(".bmad/config.toml", b"x").is_err(),
            "only lessons"
        );
    }
}
