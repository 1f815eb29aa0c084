//! A development report that claims changes git does not show, through the real binary in
//! real git repositories: refused with `nothing_changed` and the reason, nothing recorded,
//! on the quick track (with uncommitted work there before the round began), in a later
//! round after the review sent the work back (a new file not yet added counts), on the fix
//! track, and in a story run from its own git worktree (its parent's round begun at the
//! plan's approval); a report that says it changed nothing, and a
//! project outside git, are taken as before.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{
    connect, document, git, passing_architecture, passing_prd, read_json, scored, Client, Era,
    BUG_SECTIONS, SPEC_SECTIONS,
};

const DEV: &str = "# Implementation Report\n\n## Summary\nAdded the flag.\n\n## Changes\n- `src/cli.rs`: `--verbose`.\n\n## Tests\n3 passed.\n";
const DEV_NOTHING: &str = "# Implementation Report\n\n## Summary\nThe flag was there already.\n\n## Changes\nNone: the code already does it.\n\n## Tests\n3 passed.\n";
const REVIEW_FAIL: &str =
    "# Code Review\n\n## Findings\n- the flag is not documented.\n\nReview Status: Fail\n";

/// A git repository with one commit holding `src/cli.rs`.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Ada"]);
    git(dir, &["config", "user.email", "ada@example.org"]);
    std::fs::write(dir.join("src/cli.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "target/\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "the start"]);
}

pub(crate) async fn call(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

pub(crate) fn at(v: &Value, stage: &str, state: &str) {
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some(stage), Some(state)),
        "{v:#}"
    );
}

pub(crate) fn session(project: &Path, sid: &Value) -> Value {
    read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())))
}

/// A quick task at `dev` `generating` in `project`: its session id.
async fn quick_at_dev(c: &Client, project: &Path) -> Value {
    let v = c
        .ok(json!({"action": "start", "objective": "Add a --verbose flag", "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let spec = document("Technical Spec: --verbose", &SPEC_SECTIONS);
    let spec = scored("technical_spec", &spec, 92);
    call(c, &sid, json!({"action": "submit", "claude_result": spec})).await;
    let v = call(c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");
    sid
}

/// Submits `report` at `dev` and expects `nothing_changed`, with nothing recorded.
pub(crate) async fn refused_unchanged(
    c: &Client,
    project: &Path,
    sid: &Value,
    report: &str,
) -> String {
    let before = session(project, sid);
    let mut args = json!({"action": "submit", "claude_result": report});
    args["session_id"] = sid.clone();
    let e = c.refused(args, "nothing_changed").await;
    assert_eq!(session(project, sid), before, "nothing recorded");
    e["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_report_claiming_changes_nobody_made_is_refused_until_the_files_move() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    repository(&project);
    // Uncommitted work before the round began is not the round's work.
    std::fs::write(project.join("src/cli.rs"), "fn main() { /* wip */ }\n").unwrap();
    let c = connect(Era::Modern, &project).await;
    let sid = quick_at_dev(&c, &project).await;
    let began = &session(&project, &sid)["stages"]["dev"]["round_began"];
    let head = git(&project, &["rev-parse", "HEAD"]);
    assert_eq!(began["commit"], head.trim(), "{began:#}");
    assert_eq!(began["files"], 1, "the uncommitted file: {began:#}");

    let said = refused_unchanged(&c, &project, &sid, DEV).await;
    assert!(said.contains("`Changes`"), "{said}");
    assert!(said.contains(&head.trim()[..12]), "{said}");
    // Work the round does not count: an ignored build output, a file of the workflow.
    std::fs::create_dir_all(project.join("target")).unwrap();
    std::fs::write(project.join("target/out.bin"), "built").unwrap();
    refused_unchanged(&c, &project, &sid, DEV).await;
    // The work itself, committed: the diff shows it.
    std::fs::write(project.join("src/cli.rs"), "fn main() { verbose(); }\n").unwrap();
    git(&project, &["commit", "-q", "-am", "--verbose"]);
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");

    // The review sends the work back: a new round, from the files as they are now.
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_FAIL}),
    )
    .await;
    at(&v, "review", "awaiting_confirmation");
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Document the flag."}),
    )
    .await;
    at(&v, "dev", "generating");
    let round = &session(&project, &sid)["stages"]["dev"]["round_began"];
    let head = git(&project, &["rev-parse", "HEAD"]);
    assert_eq!(round["commit"], head.trim(), "{round:#}");
    refused_unchanged(&c, &project, &sid, DEV).await;
    // A new file, not added to git yet, is work the diff shows.
    std::fs::write(project.join("VERBOSE.md"), "`--verbose` prints more.\n").unwrap();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    c.close().await;
}

#[tokio::test]
async fn a_report_saying_it_changed_nothing_and_a_project_outside_git_are_taken() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    repository(&project);
    let c = connect(Era::Modern, &project).await;
    let sid = quick_at_dev(&c, &project).await;
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": DEV_NOTHING}),
    )
    .await;
    at(&v, "review", "generating");
    c.close().await;

    let plain = tempfile::tempdir().unwrap();
    let c = connect(Era::Modern, plain.path()).await;
    let sid = quick_at_dev(&c, plain.path()).await;
    assert!(session(plain.path(), &sid)["stages"]["dev"]
        .get("round_began")
        .is_none());
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    c.close().await;
}

