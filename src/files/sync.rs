//! fsyncs that wait for the disk together. A journaling file system commits the fsyncs
//! that wait at the same time in one go, where one after the other each would wait for a
//! commit of its own; so every file of one step of a write is synced on a thread of its
//! own (scoped to the step), the first on the caller's. When no thread can be made, the
//! files are synced one after the other.

use std::fs::File;
use std::io;

/// fsyncs `files` at the same time and returns each one's result, in order.
pub(super) fn sync_together<'a>(files: impl IntoIterator<Item = &'a File>) -> Vec<io::Result<()>> {
    let files: Vec<&File> = files.into_iter().collect();
    let Some((first, rest)) = files.split_first() else {
        return Vec::new();
    };
    if rest.is_empty() {
        return vec![first.sync_all()];
    }
    std::thread::scope(|s| {
        let threads: Vec<_> = rest
            .iter()
            .map(|f| {
                std::thread::Builder::new()
                    .name("bmad-fsync".into())
                    .stack_size(64 * 1024)
                    .spawn_scoped(s, move || f.sync_all())
            })
            .collect();
        let mut results = vec![first.sync_all()];
        for (f, thread) in rest.iter().zip(threads) {
            // No thread to spare, or it panicked (sync_all does not): synced here.
            let result = thread.ok().and_then(|t| t.join().ok());
            results.push(result.unwrap_or_else(|| f.sync_all()));
        }
        results
    })
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
}
