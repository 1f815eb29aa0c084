//! The confirmed planning documents placed where the method's own skills look for them:
//! its epics-and-stories, sprint-planning, correct-course, build and retrospective skills
//! search `{planning_artifacts}/*prd*.md` and `{planning_artifacts}/*architecture*` (and
//! `*epic*`, `*ux*`, `*brief*`, `*spec-*` for their other inputs). A copy is written there
//! with each confirmation of the PRD or the architecture (so it stays in step with the
//! confirmed document), on by default when the method is installed; the team or the person
//! turns it off with `[bmad-mcp] planning_copies = false`.
//!
//! Each task has one copy of each kind, and the globs find it for that kind only: in the
//! file's name each other kind's word in the task's name is split (task `linux-notes` has its
//! PRD copied to `prd-lin-u-x-notes.md`, which `*ux*` does not match), and a document
//! confirmed as the method's own file, unchanged, where the kind's glob finds it (`prd.md`)
//! is not copied. A copy keeps the document's YAML front matter as its first lines (the
//! method reads a document's `status` there); the server's comment follows it.

use crate::workflow::Stage;

use super::Install;

/// The copy of a confirmed document: where it goes and what it holds, and the sentence
/// that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub path: String,
    pub content: String,
    pub notice: String,
}

/// The name a stage's document is found by in `planning_artifacts`: `None` for a stage
/// whose document the method's skills do not look for there.
fn kind(stage: Stage) -> Option<&'static str> {
    match stage.id() {
        "po" => Some("prd"),
        "architect" => Some("architecture"),
        _ => None,
    }
}

/// How every copy begins, after the document's front matter: a file there that does not is
/// someone's own, never replaced.
pub const COPY_MARK: &str = "<!-- A copy of ";

/// The words the method's skills find their inputs by in `planning_artifacts` (their globs
/// `*prd*`, `*architecture*`, `*epic*`, `*ux*`, `*brief*`, `*spec-*`).
const GLOB_WORDS: [&str; 6] = ["prd", "architecture", "epic", "ux", "brief", "spec-"];

/// The name of the file of `kind` (`prd`, `architecture`, `epics`) for `task` in
/// `planning_artifacts`: `<kind>-<task>.md`, where each glob word in the task's name but the
/// kind's own is split by a `-` after its first letter, so that no other skill's glob takes
/// the file for its input.
pub fn file_name(kind: &str, task: &str) -> String {
    let own = |w: &str| kind.starts_with(w.trim_end_matches('-'));
    let mut name = task.to_string();
    for word in GLOB_WORDS.iter().filter(|w| !own(w)) {
        name = name.replace(word, &format!("{}-{}", &word[..1], &word[1..]));
    }
    format!("{kind}-{name}.md")
}

/// Where `text` begins after its YAML front matter (`---` on its first line, up to the next
/// `---` line, as the method's templates open a document): 0 without one.
pub fn front_matter_end(text: &str) -> usize {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return 0;
    }
    let mut at = text.find('\n').map_or(text.len(), |n| n + 1);
    for line in lines {
        at += line.len();
        if line.trim_end() == "---" {
            return at;
        }
    }
    0
}

/// Whether `text` is a file the server wrote with `mark`: the mark first, or right after the
/// front matter.
pub fn marked(text: &str, mark: &str) -> bool {
    text[front_matter_end(text)..].starts_with(mark)
}

/// `document` with the server's `comment` (one line) first, after its front matter.
pub fn with_comment(document: &str, comment: &str) -> String {
    let (front, rest) = document.split_at(front_matter_end(document));
    let front = if front.is_empty() || front.ends_with('\n') {
        front.to_string()
    } else {
        format!("{front}\n")
    };
    format!("{front}{comment}\n\n{rest}")
}

/// The copy of `document` (the confirmed document of `stage` in task `task`, kept at
/// `source`), when the install wants one; `Err` with the notice that says why none is made
/// where the install's `planning_artifacts` is no place for it (a hidden folder, the
/// install's own, too deep).
///
/// `taken`: the method's file the confirmed document is, unchanged (`document_file`), which
/// needs no copy where the kind's glob finds it.
pub fn copy(
    install: &Install,
    stage: Stage,
    (task, source): (&str, &str),
    document: &str,
    taken: Option<&str>,
) -> Option<Result<Copy, String>> {
    let kind = kind(stage)?;
    let folder = install.settings.planning_artifacts.as_deref()?;
    if !install.settings.planning_copies {
        return None;
    }
    if let Some(path) = taken.filter(|p| found_whole(folder, kind, p)) {
        return Some(Err(format!(
            "The confirmed {} is the BMAD method's own {}, where its skills find it: no copy of it is written.",
            said(kind),
            crate::code::visible(&crate::code::clip(path, 200))
        )));
    }
    let path = format!("{folder}/{}", file_name(kind, task));
    if !crate::files::project::is_planning_copy(&path) {
        return Some(Err(format!(
            "No copy of the confirmed document for the BMAD method's skills: {} (the method's `planning_artifacts`) is a hidden folder, inside the install, or too deep, where the server writes nothing.",
            crate::code::visible(&crate::code::clip(folder, 200))
        )));
    }
    let content = with_comment(document, &format!(
        "{COPY_MARK}{source}, the {kind} confirmed in bmad-mcp task `{task}`, for the BMAD method's skills; it is rewritten at each confirmation: edit the original. -->"
    ));
    Some(Ok(Copy {
        notice: format!(
            "The confirmed {} is also at {path}, where the BMAD method's own skills (epics and stories, sprint planning, retrospective) look for it; it is rewritten at each confirmation (`[bmad-mcp] planning_copies = false` in _bmad/custom/config.toml turns this off).",
            said(kind)
        ),
        path,
        content,
    }))
}

