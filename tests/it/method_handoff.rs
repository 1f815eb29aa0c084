//! A story handed over both ways between bmad-mcp and the pinned `bmad-method`'s `bmad-build`,
//! in a real codex install: a story bmad-mcp starts leaves `spec-<key>.md` in the shape of the
//! installed `spec-template.md`, with a status the installed `bmad-build` step 1 recognises and
//! resumes, following the story (a Fail review sent back returns it to `in-progress`, and the
//! method's `sprint_plan.py` agrees), never written over once the method or a person changed
//! it; a story the method's build holds (its spec `in-progress`) is shown by `status`, the
//! CLI's `status` and `list`, and its `start` is refused as `sprint_taken`; a spec that is a
//! link, a FIFO or too large is not read, and said. Without an install no spec is written.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::method_plan::{approved, folder, sprint_plan, status_of, step, DEV, REVIEW};
use crate::support::method::{install, installer, written_in};
use crate::support::{bin, connect, files_under, Client, Era, ROOT};

const SKILLS: &str = ".agents/skills";

/// The installed `bmad-build`'s file `name`.
fn build_skill(project: &Path, name: &str) -> String {
    std::fs::read_to_string(project.join(SKILLS).join("bmad-build").join(name)).unwrap()
}

/// The front matter of a Markdown file, parsed by the pinned `ruamel.yaml` as the method's
/// scripts parse YAML, as JSON.
fn front_matter(text: &str) -> Value {
    let rest = text.strip_prefix("---\n").expect("front matter first");
    let yaml = &rest[..rest.find("\n---\n").expect("front matter closed")];
    let python = PathBuf::from(ROOT).join("target/py-venv/bin/python");
    let out = Command::new(python)
        .args([
            "-c",
            "import sys, json; from ruamel.yaml import YAML; print(json.dumps(YAML(typ='safe').load(sys.stdin.read()), default=str))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut p| {
            use std::io::Write;
            p.stdin.take().unwrap().write_all(yaml.as_bytes())?;
            p.wait_with_output()
        })
        .expect("the venv's python runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {yaml}"))
}

/// The `## ` headings of `text`, in order.
fn headings(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_string)
        .collect()
}

/// The spec bmad-mcp wrote for sprint 1, checked against the installed skill's own text:
/// every front-matter key of its template, a status its step 1 recognises, the template's
/// frozen intent block and its sections in its order. Returns the parsed front matter.
pub(crate) fn spec_as_the_skill_reads_it(project: &Path, path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let template = build_skill(project, "spec-template.md");
    let ours = front_matter(&text);
    let theirs = front_matter(&template);
    for key in theirs.as_object().unwrap().keys() {
        assert!(ours.get(key).is_some(), "`{key}` of the template in {text}");
    }
    let step_one = build_skill(project, "step-01-clarify-and-route.md");
    let recognised = step_one
        .lines()
        .find(|l| l.contains("recognized value:"))
        .expect("step 1 names the statuses it resumes");
    let status = ours["status"].as_str().unwrap();
    assert!(
        recognised.contains(&format!(" {status},"))
            || recognised.contains(&format!(" {status})"))
            || recognised.contains(&format!("or {status}")),
        "`{status}` in {recognised}"
    );
    let frozen = template
        .lines()
        .find(|l| l.starts_with("<frozen-after-approval"))
        .unwrap();
    assert!(text.contains(&format!("\n{frozen}\n")), "{text}");
    let wanted: Vec<String> = headings(&template)
        .into_iter()
        .filter(|h| headings(&text).contains(h))
        .collect();
    assert_eq!(
        headings(&text),
        wanted,
        "the template's sections in its order"
    );
    for h in [
        "Intent",
        "Code Map",
        "Tasks & Acceptance",
        "Implementation Notes",
    ] {
        assert!(wanted.iter().any(|w| w == h), "{h} in {text}");
    }
    assert!(
        text.contains("**Problem:** ") && text.contains("**Approach:** "),
        "{text}"
    );
    assert!(
        text.contains("\n- Given "),
        "Given/When/Then criteria: {text}"
    );
    ours
}

