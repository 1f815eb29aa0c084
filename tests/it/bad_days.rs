//! A team's bad days, with real git: a bare remote and three clones, each with its own
//! identity and its own server (Lea leads the parent task; Ben and Cy take sprints as
//! stories). Ben's clone dies holding sprint 1 before it pushed anything: Cy is refused
//! naming the command that frees it, `bmad-mcp claims` lists who holds what since when and
//! from where, and Ben, from a new clone, takes his own claim over. Lea's `status` (the
//! model's, from the clone's last fetch refreshed in the background; hers at the terminal,
//! fetched) and `list` name both holders before anything is merged. Cy's clone dies too:
//! Lea releases his sprint at her terminal (refused from a pipe), the release is recorded
//! with her name, and the sprint can be claimed again; both dead clones are marked "(gone)"
//! on this machine, where their claims were taken. Lea's dashboard runs (in headless
//! Chromium when installed) while she adds a worktree for sprint 3: its story is on the
//! open page within seconds. Once every story is built and the parent's final QA completes
//! it on `main`, the worktree's copy of the parent says it is behind (the model's `status`,
//! the terminal's, the dashboard's answer for it) and the page lists the task and each
//! story once. Then Lea and Ben send one PRD back on both clones: the merge conflicts, the
//! refusal names `bmad-mcp resolve`, and after Ben keeps Lea's version the lesson of his
//! discarded send-back is retired, not recalled.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::dash::Dash;
use crate::support::terminal::run_in_terminal;
use crate::support::webdriver::{Browser, CHROMEDRIVER, CHROMIUM};
use crate::support::{bin, git, passing_architecture, passing_prd, to_approved_plan, Client};
use crate::team_git::{clone_as, commit_all, git_may_fail, server};

pub(crate) const THREE_SPRINTS: &str = "# Sprint Plan\n\n## Sprint 1: Login\n- the form\n\n## Sprint 2: Logout\n- the button\n\n## Sprint 3: Profile\n- the page\n";
const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n";
const QA: &str = "# QA Report\n\n## Results\n30 passed.\n\nIntent: met\nQuality Score: 93/100\n";

/// The lead's dashboard page: in headless Chromium when it is installed, else (said on
/// stderr, with why) its answers read over HTTP with the page's cookie, as the page reads
/// them.
enum Page {
    Browser(Browser, Dash),
    Http(Dash),
}

impl Page {
    fn open(project: &Path) -> Page {
        if !(Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()) {
            eprintln!("bad_days: {CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium chromium-driver): the dashboard is read over HTTP, not in a browser");
            return Page::Http(Dash::open(project));
        }
        let d = Dash::start(project);
        let b = Browser::start();
        b.goto(&d.url);
        b.find("#tasks");
        Page::Browser(b, d)
    }

    /// The dashboard's JSON answer at `path`, in the browser the page's own request.
    fn api(&self, path: &str) -> Value {
        match self {
            Page::Browser(b, _) => b.run(&format!(
                "return fetch({path:?}, {{credentials: 'same-origin'}}).then(r => r.json())"
            )),
            Page::Http(d) => d.get(path).json(),
        }
    }

    /// How many rows of the task list show the session `id`: on the page as drawn, or in
    /// the list it is drawn from.
    fn rows(&self, id: &Value) -> usize {
        let id = id.as_str().unwrap();
        let n = match self {
            Page::Browser(b, _) => b.run(&format!(
                "return document.querySelectorAll(\"#tasks tr[data-session='{id}']\").length"
            )),
            Page::Http(d) => {
                let tasks = d.get("/dashboard/api/tasks").json();
                json!(tasks["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|t| t["session_id"] == id)
                    .count())
            }
        };
        n.as_u64().unwrap_or(0) as usize
    }

    /// Waits up to 10 s for `ok`, read again every 200 ms (the page updates itself when a
    /// file changes): how long it took.
    async fn within_seconds(&self, what: &str, ok: impl Fn(&Page) -> bool) -> Duration {
        let started = Instant::now();
        while !ok(self) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{what}: not on the page after 10 s: {:#}",
                self.api("/dashboard/api/tasks")
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        started.elapsed()
    }

    fn dash(&self) -> &Dash {
        match self {
            Page::Browser(_, d) | Page::Http(d) => d,
        }
    }

    fn close(self) {
        match self {
            Page::Browser(b, d) => {
                drop(b);
                d.stop();
            }
            Page::Http(d) => {
                d.stop();
            }
        }
    }
}

/// Builds, reviews and checks the story `sid` on `c`: it completes.
async fn build_story(c: &Client, sid: &Value) {
    for result in [DEV, REVIEW, QA] {
        c.ok(json!({"action": "submit", "session_id": sid, "claude_result": result}))
            .await;
    }
}

/// The team's folder and remote, the lead's clone, her server and the parent task.
struct Lead<'a> {
    root: &'a Path,
    origin: &'a Path,
    dir: &'a Path,
    server: &'a Client,
    parent: &'a Value,
    task: &'a str,
}

impl Lead<'_> {
    /// A story's start for `sprint` of the parent.
    fn story(&self, sprint: u32) -> Value {
        json!({"action": "start", "parent": self.task, "sprint": sprint})
    }
}

