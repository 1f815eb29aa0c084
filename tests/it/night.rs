//! The night shift, `bmad-mcp run`, with the pinned Claude Code CLI on the scripted model
//! (`tests/hosts/fake_model.py`, one script per step chosen by the step's prompt): an
//! approved plan of eight sprints, three of them planted to stop (sprint 2's development
//! fails the project's check, sprint 5's review says Fail, sprint 7's development uses more
//! tokens than the budget the human approved). The other five complete while the three
//! park, each with its reason; a decision at the terminal resumes sprint 5 and it
//! completes; each story's tokens are what the scripted backend reported for its sessions;
//! no host is started with a bypass flag, and a host configured to bypass is refused. A run
//! killed with SIGKILL mid-step and started again ends where an uninterrupted run ends, no
//! step applied twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::hosts::{Fake, Place};
use crate::support::terminal::in_terminal;
use crate::support::{bin, connect, git, passing_architecture, passing_prd, read_json, Era};

const SPRINTS: u32 = 8;
const DEV: &str =
    "# Implementation Report\n\n## Summary\nBuilt the sprint.\n\n## Tests\n9 passed.\n";
/// A review in the layers the BMAD method's review asks for (plain without it).
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\n## Edge Cases\nNo findings.\n\n## Verification Gaps\nNo findings.\n\n## Blind Pass\nNo findings.\n\n## Acceptance Audit\nNo findings.\n\nReview Status: Pass\n";
const FAILED_REVIEW: &str =
    "# Code Review\n\n## Findings\n- the list page drops items.\n\nReview Status: Fail\n";
const QA: &str = "# QA Report\n\n## Results\n30 passed.\n\nIntent: met\nQuality Score: 93/100\n";
/// The check the human approved: it fails in sprint 2's worktree only.
const CHECK: &str = "[checks]\nsprint = 'case \"$PWD\" in */sprint-2) echo broken; exit 1;; esac'\n\n[run]\nbudget_tokens = 200\nnotify = \"{root}/notify.sh\"\n";
/// The status calls sprint 7's development makes before it submits: its tokens cross the
/// budget (each request the scripted backend answers reports 15 tokens).
const SPRINT_7_EXTRA_CALLS: usize = 12;

/// An API key of the form Claude Code expects; the fake takes any.
const KEY: &str = "sk-ant-api03-fake-key-for-the-scripted-model";

fn plan_text(sprints: u32) -> String {
    let mut plan = format!("# Sprint Plan\n\n## Sprint Overview\n{sprints} sprints.\n");
    for n in 1..=sprints {
        plan.push_str(&format!("\n## Sprint {n}: Part {n}\n- piece {n}\n"));
    }
    plan
}

fn call(args: Value) -> Value {
    json!({"tool": "bmad", "args": args})
}

fn status() -> Value {
    call(json!({"action": "status", "session_id": "{prompt_session}"}))
}

fn submit(doc: &str) -> Value {
    call(json!({"action": "submit", "session_id": "{prompt_session}", "claude_result": doc}))
}

/// The scripted model's steps, chosen by the step's prompt: the planted stops first.
fn scripts() -> Value {
    let mut extra = vec![status(); SPRINT_7_EXTRA_CALLS];
    extra.push(submit(DEV));
    json!([
        {"when": ["sprint 7, stage: dev"], "steps": extra},
        // The model tries to pass its own failing review: the headless host closes the
        // dialog unseen, and the confirm is refused.
        {"when": ["sprint 5, stage: review"], "steps": [status(), submit(FAILED_REVIEW),
            call(json!({"action": "confirm", "session_id": "{prompt_session}"}))]},
        {"when": ["stage: dev"], "steps": [status(), submit(DEV)]},
        {"when": ["stage: review"], "steps": [status(), submit(REVIEW)]},
        {"when": ["final QA", "stage: qa"], "steps": [status(),
            call(json!({"action": "submit", "session_id": "{prompt_session}", "stage": "qa", "claude_result": QA}))]},
        {"when": ["stage: qa"], "steps": [status(), submit(QA)]},
    ])
}

/// The host each step runs in, its binary.
#[derive(Clone)]
enum Host {
    Claude(PathBuf),
    Codex(PathBuf),
}

