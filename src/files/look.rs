//! A file of a work tree looked at as git hashes it, without trusting what it is: reached
//! beneath the tree's open folder following no link on the way (a path through a link is
//! absent, as git reads it), a link taken as the path it names and never followed, a FIFO,
//! a device or a socket named and never opened, and a regular file opened (non-blocking,
//! never through a link) only when it is no larger than the caller will read.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// A folder whose files are looked at: a work tree, opened once.
pub struct Tree {
    dir: OwnedFd,
}

/// What a path of the tree is now.
pub enum Look {
    /// Nothing there (or a link on the way to it).
    Absent,
    /// A symbolic link: the bytes of the path it names.
    Link(Vec<u8>),
    /// A regular file no larger than asked, opened to read, with its size.
    File(File, u64),
    /// A regular file larger than asked: its size and modification time (seconds and
    /// nanoseconds since the epoch).
    Large { size: u64, modified: (i64, u64) },
    /// Anything else, named: a folder, a FIFO, a device, a socket, or a file that could
    /// not be looked at.
    Other(&'static str),
}

impl Tree {
    /// The folder at `dir` (the path may pass links; the handle is the folder reached).
    pub fn open(dir: &Path) -> std::io::Result<Tree> {
        let (dir, _) = super::beneath::open_root(dir)?;
        Ok(Tree { dir })
    }

    /// What `rel` (relative to the tree, as git names it) is; a regular file of at most
    /// `open_up_to` bytes is opened.
    pub fn look(&self, rel: &[u8], open_up_to: u64) -> Look {
        let (folder, name) = match rel.iter().rposition(|b| *b == b'/') {
            Some(i) => (&rel[..i], &rel[i + 1..]),
            None => (&rel[..0], rel),
        };
        let name = OsStr::from_bytes(name);
        if name.is_empty() || name == ".." || name == "." {
            return Look::Absent;
        }
        let held;
        let at = if folder.is_empty() {
            self.dir.as_fd()
        } else {
            match super::beneath::open_dir(self.dir.as_fd(), Path::new(OsStr::from_bytes(folder))) {
                Ok(fd) => {
                    held = fd;
                    held.as_fd()
                }
                Err(_) => return Look::Absent,
            }
        };
        let st = match rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Look::Absent,
            Err(_) => return Look::Other("unreadable"),
        };
        let size = u64::try_from(st.st_size).unwrap_or(0);
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => match rustix::fs::readlinkat(at, name, Vec::new()) {
                Ok(target) => Look::Link(target.into_bytes()),
                Err(_) => Look::Other("unreadable"),
            },
            FileType::RegularFile if size > open_up_to => Look::Large {
                size,
                // The fields' types differ between targets.
                modified: (st.st_mtime as i64, st.st_mtime_nsec as u64),
            },
            FileType::RegularFile => {
                let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let Ok(fd) = rustix::fs::openat(at, name, flags, Mode::empty()) else {
                    return Look::Other("unreadable");
                };
                // What was opened is what was looked at: a file swapped meanwhile for
                // anything but a regular file is not read.
                match rustix::fs::fstat(&fd) {
                    Ok(now) if FileType::from_raw_mode(now.st_mode).is_file() => {
                        Look::File(File::from(fd), u64::try_from(now.st_size).unwrap_or(0))
                    }
                    _ => Look::Other("unreadable"),
                }
            }
            FileType::Directory => Look::Other("a folder"),
            FileType::Fifo => Look::Other("a FIFO"),
            FileType::Socket => Look::Other("a socket"),
            FileType::CharacterDevice | FileType::BlockDevice => Look::Other("a device"),
            FileType::Unknown => Look::Other("unreadable"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_fifos_and_large_files_are_looked_at_never_read_through() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/small"), "small\n").unwrap();
        std::fs::write(root.join("big"), vec![b'x'; 100]).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("through")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let tree = Tree::open(root).unwrap();
        assert!(matches!(tree.look(b"sub/small", 64), Look::File(_, 6)));
        assert!(matches!(
            tree.look(b"big", 64),
            Look::Large { size: 100, .. }
        ));
        assert!(matches!(tree.look(b"zero", 64), Look::Link(t) if t == b"/dev/zero"));
        assert!(matches!(tree.look(b"fifo", 64), Look::Other("a FIFO")));
        assert!(matches!(tree.look(b"sub", 64), Look::Other("a folder")));
        // A path through a link is not there, as git reads it; nor is a missing one.
        assert!(matches!(tree.look(b"through/small", 64), Look::Absent));
        assert!(matches!(tree.look(b"gone", 64), Look::Absent));
        assert!(matches!(tree.look(b"../x", 64), Look::Absent));
    }
}
