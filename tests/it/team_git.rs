//! A team's workflow with real git. A bare repository and two clones, each with its own
//! `user.name`/`user.email`; each clone runs the real server (one task to review, one to
//! the sprint plan, the same objective), commits, pushes and pulls: the merge has no
//! conflict, both sessions list (with owner and branch) and advance on the merged tree, and
//! development starts with a warning naming the file that changed under it. Then one task
//! is advanced on both clones: the merge conflicts, and the server names both versions and
//! how to keep one, refuses every call on it, writes nothing over it, and lists it as
//! conflicted; keeping one as it says makes the task work again.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{
    bin, connect_with, git, passing_architecture, passing_prd, read_json, Client, Era,
};

/// git in `dir` that may fail: whether it succeeded.
pub(crate) fn git_may_fail(dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs")
        .status
        .success()
}

/// A bare repository and two clones of it, one per person, with a first commit that
/// holds `src/lib.rs` and the `.gitignore` that `bmad-mcp init` writes.
struct Team {
    _dir: tempfile::TempDir,
    ada: PathBuf,
    bob: PathBuf,
}

pub(crate) fn clone_as(origin: &Path, dir: &Path, name: &str, email: &str) {
    git(
        origin.parent().unwrap(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            dir.to_str().unwrap(),
        ],
    );
    for (k, v) in [
        ("user.name", name),
        ("user.email", email),
        ("pull.rebase", "false"),
        ("commit.gpgsign", "false"),
    ] {
        git(dir, &["config", k, v]);
    }
}

fn team() -> Team {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let origin = root.join("origin.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let (ada, bob) = (root.join("ada"), root.join("bob"));
    clone_as(&origin, &ada, "Ada Lovelace", "ada@example.org");
    clone_as(&origin, &bob, "Bob Smith", "bob@example.org");
    for clone in [&ada, &bob] {
        git(clone, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    }
    std::fs::create_dir(ada.join("src")).unwrap();
    std::fs::write(ada.join("src/lib.rs"), "pub fn login() {}\n").unwrap();
    let init = bin(&ada).arg("init").output().unwrap();
    assert!(init.status.success(), "{init:?}");
    git(&ada, &["add", "-A"]);
    git(&ada, &["commit", "-q", "-m", "first"]);
    git(&ada, &["push", "-q", "-u", "origin", "main"]);
    git(&bob, &["pull", "-q", "origin", "main"]);
    git(
        &bob,
        &["branch", "-q", "--set-upstream-to=origin/main", "main"],
    );
    Team {
        _dir: dir,
        ada,
        bob,
    }
}

/// The real server in `project`, with no `BMAD_OWNER`: git names the person.
pub(crate) async fn server(project: &Path) -> Client {
    let mut cmd = bin(project);
    cmd.env_remove("BMAD_OWNER");
    connect_with(Era::Modern, cmd.into(), project).await
}

/// Calls `args` on session `sid`; the reply.
async fn on(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

const PLAN: &str = "# Sprint Plan\n\n## Sprint 1: Login\n- the form\n";
const DEV: &str = "# Implementation Report\n\n## Summary\nLogin built.\n\n## Tests\n3 passed.";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass";

/// Starts "Add login" and takes it to the sprint plan, awaiting approval.
async fn to_sprint_plan(c: &Client) -> Value {
    let v = c
        .ok(json!({"action": "start", "objective": "Add login"}))
        .await;
    let sid = v["session_id"].clone();
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
    ] {
        on(c, &sid, args).await;
    }
    sid
}

/// The developer's own edits in a later round are its work, not drift: a `status` during
/// dev, after a review sent the work back, names no project file the developer changed.
/// (The reply that starts the first round still names files changed since the plan.)
#[tokio::test]
async fn a_later_dev_round_does_not_call_its_own_edits_drift() {
    let t = team();
    let c = server(&t.ada).await;
    let sid = to_sprint_plan(&c).await;
    on(&c, &sid, json!({"action": "approve", "scope": "all"})).await;
    std::fs::write(t.ada.join("src/lib.rs"), "pub fn login() { check() }\n").unwrap();
    on(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    let fail = "# Code Review\n\n## Findings\n- major: no check.\n\nReview Status: Fail";
    on(&c, &sid, json!({"action": "submit", "claude_result": fail})).await;
    let v = on(
        &c,
        &sid,
        json!({"action": "reject", "feedback": "Add the check."}),
    )
    .await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("dev"), Some("generating")),
        "{v:#}"
    );
    std::fs::write(
        t.ada.join("src/lib.rs"),
        "pub fn login() { check(); log() }\n",
    )
    .unwrap();
    std::fs::write(t.ada.join("src/check.rs"), "pub fn check() {}\n").unwrap();
    let v = on(&c, &sid, json!({"action": "status"})).await;
    assert!(v["drift"]["files"].is_null(), "{:#}", v["drift"]);
    assert!(!v.to_string().contains("project file(s) changed"), "{v:#}");
    c.close().await;
}

pub(crate) fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

fn session_file(dir: &Path, sid: &Value) -> PathBuf {
    dir.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap()))
}