/// The project: a git repository whose task has an approved plan of `SPRINTS` sprints and
/// the human's approved policy (the check, the budget), all committed; the fake model; the
/// Claude Code home.
struct Night {
    place: Place,
    fake: Fake,
    task: String,
    parent: String,
    host: Host,
}

impl Night {
    async fn new(host: Host) -> Night {
        Night::with(host, SPRINTS, CHECK, None).await
    }

    /// An approved plan of `sprints` sprints under the policy `policy`, the BMAD method
    /// installed by `method` when given.
    async fn with(host: Host, sprints: u32, policy: &str, method: Option<&Path>) -> Night {
        let place = Place::new();
        let main = place.project.clone();
        git(&main, &["config", "user.name", "Lead"]);
        git(&main, &["config", "user.email", "lead@example.com"]);
        git(&main, &["checkout", "-q", "-b", "main"]);
        if let Some(installer) = method {
            crate::support::method::install(installer, &main, "claude-code");
        }
        std::fs::write(
            main.join(".gitignore"),
            ".bmad-task/.lock\n.bmad-task/task-mapping.json*\n",
        )
        .unwrap();
        std::fs::create_dir_all(main.join(".bmad")).unwrap();
        let root = place.root.display().to_string();
        std::fs::write(
            main.join(".bmad/config.toml"),
            policy.replace("{root}", &root),
        )
        .unwrap();
        // The human's notification: each parked story's line, appended to a file.
        let notify = place.root.join("notify.sh");
        std::fs::write(
            &notify,
            "#!/bin/sh\necho \"$1\" >> \"$(dirname \"$0\")/notified\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&notify, std::fs::Permissions::from_mode(0o755)).unwrap();
        git(&main, &["add", "-A"]);
        git(&main, &["commit", "-q", "-m", "first"]);
        if !policy.is_empty() {
            let (code, out) = in_terminal(&main, &["config", "approve"], "[y/N]", "y\n");
            assert_eq!(
                code, 0,
                "the human approves the check and the budget: {out}"
            );
        }
        let lead = connect(Era::Modern, &main).await;
        let (sid, task) = crate::support::to_approved_plan(
            &lead,
            json!({"action": "start", "objective": "Build a team todo app", "cwd": main.to_str().unwrap()}),
            &[passing_prd(), passing_architecture(), plan_text(sprints)],
        )
        .await;
        lead.close().await;
        git(&main, &["add", "-A"]);
        git(&main, &["commit", "-q", "-m", "the approved plan"]);
        let fake = Fake::by_prompt(
            &place,
            "night",
            scripts(),
            &json!({"names": ["Bash"], "arg": "command", "extra": {}}),
        );
        configure(&place, &fake);
        Night {
            place,
            fake,
            task,
            parent: sid.as_str().unwrap().to_string(),
            host,
        }
    }

    /// `bmad-mcp run` in the project, as the person starts it, on the fake, its output into
    /// `out`.
    fn run(&self, extra: &[&str], out: &Path) -> Run {
        let mut cmd = bin(&self.place.project);
        let (host, program) = match &self.host {
            Host::Claude(p) => ("claude-code", p),
            Host::Codex(p) => ("codex", p),
        };
        cmd.args([
            "run",
            &self.task,
            "--host",
            host,
            "--host-bin",
            program.to_str().unwrap(),
        ])
        .args(["--parallel", "2"])
        .args(extra)
        .env("HOME", &self.place.home)
        .env("CODEX_HOME", self.place.home.join(".codex"))
        .env("FAKE_API_KEY", "fake")
        .env("CLAUDE_CONFIG_DIR", self.place.home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", self.fake.base())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("ENABLE_TOOL_SEARCH", "false")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env_remove("CLAUDECODE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap());
        Run(cmd.spawn().expect("bmad-mcp run starts"))
    }

    fn worktree(&self, n: u32) -> PathBuf {
        self.place.root.join(format!("project.stories/sprint-{n}"))
    }

    /// Each sprint's story: (session id, task name, stage, state), read from its worktree.
    fn stories(&self) -> BTreeMap<u32, (String, String, String, String)> {
        let dir = self
            .place
            .project
            .join(format!(".git/bmad-mcp/.bmad-task/stories/{}", self.parent));
        let mut out = BTreeMap::new();
        for n in 1..=SPRINTS {
            let entry = dir.join(format!("sprint-{n}.json"));
            if !entry.exists() {
                continue;
            }
            let e = read_json(&entry);
            let id = e["session_id"].as_str().unwrap().to_string();
            // The entry is written before the session while the run starts the story.
            let file = self
                .worktree(n)
                .join(format!(".bmad-task/session-{id}.json"));
            let Ok(s) = serde_json::from_str::<Value>(&read(&file)) else {
                continue;
            };
            out.insert(
                n,
                (
                    id,
                    s["task_name"].as_str().unwrap().to_string(),
                    s["current_stage"].as_str().unwrap().to_string(),
                    s["current_state"].as_str().unwrap().to_string(),
                ),
            );
        }
        out
    }

    /// (stage, state) of each sprint.
    fn where_each(&self) -> BTreeMap<u32, (String, String)> {
        self.stories()
            .into_iter()
            .map(|(n, (_, _, stage, state))| (n, (stage, state)))
            .collect()
    }
}

/// A run in the background, killed if the test ends first.
struct Run(Child);

impl std::ops::Deref for Run {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Run {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Run {
    /// Waits up to `limit` for the run to end, which it must with status 0; what it printed
    /// into `out`.
    fn ends_well(&mut self, limit: Duration, out: &Path) -> String {
        let ended = until(limit, || self.0.try_wait().unwrap().is_some());
        assert!(ended, "{}", read(out));
        assert_eq!(
            self.0.wait().unwrap().code(),
            Some(0),
            "{}",
            read(&out.with_extension("err"))
        );
        read(out)
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Each host's home: Claude Code's onboarding done and its key approved; Codex's model
/// provider the fake, under its `workspace-write` sandbox and `never` approval policy (no
/// bypass), no server of its own: the run registers bmad-mcp for each session.
fn configure(place: &Place, fake: &Fake) {
    let config = place.home.join(".claude");
    std::fs::create_dir_all(&config).unwrap();
    let state = json!({"hasCompletedOnboarding": true, "theme": "dark",
        "customApiKeyResponses": {"approved": [&KEY[KEY.len() - 20..]], "rejected": []}});
    std::fs::write(config.join(".claude.json"), state.to_string()).unwrap();
    let codex = place.home.join(".codex");
    std::fs::create_dir_all(&codex).unwrap();
    let toml = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"workspace-write\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n",
        fake.base()
    );
    std::fs::write(codex.join("config.toml"), toml).unwrap();
}

fn claude() -> Option<Host> {
    super::hosts::claude_cli().map(Host::Claude)
}

fn codex() -> Option<Host> {
    crate::support::npm::package_bin("codex", "codex", "codex end to end").map(Host::Codex)
}

/// Where the uninterrupted run leaves the eight stories.
fn expected() -> BTreeMap<u32, (String, String)> {
    (1..=SPRINTS)
        .map(|n| {
            let at = match n {
                2 => ("dev", "awaiting_confirmation"),
                5 => ("review", "awaiting_confirmation"),
                7 => ("review", "generating"),
                _ => ("qa", "completed"),
            };
            (n, (at.0.to_string(), at.1.to_string()))
        })
        .collect()
}

/// Waits until `done` holds, for at most `limit`; whether it did.
fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    done()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Each story's submissions per stage: one each, none applied twice.
fn submitted_once(night: &Night) {
    for (n, (id, ..)) in night.stories() {
        let s = read_json(
            &night
                .worktree(n)
                .join(format!(".bmad-task/session-{id}.json")),
        );
        let mut per_stage: BTreeMap<String, u32> = BTreeMap::new();
        for e in s["history"].as_array().unwrap() {
            if e["action"] == "submit" {
                *per_stage
                    .entry(e["stage"].as_str().unwrap_or("?").to_string())
                    .or_default() += 1;
            }
        }
        assert!(
            per_stage.values().all(|c| *c == 1),
            "sprint {n}: {per_stage:?}"
        );
    }
}

/// The tokens `bmad-mcp status` shows for each story, against the scripted backend's
/// reports for that story's sessions (15 a request).
fn tokens_match(night: &Night) {
    let mut reported: BTreeMap<String, u64> = BTreeMap::new();
    for r in night.fake.requests() {
        if let Some(id) = r["prompt_session"].as_str() {
            *reported.entry(id.to_string()).or_default() += r["usage"].as_u64().unwrap();
        }
    }
    for (n, (id, task, ..)) in night.stories() {
        let out = bin(&night.worktree(n))
            .args(["status", &task])
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&out.stdout);
        let want = format!(" {} tokens", reported.get(&id).copied().unwrap_or(0));
        assert!(shown.contains(&want), "sprint {n}: {want} in {shown}");
    }
}

/// The dashboard's page of sprint 7's story says it is parked for its budget, with its
/// tokens (the session itself still shows a step to take: the park is the run's).
fn budget_park_on_the_dashboard(night: &Night) {
    let d = crate::support::dash::Dash::open(&night.place.project);
    let tasks = d.get("/dashboard/api/tasks").json();
    let page_of = |n: u32| {
        let (id, ..) = night.stories()[&n].clone();
        let row = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["session_id"] == id.as_str())
            .unwrap_or_else(|| panic!("sprint {n}'s story on the dashboard: {tasks:#}"))
            .clone();
        d.get(&format!(
            "/dashboard/api/task?project={}&id={id}",
            row["project"]
        ))
        .json()
    };
    // Sprints 2 and 5 wait for the human's decision, which their page asks for.
    for n in [2, 5] {
        let page = page_of(n);
        assert_eq!(page["state"], "awaiting_confirmation", "{page:#}");
        assert!(!page["decision"].is_null(), "{page:#}");
        assert!(
            page["night"]
                .as_str()
                .unwrap_or_default()
                .contains("night shift: "),
            "{page:#}"
        );
    }
    let page = page_of(7);
    let said = page["night"].as_str().unwrap_or_default();
    assert!(
        said.contains("1 step(s), 210 tokens")
            && said.contains("parked: budget crossed: 210 tokens used of 200"),
        "{page:#}"
    );
}

/// Every host session the journal records was started without a flag that turns the host's
/// permission checks off (Claude Code's, Codex's), with this server registered for it: for
/// Claude Code with `--allowedTools` naming its tool alone.
fn no_bypass_flag(night: &Night) {
    let journal = night.place.project.join(format!(
        ".git/bmad-mcp/.bmad-task/runs/{}/journal.jsonl",
        night.parent
    ));
    let mut started = 0;
    for line in read(&journal).lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["event"] != "started" {
            continue;
        }
        started += 1;
        let args: Vec<&str> = e["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        for flag in [
            "--dangerously-skip-permissions",
            "bypassPermissions",
            "--permission-mode",
            "--dangerously-bypass-approvals-and-sandbox",
            "--yolo",
            "danger-full-access",
            "--full-auto",
        ] {
            assert!(!args.iter().any(|a| a.contains(flag)), "{flag}: {args:?}");
        }
        match &night.host {
            Host::Claude(_) => {
                let allowed = args.iter().position(|a| *a == "--allowedTools").unwrap();
                assert_eq!(args[allowed + 1], "mcp__bmad__bmad-task", "{args:?}");
            }
            Host::Codex(_) => {
                assert!(
                    args.iter()
                        .any(|a| a.starts_with("mcp_servers.bmad.command=")),
                    "{args:?}"
                );
            }
        }
    }
    assert!(started >= 3, "{started} sessions");
}

#[test]
#[ignore = "needs the Claude Code CLI in target/claude-cli: run ./scripts/test"]
fn claude_eight_stories_five_complete_three_park_and_a_terminal_decision_resumes_one() {
    let Some(host) = claude() else { return };
    eight_stories(host);
}

#[test]
#[ignore = "needs Codex CLI in target/npm: run ./scripts/test"]
fn codex_eight_stories_five_complete_three_park_and_a_terminal_decision_resumes_one() {
    let Some(host) = codex() else { return };
    eight_stories(host);
}

fn eight_stories(host: Host) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let night = rt.block_on(Night::new(host));
    let out = night.place.root.join("run.out");
    let started = Instant::now();
    let mut run = night.run(&[], &out);
    let steps_said = || {
        read(&out)
            .lines()
            .filter(|l| l.contains(" tokens  "))
            .count()
    };
    // Five stories of three steps, sprint 2's development, sprint 5's development and
    // review, sprint 7's development.
    let all_steps = 5 * 3 + 1 + 2 + 1;
    let settled = until(Duration::from_secs(600), || {
        night.where_each() == expected() && steps_said() == all_steps
    });
    let first = started.elapsed();
    let said = read(&out);
    assert!(
        settled,
        "{:?}\n{said}\n{}",
        night.where_each(),
        read(&out.with_extension("err"))
    );
    // Each park said once, with its reason and the decision it needs.
    for (sprint, why) in [
        ("sprint 2", "dev fails: check `sprint` failed (exit 1)"),
        ("sprint 5", "review fails: Review Status: Fail"),
        ("sprint 7", "budget crossed:"),
    ] {
        let parks: Vec<&str> = said
            .lines()
            .filter(|l| l.starts_with(&format!("{sprint}  parked: ")))
            .collect();
        assert_eq!(parks.len(), 1, "{sprint} parks once: {said}");
        assert!(parks[0].contains(why), "{sprint}: {why}: {said}");
    }
    assert!(said.contains("bmad-mcp confirm"), "{said}");
    // Sprint 5's model tried to confirm its failing review: its host closed the dialog
    // unseen, and nothing was decided (the story stayed parked, above).
    let refused = night.fake.requests().iter().any(|r| {
        r["results"].as_array().into_iter().flatten().any(|t| {
            let t = t.as_str().unwrap_or_default();
            t.contains("closed the dialog before anyone could read it")
                && t.contains("it is not the human's answer")
        })
    });
    assert!(refused, "the model's confirm is refused");
    // The human's notification command was run once for each.
    let told = read(&night.place.root.join("notified"));
    assert_eq!(told.lines().count(), 3, "{told}");
    for sprint in ["sprint 2", "sprint 5", "sprint 7"] {
        assert!(
            told.lines()
                .any(|l| l.starts_with(sprint) && l.contains("parked: ")),
            "{told}"
        );
    }
    // One line per step: story, step, host, time, tokens, outcome.
    let steps = steps_said();
    tokens_match(&night);
    budget_park_on_the_dashboard(&night);

