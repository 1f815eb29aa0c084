//! Lessons through the binary: a rejection in one task becomes a lesson in `.bmad/lessons/`
//! that the next related task's prompt carries, an unrelated one does not; a retired lesson
//! is no longer recalled; lessons recorded in two clones merge in git; a damaged lesson
//! file is reported and skipped; the BMAD method's persona feeds the prompt and its files
//! are listed as MCP prompts; `bmad://project` tells what the project is; a story's first
//! prompt carries the lessons too.

use std::path::Path;
use std::process::Command;

use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
use serde_json::{json, Value};

use crate::support::{bin, connect, passing_prd, read_json, start_args, Client, Era};

const OFFLINE: &str = "The PRD ignored the offline requirement: field workers have no network, every screen must work offline and sync later.";
const UNRELATED: &str = "Invoices need PostgreSQL with row level security, never SQLite.";

/// Starts a task for `objective`, submits a passing PRD and has it rejected with
/// `feedback`; the reply to the rejection.
async fn rejected(c: &Client, project: &Path, objective: &str, feedback: &str) -> Value {
    let v = c.ok(start_args(project, objective)).await;
    let sid = v["session_id"].clone();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": feedback}))
        .await
}

fn lesson_files(project: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(project.join(".bmad/lessons"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A retire or restore, typed at a terminal (as the human does; without one it is refused).
fn at_terminal(project: &Path, args: &[&str]) -> (bool, String) {
    let (code, out) = crate::support::terminal::in_terminal(project, args, "", "");
    (code == 0, out)
}

/// A command run at a terminal, answering yes to its `question`.
fn said_yes(project: &Path, args: &[&str], question: &str) -> (bool, String) {
    let (code, out) = crate::support::terminal::in_terminal(project, args, question, "y\n");
    (code == 0, out)
}

fn terminal(project: &Path, args: &[&str]) -> (bool, String) {
    let out = bin(project).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn prompt_of(v: &Value) -> &str {
    v["role_prompt"].as_str().expect("a role prompt")
}

#[tokio::test]
async fn a_rejection_in_one_task_reaches_the_next_related_task_until_it_is_retired() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;

    let v = rejected(&c, project, "Build a notes app for field workers", OFFLINE).await;
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("Recorded a lesson for later tasks (WRONG-ASSUMPTION, po role)"),
        "{v}"
    );
    rejected(&c, project, "Build an invoicing service", UNRELATED).await;
    let files = lesson_files(project);
    assert_eq!(files.len(), 2, "{files:?}");
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(project.join(".bmad/lessons").join(f)).unwrap())
        .collect();
    let offline = texts
        .iter()
        .position(|t| t.contains("field workers have no network"))
        .unwrap();
    let text = &texts[offline];
    assert!(
        text.starts_with("---\nrole: po\ncategory: WRONG-ASSUMPTION\nsource: host\n"),
        "{text}"
    );
    assert!(
        text.contains("task: build-a-notes-app-for-field-workers\n"),
        "{text}"
    );
    assert!(
        text.contains("\ndigest: "),
        "the document it was about: {text}"
    );
    assert!(
        text.ends_with(&format!("---\n{OFFLINE}\n")),
        "the words as given: {text}"
    );
    let offline_id = files[offline].trim_end_matches(".md").to_string();

    // Task B, about an offline app: its PO prompt carries that lesson, not the other.
    let v = c
        .ok(start_args(project, "A recipe manager that works offline"))
        .await;
    let p = prompt_of(&v);
    assert!(p.contains("## Lessons from earlier tasks"), "{p}");
    assert!(p.contains("not requirements of this task"), "{p}");
    assert!(p.contains("field workers have no network"), "{p}");
    assert!(
        p.contains(&format!(
            "written by the assistant: `.bmad/lessons/{offline_id}.md`"
        )),
        "{p}"
    );
    assert!(
        !p.contains("PostgreSQL"),
        "an unrelated lesson stays out: {p}"
    );
    assert_eq!(v["lessons"], json!([offline_id]));
    let session = read_json(&project.join(format!(
        ".bmad-task/session-{}.json",
        v["session_id"].as_str().unwrap()
    )));
    assert_eq!(
        session["history"][0]["lessons"],
        json!([offline_id]),
        "the history says which lessons the prompt carried"
    );
    // A task about neither carries none.
    let v = c.ok(start_args(project, "A chess clock")).await;
    assert!(!prompt_of(&v).contains("Lessons from earlier tasks"));
    assert!(v.get("lessons").is_none());

    // The human retires it: kept in the folder, no longer recalled.
    let (ok, out) = terminal(project, &["lessons", "list"]);
    assert!(
        ok && out.contains(&offline_id) && out.contains("WRONG-ASSUMPTION"),
        "{out}"
    );
    let (ok, out) = terminal(project, &["lessons", "show", &offline_id]);
    assert!(ok && out.contains(OFFLINE), "{out}");
    // Not from a pipe (an assistant's tool call has no terminal): refused, nothing changed.
    let (ok, out) = terminal(project, &["lessons", "retire", &offline_id]);
    assert!(!ok && out.contains("stdin is not a terminal"), "{out}");
    let (_, out) = terminal(project, &["lessons", "list"]);
    assert!(out.contains(&offline_id), "still active: {out}");
    // At the terminal it shows the lesson and asks, as the other decisions do: no is no.
    let (code, out) = crate::support::terminal::in_terminal(
        project,
        &["lessons", "retire", &offline_id],
        "Retire it? [y/N]",
        "n\n",
    );
    assert!(
        code == 1 && out.contains(OFFLINE) && out.contains("Nothing changed."),
        "{out}"
    );
    let (_, out) = terminal(project, &["lessons", "list"]);
    assert!(out.contains(&offline_id), "still active: {out}");
    let (ok, out) = said_yes(project, &["lessons", "retire", &offline_id], "Retire it?");
    assert!(ok && out.contains("no longer recalled"), "{out}");
    assert!(
        std::fs::read_to_string(project.join(format!(".bmad/lessons/{offline_id}.md")))
            .unwrap()
            .contains("\nretired: ")
    );
    let v = c
        .ok(start_args(project, "An offline map for field workers"))
        .await;
    assert!(
        !prompt_of(&v).contains("field workers have no network"),
        "retired: {}",
        prompt_of(&v)
    );
    let (_, out) = terminal(project, &["lessons", "list"]);
    assert!(!out.contains(&offline_id), "{out}");
    let (_, out) = terminal(project, &["lessons", "list", "--all"]);
    assert!(
        out.contains(&offline_id) && out.contains("(retired)"),
        "{out}"
    );
    // Each retire or restore is the human's decision, kept in the file with its channel.
    let file = project.join(format!(".bmad/lessons/{offline_id}.md"));
    let text = std::fs::read_to_string(&file).unwrap();
    let decided = text
        .lines()
        .find(|l| l.starts_with("decided: "))
        .unwrap_or("");
    assert!(
        decided.starts_with("decided: retired by ") && decided.contains("in the terminal"),
        "{text}"
    );
    let (ok, out) = said_yes(project, &["lessons", "restore", &offline_id], "Restore it?");
    assert!(ok && out.contains("recalled into prompts again"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("\nretired: ") && text.contains("\ndecided: restored by "),
        "{text}"
    );
    let (_, out) = terminal(project, &["lessons", "list"]);
    assert!(out.contains(&offline_id), "active again: {out}");
    let (ok, out) = at_terminal(project, &["lessons", "retire", "2020-01-01-00000000"]);
    assert!(
        !ok && out.contains("no lesson `2020-01-01-00000000`"),
        "{out}"
    );
    c.close().await;
}

#[tokio::test]
async fn a_damaged_lesson_file_is_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Modern, project).await;
    rejected(&c, project, "Build a notes app for field workers", OFFLINE).await;
    let folder = project.join(".bmad/lessons");
    std::fs::write(
        folder.join("2026-01-01-deadbeef.md"),
        "no front matter at all",
    )
    .unwrap();
    std::fs::write(
        folder.join("2026-01-02-cafecafe.md"),
        b"---\nrole: po\ncategory: CC-FAIL\n---\n\xff\xfe",
    )
    .unwrap();

    let v = c.ok(start_args(project, "An offline recipe manager")).await;
    assert!(
        prompt_of(&v).contains("field workers have no network"),
        "the others still recalled"
    );
    let notices = v["notices"].to_string();
    assert!(notices.contains("A lesson file was skipped: .bmad/lessons/2026-01-01-deadbeef.md it does not start with a `---` line"), "{notices}");
    assert!(
        notices.contains(".bmad/lessons/2026-01-02-cafecafe.md is not UTF-8"),
        "{notices}"
    );
    let (ok, out) = terminal(project, &["lessons", "list"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("1 lesson(s)") && out.contains("2 lesson file(s) cannot be read"),
        "{out}"
    );
    assert!(
        out.contains("DAMAGED .bmad/lessons/2026-01-01-deadbeef.md"),
        "{out}"
    );
    c.close().await;
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn lessons_recorded_in_two_clones_merge_in_git() {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin.git");
    std::fs::create_dir(&origin).unwrap();
    git(&origin, &["init", "--bare", "-q"]);
    let seed = dir.path().join("seed");
    std::fs::create_dir(&seed).unwrap();
    git(&seed, &["init", "-q"]);
    std::fs::write(seed.join(".gitignore"), ".bmad-task/\n.claude/\n").unwrap();
    git(&seed, &["add", "."]);
    git(&seed, &["commit", "-qm", "start"]);
    git(
        &seed,
        &["push", "-q", origin.to_str().unwrap(), "HEAD:main"],
    );
    let mut clones = Vec::new();
    for (name, objective, feedback) in [
        ("alice", "Build a notes app for field workers", OFFLINE),
        ("bob", "Build an invoicing service", UNRELATED),
    ] {
        let clone = dir.path().join(name);
        git(dir.path(), &["clone", "-q", origin.to_str().unwrap(), name]);
        let c = connect(Era::Legacy, &clone).await;
        rejected(&c, &clone, objective, feedback).await;
        c.close().await;
        git(&clone, &["add", ".bmad/lessons"]);
        git(&clone, &["commit", "-qm", &format!("{name}'s lesson")]);
        clones.push(clone);
    }
    git(&clones[0], &["push", "-q", "origin", "HEAD:main"]);
    git(
        &clones[1],
        &["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"],
    );
    assert_eq!(
        lesson_files(&clones[1]).len(),
        2,
        "one file each, no conflict"
    );
    let (ok, out) = terminal(&clones[1], &["lessons", "list"]);
    assert!(ok && out.contains("2 lesson(s)"), "{out}");
    assert!(
        out.contains("build-a-notes-app-for-field-workers")
            && out.contains("build-an-invoicing-service"),
        "{out}"
    );
}

#[tokio::test]
async fn a_bmad_install_gives_its_persona_to_the_prompt_and_its_files_as_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir_all(project.join(".bmad-core/agents")).unwrap();
    std::fs::write(
        project.join(".bmad-core/agents/po.md"),
        "# Sarah\n\nYou are Sarah, a meticulous Product Owner who guards the team's release train.\n",
    )
    .unwrap();
    let skill = project.join(".claude/skills/bmad-agent-architect");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: bmad-agent-architect\n---\n# Winston\n\nRun `uv run` and stop and wait for the menu.\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("customize.toml"),
        "[agent]\nname = \"Winston\"\ntitle = \"Architect\"\nrole = \"You are Winston, the architect.\"\n[[agent.menu]]\ncode = \"CA\"\nskill = \"bmad-architecture\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".claude/skills/bmad-create-prd")).unwrap();
    std::fs::write(
        project.join(".claude/skills/bmad-create-prd/SKILL.md"),
        "# Create a PRD\n\n1. Ask.\n",
    )
    .unwrap();
    let c = connect(Era::Legacy, project).await;

    let v = c.ok(start_args(project, "Build a todo app")).await;
    assert_eq!(
        v["role_prompt_source"],
        "bmad-method file .bmad-core/agents/po.md"
    );
    let p = prompt_of(&v);
    assert!(
        p.starts_with("# Role: Product Owner"),
        "the built-in contract stays: {p}"
    );
    assert!(
        p.contains("You are Sarah, a meticulous Product Owner"),
        "{p}"
    );
    assert!(p.contains("`prd_draft`"), "the output keys stay: {p}");
    let sid = v["session_id"].clone();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(
        v["role_prompt_source"],
        "bmad-method file .claude/skills/bmad-agent-architect/customize.toml"
    );
    assert!(prompt_of(&v).contains("You are Winston, the architect."));
    assert!(
        !prompt_of(&v).contains("uv run"),
        "the persona, not the activation script"
    );

    // The project's own prompt still comes first.
    std::fs::create_dir_all(project.join(".bmad/prompts")).unwrap();
    std::fs::write(
        project.join(".bmad/prompts/po.md"),
        "# Role: our PO\n{{objective}}\n",
    )
    .unwrap();
    let v = c.ok(start_args(project, "Build a wiki")).await;
    assert_eq!(v["role_prompt_source"], "project file .bmad/prompts/po.md");

    let names: Vec<String> = c
        .peer()
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    for name in [
        "start",
        "bmad-agent-po",
        "bmad-agent-architect",
        "bmad-create-prd",
    ] {
        assert!(names.contains(&name.to_string()), "{name}: {names:?}");
    }
    let got = c
        .peer()
        .get_prompt(GetPromptRequestParams::new("bmad-agent-po"))
        .await
        .unwrap();
    let text = &got.messages[0].content.as_text().unwrap().text;
    assert!(
        text.contains("Adopt this persona") && text.contains("You are Sarah"),
        "{text}"
    );
    c.close().await;
}

#[tokio::test]
async fn the_project_context_tells_a_new_window_what_this_project_is() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::write(project.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let c = connect(Era::Modern, project).await;
    rejected(&c, project, "Build a notes app for field workers", OFFLINE).await;
    let v = c.ok(start_args(project, "Build a chess clock")).await;
    // Who owns a task, as a session records it: read where it is there.
    let file = project.join(format!(
        ".bmad-task/session-{}.json",
        v["session_id"].as_str().unwrap()
    ));
    let mut stored = read_json(&file);
    stored["owner"] = json!({"name": "Ada", "email": "ada@example.org"});
    stored["branch"] = json!("feature/clock");
    std::fs::write(&file, serde_json::to_string_pretty(&stored).unwrap()).unwrap();
    let status = c
        .ok(json!({"action": "status", "session_id": v["session_id"]}))
        .await;
    assert_eq!(status["project"]["stack"], json!(["Rust (Cargo.toml)"]));
    assert_eq!(status["project"]["lesson_files"], 1);
    assert_eq!(status["project"]["resource"], "bmad://project");

    let listed = c.peer().list_all_resources().await.unwrap();
    assert_eq!(listed[1].uri, "bmad://project");
    let r = c
        .peer()
        .read_resource(ReadResourceRequestParams::new("bmad://project"))
        .await
        .unwrap();
    let [ResourceContents::TextResourceContents { text, .. }] = &r.contents[..] else {
        panic!("one text content");
    };
    let context: Value = serde_json::from_str(text).unwrap();
    assert_eq!(context["stack"], json!(["Rust (Cargo.toml)"]));
    assert_eq!(context["checks"]["gates"], "auto");
    let open: Vec<&str> = context["open_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        open,
        ["build-a-chess-clock", "build-a-notes-app-for-field-workers"]
    );
    assert_eq!(context["open_tasks"][0]["owner"], "Ada <ada@example.org>");
    assert_eq!(context["open_tasks"][0]["branch"], "feature/clock");
    assert!(context["open_tasks"][1].get("owner").is_none());
    let decisions = context["recent_decisions"].to_string();
    assert!(
        decisions.contains("build-a-notes-app-for-field-workers po reject by the host"),
        "{decisions}"
    );
    assert_eq!(
        context["lessons"]["by_category"],
        json!({"WRONG-ASSUMPTION": 1})
    );
    assert!(context["lessons"]["recent"]["WRONG-ASSUMPTION"][0]
        .as_str()
        .unwrap()
        .contains("field workers have no network"));
    c.close().await;
}

#[tokio::test]
async fn the_host_remembers_and_recalls_through_the_tool_marked_as_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let v = c.ok(start_args(project, "Build a CSV importer")).await;
    let sid = v["session_id"].clone();
    let v = c
        .ok(json!({"action": "remember", "session_id": sid, "category": "hallucination",
            "lesson": "I cited a csv-stream crate that does not exist; check crate names before naming them."}))
        .await;
    let id = v["lessons"][0].as_str().unwrap().to_string();
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .contains("marked as written by the assistant"),
        "{v}"
    );
    let text = std::fs::read_to_string(project.join(format!(".bmad/lessons/{id}.md"))).unwrap();
    assert!(
        text.contains(
            "role: po\ncategory: HALLUCINATION\nsource: host\ntask: build-a-csv-importer\n"
        ),
        "{text}"
    );

    let v = c
        .ok(json!({"action": "recall", "cwd": project, "query": "which crate parses csv"}))
        .await;
    assert_eq!(v["lessons"], json!([id]));
    assert!(
        v["recalled"][0].as_str().unwrap().contains(
            "[HALLUCINATION, po role, task build-a-csv-importer, written by the assistant]"
        ),
        "{v}"
    );
    let v = c
        .ok(json!({"action": "recall", "cwd": project, "query": "kubernetes ingress"}))
        .await;
    assert_eq!(v["lessons"], json!([]));

    c.refused(
        json!({"action": "remember", "cwd": project, "category": "CC-FAIL", "lesson": "x"}),
        "missing_field",
    )
    .await;
    c.refused(
        json!({"action": "remember", "session_id": sid, "category": "OOPS", "lesson": "x"}),
        "invalid_argument",
    )
    .await;
    c.refused(json!({"action": "recall", "cwd": project}), "missing_field")
        .await;
    c.refused(
        json!({"action": "recall", "cwd": project, "query": "x", "lesson": "y"}),
        "invalid_argument",
    )
    .await;
    c.close().await;
}

