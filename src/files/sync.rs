//! fsyncs that wait for the disk together. A journaling file system commits the fsyncs
//! that wait at the same time in one go, where one after the other each would wait for a
//! commit of its own; so every file of one step of a write is synced on its own thread.
//!
//! The threads are kept: a thread made for each fsync cost more than the fsync itself on
//! a file system that commits at once (tmpfs, a disk with a write cache), about 70 µs of
//! CPU each, 34 over the standard workflow (BENCHMARKS.md, "Per-call work"). At most
//! [`WORKERS`] are made, the first time a write needs them, and wait for work for the rest
//! of the process; each gets a duplicate of the file's handle, so no borrow crosses a
//! thread. When every kept thread is busy (many calls writing at once), a thread is made
//! for the fsync as before; when none can be made, the files are synced one after the
//! other here.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

/// Threads kept for fsyncs: a writing call syncs at most a few files at once (a document,
/// the session, their folders).
const WORKERS: usize = 4;

/// Jobs the queue holds before a caller waits to queue more. Both channels are bounded so
/// that their room is made once by the caller: a worker that allocated would get a malloc
/// arena of its own, resident for the rest of the process.
const QUEUED: usize = 64;

/// One fsync for a worker: the file, its place in the caller's order, where to answer.
struct Job {
    file: File,
    index: usize,
    done: SyncSender<(usize, io::Result<()>)>,
}

/// The workers' queue, made with the first workers; `None` when no thread could be made.
fn queue() -> Option<&'static SyncSender<Job>> {
    static QUEUE: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (send, receive) = sync_channel::<Job>(QUEUED);
            let receive = Arc::new(Mutex::new(receive));
            let made = (0..WORKERS)
                .filter(|_| {
                    let receive = Arc::clone(&receive);
                    std::thread::Builder::new()
                        .name("bmad-fsync".into())
                        .stack_size(64 * 1024)
                        .spawn(move || work(&receive))
                        .is_ok()
                })
                .count();
            (made > 0).then_some(send)
        })
        .as_ref()
}

/// Workers waiting for a job and not yet promised one: a file is queued only when one of
/// them is free to take it at once, so a sync never waits behind another call's.
static IDLE: AtomicUsize = AtomicUsize::new(0);

/// Promises a free worker to one job; `false` when every worker is busy.
fn reserve_worker() -> bool {
    IDLE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok()
}

/// A worker's life: take a job, sync, answer; ends only with the process.
fn work(jobs: &Mutex<Receiver<Job>>) {
    loop {
        IDLE.fetch_add(1, Ordering::AcqRel);
        let job = match jobs.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let result = job.file.sync_all();
        // The caller may have stopped waiting (it cannot here, but a closed channel is
        // no reason to stop the worker).
        let _ = job.done.send((job.index, result));
    }
}

/// fsyncs `files` at the same time and returns each one's result, in order: the first on
/// this thread, the others on kept threads that are free, or on threads made for them
/// when none is (many calls writing at once, over HTTP).
pub(super) fn sync_together<'a>(files: impl IntoIterator<Item = &'a File>) -> Vec<io::Result<()>> {
    let files: Vec<&File> = files.into_iter().collect();
    let Some((first, rest)) = files.split_first() else {
        return Vec::new();
    };
    if rest.is_empty() {
        return vec![first.sync_all()];
    }
    let mut results: Vec<Option<io::Result<()>>> = (0..files.len()).map(|_| None).collect();
    let (done, answers) = sync_channel(rest.len());
    let queue = queue();
    std::thread::scope(|s| {
        let mut queued = 0;
        let mut spawned = Vec::new();
        for (i, f) in rest.iter().copied().enumerate() {
            let index = i + 1;
            if let Some(queue) = queue.filter(|_| reserve_worker()) {
                let job = f.try_clone().map(|file| Job {
                    file,
                    index,
                    done: done.clone(),
                });
                match job.map(|job| queue.send(job)) {
                    Ok(Ok(())) => {
                        queued += 1;
                        continue;
                    }
                    // Not queued: the promised worker stays free for another job.
                    _ => {
                        IDLE.fetch_add(1, Ordering::AcqRel);
                    }
                }
            }
            let thread = std::thread::Builder::new()
                .name("bmad-fsync".into())
                .stack_size(64 * 1024)
                .spawn_scoped(s, move || f.sync_all());
            // No thread to spare: synced below, after the others.
            if let Ok(handle) = thread {
                spawned.push((index, handle));
            }
        }
        drop(done);
        results[0] = Some(first.sync_all());
        for (index, handle) in spawned {
            results[index] = handle.join().ok();
        }
        for _ in 0..queued {
            match answers.recv() {
                Ok((index, r)) => results[index] = Some(r),
                Err(_) => break,
            }
        }
    });
    // Whatever no thread synced is synced here.
    files
        .iter()
        .zip(results)
        .map(|(f, r)| r.unwrap_or_else(|| f.sync_all()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More files than kept threads, from several callers at once: every call returns (no
    /// caller waits on a job no thread takes), each file with its own result, and every
    /// promise of a free thread is given back.
    #[test]
    fn many_callers_syncing_more_files_than_workers_each_get_their_results() {
        let dir = tempfile::tempdir().unwrap();
        std::thread::scope(|s| {
            for caller in 0..6 {
                let dir = dir.path();
                s.spawn(move || {
                    for round in 0..5 {
                        let files: Vec<File> = (0..WORKERS + 3)
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
            6 * 5 * (WORKERS + 3)
        );
        assert!(
            IDLE.load(Ordering::Acquire) <= WORKERS,
            "promises are given back"
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
}
