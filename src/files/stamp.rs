//! What an entry of the project is now, without opening it ([`Stamp`]): for a reading kept
//! from one call to the next while none of the files it was made from changed. A stamp
//! only says whether to read again; what is read goes through the confined reader.

use rustix::fs::AtFlags;

use super::Project;

/// How long after its last change a file's stamp is not trusted: the kernel's clock for
/// file times moves in ticks of a few milliseconds, so a file written twice within one
/// tick, at the same size and in place, keeps its stamp (git calls this "racy").
pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

/// An entry of the project as a stat of it says: absent, or its inode, size, and the
/// times its content and its inode last changed (in nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    Absent,
    Is {
        ino: u64,
        size: u64,
        modified: i128,
        changed: i128,
    },
}

impl Stamp {
    /// Only whether the entry is there: a stamp of any entry is the same present one.
    pub fn presence(self) -> Stamp {
        match self {
            Stamp::Absent => Stamp::Absent,
            Stamp::Is { .. } => Stamp::Is {
                ino: 0,
                size: 0,
                modified: 0,
                changed: 0,
            },
        }
    }

    /// Whether the entry changed less than [`SETTLED`] before `now` (nanoseconds since the
    /// epoch), so that a later change may keep this stamp.
    pub fn unsettled(&self, now: i128) -> bool {
        let settled = SETTLED.as_nanos() as i128;
        match self {
            Stamp::Absent => false,
            Stamp::Is {
                modified, changed, ..
            } => now - modified.max(changed) < settled,
        }
    }
}

/// Nanoseconds since the epoch, as file times count them.
pub fn now_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

impl Project {
    /// The stamp of `rel` (`""` is the project's folder), looked at beneath the project's
    /// handle without following a link at its end; `None` when it cannot be told (a
    /// reading kept on it is then read again).
    pub fn stamp(&self, rel: &str) -> Option<Stamp> {
        let rel = if rel.is_empty() { "." } else { rel };
        match rustix::fs::statat(self.dir(), rel, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some(Stamp::Is {
                ino: st.st_ino,
                size: st.st_size as u64,
                modified: st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128,
                changed: st.st_ctime as i128 * 1_000_000_000 + st.st_ctime_nsec as i128,
            }),
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => Some(Stamp::Absent),
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_moves_with_a_change_and_says_when_it_is_too_recent() {
        let (dir, project) = super::super::project::tests::project();
        assert_eq!(project.stamp("a/b.toml"), Some(Stamp::Absent));
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/b.toml"), "x = 1\n").unwrap();
        let first = project.stamp("a/b.toml").unwrap();
        assert!(first.unsettled(now_nanos()), "just written");
        assert!(!first.unsettled(now_nanos() + 3_000_000_000));
        std::fs::write(dir.path().join("a/b.toml"), "x = 22\n").unwrap();
        assert_ne!(project.stamp("a/b.toml").unwrap(), first);
        assert!(matches!(project.stamp(""), Some(Stamp::Is { .. })));
        assert!(!Stamp::Absent.unsettled(now_nanos()));
    }
}
