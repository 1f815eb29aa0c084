//! Beginning from what the BMAD method made: in real installs of the pinned `bmad-method`
//! (for Claude Code and Codex), a PRD and an architecture placed where the method's own
//! skills write them are named by `start` and by the stage that turns to them, and a
//! submission naming one (`document_file`) reaches the gate with that document's text,
//! recorded with its SHA-256 and shown to the human as the file it is, with who last
//! changed it as git and the work tree show it. An incomplete one stops at the human, and
//! a model's rewrite of it is named as one; the server's own copies are never offered; a link (symbolic or hard), an
//! oversized file or a path that is not the method's is refused with the reason.
//!
//! Without the package (`target/npm/bmad-method.skipped` says why) each test prints that
//! reason and reports itself skipped; a bare `cargo test` ignores them.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::method::{install, installer};
use crate::support::terminal::in_terminal;
use crate::support::{
    connect, document, read_json, start_args, Client, Era, ARCHITECTURE_SECTIONS, PRD_SECTIONS,
};

/// Where the installer's config puts planning documents, relative to the project.
fn planning(project: &Path) -> String {
    let config = std::fs::read_to_string(project.join("_bmad/bmm/config.yaml")).unwrap();
    config
        .lines()
        .find_map(|l| l.strip_prefix("planning_artifacts: "))
        .expect("planning_artifacts in the install's config")
        .trim_matches('"')
        .replace("{project-root}/", "")
}

/// A PRD as the method's PRD skill leaves it: YAML front matter, then the document.
fn method_prd(sections: &[&str]) -> String {
    format!(
        "---\ntitle: Todo app\nstatus: final\ncreated: 2026-11-20\nupdated: 2026-11-21\n---\n\n{}",
        document("PRD: Todo app", sections)
    )
}

/// `rel` written in `project` (its folders made).
fn place(project: &Path, rel: &str, text: &str) -> PathBuf {
    let path = project.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(text.as_bytes()))
}

fn notices(v: &Value) -> String {
    v["notices"].to_string()
}

fn session(project: &Path, v: &Value) -> Value {
    let id = v["session_id"].as_str().unwrap();
    read_json(&project.join(format!(".bmad-task/session-{id}.json")))
}

/// A project with the method installed for `tool`, its planning folder, and a client.
async fn installed(installer: &Path, tool: &str) -> (tempfile::TempDir, PathBuf, String, Client) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    install(installer, &project, tool);
    let folder = planning(&project);
    let c = connect(Era::Legacy, &project).await;
    (dir, project, folder, c)
}

/// `start` says nothing of the method's documents until its PRD is in the planning folder,
/// then names that PRD and never the server's own copies beside it: the PRD's text, its
/// path and the reply of the second `start`.
async fn prd_offered_by_start(
    c: &Client,
    project: &Path,
    folder: &str,
    tool: &str,
) -> (String, String, Value) {
    // Without the method's documents, `start` says nothing of them.
    let v = c.ok(start_args(project, "Build a notes app")).await;
    assert!(!notices(&v).contains("document_file"), "{tool}: {v:#}");

    let prd = method_prd(&PRD_SECTIONS);
    place(project, &format!("{folder}/prd.md"), &prd);
    // The server's own copy of another task's PRD, beside it: never offered.
    let ours = format!("<!-- A copy of .claude/specs/x/01-product-requirements.md, the prd confirmed in bmad-mcp task `x`. -->\n\n{prd}");
    place(project, &format!("{folder}/prd-old-task.md"), &ours);
    place(project, &format!("{folder}/prds/prd-app-1/prd.md"), &ours);

    let v = c.ok(start_args(project, "Build a todo app")).await;
    let said = notices(&v);
    let path = format!("{folder}/prd.md");
    assert!(
        said.contains(&format!(
            "The BMAD method's PRD is in this project: {path} ("
        )) && said.contains(&format!("document_file: \\\"{path}\\\"")),
        "{tool}: {said}"
    );
    assert!(said.contains(" bytes, changed 20"), "size and time: {said}");
    assert!(
        !said.contains("prd-old-task") && !said.contains("prd-app-1"),
        "{said}"
    );
    (prd, path, v)
}

