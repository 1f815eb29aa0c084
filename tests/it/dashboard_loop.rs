//! The loop closes by itself: while the assistant waits on the human, a decision made on
//! the dashboard completes the waiting dialog call, or is found by the host's next call,
//! and the reply says it was made on the dashboard. A reply asking the human to decide
//! carries the page's deep link while a dashboard serves the project.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};

use crate::support::dash::Dash;
use crate::support::{command, connect, handshake, last_entry, read_json, start_args};
use crate::support::{passing_prd, Era};

/// A human who never answers the client's dialog: it stays open until the server says it
/// is void (`notifications/cancelled`), which `closed` then records.
#[derive(Clone, Default)]
struct Away {
    closed: std::sync::Arc<tokio::sync::Notify>,
}

impl ClientHandler for Away {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        context.ct.cancelled().await;
        self.closed.notify_one();
        std::future::pending().await
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("bmad-test-away", "1.0.0"),
        )
    }
}

fn digest_shown(d: &Dash, sid: &str) -> String {
    let task = d
        .get(&format!("/dashboard/api/task?project=0&id={sid}"))
        .json();
    task["decision"]["document"]["sha256"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_asking_the_human_carries_the_dashboards_deep_link() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let sid = c.ok(start_args(project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let d = Dash::start(project);
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let link = format!("{}/dashboard/#/task/{sid}", d.origin());
    assert_eq!(v["dashboard_url"], link.as_str(), "{v:#}");
    assert!(v["user_message"].as_str().unwrap().contains(&link));
    assert!(!link.contains(&d.key), "the key stays with the human");
    // Under `gates = "human"` the host's own decision is refused: the refusal links the
    // page too.
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), "gates = \"human\"\n").unwrap();
    let refused = c
        .refused(
            json!({"action": "confirm", "session_id": sid}),
            "human_required",
        )
        .await;
    assert_eq!(refused["dashboard_url"], link.as_str(), "{refused:#}");
    std::fs::remove_dir_all(project.join(".bmad")).unwrap();
    // A reply where nobody waits for the human carries none.
    let status = c.ok(json!({"action": "list"})).await;
    assert!(status.get("dashboard_url").is_none());
    // Once the dashboard stops, no reply points at it.
    assert!(d.stop().success());
    assert!(!project.join(".bmad-task/dashboard.json").exists());
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert!(v.get("dashboard_url").is_none(), "{v:#}");
    c.close().await;
}

/// A dashboard started in a folder with no task yet makes no `.bmad-task/` there, and
/// tells the project where the page is once its first task starts: the next reply asking
/// the human carries the link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_started_before_the_first_task_is_linked_once_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let d = Dash::start(project);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!project.join(".bmad-task").exists(), "no state made");
    let c = connect(Era::Legacy, project).await;
    let sid = c.ok(start_args(project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let told = project.join(".bmad-task/dashboard.json");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !told.exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(told.exists(), "the project was told where the page is");
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let link = format!("{}/dashboard/#/task/{sid}", d.origin());
    assert_eq!(v["dashboard_url"], link.as_str(), "{v:#}");
    assert!(d.stop().success());
    assert!(!told.exists(), "withdrawn at the end");
    c.close().await;
}

/// `.bmad-task/dashboard.json` is anyone's to write: a link it names reaches a reply only
/// when it is a dashboard's on loopback, served by a live `bmad-mcp` listening there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_dashboard_file_puts_no_link_in_a_reply() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let sid = at_po_confirmation(&c, project).await;
    // A live process that is not a dashboard (this test), a listener that is not bmad-mcp,
    // and addresses that are not a loopback dashboard's.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let me = std::process::id();
    let planted = [
        json!({"url": "http://evil.example/dashboard/", "pid": me}),
        json!({"url": format!("http://127.0.0.1:{port}/dashboard/"), "pid": me}),
        json!({"url": format!("http://localhost:{port}/dashboard/"), "pid": me}),
        json!({"url": format!("http://127.0.0.1:{port}/elsewhere"), "pid": me}),
    ];
    for text in planted {
        std::fs::write(project.join(".bmad-task/dashboard.json"), text.to_string()).unwrap();
        let v = c.ok(json!({"action": "status", "session_id": sid})).await;
        assert!(v.get("dashboard_url").is_none(), "{text}: {v:#}");
        assert!(!v["user_message"].as_str().unwrap().contains("dashboard:"));
    }
    // The real dashboard's file is kept out of git by `init`.
    let init = crate::support::bin(project).arg("init").output().unwrap();
    assert!(init.status.success(), "{init:?}");
    let ignore = std::fs::read_to_string(project.join(".gitignore")).unwrap();
    assert!(
        ignore.lines().any(|l| l == "/.bmad-task/dashboard.json"),
        "{ignore}"
    );
    c.close().await;
}

/// Calls `status` on `sid` until its reply links the dashboard's page (within 10 s): the link.
async fn linked_within_seconds(c: &crate::support::Client, sid: &str) -> String {
    let started = std::time::Instant::now();
    loop {
        let v = c.ok(json!({"action": "status", "session_id": sid})).await;
        if let Some(link) = v["dashboard_url"].as_str() {
            return link.to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no link after 10 s: {v:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=Ana", "-c", "user.email=ana@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A worktree added while the dashboard runs, with no page open (nothing asks the page
/// anything): the replies of a task there link to the page within seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_added_while_no_page_is_open_is_linked_within_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let main = base.join("main");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    std::fs::write(main.join("README.md"), "app\n").unwrap();
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "first"]);
    let d = Dash::start(&main);
    let wt = base.join("wt");
    git(
        &main,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "side"],
    );
    let c = connect(Era::Legacy, &wt).await;
    let sid = at_po_confirmation(&c, &wt).await;
    let link = linked_within_seconds(&c, &sid).await;
    assert_eq!(link, format!("{}/dashboard/#/task/{sid}", d.origin()));
    c.close().await;
    d.stop();
}

/// The dashboard run from this build under another file name (a link, as an install may
/// name it): the replies link to its page all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_does_not_depend_on_the_binary_s_name() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let sid = at_po_confirmation(&c, project).await;
    let server = std::path::Path::new(crate::support::server_path());
    let named = tempfile::tempdir_in(server.parent().unwrap()).unwrap();
    let other = named.path().join("bmad-dash");
    if std::fs::hard_link(server, &other).is_err() {
        std::fs::copy(server, &other).unwrap();
    }
    let mut cmd = std::process::Command::new(&other);
    crate::support::isolate(cmd.current_dir(project));
    cmd.args(["dashboard", "--project"]).arg(project);
    let d = Dash::run(cmd);
    let link = linked_within_seconds(&c, &sid).await;
    assert_eq!(link, format!("{}/dashboard/#/task/{sid}", d.origin()));
    c.close().await;
    d.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_waiting_for_the_human_returns_when_they_decide_on_the_dashboard() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (transport, _) = TokioChildProcess::builder(command(&project))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let away = Away::default();
    let host = handshake(away.clone(), Era::Legacy, transport).await;
    let call = |args: Value| {
        let host = &host;
        async move {
            let Value::Object(map) = args else { panic!() };
            let v = host
                .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
                .await
                .unwrap()
                .structured_content
                .unwrap();
            crate::support::person_reads(v["user_message"].as_str().unwrap_or_default());
            v
        }
    };
    let sid = call(start_args(&project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    call(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()})).await;
    let d = Dash::open(&project);
    let digest = digest_shown(&d, &sid);
    // The assistant asks the human in the dialog, which stays open …
    let waiting = call(json!({"action": "confirm", "session_id": sid}));
    let decide = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        // … and the human decides on the page instead.
        let a = d.post(
            "/dashboard/api/decide",
            &json!({"session_id": sid, "action": "confirm", "digest": digest}),
        );
        assert_eq!(a.status, 200, "{a:?}");
    };
    let (reply, ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(waiting, decide)
    })
    .await
    .expect("the waiting call returns");
    let message = reply["user_message"].as_str().unwrap();
    assert!(
        message.starts_with("The human decided on the dashboard: confirm at the po stage."),
        "{reply:#}"
    );
    assert_eq!(reply["stage"], "architect");
    assert!(reply["role_prompt"].is_string(), "the host goes on at once");
    // The client is told its dialog is void, so that nobody answers it.
    tokio::time::timeout(Duration::from_secs(10), away.closed.notified())
        .await
        .expect("the server cancels the dialog it no longer waits on");
    let s = read_json(&project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(last_entry(&s)["via"], "dashboard");
    let _ = host.cancel().await;
    d.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_next_call_finds_the_decision_made_on_the_dashboard() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let c = connect(Era::Legacy, project).await;
    let sid = at_po_confirmation(&c, project).await;
    let d = Dash::open(project);
    let digest = digest_shown(&d, &sid);
    let a = d.post(
        "/dashboard/api/decide",
        &json!({"session_id": sid, "action": "reject", "digest": digest, "feedback": "Name the users."}),
    );
    assert_eq!(a.status, 200, "{a:?}");
    // The host, which told the human to decide, now asks to confirm: it learns what the
    // human decided instead of an error.
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.starts_with("The human decided on the dashboard: reject at the po stage. The human's words are in the role prompt, as theirs."),
        "{v:#}"
    );
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("- the user, on the dashboard: Name the users."));
    // `status` says it too, once: in `user_message`, not again among the notices.
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert!(
        v["user_message"]
            .as_str()
            .unwrap()
            .starts_with("The human decided on the dashboard: reject at the po stage."),
        "{v:#}"
    );
    assert!(
        !v["notices"]
            .to_string()
            .contains("decided on the dashboard"),
        "{v:#}"
    );
    c.close().await;
    d.stop();
}

/// A task started in `project`, its PRD submitted and waiting for the human's confirmation.
async fn at_po_confirmation(c: &crate::support::Client, project: &std::path::Path) -> String {
    let sid = c.ok(start_args(project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    sid
}