fn said(kind: &str) -> &'static str {
    if kind == "prd" {
        "PRD"
    } else {
        "architecture"
    }
}

/// Whether `path` is a whole document of `kind` the skills' glob finds in `folder`
/// (`{folder}/*prd*.md`).
fn found_whole(folder: &str, kind: &str, path: &str) -> bool {
    let Some(name) = path.strip_prefix(folder).and_then(|r| r.strip_prefix('/')) else {
        return false;
    };
    !name.contains('/') && name.ends_with(".md") && name.to_lowercase().contains(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prd_is_copied_where_the_method_looks_unless_turned_off() {
        let mut install = Install::default();
        install.settings.planning_artifacts = Some("_bmad-output/planning-artifacts".into());
        install.settings.planning_copies = true;
        let c = copy(
            &install,
            Stage::Po,
            ("todo", ".bmad/specs/todo/prd.md"),
            "# PRD\n",
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.path, "_bmad-output/planning-artifacts/prd-todo.md");
        assert!(c.content.ends_with("# PRD\n"));
        assert!(
            copy(&install, Stage::Sm, ("todo", "x"), "y", None).is_none(),
            "not looked for"
        );
        install.settings.planning_artifacts = Some("_bmad/plans".into());
        let refused = copy(&install, Stage::Po, ("todo", "x"), "y", None).unwrap();
        assert!(refused.unwrap_err().contains("`planning_artifacts`"));
        install.settings.planning_copies = false;
        assert!(copy(&install, Stage::Po, ("todo", "x"), "y", None).is_none());
    }

    #[test]
    fn each_copy_is_found_by_its_own_glob_only_with_its_front_matter_first() {
        let mut install = Install::default();
        let folder = "_bmad-output/planning-artifacts";
        install.settings.planning_artifacts = Some(folder.into());
        install.settings.planning_copies = true;
        // The skills' globs, as their own text gives them, by the kind they look for.
        let globs = [
            ("prd", "prd"),
            ("architecture", "architecture"),
            ("epics", "epic"),
            ("ux", "ux"),
            ("brief", "brief"),
            ("spec", "spec-"),
        ];
        for task in ["linux-prd-architecture-epic-brief-spec-fix", "todo"] {
            for (stage, kind) in [(Stage::Po, "prd"), (Stage::Architect, "architecture")] {
                let c = copy(&install, stage, (task, "s.md"), "# D\n", None)
                    .unwrap()
                    .unwrap();
                let name = c.path.strip_prefix(&format!("{folder}/")).unwrap();
                for (which, word) in globs {
                    assert_eq!(name.contains(word), which == kind, "{name} by *{word}*");
                }
            }
            let epics = file_name("epics", task);
            for (which, word) in globs {
                assert_eq!(
                    epics.contains(word),
                    which == "epics",
                    "{epics} by *{word}*"
                );
            }
        }
        assert_eq!(file_name("prd", "todo"), "prd-todo.md");

        // Front matter stays the file's first lines; the copy is still known as ours.
        let doc = "---\ntitle: Todo\nstatus: final\n---\n\n# PRD\n";
        let c = copy(&install, Stage::Po, ("todo", "s.md"), doc, None)
            .unwrap()
            .unwrap();
        assert!(
            c.content
                .starts_with("---\ntitle: Todo\nstatus: final\n---\n<!-- A copy of s.md"),
            "{}",
            c.content
        );
        assert!(c.content.ends_with("-->\n\n\n# PRD\n"), "{}", c.content);
        assert!(marked(&c.content, COPY_MARK));
        assert!(!marked(doc, COPY_MARK));
        assert!(marked("<!-- A copy of x -->\n# PRD\n", COPY_MARK));
        assert_eq!(front_matter_end("---\nno end\n# PRD\n"), 0);

        // The method's own whole file, confirmed unchanged, is not copied again.
        let own = format!("{folder}/prd.md");
        let none = copy(&install, Stage::Po, ("todo", &own), "# D\n", Some(&own)).unwrap();
        assert!(none.unwrap_err().contains("no copy of it is written"));
        let run = format!("{folder}/prds/prd-app-1/prd.md");
        let c = copy(&install, Stage::Po, ("todo", &run), "# D\n", Some(&run)).unwrap();
        assert!(c.is_ok(), "a run folder's file is not found by `*prd*.md`");
    }
}
