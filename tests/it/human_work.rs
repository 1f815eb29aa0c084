//! Human work is never lost or misread, and a failed call leaves nothing, through the
//! real binary: the document a decision is about is read byte for byte as it is on disk;
//! anything there that is not usable text is refused and left alone; a document the human
//! changed is kept before a new submission replaces it; the approved scope names sprints of
//! the plan as it is now; a specs folder belongs to one session; the lock wait is bounded;
//! damaged indexes are rebuilt; a failed `start` takes back what it made; history times
//! never go backwards.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{
    connect, connect_with, passing_architecture, passing_prd, start_args, tree_digest, Client, Era,
    Sandbox,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const PLAN: &str = "# Sprint Plan\n\n## Sprint 1: Core\n- a\n\n## Sprint 2: UI\n- b\n";

fn sha(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Starts a session and submits a passing PRD; returns (session id, artifact path).
async fn awaiting_confirmation(c: &Client, project: &Path, objective: &str) -> (String, String) {
    let v = c.ok(start_args(project, objective)).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    (sid, v["artifact_path"].as_str().unwrap().to_string())
}

/// Drives a session to the sprint plan awaiting approval; returns (id, plan path).
async fn awaiting_approval(c: &Client, project: &Path, objective: &str) -> (String, String) {
    let (sid, _) = awaiting_confirmation(c, project, objective).await;
    let arch = passing_architecture();
    for args in [
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": arch}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
    ] {
        let mut args = args;
        args["session_id"] = json!(sid);
        c.ok(args).await;
    }
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(s["state"], "awaiting_approval");
    let path = s["session"]["stages"]["sm"]["artifact"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    (sid, path)
}

#[tokio::test]
async fn a_decision_reads_the_document_as_it_is_and_never_replaces_a_file_it_cannot_use() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let (sid, rel) = awaiting_confirmation(&c, project, "Byte exact").await;
    let file = project.join(&rel);
    let confirm = json!({"action": "confirm", "session_id": sid});

    // Each shape of an unusable file: refused, naming the file and what it is, and the
    // file and the session are left exactly as they were.
    type Place = fn(&Path, &Path);
    let shapes: [(&str, Place, &str); 5] = [
        (
            "latin-1 bytes",
            |f, _| std::fs::write(f, b"# PRD\ncaf\xe9\n").unwrap(),
            "is not UTF-8 text (the first byte that is not is at offset 9)",
        ),
        (
            "an empty file",
            |f, _| std::fs::write(f, "\n\n").unwrap(),
            "is empty",
        ),
        (
            "a directory",
            |f, _| std::fs::create_dir(f).unwrap(),
            "is a directory",
        ),
        (
            "a FIFO",
            |f, _| {
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    f,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o644),
                    0,
                )
                .unwrap()
            },
            "is a FIFO",
        ),
        (
            "a link out of the area",
            |f, outside| {
                let target = outside.join("secret.md");
                std::fs::write(&target, "# Not yours\n").unwrap();
                std::os::unix::fs::symlink(&target, f).unwrap();
            },
            "leads outside",
        ),
    ];
    for (what, place, want) in shapes {
        let _ = std::fs::remove_file(&file);
        let _ = std::fs::remove_dir(&file);
        place(&file, &sb.outside);
        let before = tree_digest(sb.dir.path());
        let started = Instant::now();
        let (is_error, v) = c.call(confirm.clone()).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{what} blocked the call"
        );
        assert!(is_error, "{what}: {v:#}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(&rel) && msg.contains(want), "{what}: {msg}");
        assert_eq!(v["state"], "awaiting_confirmation", "{what}");
        assert_eq!(
            tree_digest(sb.dir.path()),
            before,
            "{what} changed something"
        );
    }

    // The human's edit, byte for byte (no trailing newline, CRLF, non-ASCII), is what is
    // confirmed and recorded, and the file is not rewritten.
    let _ = std::fs::remove_file(&file);
    let edited = "# PRD (edited)\r\n\r\n## Executive Summary\r\nÉdité à la main.".as_bytes();
    std::fs::write(&file, edited).unwrap();
    let v = c.ok(confirm.clone()).await;
    assert!(v["notices"][0]
        .as_str()
        .unwrap()
        .contains("was edited after it was submitted"));
    assert_eq!(std::fs::read(&file).unwrap(), edited);
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let a = &s["session"]["stages"]["po"]["artifact"];
    assert_eq!(a["sha256"], sha(edited));
    assert_eq!(a["size"], edited.len());

    // A deleted document is the one case rebuilt from the submission, and said so.
    let (sid, rel) = awaiting_confirmation(&c, project, "Deleted then confirmed").await;
    std::fs::remove_file(project.join(&rel)).unwrap();
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    let notices = v["notices"].to_string();
    assert!(notices.contains("had been deleted"), "{notices}");
    assert!(std::fs::read_to_string(project.join(&rel))
        .unwrap()
        .starts_with("# PRD"));
    c.close().await;
    sb.assert_confined(&["outside/secret.md"]);
}

