//! The dashboard's view of a team's task in a real browser (headless Chromium over
//! WebDriver): who owns it and on which branch, in the header and the list; its stories
//! nested under it with their state, owner and branch, one of them run from another git
//! worktree of the clone, which the same page serves; the story's own page naming its parent; and the requirement matrix as a table,
//! the ids with a gap highlighted. A screenshot of the task page is kept in
//! `target/dashboard/team.png`. A worktree added while the page is open is on it within
//! seconds, its story listed under a parent shown once.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::dash::Dash;
use crate::support::webdriver::{Browser, CHROMEDRIVER, CHROMIUM};
use crate::support::{command, connect_with, Client, Era, ROOT};

const PRD: &str = "# PRD: Team todo\n\n## Executive Summary\nA shared todo list.\n\n## Business Goals\n- Teams track work in one place.\n\n## User Stories\n- As a member I add a todo.\n- AC-1 (FR-1): a todo added shows in the list\n\n## Functional Requirements\n- FR-1: add a todo\n- FR-2: share a list\n\n## Technical Requirements\n- NFR-1: p95 under 200 ms\n\n## Success Metrics\n- p95 under 200 ms.\n";
/// Designs FR-1 and FR-2, not NFR-1.
const ARCHITECTURE: &str = "# Architecture\n\n## System Overview\nA web app.\n\n## Technology Stack\nRust.\n\n## Components\n### Lists API\nCovers: FR-1, FR-2\n### Store\nTables.\n\n## Data Model\nTables.\n\n## API\nREST.\n\n## Security\nTLS.\n";
/// Plans FR-1 (and AC-1) in sprint 1, FR-2 in sprint 2, NFR-1 in none.
const PLAN: &str = "# Sprint Plan\n\n## Overview\nTwo sprints.\n\n## Sprint 1: Add\nCovers: FR-1, AC-1\n- Task: add\n\n## Sprint 2: Share\nCovers: FR-2\n- Task: share\n";

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Ana", "-c", "user.email=ana@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A server process for `dir`, run by `owner`.
async fn server_of(dir: &Path, owner: &str) -> Client {
    let mut cmd = command(dir);
    cmd.env("BMAD_OWNER", owner);
    connect_with(Era::Modern, cmd, dir).await
}

