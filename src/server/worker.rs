//! The thread that runs the server's blocking work (tool calls, reads of the project):
//! one thread, kept, that takes the work while it is idle; work that comes while it is busy
//! (calls in parallel) goes to tokio's blocking pool as before.
//!
//! Why not the pool alone: a call's thread goes back to the pool only after its answer has
//! left, so the next call often found no idle thread and the pool started another one, each
//! with a 2 MiB stack, the 0.4 MiB of it a call touches, and a malloc arena of its own: 0.8
//! MiB more resident in half the workflow runs (issue 26 item 5, BENCHMARKS.md). Here the
//! thread says it is idle before it hands over the result, so a call that follows its
//! predecessor's answer always finds it free.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A piece of work; it is told the flag to lower once it is done, before it answers.
type Job = Box<dyn FnOnce(&AtomicBool) + Send>;

/// The started thread: its queue, and its handle to wait for it.
type Started = (Sender<Job>, JoinHandle<()>);

#[derive(Default)]
pub(super) struct Worker {
    /// Whether the thread has work (false while it waits, and before it starts: the first
    /// work given to it starts it).
    busy: Arc<AtomicBool>,
    /// The thread's queue and handle, once started; `None` inside when it could not start.
    thread: Mutex<Option<Option<Started>>>,
}

impl Worker {
    /// Runs `f` on the worker thread if it is idle, else on tokio's blocking pool; `None`
    /// when `f` panicked (the thread lives on).
    pub(super) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |done: &AtomicBool| {
            let out = catch_unwind(AssertUnwindSafe(f)).ok();
            done.store(false, Ordering::Release);
            let _ = tx.send(out);
        });
        let job = match self.hand_over(job) {
            Ok(()) => return rx.await.ok().flatten(),
            Err(job) => job,
        };
        let ran = tokio::task::spawn_blocking(move || job(&AtomicBool::new(true))).await;
        match ran {
            Ok(()) => rx.await.ok().flatten(),
            Err(_) => None,
        }
    }

    /// Gives `job` to the thread if it is idle (starting it the first time), else hands
    /// it back.
    fn hand_over(&self, job: Job) -> Result<(), Job> {
        if self
            .busy
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(job);
        }
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        let started = thread.get_or_insert_with(|| self.spawn(|| {}));
        let sent = match started {
            Some((queue, _)) => queue.send(job).map_err(|e| e.0),
            None => Err(job),
        };
        if sent.is_err() {
            self.busy.store(false, Ordering::Release);
        }
        sent
    }

    /// Starts the thread now (if it has not started), to run `first` before any work: a
    /// call that comes meanwhile waits for it. The stdio server starts it as it starts, to
    /// build the text patterns there: the calls then find their memory in the malloc
    /// arena the building used and freed, where a thread of its own for the patterns kept
    /// an arena of 0.75 MiB to itself and the calls' thread opened another (issue 26 item
    /// 5).
    pub(super) fn start(&self, first: impl FnOnce() + Send + 'static) {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_none() {
            *thread = Some(self.spawn(first));
        }
    }

    fn spawn(&self, first: impl FnOnce() + Send + 'static) -> Option<Started> {
        let (queue, jobs) = channel::<Job>();
        let busy = self.busy.clone();
        let spawned = std::thread::Builder::new()
            .name("bmad-calls".into())
            .spawn(move || {
                // A panic there is the patterns' (static, tested): they are built on use.
                let _ = catch_unwind(AssertUnwindSafe(first));
                for job in jobs {
                    job(&busy);
                }
            });
        match spawned {
            Ok(handle) => Some((queue, handle)),
            Err(e) => {
                tracing::debug!(error = %e, "calls run on tokio's blocking pool");
                None
            }
        }
    }

    /// Waits for the work the thread has (as dropping tokio's runtime waits for its
    /// blocking pool); later work goes to the pool.
    pub(super) fn finish(&self) {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        let started = thread.replace(None);
        drop(thread);
        if let Some(Some((queue, handle))) = started {
            drop(queue);
            let _ = handle.join();
        }
    }
}
