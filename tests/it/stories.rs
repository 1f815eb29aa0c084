//! Stories through the real binary: a full run whose two approved sprints run as stories
//! from two git worktrees at once, each with its own server process and owner; a second
//! claim on a held sprint refused naming its holder; the parent refusing its final QA while
//! a story is open (a story's branch read where it runs, renamed since), then running it
//! once every story completed, its end stating the stories' reviews; and the stories'
//! files merging back without a conflict.

use std::path::Path;
use std::process::Command;

use crate::support::{
    bin, command, connect, connect_with, passing_architecture, passing_prd, Client, Era,
};
use serde_json::{json, Value};

const PLAN: &str = "# Sprint Plan\n\n## Sprint Overview\nTwo sprints.\n\n## Sprint 1: API\n- the todos table\n\n## Sprint 2: Web UI\n- the list page\n";
const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n";
const QA: &str = "# QA Report\n\n## Results\n30 passed.\n\nIntent: met\nQuality Score: 93/100\n";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Lead")
        .env("GIT_AUTHOR_EMAIL", "lead@example.com")
        .env("GIT_COMMITTER_NAME", "Lead")
        .env("GIT_COMMITTER_EMAIL", "lead@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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

fn at(v: &Value, stage: &str, state: &str) {
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some(stage), Some(state)),
        "{v:#}"
    );
}

/// Development and review of a story, as its window runs them.
async fn build_and_review(c: &Client, sid: &Value) {
    let v = step(c, sid, json!({"action": "submit", "claude_result": DEV})).await;
    at(&v, "review", "generating");
    let v = step(c, sid, json!({"action": "submit", "claude_result": REVIEW})).await;
    at(&v, "qa", "generating");
}

