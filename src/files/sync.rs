//! fsyncs that wait for the disk together, on threads made once per process. Each fsync
//! ends with a commit of the file system's journal or a flush of the disk's cache, and
//! one after the other each pays that wait; started at the same time they share one. So
//! the files of one step of a write are synced at once: the first on the caller's thread,
//! the others on a few workers that live as long as the process (a thread started per
//! step costs its start, and on a busy machine a wait to be scheduled, at every step).
//! A job no worker has taken yet when the caller's own fsync returns is done by the
//! caller, so that a worker slow to be scheduled does not hold the step up. The workers also remove the old copies of replaced
//! files, at the same time as the last step's fsyncs: freeing a file's blocks can wait for
//! the journal as long as an fsync. Without a worker, the caller does it all, in order.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The most workers a process makes: with the caller's own, three fsyncs at once (a
/// document, a draft, the session); each thread kept costs resident memory.
const MAX_WORKERS: usize = 2;

/// A name to remove from a folder: a replaced file's old copy.
pub(super) type Discard = (Arc<OwnedFd>, String);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the jobs of one step report: each result in its place, and how many are out.
struct Report {
    results: Mutex<(Vec<Option<io::Result<()>>>, usize)>,
    done: Condvar,
}

impl Report {
    fn new(places: usize, out: usize) -> Report {
        Report {
            results: Mutex::new(((0..places).map(|_| None).collect(), out)),
            done: Condvar::new(),
        }
    }

    fn put(&self, place: usize, result: io::Result<()>) {
        let mut results = lock(&self.results);
        results.0[place] = Some(result);
        results.1 -= 1;
        drop(results);
        self.done.notify_all();
    }

    /// Every result, once no job is out.
    fn wait(&self) -> Vec<Option<io::Result<()>>> {
        let mut results = lock(&self.results);
        while results.1 > 0 {
            results = self.done.wait(results).unwrap_or_else(|e| e.into_inner());
        }
        std::mem::take(&mut results.0)
    }
}

enum Work {
    /// fsync the file.
    Sync(File),
    /// Remove the name from the folder (it may be gone already: another writer swept it).
    Unlink(Discard),
}

/// One job of a step: the step it belongs to, its place there, where it reports.
struct Job {
    step: u64,
    place: usize,
    work: Work,
    report: Arc<Report>,
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
        self.report.put(self.place, result);
    }
}

/// The jobs waiting for a worker, how many workers there are, and the signal that a job
/// is waiting.
#[derive(Default)]
struct Pool {
    queue: Mutex<(Vec<Job>, usize)>,
    ready: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

impl Pool {
    /// Queues `jobs` for the workers, after making workers up to as many as the jobs
    /// (and the most); when there is none and none can be made, the jobs come back.
    fn hand(&'static self, jobs: Vec<Job>) -> Vec<Job> {
        let mut queue = lock(&self.queue);
        while queue.1 < jobs.len().min(MAX_WORKERS) {
            let made = std::thread::Builder::new()
                .name("bmad-fsync".into())
                .stack_size(64 * 1024)
                .spawn(move || self.work());
            if made.is_err() {
                break;
            }
            queue.1 += 1;
        }
        if queue.1 == 0 {
            return jobs;
        }
        queue.0.extend(jobs);
        drop(queue);
        self.ready.notify_all();
        Vec::new()
    }

    /// The jobs of `step` that no worker has taken yet, taken back.
    fn take_back(&self, step: u64) -> Vec<Job> {
        let mut queue = lock(&self.queue);
        let (mine, others) = std::mem::take(&mut queue.0)
            .into_iter()
            .partition(|j| j.step == step);
        queue.0 = others;
        mine
    }

    /// A worker: runs queued jobs, oldest first, until the process ends.
    fn work(&self) {
        loop {
            let mut queue = lock(&self.queue);
            while queue.0.is_empty() {
                queue = self.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
            }
            let job = queue.0.remove(0);
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
    // A second handle on each open file, for a worker to own; a file without one is
    // synced below on this thread.
    let mut works: Vec<(usize, Work)> = files
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, f)| Some((i, Work::Sync(f.try_clone().ok()?))))
        .collect();
    let places = files.len() + old.len();
    works.extend((files.len()..places).zip(old.into_iter().map(Work::Unlink)));
    let report = Arc::new(Report::new(places, works.len()));
    let jobs = works.into_iter().map(|(place, work)| Job {
        step,
        place,
        work,
        report: report.clone(),
    });
    let mut here = pool().hand(jobs.collect());
    let first = files.first().map(|f| f.sync_all());
    here.extend(pool().take_back(step));
    here.into_iter().for_each(Job::run);
    let mut results = report.wait();
    if let Some(first) = first {
        results[0] = Some(first);
    }
    results
        .into_iter()
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
    #[cfg(target_os = "linux")]
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
        let workers = procfs::process::Process::myself()
            .unwrap()
            .tasks()
            .unwrap()
            .flatten()
            .filter(|t| t.stat().is_ok_and(|s| s.comm == "bmad-fsync"))
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
