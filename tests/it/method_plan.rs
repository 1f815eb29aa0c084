//! The plan shared with the BMAD method, in real installs of the pinned `bmad-method`
//! (claude-code and codex): an approved sprint plan becomes the method's epic and its
//! stories land in `sprint-status.yaml`, which the method's own `sprint_plan.py` (run with
//! the pinned `ruamel.yaml`) finds valid and in step with the epics file the server wrote
//! (beside, never over, a team's file of that name; every line of a team's status file kept);
//! a story's status follows it through development, review and completion; two clones
//! that moved different stories merge in git without a conflict through the merge driver
//! `bmad-mcp init` installs; a story marked `done` by hand while its session is not
//! completed is shown on the parent as done outside the server's gates.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::method::{install, installer, template, written_in};
use crate::support::{
    bin, command, connect, connect_with, git, passing_architecture, read_json, Client, Era, ROOT,
};
use crate::team_git::{clone_as, commit_all};

pub(crate) const PLAN: &str = "# Sprint Plan: Team todo\n\n## Sprint Overview\nTwo sprints.\n\n## Sprint 1: Todos API\nCovers: FR-1\n- Task: the todos table (3 points)\n- Definition of done: the API tests pass\n\n## Sprint 2: List page & sharing!\nCovers: FR-2\n- Task: the list page (5 points)\n- Definition of done: the page lists the todos\n\n## Risks\n- None known.\n";
pub(crate) const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";
pub(crate) const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\n## Edge Cases\nNo findings.\n\n## Verification Gaps\nNo findings.\n\n## Blind Pass\nNo findings.\n\n## Acceptance Audit\nNo findings.\n\nReview Status: Pass\n";
pub(crate) const QA: &str = "# QA Report\n\n## Results\n30 passed.\n- FR-1: pass — test_add\n- FR-2: pass — test_share\n- AC-1: pass — test_add_shows\n- NFR-1: pass — bench_p95\n\nIntent: met\nQuality Score: 93/100\n";

/// A PRD that passes the gate, with requirement ids and an acceptance criterion.
fn prd() -> String {
    json!({"prd_draft": PRD_DOC, "quality_score": 95}).to_string()
}

/// The PRD's text, the plan's requirement ids and acceptance criterion in it.
const PRD_DOC: &str = "# PRD: Team todo\n\n## Executive Summary\nA shared todo list.\n\n## Business Goals\n- Teams track work in one place.\n\n## User Stories\n- As a member I add a todo.\n- AC-1 (FR-1): Given a list, when I add a todo, then it shows.\n\n## Functional Requirements\n- FR-1: Add a todo.\n- FR-2: Share a list.\n\n## Technical Requirements\n- NFR-1: p95 under 200 ms.\n\n## Success Metrics\n- p95 under 200 ms.\n";

pub(crate) async fn step(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn notices(v: &Value) -> String {
    v["notices"].to_string()
}

/// The install's folder setting `key`, relative to the project.
pub(crate) fn folder(project: &Path, key: &str) -> String {
    let config = std::fs::read_to_string(project.join("_bmad/bmm/config.yaml")).unwrap();
    config
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("{key} in the install's config"))
        .trim_matches('"')
        .replace("{project-root}/", "")
}

/// Runs the method's own `sprint_plan.py`, as installed for the tool (in `skills`), with
/// the pinned `ruamel.yaml`: its JSON answer.
pub(crate) fn sprint_plan(project: &Path, skills: &str, args: &[&str]) -> Value {
    let python = PathBuf::from(ROOT).join("target/py-venv/bin/python");
    let script = project
        .join(skills)
        .join("bmad-sprint-planning/scripts/sprint_plan.py");
    assert!(script.exists(), "{} is installed", script.display());
    let out = Command::new(&python)
        .arg(&script)
        .args(args)
        .current_dir(project)
        .output()
        .expect("the venv's python runs (./scripts/test makes it)");
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// Takes a task in `project` to its approved two-sprint plan: its session id, task name
/// and the approval's reply.
pub(crate) async fn approved(c: &Client, project: &Path) -> (Value, String, Value) {
    let v = c
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "submit", "claude_result": prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
    ] {
        step(c, &sid, args).await;
    }
    let v = step(c, &sid, json!({"action": "approve", "scope": "all"})).await;
    (sid, task, v)
}

