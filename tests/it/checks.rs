//! Evidence, not claims, through the real binary: the project's checks, named in
//! `.bmad/config.toml` and approved by the human in a terminal, run after `dev` and before
//! QA completes; a failing one stops at the human; a long one reports progress and can be
//! cancelled; a changed file waits for the human again; a gigabyte of output stays bounded;
//! a project without checks is told how to add them.
#![cfg(unix)]

use crate::support::terminal::in_terminal;
use crate::support::user::User;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientRequest, ElicitationAction, Request};
use rmcp::service::PeerRequestOptions;
use rmcp::ServiceExt;
use serde_json::{json, Value};

use crate::support::{
    at_dev, bin, command, connect, last_entry, passing_architecture, passing_prd, read_json,
    start_args, Era,
};

const REPORT: &str = "# Implementation Report\n\n## Summary\nBuilt.";

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    (dir, project)
}

fn write_config(project: &Path, text: &str) {
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), text).unwrap();
}

/// The human approves `.bmad/config.toml` as it is, in a terminal.
fn approve_config(project: &Path) -> String {
    let (code, out) = in_terminal(project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Approved (sha256"), "{out}");
    out
}

fn submit(sid: &Value, doc: &str) -> Value {
    json!({"action": "submit", "session_id": sid, "codex_result": doc})
}

fn session_file(project: &Path, sid: &Value) -> Value {
    read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

fn notices(v: &Value) -> String {
    v["notices"]
        .as_array()
        .map(|n| {
            n.iter()
                .map(|s| s.as_str().unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn git(project: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(project)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[tokio::test]
async fn a_passing_check_is_run_recorded_cited_to_qa_and_run_again_before_qa_completes() {
    let (_dir, project) = project();
    let has_git = git(&project, &["init", "-q"]).is_some()
        && git(&project, &["commit", "-q", "--allow-empty", "-m", "start"]).is_some();
    write_config(
        &project,
        "[checks]\ntest = \"echo all 12 tests passed; echo run >> runs.txt\"\n",
    );
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("review"), &json!("generating")),
        "{v:#}"
    );
    let check = &v["checks"]["checks"][0];
    assert_eq!(check["name"], "test");
    assert_eq!(check["outcome"], "passed");
    assert_eq!(check["exit_code"], 0);
    assert_eq!(check["tail"], "all 12 tests passed\n");
    assert_eq!(check["output_sha256"], sha256_hex(b"all 12 tests passed\n"));
    let kept = project.join(check["output"]["file_path"].as_str().unwrap());
    assert_eq!(check["output"]["summary"], "all 12 tests passed");
    assert_eq!(
        std::fs::read_to_string(kept).unwrap(),
        "all 12 tests passed\n"
    );
    assert!(notices(&v).contains("`test` passed"), "{v:#}");
    if has_git {
        let head = git(&project, &["rev-parse", "HEAD"]).unwrap();
        assert_eq!(v["checks"]["git"]["commit"], head.as_str());
        // Only the workflow's own files (.bmad/, .bmad-task/, .claude/) are uncommitted
        // when the run starts: they do not make the project dirty.
        assert_eq!(v["checks"]["git"]["dirty"], false, "{v:#}");
    }
    // The reply, `checks` included, is what the reply's schema declares.
    let schema = bmad_mcp::server::reply_schema();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .unwrap();
    let problems: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}");
    let s = session_file(&project, &sid);
    assert_eq!(
        s["stages"]["dev"]["checks"], v["checks"],
        "recorded as replied"
    );
    assert_eq!(
        s["stages"]["dev"]["checks"]["config_sha256"],
        sha256_hex(&std::fs::read(project.join(".bmad/config.toml")).unwrap())
    );

    let v = c
        .ok(submit(&sid, "# Code Review\n\nReview Status: Pass"))
        .await;
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("- passed: `test`\n(run by the server on commit "),
        "the QA prompt cites the checks: {prompt}"
    );
    let v = c
        .ok(submit(
            &sid,
            "# QA Report\n\nAll good.\n\nIntent: met\nQuality Score: 95/100",
        ))
        .await;
    assert_eq!(v["state"], "completed", "{v:#}");
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .contains("Checks: all 1 passed."),
        "{v:#}"
    );
    if has_git {
        // The first run wrote runs.txt, a project file nobody committed.
        assert_eq!(v["checks"]["git"]["dirty"], true, "{v:#}");
    }
    assert_eq!(
        std::fs::read_to_string(project.join("runs.txt")).unwrap(),
        "run\nrun\n",
        "the checks ran after dev and again before QA completed"
    );
    c.close().await;
}

#[tokio::test]
async fn a_failing_check_keeps_the_work_in_dev_until_the_human_accepts_it() {
    let (_dir, project) = project();
    write_config(
        &project,
        "[checks]\ntest = \"test -f fixed.txt || { echo 'fixed.txt is missing' >&2; exit 3; }\"\n",
    );
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    let task = session_file(&project, &sid)["task_name"]
        .as_str()
        .unwrap()
        .to_string();
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("dev"), &json!("awaiting_confirmation")),
        "{v:#}"
    );
    assert_eq!(v["pending_user_actions"], json!(["confirm", "reject"]));
    let check = &v["checks"]["checks"][0];
    assert_eq!(
        (&check["outcome"], &check["exit_code"]),
        (&json!("failed"), &json!(3))
    );
    assert_eq!(check["tail"], "fixed.txt is missing\n", "stderr is kept");
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.contains("does not pass: check `test` failed (exit 3)")
            && message.contains(&format!("bmad-mcp confirm {task}")),
        "{message}"
    );
    assert!(
        v["next_step"]
            .as_str()
            .unwrap()
            .contains("never decide for them"),
        "{v:#}"
    );

    // The host's word does not accept a failing check, even under `gates = "auto"`.
    let e = c
        .refused(
            json!({"action": "confirm", "session_id": sid}),
            "human_required",
        )
        .await;
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("check `test` failed (exit 3)"),
        "{e:#}"
    );
    // Sent back with the human's words: development again; the fixed work passes.
    let v = c
        .ok(json!({"action": "reject", "session_id": sid, "feedback": "Make the test pass."}))
        .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("dev"), &json!("generating"))
    );
    assert!(
        v["role_prompt"]
            .as_str()
            .unwrap()
            .contains("check `test` failed (exit 3)"),
        "the developer sees the checks"
    );
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(v["state"], "awaiting_confirmation");
    // The human accepts the failure in a terminal.
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("check `test` failed (exit 3)"), "{out}");
    let s = session_file(&project, &sid);
    assert_eq!(s["current_stage"], "review");
    assert_eq!(s["stages"]["dev"]["accepted_risk"], true);
    let status = bin(&project).args(["status", &task]).output().unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("checks of dev, run ") && status.contains("check `test` failed (exit 3)"),
        "{status}"
    );
    let last = last_entry(&s);
    assert_eq!(
        (&last["action"], &last["decided_by"], &last["via"]),
        (&json!("confirm"), &json!("human"), &json!("cli"))
    );

    // QA cannot complete on its own score while the check fails; with the work fixed it does.
    c.ok(submit(&sid, "# Code Review\n\nReview Status: Pass"))
        .await;
    let v = c
        .ok(submit(
            &sid,
            "# QA Report\n\nIntent: met\nQuality Score: 95/100",
        ))
        .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("qa"), &json!("awaiting_confirmation")),
        "{v:#}"
    );
    std::fs::write(project.join("fixed.txt"), "").unwrap();
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Fix it."}))
        .await;
    for doc in [REPORT, "# Code Review\n\nReview Status: Pass"] {
        c.ok(submit(&sid, doc)).await;
    }
    let v = c
        .ok(submit(
            &sid,
            "# QA Report\n\nIntent: met\nQuality Score: 95/100",
        ))
        .await;
    assert_eq!(v["state"], "completed", "{v:#}");
    c.close().await;
}