#[tokio::test]
async fn two_clones_merge_their_tasks_and_a_task_advanced_on_both_is_reported() {
    let t = team();

    // Ada: a task to review, and her work on the code, committed and pushed.
    let a = server(&t.ada).await;
    let ada_sid = to_sprint_plan(&a).await;
    on(&a, &ada_sid, json!({"action": "approve", "scope": "all"})).await;
    std::fs::write(t.ada.join("src/lib.rs"), "pub fn login() { todo!() }\n").unwrap();
    let v = on(
        &a,
        &ada_sid,
        json!({"action": "submit", "claude_result": DEV}),
    )
    .await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("review"), Some("generating"))
    );
    commit_all(&t.ada, "Ada: login to review");
    git(&t.ada, &["push", "-q"]);

    // Bob: the same objective, to the sprint plan, in his clone.
    let b = server(&t.bob).await;
    let bob_sid = to_sprint_plan(&b).await;
    commit_all(&t.bob, "Bob: login plan");

    // Distinct tasks, and the names say whose.
    let ada_task = read_json(&session_file(&t.ada, &ada_sid))["task_name"].clone();
    let bob_task = read_json(&session_file(&t.bob, &bob_sid))["task_name"].clone();
    let (ada_task, bob_task) = (ada_task.as_str().unwrap(), bob_task.as_str().unwrap());
    assert!(ada_task.starts_with("add-login-ada-"), "{ada_task}");
    assert!(bob_task.starts_with("add-login-bob-"), "{bob_task}");
    // What is local never travels.
    let tracked = git(&t.ada, &["ls-files"]);
    for local in [".bmad-task/.lock", ".bmad-task/task-mapping.json"] {
        assert!(t.ada.join(local).exists(), "{local} exists");
        assert!(!tracked.contains(local), "{local} is committed:\n{tracked}");
    }
    assert!(tracked.contains(&format!(
        ".claude/specs/{ada_task}/02-system-architecture.md"
    )));

    // Bob pulls: the merge has no conflict.
    git(&t.bob, &["pull", "-q", "--no-edit"]);
    assert_eq!(git(&t.bob, &["ls-files", "-u"]), "", "nothing unmerged");

    // On the merged tree, Bob's server lists both, with owner and branch.
    let v = b.ok(json!({"action": "list"})).await;
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{v:#}");
    let row = |sid: &Value| {
        sessions
            .iter()
            .find(|s| s["session_id"] == *sid)
            .unwrap()
            .clone()
    };
    assert_eq!(row(&ada_sid)["owner"]["email"], "ada@example.org");
    assert_eq!(row(&bob_sid)["owner"]["name"], "Bob Smith");
    assert_eq!(row(&ada_sid)["branch"], "main");
    let mine = b.ok(json!({"action": "list", "mine": true})).await;
    let mine: Vec<&Value> = mine["sessions"].as_array().unwrap().iter().collect();
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["session_id"], bob_sid);
    let out = bin(&t.bob).args(["list", "--mine"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(bob_task) && !text.contains(ada_task),
        "{text}"
    );
    let out = bin(&t.bob).arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Ada Lovelace <ada@example.org>  on main"),
        "{text}"
    );
    // --owner speaks for someone else (as BMAD_OWNER does): Ada's, from Bob's clone.
    let out = bin(&t.bob)
        .args(["--owner", "A. Lovelace <ADA@example.org>", "list", "--mine"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(ada_task) && !text.contains(bob_task),
        "{text}"
    );

    // Bob's plan was written on the first commit; Ada changed src/lib.rs since. The
    // resume briefing and status say so …
    let mut params = rmcp::model::GetPromptRequestParams::new("resume");
    if let Value::Object(m) = json!({"task": bob_task}) {
        params = params.with_arguments(m);
    }
    let briefing = b.peer().get_prompt(params).await.unwrap();
    let briefing = briefing.messages[0].content.as_text().unwrap().text.clone();
    assert!(
        briefing.contains("\nDrift: 1 project file(s) changed since the Scrum Master document"),
        "on a line of its own: {briefing}"
    );
    assert!(briefing.contains("src/lib.rs"), "{briefing}");
    let v = on(&b, &bob_sid, json!({"action": "status"})).await;
    assert_eq!(v["drift"]["since_stage"], "sm", "{v:#}");
    assert_eq!(v["drift"]["files"], json!(["src/lib.rs"]));

    // Both advance there. Bob's development starts on code Ada changed after his plan
    // was written: the reply names the file.
    let v = on(&b, &bob_sid, json!({"action": "approve", "scope": "all"})).await;
    assert_eq!(v["stage"], "dev");
    assert_eq!(v["drift"]["files"], json!(["src/lib.rs"]), "{v:#}");
    assert!(
        v["notices"].to_string().contains("src/lib.rs"),
        "{:#}",
        v["notices"]
    );
    let v = on(&b, &ada_sid, json!({"action": "status"})).await;
    assert_eq!(v["session"]["owner"]["name"], "Ada Lovelace");
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .contains("Owner: Ada Lovelace"),
        "{v:#}"
    );
    let v = on(
        &b,
        &ada_sid,
        json!({"action": "submit", "claude_result": REVIEW}),
    )
    .await;
    assert_eq!(v["stage"], "qa");
    commit_all(&t.bob, "Bob: plan approved, Ada's review");
    git(&t.bob, &["push", "-q"]);
    git(&t.ada, &["pull", "-q", "--no-edit"]);
    let v = on(&a, &ada_sid, json!({"action": "status"})).await;
    assert_eq!(v["stage"], "qa", "Ada's clone has the advance Bob made");

    // Now one task advanced on both clones: Ada's QA report, and Bob's.
    let qa = |score: u32| {
        format!("# QA Report\n\n## Results\nAll passed.\n\nIntent: met\nQuality Score: {score}/100")
    };
    on(
        &a,
        &ada_sid,
        json!({"action": "submit", "claude_result": qa(93)}),
    )
    .await;
    commit_all(&t.ada, "Ada: QA");
    git(&t.ada, &["push", "-q"]);
    on(
        &b,
        &ada_sid,
        json!({"action": "submit", "claude_result": qa(71)}),
    )
    .await;
    commit_all(&t.bob, "Bob: QA of Ada's task");
    assert!(
        !git_may_fail(&t.bob, &["pull", "-q", "--no-edit"]),
        "the merge conflicts"
    );
    let file = session_file(&t.bob, &ada_sid);
    let conflicted = std::fs::read(&file).unwrap();
    assert!(String::from_utf8_lossy(&conflicted).contains("<<<<<<< "));

    // Every call on it is refused, naming both versions and how to keep one.
    let rel = format!(".bmad-task/session-{}.json", ada_sid.as_str().unwrap());
    for args in [
        json!({"action": "status"}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": qa(99)}),
    ] {
        let mut args = args;
        args["session_id"] = ada_sid.clone();
        let v = b.refused(args, "session_conflicted").await;
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains(&rel), "{m}");
        // Each version read whole from the index and named after its branch: Bob's QA
        // below the gate on `main`, Ada's completed one from `origin/main`.
        assert!(
            m.contains("version 1 `main`: stage qa, state awaiting_confirmation")
                && m.contains("version 2 `origin/main`: stage qa, state completed"),
            "{m}"
        );
        // The command that keeps a side as a whole, not a file-by-file checkout that
        // leaves the other side's merged documents beside it.
        assert!(
            m.contains(&format!("`bmad-mcp resolve {ada_task} --ours`"))
                && m.contains(&format!("`bmad-mcp resolve {ada_task} --theirs`")),
            "{m}"
        );
        assert!(!m.contains("git checkout --ours"), "{m}");
        assert!(m.contains("owner Ada Lovelace"), "{m}");
    }
    // By task name too (the clone's mapping may not know it).
    let v = b
        .refused(
            json!({"action": "status", "task_name": ada_task}),
            "session_conflicted",
        )
        .await;
    assert!(v["error"]["message"].as_str().unwrap().contains(&rel));
    // Listed as conflicted; Bob's own task still lists and works.
    let v = b.ok(json!({"action": "list"})).await;
    assert_eq!(v["damaged"][0]["session_id"], ada_sid, "{v:#}");
    assert_eq!(v["damaged"][0]["conflicted"], true);
    assert_eq!(v["sessions"][0]["session_id"], bob_sid);
    on(&b, &bob_sid, json!({"action": "status"})).await;
    let out = bin(&t.bob).arg("list").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("CONFLICTED"));
    // Nothing was written over, and both versions are whole in git.
    assert_eq!(std::fs::read(&file).unwrap(), conflicted);
    for (stage, score) in [(":2:", 71), (":3:", 93)] {
        let side: Value =
            serde_json::from_str(&git(&t.bob, &["show", &format!("{stage}{rel}")])).unwrap();
        assert_eq!(side["stages"]["qa"]["score"], score, "{stage}");
    }

    // Keeping one as the guide says: Ada's (theirs), and the task works again.
    let keep = guide_block("One task advanced on two branches", "sh")
        .replace("<id>", ada_sid.as_str().unwrap())
        .replace("<task>", ada_task);
    run_lines(&t.bob, &keep);
    assert_eq!(git(&t.bob, &["ls-files", "-u"]), "", "merged");
    let v = on(&b, &ada_sid, json!({"action": "status"})).await;
    assert_eq!(v["session"]["stages"]["qa"]["score"], 93);
    // The task as a unit is Ada's: its session, documents and drafts, nothing of Bob's.
    let sid = ada_sid.as_str().unwrap();
    for path in [
        rel.clone(),
        format!(".claude/specs/{ada_task}"),
        format!(".bmad-task/temp/{sid}"),
    ] {
        assert_eq!(
            git(&t.bob, &["rev-parse", &format!("HEAD:{path}")]),
            git(&t.bob, &["rev-parse", &format!("origin/main:{path}")]),
            "{path}"
        );
    }
    a.close().await;
    b.close().await;
}