/// What the team had in the method's files before the task: an epic of its own, with a
/// comment and a retrospective's action item.
const THEIR_EPICS: &str = "# Shop - Breakdown\n\n## Epic 1: Shop\n\nThe shop.\n\n### Story 1.1: Cart\n\nAs a buyer,\nI want a cart,\nSo that I can pay.\n";
const THEIR_STATUS: &str = "# The team's own note, kept\ngenerated: 11-01-2026 09:00\nlast_updated: 11-02-2026 09:00\nproject: proj\nproject_key: NOKEY\ntracking_system: file-system\nstory_location: _bmad-output/implementation-artifacts\nteam_extra: kept too\n\ndevelopment_status:\n  epic-1: in-progress\n  1-1-cart: done  # shipped in October\n  epic-1-retrospective: optional\n\n# Action items committed during retrospectives\naction_items:\n  - epic: 1\n    action: write the cart's tests first\n    owner: Ada\n    status: open\n";

/// A file the team wrote under the name the server's epics file would take.
const OUR_NAME: &str = "epics-build-a-team-todo-app.md";
const OUR_NOTES: &str = "# Our notes on the plan\n\nNothing here for the method's parser.\n";

/// One tool's install for the plan test: the method's folders in it, and whether the team
/// had its own epics and status files there before the task.
struct Install<'a> {
    tool: &'a str,
    skills: &'a str,
    theirs: bool,
    project: PathBuf,
    planning: String,
    implementation: String,
    status: String,
}

/// The method installed for `tool` in `dir`, with the team's files placed: their epics and
/// status files (`theirs`), or else their own file under the name the server's epics file
/// would take.
fn installed_with_the_teams_files<'a>(
    installer: &Path,
    dir: &Path,
    (tool, skills, theirs): (&'a str, &'a str, bool),
) -> Install<'a> {
    let project = dir.join("proj");
    install(installer, &project, tool);
    let planning = folder(&project, "planning_artifacts");
    let implementation = folder(&project, "implementation_artifacts");
    let status = format!("{implementation}/sprint-status.yaml");
    if theirs {
        std::fs::create_dir_all(project.join(&planning)).unwrap();
        std::fs::create_dir_all(project.join(&implementation)).unwrap();
        std::fs::write(project.join(&planning).join("epics.md"), THEIR_EPICS).unwrap();
        std::fs::write(project.join(&status), THEIR_STATUS).unwrap();
    } else {
        // A file of the name the server would write, the team's own: never replaced.
        std::fs::create_dir_all(project.join(&planning)).unwrap();
        std::fs::write(project.join(&planning).join(OUR_NAME), OUR_NOTES).unwrap();
    }
    Install {
        tool,
        skills,
        theirs,
        project,
        planning,
        implementation,
        status,
    }
}

/// The epics file the approval wrote for `task`: the usual name beside the team's epics,
/// or, where the team's own file took that name, a name of the server's, the team's file
/// left as it was and the approval saying so.
fn epics_file_written(at: &Install, task: &str, said: &str) -> String {
    let (tool, planning) = (at.tool, &at.planning);
    if at.theirs {
        format!("{planning}/epics-{task}.md")
    } else {
        assert_eq!(format!("epics-{task}.md"), OUR_NAME);
        let kept = std::fs::read_to_string(at.project.join(planning).join(OUR_NAME)).unwrap();
        assert_eq!(kept, OUR_NOTES, "{tool}: the team's file is left as it is");
        let left = format!(
            "{planning}/{OUR_NAME} is not an epics file the server wrote, so it was left as it is."
        );
        assert!(said.contains(&left), "{tool}: {said}");
        format!("{planning}/epics-{task}-bmad-mcp.md")
    }
}

