//! Resolving a project's paths beneath the project's open directory, never by name from
//! the file system's root. The project folder is opened once ([`open_root`]); every file
//! and folder of its areas is then reached from that handle one component at a time
//! without following a link of any kind (Linux: one `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS`; elsewhere, or on a kernel without it, `openat` per component
//! with `O_NOFOLLOW | O_DIRECTORY`). Folders are made with `mkdirat`, temporary files
//! with `openat(O_CREAT | O_EXCL)`, replacements with `renameat` (the replaced file kept
//! a moment under a second name, `linkat`), and syncs on the folder's own handle: swapping
//! a component for a link at any moment cannot move a byte out of the project (docs/spec.md
//! §7.2).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};

/// A directory handle: searched only, never read through a path.
const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::RDONLY);

/// Opens the project folder (the path may pass links; the handle is the folder they lead
/// to) and says where that folder really is, read from the handle itself, so a check of
/// the path against the server's roots is a check of the folder every write goes to.
pub fn open_root(path: &Path) -> io::Result<(OwnedFd, PathBuf)> {
    let fd = rustix::fs::open(
        path,
        OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY,
        Mode::empty(),
    )?;
    let real = real_path(fd.as_fd(), path)?;
    Ok((fd, real))
}

/// Where the open folder is: Linux names it in `/proc/self/fd`; elsewhere the path is
/// resolved and must be the very folder that was opened. One `readlink` by hand rather than
/// procfs's `fd_from_fd`, which opens `/proc/self` and stats the link too on every folder a
/// write opens, and reads the target through a lossy string (a folder whose name is not UTF-8
/// would be misplaced).
fn real_path(fd: BorrowedFd<'_>, path: &Path) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
            if p.is_absolute() {
                return Ok(p);
            }
        }
    }
    let canonical = path.canonicalize()?;
    let (a, b) = (rustix::fs::fstat(fd)?, rustix::fs::stat(&canonical)?);
    if a.st_dev != b.st_dev || a.st_ino != b.st_ino {
        return Err(io::Error::other("the folder changed while it was opened"));
    }
    Ok(canonical)
}

/// The components of a checked relative path (no `..`, no root: see `Project::check`).
fn parts(rel: &Path) -> Vec<&std::ffi::OsStr> {
    rel.components().map(|c| c.as_os_str()).collect()
}

/// Opens `rel` beneath `dir` with `flags`, following no link on the way or at the end.
pub fn open(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::ResolveFlags;
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        // EAGAIN: a rename elsewhere raced the lookup; the kernel asks to try again.
        for _ in 0..8 {
            match rustix::fs::openat2(dir, rel, flags, mode, how) {
                Err(rustix::io::Errno::AGAIN) => continue,
                // No openat2 (before Linux 5.6, or filtered): walk the components.
                Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => break,
                other => return other.map_err(io::Error::from),
            }
        }
    }
    walk(dir, rel, flags, mode)
}

/// The folder `rel` beneath `dir`, opened as [`open`] opens a file.
pub fn open_dir(dir: BorrowedFd<'_>, rel: &Path) -> io::Result<OwnedFd> {
    open(dir, rel, DIR_FLAGS, Mode::empty())
}

/// [`open`] without `openat2`: one `openat` per component, each folder with `O_NOFOLLOW |
/// O_DIRECTORY`, the last with the caller's flags and `O_NOFOLLOW`.
fn walk(dir: BorrowedFd<'_>, rel: &Path, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let parts = parts(rel);
    let Some((last, folders)) = parts.split_last() else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let mut held: Option<OwnedFd> = None;
    for name in folders {
        let at = held.as_ref().map_or(dir, |f| f.as_fd());
        held = Some(open_folder(at, name)?);
    }
    let at = held.as_ref().map_or(dir, |f| f.as_fd());
    Ok(rustix::fs::openat(at, *last, flags, mode)?)
}

/// One folder in `at`, never through a link: a link there is `ELOOP` (as `openat2` says),
/// whatever `O_NOFOLLOW | O_DIRECTORY` reports on this system.
fn open_folder(at: BorrowedFd<'_>, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    match rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty()) {
        Err(rustix::io::Errno::NOTDIR)
            if rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_symlink()) =>
        {
            Err(rustix::io::Errno::LOOP.into())
        }
        other => Ok(other?),
    }
}

