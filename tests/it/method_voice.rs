//! The method's voice and files, in a project where the pinned `bmad-method` is installed by
//! its own installer: the epics of a plan drawn from the method's own PRD (written in its
//! installed template) read as its `bmad-create-epics-and-stories` writes them (an inventory,
//! a coverage map, user stories and Given/When/Then from the PRD) and its `sprint_plan.py`
//! parses them without a warning; `planning_artifacts` holds one PRD and one architecture for
//! the task where the skills' globs look, front matter first; a story's first prompt shows the
//! deferred-work ledger (an entry in the format of the installed `bmad-build`) and the lessons,
//! and the entry its report resolves is checked off at its completion and shown no more; a
//! quick change or a fix no epic names is offered no retrospective; a start says when the
//! skills need `uv` and it is not on PATH; and a draft taken from the method's file is "taken
//! as it is" only while that file is the text taken.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::method_plan::{
    approved, folder, planned_from_the_methods_documents, sprint_plan, step, DEV, QA, REVIEW,
};
use crate::support::method::{install, installer, template, written_in};
use crate::support::{
    command, connect, connect_with, document, scored, Client, Era, BUG_SECTIONS, SPEC_SECTIONS,
};

const SKILLS: &str = ".claude/skills";

/// The method installed for Claude Code in `dir/proj`.
fn installed(installer: &Path, dir: &Path) -> PathBuf {
    let project = dir.join("proj");
    install(installer, &project, "claude-code");
    project
}

/// The names in `folder` of the project (top level only) that the skills' whole-document
/// glob `*word*.md` matches.
fn globbed(project: &Path, folder: &str, word: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(project.join(folder))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && n.contains(word))
        .collect();
    names.sort();
    names
}

/// The epics file reads as the method's template has it, from the method's PRD, and the
/// method's script parses it in step with the sprint status, without a warning.
fn the_epics_are_in_the_methods_shape(project: &Path, task: &str) {
    let planning = folder(project, "planning_artifacts");
    let epics = format!("{planning}/epics-{task}.md");
    let text = std::fs::read_to_string(project.join(&epics)).unwrap();
    assert!(text.starts_with("---\ninputDocuments:\n"), "{text}");
    for part in [
        "\n## Requirements Inventory\n",
        "\n### Functional Requirements\n\nFR-1: a team's shared todo list\n",
        "\n### FR Coverage Map\n\nFR-1: Epic 1 - Story 1.1 (Todos API)\nFR-2: Epic 1 - Story 1.2 (List page & sharing!)\n",
        "\n## Epic 1: Build a team todo app\n",
        "\n**FRs covered:** FR-1, FR-2\n",
        // Who wants it and what, as the PRD's FR says "[Actor] can [capability]".
        "\nAs a team's shared todo list,\nI want to a team's shared todo list a team's shared todo list (FR-1),\n",
        "\n**Given** story 1.1 is built\n**When** FR-1 is checked\n**Then** a team's shared todo list\n",
        "\n**When** the plan's definition of done is checked\n**Then** the API tests pass\n",
    ] {
        assert!(text.contains(part), "{part:?} in\n{text}");
    }
    assert!(!text.contains("delivers"), "{text}");
    let status = format!(
        "{}/sprint-status.yaml",
        folder(project, "implementation_artifacts")
    );
    let dry = sprint_plan(
        project,
        SKILLS,
        &[
            "generate",
            "--status-file",
            &status,
            "--stories-dir",
            &folder(project, "implementation_artifacts"),
            "--epic-file",
            &epics,
            "--project",
            "proj",
            "--date",
            "11-29-2026 10:00",
            "--dry-run",
        ],
    );
    assert_eq!(dry["warnings"], json!([]), "{dry}");
    assert_eq!(dry["in_sync"], true, "{dry}");
    assert_eq!(dry["stories"], 2, "{dry}");
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn the_epics_speak_the_methods_prd_and_its_globs_find_one_prd_and_architecture() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = installed(&installer, dir.path());
    let c = connect(Era::Modern, &project).await;
    let (_, task, spine) = planned_from_the_methods_documents(&c, &project, SKILLS).await;
    the_epics_are_in_the_methods_shape(&project, &task);

    // One PRD (the method's own, not copied again) and one architecture (the spine's copy,
    // its front matter first) where the skills' globs look; the epics one epics file.
    let planning = folder(&project, "planning_artifacts");
    assert_eq!(globbed(&project, &planning, "prd"), ["prd.md"]);
    let copy = format!("architecture-{task}.md");
    assert_eq!(
        globbed(&project, &planning, "architecture"),
        [copy.as_str()]
    );
    assert_eq!(
        globbed(&project, &planning, "epic"),
        [format!("epics-{task}.md")]
    );
    let spine_text = std::fs::read_to_string(project.join(&spine)).unwrap();
    let front = &spine_text[..spine_text[4..].find("\n---\n").unwrap() + 9];
    let copied = std::fs::read_to_string(project.join(&planning).join(&copy)).unwrap();
    assert!(
        copied.starts_with(&format!("{front}<!-- A copy of ")),
        "{copied}"
    );
    c.close().await;
}

