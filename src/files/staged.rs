//! One write's files between their bytes and their names: each file staged as what its
//! target needs (nothing, when it holds these bytes already; else a whole temporary file
//! beside it), the contents made durable in one wait for the disk, then each group renamed
//! into place and its folders synced in one more. A replaced file keeps a second name
//! until the last wait, which removes it at the same time as it syncs the last folders:
//! freeing the old copy's blocks is then no wait of its own.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::beneath::{self, Temp};
use super::project::{Project, TEMP_PREFIX};
use super::sync::{sync_and_discard, sync_together, Discard};
use crate::error::Result;

/// One file of a write, staged.
pub(super) enum Staged {
    /// The target holds these very bytes: it is neither rewritten nor renamed, only
    /// synced with its folder, so that an edit nobody synced yet is as durable as a write.
    Unchanged {
        abs: PathBuf,
        dir: Arc<OwnedFd>,
        file: std::fs::File,
    },
    /// The bytes whole in a temporary file beside the target, to be renamed over it.
    Written { abs: PathBuf, tmp: Temp },
}

impl Staged {
    fn abs(&self) -> &Path {
        match self {
            Staged::Unchanged { abs, .. } | Staged::Written { abs, .. } => abs,
        }
    }

    fn file(&self) -> &std::fs::File {
        match self {
            Staged::Unchanged { file, .. } => file,
            Staged::Written { tmp, .. } => &tmp.file,
        }
    }
}

/// Whether `file`, of `content`'s size, holds exactly `content`.
fn holds(mut file: &std::fs::File, content: &[u8]) -> bool {
    let mut bytes = Vec::with_capacity(content.len());
    let read = Read::by_ref(&mut file)
        .take(content.len() as u64 + 1)
        .read_to_end(&mut bytes);
    read.is_ok() && bytes == content
}

impl Project {
    /// `content` for `rel`: nothing to write when the target is a file of its own that
    /// holds it already, else a temporary file with it beside the target.
    pub(super) fn stage(&self, rel: &str, content: &[u8]) -> Result<Staged> {
        let (abs, dir, name) = self.prepare(rel)?;
        let size = content.len() as u64;
        if let Some(file) = beneath::sole_file_of(std::os::fd::AsFd::as_fd(&*dir), &name, size) {
            if holds(&file, content) {
                return Ok(Staged::Unchanged { abs, dir, file });
            }
        }
        let fail = |e: &std::io::Error| self.storage_error("write", &abs, e);
        let mut tmp = Temp::new(dir, &name, TEMP_PREFIX).map_err(|e| fail(&e))?;
        tmp.file.write_all(content).map_err(|e| fail(&e))?;
        Ok(Staged::Written { abs, tmp })
    }

    /// The first wait for the disk: every staged file's content, and the folders in
    /// `dirs` (each once), synced at the same time. A file that cannot be synced fails the
    /// write before any is renamed; a folder's failure only weakens durability (the
    /// renames stay atomic), so it is not an error.
    pub(super) fn sync_contents(&self, staged: &[Vec<Staged>], dirs: &[&str]) -> Result<()> {
        let files: Vec<&Staged> = staged.iter().flatten().collect();
        let mut folders: Vec<(PathBuf, std::fs::File)> = Vec::new();
        for rel in dirs {
            if let Ok(fd) = beneath::open_dir(self.dir(), Path::new(rel)) {
                add_folder(&mut folders, self.root.join(rel), std::fs::File::from(fd));
            }
        }
        // An unchanged file's folder is synced now too: nothing will be renamed into it.
        for s in &files {
            if let Staged::Unchanged { abs, dir, .. } = s {
                let parent = abs.parent().unwrap_or(abs).to_path_buf();
                if let Ok(handle) = beneath::as_file(dir) {
                    add_folder(&mut folders, parent, handle);
                }
            }
        }
        for s in &files {
            if let Staged::Written { tmp, .. } = s {
                start_writeback(&tmp.file);
            }
        }
        let results = sync_together(
            files
                .iter()
                .map(|s| s.file())
                .chain(folders.iter().map(|(_, f)| f)),
        );
        for (s, r) in files.iter().zip(&results) {
            if let Err(e) = r {
                return Err(self.storage_error("write", s.abs(), e));
            }
        }
        Ok(())
    }

    /// A group's files renamed into place, then their folders synced at the same time
    /// (each once). A replaced file's old copy is kept under a second name, added to
    /// `old`; the `last` group's sync removes them all.
    pub(super) fn place_group(
        &self,
        files: Vec<Staged>,
        old: &mut Vec<Discard>,
        last: bool,
    ) -> Result<()> {
        let mut placed: Vec<(PathBuf, Arc<OwnedFd>)> = Vec::new();
        for staged in files {
            let Staged::Written { abs, tmp } = staged else {
                continue;
            };
            let dir = tmp.dir().clone();
            let kept = tmp
                .place_keeping_old(TEMP_PREFIX)
                .map_err(|e| self.storage_error("write", &abs, &e))?;
            if let Some(name) = kept {
                old.push((dir.clone(), name));
            }
            placed.push((abs, dir));
        }
        let handles = unique_dirs(&placed);
        let discarded = if last {
            std::mem::take(old)
        } else {
            Vec::new()
        };
        sync_and_discard(&handles, discarded);
        Ok(())
    }
}