/// The first fenced block of `lang` in the section `## title` of docs/team.md.
fn guide_block(title: &str, lang: &str) -> String {
    doc_block("docs/team.md", title, lang)
}

/// The first fenced block of `lang` in the section `## title` of the document `doc`.
fn doc_block(doc: &str, title: &str, lang: &str) -> String {
    let guide = std::fs::read_to_string(Path::new(crate::support::ROOT).join(doc)).unwrap();
    let heading = format!("## {title}\n");
    let at = guide
        .find(&heading)
        .unwrap_or_else(|| panic!("no section {title}"));
    let rest = &guide[at + heading.len()..];
    let rest = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
    let open = format!("```{lang}\n");
    let start = rest
        .find(&open)
        .unwrap_or_else(|| panic!("no {lang} block in {title}"))
        + open.len();
    let len = rest[start..].find("```").unwrap();
    rest[start..start + len].to_string()
}

/// Runs each line of `block` with `sh` in `dir`, the built `bmad-mcp` first on PATH; each
/// must succeed.
fn run_lines(dir: &Path, block: &str) -> Vec<String> {
    let bin_dir = Path::new(crate::support::server_path()).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut outputs = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let mut cmd = Command::new("sh");
        crate::support::isolate(&mut cmd);
        let out = cmd
            .args(["-c", line])
            .current_dir(dir)
            .env("PATH", &path)
            .env_remove("BMAD_OWNER")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{line}`: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    outputs
}

/// The guide's commands run as shown: `bmad-mcp init` writes the block the guide shows,
/// after the lines already there, once however often it runs, and the `.gitattributes`
/// block of the sprint status's merge driver; `list` and `list --mine` run.
#[test]
fn the_team_guide_commands_run_as_shown() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Ada Lovelace"]);
    git(&repo, &["config", "user.email", "ada@example.org"]);
    git(&repo, &["config", "commit.gpgsign", "false"]);
    std::fs::write(repo.join(".gitignore"), "target/\n*.log").unwrap();
    run_lines(&repo, &guide_block("Setting up a project", "sh"));
    let shown = guide_block("Setting up a project", "gitignore");
    let written = std::fs::read_to_string(repo.join(".gitignore")).unwrap();
    assert_eq!(written, format!("target/\n*.log\n{shown}"));
    assert_eq!(
        git(&repo, &["ls-files"]),
        ".gitattributes\n.gitignore\n",
        "committed"
    );
    // The merge driver of the BMAD method's sprint status, as the guide shows it.
    let attributes = guide_block("The method's sprint status", "gitattributes");
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitattributes")).unwrap(),
        attributes
    );
    run_lines(&repo, "bmad-mcp init");
    assert_eq!(
        std::fs::read_to_string(repo.join(".gitignore")).unwrap(),
        written
    );
    let out = run_lines(&repo, &guide_block("Who holds what", "sh"));
    assert_eq!(out.len(), 2);
    assert!(out[1].contains("started by you"), "{}", out[1]);
}

/// Drift without git: an earlier document edited by hand after a later stage relied on it
/// is named on `status`, and not before a later stage has started.
#[tokio::test]
async fn status_names_an_earlier_document_edited_after_a_later_stage_relied_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let c = server(&project).await;
    let sid = crate::support::at_dev(&c, &project).await;
    let v = on(&c, &sid, json!({"action": "status"})).await;
    assert!(v.get("drift").is_none(), "nothing changed yet: {v:#}");
    let task = v["task_name"].as_str().unwrap().to_string();
    let prd = format!(".claude/specs/{task}/01-product-requirements.md");
    let text = std::fs::read_to_string(project.join(&prd)).unwrap();
    std::fs::write(project.join(&prd), format!("{text}\nAlso: dark mode.\n")).unwrap();
    let v = on(&c, &sid, json!({"action": "status"})).await;
    assert_eq!(v["drift"]["documents"], json!([prd]), "{v:#}");
    assert!(v["drift"].get("files").is_none(), "no git, no files: {v:#}");
    assert!(v["notices"].to_string().contains(&prd));
    c.close().await;
}

/// The README's first run works as written in a git repository: the task gets the team's
/// name (objective, handle, tag), and the terminal commands the README shows find it by the
/// name its objective alone gives; two tasks with that objective make the name ambiguous,
/// and the refusal names both.
#[tokio::test]
async fn the_readme_first_run_commands_work_as_written_in_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Ana Lima"]);
    git(&repo, &["config", "user.email", "ana@example.org"]);
    let readme =
        std::fs::read_to_string(Path::new(crate::support::ROOT).join("README.md")).unwrap();
    let first_run = &readme[readme.find("## A first run").unwrap()..];
    let block = first_run
        .split("```sh\n")
        .nth(2)
        .and_then(|b| b.split("```").next())
        .unwrap();
    assert!(block.contains("bmad-mcp status "), "{block}");
    let objective = "Build a service that publishes a weekly team changelog.";

    let c = connect_with(Era::Legacy, crate::support::command(&repo), &repo).await;
    let v = c
        .ok(json!({"action": "start", "objective": objective}))
        .await;
    let task = v["task_name"].as_str().unwrap().to_string();
    assert!(
        task.starts_with("build-a-service-that-publishes-ana-"),
        "{task}"
    );
    // The dashboard serves until stopped: it is started as written in dashboard.rs's
    // tests; here the commands that answer and exit run.
    let (serving, answering): (Vec<&str>, Vec<&str>) = block
        .lines()
        .partition(|l| l.starts_with("bmad-mcp dashboard"));
    assert_eq!(serving.len(), 1, "{block}");
    let shown = run_lines(&repo, &answering.join("\n"));
    assert!(shown.iter().any(|o| o.contains(&task)), "{shown:?}");

    let second = c
        .ok(json!({"action": "start", "objective": objective}))
        .await;
    c.close().await;
    let status = block.lines().find(|l| l.contains("status")).unwrap();
    // The line as a shell reads it: its comment is not an argument.
    let status = status.split(" #").next().unwrap();
    let out = crate::support::bin(&repo)
        .env(
            "PATH",
            Path::new(crate::support::server_path()).parent().unwrap(),
        )
        .args(status.split_whitespace().skip(1))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&task), "{err}");
    assert!(err.contains(second["task_name"].as_str().unwrap()), "{err}");
}