/// The method's `sprint_plan.py` finds the status file valid, and a dry run of `generate`
/// over every epics file finds it in step with them: no drift, warning, new or dropped entry.
fn the_methods_script_finds_it_in_step(at: &Install, epics: &str) {
    let (tool, project, status) = (at.tool, &at.project, &at.status);
    let valid = sprint_plan(project, at.skills, &["validate", "--status-file", status]);
    assert_eq!(valid["valid"], true, "{tool}: {valid}");
    let mut args = vec![
        "generate",
        "--status-file",
        status,
        "--stories-dir",
        &at.implementation,
    ];
    args.extend([
        "--project",
        "proj",
        "--date",
        "11-27-2026 23:00",
        "--dry-run",
    ]);
    let their_epics = format!("{}/epics.md", at.planning);
    if at.theirs {
        args.extend(["--epic-file", &their_epics]);
    }
    args.extend(["--epic-file", epics]);
    let dry = sprint_plan(project, at.skills, &args);
    assert_eq!(dry["ok"], true, "{tool}: {dry}");
    assert_eq!(dry["in_sync"], true, "{tool}: no drift: {dry}");
    assert_eq!(dry["warnings"], json!([]), "{tool}: {dry}");
    assert_eq!(
        dry["stories"],
        if at.theirs { 3 } else { 2 },
        "{tool}: {dry}"
    );
    assert_eq!(dry["new_entries"], json!([]), "{tool}: {dry}");
    assert_eq!(dry["dropped_orphans"], json!([]), "{tool}: {dry}");
}

/// The status file lists the epic and its two stories at work (the approved task is at
/// development) and its optional retrospective, and keeps every line the team's file had.
fn the_status_file_lists_the_epic(at: &Install, epic: u64) {
    let tool = at.tool;
    let text = std::fs::read_to_string(at.project.join(&at.status)).unwrap();
    for key in [
        format!("  epic-{epic}: in-progress\n"),
        format!("  {epic}-1-todos-api: in-progress\n"),
        format!("  {epic}-2-list-page-sharing: in-progress\n"),
        format!("  epic-{epic}-retrospective: optional\n"),
    ] {
        assert!(text.contains(&key), "{tool}: {key:?} in\n{text}");
    }
    if at.theirs {
        // Everything that was there stays, but the time of the last update.
        for line in THEIR_STATUS
            .lines()
            .filter(|l| !l.starts_with("last_updated"))
        {
            assert!(text.contains(line), "{tool}: {line:?} kept in\n{text}");
        }
    }
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn an_approved_plan_is_the_methods_epic_valid_and_in_step_for_its_own_script() {
    let Some(installer) = installer() else { return };
    for case in [
        ("claude-code", ".claude/skills", true),
        ("codex", ".agents/skills", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let at = installed_with_the_teams_files(&installer, dir.path(), case);
        let (tool, project) = (at.tool, &at.project);
        let c = connect(Era::Modern, project).await;
        let (sid, task, v) = approved(&c, project).await;
        let epic = if at.theirs { 2 } else { 1 };
        let said = notices(&v);
        let epics = epics_file_written(&at, &task, &said);
        assert!(
            said.contains(&format!("epic {epic} in {epics}")),
            "{tool}: {said}"
        );
        assert!(said.contains(&at.status), "{tool}: {said}");
        let s =
            read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())));
        assert_eq!(s["method_epic"], epic, "{tool}: kept in the session");

        the_methods_script_finds_it_in_step(&at, &epics);
        the_status_file_lists_the_epic(&at, epic);
        let written = std::fs::read_to_string(project.join(&epics)).unwrap();
        assert!(
            written.contains("**Given** a list\n**When** I add a todo\n**Then** it shows (AC-1)\n"),
            "{written}"
        );
        assert!(
            written.contains("\n### FR Coverage Map\n\nFR-1: Epic {epic} - Story {epic}.1 (Todos API)\nFR-2: Epic {epic} - Story {epic}.2 (List page & sharing!)\nNFR-1: not covered by an approved sprint\n".replace("{epic}", &epic.to_string()).as_str()),
            "{written}"
        );
        assert!(written.contains("**Requirements:** FR-2"), "{written}");
        c.close().await;
    }
}