#[tokio::test]
async fn a_fix_whose_failing_test_was_never_written_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    repository(&project);
    let c = connect(Era::Modern, &project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Fix the crash on empty input", "track": "fix", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let report = document("Bug Report: crash on empty input", &BUG_SECTIONS);
    let report = scored("bug_report", &report, 93);
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": report}),
    )
    .await;
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "dev", "generating");
    let fix = format!("{DEV}\n## Failing Test\n`empty_input` failed before the fix (`index out of bounds`), passes after it.\n");
    refused_unchanged(&c, &project, &sid, &fix).await;
    std::fs::write(
        project.join("src/cli.rs"),
        "fn main() { /* empty input */ }\n",
    )
    .unwrap();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": fix})).await;
    at(&v, "review", "generating");
    c.close().await;
}

#[tokio::test]
async fn a_story_in_its_own_worktree_begins_from_the_worktrees_files() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let main = base.join("main");
    repository(&main);
    std::fs::write(
        main.join(".gitignore"),
        "target/\n.bmad-task/.lock\n.bmad-task/task-mapping.json*\n",
    )
    .unwrap();
    let lead = connect(Era::Modern, &main).await;
    let v = lead
        .ok(json!({"action": "start", "objective": "Build a todo app", "cwd": main.to_str().unwrap()}))
        .await;
    let parent = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let plan = "# Sprint Plan\n\n## Sprint Overview\nTwo sprints.\n\n## Sprint 1: API\n- the table\n\n## Sprint 2: UI\n- the page\n";
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": plan}),
        json!({"action": "approve", "scope": "all"}),
    ] {
        call(&lead, &parent, args).await;
    }
    // The approved plan turns the parent to the developer: a round begins there too.
    let began = &session(&main, &parent)["stages"]["dev"]["round_began"];
    assert_eq!(
        began["commit"],
        git(&main, &["rev-parse", "HEAD"]).trim(),
        "{began:#}"
    );
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "the approved plan"]);
    let wt = base.join("wt1");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "-b",
            "sprint-1",
        ],
    );
    let alice = connect(Era::Modern, &wt).await;
    let s = alice
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": wt.to_str().unwrap()}))
        .await;
    at(&s, "dev", "generating");
    let sid = s["session_id"].clone();
    let began = &session(&wt, &sid)["stages"]["dev"]["round_began"];
    assert_eq!(
        began["commit"],
        git(&wt, &["rev-parse", "HEAD"]).trim(),
        "{began:#}"
    );
    // Work in the main worktree is not the story's.
    std::fs::write(main.join("src/cli.rs"), "fn main() { api(); }\n").unwrap();
    refused_unchanged(&alice, &wt, &sid, DEV).await;
    std::fs::write(wt.join("src/api.rs"), "pub fn api() {}\n").unwrap();
    let v = call(
        &alice,
        &sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    at(&v, "review", "generating");
    alice.close().await;
    lead.close().await;
}

/// The human approves `.bmad/config.toml` as it is, in a terminal.
fn approve_config(project: &Path, text: &str) {
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), text).unwrap();
    let (code, out) =
        crate::support::terminal::in_terminal(project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
}

/// Work done while the task waits for the human counts for the next submission: a fix
/// made while a failing check waits, the work after a failing review is sent back, a
/// branch merged in meanwhile. A wait with nothing done still leaves a claim refused.
#[tokio::test]
async fn work_done_while_the_task_waits_for_the_human_counts_for_the_next_submission() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    repository(&project);
    git(&project, &["checkout", "-q", "-b", "other"]);
    std::fs::write(project.join("OTHER.md"), "Another branch's work.\n").unwrap();
    git(&project, &["add", "OTHER.md"]);
    git(&project, &["commit", "-q", "-m", "other work"]);
    git(&project, &["checkout", "-q", "main"]);
    approve_config(
        &project,
        "[checks]\ntest = \"test -f fixed.txt || { echo 'fixed.txt is missing' >&2; exit 3; }\"\n",
    );
    let c = connect(Era::Modern, &project).await;
    let sid = quick_at_dev(&c, &project).await;
    std::fs::write(project.join("src/cli.rs"), "fn main() { verbose(); }\n").unwrap();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "dev", "awaiting_confirmation");
    // Sent back with nothing done while it waited: a claim of changes is refused.
    let send_back = json!({"action": "reject", "feedback": "Make the test pass."});
    at(
        &call(&c, &sid, send_back.clone()).await,
        "dev",
        "generating",
    );
    refused_unchanged(&c, &project, &sid, DEV).await;
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": DEV_NOTHING}),
    )
    .await;
    at(&v, "dev", "awaiting_confirmation");

    // The fix, made while the failing check waits for the human.
    std::fs::write(project.join("fixed.txt"), "").unwrap();
    at(&call(&c, &sid, send_back).await, "dev", "generating");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");

    // The review fails; the developer documents the flag while the human decides.
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_FAIL}),
    )
    .await;
    at(&v, "review", "awaiting_confirmation");
    std::fs::write(project.join("VERBOSE.md"), "`--verbose` prints more.\n").unwrap();
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Document the flag."}),
    )
    .await;
    at(&v, "dev", "generating");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");

    // Failing again; this time another branch is merged in while the human decides.
    call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_FAIL}),
    )
    .await;
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-q", "-m", "the flag"]);
    git(&project, &["merge", "-q", "--no-edit", "other"]);
    let v = call(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Take main in."}),
    )
    .await;
    at(&v, "dev", "generating");
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    c.close().await;
}