/// Lea's dashboard runs; she adds a worktree for sprint 3 meanwhile, and the story she
/// starts there is on the open page within seconds, under its parent listed once; a reply
/// there that asks the human links to the page. The page, the worktree's server, the
/// worktree and the story's session id.
async fn a_worktree_joins_the_running_page(lead: &Lead<'_>) -> (Page, Client, PathBuf, Value) {
    let page = Page::open(lead.dir);
    let s3 = lead.root.join("lea-sprint-3");
    let at = s3.to_str().unwrap();
    git(lead.dir, &["worktree", "add", "-q", at, "-b", "sprint-3"]);
    let w = server(&s3).await;
    let lea_3 = w.ok(lead.story(3)).await["session_id"].clone();
    let took = page
        .within_seconds("the new worktree's story", |p| p.rows(&lea_3) == 1)
        .await;
    eprintln!("bad_days: the new worktree's story was on the page after {took:?}");
    assert_eq!(page.rows(lead.parent), 1);
    // Served from now on as the worktrees served from the start: replies link the page.
    let v = w
        .ok(json!({"action": "start", "objective": "Write the profile page's help text"}))
        .await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let v = w
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let link = format!("{}/dashboard/#/task/{sid}", page.dash().origin());
    assert_eq!(v["dashboard_url"], link.as_str(), "{v:#}");
    (page, w, s3, lea_3)
}

/// Every sprint is built: Ben (`ben`: his server, clone and two stories) pushes his two
/// stories, Lea builds hers in the worktree (`wt`) and merges its branch, and the parent's
/// final QA completes it on `main`.
async fn every_sprint_built_and_the_parent_completed(
    lead: &Lead<'_>,
    wt: (&Client, &Path, &Value),
    ben: (&Client, &Path, &Value, &Value),
) {
    let (b, ben2, ben_1, ben_2) = ben;
    build_story(b, ben_1).await;
    build_story(b, ben_2).await;
    commit_all(ben2, "Ben: sprints 1 and 2");
    git(ben2, &["push", "-q"]);
    let (w, s3, lea_3) = wt;
    build_story(w, lea_3).await;
    commit_all(s3, "Lea: sprint 3");
    git(lead.dir, &["pull", "-q", "--no-edit"]);
    git(lead.dir, &["merge", "-q", "--no-edit", "sprint-3"]);
    let v = lead
        .server
        .ok(json!({"action": "submit", "session_id": lead.parent, "stage": "qa", "claude_result": QA}))
        .await;
    assert_eq!(v["state"], "completed", "{v:#}");
    commit_all(lead.dir, "Lea: the final QA");
    git(lead.dir, &["push", "-q"]);
}

