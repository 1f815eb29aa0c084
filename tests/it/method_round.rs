//! The files the server writes for the BMAD method are no one's change, in a git repository
//! where the pinned `bmad-method` is installed by its own installer and `bmad-mcp init` was
//! run: its sprint status, its epics and the copies it keeps for the method's skills do not
//! make a development report that claims changes nobody made pass (as a parent, as a story
//! in its own worktree, on the quick and fix tracks), the deferred-work ledger it appends to
//! is not drift, and a task finished uncommitted then committed unchanged (new files among
//! its work) reports no drift.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::empty_diff::{at, call, refused_unchanged};
use crate::method_plan::{approved, DEV as DEV_PLAIN, QA, REVIEW};
use crate::support::method::{install, installer};
use crate::support::{
    bin, connect, document, git, scored, Client, Era, BUG_SECTIONS, SPEC_SECTIONS,
};
use crate::team_git::commit_all;

/// A report whose `Changes` section claims a file changed.
const DEV: &str = "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Changes\n- `src/todo.rs`: the todos table.\n\n## Tests\n9 passed.\n";

/// `git status --porcelain` of the project's own files (the workflow's folders left out).
fn status(dir: &Path) -> String {
    git(
        dir,
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--",
            ".",
            ":(exclude).bmad-task",
            ":(exclude).claude",
            ":(exclude).bmad",
        ],
    )
}

/// A git repository in `dir/proj` with the method installed for Claude Code by its own
/// installer, `bmad-mcp init` run, and everything committed.
pub(crate) fn project_with_the_method(installer: &Path, dir: &Path) -> PathBuf {
    let project = dir.join("proj");
    install(installer, &project, "claude-code");
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["config", "user.name", "Ada"]);
    git(&project, &["config", "user.email", "ada@example.org"]);
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "pub mod todo;\n").unwrap();
    let init = bin(&project).arg("init").output().unwrap();
    assert!(init.status.success(), "{init:?}");
    commit_all(&project, "the project, the method, bmad-mcp init");
    project
}