/// A stage document the human changed after the server saved it is not lost when a new
/// submission replaces it: that version is kept under `.bmad-task/temp/` first, and the
/// reply names where.
#[tokio::test]
async fn a_document_the_human_changed_is_kept_before_a_new_submission_replaces_it() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let (sid, rel) = awaiting_confirmation(&c, project, "Kept edits").await;
    let file = project.join(&rel);
    let saved = std::fs::read(&file).unwrap();
    let edited = "# PRD (the human's)\n\n## Executive Summary\nWritten by hand.\n".as_bytes();
    std::fs::write(&file, edited).unwrap();

    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Say who the users are."}))
        .await;
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let notices = v["notices"].to_string();
    let kept = notices
        .split("that version is kept as ")
        .nth(1)
        .and_then(|rest| rest.split(" before").next())
        .unwrap_or_else(|| panic!("no notice names the kept version: {notices}"));
    assert!(kept.starts_with(".bmad-task/temp/"), "{kept}");
    assert_eq!(std::fs::read(project.join(kept)).unwrap(), edited);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        saved,
        "the new submission is the stage document now"
    );
    c.close().await;
    sb.assert_confined(&[]);
}

#[tokio::test]
async fn approval_reads_the_plan_as_it_is_and_the_scope_must_name_its_sprints() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Legacy, project).await;
    let (sid, rel) = awaiting_approval(&c, project, "Scoped plan").await;
    let approve = |scope: &str| json!({"action": "approve", "session_id": sid, "scope": scope});

    let e = c.refused(approve("sprint 3"), "invalid_scope").await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("has no sprint 3") && msg.contains("1 (Core), 2 (UI)"),
        "{msg}"
    );
    let e = c.refused(approve("the first one"), "invalid_scope").await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("does not read as sprint numbers"));

    // The human adds a sprint to the plan on disk; that plan is the one approved.
    let edited = format!("{PLAN}\n## Sprint 3: Extra\n- c\n");
    std::fs::write(project.join(&rel), &edited).unwrap();
    let v = c.ok(approve("sprints 2-3")).await;
    assert_eq!(v["stage"], "dev");
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let sm = &s["session"]["stages"]["sm"];
    assert_eq!(sm["scope"], "sprints 2-3");
    assert_eq!(sm["scope_sprints"], json!([2, 3]));
    assert_eq!(sm["sprints"].as_array().unwrap().len(), 3);
    assert_eq!(sm["artifact"]["sha256"], sha(edited.as_bytes()));
    assert_eq!(sm["artifact"]["size"], edited.len());
    c.close().await;
}

#[tokio::test]
async fn a_specs_folder_belongs_to_one_session_and_two_ids_must_agree() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let a = c.ok(start_args(project, "Todo app")).await;
    let b = c.ok(start_args(project, "Todo app")).await;
    let (a_id, b_id) = (
        a["session_id"].as_str().unwrap(),
        b["session_id"].as_str().unwrap(),
    );
    assert_eq!(
        (a["task_name"].as_str(), b["task_name"].as_str()),
        (Some("todo-app"), Some("todo-app-1"))
    );

    // One id and the other's task name: refused, not resolved silently.
    let e = c
        .refused(
            json!({"action": "status", "session_id": a_id, "task_name": "todo-app-1"}),
            "conflicting_ids",
        )
        .await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("todo-app-1") && msg.contains(b_id), "{msg}");
    c.ok(json!({"action": "status", "session_id": a_id, "task_name": "todo-app"}))
        .await;

    // As after a merge of two branches that each started "Todo app": b now claims a's
    // folder. b is refused and nothing is written; a goes on.
    let path = project.join(format!(".bmad-task/session-{b_id}.json"));
    let mut stored = support::read_json(&path);
    stored["task_name"] = json!("todo-app");
    std::fs::write(&path, serde_json::to_string_pretty(&stored).unwrap()).unwrap();
    let before = tree_digest(sb.dir.path());
    let e = c
        .refused(
            json!({"action": "submit", "session_id": b_id, "claude_result": passing_prd()}),
            "specs_folder_taken",
        )
        .await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(a_id) && msg.contains(".claude/specs/todo-app/"),
        "{msg}"
    );
    assert_eq!(tree_digest(sb.dir.path()), before);
    c.ok(json!({"action": "submit", "session_id": a_id, "claude_result": passing_prd()}))
        .await;
    c.close().await;
}