    // The human accepts sprint 5's failing review in their terminal; the run, still
    // waiting, takes the story on to its QA.
    let (_, task5, ..) = night.stories()[&5].clone();
    let (code, shown) = in_terminal(&night.worktree(5), &["confirm", &task5], "[y/N]", "y\n");
    assert_eq!(code, 0, "{shown}");
    let resumed = until(Duration::from_secs(180), || {
        night.where_each()[&5] == ("qa".to_string(), "completed".to_string())
            && steps_said() == all_steps + 1
    });
    assert!(resumed, "{:?}\n{}", night.where_each(), read(&out));

    // The human raises the budget in the policy file and approves it: the waiting run reads
    // it and takes sprint 7 on.
    let root = night.place.root.display().to_string();
    let raised = CHECK
        .replace("budget_tokens = 200", "budget_tokens = 1000")
        .replace("{root}", &root);
    std::fs::write(night.place.project.join(".bmad/config.toml"), raised).unwrap();
    let (code, shown) = in_terminal(&night.place.project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{shown}");
    let continued = until(Duration::from_secs(180), || {
        night.where_each()[&7] == ("qa".to_string(), "completed".to_string())
            && steps_said() == all_steps + 3
    });
    assert!(continued, "{:?}\n{}", night.where_each(), read(&out));
    let _ = run.kill();
    let _ = run.wait();
    submitted_once(&night);
    tokens_match(&night);
    no_bypass_flag(&night);
    bench(&night, steps, first);
}

/// Killed with SIGKILL while host sessions are in flight, then started again: the second run
/// stops what the first left running, runs those steps again from their start, and ends
/// where an uninterrupted run ends, each story's submissions applied once.
#[test]
#[ignore = "needs the Claude Code CLI in target/claude-cli: run ./scripts/test"]
fn killed_mid_step_and_started_again_it_ends_as_an_uninterrupted_run_does() {
    let Some(host) = claude() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let night = rt.block_on(Night::new(host));
    let journal = night.place.project.join(format!(
        ".git/bmad-mcp/.bmad-task/runs/{}/journal.jsonl",
        night.parent
    ));
    let (first, second) = (
        night.place.root.join("first.out"),
        night.place.root.join("second.out"),
    );
    let mut run = night.run(&["--no-wait"], &first);
    // Mid-run: some steps ended, and the journal's last event a step started.
    let mid = until(Duration::from_secs(300), || {
        let text = read(&journal);
        let ended = text.matches("\"event\":\"ended\"").count();
        let last = text.lines().last().unwrap_or_default().to_string();
        ended >= 5 && last.contains("\"event\":\"started\"")
    });
    assert!(mid, "{}\n{}", read(&journal), read(&first));
    run.kill().unwrap();
    run.wait().unwrap();
    let in_flight = read(&journal).matches("\"event\":\"started\"").count()
        - read(&journal).matches("\"event\":\"ended\"").count();
    assert!(in_flight >= 1, "{}", read(&journal));

    let said = night
        .run(&["--no-wait"], &second)
        .ends_well(Duration::from_secs(600), &second);
    assert!(
        said.contains("was in flight when the last run ended"),
        "{said}"
    );
    assert_eq!(
        read(&journal).matches("\"event\":\"abandoned\"").count(),
        in_flight,
        "{}",
        read(&journal)
    );
    assert_eq!(night.where_each(), expected(), "{}\n{said}", read(&first));
    submitted_once(&night);
    no_bypass_flag(&night);
}

/// A host configured to run without its permission checks, or given a flag that turns them
/// off, is refused before anything starts, naming the setting or the flag.
#[tokio::test]
async fn a_host_set_to_bypass_its_permission_checks_is_refused() {
    let place = Place::new();
    let main = place.project.clone();
    let lead = connect(Era::Modern, &main).await;
    let v = lead
        .ok(json!({"action": "start", "objective": "Build a team todo app", "cwd": main.to_str().unwrap()}))
        .await;
    lead.close().await;
    let task = v["task_name"].as_str().unwrap().to_string();
    let run = |extra: &[&str]| {
        let out = bin(&main)
            .args(["run", &task, "--host-bin", "/bin/false"])
            .args(extra)
            .env("HOME", &place.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&["--host-arg=--dangerously-skip-permissions"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("`--dangerously-skip-permissions`, which turns its permission checks off"),
        "{err}"
    );
    let (code, err) = run(&[
        "--host",
        "codex",
        "--host-arg",
        "--sandbox",
        "--host-arg",
        "danger-full-access",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--sandbox=danger-full-access"), "{err}");

    std::fs::create_dir_all(main.join(".claude")).unwrap();
    std::fs::write(
        main.join(".claude/settings.local.json"),
        r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
    )
    .unwrap();
    let (code, err) = run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("settings.local.json sets `permissions.defaultMode` to `bypassPermissions`"),
        "{err}"
    );
    std::fs::remove_file(main.join(".claude/settings.local.json")).unwrap();
    // Set up as the person runs it, the host is not the problem: the plan is.
    let (code, err) = run(&["--no-wait"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("has no approved sprint plan yet"), "{err}");
}

/// With the BMAD method installed: the stories' statuses go to the method's
/// `sprint-status.yaml` in each story's worktree, and the method's own `sprint_plan.py
/// validate` accepts every version of it the run's steps leave, to each story done.
#[test]
#[ignore = "needs the Claude Code CLI, the BMAD method and the Python venv in target/: run ./scripts/test"]
fn with_the_method_installed_its_sprint_status_stays_valid_after_every_step() {
    let Some(host) = claude() else { return };
    let Some(installer) = crate::support::method::installer() else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let night = rt.block_on(Night::with(host, 3, "", Some(&installer)));
    let status = format!(
        "{}/sprint-status.yaml",
        crate::method_plan::folder(&night.place.project, "implementation_artifacts")
    );
    let out = night.place.root.join("run.out");
    let mut run = night.run(&["--no-wait"], &out);
    // Every version of each worktree's status file, validated as it appears.
    let mut seen: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(600);
    let ended = loop {
        let done = run.try_wait().unwrap().is_some();
        for n in 1..=3 {
            let text = read(&night.worktree(n).join(&status));
            let versions = seen.entry(n).or_default();
            if text.is_empty() || versions.last() == Some(&text) {
                continue;
            }
            let valid = crate::method_plan::sprint_plan(
                &night.worktree(n),
                ".claude/skills",
                &["validate", "--status-file", &status],
            );
            assert_eq!(valid["valid"], true, "sprint {n}: {valid}\n{text}");
            versions.push(text);
        }
        if done || Instant::now() > deadline {
            break done;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(ended, "{}", read(&out));
    assert_eq!(
        run.wait().unwrap().code(),
        Some(0),
        "{}",
        read(&out.with_extension("err"))
    );
    for n in 1..=3 {
        let (stage, state) = night.where_each()[&n].clone();
        assert_eq!(
            (stage.as_str(), state.as_str()),
            ("qa", "completed"),
            "{}",
            read(&out)
        );
        let versions = &seen[&n];
        // The story's start, its development, its review, its end: each a version seen.
        assert!(versions.len() >= 3, "sprint {n}: {versions:#?}");
        assert!(
            versions.last().unwrap().contains(": done"),
            "{}",
            versions.last().unwrap()
        );
    }
    // The parent's final QA ran too, once every story completed.
    let said = read(&out);
    assert!(
        said.lines()
            .any(|l| l.starts_with("final QA  qa") && l.ends_with("done")),
        "{said}"
    );
}

/// Prints the run's figures (not asserted: timings vary with the machine): the hosts' own
/// time per step, and the run's own between a step ending and the next step starting in
/// the slot it freed (reading the sessions, recording, starting the host).
fn bench(night: &Night, steps: usize, settled: Duration) {
    let journal = night.place.project.join(format!(
        ".git/bmad-mcp/.bmad-task/runs/{}/journal.jsonl",
        night.parent
    ));
    let at = |e: &Value| chrono::DateTime::parse_from_rfc3339(e["at"].as_str().unwrap()).unwrap();
    let events: Vec<Value> = read(&journal)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let host_secs: Vec<f64> = events
        .iter()
        .filter(|e| e["event"] == "ended")
        .map(|e| e["secs"].as_f64().unwrap())
        .collect();
    let mut gaps = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if e["event"] != "ended" {
            continue;
        }
        if let Some(next) = events[i + 1..].iter().find(|n| n["event"] == "started") {
            gaps.push((at(next) - at(e)).num_milliseconds() as f64 / 1000.0);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "bench: {:?}: 8 stories, {steps} steps at 2 at once, settled in {:.1} s; host time per step mean {:.2} s (max {:.2}); the run's own from a step's end to the next start mean {:.3} s (max {:.3}, {} steps)",
        match night.host { Host::Claude(_) => "claude-code", Host::Codex(_) => "codex" },
        settled.as_secs_f64(),
        mean(&host_secs),
        max(&host_secs),
        mean(&gaps),
        max(&gaps),
        gaps.len()
    );
}

/// A host session that hangs is stopped at the time limit with what it started (its
/// process group), tried once more, then the story parks naming the last attempt's log; the
/// run goes on and, with `--no-wait`, ends. Here a script stands in for the host.
#[tokio::test]
async fn a_hung_host_session_is_stopped_tried_once_more_then_parked_with_its_log() {
    let place_dir = tempfile::tempdir().unwrap();
    let host = place_dir.path().join("claude");
    // The "host" starts a child that would outlive it, notes both, and hangs.
    std::fs::write(
        &host,
        "#!/bin/sh\nsleep 300 &\necho $$ $! >> \"$(dirname \"$0\")/pids\"\necho started\nwait\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&host, std::fs::Permissions::from_mode(0o755)).unwrap();
    let night = Night::with(Host::Claude(host.clone()), 1, "", None).await;
    let out = night.place.root.join("run.out");
    let said = night
        .run(&["--no-wait", "--step-timeout", "1"], &out)
        .ends_well(Duration::from_secs(60), &out);
    let stopped: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("stopped after 1 s, its time limit"))
        .collect();
    assert_eq!(stopped.len(), 2, "two attempts: {said}");
    assert!(
        stopped
            .iter()
            .all(|l| l.starts_with("sprint 1  dev") && l.contains("? tokens")),
        "{said}"
    );
    let parked = said
        .lines()
        .find(|l| l.starts_with("sprint 1  parked: "))
        .unwrap_or_default();
    assert!(
        parked.contains("2 attempts made no progress (the last one's log: "),
        "{said}"
    );
    let log = parked
        .split("log: ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    assert_eq!(read(Path::new(log)), "started\n", "{parked}");
    // Nothing of either attempt is left running.
    std::thread::sleep(Duration::from_millis(200));
    for pid in read(&place_dir.path().join("pids")).split_whitespace() {
        let stat = read(Path::new(&format!("/proc/{pid}/stat")));
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "{pid} still runs: {stat}"
        );
    }
    // The story is where it was: at its development, nothing submitted.
    assert_eq!(
        night.where_each()[&1],
        ("dev".to_string(), "generating".to_string())
    );
}