/// The method's own `sprint_plan.py` on the sprint status beside the spec: valid, and its
/// story counts.
fn the_methods_script(project: &Path) -> Value {
    let status = format!(
        "{}/sprint-status.yaml",
        folder(project, "implementation_artifacts")
    );
    let valid = sprint_plan(project, SKILLS, &["validate", "--status-file", &status]);
    assert_eq!(valid["valid"], true, "{valid}");
    sprint_plan(project, SKILLS, &["status", "--status-file", &status])["stories"].clone()
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn a_story_of_bmad_mcp_leaves_the_spec_the_methods_build_resumes() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(&installer, &project, "codex");
    let c = connect(Era::Modern, &project).await;
    let (_, task, _) = approved(&c, &project).await;
    let spec = project
        .join(folder(&project, "implementation_artifacts"))
        .join("spec-1-1-todos-api.md");
    assert!(!spec.exists(), "no spec before the story starts");
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": project.to_str().unwrap()}))
        .await;
    assert!(
        v["notices"].to_string().contains("spec-1-1-todos-api.md"),
        "{v:#}"
    );
    let sid = v["session_id"].clone();
    let front = spec_as_the_skill_reads_it(&project, &spec);
    assert_eq!(front["status"], "in-progress");
    assert_eq!(front["title"], "Todos API");
    assert_eq!(front["deferred"], json!([]));
    assert_eq!(the_methods_script(&project), json!({"in-progress": 2}));

    step(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    assert_eq!(
        spec_as_the_skill_reads_it(&project, &spec)["status"],
        "in-review"
    );
    let failing = REVIEW.replace("Review Status: Pass", "Review Status: Fail");
    step(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": failing}),
    )
    .await;
    let v = step(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Guard the empty title."}),
    )
    .await;
    assert_eq!(v["stage"], "dev", "{v:#}");
    let front = spec_as_the_skill_reads_it(&project, &spec);
    assert_eq!(
        (
            front["status"].as_str(),
            front["review_loop_iteration"].as_u64()
        ),
        (Some("in-progress"), Some(1)),
        "sent back as the method's review loops back"
    );
    assert_eq!(status_of(&project, "1-1-todos-api"), "in-progress");
    assert_eq!(the_methods_script(&project), json!({"in-progress": 2}));

    // The method's /bmad-build resumes it (step 3 records its baseline): from then on the
    // spec is the method's, and the story's next change leaves it as it is, and says so.
    let text = std::fs::read_to_string(&spec).unwrap();
    let resumed = text.replacen(
        "route: 'dispatch'\n",
        "route: 'dispatch'\nbaseline_commit: 'NO_VCS'\n",
        1,
    );
    assert_ne!(text, resumed);
    std::fs::write(&spec, &resumed).unwrap();
    let v = step(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), resumed);
    assert!(
        v["notices"]
            .to_string()
            .contains("is not as bmad-mcp wrote it"),
        "{v:#}"
    );
    c.close().await;
}

/// A spec for sprint 2 as the method's `bmad-build` leaves one once step 3 began building it:
/// the installed template filled in, its status `in-progress`.
pub(crate) fn the_methods_spec(project: &Path) -> (PathBuf, String) {
    let template = build_skill(project, "spec-template.md");
    // Its words where the template has a placeholder in capitals (`ONE_TO_TWO_SENTENCES`).
    let filled = written_in(&template, "the list page");
    let capitals = regex::Regex::new(r"\b[A-Z]{2,}(?:_[A-Z]+)*\b").unwrap();
    let text = capitals.replace_all(&filled, "the list page").replacen(
        "status: 'draft'",
        "status: 'in-progress'",
        1,
    );
    assert!(text.contains("status: 'in-progress'"), "{text}");
    let path = project
        .join(folder(project, "implementation_artifacts"))
        .join("spec-1-2-list-page-sharing.md");
    (path, text)
}

/// What the parent's `status` says, and the CLI's `status` and `list` print.
async fn shown(c: &Client, project: &Path, task: &str) -> (String, Vec<String>) {
    let v = c.ok(json!({"action": "status", "task_name": task})).await;
    let printed = [vec!["status", task], vec!["list"]]
        .into_iter()
        .map(|args| {
            let out = bin(project).args(&args).output().unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        })
        .collect();
    (v["notices"].to_string(), printed)
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn a_story_the_methods_build_holds_is_shown_and_its_start_refused() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(&installer, &project, "codex");
    let c = connect(Era::Modern, &project).await;
    let (_, task, _) = approved(&c, &project).await;
    let (path, text) = the_methods_spec(&project);
    std::fs::write(&path, &text).unwrap();

    let held = "Held by the BMAD method: sprint 2 (`1-2-list-page-sharing`) is `in-progress`";
    let (notices, printed) = shown(&c, &project, &task).await;
    assert!(notices.contains(held), "{notices}");
    assert!(
        !notices.contains("sprint 1 (`"),
        "sprint 1 is no one's yet: {notices}"
    );
    for out in &printed {
        assert!(out.contains(held), "{out}");
    }
    let start =
        json!({"action": "start", "parent": task, "sprint": 2, "cwd": project.to_str().unwrap()});
    let v = c.refused(start.clone(), "sprint_taken").await;
    assert!(
        v["error"]["message"]
            .to_string()
            .contains("spec-1-2-list-page-sharing.md"),
        "{v:#}"
    );
    // Sprint 1 is free: its story starts.
    c.ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": project.to_str().unwrap()}))
        .await;

    // A spec the server cannot read safely is not read, and said: a link, a FIFO, a huge one.
    std::fs::remove_file(&path).unwrap();
    let outside = dir.path().join("elsewhere.md");
    std::fs::write(&outside, &text).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let (notices, _) = shown(&c, &project, &task).await;
    assert!(
        notices.contains("Not read, so whether the BMAD method holds the story is not known"),
        "{notices}"
    );
    assert!(!notices.contains(held), "{notices}");
    std::fs::remove_file(&path).unwrap();
    let fifo = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(fifo.success());
    let (notices, _) = shown(&c, &project, &task).await;
    assert!(notices.contains("Not read"), "{notices}");
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, format!("{text}{}", "x".repeat(300 * 1024))).unwrap();
    let (notices, _) = shown(&c, &project, &task).await;
    assert!(notices.contains("Not read"), "{notices}");
    // Unheld once the method's status leaves it to planning: the start goes on.
    std::fs::write(
        &path,
        text.replacen("status: 'in-progress'", "status: 'ready-for-dev'", 1),
    )
    .unwrap();
    let (notices, _) = shown(&c, &project, &task).await;
    assert!(!notices.contains("Held by the BMAD method"), "{notices}");
    // The story of bmad-mcp that builds it reads the method's spec as the project's text.
    let v = c.ok(start).await;
    let prompt = v["role_prompt"].as_str().unwrap();
    for part in [
        "## The BMAD method's spec of this story",
        "(status `ready-for-dev`)",
        "> **Problem:** the list page",
        "Acceptance criteria:\n> - Given the list page",
    ] {
        assert!(prompt.contains(part), "{part:?} in {prompt}");
    }
    assert!(
        v["notices"]
            .to_string()
            .contains("is not as bmad-mcp wrote it"),
        "the method's spec is left as it is: {v:#}"
    );
    c.close().await;
}

