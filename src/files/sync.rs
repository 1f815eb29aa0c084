//! fsyncs that wait for the disk together, on threads made once per process. Each fsync
//! ends with a commit of the file system's journal or a flush of the disk's cache, and
//! one after the other each pays that wait; started at the same time they share one. So
//! the files of one step of a write are synced at once: the first on the caller's thread,
//! the others on a few workers that live as long as the process (a thread started per
//! step costs its start, and on a busy machine a wait to be scheduled, at every step).
//! The workers also remove the old copies of replaced files, at the same time as the last
//! step's fsyncs: freeing a file's blocks can wait for the journal as long as an fsync.
//! When no worker can be made, the work is done on the caller's thread, in order.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

/// The most workers a process makes: a step syncs a few files (a document, a draft, the
/// session, their folders), and several callers at once share them.
const MAX_WORKERS: usize = 4;

/// A name to remove from a folder: a replaced file's old copy.
pub(super) type Discard = (Arc<OwnedFd>, String);

/// What a job sends back: its place in the step and, for an fsync, its result.
type Done = Sender<(usize, io::Result<()>)>;

enum Job {
    /// fsync the file.
    Sync(File, usize, Done),
    /// Remove the name from the folder (it may be gone already: another writer swept it).
    Unlink(Discard, usize, Done),
}

impl Job {
    fn run(self) {
        match self {
            Job::Sync(file, i, done) => {
                let _ = done.send((i, file.sync_all()));
            }
            Job::Unlink((dir, name), i, done) => {
                let flags = rustix::fs::AtFlags::empty();
                let _ = rustix::fs::unlinkat(dir.as_fd(), name.as_str(), flags);
                let _ = done.send((i, Ok(())));
            }
        }
    }
}

/// The workers' queue, and how many workers take from it.
struct Pool {
    queue: Mutex<(Sender<Job>, usize)>,
    jobs: Arc<Mutex<Receiver<Job>>>,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = channel();
        Pool {
            queue: Mutex::new((tx, 0)),
            jobs: Arc::new(Mutex::new(rx)),
        }
    })
}

impl Pool {
    /// Queues `job` for a worker, after making one when fewer than `wanted` (and the
    /// most) are there; when none is there and none can be made, the job comes back.
    fn hand(&self, job: Job, wanted: usize) -> Option<Job> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        while queue.1 < wanted.min(MAX_WORKERS) {
            let jobs = self.jobs.clone();
            let made = std::thread::Builder::new()
                .name("bmad-fsync".into())
                .stack_size(64 * 1024)
                .spawn(move || work(&jobs));
            if made.is_err() {
                break;
            }
            queue.1 += 1;
        }
        if queue.1 == 0 {
            return Some(job);
        }
        queue.0.send(job).err().map(|e| e.0)
    }
}

/// A worker: takes jobs from the queue until the process ends.
fn work(jobs: &Mutex<Receiver<Job>>) {
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        match job {
            Ok(job) => job.run(),
            Err(_) => return,
        }
    }
}

/// fsyncs `files` at the same time and returns each one's result, in order.
pub(super) fn sync_together<'a>(files: impl IntoIterator<Item = &'a File>) -> Vec<io::Result<()>> {
    sync_and_discard(files, Vec::new())
}

/// [`sync_together`], removing the names in `old` at the same time; returns when all is
/// done.
pub(super) fn sync_and_discard<'a>(
    files: impl IntoIterator<Item = &'a File>,
    old: Vec<Discard>,
) -> Vec<io::Result<()>> {
    let files: Vec<&File> = files.into_iter().collect();
    let mut out: Vec<Option<io::Result<()>>> = files.iter().map(|_| None).collect();
    let wanted = files.len().saturating_sub(1) + old.len();
    let (done, results) = channel();
    let mut here = Vec::new();
    for (i, discard) in old.into_iter().enumerate() {
        let job = Job::Unlink(discard, files.len() + i, done.clone());
        here.extend(pool().hand(job, wanted));
    }
    for (i, f) in files.iter().enumerate().skip(1) {
        // A second handle on the same open file, for the worker to own; without one, or
        // without a worker, the file is synced below on this thread.
        if let Ok(copy) = f.try_clone() {
            let _ = pool().hand(Job::Sync(copy, i, done.clone()), wanted);
        }
    }
    // Every sender left is a queued job's: the results end when the last is done.
    drop(done);
    if let Some(first) = files.first() {
        out[0] = Some(first.sync_all());
    }
    here.into_iter().for_each(Job::run);
    for (i, result) in results {
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(result);
        }
    }
    out.into_iter()
        .zip(&files)
        .map(|(r, f)| r.unwrap_or_else(|| f.sync_all()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: usize = 7;

    /// Several callers at once, each with several files: every call returns, each file
    /// with its own result.
    #[test]
    fn many_callers_syncing_several_files_each_get_their_results() {
        let dir = tempfile::tempdir().unwrap();
        std::thread::scope(|s| {
            for caller in 0..6 {
                let dir = dir.path();
                s.spawn(move || {
                    for round in 0..5 {
                        let files: Vec<File> = (0..FILES)
                            .map(|i| {
                                let path = dir.join(format!("c{caller}-r{round}-f{i}"));
                                std::fs::write(&path, format!("{caller} {round} {i}")).unwrap();
                                File::open(&path).unwrap()
                            })
                            .collect();
                        let results = sync_together(&files);
                        assert_eq!(results.len(), files.len());
                        assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
                    }
                });
            }
        });
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            6 * 5 * FILES
        );
    }

    /// A file that cannot be synced gets its error in its own place, the others theirs.
    #[test]
    fn a_failing_sync_is_reported_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let ok = File::open(dir.path()).unwrap();
        // A pipe cannot be fsynced (EINVAL).
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(reader));
        let results = sync_together([&ok, &pipe, &ok, &pipe]);
        let failed: Vec<bool> = results.iter().map(|r| r.is_err()).collect();
        assert_eq!(failed, [false, true, false, true]);
    }

    /// However many steps sync files, the process makes at most a few workers: no thread
    /// is started per step.
    #[test]
    fn steps_share_a_few_workers() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..20 {
            let files: Vec<File> = (0..3)
                .map(|i| {
                    let path = dir.path().join(format!("r{round}-f{i}"));
                    std::fs::write(&path, "x").unwrap();
                    File::open(&path).unwrap()
                })
                .collect();
            assert!(sync_together(&files).iter().all(|r| r.is_ok()));
        }
        let workers = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter(|t| {
                let comm = t.as_ref().unwrap().path().join("comm");
                std::fs::read_to_string(comm).is_ok_and(|c| c.trim() == "bmad-fsync")
            })
            .count();
        assert!(workers <= MAX_WORKERS, "{workers} workers");
    }

    /// A name handed to be removed is gone when the step returns.
    #[test]
    fn a_discarded_name_is_gone_when_the_step_returns() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("old"), "x").unwrap();
        let handle = rustix::fs::open(
            dir.path(),
            rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let kept = File::open(dir.path()).unwrap();
        let results = sync_and_discard([&kept], vec![(Arc::new(handle), "old".into())]);
        assert_eq!(results.len(), 1);
        assert!(!dir.path().join("old").exists());
    }
}