#[tokio::test]
async fn a_check_past_its_time_limit_is_killed_with_everything_it_started() {
    let (_dir, project) = project();
    write_config(
        &project,
        "[checks.slow]\ncommand = \"sleep 120 & echo $! > sleeper.pid; echo started; wait\"\ntimeout_secs = 1\n",
    );
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    let started = Instant::now();
    let v = c.ok(submit(&sid, REPORT)).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the timeout ended it"
    );
    let check = &v["checks"]["checks"][0];
    assert_eq!(check["outcome"], "timed_out", "{v:#}");
    assert_eq!(check["signal"], 9);
    assert!(check["duration_ms"].as_u64().unwrap() >= 1000);
    assert_eq!(check["tail"], "started\n");
    assert_eq!(v["state"], "awaiting_confirmation");
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .contains("check `slow` timed out after"),
        "{v:#}"
    );
    assert_gone(&project.join("sleeper.pid"));
    c.close().await;
}

/// The process whose pid the file holds has ended (its group was killed).
fn assert_gone(pid_file: &Path) {
    let pid = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.contains(") Z "))
            .unwrap_or(false);
        if !alive {
            return;
        }
        assert!(Instant::now() < deadline, "process {pid} still runs");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn a_long_check_reports_progress_and_a_cancelled_call_kills_it_and_records_it() {
    let (_dir, project) = project();
    write_config(
        &project,
        "[checks]\nslow = \"echo $$ > shell.pid; sleep 120 & echo $! > sleeper.pid; wait\"\n",
    );
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    c.close().await;

    let host = User::default();
    let service = host
        .connect(
            rmcp::transport::TokioChildProcess::new(command(&project)).unwrap(),
            Era::Legacy,
        )
        .await;
    let Value::Object(args) = submit(&sid, REPORT) else {
        unreachable!()
    };
    let call = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("bmad-task").with_arguments(args),
    ));
    let handle = service
        .peer()
        .send_cancellable_request(call, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    // Wait for the check to run and to report at least twice.
    let deadline = Instant::now() + Duration::from_secs(30);
    while host.progress.lock().unwrap().len() < 2 || !project.join("sleeper.pid").exists() {
        assert!(Instant::now() < deadline, "no progress reported");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    {
        let seen = host.progress.lock().unwrap();
        assert!(seen.iter().all(|p| p.progress_token == token));
        assert!(seen.windows(2).all(|w| w[1].progress > w[0].progress));
        let message = seen[0].message.as_deref().unwrap();
        assert!(
            message.starts_with("check `slow` (1 of 1) running for"),
            "{message}"
        );
    }
    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();

    // The submission is recorded with the check cancelled, and its processes are gone.
    let file = project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let s = loop {
        let s = read_json(&file);
        if s["stages"]["dev"]["checks"].is_object() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the cancelled run was not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let check = &s["stages"]["dev"]["checks"]["checks"][0];
    assert_eq!(check["outcome"], "cancelled", "{s:#}");
    assert_eq!(s["current_state"], "awaiting_confirmation");
    assert_gone(&project.join("sleeper.pid"));
    assert_gone(&project.join("shell.pid"));
    // The server serves on.
    let Value::Object(args) = json!({"action": "status", "session_id": sid}) else {
        unreachable!()
    };
    let status = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(status.is_error, Some(false));
    let _ = service.cancel().await;
}

#[tokio::test]
async fn a_changed_config_waits_for_the_human_and_the_approved_one_stands() {
    let (_dir, project) = project();
    write_config(&project, "gates = \"human\"\n[checks]\ntest = \"true\"\n");
    // Not approved yet: no check runs, and the stricter gates apply at once.
    let c = connect(Era::Legacy, &project).await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    c.refused(
        json!({"action": "confirm", "session_id": sid}),
        "human_required",
    )
    .await;
    // Approving needs a terminal.
    let out = bin(&project)
        .args(["config", "approve"])
        .stdin(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let shown = approve_config(&project);
    assert!(
        shown.contains("check test = `true`") && shown.contains("check `test` added: `true`"),
        "{shown}"
    );
    let approved = read_json(&project.join(".bmad-task/config-approved.json"));
    let text = std::fs::read_to_string(project.join(".bmad/config.toml")).unwrap();
    assert_eq!(
        (
            &approved["text"],
            &approved["sha256"],
            &approved["decided_by"],
            &approved["via"]
        ),
        (
            &json!(text),
            &json!(sha256_hex(text.as_bytes())),
            &json!("human"),
            &json!("cli")
        )
    );

    // The assistant relaxes the gates and changes the check: both wait for the human.
    write_config(&project, "gates = \"auto\"\n[checks]\ntest = \"false\"\n");
    c.refused(
        json!({"action": "confirm", "session_id": sid}),
        "human_required",
    )
    .await;
    let show = bin(&project).args(["config", "show"]).output().unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.contains("gates relaxed from `human` to `auto`")
            && show.contains("check `test` changed: `false` (was `true`)")
            && show.contains("In effect: gates = \"human\""),
        "{show}"
    );
    c.close().await;

    // The human approves a version of their own; the assistant changes it again: the
    // approved `false` runs at dev, not the file's `true`.
    write_config(&project, "[checks]\ntest = \"false\"\n");
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    c.ok(json!({"action": "confirm", "session_id": sid})).await;
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_architecture()}))
        .await;
    c.ok(json!({"action": "confirm", "session_id": sid})).await;
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": "# Plan\n## Sprint 1: All\n- it\n"}))
        .await;
    c.ok(json!({"action": "approve", "session_id": sid})).await;
    write_config(&project, "[checks]\ntest = \"true\"\n");
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(v["checks"]["checks"][0]["command"], "false", "{v:#}");
    assert_eq!(v["state"], "awaiting_confirmation");
    let n = notices(&v);
    assert!(
        n.contains("waits for the human's approval")
            && n.contains("check `test` changed: `true` (was `false`)")
            && n.contains("bmad-mcp config approve"),
        "{n}"
    );
    c.close().await;
}