#[tokio::test]
async fn the_lock_wait_is_bounded_and_reads_never_wait() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let mut cmd = support::command(project);
    cmd.env("BMAD_LOCK_WAIT_SECS", "0.5");
    let c = connect_with(Era::Legacy, cmd, project).await;
    let v = c.ok(start_args(project, "Locked out")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();

    // Another process holds the lock (this test, posing as pid 424242).
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(project.join(".bmad-task/.lock"))
        .unwrap();
    lock.lock().unwrap();
    std::fs::write(project.join(".bmad-task/.lock"), "424242\n").unwrap();

    let t = Instant::now();
    c.ok(json!({"action": "status", "session_id": sid})).await;
    c.ok(json!({"action": "list"})).await;
    let reads = t.elapsed();
    assert!(reads < Duration::from_millis(400), "reads waited {reads:?}");

    let t = Instant::now();
    let e = c
        .refused(
            json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}),
            "busy",
        )
        .await;
    let waited = t.elapsed();
    eprintln!("reads took {reads:?}; the refused submit took {waited:?}");
    assert!(
        waited >= Duration::from_millis(500) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(".bmad-task/.lock") && msg.contains("pid 424242"),
        "{msg}"
    );
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(s["state"], "generating", "nothing was applied");

    drop(lock);
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    c.close().await;
}

#[tokio::test]
async fn damaged_task_mappings_are_rebuilt_and_kept_aside_and_never_block_a_start() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let first = c.ok(start_args(project, "Mapped")).await;
    let mapping = project.join(".bmad-task/task-mapping.json");
    type Damage = fn(&Path);
    // The sandbox's `outside/elsewhere.json`, from the mapping's path.
    fn elsewhere(m: &Path) -> std::path::PathBuf {
        m.ancestors().nth(3).unwrap().join("outside/elsewhere.json")
    }
    std::fs::write(elsewhere(&mapping), "{}").unwrap();
    let damages: [(&str, Damage, &str); 6] = [
        (
            "not UTF-8",
            |m| std::fs::write(m, b"{\"\xff\": 1}").unwrap(),
            "is not UTF-8 text",
        ),
        (
            "not an object",
            |m| std::fs::write(m, "[1, 2]").unwrap(),
            "is not a mapping",
        ),
        (
            "torn",
            |m| std::fs::write(m, "{ \"a\": {").unwrap(),
            "is not a mapping",
        ),
        (
            "a directory",
            |m| std::fs::create_dir(m).unwrap(),
            "is a directory",
        ),
        // A special file, and a link out of its folder, are rebuilt too.
        (
            "a FIFO",
            |m| {
                let made = std::process::Command::new("mkfifo").arg(m).status();
                assert!(made.unwrap().success());
            },
            "is a FIFO",
        ),
        (
            "a link out of .bmad-task",
            |m| std::os::unix::fs::symlink(elsewhere(m), m).unwrap(),
            "is a symbolic link that leads outside .bmad-task",
        ),
    ];
    for (i, (what, damage, want)) in damages.into_iter().enumerate() {
        if mapping.is_dir() {
            std::fs::remove_dir(&mapping).unwrap();
        } else {
            std::fs::remove_file(&mapping).unwrap();
        }
        damage(&mapping);
        // Lookups by task name work from the session files meanwhile.
        let s = c
            .ok(json!({"action": "status", "task_name": "mapped"}))
            .await;
        assert_eq!(s["session_id"], first["session_id"], "{what}");
        let v = c.ok(start_args(project, "Mapped")).await;
        assert_eq!(v["task_name"], format!("mapped-{}", i + 1), "{what}");
        let notice = v["notices"][0].as_str().unwrap_or_default().to_string();
        assert!(
            notice.contains(want) && notice.contains("rebuilt"),
            "{what}: {notice}"
        );
        let aside = notice
            .split("kept as ")
            .nth(1)
            .map(|s| s.trim_end_matches('.'))
            .unwrap();
        assert!(
            project.join(aside).symlink_metadata().is_ok(),
            "{what}: {aside} kept"
        );
        let rebuilt = support::read_json(&mapping);
        assert_eq!(rebuilt.as_object().unwrap().len(), i + 2, "{what}");
    }
    assert_eq!(
        std::fs::read_to_string(elsewhere(&mapping)).unwrap(),
        "{}",
        "the link's target is never written"
    );
    // A session file that is not UTF-8 is corrupt, not a storage error.
    let sid = first["session_id"].as_str().unwrap();
    std::fs::write(
        project.join(format!(".bmad-task/session-{sid}.json")),
        b"{\xff}",
    )
    .unwrap();
    let e = c
        .refused(
            json!({"action": "status", "session_id": sid}),
            "session_corrupt",
        )
        .await;
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not UTF-8"));
    c.close().await;
}

