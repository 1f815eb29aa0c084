//! Live updates: a server-sent event each time a file the page shows changes, whichever
//! channel changed it (the assistant's calls, the terminal, another dashboard, an editor),
//! and one when a browser signs in, so that an open page shows it at once.
//! The files' sizes and modification times under `.bmad-task/`, `.claude/specs/` and
//! `.bmad/` are read every [`POLL`]: no watcher thread, no platform API, and nothing held
//! open between polls. BENCHMARKS.md ("Lessons and the dashboard") has the latency from a
//! write to the event.

use std::collections::hash_map::DefaultHasher;
use std::convert::Infallible;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use tokio_util::sync::CancellationToken;

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(100);
/// The most entries looked at per folder: a folder grown past it is seen by its first ones.
const MAX_ENTRIES: usize = 4096;

/// A fingerprint of the files the page shows in the projects at `roots`.
pub fn fingerprint(roots: &[PathBuf]) -> u64 {
    let mut h = DefaultHasher::new();
    for root in roots {
        root.hash(&mut h);
        for (area, depth) in [(".bmad-task", 1), (".claude/specs", 2), (".bmad", 1)] {
            walk(&root.join(area), depth, &mut h);
        }
    }
    h.finish()
}

fn walk(dir: &Path, depth: usize, h: &mut DefaultHasher) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.take(MAX_ENTRIES).flatten() {
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        entry.file_name().hash(h);
        if meta.is_dir() {
            if depth > 0 {
                walk(&entry.path(), depth - 1, h);
            }
            continue;
        }
        meta.len().hash(h);
        if let Ok(t) = meta.modified() {
            t.hash(h);
        }
    }
}

/// The event stream: `ready` at once, then `change` whenever the fingerprint of the
/// projects `roots` names at that look moves (a project joining moves it too) and `signin`
/// whenever `signed` (how many browsers signed in) does; it ends when `stop` is cancelled.
pub fn stream(
    roots: impl Fn() -> Vec<PathBuf> + Send + Sync + 'static,
    stop: CancellationToken,
    signed: impl Fn() -> usize + Send + Sync + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let roots = Arc::new(move || fingerprint(&roots()));
    let signed = Arc::new(signed);
    let first = (roots(), signed());
    let events = stream::unfold((roots, first, true), move |(roots, mut last, start)| {
        let (stop, signed) = (stop.clone(), signed.clone());
        async move {
            if start {
                let ready = Event::default().event("ready").data("{}");
                return Some((Ok(ready), (roots, last, false)));
            }
            loop {
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = stop.cancelled() => return None,
                }
                let looked = roots.clone();
                let files = tokio::task::spawn_blocking(move || looked()).await.ok()?;
                let now = (files, signed());
                let name = if now.1 != last.1 {
                    "signin"
                } else if now.0 != last.0 {
                    "change"
                } else {
                    continue;
                };
                let at = chrono::Utc::now().timestamp_millis();
                let event = Event::default()
                    .event(name)
                    .data(format!("{{\"at\":{at}}}"));
                // A sign-in is said alone; a change at the same time comes at the next look.
                last.1 = now.1;
                if name == "change" {
                    last.0 = now.0;
                }
                return Some((Ok(event), (roots, last, false)));
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