async fn step(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

/// A clone at `main` whose parent task (by Ana) has its two-sprint plan approved and
/// committed: her server, the parent's session id and its task name.
async fn planned(main: &Path) -> (Client, Value, String) {
    std::fs::create_dir(main).unwrap();
    git(main, &["init", "-q", "-b", "main"]);
    std::fs::write(
        main.join(".gitignore"),
        ".bmad-task/.lock\n.bmad-task/task-mapping.json*\n",
    )
    .unwrap();
    let lead = server_of(main, "Ana <ana@example.com>").await;
    let v = lead
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": main.to_str().unwrap()}))
        .await;
    let parent = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "submit", "claude_result": json!({"prd_draft": PRD, "quality_score": 95}).to_string()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": json!({"architecture_draft": ARCHITECTURE, "quality_score": 95}).to_string()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
        json!({"action": "approve", "scope": "all"}),
    ] {
        step(&lead, &parent, args).await;
    }
    git(main, &["add", "-A"]);
    git(main, &["commit", "-q", "-m", "the approved plan"]);
    (lead, parent, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn a_worktree_added_while_the_page_is_open_is_on_it_within_seconds() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let main = base.join("main");
    let (lead, parent, task) = planned(&main).await;
    // The dashboard starts before the worktree exists.
    let d = Dash::start(&main);
    let b = Browser::start();
    b.goto(&d.url);
    let parent_row = format!("#tasks tr[data-session='{}']", parent.as_str().unwrap());
    assert!(b.text(&format!("{parent_row} td.owner")).contains("Ana"));

    let wt = base.join("wt-late");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "-b",
            "sprint-2",
        ],
    );
    let cy = server_of(&wt, "Cy <cy@example.com>").await;
    let story = cy
        .ok(json!({"action": "start", "parent": task, "sprint": 2, "cwd": wt.to_str().unwrap()}))
        .await;
    let row = format!(
        "{parent_row} + tr.story[data-session='{}']",
        story["session_id"].as_str().unwrap()
    );
    // The open page hears of it and lists the story from its worktree, without a restart.
    let started = std::time::Instant::now();
    let script = format!("return document.querySelector(\"{row}\") !== null");
    while b.run(&script) != json!(true) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the story of the new worktree is not on the page: {}",
            b.run("return document.body.innerText")
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(
        b.text(&format!("{row} td:last-child")),
        wt.display().to_string()
    );
    // The parent is listed once, from the worktree where it changed last: not again as
    // the copy the new worktree checked out.
    let rows = b.run(&format!(
        "return document.querySelectorAll(\"#tasks tr[data-session='{}']\").length",
        parent.as_str().unwrap()
    ));
    assert_eq!(rows, json!(1));
    // Its page opens from there, served by the same process.
    b.click(&format!("{row} a.task-link"));
    assert!(b.text("#task-owner").contains("Owner Cy"));
    drop(b);
    lead.close().await;
    cy.close().await;
    d.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn owners_branches_stories_and_the_matrix_are_tables_on_the_page() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let main = base.join("main");
    let (lead, parent, task) = planned(&main).await;
    let wt1 = base.join("wt1");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            wt1.to_str().unwrap(),
            "-b",
            "sprint-1",
        ],
    );
    // Sprint 1 runs as a story from the other worktree, by Bea.
    let bea = server_of(&wt1, "Bea <bea@example.com>").await;
    let story = bea
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": wt1.to_str().unwrap()}))
        .await;
    let story_task = story["task_name"].as_str().unwrap().to_string();

    let d = Dash::start(&main);
    let b = Browser::start();
    b.goto(&d.url);
    // The list: the task with its owner and branch, its story right under it.
    let parent_row = format!("#tasks tr[data-session='{}']", parent.as_str().unwrap());
    assert!(b.text(&format!("{parent_row} td.owner")).contains("Ana"));
    assert_eq!(b.text(&format!("{parent_row} td.branch")), "main");
    // Its time is for people: the minute and how long ago, not the stored ISO text.
    let at = b.text(&format!("{parent_row} td.branch + td"));
    assert!(
        (at.ends_with("(just now)") || at.ends_with(" min ago)")) && !at.contains('T'),
        "{at}"
    );
    let story_row = format!("{parent_row} + tr.story");
    // The other worktree is the clone's too: the same page serves it, the story's row is
    // its own (linked), in its project.
    assert_eq!(
        b.text(&format!("{story_row} td:first-child")),
        format!("↳ sprint 1: {story_task}")
    );
    assert_eq!(
        b.text(&format!("{story_row} td:last-child")),
        wt1.display().to_string()
    );
    assert!(b.text(&format!("{story_row} td.owner")).contains("Bea"));
    assert_eq!(b.text(&format!("{story_row} td.branch")), "sprint-1");

    // The task: owner and branch in its header, its stories as a table.
    b.click(&format!("{parent_row} a.task-link"));
    let owner = b.text("#task-owner");
    assert!(
        owner.contains("Owner Ana") && owner.contains("Branch main"),
        "{owner}"
    );
    let row = "#stories tr[data-sprint='1']";
    assert_eq!(b.text(&format!("{row} td:nth-child(2)")), story_task);
    assert_eq!(
        (
            b.text(&format!("{row} td:nth-child(3)")),
            b.text(&format!("{row} td.state"))
        ),
        ("dev".to_string(), "generating".to_string())
    );
    assert!(b.text(&format!("{row} td.owner")).contains("Bea"));
    assert_eq!(b.text(&format!("{row} td.branch")), "sprint-1");

    // The matrix: one row per id, designed, planned, not built or verified yet; NFR-1,
    // designed by no component and planned in no sprint, is highlighted with its gaps.
    let ids = b
        .run("return [...document.querySelectorAll('#matrix tr[data-id]')].map(r => r.dataset.id)");
    assert_eq!(ids, json!(["AC-1", "FR-1", "FR-2", "NFR-1"]));
    let fr1 = "#matrix tr[data-id='FR-1']";
    assert_eq!(b.text(&format!("{fr1} td.designed")), "Lists API");
    assert_eq!(b.text(&format!("{fr1} td.planned")), "sprint 1 (in scope)");
    assert_eq!(b.text(&format!("{fr1} td.built")), "—");
    assert_eq!(b.text(&format!("{fr1} td.verified")), "—");
    let gaps =
        b.run("return [...document.querySelectorAll('#matrix tr.gap')].map(r => r.dataset.id)");
    assert_eq!(gaps, json!(["NFR-1"]));
    assert_eq!(
        b.text("#matrix tr[data-id='NFR-1'] .gaps"),
        "Gap: no component designs it; no sprint plans it"
    );
    // A laptop's screen, as docs/screenshots/ shows it.
    b.resize(1280, 800);
    b.run("window.scrollTo(0, 0)");
    b.screenshot(&Path::new(ROOT).join("target/dashboard/team.png"));
    let body = b.run("return document.body.innerText");
    assert!(
        !body.as_str().unwrap().contains("\"sprint\":"),
        "no raw JSON: {body}"
    );

    // The story's own dashboard names its parent, and its owner and branch.
    let ds = Dash::start(&wt1);
    b.goto(&ds.url);
    // The parent's file came with the worktree's checkout: the story is listed under it.
    let story_row = format!(
        "{parent_row} + tr.story[data-session='{}']",
        story["session_id"].as_str().unwrap()
    );
    b.click(&format!("{story_row} a.task-link"));
    let of = b.text("#story-of");
    assert!(
        of.starts_with(&format!("Story of sprint 1 (Add) of {task}")),
        "{of}"
    );
    let owner = b.text("#task-owner");
    assert!(
        owner.contains("Owner Bea") && owner.contains("Branch sprint-1"),
        "{owner}"
    );
    drop(b);
    lead.close().await;
    bea.close().await;
    d.stop();
    ds.stop();
}
