//! The directories an HTTP server may work in. Over stdio the host starts the server in
//! its project, so the working directory can be trusted; over HTTP any client that may
//! connect names a directory, so the server is started with its roots (`--root DIR`) and
//! a call's `cwd` must lie inside one of them once symbolic links are resolved.

use std::path::{Path, PathBuf};

use super::project::Project;
use crate::error::{clip, Error, Result, QUOTE_CHARS};

/// The source name a project opened without `cwd` carries in messages.
const ONLY_ROOT: &str = "the server's only --root";

/// Canonical, absolute directories; never empty.
#[derive(Debug, Clone)]
pub struct Roots {
    dirs: Vec<PathBuf>,
}

impl Roots {
    /// Resolves each directory (symbolic links, `..`) and drops repeats. Refuses an empty
    /// list, a path that is not an existing directory, and the file system's root (it
    /// would let a client name any folder).
    pub fn new(dirs: &[PathBuf]) -> std::result::Result<Roots, String> {
        let mut out: Vec<PathBuf> = Vec::new();
        for dir in dirs {
            let canonical = dir.canonicalize().map_err(|e| {
                format!("--root {}: {}", dir.display(), crate::error::io_reason(&e))
            })?;
            if !canonical.is_dir() {
                return Err(format!("--root {}: not a directory", dir.display()));
            }
            if canonical.parent().is_none() {
                return Err(format!(
                    "--root {}: the file system's root would let any client use any folder; name the projects' folder",
                    dir.display()
                ));
            }
            if !out.contains(&canonical) {
                out.push(canonical);
            }
        }
        if out.is_empty() {
            return Err("at least one --root is needed".into());
        }
        Ok(Roots { dirs: out })
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The roots for a message, `, `-separated.
    pub fn describe(&self) -> String {
        let all: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        all.join(", ")
    }

    fn contains(&self, path: &Path) -> bool {
        self.dirs.iter().any(|root| path.starts_with(root))
    }

    /// Whether `cwd`, as written (absolute, no `..`), names a path inside a root.
    fn lexically_inside(&self, cwd: &str) -> bool {
        let p = Path::new(cwd);
        p.is_absolute()
            && !p.components().any(|c| c == std::path::Component::ParentDir)
            && self.contains(p)
    }

    /// The project a call names: `cwd` inside a root, or the only root when `cwd` is
    /// absent. A `cwd` outside every root is refused before anything says whether it
    /// exists, so a client learns nothing of the rest of the machine.
    pub fn open(&self, cwd: Option<&str>) -> Result<Project> {
        let Some(cwd) = cwd else {
            return match self.dirs.as_slice() {
                [only] => match projects_inside(only) {
                    held if held.is_empty() => Project::at(ONLY_ROOT, &only.display().to_string()),
                    held => Err(Error::argument(
                        crate::error::ErrorCode::MissingField,
                        format!(
                            "field `cwd` is required: this server's only root ({}) holds projects ({}) rather than being one, so a call must say which: give the absolute path of the project as `cwd`, or connect from a client that lists the project among its MCP roots (the server asks a client that declares roots, in protocol versions up to 2025-11-25)",
                            only.display(),
                            held.join(", ")
                        ),
                    )),
                },
                _ => Err(Error::argument(
                    crate::error::ErrorCode::MissingField,
                    format!(
                        "field `cwd` is required: this server has several roots ({}); give the absolute path of a project inside one of them, or connect from a client that lists such a project among its MCP roots (asked in protocol versions up to 2025-11-25)",
                        self.describe()
                    ),
                )),
            };
        };
        let forbidden = || Error::ForbiddenProject {
            cwd: clip(cwd, QUOTE_CHARS),
            roots: self.describe(),
        };
        match Project::at("field `cwd`", cwd) {
            Ok(project) if self.contains(&project.root) => Ok(project),
            Ok(_) => Err(forbidden()),
            // Unusable (missing, relative, a file): said only of a path that is inside a
            // root as written.
            Err(e) if self.lexically_inside(cwd) => Err(e),
            Err(e) if !Path::new(cwd).is_absolute() => Err(e),
            Err(_) => Err(forbidden()),
        }
    }
}

/// Whether `dir` is a project itself: it holds the workflow's state (`.bmad-task/`) or a
/// repository (`.git`).
fn is_project(dir: &Path) -> bool {
    dir.join(super::project::STATE_DIR).is_dir() || dir.join(".git").exists()
}

/// When `dir` is not a project itself, the projects directly inside it (up to three
/// names, `…` after them), so that a call without `cwd` does not put its state beside
/// them: a root that holds projects is a folder of projects, not one. Empty when `dir` is
/// a project, or holds none.
fn projects_inside(dir: &Path) -> Vec<String> {
    if is_project(dir) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && is_project(&e.path()))
        .map(|e| clip(&e.file_name().to_string_lossy(), QUOTE_CHARS))
        .collect();
    names.sort();
    if names.len() > 3 {
        names.truncate(3);
        names.push("…".into());
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(dirs: &[&Path]) -> Roots {
        Roots::new(&dirs.iter().map(|d| d.to_path_buf()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_cwd_inside_a_root_opens_and_one_outside_is_forbidden() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, out) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("out"),
        );
        for d in [&a, &b, &out, &a.join("p")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let r = roots(&[&a, &b]);
        let inside = a.join("p");
        assert_eq!(
            r.open(Some(inside.to_str().unwrap())).unwrap().root,
            inside.canonicalize().unwrap()
        );
        assert!(r.open(Some(b.to_str().unwrap())).is_ok());
        for bad in [
            out.display().to_string(),
            format!("{}/../out", a.display()),
            "/".to_string(),
            "/definitely/not/here".to_string(),
        ] {
            let e = r.open(Some(&bad)).unwrap_err();
            assert_eq!(e.code(), "forbidden_project", "{bad}: {e}");
        }
        // Inside a root but missing: the ordinary refusal.
        let missing = a.join("missing");
        let e = r.open(Some(missing.to_str().unwrap())).unwrap_err();
        assert_eq!(e.code(), "invalid_cwd");
        assert_eq!(r.open(Some("relative")).unwrap_err().code(), "invalid_cwd");
        // Two roots: no project without `cwd`.
        assert_eq!(r.open(None).unwrap_err().code(), "missing_field");
        let one = roots(&[&a]);
        assert_eq!(one.open(None).unwrap().root, a.canonicalize().unwrap());
    }

    #[test]
    fn without_cwd_a_root_that_holds_projects_is_not_one() {
        let dir = tempfile::tempdir().unwrap();
        let all = dir.path().join("code");
        std::fs::create_dir_all(all.join("app/.git")).unwrap();
        std::fs::create_dir_all(all.join("notes")).unwrap();
        let r = roots(&[&all]);
        let e = r.open(None).unwrap_err();
        assert_eq!(e.code(), "missing_field");
        assert!(
            e.to_string().contains("`cwd`") && e.to_string().contains("app"),
            "{e}"
        );
        assert!(!e.to_string().contains("notes"), "{e}");
        let app = all.join("app");
        assert!(r.open(Some(app.to_str().unwrap())).is_ok());
        // Once the root is a project itself (state or a repository), it is the project.
        std::fs::create_dir(all.join(".bmad-task")).unwrap();
        assert_eq!(r.open(None).unwrap().root, all.canonicalize().unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_inside_a_root_that_leads_out_is_forbidden() {
        let dir = tempfile::tempdir().unwrap();
        let (root, out) = (dir.path().join("root"), dir.path().join("out"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, root.join("link")).unwrap();
        let r = roots(&[&root]);
        let e = r
            .open(Some(root.join("link").to_str().unwrap()))
            .unwrap_err();
        assert_eq!(e.code(), "forbidden_project");
        // A root given through a link is resolved, so the real path is inside it.
        std::os::unix::fs::symlink(&root, dir.path().join("alias")).unwrap();
        let r = roots(&[&dir.path().join("alias")]);
        assert!(r.open(Some(root.to_str().unwrap())).is_ok());
    }

    #[test]
    fn roots_must_be_existing_directories_other_than_slash() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        for bad in [
            vec![],
            vec![file],
            vec![PathBuf::from("/")],
            vec![dir.path().join("no")],
        ] {
            assert!(Roots::new(&bad).is_err(), "{bad:?}");
        }
    }
}