const TWO_SPRINTS: &str =
    "# Sprint Plan\n\n## Sprint 1: Login\n- the form\n\n## Sprint 2: Logout\n- the button\n";
const STORY_QA: &str =
    "# QA Report\n\n## Results\nAll passed.\n\nIntent: met\nQuality Score: 93/100";

/// Stories across clones, through the shared remote: a sprint Ada claims is taken for
/// Bob before he starts (the claim is a ref on the remote, the first push wins), their
/// story names never collide, and the story Bob finished, pushed and Ada merged counts
/// for her parent, which then runs its final QA.
#[tokio::test]
async fn a_sprint_claimed_in_one_clone_is_taken_in_the_other_and_merged_stories_count() {
    let t = team();
    let a = server(&t.ada).await;
    let start = json!({"action": "start", "objective": "Add login and logout"});
    let documents = [
        passing_prd(),
        passing_architecture(),
        TWO_SPRINTS.to_string(),
    ];
    let (parent, task) = crate::support::to_approved_plan(&a, start, &documents).await;
    commit_all(&t.ada, "Ada: the plan of Add login and logout");
    git(&t.ada, &["push", "-q"]);
    git(&t.bob, &["pull", "-q", "--no-edit"]);
    let b = server(&t.bob).await;

    let story = |sprint: u32| json!({"action": "start", "parent": task, "sprint": sprint});
    let one = a.ok(story(1)).await;
    assert!(
        one["notices"]
            .to_string()
            .contains("claimed for this story on the remote `origin`"),
        "{one:#}"
    );
    let refused = b.refused(story(1), "sprint_taken").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("claimed on the remote `origin` by Ada Lovelace"),
        "{m}"
    );
    let two = b.ok(story(2)).await;
    let (one_task, two_task) = (
        one["task_name"].as_str().unwrap(),
        two["task_name"].as_str().unwrap(),
    );
    assert!(one_task.contains("-sprint-1-ada-"), "{one_task}");
    assert!(two_task.contains("-sprint-2-bob-"), "{two_task}");
    // The documented git commands show the claims, as written, from Ada's clone.
    let shown = doc_block(
        "docs/internals.md",
        "Team: how a sprint is claimed on the remote",
        "sh",
    )
    .replace("<parent id>", parent.as_str().unwrap());
    let out = run_lines(&t.ada, &shown);
    assert_eq!(
        out[0].lines().count(),
        2,
        "two claims on the remote: {}",
        out[0]
    );
    assert!(
        out[2].contains("Bob Smith"),
        "who holds sprint 2: {}",
        out[2]
    );

    // Each builds their sprint; Bob pushes first, Ada merges his work.
    for (c, sid) in [(&b, &two["session_id"]), (&a, &one["session_id"])] {
        for report in [DEV, REVIEW, STORY_QA] {
            on(c, sid, json!({"action": "submit", "claude_result": report})).await;
        }
    }
    commit_all(&t.bob, "Bob: sprint 2 as a story");
    git(&t.bob, &["push", "-q"]);
    commit_all(&t.ada, "Ada: sprint 1 as a story");
    git(&t.ada, &["pull", "-q", "--no-edit"]);
    assert_eq!(
        git(&t.ada, &["ls-files", "-u"]),
        "",
        "merged without a conflict"
    );

    let v = on(&a, &parent, json!({"action": "status"})).await;
    let stories = v["session"]["stories"].as_array().unwrap();
    let done: Vec<(u64, &str)> = stories
        .iter()
        .map(|s| (s["sprint"].as_u64().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    assert_eq!(done, [(1, "completed"), (2, "completed")], "{v:#}");
    let v = on(
        &a,
        &parent,
        json!({"action": "submit", "claude_result": STORY_QA}),
    )
    .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("qa"), &json!("completed")),
        "{v:#}"
    );
    a.close().await;
    b.close().await;
}