#[tokio::test]
async fn a_check_that_prints_a_gigabyte_stays_bounded_in_memory_on_disk_and_in_the_reply() {
    let (_dir, project) = project();
    write_config(&project, "[checks]\nbig = \"yes | head -c 1000000000\"\n");
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    c.close().await;

    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command(&project))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().expect("the server's pid");
    let service = ().serve(transport).await.unwrap();
    let Value::Object(args) = submit(&sid, REPORT) else {
        unreachable!()
    };
    let result = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(args))
        .await
        .unwrap();
    let peak_kib: u64 = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    let _ = service.cancel().await;
    let v = result.structured_content.unwrap();
    crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
    let reply_bytes = v.to_string().len();
    assert!(reply_bytes < 64 * 1024, "reply of {reply_bytes} bytes");
    let check = &v["checks"]["checks"][0];
    assert_eq!(check["outcome"], "passed", "{v:#}");
    assert_eq!(check["output_bytes"], 1_000_000_000u64);
    assert!(check["tail"].as_str().unwrap().len() <= 2048);
    let kept = std::fs::metadata(project.join(check["output"]["file_path"].as_str().unwrap()))
        .unwrap()
        .len();
    assert_eq!(check["output"]["size"], kept);
    assert!(kept <= 1024 * 1024 + 200, "kept {kept} bytes");
    assert!(
        peak_kib < 128 * 1024,
        "the server's peak memory was {peak_kib} KiB"
    );
    // The digest covers every byte printed: "y\n" five hundred million times.
    use sha2::Digest;
    let mut sha = sha2::Sha256::new();
    let block = b"y\n".repeat(500_000);
    for _ in 0..1000 {
        sha.update(&block);
    }
    assert_eq!(check["output_sha256"], format!("{:x}", sha.finalize()));
}

