//! The plan shared with the BMAD method, in real installs of the pinned `bmad-method`
//! (claude-code and codex): an approved sprint plan becomes the method's epic and its
//! stories land in `sprint-status.yaml`, which the method's own `sprint_plan.py` (run with
//! the pinned `ruamel.yaml`) finds valid and in step with the epics file the server wrote;
//! a story's status follows it through development, review and completion; two clones
//! that moved different stories merge in git without a conflict through the merge driver
//! `bmad-mcp init` installs; a story marked `done` by hand while its session is not
//! completed is shown on the parent as done outside the server's gates.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::method::{install, installer};
use crate::support::{
    bin, command, connect, connect_with, passing_architecture, read_json, Client, Era, ROOT,
};

const PLAN: &str = "# Sprint Plan: Team todo\n\n## Sprint Overview\nTwo sprints.\n\n## Sprint 1: Todos API\nCovers: FR-1\n- Task: the todos table (3 points)\n- Definition of done: the API tests pass\n\n## Sprint 2: List page & sharing!\nCovers: FR-2\n- Task: the list page (5 points)\n- Definition of done: the page lists the todos\n\n## Risks\n- None known.\n";
const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n";
const QA: &str = "# QA Report\n\n## Results\n30 passed.\n\nIntent: met\nQuality Score: 93/100\n";

/// A PRD that passes the gate, with requirement ids and an acceptance criterion.
fn prd() -> String {
    let doc = "# PRD: Team todo\n\n## Executive Summary\nA shared todo list.\n\n## Business Goals\n- Teams track work in one place.\n\n## User Stories\n- As a member I add a todo.\n- AC-1 (FR-1): Given a list, when I add a todo, then it shows.\n\n## Functional Requirements\n- FR-1: Add a todo.\n- FR-2: Share a list.\n\n## Technical Requirements\n- NFR-1: p95 under 200 ms.\n\n## Success Metrics\n- p95 under 200 ms.\n";
    json!({"prd_draft": doc, "quality_score": 95}).to_string()
}

async fn step(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn notices(v: &Value) -> String {
    v["notices"].to_string()
}

/// The install's folder setting `key`, relative to the project.
fn folder(project: &Path, key: &str) -> String {
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
fn sprint_plan(project: &Path, skills: &str, args: &[&str]) -> Value {
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
async fn approved(c: &Client, project: &Path) -> (Value, String, Value) {
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

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn an_approved_plan_is_the_methods_epic_valid_and_in_step_for_its_own_script() {
    let Some(installer) = installer() else { return };
    for (tool, skills, theirs) in [
        ("claude-code", ".claude/skills", true),
        ("codex", ".agents/skills", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        install(&installer, &project, tool);
        let planning = folder(&project, "planning_artifacts");
        let implementation = folder(&project, "implementation_artifacts");
        let status = format!("{implementation}/sprint-status.yaml");
        if theirs {
            std::fs::create_dir_all(project.join(&planning)).unwrap();
            std::fs::create_dir_all(project.join(&implementation)).unwrap();
            std::fs::write(project.join(&planning).join("epics.md"), THEIR_EPICS).unwrap();
            std::fs::write(project.join(&status), THEIR_STATUS).unwrap();
        }
        let c = connect(Era::Modern, &project).await;
        let (sid, task, v) = approved(&c, &project).await;
        let epic = if theirs { 2 } else { 1 };
        let epics = format!("{planning}/epics-{task}.md");
        let said = notices(&v);
        assert!(
            said.contains(&format!("epic {epic} in {epics}")),
            "{tool}: {said}"
        );
        assert!(said.contains(&status), "{tool}: {said}");
        let s =
            read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())));
        assert_eq!(s["method_epic"], epic, "{tool}: kept in the session");

        let valid = sprint_plan(&project, skills, &["validate", "--status-file", &status]);
        assert_eq!(valid["valid"], true, "{tool}: {valid}");
        let mut args = vec![
            "generate",
            "--status-file",
            &status,
            "--stories-dir",
            &implementation,
        ];
        args.extend([
            "--project",
            "proj",
            "--date",
            "11-27-2026 23:00",
            "--dry-run",
        ]);
        let their_epics = format!("{planning}/epics.md");
        if theirs {
            args.extend(["--epic-file", &their_epics]);
        }
        args.extend(["--epic-file", &epics]);
        let dry = sprint_plan(&project, skills, &args);
        assert_eq!(dry["ok"], true, "{tool}: {dry}");
        assert_eq!(dry["in_sync"], true, "{tool}: no drift: {dry}");
        assert_eq!(dry["warnings"], json!([]), "{tool}: {dry}");
        assert_eq!(dry["stories"], if theirs { 3 } else { 2 }, "{tool}: {dry}");
        assert_eq!(dry["new_entries"], json!([]), "{tool}: {dry}");
        assert_eq!(dry["dropped_orphans"], json!([]), "{tool}: {dry}");

        let text = std::fs::read_to_string(project.join(&status)).unwrap();
        for key in [
            format!("  epic-{epic}: backlog\n"),
            format!("  {epic}-1-todos-api: backlog\n"),
            format!("  {epic}-2-list-page-sharing: backlog\n"),
            format!("  epic-{epic}-retrospective: optional\n"),
        ] {
            assert!(text.contains(&key), "{tool}: {key:?} in\n{text}");
        }
        if theirs {
            // Everything that was there stays, but the time of the last update.
            for line in THEIR_STATUS
                .lines()
                .filter(|l| !l.starts_with("last_updated"))
            {
                assert!(text.contains(line), "{tool}: {line:?} kept in\n{text}");
            }
        }
        let written = std::fs::read_to_string(project.join(&epics)).unwrap();
        assert!(written.contains("**When** AC-1 is checked\n**Then** Given a list, when I add a todo, then it shows."), "{written}");
        assert!(written.contains("**Requirements:** FR-2"), "{written}");
        c.close().await;
    }
}