/// The worktree (`wt`: its server and folder) still holds the parent as it was: its copy
/// says it is behind, in the model's `status` and the terminal's, and in the dashboard's
/// answer for that copy; the page lists the task once, completed, and each of `stories`
/// once.
async fn the_stale_copy_says_behind(
    lead: &Lead<'_>,
    page: &Page,
    wt: (&Client, &Path),
    stories: &[&Value],
) {
    let (w, s3) = wt;
    let behind = format!(
        "is behind: the task completed on branch `main` in {}",
        lead.dir.display()
    );
    let v = w
        .ok(json!({"action": "status", "session_id": lead.parent}))
        .await;
    assert!(v["notices"].to_string().contains(&behind), "{v:#}");
    let (_, out) = run(s3, &["status", lead.task]);
    assert!(out.contains(&behind), "{out}");
    page.within_seconds("the completed parent", |p| {
        let tasks = p.api("/dashboard/api/tasks");
        let row = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| &t["session_id"] == lead.parent)
            .cloned()
            .unwrap_or_default();
        row["state"] == "completed" && row["extra"].get("behind").is_none()
    })
    .await;
    for id in stories.iter().copied().chain([lead.parent]) {
        let listed = page.api("/dashboard/api/tasks");
        assert_eq!(page.rows(id), 1, "{id}: {listed:#}");
    }
    let projects = page.api("/dashboard/api/tasks")["projects"].clone();
    let copy = projects
        .as_array()
        .unwrap()
        .iter()
        .position(|p| p.as_str() == s3.to_str())
        .unwrap_or_else(|| panic!("the worktree is served: {projects}"));
    let stale = page.api(&format!(
        "/dashboard/api/task?project={copy}&id={}",
        lead.parent.as_str().unwrap()
    ));
    let said = stale["behind"].as_str().unwrap_or_default();
    assert!(said.contains(&behind), "{stale:#}");
}

/// A command of the binary in `dir`, as a person types it with stdout piped: its exit
/// code and what it printed.
pub(crate) fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = bin(dir)
        .env_remove("BMAD_OWNER")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The claims on the bare remote, by ref name.