/// The folder `rel` beneath `dir`, made (with its parents) where missing; no component
/// may be a link.
pub fn make_dirs(dir: BorrowedFd<'_>, rel: &Path) -> io::Result<OwnedFd> {
    // The usual case: every folder exists, and one open (beneath, no link) reaches it.
    if !rel.as_os_str().is_empty() {
        match open_dir(dir, rel) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    let mut held: Option<OwnedFd> = None;
    for name in parts(rel) {
        let at = held.as_ref().map_or(dir, |f| f.as_fd());
        match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        held = Some(open_folder(at, name)?);
    }
    match held {
        Some(fd) => Ok(fd),
        None => Ok(rustix::fs::openat(dir, ".", DIR_FLAGS, Mode::empty())?),
    }
}

/// A file being written beside its target in an open folder; removed when dropped
/// unless it was put in place.
#[derive(Debug)]
pub struct Temp {
    pub file: File,
    dir: std::sync::Arc<OwnedFd>,
    name: String,
    target: std::ffi::OsString,
    placed: bool,
}

impl Temp {
    /// A new temporary file named `prefix…` in `dir`, for replacing `target` there. A new
    /// file gets the usual mode (0666 less the umask); a replaced one keeps its mode.
    pub fn new(
        dir: std::sync::Arc<OwnedFd>,
        target: &std::ffi::OsStr,
        prefix: &str,
    ) -> io::Result<Temp> {
        loop {
            let name = fresh_name(prefix);
            let flags =
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(
                dir.as_fd(),
                name.as_str(),
                flags,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => {
                    let temp = Temp {
                        file: File::from(fd),
                        dir: dir.clone(),
                        name,
                        target: target.to_os_string(),
                        placed: false,
                    };
                    if let Ok(st) =
                        rustix::fs::statat(dir.as_fd(), target, AtFlags::SYMLINK_NOFOLLOW)
                    {
                        if rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() {
                            rustix::fs::fchmod(
                                &temp.file,
                                Mode::from_raw_mode(st.st_mode & 0o7777),
                            )?;
                        }
                    }
                    return Ok(temp);
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Renames the file over its target in the same folder: whatever was there (a file,
    /// a hard link to a file elsewhere, a symbolic link) is replaced, never written into.
    pub fn place(mut self) -> io::Result<()> {
        rustix::fs::renameat(
            self.dir.as_fd(),
            self.name.as_str(),
            self.dir.as_fd(),
            &self.target,
        )?;
        self.placed = true;
        Ok(())
    }

    /// [`Temp::place`] over a file that has no other name, which is first given a
    /// temporary name of its own (`prefix…`, a hard link in the same folder): the rename
    /// then frees none of its blocks, which can wait for the journal as long as an fsync.
    /// Returns that name, for the caller to remove when nothing waits for it.
    pub fn place_keeping_old(self, prefix: &str) -> io::Result<Option<String>> {
        let kept = keep_aside(self.dir.as_fd(), &self.target, prefix);
        let dir = self.dir.clone();
        let placed = self.place();
        match (placed, kept) {
            (Ok(()), kept) => Ok(kept),
            (Err(e), kept) => {
                if let Some(name) = kept {
                    let _ = rustix::fs::unlinkat(dir.as_fd(), name.as_str(), AtFlags::empty());
                }
                Err(e)
            }
        }
    }

    /// The folder the file is in.
    pub fn dir(&self) -> &std::sync::Arc<OwnedFd> {
        &self.dir
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.placed {
            let _ = rustix::fs::unlinkat(self.dir.as_fd(), self.name.as_str(), AtFlags::empty());
        }
    }
}

/// A name no file in the folder is likely to have: `prefix`, this process, a counter and
/// the time (a name taken all the same is refused by the caller's `O_EXCL` or `link`).
fn fresh_name(prefix: &str) -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}{}-{n}-{nanos:x}", std::process::id())
}

/// A second name for `target`, `prefix…`, when it is a regular file with one name; `None`
/// otherwise, or when the link cannot be made.
fn keep_aside(dir: BorrowedFd<'_>, target: &std::ffi::OsStr, prefix: &str) -> Option<String> {
    let st = rustix::fs::statat(dir, target, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if !rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() || st.st_nlink != 1 {
        return None;
    }
    for _ in 0..8 {
        let name = fresh_name(prefix);
        match rustix::fs::linkat(dir, target, dir, name.as_str(), AtFlags::empty()) {
            Ok(()) => return Some(name),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// The regular file `name` in `dir`, when it has no other name anywhere and is `size`
/// bytes long, opened to read (never through a link, never blocking); `None` for anything
/// else. Its size is looked at first: a file of another size is not opened.
pub fn sole_file_of(dir: BorrowedFd<'_>, name: &std::ffi::OsStr, size: u64) -> Option<File> {
    let fits = |st: &rustix::fs::Stat| {
        rustix::fs::FileType::from_raw_mode(st.st_mode).is_file()
            && st.st_nlink == 1
            && u64::try_from(st.st_size).is_ok_and(|s| s == size)
    };
    // Looked at before it is opened: opening a device or a FIFO may do something.
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if !fits(&st) {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    fits(&st).then(|| File::from(fd))
}

/// A folder's handle as a file, to fsync it.
pub fn as_file(dir: &OwnedFd) -> io::Result<File> {
    Ok(File::from(dir.try_clone()?))
}

/// Whether the error is a link met on the way (`RESOLVE_NO_SYMLINKS`, `O_NOFOLLOW`) or a
/// path that left the folder (`RESOLVE_BENEATH`).
pub fn is_link(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(rustix::io::Errno::from_raw_os_error),
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_link_is_followed_with_or_without_openat2() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f"), "outside").unwrap();
        let (root, real) = open_root(dir.path()).unwrap();
        assert_eq!(real, dir.path().canonicalize().unwrap());
        let made = make_dirs(root.as_fd(), Path::new("a/b")).unwrap();
        drop(made);
        std::fs::write(dir.path().join("a/b/f"), "inside").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("a/out")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a/b/f"), dir.path().join("a/b/g")).unwrap();
        let read = OFlags::RDONLY;
        for how in [open, walk] {
            let f = how(root.as_fd(), Path::new("a/b/f"), read, Mode::empty()).unwrap();
            assert_eq!(std::io::read_to_string(File::from(f)).unwrap(), "inside");
            for linked in ["a/out/f", "a/b/g"] {
                let e = how(root.as_fd(), Path::new(linked), read, Mode::empty()).unwrap_err();
                assert!(is_link(&e), "{linked}: {e}");
            }
        }
        let e = make_dirs(root.as_fd(), Path::new("a/out/new")).unwrap_err();
        assert!(is_link(&e), "{e}");
        assert!(!outside.path().join("new").exists());
    }
}