/// The status of `key` in the project's `sprint-status.yaml`, read as YAML.
pub(crate) fn status_of(project: &Path, key: &str) -> String {
    let path = project
        .join(folder(project, "implementation_artifacts"))
        .join("sprint-status.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{key}:")))
        .unwrap_or_else(|| panic!("{key} in\n{text}"));
    let v = line.split_once(':').unwrap().1;
    v.split(" #").next().unwrap().trim().to_string()
}

/// A server for `dir`, run by `owner`.
async fn server_of(dir: &Path, owner: &str) -> Client {
    let mut cmd = command(dir);
    cmd.env("BMAD_OWNER", owner);
    connect_with(Era::Modern, cmd, dir).await
}

/// The sprint-1 session of `task` taken through development, review and QA to completion:
/// the story's status (and its epic's) at each step, the other story left to the parent.
async fn story_through_its_stages(
    c: &Client,
    project: &Path,
    task: &str,
    (story, other): (&str, &str),
) {
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let mut seen = vec![(status_of(project, story), status_of(project, "epic-1"))];
    for (doc, stage, state) in [
        (DEV, "review", "generating"),
        (REVIEW, "qa", "generating"),
        (QA, "qa", "completed"),
    ] {
        let v = step(c, &sid, json!({"action": "submit", "claude_result": doc})).await;
        assert_eq!(
            (v["stage"].as_str(), v["state"].as_str()),
            (Some(stage), Some(state)),
            "{v:#}"
        );
        seen.push((status_of(project, story), status_of(project, "epic-1")));
    }
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        seen,
        [
            pair("in-progress", "in-progress"),
            pair("review", "in-progress"),
            pair("review", "in-progress"),
            pair("done", "in-progress"),
        ],
        "development, review, QA, completed; the epic waits for its other story"
    );
    assert_eq!(
        status_of(project, other),
        "in-progress",
        "the other sprint is the parent's, at development"
    );
}

/// The method's own view of the status file (`sprint_plan.py status`): one story done, one
/// at work and recommended next. The status file's path.
fn the_methods_view_recommends(project: &Path, other: &str) -> String {
    let status = format!(
        "{}/sprint-status.yaml",
        folder(project, "implementation_artifacts")
    );
    let said = sprint_plan(
        project,
        ".agents/skills",
        &["status", "--status-file", &status],
    );
    assert_eq!(
        said["stories"],
        json!({"in-progress": 1, "done": 1}),
        "{said}"
    );
    assert_eq!(said["recommendation"]["story_key"], other, "{said}");
    status
}

/// `other` marked done by hand in the status file: the parent's `status`, and the CLI's
/// `status` and `list`, show it as done outside the server's gates, not as completed.
async fn done_by_hand_is_shown_outside_the_gates(
    c: &Client,
    project: &Path,
    task: &str,
    status: &str,
    other: &str,
) {
    let text = std::fs::read_to_string(project.join(status)).unwrap();
    let edited = text.replace(
        &format!("  {other}: in-progress"),
        &format!("  {other}: done"),
    );
    assert_ne!(text, edited);
    std::fs::write(project.join(status), edited).unwrap();
    let v = c.ok(json!({"action": "status", "task_name": task})).await;
    let shown =
        format!("Done outside the server's gates: sprint 2 (`{other}`) marked `done` in {status}");
    assert!(notices(&v).contains(&shown), "{v:#}");
    assert!(
        !notices(&v).contains("sprint 1 (`"),
        "sprint 1 is the server's: {v:#}"
    );
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("dev"), Some("generating")),
        "no final QA: {v:#}"
    );
    let completed = v["stories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "completed")
        .count();
    assert_eq!(completed, 1, "{v:#}");
    for args in [vec!["status", task], vec!["list"]] {
        let out = bin(project).args(&args).output().unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(printed.contains(&shown), "bmad-mcp {args:?}: {printed}");
    }
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn a_storys_status_follows_it_through_development_review_and_completion() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(&installer, &project, "codex");
    let c = connect(Era::Modern, &project).await;
    let (_, task, _) = approved(&c, &project).await;
    let (story, other) = ("1-1-todos-api", "1-2-list-page-sharing");
    assert_eq!(status_of(&project, story), "in-progress");

    story_through_its_stages(&c, &project, &task, (story, other)).await;
    let status = the_methods_view_recommends(&project, other);

    // The other story marked done by hand (as the method's /bmad-build would): the parent
    // shows it as done outside the server's gates, and does not count it as completed.
    done_by_hand_is_shown_outside_the_gates(&c, &project, &task, &status, other).await;
    c.close().await;
}

