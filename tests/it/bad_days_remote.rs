//! A team's bad days where this clone's picture and the remote's disagree, with real git: a
//! bare remote and three clones, each with its own identity and server (Lea leads the
//! parent task; Omar and Mia take sprints as stories).
//!
//! * Mia claims sprint 1: Lea's parent runs it as a story in flight. Her replies name Mia,
//!   leave sprint 1 out of what her task builds, and refuse a plain development report.
//! * Omar claims sprint 2; Lea releases it at her terminal: "y" is not enough while his
//!   clone is not known gone, his name typed back is. His next `status`, and his dashboard,
//!   say who released it and when.
//! * Mia's remote is out of reach: her claim of sprint 3 is kept in her clone and pushed by
//!   her next call once it is back. Offline again, she claims sprint 2 while Lea claims it
//!   on the remote: Mia's story, and Omar's, are told and stopped; Mia's copy of the parent
//!   says sprint 2 has two stories on every surface, until she keeps Lea's at her terminal.
//! * Lea's remote hangs (a listener that accepts and never answers): her model's `status`,
//!   `list` and her dashboard answer at once from her last fetch, saying how old it is and
//!   that the latest try failed, while the fetch waits out its deadline in the background.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bad_days::{a_planned_parent, remote_claims, run};
use crate::support::dash::Dash;
use crate::support::terminal::run_in_terminal;
use crate::support::{bin, git, Client};
use crate::team_git::{clone_as, server};

const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";

/// The bound a reply must answer within with a hanging remote: half the fetch's own
/// deadline (10 s), so that a reply that waits on the fetch cannot pass, whatever the load.
const NEVER_WAITED: Duration = Duration::from_secs(5);

/// The team: its folder, remote, the parent task and each person's clone and server.
struct Team<'a> {
    origin: &'a Path,
    task: &'a str,
    parent: &'a Value,
    lea: (&'a Path, &'a Client),
    omar: (&'a Path, &'a Client),
    mia: (&'a Path, &'a Client),
}

impl Team<'_> {
    fn story(&self, sprint: u32) -> Value {
        json!({"action": "start", "parent": self.task, "sprint": sprint})
    }
}

fn status(sid: &Value) -> Value {
    json!({"action": "status", "session_id": sid})
}

fn dev(sid: &Value) -> Value {
    json!({"action": "submit", "session_id": sid, "claude_result": DEV})
}

