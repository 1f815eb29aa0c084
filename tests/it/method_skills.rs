//! The method's skill per stage, in real projects of the pinned BMAD method (installed by its
//! own installer for Claude Code and Codex) and in one without it: each stage's first prompt
//! sends the host to the installed skill that does its work (found in the install's skills
//! folder, run as that host runs it), says where the skill writes and how that reaches the
//! server (the PRD and the spine as the file, with `document_file`; the rest written from
//! what the skill made), and that the gate and the human's decision stay the server's; on
//! the full track, its parent and a story, and the quick and fix tracks (whose review runs
//! the code review's layers, which its prompt lists). A PRD and a spine
//! written where the prompt says, in the installed templates, are taken with `document_file`
//! and stop at the human. Without the install no prompt gains a word of it.

use std::path::Path;

use serde_json::{json, Value};

use crate::method_plan::PLAN;
use crate::support::method::{install, installer, template, written_in};
use crate::support::{
    connect, document, passing_architecture, passing_prd, scored, Client, Era, BUG_SECTIONS,
    SPEC_SECTIONS,
};

const HEADING: &str = "## The method's skill for this stage";

async fn call(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn prompt(v: &Value) -> &str {
    v["role_prompt"].as_str().unwrap_or_default()
}

/// How the prompt names the installed `skill` in `folder`, as that folder's host runs it.
fn runs(folder: &str, skill: &str) -> String {
    if folder == ".claude/skills" {
        format!("skill `{skill}`: in Claude Code `/{skill}`, elsewhere this server's MCP prompt `{skill}`")
    } else {
        format!("skill `{skill}` (`{folder}/{skill}/`): the host's skill of that name, or this server's MCP prompt `{skill}`")
    }
}

/// `v`'s prompt sends the host to the installed `skill`, whose folder the install has.
fn sends_to(project: &Path, folder: &str, v: &Value, skill: &str) {
    let p = prompt(v);
    assert!(p.contains(HEADING), "{skill}: {p}");
    assert!(p.contains(&runs(folder, skill)), "{skill} in\n{p}");
    assert!(
        p.contains(
            "The server's checks, gate and human decision still apply: submit as this prompt says."
        ),
        "{p}"
    );
    assert!(
        project.join(folder).join(skill).join("SKILL.md").is_file(),
        "{skill} is installed in {folder}"
    );
}

/// The place the prompt names for the skill's file, `<run>` a run folder of the day.
fn named_place(p: &str, ends: &str) -> String {
    let at = p.find(ends).unwrap_or_else(|| panic!("{ends} in\n{p}"));
    let start = p[..at].rfind('`').unwrap() + 1;
    p[start..at + ends.len()].replace("<run>", "run-2026-11-29")
}

/// `text` written at `rel` in `project`, its folders made.
fn place(project: &Path, rel: &str, text: &str) {
    let path = project.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The full track's planning stages with the install for `tool`: each prompt names its
/// skill, the PRD and the spine are taken from where the prompt says the skill writes them
/// (written in the installed templates) and stop at the human, and the parent's
/// development names the build skill.
async fn the_full_track(project: &Path, folder: &str) {
    let c = connect(Era::Modern, project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    sends_to(project, folder, &v, "bmad-prd");
    let planning = crate::method_plan::folder(project, "planning_artifacts");
    let prd_at = format!(
        "`{planning}/prds/<run>/prd.md`: submit that file with `document_file` set to its path"
    );
    assert!(prompt(&v).contains(&prd_at), "{}", prompt(&v));
    let prd_path = named_place(prompt(&v), "/prd.md");
    let prd = written_in(
        &template(project, folder, "bmad-prd", "prd_template"),
        "the team's todo list",
    );
    place(project, &prd_path, &prd);
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "document_file": prd_path}),
    )
    .await;
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "the human decides: {v:#}"
    );
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    sends_to(project, folder, &v, "bmad-architecture");
    let spine_path = named_place(prompt(&v), "/ARCHITECTURE-SPINE.md");
    assert!(
        spine_path.starts_with(&format!("{planning}/architecture/")),
        "{spine_path}"
    );
    let spine = written_in(
        &template(project, folder, "bmad-architecture", "spine_template"),
        "the todo service",
    );
    place(project, &spine_path, &spine);
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "document_file": spine_path}),
    )
    .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let v = call(&c, &sid, json!({"action": "confirm"})).await;
    sends_to(project, folder, &v, "bmad-create-epics-and-stories");
    assert!(
        prompt(&v).contains(&format!("It writes the epics at `{planning}/epics.md`: write the plan from them in `claude_result`")),
        "{}",
        prompt(&v)
    );
    call(&c, &sid, json!({"action": "submit", "claude_result": PLAN})).await;
    let v = call(&c, &sid, json!({"action": "approve", "scope": "all"})).await;
    assert_eq!(v["stage"], "dev", "{v:#}");
    sends_to(project, folder, &v, "bmad-build");
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn each_planning_stage_sends_the_host_to_its_installed_skill_and_takes_its_file() {
    let Some(installer) = installer() else { return };
    for (tool, folder) in [
        ("claude-code", ".claude/skills"),
        ("codex", ".agents/skills"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        install(&installer, &project, tool);
        // The terminal's listing names each stage's skill where it is installed.
        let out = crate::support::bin(&project)
            .arg("prompts")
            .output()
            .unwrap();
        let listing = String::from_utf8(out.stdout).unwrap();
        for skill in ["bmad-prd", "bmad-architecture", "bmad-build", "bmad-spec"] {
            let line = format!("its work done with {folder}/{skill}/\n");
            assert!(listing.contains(&line), "{line} in {listing}");
        }
        the_full_track(&project, folder).await;
    }
}

/// The quick and fix tracks' stages, and a story's development, with the install.
#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn the_light_tracks_and_a_story_name_their_skills_once_a_stage() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = crate::method_round::project_with_the_method(&installer, dir.path());
    let folder = ".claude/skills";
    let c = connect(Era::Modern, &project).await;
    let dev = "# Implementation Report\n\n## Summary\nDone.\n\n## Changes\n- `src/lib.rs`: it.\n\n## Tests\n1 passed.\n\n## Failing Test\n`it` failed before, passes now.\n";
    for (track, first, skill, field, sections) in [
        (
            "quick",
            "spec",
            "bmad-spec",
            "technical_spec",
            &SPEC_SECTIONS,
        ),
        ("fix", "bug", "bmad-build", "bug_report", &BUG_SECTIONS),
    ] {
        let v = c
            .ok(json!({"action": "start", "objective": format!("A {track} change"), "track": track, "cwd": project.to_str().unwrap()}))
            .await;
        let sid = v["session_id"].clone();
        assert_eq!(v["stage"], first, "{v:#}");
        sends_to(&project, folder, &v, skill);
        if track == "fix" {
            let p = prompt(&v);
            assert!(
                p.contains("Use it to reproduce the bug and plan the fix, not to fix it"),
                "{p}"
            );
        }
        // Sent back: the revision's prompt does not say it again.
        let low = scored(field, &document("The change", &sections[..2]), 40);
        let mut v = call(&c, &sid, json!({"action": "submit", "claude_result": low})).await;
        if v["state"] == "awaiting_confirmation" {
            v = call(
                &c,
                &sid,
                json!({"action": "reject", "feedback": "Say more."}),
            )
            .await;
        }
        assert_eq!(v["state"], "refining", "{v:#}");
        assert!(!prompt(&v).contains(HEADING), "{}", prompt(&v));
        let doc = scored(field, &document("The change", sections), 93);
        call(&c, &sid, json!({"action": "submit", "claude_result": doc})).await;
        let v = call(&c, &sid, json!({"action": "confirm"})).await;
        sends_to(&project, folder, &v, "bmad-build");
        std::fs::write(
            project.join("src/lib.rs"),
            format!("pub mod todo; // {track}\n"),
        )
        .unwrap();
        let v = call(&c, &sid, json!({"action": "submit", "claude_result": dev})).await;
        assert_eq!(v["stage"], "review", "{v:#}");
        // The review's skill is its layers, which the review prompt lists.
        let p = prompt(&v);
        assert!(!p.contains(HEADING), "{p}");
        assert!(
            p.contains("from the install's `bmad-code-review` layers"),
            "{p}"
        );
    }
    c.close().await;
}

