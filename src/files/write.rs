//! Writing a project's files: atomic (a temporary file beside the target, fsync, rename),
//! durable in the order the caller needs, and confined: every folder is made and opened
//! beneath the project's handle and every file is replaced by a rename in its folder's
//! handle ([`super::beneath`]), so no write follows a link or writes into a file the
//! server did not create.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::beneath::{self, Temp};
use super::project::{unsafe_path, Project, TEMP_PREFIX, TOP_FILES};
use super::staged::Staged;
use super::sync::sync_and_discard;
use crate::error::{Error, Result};

/// The one folder of the human's `.bmad/` that the server writes: the team's lessons.
pub const LESSONS_PREFIX: &str = ".bmad/lessons/";

impl Project {
    /// Checks `rel`, makes its folders beneath the project and opens the last one:
    /// the absolute path (for messages), the folder's handle and the file's name.
    pub(super) fn prepare(&self, rel: &str) -> Result<(PathBuf, Arc<OwnedFd>, OsString)> {
        // The project's top files (`.gitignore`) are written by the human's command only.
        if TOP_FILES.contains(&rel) {
            return Err(unsafe_path(
                rel,
                "the server never writes the project's top files (only `bmad-mcp init` does)",
            ));
        }
        // The human's folder is theirs; the one exception is the team's lessons, which
        // the server records there for the team to commit (src/lessons/).
        if rel.starts_with(".bmad/") && !rel.starts_with(LESSONS_PREFIX) {
            return Err(unsafe_path(
                rel,
                "the server writes nothing in the human's .bmad/ folder but lessons (.bmad/lessons/)",
            ));
        }
        if super::project::BMAD_INSTALL_DIRS
            .iter()
            .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
        {
            return Err(unsafe_path(
                rel,
                "the server never writes an installed BMAD method's files",
            ));
        }
        let (_, abs) = self.check_names(rel)?;
        let p = Path::new(rel);
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return Err(self.beneath_error(rel, &abs, &std::io::ErrorKind::InvalidInput.into()));
        };
        let dir = beneath::make_dirs(self.dir(), parent).map_err(|e| {
            self.explain(rel, &e)
                .unwrap_or_else(|| self.beneath_error(rel, abs.parent().unwrap_or(&abs), &e))
        })?;
        Ok((abs, Arc::new(dir), name.to_os_string()))
    }

    /// A link met beneath the project (one swapped in after [`Project::check`]) is an
    /// unsafe path; anything else a storage error.
    pub(super) fn beneath_error(&self, rel: &str, abs: &Path, e: &std::io::Error) -> Error {
        if beneath::is_link(e) {
            return unsafe_path(
                rel,
                "a symbolic link is on the path (the server follows none inside the project)",
            );
        }
        self.storage_error("write", abs, e)
    }

    /// Writes a file atomically: a temporary file in the same directory, fsync, rename,
    /// fsync of the directory. A reader or a crash sees the old file or the new one.
    pub fn write_atomic(&self, rel: &str, content: &[u8]) -> Result<()> {
        self.write_in_order(&[&[(rel, content)]], &[])
    }

    /// Writes groups of files atomically and durably, each group's files in place before
    /// the next group's, with as few waits for the disk as that order allows:
    /// 1. every file is written whole to a temporary file beside its target, and all of
    ///    them (and the directories in `also_sync`, and those that get a new folder for
    ///    these files) are fsynced at once;
    /// 2. group by group, the files are renamed into place and their directories
    ///    fsynced at once, so a later group (the session) never names a file that a
    ///    crash could lose.
    ///
    /// A reader or a crash sees each file old or new, never half written. A file whose
    /// target holds its bytes already is not written again: it and its folder are synced
    /// in step 1. A replaced file's old copy is removed during the last step, so that
    /// freeing its blocks is no wait of its own. Each folder is synced once a step; the
    /// fsyncs of a step run at the same time, so the file system can commit them together
    /// (BENCHMARKS.md, "The workflow": they are what a writing call mostly waits for).
    pub fn write_in_order(&self, groups: &[&[(&str, &[u8])]], also_sync: &[&str]) -> Result<()> {
        // Found before the files' folders are made: a folder made for them is a new entry
        // of its parent, synced with the files, or a power cut could take it (and the
        // files the session names in it) away.
        let mut dirs: Vec<String> = also_sync.iter().map(|d| d.to_string()).collect();
        for (rel, _) in groups.iter().copied().flatten() {
            for folder in self.folders_to_make(rel) {
                if !dirs.contains(&folder) {
                    dirs.push(folder);
                }
            }
        }
        let mut staged = Vec::with_capacity(groups.len());
        for group in groups {
            let mut files = Vec::with_capacity(group.len());
            for (rel, content) in *group {
                files.push(self.stage(rel, content)?);
            }
            staged.push(files);
        }
        let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
        self.sync_contents(&staged, &dirs)?;
        let mut old = Vec::new();
        let last = staged.len().saturating_sub(1);
        let placed = staged
            .into_iter()
            .enumerate()
            .try_for_each(|(i, files)| self.place_group(files, &mut old, i == last));
        // After a failed group, what the groups before it kept (a kill before this point
        // leaves them to the next writer's sweep).
        sync_and_discard([], old);
        placed
    }

    /// Replaces `name`, one of [`TOP_FILES`] at the top of the project (`.gitignore`), for a
    /// human's command (`bmad-mcp init`): atomically and durably, beneath the project's
    /// handle (a link there is replaced, never followed).
    pub fn write_top_file(&self, name: &str, content: &[u8]) -> Result<()> {
        let abs = self.check(name)?;
        let fail = |e: &std::io::Error| self.storage_error("write", &abs, e);
        let dir = Arc::new(beneath::make_dirs(self.dir(), Path::new("")).map_err(|e| fail(&e))?);
        let mut tmp = Temp::new(dir.clone(), std::ffi::OsStr::new(name), TEMP_PREFIX)
            .map_err(|e| fail(&e))?;
        tmp.file.write_all(content).map_err(|e| fail(&e))?;
        tmp.file.sync_all().map_err(|e| fail(&e))?;
        tmp.place().map_err(|e| fail(&e))?;
        if let Ok(d) = beneath::as_file(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Replaces a file atomically (a reader sees the old or the new text) without waiting
    /// for the disk: for an index that is rebuilt from the files it indexes whenever it is
    /// missing or unreadable, where losing the last update in a power cut costs nothing
    /// but that rebuild, and waiting for a large file's fsync would cost every call.
    pub fn replace_unsynced(&self, rel: &str, content: &[u8]) -> Result<()> {
        let Staged::Written { abs, tmp } = self.stage(rel, content)? else {
            return Ok(());
        };
        tmp.place()
            .map_err(|e| self.storage_error("write", &abs, &e))
    }

    /// Removes the temporary files that a writer killed mid-write left in the directory
    /// `rel_dir` (inside one of the two areas). Call only while holding [`Project::lock`]:
    /// then no live writer owns such a file. Returns how many were removed.
    pub fn sweep_stale_temp(&self, rel_dir: &str) -> usize {
        // Checked as a path inside the folder: the area's own folder is swept too.
        let Ok(abs) = self.check(&format!("{rel_dir}/x")) else {
            return 0;
        };
        let Ok(dir) = beneath::open_dir(self.dir(), Path::new(rel_dir)) else {
            return 0;
        };
        let Ok(entries) = rustix::fs::Dir::read_from(&dir) else {
            return 0;
        };
        let mut removed = 0;
        for e in entries.flatten() {
            let name = e.file_name();
            if !name.to_bytes().starts_with(TEMP_PREFIX.as_bytes()) {
                continue;
            }
            let nofollow = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
            let is_file = rustix::fs::statat(dir.as_fd(), name, nofollow)
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_file());
            if is_file
                && rustix::fs::unlinkat(dir.as_fd(), name, rustix::fs::AtFlags::empty()).is_ok()
            {
                removed += 1;
            }
        }
        if removed > 0 {
            let dir = abs.parent().expect("has parent");
            tracing::info!(dir = %dir.display(), removed, "removed files left by an interrupted write");
        }
        removed
    }

    /// Creates a directory that must not exist yet (reserving a task name). The caller
    /// makes the new entry durable by syncing the parent (see `also_sync` of
    /// [`Project::write_in_order`]).
    pub fn create_dir_new(&self, rel: &str) -> Result<bool> {
        let abs = self.check(&format!("{rel}/x"))?;
        let abs = abs.parent().expect("has parent");
        let dir = Path::new(rel);
        let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
            return Err(self.beneath_error(rel, abs, &std::io::ErrorKind::InvalidInput.into()));
        };
        let fd =
            beneath::make_dirs(self.dir(), parent).map_err(|e| self.beneath_error(rel, abs, &e))?;
        match rustix::fs::mkdirat(&fd, name, rustix::fs::Mode::from_raw_mode(0o777)) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(self.storage_error("create", abs, &e.into())),
        }
    }

    /// The folders that get a new entry when `rel`'s folders are made: the parent of each
    /// folder on its path that does not exist yet (`.` for the project itself). Empty in
    /// the usual case, where the file's folder exists (one `stat`).
    fn folders_to_make(&self, rel: &str) -> Vec<String> {
        let Some(parent) = Path::new(rel).parent() else {
            return Vec::new();
        };
        // Nothing is looked at outside the project: such a path is refused when staged.
        let plain = |c: std::path::Component| matches!(c, std::path::Component::Normal(_));
        if !parent.components().all(plain) {
            return Vec::new();
        }
        let exists = |p: &Path| {
            p.as_os_str().is_empty()
                || rustix::fs::statat(self.dir(), p, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
        };
        if exists(parent) {
            return Vec::new();
        }
        let mut changed = Vec::new();
        let mut at = PathBuf::new();
        for part in parent.components() {
            let next = at.join(part);
            if !changed.is_empty() || !exists(&next) {
                let name = at.to_string_lossy();
                changed.push(if name.is_empty() {
                    ".".to_string()
                } else {
                    name.into_owned()
                });
            }
            at = next;
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use crate::files::project::tests::project;

    /// Every folder that gets a new folder for a file is synced with the files, and no
    /// other: a power cut must not take away a folder a session names files in.
    #[test]
    fn the_parents_of_folders_made_for_a_write_are_synced() {
        let (dir, p) = project();
        assert_eq!(
            p.folders_to_make(".claude/specs/t/a.md"),
            [".", ".claude", ".claude/specs"]
        );
        std::fs::create_dir_all(dir.path().join(".bmad-task")).unwrap();
        let rel = ".bmad-task/temp/s/po_answers.json";
        assert_eq!(p.folders_to_make(rel), [".bmad-task", ".bmad-task/temp"]);
        p.write_in_order(&[&[(rel, b"{}")]], &[]).unwrap();
        assert!(p.folders_to_make(rel).is_empty(), "its folders exist now");
        assert!(p.folders_to_make(".bmad-task/session-x.json").is_empty());
        assert!(p.folders_to_make("../elsewhere/new/f.md").is_empty());
        assert_eq!(
            std::fs::read(dir.path().join(rel)).unwrap(),
            b"{}",
            "the file landed in the folders made for it"
        );
    }
}
