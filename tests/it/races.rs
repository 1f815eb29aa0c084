//! Confinement under races: the project folder, or a folder of its areas, swapped for a
//! symbolic link to a folder outside while calls run; a lock file hard-linked to a file
//! outside. Nothing is ever written outside.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::support::http::Server;
use crate::support::{connect, files_under, start_args, Era, Sandbox};

/// Everything under `dir`, folders included (a folder made outside is a write too).
fn entries_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(entries_under(&p));
        }
        out.push(p);
    }
    out
}

/// Moves `real` aside, puts a link to `outside` in its place, then undoes both, in a
/// loop until `stop`; returns how many swaps it made.
fn swapper(real: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let aside = real.with_extension("moved");
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if std::fs::rename(&real, &aside).is_err() {
                std::thread::yield_now();
                continue;
            }
            while std::os::unix::fs::symlink(&outside, &real).is_err() {
                // The server made the missing area again meanwhile (inside the project).
                let _ = std::fs::remove_dir_all(&real);
            }
            std::thread::sleep(Duration::from_micros(200));
            std::fs::remove_file(&real).unwrap();
            if std::fs::rename(&aside, &real).is_err() {
                // The server made the missing area again meanwhile (inside the project).
                std::fs::remove_dir_all(&real).unwrap();
                std::fs::rename(&aside, &real).unwrap();
            }
            swaps += 1;
            std::thread::sleep(Duration::from_micros(300));
        }
        swaps
    })
}

/// Over HTTP with `--root` the folder holding the project: 1,000 calls while the project
/// folder, then `.claude/specs`, then `.bmad-task`, is swapped for a link to a folder
/// outside the root again and again. Calls may be refused (the project is missing or
/// outside the root for a moment, a link is on the path), but not one file or folder
/// appears outside, and the project works once the swapping stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_during_a_thousand_calls_puts_nothing_outside() {
    let sb = Sandbox::new();
    let root = sb.dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let project = root.join("project");
    std::fs::rename(&sb.project, &project).unwrap();
    let server = Server::start(&["--root", root.to_str().unwrap()], &[]);
    let c = server.connect(Era::Modern, None, &project).await;
    // The areas exist, so that they can be swapped.
    c.ok(start_args(&project, "Before the swapping")).await;
    let (mut answered, mut refused, mut swaps) = (0, 0, 0);
    for (target, calls) in [
        (project.clone(), 400),
        (project.join(".claude/specs"), 300),
        (project.join(".bmad-task"), 300),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let swapping = swapper(target.clone(), sb.outside.clone(), stop.clone());
        for i in 0..calls {
            let args = if i % 4 == 3 {
                json!({"action": "list", "cwd": project.to_str().unwrap()})
            } else {
                start_args(&project, &format!("Raced call {i}"))
            };
            match c.call(args).await {
                (false, _) => answered += 1,
                (true, _) => refused += 1,
            }
            let stray = entries_under(&sb.outside);
            assert!(!swapping.is_finished(), "the swapper stopped");
            assert!(
                stray.is_empty(),
                "{} call {i}: written outside: {stray:?}",
                target.display()
            );
        }
        stop.store(true, Ordering::Relaxed);
        swaps += swapping.join().unwrap();
        assert!(target.is_dir() && !target.is_symlink());
    }
    assert!(swaps > 100, "the swapper made only {swaps} swaps");
    assert!(
        answered > 100,
        "only {answered} of 1000 calls were answered ({refused} refused)"
    );
    c.ok(start_args(&project, "After the swapping")).await;
    c.close().await;
    assert!(entries_under(&sb.outside).is_empty());
    for f in files_under(sb.dir.path()) {
        assert!(
            f.starts_with("root/project/.bmad-task/")
                || f.starts_with("root/project/.claude/specs/"),
            "written outside the areas: {f}"
        );
    }
}

/// `.bmad-task/.lock` hard-linked to a file outside the project: the server replaces the
/// lock file with its own, and the file outside keeps every byte.
#[tokio::test]
async fn a_lock_file_hard_linked_outside_is_replaced_never_written() {
    let sb = Sandbox::new();
    let secret = sb.outside.join("secret.txt");
    std::fs::write(&secret, "the outside file's own words\n").unwrap();
    std::fs::create_dir(sb.project.join(".bmad-task")).unwrap();
    let lock = sb.project.join(".bmad-task/.lock");
    std::fs::hard_link(&secret, &lock).unwrap();
    let c = connect(Era::Legacy, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Through the link")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    c.ok(json!({"action": "status", "session_id": sid})).await;
    c.close().await;
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "the outside file's own words\n"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        std::fs::metadata(&secret).unwrap().nlink(),
        1,
        "the link was replaced"
    );
    let own = std::fs::metadata(&lock).unwrap();
    assert_eq!(own.nlink(), 1);
    assert_ne!(own.ino(), std::fs::metadata(&secret).unwrap().ino());
}