/// With `BMAD_CLAIMS=local` a story's sprint claim stays in the clone: nothing is pushed
/// to the team's remote, and the reply says another clone may take the same sprint. A
/// claim that this worktree pushed earlier (a start whose take-back never reached the
/// remote) is its own again, where another clone's is refused.
#[tokio::test]
async fn claims_kept_local_push_nothing_and_an_own_earlier_claim_is_taken_again() {
    let t = team();
    let mut cmd = bin(&t.ada);
    cmd.env_remove("BMAD_OWNER").env("BMAD_CLAIMS", "local");
    let a = connect_with(Era::Modern, cmd.into(), &t.ada).await;
    let start = json!({"action": "start", "objective": "Add login and logout"});
    let documents = [
        passing_prd(),
        passing_architecture(),
        TWO_SPRINTS.to_string(),
    ];
    let (parent, task) = crate::support::to_approved_plan(&a, start, &documents).await;
    let story = |sprint: u32| json!({"action": "start", "parent": task, "sprint": sprint});
    let one = a.ok(story(1)).await;
    assert!(
        one["notices"].to_string().contains("BMAD_CLAIMS=local"),
        "{one:#}"
    );
    assert_eq!(
        git(&t.ada, &["ls-remote", "origin", "refs/bmad/claims/*"]),
        ""
    );
    a.close().await;

    // Sprint 2 claimed on the remote from Ada's worktree by hand, as a start that failed
    // after its push would leave it: Ada's server takes it as hers, Bob's is refused.
    let claim = format!(
        "{{\"owner\":\"Ada Lovelace <ada@example.org>\",\"branch\":\"main\",\"worktree\":\"{}\",\"sprint\":2}}",
        t.ada.display()
    );
    let tree = git(&t.ada, &["hash-object", "-w", "-t", "tree", "/dev/null"]);
    let commit = git(&t.ada, &["commit-tree", tree.trim(), "-m", &claim]);
    let refname = format!("refs/bmad/claims/{}/sprint-2", parent.as_str().unwrap());
    git(
        &t.ada,
        &[
            "push",
            "-q",
            "origin",
            &format!("{}:{refname}", commit.trim()),
        ],
    );
    commit_all(&t.ada, "Ada: the plan");
    git(&t.ada, &["push", "-q", "origin", "main"]);
    git(&t.bob, &["pull", "-q", "--no-edit"]);
    let b = server(&t.bob).await;
    let refused = b.refused(story(2), "sprint_taken").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(m.contains("by Ada Lovelace"), "{m}");
    b.close().await;
    let a = server(&t.ada).await;
    let two = a.ok(story(2)).await;
    assert!(
        two["notices"]
            .to_string()
            .contains("already claimed from this worktree"),
        "{two:#}"
    );
    a.close().await;
}

