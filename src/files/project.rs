//! A project directory: finding it, keeping every write inside `.bmad-task/`,
//! `.claude/specs/` and the team's `.bmad/lessons/`, atomic writes, and the cross-process
//! lock.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

pub const STATE_DIR: &str = ".bmad-task";
pub const SPECS_DIR: &str = ".claude/specs";
/// The human's folder (committed): the project policy and prompt overrides, read only;
/// and the team's lessons (`.bmad/lessons/`), which the server writes.
pub const HUMAN_DIR: &str = ".bmad";
/// The files at the top of the project that a human's command may write
/// ([`Project::write_top_file`]): never the tool.
pub const TOP_FILES: [&str; 2] = [".gitignore", ".gitattributes"];

/// The folders an installed BMAD method keeps its agents in (v4 `.bmad-core/`, v6
/// `_bmad/`, and the skills folders its installer writes for each tool it knows, as
/// `bmad-method install --list-tools` names them): read only, for the personas that feed
/// role prompts.
pub const BMAD_INSTALL_DIRS: [&str; 24] = [
    ".bmad-core",
    "_bmad",
    ".claude/skills",
    ".agents/skills",
    ".adal/skills",
    ".cline/skills",
    ".codebuddy/skills",
    ".codewhale/skills",
    ".factory/skills",
    ".firebender/skills",
    ".agent/skills",
    ".bob/skills",
    ".iflow/skills",
    ".junie/skills",
    ".kiro/skills",
    ".kode/skills",
    ".neovate/skills",
    ".ona/skills",
    ".qoder/skills",
    ".qwen/skills",
    ".cortex/skills",
    ".trae/skills",
    ".zcode/skills",
    ".zencoder/skills",
];

/// Whether `rel` is a file the server writes for an installed BMAD method's own skills: a
/// copy of a confirmed document, `prd-<task>.md` or `architecture-<task>.md`, or an
/// approved plan as the method's epics, `epics-<task>.md` (the method's
/// `planning_artifacts`), or the method's `sprint-status.yaml`, a story's spec for its
/// `bmad-build`, `spec-<key>.md`, or a completed task's lessons for its retrospective,
/// `bmad-mcp-lessons-<task>.md` (its `implementation_artifacts`), in a folder of the project that is not hidden. The only
/// files the server writes outside its areas, under those names only.
pub fn is_planning_copy(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, folders)) = parts.split_last() else {
        return false;
    };
    let plain = |p: &&str| !p.is_empty() && !p.starts_with('.') && *p != "..";
    let task = [
        "prd-",
        "architecture-",
        "epics-",
        "bmad-mcp-lessons-",
        "spec-",
    ]
    .iter()
    .find_map(|k| name.strip_prefix(k))
    .and_then(|n| n.strip_suffix(".md"))
    .or((*name == "sprint-status.yaml").then_some("sprint-status"));
    let slug = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    let installed = BMAD_INSTALL_DIRS
        .iter()
        .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')));
    !installed
        && !folders.is_empty()
        && folders.len() <= 8
        && folders.iter().all(plain)
        && task.is_some_and(slug)
}
/// Whether `rel` is an installed BMAD method's deferred-work ledger: `deferred-work.md` in
/// a folder of the project that is not hidden nor the install's own (the method's
/// `implementation_artifacts`), where the server appends the findings a human deferred.
pub fn is_deferred_ledger(rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((name, folders)) = parts.split_last() else {
        return false;
    };
    let plain = |p: &&str| !p.is_empty() && !p.starts_with('.') && *p != "..";
    let installed = BMAD_INSTALL_DIRS
        .iter()
        .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')));
    *name == "deferred-work.md"
        && !installed
        && !folders.is_empty()
        && folders.len() <= 8
        && folders.iter().all(plain)
}

/// The name prefix of the temporary file behind every atomic write. Writes happen only
/// under the project lock, so whoever holds the lock knows that such files are leftovers
/// of a writer that died mid-write.
pub(super) const TEMP_PREFIX: &str = ".bmad-tmp-";