/// Submitting the PRD by `document_file` takes the file's whole text as the PO draft,
/// recorded with its SHA-256 and the score given: the submission's reply.
async fn po_draft_from_the_file(
    c: &Client,
    project: &Path,
    tool: &str,
    sid: &Value,
    path: &str,
    prd: &str,
) -> Value {
    let meta = json!({"quality_score": 93}).to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "document_file": path, "claude_result": meta}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{tool}: {v:#}");
    assert!(
        notices(&v).contains(&format!(
            "The draft is the file `{path}` where the BMAD method leaves its documents"
        )),
        "{v:#}"
    );
    let s = session(project, &v);
    let po = &s["stages"]["po"];
    assert_eq!(po["from_file"]["path"], path, "{po:#}");
    assert_eq!(po["from_file"]["sha256"], sha256_hex(prd));
    assert_eq!(po["score"], 93);
    let kept = project.join(po["final_result_ref"]["file_path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(kept).unwrap(),
        prd,
        "the file's text, whole"
    );
    v
}

/// The human confirms in the terminal and is told whose draft it is; the host, which did
/// not read the terminal's reply, is offered the method's architecture by `status`.
async fn confirmed_in_the_terminal(
    c: &Client,
    project: &Path,
    folder: &str,
    sid: &Value,
    path: &str,
    v: &Value,
) {
    // The human, in the terminal, is told whose draft it is.
    let task = v["task_name"].as_str().unwrap();
    let (code, out) = in_terminal(project, &["confirm", task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("This draft is the file `") && out.contains(path),
        "{out}"
    );
    // The host did not read the terminal's reply: its `status` makes the offer.
    let arch = format!("{folder}/architecture.md");
    place(
        project,
        &arch,
        &document("Architecture", &ARCHITECTURE_SECTIONS),
    );
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(v["stage"], "architect", "{v:#}");
    let said = notices(&v);
    assert!(
        said.contains("The BMAD method's architecture is in this project") && said.contains(&arch),
        "{said}"
    );
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_method_made_prd_is_named_by_start_and_taken_as_the_po_draft() {
    let Some(installer) = installer() else { return };
    for tool in ["claude-code", "codex"] {
        let (_dir, project, folder, c) = installed(&installer, tool).await;
        let (prd, path, v) = prd_offered_by_start(&c, &project, &folder, tool).await;

        let sid = v["session_id"].clone();
        let v = po_draft_from_the_file(&c, &project, tool, &sid, &path, &prd).await;

        // Waiting for the human, a submission is refused as such, whatever the file.
        let again = json!({"action": "submit", "session_id": sid, "document_file": "README.md"});
        c.refused(again, "invalid_state").await;

        if tool == "claude-code" {
            confirmed_in_the_terminal(&c, &project, &folder, &sid, &path, &v).await;
        } else {
            architecture_from_the_method(&c, &project, &folder, &sid).await;
        }
        c.close().await;
    }
}

/// After the PRD, the architect stage is offered the method's architecture (a
/// `bmad-architecture` run folder's spine) and takes it.
async fn architecture_from_the_method(c: &Client, project: &Path, folder: &str, sid: &Value) {
    let spine = format!(
        "---\nname: todo\ntype: architecture-spine\nstatus: final\n---\n\n{}",
        document("Architecture Spine: todo", &ARCHITECTURE_SECTIONS)
    );
    let path = format!("{folder}/architecture/architecture-todo-2026-11-21/ARCHITECTURE-SPINE.md");
    place(project, &path, &spine);
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(v["stage"], "architect", "{v:#}");
    let said = notices(&v);
    assert!(
        said.contains("The BMAD method's architecture is in this project") && said.contains(&path),
        "{said}"
    );
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "document_file": path}))
        .await;
    let s = session(project, &v);
    assert_eq!(
        s["stages"]["architect"]["from_file"]["sha256"],
        sha256_hex(&spine)
    );
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert!(
        ["awaiting_confirmation", "refining", "clarifying"].contains(&v["state"].as_str().unwrap()),
        "{v:#}"
    );
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn an_incomplete_method_prd_stops_at_the_human_and_its_rewrite_is_said_to_be_one() {
    let Some(installer) = installer() else { return };
    let (_dir, project, folder, c) = installed(&installer, "claude-code").await;
    // The 6.12 PRD skill's own headings, the first three of its template's ten.
    let prd = method_prd(&["0. Document Purpose", "1. Vision", "2. Target User"]);
    let path = format!("{folder}/prds/prd-todo-2026-11-21/prd.md");
    place(&project, &path, &prd);
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    assert!(notices(&v).contains(&path), "{v:#}");
    let sid = v["session_id"].clone();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "document_file": path, "claude_result": "{\"quality_score\": 95}"}))
        .await;
    // Below the gate, the file goes to the human as it is.
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let s = session(&project, &v);
    let po = &s["stages"]["po"];
    assert_eq!(po["gate_passed"], false);
    // Checked for the installed template's sections, not the server's own.
    let missing = po["missing_sections"].to_string();
    assert!(
        missing.contains("3. Glossary") && !missing.contains("Functional Requirements"),
        "{missing}"
    );
    assert_eq!(po["from_file"]["path"], path.as_str());
    // Sent back, the model revises it: its draft is its own, and the file it replaces is
    // named.
    let v = c
        .ok(json!({"action": "reject", "session_id": sid, "feedback": "Write the rest of it."}))
        .await;
    assert_eq!(v["state"], "refining", "{v:#}");
    let revised = crate::support::passing_prd();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": revised}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let s = session(&project, &v);
    let po = &s["stages"]["po"];
    assert!(po.get("from_file").is_none(), "{po:#}");
    assert_eq!(po["rewrites"]["path"], path.as_str(), "{po:#}");
    assert_eq!(std::fs::read_to_string(project.join(&path)).unwrap(), prd);
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_link_an_oversized_file_our_copy_or_another_path_is_refused_with_the_reason() {
    let Some(installer) = installer() else { return };
    let (dir, project, folder, c) = installed(&installer, "codex").await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let before = session(&project, &v);
    let path = format!("{folder}/prd.md");
    let submit = |file: &str| json!({"action": "submit", "session_id": sid, "document_file": file});
    let refusal = |v: &Value| v["error"]["message"].as_str().unwrap().to_string();

    std::fs::create_dir_all(project.join(&folder)).unwrap();
    let outside = dir.path().join("elsewhere.md");
    std::fs::write(&outside, method_prd(&PRD_SECTIONS)).unwrap();
    std::os::unix::fs::symlink(&outside, project.join(&path)).unwrap();
    let v = c.refused(submit(&path), "invalid_argument").await;
    assert!(
        refusal(&v).contains("field `document_file`") && refusal(&v).contains("symbolic link"),
        "{v:#}"
    );

    std::fs::remove_file(project.join(&path)).unwrap();
    place(&project, &path, &"x".repeat(1024 * 1024 + 1));
    let v = c.refused(submit(&path), "invalid_argument").await;
    assert!(refusal(&v).contains("over the 1048576 bytes"), "{v:#}");

    let copy = format!("{folder}/prds/prd-x/prd.md");
    place(
        &project,
        &copy,
        "<!-- A copy of x, the prd confirmed in bmad-mcp task `x`. -->\n# PRD\n",
    );
    let v = c.refused(submit(&copy), "invalid_argument").await;
    assert!(refusal(&v).contains("the server's own copy"), "{v:#}");

    place(&project, "README.md", &method_prd(&PRD_SECTIONS));
    let v = c.refused(submit("README.md"), "invalid_argument").await;
    assert!(
        refusal(&v).contains("is not where the BMAD method leaves a PRD"),
        "{v:#}"
    );
    let v = c
        .refused(
            submit(&format!("{folder}/missing/../prd.md")),
            "invalid_argument",
        )
        .await;
    assert!(refusal(&v).contains("document_file"), "{v:#}");

    let after = session(&project, &json!({"session_id": sid}));
    assert_eq!(before, after, "a refusal changes nothing");
    c.close().await;
}

