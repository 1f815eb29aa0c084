//! fsyncs that wait for the disk together. A journaling file system commits the fsyncs
//! that wait at the same time in one go, where one after the other each would wait for a
//! commit of its own; so every file of one step of a write is synced on its own thread.
//!
//! The threads are kept: a thread made for each fsync cost more than the fsync itself on
//! a file system that commits at once (tmpfs, a disk with a write cache), about 70 µs of
//! CPU each, 34 over the standard workflow (BENCHMARKS.md, "Per-call work"). At most
//! [`WORKERS`] are made, the first time a write needs them, and wait for work for the rest
//! of the process; each gets a duplicate of the file's handle, so no borrow crosses a
//! thread. When no thread can be made, the files are synced one after the other here.

use std::fs::File;
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, OnceLock};

/// Threads kept for fsyncs: a writing call syncs at most a few files at once (a document,
/// the session, their folders); more wait for a free thread.
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

/// A worker's life: take a job, sync, answer; ends only with the process.
fn work(jobs: &Mutex<Receiver<Job>>) {
    loop {
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
/// this thread, the others on the kept threads.
pub(super) fn sync_together<'a>(files: impl IntoIterator<Item = &'a File>) -> Vec<io::Result<()>> {
    let files: Vec<&File> = files.into_iter().collect();
    let Some((first, rest)) = files.split_first() else {
        return Vec::new();
    };
    let mut results: Vec<Option<io::Result<()>>> = (0..files.len()).map(|_| None).collect();
    let (done, answers) = sync_channel(rest.len());
    let mut sent = 0;
    if let Some(queue) = queue().filter(|_| !rest.is_empty()) {
        for (i, f) in rest.iter().enumerate() {
            let index = i + 1;
            // A handle that cannot be duplicated, or a queue that is gone: synced here.
            let queued = f.try_clone().ok().is_some_and(|file| {
                let job = Job {
                    file,
                    index,
                    done: done.clone(),
                };
                queue.send(job).is_ok()
            });
            if queued {
                sent += 1;
            }
        }
    }
    drop(done);
    results[0] = Some(first.sync_all());
    for _ in 0..sent {
        match answers.recv() {
            Ok((index, r)) => results[index] = Some(r),
            Err(_) => break,
        }
    }
    // Whatever no worker synced (not queued, or a worker that died) is synced here.
    files
        .iter()
        .zip(results)
        .map(|(f, r)| r.unwrap_or_else(|| f.sync_all()))
        .collect()
}