/// Where the project root comes from when a call gives no `cwd` (docs/spec.md §7.1).
#[derive(Debug, Clone)]
pub struct DefaultRoot {
    pub source_name: &'static str,
    pub value: String,
}

/// The name [`DefaultRoot::working_directory`] gives the working directory as a source.
pub const WORKING_DIRECTORY: &str = "the server's working directory";

/// What to do when the server cannot tell the project by itself.
const NAME_THE_PROJECT: &str = "name the project: give `cwd` (its absolute path) in the call, or set BMAD_PROJECT_ROOT (or CLAUDE_PROJECT_DIR) in the server's environment";

impl DefaultRoot {
    /// The project the working directory is in (see [`find_project`]): the default root when the
    /// settings name none
    /// ([`settings::Settings::default_root`](crate::settings::Settings::default_root)).
    pub fn working_directory() -> DefaultRoot {
        DefaultRoot {
            source_name: WORKING_DIRECTORY,
            value: std::env::current_dir()
                .map(|p| find_project(&p).display().to_string())
                .unwrap_or_default(),
        }
    }
}

/// The project a directory is in, found as git finds a repository: the nearest ancestor
/// (itself included) that holds `.bmad-task/`, else the nearest that holds `.git`, else
/// the directory itself. A host started in a subfolder so shares the project's state
/// instead of starting a second `.bmad-task/` there.
pub fn find_project(start: &Path) -> PathBuf {
    let holding = |name: &str, dir_only: bool| {
        start
            .ancestors()
            .find(|a| std::fs::metadata(a.join(name)).is_ok_and(|m| !dir_only || m.is_dir()))
    };
    holding(STATE_DIR, true)
        .or_else(|| holding(".git", false))
        .unwrap_or(start)
        .to_path_buf()
}

/// The refusal of the path `rel`, saying why.
pub(super) fn unsafe_path(rel: &str, reason: &str) -> Error {
    Error::UnsafePath {
        path: rel.to_string(),
        reason: reason.to_string(),
    }
}

/// Whether this process may create files in `dir`.
fn writable(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
    }
    #[cfg(not(unix))]
    {
        !std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly())
    }
}

#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical absolute path: where the folder that `dir` holds open was when opened.
    pub root: PathBuf,
    /// The project folder, opened once: every read and write of its areas resolves
    /// beneath it ([`super::beneath`]), never through `root` by name.
    dir: std::sync::Arc<std::os::fd::OwnedFd>,
}

impl Project {
    /// Opens the project named by a `cwd` argument, or the default root.
    pub fn open(cwd: Option<&str>, default: &DefaultRoot) -> Result<Project> {
        match cwd {
            Some(c) => Project::at("field `cwd`", c),
            None => Project::at(default.source_name, &default.value),
        }
    }

    pub(super) fn at(source_name: &'static str, value: &str) -> Result<Project> {
        let invalid = |reason: &str| Error::InvalidProject {
            source_name,
            value: crate::error::clip(value, crate::error::QUOTE_CHARS),
            reason: reason.to_string(),
        };
        let p = Path::new(value);
        if value.trim().is_empty() {
            return Err(invalid(
                "it is empty; give the absolute path of the project",
            ));
        }
        if !p.is_absolute() {
            return Err(invalid("it must be an absolute path"));
        }
        // Opened once; `root` is then where that very folder is (read from the handle),
        // so a check of `root` (against the HTTP server's roots) is a check of where
        // every byte goes.
        let (dir, root) = super::beneath::open_root(p).map_err(|e| {
            invalid(match e.kind() {
                std::io::ErrorKind::NotFound => "no such directory",
                std::io::ErrorKind::NotADirectory => "it is not a directory",
                _ => "it cannot be opened",
            })
        })?;
        // A host started outside any project: the server cannot guess which is meant.
        if source_name == WORKING_DIRECTORY {
            if root.parent().is_none() {
                return Err(invalid(&format!(
                    "it is the file system's root, not a project; {NAME_THE_PROJECT}"
                )));
            }
            if !writable(&root) {
                return Err(invalid(&format!(
                    "the server may not write there; {NAME_THE_PROJECT}"
                )));
            }
        }
        Ok(Project {
            root,
            dir: std::sync::Arc::new(dir),
        })
    }