/// A file whose name is not UTF-8 is a file like any other: the check stays on, the file
/// unchanged is no change, and its edit is one.
#[cfg(unix)]
#[tokio::test]
async fn a_file_whose_name_is_not_utf8_keeps_the_check_on() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    repository(&project);
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(project.join(name), "latin-1\n").unwrap();
    let c = connect(Era::Modern, &project).await;
    let sid = quick_at_dev(&c, &project).await;
    let began = &session(&project, &sid)["stages"]["dev"]["round_began"];
    assert_eq!(began["files"], 1, "the file is counted: {began:#}");
    refused_unchanged(&c, &project, &sid, DEV).await;
    std::fs::write(project.join(name), "edited\n").unwrap();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    c.close().await;
}

/// The peak resident set of process `pid` so far, in KiB.
#[cfg(target_os = "linux")]
fn peak_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The proof reads within bounds: beside a link to `/dev/zero`, a link to a FIFO nobody
/// writes and a 600 MB file (sparse), the round begins and a claim of changes is refused
/// (the links and the file are the same as when it began), then the work is taken, each
/// answer within the time limit of the project's checks and with the server's peak
/// resident set under 80 MiB. Prints the figures.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_round_beside_links_to_a_device_and_a_fifo_and_a_huge_file_stays_bounded() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let project = base.join("project");
    repository(&project);
    let (transport, _) =
        rmcp::transport::TokioChildProcess::builder(crate::support::command(&project))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let pid = transport.id().expect("the server's pid");
    let service = crate::support::handshake((), Era::Modern, transport).await;
    let c = Client::from_service(service, &project);
    let v = c
        .ok(json!({"action": "start", "objective": "Add a --verbose flag", "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let spec = scored(
        "technical_spec",
        &document("Technical Spec: --verbose", &SPEC_SECTIONS),
        92,
    );
    call(&c, &sid, json!({"action": "submit", "claude_result": spec})).await;
    let at_rest = peak_kib(pid);

    std::os::unix::fs::symlink("/dev/zero", project.join("zero.bin")).unwrap();
    let fifo = base.join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    std::os::unix::fs::symlink(&fifo, project.join("pipe")).unwrap();
    let big = std::fs::File::create(project.join("big.bin")).unwrap();
    big.set_len(600 * 1000 * 1000).unwrap();
    drop(big);

    // Within the checks' default time limit (600 s) by far: a minute is generous.
    let limit = Duration::from_secs(60);
    let began = Instant::now();
    let v = tokio::time::timeout(limit, call(&c, &sid, json!({"action": "confirm"})))
        .await
        .expect("the round begins within the time limit");
    let to_begin = began.elapsed();
    at(&v, "dev", "generating");
    let refused = Instant::now();
    let mut args = json!({"action": "submit", "claude_result": DEV});
    args["session_id"] = sid.clone();
    tokio::time::timeout(limit, c.refused(args, "nothing_changed"))
        .await
        .expect("the submission answers within the time limit");
    let to_refuse = refused.elapsed();
    std::fs::write(project.join("src/cli.rs"), "fn main() { verbose(); }\n").unwrap();
    let v = tokio::time::timeout(
        limit,
        call(&c, &sid, json!({"action": "submit", "claude_result": DEV})),
    )
    .await
    .expect("the submission answers within the time limit");
    at(&v, "review", "generating");
    let peak = peak_kib(pid);
    eprintln!(
        "bounded proof: the round began in {to_begin:?}, a claim was refused in {to_refuse:?}; peak resident set {peak} KiB ({at_rest} KiB before the hazards)"
    );
    assert!(
        peak < 80 * 1024,
        "the server's peak resident set: {peak} KiB"
    );
    assert!(
        peak - at_rest < 64 * 1024,
        "{peak} KiB at the peak, {at_rest} KiB at rest"
    );
    c.close().await;
}
