//! The method's documents judged by the method: in a real install of the pinned
//! `bmad-method`, a PRD and an architecture spine written in the templates its own
//! installer put there (`bmad-prd`'s PRD template, `bmad-architecture`'s spine), unchanged,
//! pass the gate by the template's own sections; one below the gate stops at the human, who
//! accepts it as it is in the terminal (an accepted risk) or sends it back, and a model's
//! rewrite never replaces the method's file: the human is told the rewrite is what they
//! decide on.

use std::path::Path;

use serde_json::{json, Value};

use crate::method_plan::folder;
use crate::support::method::{install, installer, template, written_in};
use crate::support::terminal::in_terminal;
use crate::support::{connect, passing_prd, read_json, start_args, Client, Era};

const SKILLS: &str = ".claude/skills";

fn session(project: &Path, v: &Value) -> Value {
    let id = v["session_id"].as_str().unwrap();
    read_json(&project.join(format!(".bmad-task/session-{id}.json")))
}

/// `text` written at `rel` in `project`, its folders made.
fn place(project: &Path, rel: &str, text: &str) {
    let path = project.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A PRD written in the installed PRD template, where the PRD skill leaves its runs.
fn method_prd(project: &Path) -> (String, String) {
    let prd = written_in(
        &template(project, SKILLS, "bmad-prd", "prd_template"),
        "the team's shared todo list",
    );
    // The template's own shape: numbered sections, requirements as `#### FR-n` headings.
    assert!(
        prd.contains("## 4. Features") && prd.contains("#### FR-1:"),
        "{prd}"
    );
    let path = format!(
        "{}/prds/prd-proj-2026-11-29/prd.md",
        folder(project, "planning_artifacts")
    );
    place(project, &path, &prd);
    (path, prd)
}

/// A spine written in the installed architecture template, where its skill leaves it.
fn method_spine(project: &Path) -> String {
    let spine = written_in(
        &template(project, SKILLS, "bmad-architecture", "spine_template"),
        "the todo service",
    );
    assert!(
        spine.contains("## Invariants & Rules") && spine.contains("### AD-1"),
        "{spine}"
    );
    let path = format!(
        "{}/architecture/architecture-proj-2026-11-29/ARCHITECTURE-SPINE.md",
        folder(project, "planning_artifacts")
    );
    place(project, &path, &spine);
    path
}

async fn installed(installer: &Path) -> (tempfile::TempDir, std::path::PathBuf, Client) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(installer, &project, "claude-code");
    let c = connect(Era::Modern, &project).await;
    (dir, project, c)
}

fn file_with(path: &str, score: Option<u32>) -> Value {
    let mut args = json!({"action": "submit", "document_file": path});
    if let Some(score) = score {
        args["claude_result"] = json!(format!("{{\"quality_score\": {score}}}"));
    }
    args
}

async fn step(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_prd_and_a_spine_in_the_installed_templates_pass_the_gate_unchanged() {
    let Some(installer) = installer() else { return };
    let (_dir, project, c) = installed(&installer).await;
    let (prd_path, _) = method_prd(&project);
    let v = c.ok(start_args(&project, "Build a team todo app")).await;
    let sid = v["session_id"].clone();
    let v = step(&c, &sid, file_with(&prd_path, Some(95))).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let po = &session(&project, &v)["stages"]["po"];
    assert_eq!(po["gate_passed"], true, "{po:#}");
    assert!(po.get("missing_sections").is_none(), "{po:#}");
    assert!(po.get("empty_sections").is_none(), "{po:#}");

    let v = step(&c, &sid, json!({"action": "confirm"})).await;
    assert_eq!(v["stage"], "architect", "{v:#}");
    let spine_path = method_spine(&project);
    let v = step(&c, &sid, file_with(&spine_path, Some(95))).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let architect = &session(&project, &v)["stages"]["architect"];
    assert_eq!(architect["gate_passed"], true, "{architect:#}");
    assert!(architect.get("missing_sections").is_none(), "{architect:#}");
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_method_prd_below_the_gate_stops_at_the_human_and_is_never_replaced_silently() {
    let Some(installer) = installer() else { return };
    let (_dir, project, c) = installed(&installer).await;
    let (prd_path, prd) = method_prd(&project);

    // No score stated: the server's estimate stays below the gate, and the file goes to
    // the human as it is, not to a model's rewrite.
    let v = c.ok(start_args(&project, "Build a team todo app")).await;
    let (sid, task) = (
        v["session_id"].clone(),
        v["task_name"].as_str().unwrap().to_string(),
    );
    let v = step(&c, &sid, file_with(&prd_path, None)).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert!(
        v["notices"].to_string().contains("accept it as it is"),
        "{v:#}"
    );
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("It stays below the gate (a score of ")
            && out.contains("confirming accepts it as it is, recorded as an accepted risk"),
        "{out}"
    );
    let s = session(&project, &v);
    assert_eq!(
        s["stages"]["po"]["accepted_risk"], true,
        "{:#}",
        s["stages"]["po"]
    );
    assert_eq!(s["current_stage"], "architect", "{s:#}");
    assert_eq!(
        std::fs::read_to_string(project.join(&prd_path)).unwrap(),
        prd
    );

    // Sent back instead: the model's rewrite is what the human then decides on, and they
    // are told so; the method's file is left as it was.
    let v = c
        .ok(start_args(&project, "Build a team todo app again"))
        .await;
    let (sid, task) = (
        v["session_id"].clone(),
        v["task_name"].as_str().unwrap().to_string(),
    );
    step(&c, &sid, file_with(&prd_path, None)).await;
    let v = step(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Say who the users are."}),
    )
    .await;
    assert_eq!(v["state"], "refining", "{v:#}");
    let v = step(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let rewrite = "the assistant's rewrite, not the file";
    assert!(v["notices"].to_string().contains(rewrite), "{v:#}");
    assert!(v["notices"].to_string().contains(&prd_path), "{v:#}");
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "n\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(rewrite), "{out}");
    assert_eq!(
        std::fs::read_to_string(project.join(&prd_path)).unwrap(),
        prd
    );
    c.close().await;
}