/// A ledger entry in the format the installed `bmad-build` appends deferred work in (its
/// review step's `defer` block), placeholders filled; the ledger's text.
fn ledger_entry(project: &Path) -> String {
    let step =
        std::fs::read_to_string(project.join(SKILLS).join("bmad-build/step-04-review.md")).unwrap();
    let at = step.find("**defer**").expect("the defer triage");
    let block = &step[at..];
    let start = block.find("```markdown\n").unwrap() + "```markdown\n".len();
    let end = start + block[start..].find("```").unwrap();
    let entry = regex::Regex::new(r"\{[^{}\n]*\}|<[^<>\n]+>")
        .unwrap()
        .replace_all(&block[start..end], "the todos table has no index");
    let lines: Vec<&str> = entry.lines().collect();
    let indent = lines[0].len() - lines[0].trim_start().len();
    let entry: Vec<&str> = lines.iter().map(|l| &l[indent.min(l.len())..]).collect();
    format!("# Deferred Work\n\n{}\n", entry.join("\n"))
}

/// The id a prompt gives the ledger's entry: the one after its bullet.
fn entry_id(prompt: &str) -> String {
    let at = prompt
        .find("\n## Deferred work\n")
        .expect("the ledger in the prompt");
    let line = prompt[at..]
        .lines()
        .find(|l| l.starts_with("- `"))
        .expect("an entry");
    line[3..11].to_string()
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_storys_first_prompt_shows_the_ledger_and_lessons_and_its_resolved_entry_is_checked_off()
{
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = installed(&installer, dir.path());
    let ledger = format!(
        "{}/deferred-work.md",
        folder(&project, "implementation_artifacts")
    );
    let was = ledger_entry(&project);
    std::fs::create_dir_all(project.join(&ledger).parent().unwrap()).unwrap();
    std::fs::write(project.join(&ledger), &was).unwrap();
    std::fs::create_dir_all(project.join(".bmad/lessons")).unwrap();
    let lesson = "The team todo app lost todos on restart: persist every todo before answering.";
    std::fs::write(
        project.join(".bmad/lessons/2026-11-20-0badcafe.md"),
        format!("---\nrole: dev\ncategory: PROCESS-SKIP\nsource: human\ntask: earlier-todo-task\nstage: review\ndate: 2026-11-20T10:00:00.000Z\n---\n{lesson}\n"),
    )
    .unwrap();
    let c = connect(Era::Modern, &project).await;
    let (_, task, _) = approved(&c, &project).await;
    let start = |sprint: u32| json!({"action": "start", "parent": task, "sprint": sprint, "cwd": project.to_str().unwrap()});
    let v = c.ok(start(1)).await;
    let prompt = v["role_prompt"].as_str().expect("the story's first prompt");
    assert!(prompt.contains("the todos table has no index"), "{prompt}");
    assert!(
        prompt.contains("persist every todo"),
        "the lesson: {prompt}"
    );
    let id = entry_id(prompt);
    let sid = v["session_id"].clone();
    let story = v["task_name"].as_str().unwrap().to_string();
    let dev = format!("{DEV}\nResolves deferred: {id}\n");
    for doc in [dev.as_str(), REVIEW, QA] {
        step(&c, &sid, json!({"action": "submit", "claude_result": doc})).await;
    }
    let now = std::fs::read_to_string(project.join(&ledger)).unwrap();
    assert!(now.starts_with(&was), "what was there stays: {now}");
    let added = &now[was.len()..];
    assert!(
        was.ends_with("\n\n") && added.starts_with(&format!("## Resolved in: {story} (")),
        "{added}"
    );
    assert!(
        added.contains("\n- [x] source_spec: `the todos table has no index` summary: the todos table has no index"),
        "{added}"
    );
    let v = c.ok(start(2)).await;
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(
        !prompt.contains("## Deferred work"),
        "checked off: {prompt}"
    );
    c.close().await;
}

/// A quick change or a fix taken to completion in `project`: the reply that completed it.
async fn completed(c: &Client, project: &Path, track: &str) -> Value {
    let v = c
        .ok(json!({"action": "start", "objective": format!("A {track} change to the export"), "track": track, "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let (stage, sections) = match track {
        "quick" => ("technical_spec", &SPEC_SECTIONS),
        _ => ("bug_report", &BUG_SECTIONS),
    };
    let doc = scored(stage, &document("The change", sections), 93);
    step(c, &sid, json!({"action": "submit", "claude_result": doc})).await;
    step(c, &sid, json!({"action": "confirm"})).await;
    let dev =
        format!("{DEV}\n## Failing Test\n`empty_export` failed before the fix, passes after it.\n");
    step(c, &sid, json!({"action": "submit", "claude_result": dev})).await;
    let v = step(
        c,
        &sid,
        json!({"action": "submit", "claude_result": format!("{REVIEW}Intent: met\n")}),
    )
    .await;
    assert_eq!(v["state"], "completed", "{track}: {v:#}");
    v
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_quick_change_or_a_fix_no_epic_names_is_offered_no_retrospective() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = installed(&installer, dir.path());
    let c = connect(Era::Modern, &project).await;
    for track in ["quick", "fix"] {
        let v = completed(&c, &project, track).await;
        let said = format!("{} {}", v["notices"], v["user_message"]);
        assert!(!said.contains("retrospective"), "{track}: {said}");
    }
    c.close().await;
}

/// The folders of `PATH` without a program `uv`, and `extra` first.
fn path_without_uv(extra: Option<&Path>) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).filter(|d| !d.join("uv").exists());
    std::env::join_paths(extra.map(Path::to_path_buf).into_iter().chain(dirs)).unwrap()
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_start_says_the_methods_skills_need_uv_when_it_is_not_on_path() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = installed(&installer, dir.path());
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let uv = bin.join("uv");
    std::fs::write(&uv, "#!/bin/sh\nexit 0\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for (extra, told) in [(None, true), (Some(bin.as_path()), false)] {
        // `bmad-mcp init`, which a project with the method runs once, says it too.
        let init = crate::support::bin(&project)
            .arg("init")
            .env("PATH", path_without_uv(extra))
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&init.stdout);
        assert!(init.status.success(), "{init:?}");
        assert_eq!(out.contains("no `uv` is on PATH"), told, "{out}");
        let mut cmd = command(&project);
        cmd.env("PATH", path_without_uv(extra));
        let c = connect_with(Era::Modern, cmd, &project).await;
        let v = c
            .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
            .await;
        let notices = v["notices"].to_string();
        assert_eq!(
            notices.contains("`bmad-build` begins with `uv run`")
                && notices.contains("no `uv` is on PATH"),
            told,
            "{notices}"
        );
        c.close().await;
    }
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_draft_taken_from_the_methods_file_is_not_taken_as_it_is_once_that_file_changes() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = installed(&installer, dir.path());
    let prd = format!("{}/prd.md", folder(&project, "planning_artifacts"));
    let text = written_in(
        &template(&project, SKILLS, "bmad-prd", "prd_template"),
        "a team's shared todo list",
    );
    std::fs::create_dir_all(project.join(&prd).parent().unwrap()).unwrap();
    std::fs::write(project.join(&prd), &text).unwrap();
    let c = connect(Era::Modern, &project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": project.to_str().unwrap()}))
        .await;
    let (sid, task) = (v["session_id"].clone(), v["task_name"].as_str().unwrap());
    let taken = json!({"action": "submit", "document_file": prd, "claude_result": "{\"quality_score\": 95}"});
    step(&c, &sid, taken).await;
    let ask = |project: &Path| {
        crate::support::terminal::in_terminal(project, &["confirm", task], "[y/N]", "n\n").1
    };
    let out = ask(&project);
    assert!(out.contains("This draft is the file `"), "{out}");
    assert!(out.contains("taken as it is"), "{out}");
    // The method's file edited after it was taken: the note no longer stands.
    std::fs::write(
        project.join(&prd),
        format!("{text}\nA line added by hand.\n"),
    )
    .unwrap();
    let out = ask(&project);
    assert!(
        out.contains(&format!("This draft was taken from the file `{prd}`"))
            && out.contains("that file has changed since"),
        "{out}"
    );
    assert!(!out.contains("taken as it is"), "{out}");
    c.close().await;
}