pub(crate) fn remote_claims(origin: &Path) -> String {
    git(
        origin,
        &[
            "for-each-ref",
            "--format=%(refname) %(contents:subject)",
            "refs/bmad/claims/",
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_of_three_clones_meets_its_bad_days_and_each_is_fixed_by_what_it_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let origin = root.join("origin.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let lea = root.join("lea");
    let (l, parent, task) = a_planned_parent(&origin, &lea).await;
    let lead = Lead {
        root: &root,
        origin: &origin,
        dir: &lea,
        server: &l,
        parent: &parent,
        task: &task,
    };

    // Ben claims sprint 1, then his clone dies before it pushed anything.
    let ben = root.join("ben");
    clone_as(&origin, &ben, "Ben Okafor", "ben@example.org");
    let b = server(&ben).await;
    b.ok(lead.story(1)).await;
    b.close().await;
    std::fs::remove_dir_all(&ben).unwrap();
    let cy = root.join("cy");
    let c = others_are_refused_and_the_lead_lists_the_claims(&lead, &ben, &cy).await;
    let (b, ben2, ben_1) = the_owner_takes_his_claim_over_from_a_new_clone(&lead).await;
    the_parent_names_both_holders(&lead, &c).await;
    c.close().await;
    std::fs::remove_dir_all(&cy).unwrap();
    the_lead_releases_the_dead_clone_s_sprint(&lead, &cy);
    let ben_2 = b.ok(lead.story(2)).await["session_id"].clone();

    let (page, w, s3, lea_3) = a_worktree_joins_the_running_page(&lead).await;
    every_sprint_built_and_the_parent_completed(
        &lead,
        (&w, &s3, &lea_3),
        (&b, &ben2, &ben_1, &ben_2),
    )
    .await;
    the_stale_copy_says_behind(&lead, &page, (&w, &s3), &[&ben_1, &ben_2, &lea_3]).await;
    page.close();
    w.close().await;

    a_conflict_names_resolve_and_the_discarded_side_stops_teaching(&lead, &b, &ben2).await;
    b.close().await;
    l.close().await;
}

/// Lea's clone of `origin` at `lea`, with her parent task's three-sprint plan approved,
/// committed and pushed: her server, the parent's session id and its task name.
pub(crate) async fn a_planned_parent(origin: &Path, lea: &Path) -> (Client, Value, String) {
    clone_as(origin, lea, "Lea Stone", "lea@example.org");
    git(lea, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    std::fs::write(lea.join("README.md"), "the app\n").unwrap();
    assert_eq!(run(lea, &["init"]).0, 0);
    commit_all(lea, "first");
    git(lea, &["push", "-q", "-u", "origin", "main"]);
    let l = server(lea).await;
    let start = json!({"action": "start", "objective": "Add login, logout and a profile"});
    let documents = [
        passing_prd(),
        passing_architecture(),
        THREE_SPRINTS.to_string(),
    ];
    let (parent, task) = to_approved_plan(&l, start, &documents).await;
    commit_all(lea, "Lea: the plan");
    git(lea, &["push", "-q"]);
    (l, parent, task)
}

/// Cy (his clone at `cy`) is refused sprint 1, told who holds it, that Ben's clone (`ben`)
/// is gone, and the command that frees it; the lead lists the claims: who, which sprint
/// of which task, since when, from where. Cy's server.
async fn others_are_refused_and_the_lead_lists_the_claims(
    lead: &Lead<'_>,
    ben: &Path,
    cy: &Path,
) -> Client {
    let task = lead.task;
    clone_as(lead.origin, cy, "Cy Park", "cy@example.org");
    let c = server(cy).await;
    let refused = c.refused(lead.story(1), "sprint_taken").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(m.contains("by Ben Okafor <ben@example.org>"), "{m}");
    // The claim was taken on this machine, and its clone is not here any more.
    assert!(m.contains(&format!("in {} (gone)", ben.display())), "{m}");
    assert!(
        m.contains(&format!("`bmad-mcp claims release {task} 1`")),
        "{m}"
    );

    let (code, out) = run(lead.dir, &["claims"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 claim(s) on the remote `origin`, read now"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{task} sprint 1: Ben Okafor <ben@example.org> on branch `main` in {} (gone), since ",
            ben.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(" UTC, just now") || out.contains(" min ago"),
        "{out}"
    );
    c
}

/// Ben, from a new clone with the same identity, takes his own claim over: his server,
/// the new clone and the story's session id.
async fn the_owner_takes_his_claim_over_from_a_new_clone(
    lead: &Lead<'_>,
) -> (Client, PathBuf, Value) {
    let ben2 = lead.root.join("ben-again");
    clone_as(lead.origin, &ben2, "Ben Okafor", "ben@example.org");
    let b = server(&ben2).await;
    let v = b.ok(lead.story(1)).await;
    assert!(v["notices"].to_string().contains("taken over"), "{v:#}");
    let claims = remote_claims(lead.origin);
    assert!(
        claims.contains(&ben2.display().to_string()),
        "{claims}\n{:#}",
        v["notices"]
    );
    (b, ben2, v["session_id"].clone())
}

/// Cy (`c`) takes sprint 2. The model's status does not wait on the network: it gives
/// this clone's last fetch (the lead's `claims` before), says how old, and fetches again
/// in the background, so a status moments later names both holders before anything
/// merged. The commands a person types fetch: `status` and the parent's row in `list`.
async fn the_parent_names_both_holders(lead: &Lead<'_>, c: &Client) {
    c.ok(lead.story(2)).await;
    let status = json!({"action": "status", "session_id": lead.parent});
    let v = lead.server.ok(status.clone()).await;
    let said = v["notices"].to_string();
    assert!(said.contains("sprint 1 (Login) by Ben Okafor"), "{v:#}");
    assert!(
        said.contains("Claimed on the remote `origin` (as of ")
            && said.contains(" ago, this clone's last fetch)"),
        "{v:#}"
    );
    let mut said = String::new();
    for _ in 0..100 {
        said = lead.server.ok(status.clone()).await["notices"].to_string();
        if said.contains("sprint 2 (Logout) by Cy Park") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(said.contains("sprint 2 (Logout) by Cy Park"), "{said}");
    assert!(said.contains("sprint 1 (Login) by Ben Okafor"), "{said}");
    let (_, out) = run(lead.dir, &["status", lead.task]);
    assert!(
        out.contains("Claimed on the remote `origin` (read now)"),
        "{out}"
    );
    assert!(out.contains("sprint 2 (Logout) by Cy Park"), "{out}");
    let (code, out) = run(lead.dir, &["list"]);
    assert_eq!(code, 0, "{out}");
    let row = out.lines().skip_while(|l| !l.contains(lead.task)).nth(1);
    let row = row.unwrap_or_default();
    assert!(
        row.contains("Claimed on the remote `origin` (read now)")
            && row.contains("sprint 1 (Login) by Ben Okafor")
            && row.contains("sprint 2 (Logout) by Cy Park"),
        "{out}"
    );
}

/// Cy's clone (`cy`) died too: the lead's `status` marks it gone, and she releases his
/// sprint at her own terminal, not from a pipe; the release names her, and the sprint is
/// free for anyone.
fn the_lead_releases_the_dead_clone_s_sprint(lead: &Lead<'_>, cy: &Path) {
    let (task, origin) = (lead.task, lead.origin);
    let whose = format!(
        "by Cy Park <cy@example.org> on branch `main` in {} (gone), since ",
        cy.display()
    );
    let (_, out) = run(lead.dir, &["status", task]);
    assert!(out.contains(&format!("sprint 2 (Logout) {whose}")), "{out}");
    let (code, _) = run(lead.dir, &["claims", "release", task, "2"]);
    assert_eq!(code, 2, "refused without a terminal");
    assert!(remote_claims(origin).contains("/sprint-2"));
    let mut cmd = bin(lead.dir);
    cmd.env_remove("BMAD_OWNER")
        .args(["claims", "release", task, "2"]);
    let (code, out) = run_in_terminal(cmd, "Release it? [y/N] ", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&whose),
        "it shows whose, and that its clone is gone: {out}"
    );
    assert!(out.contains("Released sprint 2"), "{out}");
    assert!(!remote_claims(origin).contains("/sprint-2"));
    let (_, out) = run(lead.dir, &["claims"]);
    assert!(
        out.contains(&format!(
            "{task} sprint 2: released by Lea Stone <lea@example.org>"
        )),
        "{out}"
    );
}

/// Lea and Ben (`b`, in `ben2`) send the same PRD back on both clones, each with their own
/// words: the merge conflicts on the task, and the refusal names `resolve`, not a file
/// checkout. Ben keeps Lea's version: the lesson his discarded send-back taught is
/// retired with it, and only Lea's is recalled.
async fn a_conflict_names_resolve_and_the_discarded_side_stops_teaching(
    lead: &Lead<'_>,
    b: &Client,
    ben2: &Path,
) {
    let (l, lea) = (lead.server, lead.dir);
    let v = l
        .ok(json!({"action": "start", "objective": "Add a settings page"}))
        .await;
    let (sid, other) = (v["session_id"].clone(), v["task_name"].clone());
    let other = other.as_str().unwrap();
    let on = |sid: &Value, mut args: Value| {
        args["session_id"] = sid.clone();
        args
    };
    let prd = json!({"action": "submit", "claude_result": passing_prd()});
    l.ok(on(&sid, prd)).await;
    commit_all(lea, "Lea: a settings page");
    git(lea, &["push", "-q"]);
    git(ben2, &["pull", "-q", "--no-edit"]);
    let words = [
        (l, lea, "Name the users first."),
        (b, ben2, "Say which browsers the settings page supports."),
    ];
    for (c, dir, said) in words {
        c.ok(on(&sid, json!({"action": "reject", "feedback": said})))
            .await;
        commit_all(dir, said);
    }
    git(lea, &["push", "-q"]);
    assert!(
        !git_may_fail(ben2, &["pull", "-q", "--no-edit"]),
        "the task conflicts"
    );
    let v = b
        .refused(on(&sid, json!({"action": "status"})), "session_conflicted")
        .await;
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains(&format!("`bmad-mcp resolve {other} --theirs`")),
        "{m}"
    );
    assert!(!m.contains("git checkout --ours"), "{m}");

    let (code, out) = run(ben2, &["resolve", other, "--theirs"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Retired 1 lesson(s) learnt on the other version"),
        "{out}"
    );
    git(ben2, &["commit", "-q", "--no-edit"]);
    let (_, active) = run(ben2, &["lessons", "list"]);
    assert!(active.starts_with("1 lesson(s)"), "{active}");
    assert!(active.contains("Name the users first"), "{active}");
    assert!(!active.contains("browsers"), "{active}");
    let (_, all) = run(ben2, &["lessons", "list", "--all"]);
    assert!(
        all.contains("browsers") && all.contains("(retired)"),
        "{all}"
    );
    // What the model is given when it asks: Lea's lesson, not the retired one.
    let recall = json!({"action": "recall", "query": "the settings page: its users, which browsers it supports"});
    let v = b.ok(recall).await;
    let recalled = v["recalled"].to_string();
    assert!(
        recalled.contains("Name the users first") && !recalled.contains("browsers"),
        "{v:#}"
    );
}