/// A later task resolves an earlier lesson: its closing report names the lesson its own
/// prompts recalled on a `Resolves lesson:` line, and when the task completes the lesson
/// is retired with why. A lesson the task never recalled is left alone. A lesson of a
/// person's words (`source: human`) named on the same line stays active: the line only
/// proposes it, and the human retires it in their terminal.
#[tokio::test]
async fn a_task_that_resolves_a_recalled_lesson_retires_it_on_completion() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir_all(project.join(".bmad/lessons")).unwrap();
    let write_as = |id: &str, role: &str, source: &str, words: &str| {
        let text = format!("---\nrole: {role}\ncategory: PROCESS-SKIP\nsource: {source}\ntask: invoices\nstage: review\ndate: 2026-11-20T10:00:00.000Z\n---\n{words}\n");
        std::fs::write(project.join(format!(".bmad/lessons/{id}.md")), text).unwrap();
    };
    let write = |id: &str, role: &str, words: &str| write_as(id, role, "report", words);
    let empty = "2026-11-20-0badcafe";
    let other = "2026-11-20-0ddba11a";
    let theirs = "2026-11-20-0feedbee";
    write(empty, "dev", "Review Status: Fail. Exporting an empty invoice list crashed the CSV export with an index out of bounds");
    write(
        other,
        "po",
        "Holiday requests need the manager's approval first",
    );
    write_as(
        theirs,
        "dev",
        "human",
        "An empty invoice list must still export the CSV header, as accounting imports it",
    );
    let c = connect(Era::Legacy, project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Fix the CSV export crash on an empty invoice list", "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let call = |args: Value| {
        let mut args = args;
        args["session_id"] = sid.clone();
        c.ok(args)
    };
    let sections = [
        "Change",
        "Approach",
        "Files",
        "Acceptance Criteria",
        "Risks",
    ];
    let spec = crate::support::document("Technical Spec: empty export", &sections);
    call(json!({"action": "submit", "claude_result": crate::support::scored("spec_updated", &spec, 92)})).await;
    let v = call(json!({"action": "confirm"})).await;
    assert_eq!(v["stage"], "dev", "{v:#}");
    let dev = "# Implementation Report\n\n## Summary\nAn empty list exports a header only.\n";
    call(json!({"action": "submit", "claude_result": dev})).await;
    let s = read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())));
    let recalled: Vec<&str> = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lessons"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    assert!(recalled.contains(&empty), "{recalled:?}");
    assert!(recalled.contains(&theirs), "{recalled:?}");
    assert!(!recalled.contains(&other), "{recalled:?}");
    let review = format!("# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\nIntent: met\nResolves lesson: {empty}, {other}, {theirs}\n");
    let v = call(json!({"action": "submit", "claude_result": review})).await;
    assert_eq!(v["state"], "completed", "{v:#}");
    // At a task's end what the notices would say is in `user_message`, for the human.
    assert!(
        v["user_message"]
            .to_string()
            .contains(&format!("Retired lesson {empty}")),
        "{v:#}"
    );
    let text = std::fs::read_to_string(project.join(format!(".bmad/lessons/{empty}.md"))).unwrap();
    assert!(
        text.contains("retired: ") && text.contains("(resolved by task `"),
        "{text}"
    );
    let text = std::fs::read_to_string(project.join(format!(".bmad/lessons/{other}.md"))).unwrap();
    assert!(
        !text.contains("retired:"),
        "never recalled, so not retired: {text}"
    );
    // A person's lesson: proposed, not retired; the human retires it.
    let said = v["user_message"].to_string();
    assert!(
        said.contains(&format!("lesson {theirs}"))
            && said.contains("stays active until the human retires it"),
        "{said}"
    );
    let path = project.join(format!(".bmad/lessons/{theirs}.md"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("retired:"), "still active: {text}");
    let (code, out) = crate::support::terminal::in_terminal(
        project,
        &["lessons", "retire", theirs],
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("retired: ") && text.contains("decided: retired by"),
        "{text}"
    );
    c.close().await;
}

/// A story's first prompt (its `start`, without the BMAD method) carries the lessons of
/// earlier tasks for development, as the prompts after it do.
#[tokio::test]
async fn a_storys_first_prompt_carries_the_lessons() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir_all(project.join(".bmad/lessons")).unwrap();
    let words = "The team todo app lost todos on restart: persist every todo before answering.";
    std::fs::write(
        project.join(".bmad/lessons/2026-11-20-0badcafe.md"),
        format!("---\nrole: dev\ncategory: PROCESS-SKIP\nsource: human\ntask: earlier-todo-task\nstage: review\ndate: 2026-11-20T10:00:00.000Z\n---\n{words}\n"),
    )
    .unwrap();
    let c = connect(Era::Modern, project).await;
    let (_, task, _) = crate::method_plan::approved(&c, project).await;
    let v = c
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": project.to_str().unwrap()}))
        .await;
    let prompt = v["role_prompt"].as_str().expect("the story's first prompt");
    assert!(prompt.contains("persist every todo"), "{prompt}");
    assert!(!prompt.contains("## Deferred work"), "no method, no ledger");
    c.close().await;
}