#[tokio::test]
async fn two_sprints_run_as_stories_from_two_worktrees_at_once_and_the_parent_runs_the_final_qa() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let main = base.join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["config", "user.name", "Lead"]);
    git(&main, &["config", "user.email", "lead@example.com"]);
    // The lock and the derived task mapping are each process's own, not shared state.
    std::fs::write(
        main.join(".gitignore"),
        ".bmad-task/.lock\n.bmad-task/task-mapping.json*\n",
    )
    .unwrap();
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "first"]);

    // The parent: PRD, architecture and a two-sprint plan, approved in the main worktree.
    let lead = connect(Era::Modern, &main).await;
    let v = lead
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": main.to_str().unwrap()}))
        .await;
    let parent = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
        json!({"action": "approve", "scope": "all"}),
    ] {
        step(&lead, &parent, args).await;
    }
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "the approved plan"]);
    let wt1 = base.join("wt1");
    let wt2 = base.join("wt2");
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
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            wt2.to_str().unwrap(),
            "-b",
            "sprint-2",
        ],
    );

    // Two server processes, one per worktree, each run by its own person.
    let alice = server_of(&wt1, "Alice <alice@example.com>").await;
    let bob = server_of(&wt2, "Bob <bob@example.com>").await;
    let story = |dir: &Path, sprint: u32| json!({"action": "start", "parent": task, "sprint": sprint, "cwd": dir.to_str().unwrap()});
    let s1 = alice.ok(story(&wt1, 1)).await;
    at(&s1, "dev", "generating");
    assert_eq!(s1["track"], "story");
    assert_eq!(s1["story"]["sprint"], 1);
    assert_eq!(s1["story"]["parent_task"], task.as_str());
    assert!(
        s1["story"]["owner"].as_str().unwrap().contains("Alice"),
        "{s1:#}"
    );
    assert_eq!(s1["story"]["branch"], "sprint-1");
    assert_eq!(s1["story"]["worktree"], wt1.to_str().unwrap());
    let prompt = s1["role_prompt"].as_str().unwrap();
    assert!(
        prompt.contains("**Scope the user approved:** sprint 1 only"),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!(".claude/specs/{task}/01-product-requirements.md")),
        "{prompt}"
    );
    assert!(prompt.contains("## This story"), "{prompt}");
    let s2 = bob.ok(story(&wt2, 2)).await;
    assert_eq!(s2["story"]["branch"], "sprint-2");

    // A second active story on sprint 1, from the other worktree: refused, naming who holds it.
    let e = bob.refused(story(&wt2, 1), "sprint_taken").await;
    let msg = e["error"]["message"].as_str().unwrap();
    for part in ["sprint 1", "Alice", "`sprint-1`", wt1.to_str().unwrap()] {
        assert!(msg.contains(part), "names {part}: {msg}");
    }
    // A sprint outside the approved scope is no story.
    bob.refused(story(&wt2, 3), "invalid_scope").await;

    // Both stories build and review at the same time, each in its own process.
    let (id1, id2) = (s1["session_id"].clone(), s2["session_id"].clone());
    tokio::join!(build_and_review(&alice, &id1), build_and_review(&bob, &id2));
    let v = step(
        &alice,
        &id1,
        json!({"action": "submit", "claude_result": QA}),
    )
    .await;
    at(&v, "qa", "completed");

    // Bob renames his branch: the parent reads it there, not as the story recorded it.
    git(&wt2, &["branch", "-m", "sprint-2", "sprint-2-bob"]);

    // The parent sees both, and refuses its final QA while sprint 2 is open.
    let v = lead
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    let stories = v["stories"].as_array().unwrap();
    assert_eq!(stories.len(), 2, "{v:#}");
    assert_eq!(stories[1]["branch"], "sprint-2-bob", "{v:#}");
    assert_eq!(
        (&stories[0]["sprint"], &stories[0]["state"]),
        (&json!(1), &json!("completed"))
    );
    assert_eq!(
        (&stories[1]["stage"], &stories[1]["state"]),
        (&json!("qa"), &json!("generating"))
    );
    assert!(
        v["next_step"].as_str().unwrap().contains("stories"),
        "{v:#}"
    );
    // Nothing is written in the parent while it waits: no role prompt.
    assert!(v["role_prompt"].is_null(), "{v:#}");
    let e = lead
        .refused(
            json!({"action": "submit", "session_id": parent, "stage": "qa", "claude_result": QA}),
            "invalid_state",
        )
        .await;
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("sprint 2") && msg.contains("Bob"), "{msg}");

    let v = step(&bob, &id2, json!({"action": "submit", "claude_result": QA})).await;
    at(&v, "qa", "completed");

    // Every story completed: the parent's final QA of the whole.
    let v = lead
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    at(&v, "dev", "generating");
    assert!(
        v["next_step"].as_str().unwrap().contains("stage: \"qa\""),
        "{v:#}"
    );
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("# Role: QA Engineer"), "{prompt}");
    assert!(prompt.contains("## The final QA of the whole"), "{prompt}");
    // Its own session ran no checks, its stories did: not "no approved checks".
    assert!(!prompt.contains("no approved checks"), "{prompt}");
    let v = step(
        &lead,
        &parent,
        json!({"action": "submit", "stage": "qa", "claude_result": QA}),
    )
    .await;
    at(&v, "qa", "completed");
    // Its review ran as the stories' reviews, and the end says what they stated.
    let said = v["user_message"].as_str().unwrap();
    assert!(
        said.contains("Review status: Pass, in each story's review (sprints 1, 2)."),
        "{said}"
    );
    let s = crate::support::read_json(&main.join(format!(
        ".bmad-task/session-{}.json",
        parent.as_str().unwrap()
    )));
    for stage in ["dev", "review", "qa"] {
        assert_eq!(s["stages"][stage]["status"], "completed", "{stage}");
    }
    assert!(s["stages"]["dev"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("Built and reviewed as stories"));
    assert_eq!(s["stories"].as_array().unwrap().len(), 2);

    // The shared entries live in the git common directory, one file per sprint.
    let entries = main.join(format!(
        ".git/bmad-mcp/.bmad-task/stories/{}",
        parent.as_str().unwrap()
    ));
    let mut names: Vec<String> = std::fs::read_dir(&entries)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["parent.json", "sprint-1.json", "sprint-2.json"]);
    // A story's worktree still holds the parent as it was when the story started: a
    // change to that stale copy is refused, naming where the parent is now.
    let mut args = json!({"action": "submit", "session_id": parent, "claude_result": QA});
    args["cwd"] = json!(wt1.to_str().unwrap());
    let refused = alice.refused(args, "invalid_state").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(m.contains("this worktree's copy of task"), "{m}");
    assert!(m.contains("state `completed`"), "{m}");
    // Its `status` says so too, rather than showing it as a live task.
    let args = json!({"action": "status", "session_id": parent, "cwd": wt1.to_str().unwrap()});
    let v = alice.ok(args).await;
    assert!(
        v["notices"]
            .to_string()
            .contains("This worktree's copy of task")
            && v["notices"]
                .to_string()
                .contains("is behind: the task completed on branch `main` in "),
        "{v:#}"
    );

    // Each story's files are its own: both branches merge into main without a conflict,
    // and the code they bring is the plan's work, not drift under the parent.
    for (dir, msg) in [(&wt1, "sprint 1"), (&wt2, "sprint 2")] {
        std::fs::write(
            dir.join(format!("{}.rs", msg.replace(' ', "_"))),
            "// built\n",
        )
        .unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", msg]);
    }
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "final QA"]);
    git(
        &main,
        &["merge", "-q", "--no-edit", "sprint-1", "sprint-2-bob"],
    );
    assert!(main.join("sprint_2.rs").exists());
    let v = lead
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    assert!(v["drift"].is_null(), "{:#}", v["drift"]);
    assert!(!v["notices"].to_string().contains("Drift"), "{v:#}");
    let listed = String::from_utf8(bin(&main).args(["list"]).output().unwrap().stdout).unwrap();
    for s in [&s1, &s2] {
        let name = s["task_name"].as_str().unwrap();
        // The sprint, then who runs it and a tag of the story: no two clones pick it.
        let owner = s["story"]["owner"].as_str().unwrap().to_lowercase();
        let handle = owner.split_whitespace().next().unwrap();
        assert!(
            name.contains(&format!("-sprint-{}-{handle}-", s["story"]["sprint"])),
            "{name}"
        );
        assert!(listed.contains(name), "{listed}");
    }
    assert!(
        listed.contains("story"),
        "the list shows the track: {listed}"
    );
    for c in [lead, alice, bob] {
        c.close().await;
    }
}