#[tokio::test]
async fn without_the_method_a_story_writes_no_spec() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let c = connect(Era::Modern, &project).await;
    let (_, task, _) = approved(&c, &project).await;
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": project.to_str().unwrap()}))
        .await;
    step(
        &c,
        &v["session_id"],
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    let specs: Vec<String> = files_under(&project)
        .into_iter()
        .filter(|f| f.rsplit('/').next().is_some_and(|n| n.starts_with("spec-")))
        .collect();
    assert!(specs.is_empty(), "{specs:?}");
    assert!(!v["notices"].to_string().contains("spec-"), "{v:#}");
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package and ruamel.yaml: run ./scripts/test"]
async fn a_story_the_method_built_is_accepted_in_one_step_after_the_checks() {
    use crate::support::terminal::in_terminal;
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("proj");
    install(&installer, &project, "codex");
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    let config = "[checks]\ntest = \"echo all 4 tests passed; echo ran >> checks-ran.txt\"\n";
    std::fs::write(project.join(".bmad/config.toml"), config).unwrap();
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let c = connect(Era::Modern, &project).await;
    let (parent, task, _) = approved(&c, &project).await;
    let (path, text) = the_methods_spec(&project);
    std::fs::write(&path, &text).unwrap();
    let key = "1-2-list-page-sharing";

    // While the method builds it, there is nothing to accept.
    let (code, out) = in_terminal(&project, &["accept", &task, "2"], "[y/N]", "y\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("still `in-progress`"), "{out}");
    assert!(!project.join("checks-ran.txt").exists(), "{out}");

    // Built: its spec `done` and its story `review`, as the method's step 5 leaves them.
    std::fs::write(
        &path,
        text.replacen("status: 'in-progress'", "status: 'done'", 1),
    )
    .unwrap();
    let status = project
        .join(folder(&project, "implementation_artifacts"))
        .join("sprint-status.yaml");
    let before = std::fs::read_to_string(&status).unwrap();
    let reviewed = before.replace(
        &format!("  {key}: in-progress"),
        &format!("  {key}: review"),
    );
    std::fs::write(&status, &reviewed).unwrap();
    let (code, out) = in_terminal(&project, &["accept", &task, "2"], "[y/N]", "n\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Not accepted"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&status).unwrap(),
        reviewed,
        "a no changes nothing"
    );
    let (code, out) = in_terminal(&project, &["accept", &task, "2"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    for shown in [
        "**Problem:** the list page",
        "test: passed",
        "Sprint 2 of `build-a-team-todo-app`, built by the BMAD method, is accepted",
    ] {
        assert!(out.contains(shown), "{shown:?} in {out}");
    }
    assert_eq!(
        std::fs::read_to_string(project.join("checks-ran.txt")).unwrap(),
        "ran\nran\n",
        "the project's checks ran at each showing"
    );
    assert_eq!(status_of(&project, key), "done");
    assert_eq!(
        status_of(&project, "epic-1"),
        "in-progress",
        "the parent's final QA is to come"
    );
    let v = c
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    assert!(
        !v["notices"].to_string().contains("Held by the BMAD method"),
        "{v:#}"
    );
    let accepted = v["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sprint"] == 2)
        .cloned()
        .unwrap_or_default();
    assert_eq!(accepted["state"], "completed", "{v:#}");
    c.close().await;
}
