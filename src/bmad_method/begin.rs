//! The documents the method's own skills made, found where they leave them in
//! `{planning_artifacts}`, so that a task can begin from them instead of having the model
//! write them again: listed for the notice that offers it (`start`, and the stage that
//! turns to one), and one read as a stage's draft when a submission names it
//! (`document_file`), which then passes the same gates as a draft the model wrote.
//!
//! Where each lives (the installed skills' own output paths): a PRD at `prd.md` (the v6
//! name the epics skill looks for first) or in a run folder of `bmad-prd`,
//! `prds/<run>/prd.md`; an architecture at `architecture.md` or in a run folder of
//! `bmad-architecture`, `architecture/<run>/ARCHITECTURE-SPINE.md`; the epics at
//! `epics.md`. A sharded document (`*prd*/index.md`) is not taken: its index is not the
//! document. The server's own copies (`prd-<task>.md`, beginning with
//! [`super::findable::COPY_MARK`]) are never offered nor taken.

use chrono::{DateTime, Utc};

use crate::files::{Project, ReadProblem};
use crate::workflow::Stage;

use super::findable::COPY_MARK;
use super::{Install, Method};

/// The largest method document taken as a draft: a PRD is tens of kilobytes.
pub const MAX_DRAFT_BYTES: u64 = 1024 * 1024;
/// The most run folders of one skill looked in.
const MAX_RUNS: usize = 50;
/// The most documents of one kind an offer names.
const MAX_OFFERED: usize = 3;

/// A kind of document the method makes before development.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Prd,
    Architecture,
    Epics,
}

impl Kind {
    /// The kind a stage's document is: the PRD at `po`, the architecture at `architect`,
    /// the epics (input to the plan, never the plan) at `sm`.
    pub fn of(stage: Stage) -> Option<Kind> {
        match stage.id() {
            "po" => Some(Kind::Prd),
            "architect" => Some(Kind::Architecture),
            "sm" => Some(Kind::Epics),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Prd => "PRD",
            Kind::Architecture => "architecture",
            Kind::Epics => "epics",
        }
    }

    /// The whole document's name in `planning_artifacts`, and the skill's run folders
    /// with the file each holds.
    fn places(self) -> (&'static str, Option<(&'static str, &'static str)>) {
        match self {
            Kind::Prd => ("prd.md", Some(("prds", "prd.md"))),
            Kind::Architecture => (
                "architecture.md",
                Some(("architecture", "ARCHITECTURE-SPINE.md")),
            ),
            Kind::Epics => ("epics.md", None),
        }
    }

    /// Whether `rel` is a place where the method leaves this kind in `folder`.
    fn is_place(self, folder: &str, rel: &str) -> bool {
        let Some(inside) = rel.strip_prefix(folder).and_then(|r| r.strip_prefix('/')) else {
            return false;
        };
        let (whole, runs) = self.places();
        inside == whole
            || runs.is_some_and(|(runs, file)| {
                let parts: Vec<&str> = inside.split('/').collect();
                matches!(parts.as_slice(), [r, run, f] if *r == runs && *f == file
                    && !run.is_empty() && !run.starts_with('.'))
            })
    }

    /// Where the method's own skill (`bmad-prd`, `bmad-architecture`) writes it in
    /// `folder`: its run folder's file, else the whole document's place.
    pub fn skill_output(self, folder: &str) -> String {
        match self.places() {
            (_, Some((runs, file))) => format!("{folder}/{runs}/<run>/{file}"),
            (whole, None) => format!("{folder}/{whole}"),
        }
    }

    /// Where the method leaves it, for a refusal.
    fn where_said(self, folder: &str) -> String {
        let (whole, runs) = self.places();
        match runs {
            Some((runs, file)) => format!("`{folder}/{whole}` or `{folder}/{runs}/<run>/{file}`"),
            None => format!("`{folder}/{whole}`"),
        }
    }
}

/// One document the method made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub kind: Kind,
    pub path: String,
    pub bytes: u64,
    pub modified: Option<DateTime<Utc>>,
}