/// Calls `args` on `c` every 200 ms, up to 30 s, until its reply says `what`: the reply.
async fn until_said(c: &Client, args: Value, what: &str) -> Value {
    let started = Instant::now();
    loop {
        let v = c.ok(args.clone()).await;
        if v.to_string().contains(what) {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not said after 30 s: {what}\n{v:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `bmad-mcp <args>` in `dir` at a person's terminal, answering `prompt` with `typed`.
fn at_terminal(dir: &Path, args: &[&str], prompt: &str, typed: &str) -> (i32, String) {
    let mut cmd = bin(dir);
    cmd.env_remove("BMAD_OWNER").args(args);
    run_in_terminal(cmd, prompt, typed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_remote_s_claims_count_everywhere_and_no_reply_waits_on_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let origin = root.join("origin.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let lea = root.join("lea");
    let (l, parent, task) = a_planned_parent(&origin, &lea).await;
    let (omar, mia) = (root.join("omar"), root.join("mia"));
    clone_as(&origin, &omar, "Omar Diaz", "omar@example.org");
    clone_as(&origin, &mia, "Mia Chen", "mia@example.org");
    let (o, m) = (server(&omar).await, server(&mia).await);
    let team = Team {
        origin: &origin,
        task: &task,
        parent: &parent,
        lea: (&lea, &l),
        omar: (&omar, &o),
        mia: (&mia, &m),
    };

    let mia_1 = m.ok(team.story(1)).await["session_id"].clone();
    a_sprint_claimed_elsewhere_is_never_built_by_the_parent(&team).await;
    let omar_2 = a_live_claim_is_released_only_by_its_holder_s_name(&team).await;
    let mia_2 = an_offline_claim_catches_up_or_is_stopped(&team, &root, &omar_2).await;
    two_stories_of_one_sprint_ask_the_human(&team, &mia_2).await;
    a_hanging_remote_holds_up_no_reply(&team).await;
    assert!(!mia_1.is_null());
    for c in [l, o, m] {
        c.close().await;
    }
}

/// V1: Mia holds sprint 1 on the remote. Lea's parent (her model's `status`, her first
/// reading of the claims, so fetched) names her, runs the sprint as a story, leaves it out
/// of what the task builds, and refuses a plain development report naming the holder.
async fn a_sprint_claimed_elsewhere_is_never_built_by_the_parent(team: &Team<'_>) {
    let l = team.lea.1;
    let v = l.ok(status(team.parent)).await;
    let said = v.to_string();
    assert!(said.contains("sprint 1 (Login) by Mia Chen"), "{v:#}");
    assert_eq!(v["claimed"][0]["sprint"], 1, "{v:#}");
    assert!(
        v["claimed"][0]["owner"]
            .as_str()
            .unwrap()
            .starts_with("Mia Chen"),
        "{v:#}"
    );
    let step = v["next_step"].as_str().unwrap();
    assert!(
        step.contains("nothing is submitted here")
            && step.contains("No story holds sprint(s) 2, 3 yet"),
        "{step}"
    );
    if let Some(prompt) = v["role_prompt"].as_str() {
        assert!(
            prompt.contains("sprint 1 held by stories")
                && prompt.contains("not built in this task"),
            "{prompt}"
        );
    }
    assert!(!said.contains("scope to build: all"), "{v:#}");
    let refused = l.refused(dev(team.parent), "invalid_state").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("sprint 1 (held by Mia Chen <mia@example.org>")
            && m.contains("claimed on the remote `origin`"),
        "{m}"
    );
}

/// V2: Omar holds sprint 2 from a live clone. Lea's release at her terminal shows it, says
/// he may still be working, and is not made with "y"; typed back, his name releases it.
/// His next `status`, and his dashboard's page of the story, say by whom and when.
async fn a_live_claim_is_released_only_by_its_holder_s_name(team: &Team<'_>) -> Value {
    let (omar, o) = team.omar;
    let omar_2 = o.ok(team.story(2)).await["session_id"].clone();
    let lea = team.lea.0;
    let args = ["claims", "release", team.task, "2"];
    let prompt = "Type their name (Omar Diaz) to release it: ";
    let (code, out) = at_terminal(lea, &args, prompt, "y\n");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Omar Diaz may still be working on it"),
        "{out}"
    );
    assert!(out.contains("Not released"), "{out}");
    assert!(remote_claims(team.origin).contains("/sprint-2"));
    let (code, out) = at_terminal(lea, &args, prompt, "Omar Diaz\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Released sprint 2"), "{out}");
    assert!(!remote_claims(team.origin).contains("/sprint-2"));

    let released = "was released on the remote `origin` by Lea Stone <lea@example.org>";
    let v = until_said(o, status(&omar_2), released).await;
    assert!(
        v["notices"]
            .to_string()
            .contains("Another clone may claim the sprint now"),
        "{v:#}"
    );
    let d = Dash::open(omar);
    let page = d
        .get(&format!(
            "/dashboard/api/task?project=0&id={}",
            omar_2.as_str().unwrap()
        ))
        .json();
    let news = page["claim_news"].as_str().unwrap_or_default();
    assert!(news.contains(released), "{page:#}");
    d.stop();
    omar_2
}

/// V3: Mia's remote is out of reach when she claims sprint 3: the claim is kept in her clone,
/// said so, and on the remote after her next call once it is back. Offline again, she
/// claims sprint 2 while Lea claims it on the remote from a worktree: back online, Mia's
/// story is told and refused more work, and so is Omar's, released before. Mia's story
/// of sprint 2.
async fn an_offline_claim_catches_up_or_is_stopped(
    team: &Team<'_>,
    root: &Path,
    omar_2: &Value,
) -> Value {
    let (mia, m) = team.mia;
    let origin = team.origin.to_str().unwrap();
    git(mia, &["remote", "set-url", "origin", "/nowhere/origin.git"]);
    let v = m.ok(team.story(3)).await;
    assert!(
        v["notices"]
            .to_string()
            .contains("kept in this clone for now"),
        "{v:#}"
    );
    let mia_3 = v["session_id"].clone();
    assert!(!remote_claims(team.origin).contains("/sprint-3"));
    git(mia, &["remote", "set-url", "origin", origin]);
    let started = Instant::now();
    while !remote_claims(team.origin).contains("/sprint-3") {
        assert!(started.elapsed() < Duration::from_secs(30), "never pushed");
        m.ok(status(&mia_3)).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(remote_claims(team.origin).contains("\"owner\":\"Mia Chen <mia@example.org>\""));

    git(mia, &["remote", "set-url", "origin", "/nowhere/origin.git"]);
    let mia_2 = m.ok(team.story(2)).await["session_id"].clone();
    let (lea, _) = team.lea;
    let wt = root.join("lea-sprint-2");
    git(
        lea,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().unwrap(),
            "-b",
            "sprint-2",
        ],
    );
    let w = server(&wt).await;
    w.ok(team.story(2)).await;
    w.close().await;
    git(mia, &["remote", "set-url", "origin", origin]);
    let taken = "Another story holds sprint 2 on the remote `origin` now: Lea Stone";
    let v = until_said(m, status(&mia_2), taken).await;
    assert!(v.get("role_prompt").is_none(), "{v:#}");
    assert!(
        v["next_step"].as_str().unwrap().contains("stop")
            && v["user_message"]
                .as_str()
                .unwrap()
                .starts_with("Another story holds sprint 2"),
        "{v:#}"
    );
    let refused = m.refused(dev(&mia_2), "sprint_taken").await;
    let msg = refused["error"]["message"].to_string();
    assert!(
        msg.contains(taken) && msg.contains("This story is stopped"),
        "{msg}"
    );
    let o = team.omar.1;
    until_said(o, status(omar_2), taken).await;
    o.refused(dev(omar_2), "sprint_taken").await;
    mia_2
}

/// Mia's copy of the parent sees two stories of sprint 2 (hers, and Lea's claim): its
/// `status`, the terminal's and `list` say so and ask which to keep; at her terminal she
/// keeps Lea's, and the parent counts one.
async fn two_stories_of_one_sprint_ask_the_human(team: &Team<'_>, mia_2: &Value) {
    let (mia, m) = team.mia;
    let twice = "sprint 2 has 2 stories";
    let v = until_said(m, status(team.parent), twice).await;
    assert!(
        v.to_string()
            .contains(&format!("`bmad-mcp claims keep {} 2`", team.task)),
        "{v:#}"
    );
    let (_, out) = run(mia, &["status", team.task]);
    assert!(out.contains(twice), "{out}");
    let (_, out) = run(mia, &["list"]);
    assert!(out.contains(twice), "{out}");
    let args = ["claims", "keep", team.task, "2"];
    let (code, out) = at_terminal(mia, &args, "Keep which? Type its number (1-2): ", "2\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2. the story of Lea Stone"), "{out}");
    assert!(
        out.contains("Sprint 2 is kept for the story of Lea Stone"),
        "{out}"
    );
    assert!(remote_claims(team.origin).contains("\"kept_by\":\"Mia Chen <mia@example.org>"));
    let v = m.ok(status(team.parent)).await;
    assert!(!v.to_string().contains(twice), "{v:#}");
    m.refused(dev(mia_2), "sprint_taken").await;
}

/// V4: Lea's remote hangs, and her last fetch is 10 minutes old. Her model's `status`, her
/// `list` and her dashboard's page answer at once, saying how old their picture is; the
/// fetch behind them fails at its deadline and is remembered, and every later answer says
/// when and why, still at once.
async fn a_hanging_remote_holds_up_no_reply(team: &Team<'_>) {
    let (lea, l) = team.lea;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    git(
        lea,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("http://{addr}/team.git"),
        ],
    );
    let old = chrono::Utc::now() - chrono::TimeDelta::minutes(10);
    let note = json!({"ok": old.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)});
    let fetched = lea.join(".git/bmad-mcp/.bmad-task/claims-fetched");
    std::fs::write(&fetched, note.to_string()).unwrap();
    let d = Dash::open(lea);
    let page = format!(
        "/dashboard/api/task?project=0&id={}",
        team.parent.as_str().unwrap()
    );

    let timed = |t: Instant| t.elapsed();
    let t = Instant::now();
    let v = l.ok(status(team.parent)).await;
    let first = timed(t);
    let said = v["notices"].to_string();
    assert!(
        said.contains("as of 10 min ago, this clone's last fetch"),
        "{said}"
    );
    assert!(first < NEVER_WAITED, "the first status waited {first:?}");
    // The fetch started behind it fails at its deadline; the next replies say so.
    let failed = "the latest try, ";
    until_said(l, status(team.parent), failed).await;

    let (mut statuses, mut pages, mut lists) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let v = l.ok(status(team.parent)).await;
        statuses.push(timed(t));
        let said = v["notices"].to_string();
        assert!(
            said.contains("as of 10 min ago, this clone's last fetch; the latest try, ")
                && said.contains(" ago, failed: "),
            "{said}"
        );
        let t = Instant::now();
        let p = d.get(&page).json();
        pages.push(timed(t));
        let claims = p["claims"].as_str().unwrap_or_default();
        assert!(claims.contains("as of 10 min ago"), "{p:#}");
        let t = Instant::now();
        l.ok(json!({"action": "list"})).await;
        lists.push(timed(t));
    }
    eprintln!(
        "bad_days_remote: with a hanging remote, the first status took {first:?}; then status {statuses:?}, dashboard page {pages:?}, list {lists:?}"
    );
    for (what, times) in [("status", &statuses), ("page", &pages), ("list", &lists)] {
        let mut sorted = times.clone();
        sorted.sort();
        assert!(
            sorted.iter().all(|t| *t < NEVER_WAITED),
            "{what} waited on the network: {times:?}"
        );
        assert!(
            sorted[sorted.len() / 2] < Duration::from_secs(1),
            "{what}: {times:?}"
        );
    }
    d.stop();
}
