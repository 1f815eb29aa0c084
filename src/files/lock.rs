//! The project lock (`.bmad-task/.lock`): an OS file lock that serialises every change to a
//! project across threads and processes, taken with a bounded wait. The holder writes its
//! pid into the file, so a caller that gives up can say who holds it.

use std::io::{Read, Seek, Write};
use std::time::{Duration, Instant};

use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::project::unsafe_path;
use super::Project;
use crate::error::{Error, Result};

pub const LOCK_FILE: &str = ".bmad-task/.lock";

/// How long a change waits for the lock by default (`BMAD_LOCK_WAIT_SECS` changes it:
/// [`settings::Acting::lock_wait`](crate::settings::Acting::lock_wait)).
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);

/// The held lock; released when dropped (the file is closed).
#[derive(Debug)]
pub struct Held {
    _file: std::fs::File,
}

impl Project {
    /// Takes the project's exclusive lock, waiting at most `wait`; past it the call fails
    /// with `busy`, naming the lock file and the holder's pid when it wrote one.
    pub fn lock(&self, wait: Duration) -> Result<Held> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            let (abs, dir, name) = self.prepare(LOCK_FILE)?;
            // Never truncated on open, and never written unless it is the server's own:
            // a regular file with one name. A hard link to a file elsewhere is replaced.
            let flags = OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let opened = rustix::fs::openat(&*dir, &name, flags, Mode::from_raw_mode(0o666));
            let mut file = match opened {
                Ok(fd) => std::fs::File::from(fd),
                // `.bmad-task/` went between `prepare` and `open` (a failed `start`
                // taking back the folder it made): make it again.
                Err(rustix::io::Errno::NOENT) if started.elapsed() < wait => continue,
                Err(e) => return Err(self.beneath_error(LOCK_FILE, &abs, &e.into())),
            };
            let st = rustix::fs::fstat(&file)
                .map_err(|e| self.storage_error("open", &abs, &e.into()))?;
            if !rustix::fs::FileType::from_raw_mode(st.st_mode).is_file() {
                return Err(unsafe_path(LOCK_FILE, "it is not a regular file"));
            }
            if st.st_nlink != 1 {
                tracing::warn!(lock = %abs.display(), links = st.st_nlink, "the lock file has other names; replacing it");
                match rustix::fs::unlinkat(&*dir, &name, AtFlags::empty()) {
                    Ok(()) | Err(rustix::io::Errno::NOENT) => continue,
                    Err(e) => return Err(self.storage_error("replace", &abs, &e.into())),
                }
            }
            match file.try_lock() {
                // A failed `start` in a new project removes the lock file it made (see
                // `start::undo`); whoever waited on that file holds a lock nobody else
                // can see, so it takes the lock again on the file now at the path.
                Ok(()) if same_file(&file, &dir, &name) => {
                    write_pid(&mut file);
                    return Ok(Held { _file: file });
                }
                Ok(()) => continue,
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(self.storage_error("lock", &abs, &e));
                }
            }
            let waited = started.elapsed();
            if waited >= wait {
                return Err(Error::Busy {
                    lock_file: LOCK_FILE.to_string(),
                    holder: holder_pid(&mut file),
                    waited,
                });
            }
            std::thread::sleep(pause.min(wait - waited));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }
}

/// Whether the open `file` is still the one named `name` in `dir` (not removed, not
/// replaced) and still has that one name.
fn same_file(file: &std::fs::File, dir: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    match (
        rustix::fs::fstat(file),
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW),
    ) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_nlink == 1,
        _ => false,
    }
}

/// Writes this process's pid into the held lock file, unless it is there already (a
/// process's every change after its first): rewriting it would free and allocate a block
/// of the file, which can wait for the journal as long as an fsync. Written over the old
/// pid, then cut to its length, so a block is freed only when the file was longer. Best
/// effort: a full disk may refuse even these few bytes, which only costs the pid in a
/// later `busy` message.
fn write_pid(file: &mut std::fs::File) {
    let pid = format!("{}\n", std::process::id());
    let mut there = Vec::with_capacity(pid.len() + 1);
    let read = file
        .rewind()
        .and_then(|()| Read::by_ref(file).take(32).read_to_end(&mut there));
    if read.is_ok() && there == pid.as_bytes() {
        return;
    }
    let _ = file
        .rewind()
        .and_then(|()| file.write_all(pid.as_bytes()))
        .and_then(|()| file.set_len(pid.len() as u64));
}

fn holder_pid(file: &mut std::fs::File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::project::tests::project;

    #[test]
    fn a_held_lock_makes_others_give_up_after_the_wait_naming_the_holder() {
        let (_dir, p) = project();
        let held = p.lock(Duration::ZERO).unwrap();
        let started = Instant::now();
        let e = p.lock(Duration::from_millis(200)).unwrap_err();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
        assert_eq!(e.code(), "busy");
        let msg = e.to_string();
        assert!(msg.contains(LOCK_FILE), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        drop(held);
        // Released: free again. With a short wait, not none: a process another test starts
        // at this moment holds a copy of the lock's open file between its fork and its
        // exec (which closes it), and a `flock` lives as long as any copy.
        p.lock(Duration::from_secs(2)).unwrap();
    }

    #[test]
    fn a_waiter_whose_lock_file_was_removed_takes_the_lock_on_the_new_one() {
        let (dir, p) = project();
        let held = p.lock(Duration::ZERO).unwrap();
        let waiter = {
            let p = p.clone();
            std::thread::spawn(move || p.lock(Duration::from_secs(5)).unwrap())
        };
        std::thread::sleep(Duration::from_millis(50));
        // As a failed `start` does in a project it created, while holding the lock.
        std::fs::remove_file(dir.path().join(LOCK_FILE)).unwrap();
        drop(held);
        let got = waiter.join().unwrap();
        // The waiter holds the file that is at the path now: nobody else can take it.
        let fresh = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join(LOCK_FILE))
            .unwrap();
        assert!(matches!(
            fresh.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(got);
        fresh.try_lock().unwrap();
    }

    /// The holder's pid is written once: a process's later locks leave the file as it
    /// is, and another pid is written over, cut to its length.
    #[test]
    fn the_pid_is_written_only_when_another_is_there() {
        use std::os::unix::fs::MetadataExt;
        let (dir, p) = project();
        let path = dir.path().join(LOCK_FILE);
        drop(p.lock(Duration::ZERO).unwrap());
        let ours = format!("{}\n", std::process::id());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ours);
        let changed = |m: &std::fs::Metadata| (m.mtime(), m.mtime_nsec(), m.ctime_nsec());
        let before = changed(&std::fs::metadata(&path).unwrap());
        std::thread::sleep(Duration::from_millis(20));
        drop(p.lock(Duration::ZERO).unwrap());
        assert_eq!(changed(&std::fs::metadata(&path).unwrap()), before);
        std::fs::write(&path, "4000000000 and more\n").unwrap();
        drop(p.lock(Duration::ZERO).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), ours);
    }
}