/// A parent waiting on its stories, whose plan the human approved in a terminal: its
/// `status`, which a lead asks again and again, carries no role prompt (each story has its
/// own), says nobody writes in it, and says the approval once, as news, then no more.
#[cfg(unix)]
#[tokio::test]
async fn a_parent_waiting_on_its_stories_says_the_approval_once_and_carries_no_prompt() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let main = base.join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(
        main.join(".gitignore"),
        ".bmad-task/.lock\n.bmad-task/task-mapping.json*\n",
    )
    .unwrap();
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "first"]);
    let lead = connect(Era::Modern, &main).await;
    let v = lead
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": main.to_str().unwrap()}))
        .await;
    let parent = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    for args in [
        json!({"action": "submit", "claude_result": passing_prd()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": passing_architecture()}),
        json!({"action": "confirm"}),
        json!({"action": "submit", "claude_result": PLAN}),
    ] {
        step(&lead, &parent, args).await;
    }
    let (code, out) =
        crate::support::terminal::in_terminal(&main, &["approve", &task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "the approved plan"]);
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
    let alice = server_of(&wt1, "Alice <alice@example.com>").await;
    alice
        .ok(json!({"action": "start", "parent": task, "sprint": 1, "cwd": wt1.to_str().unwrap()}))
        .await;

    let said = "The human decided in the terminal: approve at the sm stage.";
    for (round, news) in [(1, true), (2, false), (3, false)] {
        let v = lead
            .ok(json!({"action": "status", "session_id": parent}))
            .await;
        at(&v, "dev", "generating");
        let message = v["user_message"].as_str().unwrap();
        assert_eq!(message.contains(said), news, "status {round}: {message}");
        assert!(!message.contains("Sprint plan approved"), "{message}");
        assert!(!message.contains("writes the document"), "{message}");
        assert!(v["role_prompt"].is_null(), "status {round}: {v:#}");
        assert!(
            v["next_step"].as_str().unwrap().contains("stories"),
            "{v:#}"
        );
    }
}