/// Starts writing `file`'s bytes to the disk without waiting. Linux does so for a file
/// whose pages it is told will not be needed again (`posix_fadvise` `DONTNEED`, which
/// keeps the pages still being written), and allocates their blocks on the way: started
/// for every file of a step before the first fsync, the allocations are in the journal
/// transaction that fsync commits, and the other fsyncs find it committed instead of each
/// waiting for a commit of its own. Only a hint: the fsyncs make the bytes durable, and
/// where it does nothing (tmpfs, other systems) nothing changes.
fn start_writeback(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// Adds the folder at `path` to `folders` unless it is there already: one sync a folder.
fn add_folder(folders: &mut Vec<(PathBuf, std::fs::File)>, path: PathBuf, handle: std::fs::File) {
    if !folders.iter().any(|(p, _)| *p == path) {
        folders.push((path, handle));
    }
}

/// The folders of the placed files (by their paths' parents), each once, as files to sync.
fn unique_dirs(placed: &[(PathBuf, Arc<OwnedFd>)]) -> Vec<std::fs::File> {
    let mut folders = Vec::new();
    for (abs, dir) in placed {
        if let Ok(handle) = beneath::as_file(dir) {
            add_folder(
                &mut folders,
                abs.parent().unwrap_or(abs).to_path_buf(),
                handle,
            );
        }
    }
    folders.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use crate::files::project::tests::project;

    fn inode(p: &crate::files::Project, rel: &str) -> u64 {
        std::fs::symlink_metadata(p.root.join(rel)).unwrap().ino()
    }

    /// The temporary files and kept old copies left in `dir`.
    fn leftovers(dir: &std::path::Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".bmad-tmp-"))
            .collect()
    }

    /// A file that already holds the bytes is left as it is (no temporary file, no
    /// rename); one whose bytes differ is replaced, and its old copy goes.
    #[test]
    fn a_file_holding_the_bytes_is_not_written_again() {
        let (_d, p) = project();
        let rel = ".bmad-task/a.json";
        p.write_atomic(rel, b"one").unwrap();
        let first = inode(&p, rel);
        p.write_in_order(&[&[(rel, b"one")], &[(".bmad-task/b.json", b"b")]], &[])
            .unwrap();
        assert_eq!(inode(&p, rel), first, "unchanged: the same file");
        p.write_atomic(rel, b"two").unwrap();
        assert_ne!(inode(&p, rel), first, "changed: replaced by rename");
        assert_eq!(p.read(rel).unwrap().as_deref(), Some("two"));
        assert!(leftovers(&p.root.join(".bmad-task")).is_empty());
    }

    /// A file with another name (a hard link elsewhere) is replaced even when it holds
    /// the bytes: the project's copy becomes its own, the other name keeps its file.
    #[test]
    fn a_hard_linked_file_holding_the_bytes_is_replaced_never_shared() {
        let (_d, p) = project();
        let outside = tempfile::tempdir().unwrap();
        let rel = ".bmad-task/a.json";
        p.write_atomic(rel, b"same").unwrap();
        let other = outside.path().join("linked");
        std::fs::hard_link(p.root.join(rel), &other).unwrap();
        p.write_atomic(rel, b"same").unwrap();
        assert_ne!(inode(&p, rel), std::fs::metadata(&other).unwrap().ino());
        assert_eq!(std::fs::metadata(p.root.join(rel)).unwrap().nlink(), 1);
        assert_eq!(std::fs::read(&other).unwrap(), b"same");
        assert!(leftovers(&p.root.join(".bmad-task")).is_empty());
    }

    /// What is not a regular file at the target (a folder, a link) is never opened to be
    /// compared: a write over a link replaces the link, one over a folder fails.
    #[test]
    fn only_a_regular_file_is_compared() {
        let (_d, p) = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f"), b"same").unwrap();
        std::fs::create_dir_all(p.root.join(".bmad-task/dir")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f"), p.root.join(".bmad-task/l")).unwrap();
        p.write_atomic(".bmad-task/l", b"same").unwrap();
        assert!(std::fs::symlink_metadata(p.root.join(".bmad-task/l"))
            .unwrap()
            .is_file());
        assert!(p.write_atomic(".bmad-task/dir", b"same").is_err());
        assert!(leftovers(&p.root.join(".bmad-task")).is_empty());
    }
}