/// The documents of `kind` the method made in the project, the latest changed first: the
/// regular files in its places, not the server's own copies. A link, or a file that
/// cannot be read, is left out here; naming it in a submission says why.
pub fn made(project: &Project, install: &Install, kind: Kind) -> Vec<Made> {
    let Some(folder) = install.settings.planning_artifacts.as_deref() else {
        return Vec::new();
    };
    let (whole, runs) = kind.places();
    let mut paths = vec![format!("{folder}/{whole}")];
    if let Some((runs, file)) = runs {
        let dir = format!("{folder}/{runs}");
        if let Some(names) = project.names_in_project(&dir, MAX_RUNS) {
            let runs = names.into_iter().filter(|n| !n.starts_with('.'));
            paths.extend(runs.map(|run| format!("{dir}/{run}/{file}")));
        }
    }
    let mut found: Vec<Made> = paths
        .into_iter()
        .filter_map(|path| {
            let meta = project.stat_in_project(&path).ok()??;
            if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
                return None;
            }
            // A file of ours under the method's name is no document the method made.
            if meta.len() <= MAX_DRAFT_BYTES {
                let text = project.read_in_project(&path, MAX_DRAFT_BYTES).ok()??;
                if super::findable::marked(&text, COPY_MARK) {
                    return None;
                }
            }
            Some(Made {
                kind,
                bytes: meta.len(),
                modified: meta.modified().ok().map(DateTime::<Utc>::from),
                path,
            })
        })
        .collect();
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.path.cmp(&b.path)));
    found
}

/// The notice offering to begin `stage` from the method's document, when the project has
/// one: a few lines, said only then. `method`: the call's install.
pub fn offer(method: &Method, stage: Stage) -> Option<String> {
    let kind = Kind::of(stage)?;
    let install = method.install()?;
    let found = made(method.project(), install, kind);
    let first = found.first()?;
    let listed: Vec<String> = found.iter().take(MAX_OFFERED).map(described).collect();
    let more = match found.len().saturating_sub(MAX_OFFERED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let docs = format!("{}{more}", listed.join(", "));
    Some(match kind {
        Kind::Epics => format!(
            "The BMAD method's epics are in this project: {docs}. Plan from them (each sprint a `## Sprint N: …` heading, naming the stories it builds); the plan is not taken from the file, since the method's epics have no sprints."
        ),
        _ => format!(
            "The BMAD method's {} is in this project: {docs}. To begin from it, submit with `document_file: \"{}\"` instead of writing one: the server reads it, and the gate and the human's confirmation apply as to any draft.",
            kind.name(),
            crate::code::visible(&crate::code::clip(&first.path, 200))
        ),
    })
}

/// A document for the offer: its path, size and when it changed.
fn described(m: &Made) -> String {
    let when = m
        .modified
        .map(|t| format!(", changed {}", t.format("%Y-%m-%d %H:%M UTC")))
        .unwrap_or_default();
    let size = if m.bytes < 1024 {
        format!("{} bytes", m.bytes)
    } else {
        format!("{:.1} KiB", m.bytes as f64 / 1024.0)
    };
    format!(
        "{} ({size}{when})",
        crate::code::visible(&crate::code::clip(&m.path, 200))
    )
}

/// A `document_file` as the server reads and records it: without surrounding blanks and a
/// leading `./` (the project's folder), so `./plans/prd.md` names `plans/prd.md`.
pub fn draft_path(given: &str) -> &str {
    let mut rel = given.trim();
    while let Some(rest) = rel.strip_prefix("./") {
        rel = rest.trim_start_matches('/');
    }
    rel
}

/// A method document read as a stage's draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub path: String,
    pub text: String,
    /// When the file last changed, as the file system says.
    pub modified: Option<DateTime<Utc>>,
}

/// Who wrote the draft read from `draft`, as git and the work tree show it, for the human
/// who decides on it: the last commit that touched it and its author when the file is as
/// committed, else that it was not committed (written on this machine, and whether after
/// the task began at `task_began`, RFC 3339): a person or the assistant, which git cannot
/// tell. Nothing here says the assistant did not write it: nothing can know that.
pub fn who_wrote(project: &Project, draft: &Draft, task_began: &str) -> String {
    use crate::git::LastChange;
    let changed = draft
        .modified
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
    let began = DateTime::parse_from_rfc3339(task_began)
        .ok()
        .map(|t| t.with_timezone(&Utc));
    let after_start = matches!((draft.modified, began), (Some(m), Some(b)) if m >= b);
    let on_machine = || {
        let when = changed
            .as_deref()
            .map(|c| format!(", changed {c}"))
            .unwrap_or_default();
        let during = if after_start {
            " after this task began"
        } else {
            ""
        };
        format!("not committed: written on this machine{during}{when}, by a person or by the assistant (git cannot tell which)")
    };
    let Some(repo) = crate::git::Repo::at(&project.root) else {
        return format!(
            "not in a git repository, so who wrote it is not known: {}",
            on_machine()
        );
    };
    let as_committed = |c: &crate::git::Commit| {
        format!(
            "last committed in {} by {} ({}); the commit's author is what git records, whoever typed it",
            crate::code::visible(&crate::code::clip(&c.id, 16)),
            crate::code::visible(&crate::code::clip(&c.author, 120)),
            crate::code::visible(&crate::code::clip(&c.date, 40))
        )
    };
    match repo.last_change(&draft.path) {
        // git's status does not see a change hidden from it (`--skip-worktree`): the text
        // read is compared with the commit's.
        Some(LastChange::Committed(c))
            if repo.committed_text(&draft.path) == Some(Some(draft.text.clone())) =>
        {
            as_committed(&c)
        }
        Some(LastChange::Committed(c)) | Some(LastChange::Uncommitted { since: Some(c) }) => {
            format!(
                "{}, changed since its last commit ({})",
                on_machine(),
                as_committed(&c)
            )
        }
        Some(LastChange::Uncommitted { since: None }) | Some(LastChange::Untracked) => on_machine(),
        None => format!("git could not say who changed it: {}", on_machine()),
    }
}