#[tokio::test]
async fn a_project_without_checks_is_told_how_to_add_them() {
    let (_dir, project) = project();
    let c = connect(Era::Modern, &project).await;
    let sid = at_dev(&c, &project).await;
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("review"), &json!("generating"))
    );
    assert!(v.get("checks").is_none());
    let n = notices(&v);
    assert!(
        n.contains("No checks are configured")
            && n.contains("[checks]\ntest = \"<the command that runs your tests>\"")
            && n.contains("bmad-mcp config approve"),
        "{n}"
    );
    let s = session_file(&project, &sid);
    assert!(s["stages"]["dev"].get("checks").is_none());
    let note = last_entry(&s)["note"].as_str().unwrap_or("").to_string();
    assert!(
        !note.contains("No checks"),
        "the advice is the reply's, not the history's: {note}"
    );
    c.close().await;
}

#[tokio::test]
async fn the_human_accepts_a_failing_check_in_the_clients_dialog() {
    let (_dir, project) = project();
    write_config(&project, "[checks]\ntest = \"echo 2 failed; exit 1\"\n");
    approve_config(&project);
    let c = connect(Era::Legacy, &project).await;
    let sid = at_dev(&c, &project).await;
    let v = c.ok(submit(&sid, REPORT)).await;
    assert_eq!(v["state"], "awaiting_confirmation");
    c.close().await;

    // A 2026-07-28 client: the form comes back as an input-required result.
    let host = User::default();
    host.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
    let service = host
        .connect(
            rmcp::transport::TokioChildProcess::new(command(&project)).unwrap(),
            Era::Modern,
        )
        .await;
    let Value::Object(args) = json!({"action": "confirm", "session_id": sid}) else {
        unreachable!()
    };
    let r = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(args))
        .await
        .unwrap();
    let v = r.structured_content.unwrap();
    crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
    assert_eq!(v["stage"], "review", "{v:#}");
    let shown = host.shown.lock().unwrap().clone();
    assert!(
        shown.len() == 1 && shown[0].contains("does not pass (check `test` failed (exit 1))"),
        "{shown:?}"
    );
    let s = session_file(&project, &sid);
    let last = last_entry(&s);
    assert_eq!(
        (&last["decided_by"], &last["via"]),
        (&json!("human"), &json!("elicitation"))
    );
    assert_eq!(s["stages"]["dev"]["accepted_risk"], true);
    let _ = service.cancel().await;
}

