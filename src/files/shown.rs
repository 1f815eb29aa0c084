//! How an error names a file: inside the project, by its path relative to the project
//! (`.bmad-task/temp`), as every other message does; outside it, in full.

use std::path::Path;

use super::Project;
use crate::error::Error;

impl Project {
    /// `path` as a message shows it: relative to the project when inside it.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// [`Error::storage`] naming `path` as [`Project::shown`] does.
    pub fn storage_error(&self, op: &'static str, path: &Path, err: &std::io::Error) -> Error {
        let mut e = Error::storage(op, path, err);
        if let Error::Storage { path: p, .. } = &mut e {
            *p = self.shown(path);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_inside_the_project_are_named_relative_to_it() {
        let (_dir, p) = crate::files::project::tests::project();
        let root = p.root.clone();
        assert_eq!(p.shown(&root.join(".bmad-task/temp")), ".bmad-task/temp");
        assert_eq!(p.shown(Path::new("/elsewhere/x")), "/elsewhere/x");
        assert_eq!(p.shown(&root), root.display().to_string());
        let err = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = p.storage_error("write", &root.join(".bmad-task/a.json"), &err);
        assert!(e.to_string().contains(" .bmad-task/a.json"), "{e}");
        assert!(!e.to_string().contains(&root.display().to_string()), "{e}");
    }
}