/// The method's document at `rel`, read as the draft of `stage`, or why it cannot be: the
/// stage takes none, no install or no `planning_artifacts`, a path that is not one of the
/// method's places for the stage's document, a file that is absent, a link (symbolic, or a
/// hard link: a file with other names), too large, not UTF-8, empty, or the server's own
/// copy. `rel` is read as [`draft_path`] writes it; `method`: the call's install.
pub fn read_draft(method: &Method, stage: Stage, rel: &str) -> Result<Draft, String> {
    let project = method.project();
    let kind = match Kind::of(stage) {
        Some(Kind::Epics) => return Err("the method's epics are not a sprint plan (they have no `## Sprint N:` headings): read them and write the plan in `claude_result`".into()),
        Some(kind) => kind,
        None => return Err(format!(
            "stage `{stage}` takes no document of the BMAD method's; `document_file` is for the PRD at `po` and the architecture at `architect`"
        )),
    };
    let install = method.install()
        .ok_or("no BMAD method (v6) is installed in this project, so there is no document of the method's to take")?;
    let folder = install.settings.planning_artifacts.as_deref().ok_or(
        "the BMAD method's `planning_artifacts` is not set to a folder of the project (_bmad/bmm/config.yaml)",
    )?;
    let rel = draft_path(rel);
    let shown = crate::code::visible(&crate::code::clip(rel, 200));
    if !kind.is_place(folder, rel) {
        return Err(format!(
            "`{shown}` is not where the BMAD method leaves a {}: {}",
            kind.name(),
            kind.where_said(folder)
        ));
    }
    let text = match project.read_one_name_in_project(rel, MAX_DRAFT_BYTES) {
        Ok(Some(text)) => text,
        Ok(None) => return Err(format!("there is no file at `{shown}`")),
        Err(ReadProblem::TooLarge { size, limit }) => {
            return Err(format!(
                "`{shown}` is {size} bytes, over the {limit} bytes a method document taken as a draft may be"
            ))
        }
        Err(problem) => return Err(format!("`{shown}` cannot be taken: {problem}")),
    };
    if super::findable::marked(&text, COPY_MARK) {
        return Err(format!(
            "`{shown}` is the server's own copy of a confirmed document, not one the method made"
        ));
    }
    if text.trim().is_empty() {
        return Err(format!("`{shown}` is empty"));
    }
    let modified = project
        .stat_in_project(rel)
        .ok()
        .flatten()
        .and_then(|m| m.modified().ok())
        .map(DateTime::<Utc>::from);
    Ok(Draft {
        path: rel.to_string(),
        text,
        modified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_places_of_each_kind_are_the_skills_own() {
        let f = "_bmad-output/planning-artifacts";
        assert!(Kind::Prd.is_place(f, &format!("{f}/prd.md")));
        assert!(Kind::Prd.is_place(f, &format!("{f}/prds/prd-app-2026-11-27/prd.md")));
        assert!(Kind::Architecture.is_place(
            f,
            &format!("{f}/architecture/architecture-app-1/ARCHITECTURE-SPINE.md")
        ));
        assert!(Kind::Architecture.is_place(f, &format!("{f}/architecture.md")));
        for not in [
            format!("{f}/prd-todo.md"),
            format!("{f}/prds/.hidden/prd.md"),
            format!("{f}/prds/a/b/prd.md"),
            format!("{f}/prd/index.md"),
            "prd.md".to_string(),
            format!("{f}/architecture.md"),
        ] {
            assert!(!Kind::Prd.is_place(f, &not), "{not}");
        }
        assert_eq!(Kind::of(Stage::Po), Some(Kind::Prd));
        assert_eq!(Kind::of(Stage::Dev), None);
    }

    fn installed() -> (tempfile::TempDir, Project) {
        let (dir, project) = crate::files::project::tests::project();
        let p = dir.path();
        std::fs::create_dir_all(p.join("_bmad/bmm")).unwrap();
        std::fs::write(
            p.join("_bmad/bmm/config.yaml"),
            "planning_artifacts: \"{project-root}/plans\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(p.join(".claude/skills/bmad-prd")).unwrap();
        std::fs::create_dir_all(p.join("plans/prds/run-1")).unwrap();
        (dir, project)
    }

    #[test]
    fn the_methods_prd_is_offered_and_read_and_our_copy_is_neither() {
        let (dir, project) = installed();
        let p = dir.path();
        assert_eq!(
            offer(&Method::of(&project), Stage::Po),
            None,
            "nothing made yet"
        );
        std::fs::write(
            p.join("plans/prd-todo-ada-1234.md"),
            format!("{COPY_MARK}x -->\n# PRD"),
        )
        .unwrap();
        std::fs::write(
            p.join("plans/prds/run-1/prd.md"),
            format!("{COPY_MARK}x -->\n# PRD"),
        )
        .unwrap();
        assert_eq!(
            offer(&Method::of(&project), Stage::Po),
            None,
            "our copies are not the method's"
        );
        let refused =
            read_draft(&Method::of(&project), Stage::Po, "plans/prds/run-1/prd.md").unwrap_err();
        assert!(refused.contains("the server's own copy"), "{refused}");
        std::fs::write(
            p.join("plans/prd.md"),
            "# PRD\n\n## Overview\nA todo app.\n",
        )
        .unwrap();
        let said = offer(&Method::of(&project), Stage::Po).unwrap();
        assert!(
            said.contains("plans/prd.md (") && said.contains("document_file"),
            "{said}"
        );
        assert!(
            !said.contains("prd-todo") && !said.contains("run-1"),
            "{said}"
        );
        std::fs::create_dir_all(p.join("plans/prds/run-2")).unwrap();
        std::fs::write(p.join("plans/prds/run-2/prd.md"), "# PRD 2\n").unwrap();
        let found = made(&project, Method::of(&project).install().unwrap(), Kind::Prd);
        let paths: Vec<&str> = found.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert!(paths.contains(&"plans/prds/run-2/prd.md"), "{paths:?}");
        let draft = read_draft(&Method::of(&project), Stage::Po, "./plans/prd.md").unwrap();
        assert_eq!(
            (draft.path.as_str(), draft.text.starts_with("# PRD")),
            ("plans/prd.md", true)
        );
        let wrong =
            read_draft(&Method::of(&project), Stage::Architect, "plans/prd.md").unwrap_err();
        assert!(wrong.contains("`plans/architecture.md`"), "{wrong}");
        assert!(
            read_draft(&Method::of(&project), Stage::Sm, "plans/epics.md")
                .unwrap_err()
                .contains("not a sprint plan")
        );
    }

    #[test]
    fn the_epics_are_offered_as_the_plans_input_never_as_the_plan() {
        let (dir, project) = installed();
        assert_eq!(offer(&Method::of(&project), Stage::Sm), None);
        std::fs::write(dir.path().join("plans/epics.md"), "## Epic 1: Lists\n").unwrap();
        let said = offer(&Method::of(&project), Stage::Sm).unwrap();
        assert!(
            said.contains("plans/epics.md (17 bytes") && said.contains("`## Sprint N: …`"),
            "{said}"
        );
        assert!(!said.contains("document_file"), "{said}");
        assert_eq!(offer(&Method::of(&project), Stage::Dev), None);
    }

    #[test]
    fn a_link_and_an_oversized_file_are_refused_with_the_reason() {
        let (dir, project) = installed();
        let p = dir.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("prd.md"), "# secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("prd.md"), p.join("plans/prd.md")).unwrap();
        let link = read_draft(&Method::of(&project), Stage::Po, "plans/prd.md").unwrap_err();
        assert!(link.contains("symbolic link"), "{link}");
        assert_eq!(
            offer(&Method::of(&project), Stage::Po),
            None,
            "a link is not offered"
        );
        std::fs::remove_file(p.join("plans/prd.md")).unwrap();
        std::fs::write(
            p.join("plans/prd.md"),
            "x".repeat(MAX_DRAFT_BYTES as usize + 1),
        )
        .unwrap();
        let large = read_draft(&Method::of(&project), Stage::Po, "plans/prd.md").unwrap_err();
        assert!(large.contains("over the 1048576 bytes"), "{large}");
        assert!(read_draft(&Method::of(&project), Stage::Po, "plans/gone/../prd.md").is_err());
    }
}