/// The parent's and a story's first round, with the method's files the server wrote just
/// before: a claim of changes is refused in each, and real work is taken.
async fn a_parent_and_its_story(project: &Path, base: &Path) {
    let c = connect(Era::Modern, project).await;
    let (sid, task, v) = approved(&c, project).await;
    at(&v, "dev", "generating");
    let written = status(project);
    for file in [
        "sprint-status.yaml",
        &format!("epics-{task}.md"),
        &format!("prd-{task}.md"),
    ] {
        assert!(written.contains(file), "the server wrote {file}: {written}");
    }
    assert!(
        v.get("drift").is_none(),
        "the server's files are no drift: {v:#}"
    );
    refused_unchanged(&c, project, &sid, DEV).await;

    commit_all(project, "the approved plan");
    let wt = base.join("wt1");
    let path = wt.to_str().unwrap();
    git(project, &["worktree", "add", "-q", path, "-b", "sprint-1"]);
    let story = connect(Era::Modern, &wt).await;
    let v = story
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": path}))
        .await;
    at(&v, "dev", "generating");
    let story_id = v["session_id"].clone();
    // The approval put the sprint `in-progress` already: the story's start moves nothing.
    let moved = status(&wt);
    assert!(
        !moved.contains("sprint-status.yaml"),
        "the story's status: {moved}"
    );
    refused_unchanged(&story, &wt, &story_id, DEV).await;
    std::fs::write(wt.join("src/todo.rs"), "pub struct Todo;\n").unwrap();
    let v = call(
        &story,
        &story_id,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    at(&v, "review", "generating");
    story.close().await;
    c.close().await;
}

/// The quick and fix tracks' first rounds in the same project.
async fn the_quick_and_fix_tracks(project: &Path) {
    let c = connect(Era::Modern, project).await;
    let fix =
        format!("{DEV}\n## Failing Test\n`empty_list` failed before the fix, passes after it.\n");
    for (track, stage, sections, report) in [
        ("quick", "technical_spec", &SPEC_SECTIONS, DEV.to_string()),
        ("fix", "bug_report", &BUG_SECTIONS, fix),
    ] {
        let v = c
            .ok(json!({"action": "start", "objective": format!("A {track} change"), "track": track, "cwd": project.to_str().unwrap()}))
            .await;
        let sid = v["session_id"].clone();
        let doc = scored(stage, &document("The change", sections), 93);
        call(&c, &sid, json!({"action": "submit", "claude_result": doc})).await;
        at(
            &call(&c, &sid, json!({"action": "confirm"})).await,
            "dev",
            "generating",
        );
        refused_unchanged(&c, project, &sid, &report).await;
    }
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_first_round_claiming_changes_no_file_shows_is_refused_on_every_track_with_the_method() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let project = project_with_the_method(&installer, &base);
    a_parent_and_its_story(&project, &base).await;
    the_quick_and_fix_tracks(&project).await;
}

/// The drift a `status` of `sid` reports, `null` for none.
async fn drift(c: &Client, sid: &Value) -> Value {
    let v = call(c, sid, json!({"action": "status"})).await;
    v.get("drift").cloned().unwrap_or(Value::Null)
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_task_finished_uncommitted_then_committed_unchanged_reports_no_drift() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let project = project_with_the_method(&installer, &base);
    let c = connect(Era::Modern, &project).await;
    let (sid, _, v) = approved(&c, &project).await;
    at(&v, "dev", "generating");
    // The work: a file changed, two new ones, none of them committed.
    std::fs::write(
        project.join("src/lib.rs"),
        "pub mod todo;\npub mod share;\n",
    )
    .unwrap();
    std::fs::write(project.join("src/todo.rs"), "pub struct Todo;\n").unwrap();
    std::fs::write(project.join("src/share.rs"), "pub fn share() {}\n").unwrap();
    for doc in [DEV_PLAIN, REVIEW] {
        call(&c, &sid, json!({"action": "submit", "claude_result": doc})).await;
    }
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": QA})).await;
    at(&v, "qa", "completed");
    assert_eq!(drift(&c, &sid).await, Value::Null, "finished, uncommitted");
    let work = status(&project);
    commit_all(&project, "the todo app");
    assert!(status(&project).is_empty());
    assert_eq!(
        drift(&c, &sid).await,
        Value::Null,
        "committed unchanged; the commit held:\n{work}"
    );
    c.close().await;
}

/// A failing review in layers, with one finding.
const REVIEW_FAIL: &str = "# Code Review\n\n## Findings\n- major, `src/lib.rs`: no test for an empty list.\n\n## Edge Cases\nNo findings.\n\n## Verification Gaps\nNo findings.\n\n## Blind Pass\nNo findings.\n\n## Acceptance Audit\nNo findings.\n\nReview Status: Fail\n";

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn the_deferred_work_ledger_the_server_appends_to_is_not_drift() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let project = project_with_the_method(&installer, &base);
    // The ledger as the method's own build left it, committed.
    let ledger = project.join("_bmad-output/implementation-artifacts/deferred-work.md");
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    std::fs::write(&ledger, "# Deferred Work\n\n- source_spec: `spec-login.md`\n  summary: Rate-limit the login form.\n").unwrap();
    commit_all(&project, "the method's ledger");
    let c = connect(Era::Modern, &project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "List the todos", "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let spec = scored("technical_spec", &document("The list", &SPEC_SECTIONS), 93);
    call(&c, &sid, json!({"action": "submit", "claude_result": spec})).await;
    call(&c, &sid, json!({"action": "confirm"})).await;
    std::fs::write(project.join("src/todo.rs"), "pub fn list() {}\n").unwrap();
    call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": REVIEW_FAIL}),
    )
    .await;
    at(&v, "review", "awaiting_confirmation");
    // The risk accepted: the finding goes to the method's ledger, and the task completes.
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    at(&v, "review", "completed");
    assert!(
        status(&project).contains("deferred-work.md"),
        "the ledger was appended to"
    );
    assert_eq!(drift(&c, &sid).await, Value::Null);
    c.close().await;
}