    /// A folder the server keeps state in beside the project (the stories' entries in
    /// the git common directory), confined as a project is.
    pub fn shared(dir: &Path) -> Result<Project> {
        Project::at("the shared stories folder", &dir.display().to_string())
    }

    /// The project folder's handle.
    pub(super) fn dir(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.dir.as_fd()
    }

    pub fn display(&self) -> String {
        self.root.display().to_string()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Whether `.bmad-task/` exists (a read never creates it).
    pub fn has_state(&self) -> bool {
        self.root.join(STATE_DIR).is_dir()
    }

    /// Checks that a relative path stays inside `.bmad-task/` or `.claude/specs/` (or, to
    /// be read, the human's `.bmad/`), with
    /// no `..`, no absolute part, and no symlink on the way that leads elsewhere.
    pub fn check(&self, rel: &str) -> Result<PathBuf> {
        let (area, abs) = self.check_names(rel)?;
        self.check_links(rel, area)?;
        Ok(abs)
    }

    /// The part of [`Project::check`] that looks at the path's text only: relative, no
    /// `..`, inside an area. The reads and writes beneath the project's handle use it and
    /// walk the links (a `stat` per component) only to name the problem when the handle
    /// met one ([`Project::explain`]): the handle follows none, whatever was checked.
    pub(super) fn check_names(&self, rel: &str) -> Result<(&'static str, PathBuf)> {
        let p = Path::new(rel);
        if !p.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(unsafe_path(rel, "the path must be relative without `..`"));
        }
        let area = if rel.starts_with(".bmad-task/") {
            STATE_DIR
        } else if rel.starts_with(".claude/specs/") {
            SPECS_DIR
        } else if rel.starts_with(".bmad/") {
            // The human's folder: read (the policy, prompt overrides); of it only the
            // lessons are written.
            HUMAN_DIR
        } else if is_planning_copy(rel) || is_deferred_ledger(rel) {
            // A confirmed document's copy for the BMAD method's skills, or its ledger of
            // deferred work (src/bmad_method/).
            ""
        } else if TOP_FILES.contains(&rel) {
            // Written only by the human's own command (`bmad-mcp init`).
            ""
        } else if let Some(dir) = BMAD_INSTALL_DIRS.iter().find(|d| {
            rel.strip_prefix(**d)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        }) {
            // An installed BMAD method: read, never written (see `prepare`).
            dir
        } else {
            return Err(unsafe_path(
                rel,
                "only .bmad-task/ and .claude/specs/ are written",
            ));
        };
        Ok((area, self.root.join(p)))
    }

    /// Why an operation beneath the project's handle failed with `e`, when a link on the
    /// path explains it ([`Project::check`]'s message); `None` otherwise.
    pub(super) fn explain(&self, rel: &str, e: &std::io::Error) -> Option<Error> {
        if e.kind() == std::io::ErrorKind::NotFound {
            return None;
        }
        self.check(rel).err()
    }