/// A story's development, started from a parent whose plan is approved, names the build
/// skill; the parent's prompt named the plan's.
#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_story_names_the_build_skill_as_its_parent_did() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = crate::method_round::project_with_the_method(&installer, dir.path());
    let c = connect(Era::Modern, &project).await;
    let (_, task, v) = crate::method_plan::approved(&c, &project).await;
    sends_to(&project, ".claude/skills", &v, "bmad-build");
    crate::team_git::commit_all(&project, "the approved plan");
    let wt = dir.path().join("wt1");
    let path = wt.to_str().unwrap();
    crate::support::git(&project, &["worktree", "add", "-q", path, "-b", "sprint-1"]);
    let story = connect(Era::Modern, &wt).await;
    let v = story
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": path}))
        .await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("dev"), Some("generating"))
    );
    sends_to(&wt, ".claude/skills", &v, "bmad-build");
    story.close().await;
    c.close().await;
}

/// Without the install no stage's prompt names a skill: the full track's planning, the
/// quick and fix tracks' first stage and development.
#[tokio::test]
async fn without_an_install_no_prompt_names_a_skill() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let c = connect(Era::Modern, &project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let mut prompts = vec![prompt(&v).to_string()];
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
        json!({"action": "approve", "scope": "all"}),
    ] {
        prompts.push(prompt(&call(&c, &sid, args).await).to_string());
    }
    for track in ["quick", "fix"] {
        let v = c
            .ok(json!({"action": "start", "objective": format!("A {track} change"), "track": track, "cwd": project.to_str().unwrap()}))
            .await;
        prompts.push(prompt(&v).to_string());
    }
    assert!(prompts.iter().filter(|p| !p.is_empty()).count() >= 6);
    for p in &prompts {
        assert!(!p.contains(HEADING) && !p.contains("skill `bmad-"), "{p}");
    }
    c.close().await;
}