/// A project in git with the least of a BMAD method install the server reads (its config,
/// naming `plans` the planning folder, and a skill's folder), no package needed; a client.
async fn minimal_install() -> (tempfile::TempDir, PathBuf, Client) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    place(
        &project,
        "_bmad/bmm/config.yaml",
        "planning_artifacts: \"{project-root}/plans\"\n",
    );
    std::fs::create_dir_all(project.join(".claude/skills/bmad-prd")).unwrap();
    let git = |args: &[&str]| crate::support::git(&project, args);
    git(&["init", "-q"]);
    git(&["config", "user.name", "Grace Hopper"]);
    git(&["config", "user.email", "grace@example.org"]);
    git(&["add", "_bmad"]);
    git(&["commit", "-qm", "the method"]);
    let c = connect(Era::Legacy, &project).await;
    (dir, project, c)
}

/// The PRD an assistant writes in the method's place just after the task began, then
/// submits by `document_file` (as `./plans/prd.md`, the project's folder named): taken,
/// and the human is told truly who wrote it: not committed, written on this machine after
/// the task began, a person or the assistant; never that the assistant did not write it.
/// Once a person commits it, the commit's author is named.
#[tokio::test]
async fn a_file_draft_names_its_author_as_git_and_the_work_tree_show_it() {
    let (_dir, project, c) = minimal_install().await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let prd = method_prd(&PRD_SECTIONS);
    place(&project, "plans/prd.md", &prd);
    let meta = json!({"quality_score": 93}).to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "document_file": "./plans/prd.md", "claude_result": meta}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    let said = notices(&v);
    assert!(
        said.contains("not committed: written on this machine after this task began")
            && said.contains("by a person or by the assistant"),
        "{said}"
    );
    assert!(!said.contains("not written by the assistant"), "{said}");
    let po = &session(&project, &v)["stages"]["po"];
    assert_eq!(po["from_file"]["path"], "plans/prd.md", "{po:#}");
    let task = v["task_name"].as_str().unwrap();
    let (code, out) = in_terminal(
        &project,
        &["reject", task, "--feedback", "Again."],
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("not committed: written on this machine"),
        "{out}"
    );

    // A person commits it: the commit's author, as git records it.
    crate::support::git(&project, &["add", "plans/prd.md"]);
    crate::support::git(&project, &["commit", "-qm", "the PRD"]);
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "document_file": "plans/prd.md", "claude_result": meta}))
        .await;
    let said = notices(&v);
    assert!(
        said.contains("last committed in ") && said.contains("by Grace Hopper <grace@example.org>"),
        "{said}"
    );
    c.close().await;
}

/// A `prd.md` in the method's place that is a hard link to a file outside the project
/// (written through that other name, it would change under the human's decision) is
/// refused as a link is, and not offered.
#[tokio::test]
async fn a_hard_linked_method_document_is_refused_and_not_offered() {
    let (dir, project, c) = minimal_install().await;
    let outside = dir.path().join("elsewhere.md");
    std::fs::write(&outside, method_prd(&PRD_SECTIONS)).unwrap();
    std::fs::create_dir_all(project.join("plans")).unwrap();
    std::fs::hard_link(&outside, project.join("plans/prd.md")).unwrap();
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    assert!(!notices(&v).contains("document_file"), "not offered: {v:#}");
    let sid = v["session_id"].clone();
    let v = c
        .refused(
            json!({"action": "submit", "session_id": sid, "document_file": "plans/prd.md"}),
            "invalid_argument",
        )
        .await;
    let refusal = v["error"]["message"].as_str().unwrap();
    assert!(
        refusal.contains("field `document_file`")
            && refusal.contains("hard link (the file has 2 names)"),
        "{v:#}"
    );
    c.close().await;
}