    /// Every existing ancestor of `rel`, resolved, must stay under the project's `area`.
    fn check_links(&self, rel: &str, area: &str) -> Result<()> {
        let p = Path::new(rel);
        let allowed = self.root.join(area);
        let mut cur = self.root.clone();
        for c in p.components() {
            cur.push(c);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = cur.canonicalize().map_err(|_| {
                        unsafe_path(rel, "a symbolic link on the path points nowhere")
                    })?;
                    if !target.starts_with(&allowed) {
                        return Err(unsafe_path(
                            rel,
                            &format!(
                                "{} is a symbolic link that leads outside {}",
                                cur.strip_prefix(&self.root).unwrap_or(&cur).display(),
                                area
                            ),
                        ));
                    }
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::files::sync::sync_together;

    /// A project in a fresh temporary directory (the store's unit tests share it).
    pub(crate) fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::at("test", dir.path().to_str().unwrap()).unwrap();
        (dir, p)
    }

    #[test]
    fn relative_missing_and_file_cwds_are_refused() {
        let (dir, _) = project();
        let d = DefaultRoot::working_directory();
        for bad in ["relative/dir", "", "/definitely/not/here"] {
            let e = Project::open(Some(bad), &d).unwrap_err();
            assert_eq!(e.code(), "invalid_cwd", "{bad}");
            assert!(e.to_string().contains("`cwd`"));
        }
        let f = dir.path().join("file");
        std::fs::write(&f, "x").unwrap();
        let e = Project::open(Some(f.to_str().unwrap()), &d).unwrap_err();
        assert!(e.to_string().contains("not a directory"));
    }

    #[test]
    fn a_planning_copy_is_named_as_one_in_a_plain_folder() {
        for ok in [
            "_bmad-output/planning-artifacts/prd-build-a-todo-app.md",
            "docs/architecture-x1.md",
            "_bmad-output/implementation-artifacts/bmad-mcp-lessons-x1.md",
            "_bmad-output/planning-artifacts/epics-todo-app.md",
            "_bmad-output/implementation-artifacts/sprint-status.yaml",
            "_bmad-output/implementation-artifacts/spec-1-2-list-page.md",
        ] {
            assert!(is_planning_copy(ok), "{ok}");
        }
        for not in [
            "prd-x.md",
            "docs/notes.md",
            "docs/prd-X.md",
            "docs/prd-.md",
            ".git/prd-x.md",
            "_bmad/plans/prd-x.md",
            "a/../prd-x.md",
            "docs//prd-x.md",
            "sprint-status.yaml",
            "docs/sprint-status.yml",
            "docs/epics.md",
            "docs/spec-.md",
            ".git/sprint-status.yaml",
        ] {
            assert!(!is_planning_copy(not), "{not}");
        }
        assert!(is_deferred_ledger(
            "_bmad-output/implementation-artifacts/deferred-work.md"
        ));
        for not in [
            "deferred-work.md",
            "docs/deferred.md",
            ".hidden/deferred-work.md",
            "_bmad/x/deferred-work.md",
            "a/../deferred-work.md",
        ] {
            assert!(!is_deferred_ledger(not), "{not}");
        }
    }

    #[test]
    fn paths_outside_the_two_areas_are_refused() {
        let (_d, p) = project();
        for bad in [
            "../x",
            ".bmad-task/../x",
            "/etc/passwd",
            "src/main.rs",
            ".claude/settings.json",
            ".claude/specs/../../x",
        ] {
            assert_eq!(p.check(bad).unwrap_err().code(), "unsafe_path", "{bad}");
        }
        assert!(p.check(".bmad-task/session-x.json").is_ok());
        assert!(p.check(".claude/specs/t/01.md").is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_area_leading_outside_is_refused() {
        let (_d, p) = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(p.root.join(".claude")).unwrap();
        std::os::unix::fs::symlink(outside.path(), p.root.join(".claude/specs")).unwrap();
        let e = p.write_atomic(".claude/specs/t/a.md", b"x").unwrap_err();
        assert_eq!(e.code(), "unsafe_path");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn atomic_writes_replace_whole_files() {
        let (_d, p) = project();
        p.write_atomic(".bmad-task/a.json", b"one").unwrap();
        p.write_atomic(".bmad-task/a.json", b"two").unwrap();
        assert_eq!(p.read(".bmad-task/a.json").unwrap().as_deref(), Some("two"));
        assert_eq!(p.read(".bmad-task/none.json").unwrap(), None);
        let names: Vec<_> = std::fs::read_dir(p.root.join(".bmad-task"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["a.json"]);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn written_files_get_the_usual_mode_and_keep_a_changed_one() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, p) = project();
        let mode = |rel: &str| {
            std::fs::metadata(p.root.join(rel))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        p.write_atomic(".claude/specs/t/a.md", b"one").unwrap();
        // 0666 less the umask (Linux reports it in /proc), never the private 0600.
        let umask = procfs::process::Process::myself()
            .and_then(|me| me.status())
            .ok()
            .and_then(|s| s.umask)
            .unwrap_or(0o022);
        assert_eq!(mode(".claude/specs/t/a.md"), 0o666 & !umask);
        let abs = p.root.join(".claude/specs/t/a.md");
        std::fs::set_permissions(&abs, std::fs::Permissions::from_mode(0o640)).unwrap();
        p.write_atomic(".claude/specs/t/a.md", b"two").unwrap();
        assert_eq!(mode(".claude/specs/t/a.md"), 0o640);
    }

    #[test]
    fn stale_temporary_files_are_swept_and_nothing_else() {
        let (_d, p) = project();
        p.write_atomic(".bmad-task/a.json", b"one").unwrap();
        let dir = p.root.join(".bmad-task");
        std::fs::write(dir.join(".bmad-tmp-x1"), b"half a fi").unwrap();
        std::fs::write(dir.join(".tmp-other"), b"not ours").unwrap();
        std::fs::create_dir(dir.join(".bmad-tmp-dir")).unwrap();
        assert_eq!(p.sweep_stale_temp(".bmad-task"), 1);
        assert_eq!(names_in(&dir), [".bmad-tmp-dir", ".tmp-other", "a.json"]);
        assert_eq!(p.sweep_stale_temp(".claude/specs/none"), 0);
        assert_eq!(p.sweep_stale_temp("../outside"), 0);
    }

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn groups_of_files_are_written_whole_without_leftovers() {
        let (_d, p) = project();
        p.write_atomic(".bmad-task/session.json", b"old").unwrap();
        p.write_in_order(
            &[
                &[
                    (".bmad-task/temp/s/a.md", b"first"),
                    (".bmad-task/temp/s/b.md", b"second"),
                    (".claude/specs/t/01.md", b"third"),
                ],
                &[(".bmad-task/session.json", b"new")],
            ],
            &[".claude/specs", ".bmad-task/not-there"],
        )
        .unwrap();
        let read = |rel: &str| p.read(rel).unwrap().unwrap();
        assert_eq!(read(".bmad-task/temp/s/a.md"), "first");
        assert_eq!(read(".bmad-task/temp/s/b.md"), "second");
        assert_eq!(read(".claude/specs/t/01.md"), "third");
        assert_eq!(read(".bmad-task/session.json"), "new");
        assert_eq!(
            names_in(&p.root.join(".bmad-task/temp/s")),
            ["a.md", "b.md"]
        );
        assert_eq!(names_in(&p.root.join(".claude/specs/t")), ["01.md"]);
        assert_eq!(
            names_in(&p.root.join(".bmad-task")),
            ["session.json", "temp"]
        );
    }

    #[test]
    fn an_unsafe_path_anywhere_in_a_batch_writes_nothing() {
        let (_d, p) = project();
        p.write_atomic(".bmad-task/session.json", b"old").unwrap();
        let e = p
            .write_in_order(
                &[
                    &[(".bmad-task/temp/s/a.md", b"doc")],
                    &[(".bmad-task/session.json", b"new"), ("src/x.rs", b"no")],
                ],
                &[],
            )
            .unwrap_err();
        assert_eq!(e.code(), "unsafe_path");
        assert_eq!(p.read(".bmad-task/session.json").unwrap().unwrap(), "old");
        assert_eq!(
            names_in(&p.root.join(".bmad-task/temp/s")),
            Vec::<String>::new()
        );
        assert!(!p.root.join("src").exists());
    }

    #[test]
    fn files_synced_together_each_get_their_result() {
        let (_d, p) = project();
        let files: Vec<std::fs::File> = (0..5)
            .map(|i| std::fs::File::create(p.root.join(format!("f{i}"))).unwrap())
            .collect();
        let results = sync_together(&files);
        assert_eq!(results.len(), 5);
        assert!(results.iter().all(|r| r.is_ok()));
        assert!(sync_together(&[]).is_empty());
    }

    #[test]
    fn a_task_directory_is_reserved_once() {
        let (_d, p) = project();
        assert!(p.create_dir_new(".claude/specs/t").unwrap());
        assert!(!p.create_dir_new(".claude/specs/t").unwrap());
    }
}