/// Mounts a small tmpfs on `dir` for the life of the guard, when this machine lets the
/// test do so (root in a mount namespace it may use).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_failed_start_takes_back_what_it_made_and_the_retry_gets_the_same_name() {
    // `.claude` in the way (a file): the reservation fails after the lock was taken.
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    std::fs::write(project.join(".claude"), "not a folder").unwrap();
    let before = tree_digest(sb.dir.path());
    let c = connect(Era::Legacy, project).await;
    let e = c
        .refused(start_args(project, "Retry me"), "storage_error")
        .await;
    assert!(
        e["error"]["message"].as_str().unwrap().contains(".claude"),
        "{e}"
    );
    assert_eq!(
        tree_digest(sb.dir.path()),
        before,
        "the failed start left something"
    );
    std::fs::remove_file(project.join(".claude")).unwrap();
    let v = c.ok(start_args(project, "Retry me")).await;
    assert_eq!(v["task_name"], "retry-me");
    c.close().await;

    // A full disk, for real, where a tmpfs can be mounted.
    let dir = tempfile::tempdir().unwrap();
    let Some(_mounted) = Tmpfs::mount(dir.path(), "256k") else {
        eprintln!("note: no tmpfs could be mounted here; the full-disk half did not run");
        return;
    };
    let project = dir.path();
    let filler = project.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![b'x'; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
    let before = support::files_under(project);
    let c = connect(Era::Modern, project).await;
    let e = c
        .refused(start_args(project, "Disk full"), "storage_error")
        .await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("No space left") && msg.contains("free some disk space"),
        "{msg}"
    );
    assert_eq!(
        support::files_under(project),
        before,
        "the failed start left something"
    );
    assert!(!project.join(".bmad-task").exists() && !project.join(".claude").exists());
    std::fs::remove_file(&filler).unwrap();
    let v = c.ok(start_args(project, "Disk full")).await;
    assert_eq!(v["task_name"], "disk-full");
    c.close().await;
}

#[tokio::test]
async fn history_times_never_go_backwards() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Legacy, project).await;
    let v = c.ok(start_args(project, "Clock set back")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    // As if the last step had been taken on a machine whose clock runs ahead.
    let path = project.join(format!(".bmad-task/session-{sid}.json"));
    let mut stored: Value = support::read_json(&path);
    let ahead = "2099-01-01T00:00:00.000Z";
    stored["history"][0]["at"] = json!(ahead);
    stored["updated_at"] = json!(ahead);
    std::fs::write(&path, serde_json::to_string_pretty(&stored).unwrap()).unwrap();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    let history = s["session"]["history"].as_array().unwrap();
    let times: Vec<&str> = history.iter().map(|h| h["at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert_eq!(s["session"]["updated_at"].as_str(), times.last().copied());
    c.close().await;
}

/// A decision is bound to the document the human saw: the reply shows the document's
/// digest, a decision that names another version is refused as stale, and `status` lists
/// every decision with who made it, how, and on what.
#[tokio::test]
async fn decisions_are_bound_to_the_digest_shown_and_listed_by_status() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let v = c.ok(start_args(project, "Bound decisions")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let shown = v["document_digest"].as_str().unwrap().to_string();
    assert_eq!(shown.len(), 12);
    assert!(v["user_message"]
        .as_str()
        .unwrap()
        .contains(&format!("SHA-256 {shown}…")));
    let rel = v["artifact_path"].as_str().unwrap().to_string();
    let file = project.join(&rel);
    assert_eq!(sha(&std::fs::read(&file).unwrap())[..12], shown);

    // The file changes after the human was shown it: their decision is stale.
    std::fs::write(&file, "# PRD\n\nChanged after it was shown.\n").unwrap();
    let e = c
        .refused(
            json!({"action": "confirm", "session_id": sid, "digest": shown}),
            "stale_decision",
        )
        .await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains(&rel), "{msg}");
    c.refused(
        json!({"action": "confirm", "session_id": sid, "digest": "not-hex"}),
        "invalid_argument",
    )
    .await;
    let now = sha(&std::fs::read(&file).unwrap());
    c.ok(json!({"action": "confirm", "session_id": sid, "digest": &now[..12]}))
        .await;

    let s = c.ok(json!({"action": "status", "session_id": sid})).await;
    // The host's word names the client it came through, as the history records it.
    let client = s["session"]["history"][2]["provenance"]["client"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        s["decisions"],
        json!([{"stage": "po", "action": "confirm", "decided_by": "host", "via": "tool", "digest": &now[..12], "client": format!("{client} over stdio"), "at": s["session"]["history"][2]["at"]}])
    );
    let entry = &s["session"]["history"][2];
    assert_eq!(entry["digest"], now);
    assert_eq!(
        s["session"]["history"][1].get("decided_by"),
        None,
        "a submission is no decision"
    );
    c.close().await;
}
