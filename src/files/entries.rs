//! Moving and removing entries of a project, beneath its handle: the folder that holds the
//! entry is opened without following a link on the way, and the entry itself is moved or
//! removed in that folder's handle (`renameat`, `unlinkat`), never followed. A folder
//! swapped for a link at any moment cannot make the server move or remove anything
//! outside the project.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::AtFlags;

use super::beneath;
use super::project::{unsafe_path, Project};
use crate::error::Result;

impl Project {
    /// The folder of `rel` opened beneath the project (none made), and the entry's name.
    fn folder_of(&self, rel: &str) -> Result<(Option<OwnedFd>, std::ffi::OsString)> {
        let p = Path::new(rel);
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return Err(unsafe_path(rel, "it names no entry of the project"));
        };
        if parent.as_os_str().is_empty() {
            return Ok((None, name.to_os_string()));
        }
        let abs = self.path(rel);
        let dir = beneath::open_dir(self.dir(), parent)
            .map_err(|e| self.beneath_error(rel, abs.parent().unwrap_or(&abs), &e))?;
        Ok((Some(dir), name.to_os_string()))
    }

    /// Moves the entry `from` to `to` (a link there is moved, not followed).
    pub fn move_entry(&self, from: &str, to: &str) -> Result<()> {
        let (from_dir, from_name) = self.folder_of(from)?;
        let (to_dir, to_name) = self.folder_of(to)?;
        let from_fd = from_dir.as_ref().map_or(self.dir(), |d| d.as_fd());
        let to_fd = to_dir.as_ref().map_or(self.dir(), |d| d.as_fd());
        rustix::fs::renameat(from_fd, &from_name, to_fd, &to_name)
            .map_err(|e| self.storage_error("move", &self.path(from), &e.into()))
    }

    /// Removes the file `rel`, or with `folder` the empty folder `rel`.
    pub fn remove_entry(&self, rel: &str, folder: bool) -> Result<()> {
        let (dir, name) = self.folder_of(rel)?;
        let fd = dir.as_ref().map_or(self.dir(), |d| d.as_fd());
        let flags = if folder {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        rustix::fs::unlinkat(fd, &name, flags)
            .map_err(|e| self.storage_error("remove", &self.path(rel), &e.into()))
    }

    /// The folder `rel` opened beneath the project without following a link, with its
    /// absolute path for messages; `None` when it does not exist (or is not a folder).
    pub(super) fn open_folder(&self, rel: &str) -> Result<Option<(std::path::PathBuf, OwnedFd)>> {
        let (_, abs) = self.check_names(rel)?;
        match beneath::open_dir(self.dir(), Path::new(rel)) {
            Err(e) => match self.explain(rel, &e) {
                Some(why) => Err(why),
                None if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
                {
                    Ok(None)
                }
                None => Err(self.beneath_error(rel, &abs, &e)),
            },
            Ok(fd) => Ok(Some((abs, fd))),
        }
    }

    /// The names at the top of the project folder, read from its handle; `None` when they
    /// cannot all be read (an error, or more than `limit`): a caller that looks for one name
    /// there then cannot rule it out.
    pub fn top_names(&self, limit: usize) -> Option<Vec<String>> {
        let entries = rustix::fs::Dir::read_from(self.dir()).ok()?;
        let mut names = Vec::new();
        for entry in entries {
            match entry.ok()?.file_name().to_str() {
                Ok("." | "..") | Err(_) => {}
                Ok(name) => names.push(name.to_string()),
            }
            if names.len() > limit {
                return None;
            }
        }
        Some(names)
    }

    /// The names of the entries of the folder `rel` (not `.`, `..`, nor names that are not
    /// UTF-8), the folder opened beneath the project without following a link; `None` when
    /// it does not exist. At most `limit` names are read.
    pub fn folder_names(&self, rel: &str, limit: usize) -> Result<Option<Vec<String>>> {
        let Some((abs, dir)) = self.open_folder(rel)? else {
            return Ok(None);
        };
        let entries = rustix::fs::Dir::read_from(&dir)
            .map_err(|e| self.storage_error("read", &abs, &e.into()))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| self.storage_error("read", &abs, &e.into()))?;
            match entry.file_name().to_str() {
                Ok("." | "..") | Err(_) => {}
                Ok(name) => names.push(name.to_string()),
            }
            if names.len() >= limit {
                break;
            }
        }
        names.sort();
        Ok(Some(names))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    #[test]
    fn a_folder_swapped_for_a_link_is_never_followed_to_move_or_remove() {
        let (dir, p) = crate::files::project::tests::project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("task-mapping.json"), "theirs").unwrap();
        // `.bmad-task` is (now) a link to a folder outside the project.
        let _ = std::fs::remove_dir_all(dir.path().join(".bmad-task"));
        symlink(outside.path(), dir.path().join(".bmad-task")).unwrap();
        let moved = p.move_entry(".bmad-task/task-mapping.json", ".bmad-task/aside.json");
        // Refused (the link is met where a folder was opened, never followed).
        assert!(moved.is_err());
        let removed = p.remove_entry(".bmad-task/task-mapping.json", false);
        assert!(removed.is_err());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("task-mapping.json")).unwrap(),
            "theirs"
        );
        assert!(!outside.path().join("aside.json").exists());

        // In a real folder both work, and a link entry is moved itself, not followed.
        std::fs::remove_file(dir.path().join(".bmad-task")).unwrap();
        std::fs::create_dir(dir.path().join(".bmad-task")).unwrap();
        symlink(
            outside.path().join("task-mapping.json"),
            dir.path().join(".bmad-task/task-mapping.json"),
        )
        .unwrap();
        p.move_entry(".bmad-task/task-mapping.json", ".bmad-task/aside.json")
            .unwrap();
        let aside = dir.path().join(".bmad-task/aside.json");
        assert!(aside.symlink_metadata().unwrap().file_type().is_symlink());
        p.remove_entry(".bmad-task/aside.json", false).unwrap();
        p.remove_entry(".bmad-task", true).unwrap();
        assert!(!dir.path().join(".bmad-task").exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("task-mapping.json")).unwrap(),
            "theirs"
        );
    }
}