/// A teammate's clone of the repository, the server run there and the session it started.
type Teammate = (PathBuf, Client, Value);

/// The lead's clone of `origin`, with the method installed and `bmad-mcp init` naming the
/// merge driver in `.gitattributes`, pushes an approved plan: the task's name.
async fn lead_pushes_an_approved_plan(installer: &Path, root: &Path, origin: &Path) -> String {
    let lead = root.join("lead");
    clone_as(origin, &lead, "Lead", "lead@example.org");
    git(&lead, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    install(installer, &lead, "claude-code");
    let init = bin(&lead).arg("init").output().unwrap();
    assert!(init.status.success(), "{init:?}");
    let said = String::from_utf8_lossy(&init.stdout);
    assert!(said.contains(".gitattributes now names it"), "{said}");
    let attributes = std::fs::read_to_string(lead.join(".gitattributes")).unwrap();
    assert!(
        attributes.contains("sprint-status.yaml merge=bmad-sprint-status\n"),
        "{attributes}"
    );
    let c = server_of(&lead, "Lead <lead@example.org>").await;
    let (_, task, _) = approved(&c, &lead).await;
    c.close().await;
    commit_all(&lead, "the approved plan");
    git(&lead, &["push", "-q", "-u", "origin", "main"]);
    task
}

/// Ada's and Bob's clones, each with the merge driver configured by its own `init`, each
/// starting one sprint of `task`.
async fn clones_start_their_sprints(root: &Path, origin: &Path, task: &str) -> Vec<Teammate> {
    let mut clones = Vec::new();
    for (name, email, sprint) in [("Ada", "ada@example.org", 1), ("Bob", "bob@example.org", 2)] {
        let clone = root.join(name.to_lowercase());
        clone_as(origin, &clone, name, email);
        let init = bin(&clone).arg("init").output().unwrap();
        assert!(init.status.success(), "{init:?}");
        let driver = git(&clone, &["config", "merge.bmad-sprint-status.driver"]);
        assert!(
            driver.contains("merge-sprint-status %O %A %B %L"),
            "{driver}"
        );
        let c = server_of(&clone, &format!("{name} <{email}>")).await;
        let v = c
            .ok(json!({"action": "start", "parent": task, "sprint": sprint, "cwd": clone.to_str().unwrap()}))
            .await;
        clones.push((clone, c, v["session_id"].clone()));
    }
    clones
}

/// Ada builds sprint 1 to the end and pushes; Bob's sprint 2 reaches review, committed
/// but not pushed.
async fn ada_completes_and_bob_reaches_review(clones: &[Teammate]) {
    let (ada, ada_c, ada_sid) = &clones[0];
    for doc in [DEV, REVIEW, QA] {
        step(
            ada_c,
            ada_sid,
            json!({"action": "submit", "claude_result": doc}),
        )
        .await;
    }
    let (bob, bob_c, bob_sid) = &clones[1];
    step(
        bob_c,
        bob_sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    assert_eq!(status_of(ada, "1-1-todos-api"), "done");
    assert_eq!(status_of(bob, "1-2-list-page-sharing"), "review");
    commit_all(ada, "sprint 1 built");
    git(ada, &["push", "-q", "origin", "main"]);
    commit_all(bob, "sprint 2 in review");
}

/// The `last_updated:` line of the status file at `path` in `clone`.
fn stamp(clone: &Path, path: &str) -> String {
    std::fs::read_to_string(clone.join(path))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("last_updated:"))
        .unwrap()
        .to_string()
}

/// git's own line merge of Bob's status file with origin's, as a clone without the driver
/// runs it (`git merge-file` on the three sides, in `root`/sides), conflicts.
fn a_plain_line_merge_conflicts(bob: &Path, root: &Path, path: &str) {
    git(bob, &["fetch", "-q", "origin"]);
    let base = git(bob, &["merge-base", "HEAD", "origin/main"]);
    let sides = root.join("sides");
    std::fs::create_dir(&sides).unwrap();
    for (name, rev) in [
        ("ours", "HEAD"),
        ("base", base.trim()),
        ("theirs", "origin/main"),
    ] {
        let text = git(bob, &["show", &format!("{rev}:{path}")]);
        std::fs::write(sides.join(name), text).unwrap();
    }
    let plain = Command::new("git")
        .args(["merge-file", "-p", "ours", "base", "theirs"])
        .current_dir(&sides)
        .output()
        .unwrap();
    assert!(!plain.status.success(), "a plain line merge conflicts");
}

/// Bob's pull, through the driver, merges without a conflict: each story's status from its
/// side, the epic in progress, the later stamp, and a file the method's script finds valid.
fn the_driver_merges_both_sides(bob: &Path, path: &str, (ada_stamp, bob_stamp): (String, String)) {
    git(
        bob,
        &["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
    );
    let merged = std::fs::read_to_string(bob.join(path)).unwrap();
    assert!(!merged.contains("<<<<<<<"), "{merged}");
    assert_eq!(status_of(bob, "1-1-todos-api"), "done", "{merged}");
    assert_eq!(
        status_of(bob, "1-2-list-page-sharing"),
        "review",
        "{merged}"
    );
    assert_eq!(status_of(bob, "epic-1"), "in-progress", "{merged}");
    assert!(
        merged.contains(&ada_stamp.clone().max(bob_stamp)),
        "{merged}"
    );
    let valid = sprint_plan(bob, ".claude/skills", &["validate", "--status-file", path]);
    assert_eq!(valid["valid"], true, "{valid}");
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn two_clones_moving_different_stories_merge_without_a_conflict() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let origin = root.join("origin.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let task = lead_pushes_an_approved_plan(&installer, &root, &origin).await;

    // Two people, each in a clone of their own, each running `init` once there.
    let clones = clones_start_their_sprints(&root, &origin, &task).await;
    // Ada builds sprint 1 to the end; Bob's sprint 2 is in review.
    ada_completes_and_bob_reaches_review(&clones).await;
    let (ada, bob) = (&clones[0].0, &clones[1].0);
    // The stamp every write touches differs on both sides: the later one stays.
    let path = format!(
        "{}/sprint-status.yaml",
        folder(bob, "implementation_artifacts")
    );
    let ada_stamp = stamp(ada, &path);
    let bob_stamp = stamp(bob, &path);
    // git's own line merge, as a clone without the driver runs it, conflicts here.
    a_plain_line_merge_conflicts(bob, &root, &path);
    the_driver_merges_both_sides(bob, &path, (ada_stamp, bob_stamp));
    for (_, c, _) in clones {
        c.close().await;
    }
}

/// The method's own `status` of the project's stories: its count by status.
fn methods_counts(project: &Path) -> Value {
    let status = format!(
        "{}/sprint-status.yaml",
        folder(project, "implementation_artifacts")
    );
    sprint_plan(
        project,
        ".agents/skills",
        &["status", "--status-file", &status],
    )["stories"]
        .clone()
}

/// The story of `sprint` started from the parent `task` and taken to its end, its review
/// failing first and sent back: the method's status of it after the send-back.
async fn story_sent_back_once(c: &Client, project: &Path, task: &str, sprint: u32) -> String {
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": sprint, "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let key = ["1-1-todos-api", "1-2-list-page-sharing"][sprint as usize - 1];
    step(c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    let failing = REVIEW.replace("Review Status: Pass", "Review Status: Fail");
    let v = step(
        c,
        &sid,
        json!({"action": "submit", "claude_result": failing}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_eq!(status_of(project, key), "review");
    let v = step(
        c,
        &sid,
        json!({"action": "reject", "feedback": "Guard the empty title."}),
    )
    .await;
    assert_eq!(v["stage"], "dev", "{v:#}");
    let after_send_back = status_of(project, key);
    for doc in [DEV, REVIEW, QA] {
        step(c, &sid, json!({"action": "submit", "claude_result": doc})).await;
    }
    assert_eq!(status_of(project, key), "done");
    after_send_back
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn a_send_back_lowers_review_and_the_epic_waits_for_the_parents_final_qa() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(&installer, &project, "codex");
    let c = connect(Era::Modern, &project).await;
    let (parent, task, _) = approved(&c, &project).await;
    // The approved task is at development: its sprints are at work, as the method's build
    // marks a story it starts.
    assert_eq!(status_of(&project, "1-1-todos-api"), "in-progress");
    assert_eq!(status_of(&project, "epic-1"), "in-progress");

    let after = story_sent_back_once(&c, &project, &task, 1).await;
    assert_eq!(
        after, "in-progress",
        "the method's code review lowers it so"
    );
    // Asked right after a send-back, the method's own script says so too.
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 2, "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    step(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    let failing = REVIEW.replace("Review Status: Pass", "Review Status: Fail");
    step(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": failing}),
    )
    .await;
    step(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Test the share link."}),
    )
    .await;
    assert_eq!(
        methods_counts(&project),
        json!({"done": 1, "in-progress": 1}),
        "sprint_plan.py status after the send-back"
    );
    for doc in [DEV, REVIEW, QA] {
        step(&c, &sid, json!({"action": "submit", "claude_result": doc})).await;
    }

    // Every story done; the parent still waits for its final QA, and so does the epic.
    assert_eq!(methods_counts(&project), json!({"done": 2}));
    let v = c
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    assert!(
        v["user_message"].as_str().unwrap().contains("final QA"),
        "{v:#}"
    );
    assert_eq!(status_of(&project, "epic-1"), "in-progress");
    let v = step(
        &c,
        &parent,
        json!({"action": "submit", "claude_result": QA}),
    )
    .await;
    assert_eq!(v["state"], "completed", "{v:#}");
    assert_eq!(status_of(&project, "epic-1"), "done");
    c.close().await;
}

/// A task begun from the method's own documents in the project's skills folder `skills`:
/// its PRD as the method's `prd.md` and its architecture as a spine in a run folder of its
/// architecture skill, both written in the installed templates and taken as they are, then
/// the plan approved. The session, the task's name and the spine's path.
pub async fn planned_from_the_methods_documents(
    c: &Client,
    project: &Path,
    skills: &str,
) -> (Value, String, String) {
    let planning = folder(project, "planning_artifacts");
    let prd = format!("{planning}/prd.md");
    let text = written_in(
        &template(project, skills, "bmad-prd", "prd_template"),
        "a team's shared todo list",
    );
    std::fs::create_dir_all(project.join(&planning)).unwrap();
    std::fs::write(project.join(&prd), text).unwrap();
    let spine =
        format!("{planning}/architecture/architecture-proj-2026-11-29/ARCHITECTURE-SPINE.md");
    let text = written_in(
        &template(project, skills, "bmad-architecture", "spine_template"),
        "the todo service",
    );
    std::fs::create_dir_all(project.join(&spine).parent().unwrap()).unwrap();
    std::fs::write(project.join(&spine), text).unwrap();
    let v = c
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
        .await;
    assert!(v["notices"].to_string().contains(&prd), "{v:#}");
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for file in [&prd, &spine] {
        let taken = json!({"action": "submit", "document_file": file, "claude_result": "{\"quality_score\": 95}"});
        let v = step(c, &sid, taken).await;
        assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
        step(c, &sid, json!({"action": "confirm"})).await;
    }
    step(c, &sid, json!({"action": "submit", "claude_result": PLAN})).await;
    let v = step(c, &sid, json!({"action": "approve", "scope": "all"})).await;
    assert_eq!(v["stage"], "dev", "{v:#}");
    (sid, task, spine)
}