/// A session restored to an older commit in the middle of a task (`git checkout HEAD --`)
/// is said to have gone back, with how to get the newer version from git, on `status` and
/// on the next change.
#[tokio::test]
async fn a_session_restored_from_an_older_commit_is_said_to_have_gone_back() {
    let t = team();
    let a = server(&t.ada).await;
    let v = a
        .ok(json!({"action": "start", "objective": "Add a profile page"}))
        .await;
    let sid = v["session_id"].clone();
    commit_all(&t.ada, "Ada: started");
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "reject", "feedback": "Name the fields."}),
    ] {
        on(&a, &sid, args).await;
    }
    let rel = format!(".bmad-task/session-{}.json", sid.as_str().unwrap());
    git(&t.ada, &["checkout", "HEAD", "--", &rel]);
    let v = on(&a, &sid, json!({"action": "status"})).await;
    assert_eq!(v["state"], "generating", "the older version: {v:#}");
    let said = v["notices"].to_string();
    assert!(
        said.contains("it was restored from an older version"),
        "{said}"
    );
    assert!(
        said.contains(&format!("git log --oneline -- {rel}")),
        "{said}"
    );
    let v = on(
        &a,
        &sid,
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    assert!(
        v["notices"]
            .to_string()
            .contains("restored from an older version"),
        "{v:#}"
    );
    a.close().await;
}

