//! fsyncs that wait for the disk together, on threads made once per process. Each fsync
//! ends with a commit of the file system's journal or a flush of the disk's cache, and
//! one after the other each pays that wait; started at the same time they share one. So
//! the files of one step of a write are synced at once: the first on the caller's thread,
//! the others on a few workers that live as long as the process (a thread started per
//! step costs its start, and on a busy machine a wait to be scheduled, at every step).
//! A job no worker has taken yet when the caller's own fsync returns is done by the
//! caller: a worker slow to be scheduled never makes a step wait longer than doing it
//! all on the caller's thread would. The workers also remove the old copies of replaced
//! files, at the same time as the last step's fsyncs: freeing a file's blocks can wait for
//! the journal as long as an fsync. Without a worker, the caller does it all, in order.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The most workers a process makes: a step syncs a few files (a document, a draft, the
/// session, their folders), and several callers at once share them.
const MAX_WORKERS: usize = 4;

/// A name to remove from a folder: a replaced file's old copy.
pub(super) type Discard = (Arc<OwnedFd>, String);

/// What a job sends back: its place in the step and, for an fsync, its result.
type Done = Sender<(usize, io::Result<()>)>;

enum Work {
    /// fsync the file.
    Sync(File),
    /// Remove the name from the folder (it may be gone already: another writer swept it).
    Unlink(Discard),
}

/// One job of a step: the step it belongs to, its place there, where its result goes.
struct Job {
    step: u64,
    place: usize,
    work: Work,
    done: Done,
}

impl Job {
    fn run(self) {
        let result = match self.work {
            Work::Sync(file) => file.sync_all(),
            Work::Unlink((dir, name)) => {
                let flags = rustix::fs::AtFlags::empty();
                let _ = rustix::fs::unlinkat(dir.as_fd(), name.as_str(), flags);
                Ok(())
            }
        };
        let _ = self.done.send((self.place, result));
    }
}

/// The jobs waiting for a worker, and how many workers there are.
#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    workers: usize,
}

/// The workers' queue and the signal that it holds a job.
#[derive(Default)]
struct Pool {
    queue: Mutex<Queue>,
    ready: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `jobs` for the workers, after making workers up to as many as the jobs
    /// (and the most); when there is none and none can be made, the jobs come back.
    fn hand(&'static self, jobs: Vec<Job>) -> Vec<Job> {
        let mut queue = self.lock();
        while queue.workers < jobs.len().min(MAX_WORKERS) {
            let made = std::thread::Builder::new()
                .name("bmad-fsync".into())
                .stack_size(64 * 1024)
                .spawn(move || self.work());
            if made.is_err() {
                break;
            }
            queue.workers += 1;
        }
        if queue.workers == 0 {
            return jobs;
        }
        queue.jobs.extend(jobs);
        drop(queue);
        self.ready.notify_all();
        Vec::new()
    }

    /// The jobs of `step` that no worker has taken yet, taken back.
    fn take_back(&self, step: u64) -> Vec<Job> {
        let mut queue = self.lock();
        let mut mine = Vec::new();
        for job in std::mem::take(&mut queue.jobs) {
            if job.step == step {
                mine.push(job);
            } else {
                queue.jobs.push_back(job);
            }
        }
        mine
    }

    /// A worker: runs queued jobs until the process ends.
    fn work(&self) {
        loop {
            let mut queue = self.lock();
            let job = loop {
                match queue.jobs.pop_front() {
                    Some(job) => break job,
                    None => queue = self.ready.wait(queue).unwrap_or_else(|e| e.into_inner()),
                }
            };
            drop(queue);
            job.run();
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
    static STEPS: AtomicU64 = AtomicU64::new(0);
    let step = STEPS.fetch_add(1, Ordering::Relaxed);
    let files: Vec<&File> = files.into_iter().collect();
    let (done, results) = channel();
    let job = |place, work| Job {
        step,
        place,
        work,
        done: done.clone(),
    };
    // A second handle on each open file, for a worker to own; a file without one is
    // synced below on this thread.
    let syncs = files.iter().enumerate().skip(1);
    let mut jobs: Vec<Job> = syncs
        .filter_map(|(i, f)| Some(job(i, Work::Sync(f.try_clone().ok()?))))
        .collect();
    jobs.extend(
        old.into_iter()
            .enumerate()
            .map(|(i, d)| job(files.len() + i, Work::Unlink(d))),
    );
    let mut here = pool().hand(jobs);
    // Every sender left is a job's: the results end when the last job is done.
    drop(done);
    let mut out: Vec<Option<io::Result<()>>> = files.iter().map(|_| None).collect();
    if let Some(first) = files.first() {
        out[0] = Some(first.sync_all());
    }
    here.extend(pool().take_back(step));
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