#[tokio::test]
async fn checks_run_outside_the_lock_and_a_submission_the_session_moved_past_is_not_recorded() {
    let (_dir, project) = project();
    write_config(&project, "[checks]\ntest = \"sleep 2\"\n");
    approve_config(&project);
    let a = connect(Era::Legacy, &project).await;
    let sid = at_dev(&a, &project).await;
    let b = connect(Era::Legacy, &project).await;
    // Two windows submit the work at once: both run the checks, one is recorded.
    let started = Instant::now();
    let status = async {
        // While the checks run, the project lock is free: a change elsewhere goes through.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let t = Instant::now();
        b.ok(start_args(&project, "Another task")).await;
        t.elapsed()
    };
    let (ra, rb, waited) = tokio::join!(
        a.call(submit(&sid, REPORT)),
        b.call(submit(&sid, REPORT)),
        status
    );
    assert!(
        waited < Duration::from_secs(1),
        "a start waited {waited:?} for the checks"
    );
    assert!(started.elapsed() >= Duration::from_secs(2));
    let (ok, refused) = match (ra, rb) {
        ((false, ok), (true, refused)) | ((true, refused), (false, ok)) => (ok, refused),
        other => panic!("one submission is recorded, one refused: {other:#?}"),
    };
    assert_eq!(ok["stage"], "review", "{ok:#}");
    assert_eq!(refused["error"]["code"], "invalid_state");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("moved on while the checks ran"),
        "{message}"
    );
    let s = session_file(&project, &sid);
    let submits = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["action"] == "submit" && h["stage"] == "dev")
        .count();
    assert_eq!(submits, 1);
    a.close().await;
    b.close().await;
}

/// The human's approval of the checks holds for every worktree of the clone (a story's
/// worktree runs what was approved in the main one), and stays out of git.
#[tokio::test]
async fn the_checks_approved_in_one_worktree_run_in_another_of_the_clone() {
    let (_dir, root) = project();
    let main = root.join("main");
    std::fs::create_dir(&main).unwrap();
    assert!(git(&main, &["init", "-q", "-b", "main"]).is_some());
    write_config(&main, "[checks]\ntest = \"echo checked >> ran.txt\"\n");
    std::fs::write(main.join(".gitignore"), "ran.txt\n.bmad-task/\n").unwrap();
    git(&main, &["add", "-A"]).unwrap();
    git(&main, &["commit", "-q", "-m", "config"]).unwrap();
    approve_config(&main);
    assert_eq!(
        git(&main, &["status", "--porcelain"]).unwrap(),
        "",
        "nothing to commit"
    );
    let other = root.join("other");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "other",
            other.to_str().unwrap(),
        ],
    )
    .unwrap();

    let c = connect(Era::Legacy, &other).await;
    let sid = at_dev(&c, &other).await;
    let v = c.ok(submit(&sid, REPORT)).await;
    assert!(notices(&v).contains("`test` passed"), "{v:#}");
    assert_eq!(
        std::fs::read_to_string(other.join("ran.txt")).unwrap(),
        "checked\n"
    );
    c.close().await;
}