/// The same document sent back on two branches makes two lesson files, named apart: after
/// the task is resolved to one side, the merge commits with both lessons in the folder, the
/// discarded side's retired with it.
#[tokio::test]
async fn the_same_document_sent_back_on_two_branches_leaves_two_lessons_that_merge() {
    let t = team();
    let a = server(&t.ada).await;
    let v = a
        .ok(json!({"action": "start", "objective": "Add a settings page"}))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    on(
        &a,
        &sid,
        json!({"action": "submit", "claude_result": passing_prd()}),
    )
    .await;
    commit_all(&t.ada, "Ada: the PRD");
    git(&t.ada, &["push", "-q"]);
    git(&t.bob, &["pull", "-q", "--no-edit"]);
    let b = server(&t.bob).await;
    for (c, dir, who) in [(&a, &t.ada, "Ada"), (&b, &t.bob, "Bob")] {
        let feedback = json!({"action": "reject", "feedback": "Name the users first."});
        on(c, &sid, feedback).await;
        commit_all(dir, &format!("{who}: sent the PRD back"));
    }
    git(&t.ada, &["push", "-q"]);
    assert!(
        !git_may_fail(&t.bob, &["pull", "-q", "--no-edit"]),
        "the session conflicts"
    );
    let lessons = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(".bmad/lessons"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    assert_eq!(lessons(&t.bob).len(), 2, "{:?}", lessons(&t.bob));
    // Named as every other command takes a task: the beginning of its name, up to a `-`.
    let short = task.rsplitn(3, '-').last().unwrap();
    assert_ne!(short, task);
    let out = bin(&t.bob)
        .args(["resolve", short, "--theirs"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&task),
        "{out:?}"
    );
    // Bob's lesson came from the decision of the version he discarded: retired with it,
    // still in the folder (restorable), and said so.
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("Retired 1 lesson(s) learnt on the other version"),
        "{said}"
    );
    assert!(
        !said.contains("Nothing of the other version stays"),
        "{said}"
    );
    git(&t.bob, &["commit", "-q", "--no-edit"]);
    assert_eq!(git(&t.bob, &["ls-files", "-u"]), "");
    assert_eq!(lessons(&t.bob).len(), 2, "both lesson files kept");
    assert_eq!(
        git(&t.bob, &["status", "--porcelain"]),
        "",
        "the retirement is committed"
    );
    let listed = |args: &[&str]| {
        let out = bin(&t.bob).arg("lessons").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let active = listed(&["list"]);
    assert!(
        active.starts_with("1 lesson(s)"),
        "only Ada's is recalled: {active}"
    );
    assert!(listed(&["list", "--all"]).contains("(retired)"));
    a.close().await;
    b.close().await;
}
