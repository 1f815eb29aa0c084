//! Several clients of one HTTP server at once, as several IDEs sharing it: the guarantees
//! of stdio hold (every start lands under a distinct name, a session changed by two
//! clients at once records each accepted step exactly once).

use crate::support;

use crate::support::http::Server;
use crate::support::{read_json, start_args, Era, Sandbox};
use serde_json::{json, Value};

const CLIENTS: usize = 8;
const STARTS_EACH: usize = 100;
const OBJECTIVE: &str = "Add a search box to the documentation site";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_clients_start_a_hundred_sessions_each_on_one_project() {
    let sb = Sandbox::new();
    let server = Server::start(&["--root", sb.project.to_str().unwrap()], &[]);
    let mut clients = Vec::new();
    for i in 0..CLIENTS {
        let era = if i % 2 == 0 { Era::Legacy } else { Era::Modern };
        clients.push(server.connect(era, None, &sb.project).await);
    }
    let runs: Vec<_> = clients
        .into_iter()
        .map(|c| {
            let project = sb.project.clone();
            tokio::spawn(async move {
                let mut started = Vec::new();
                for _ in 0..STARTS_EACH {
                    let v = c.ok(start_args(&project, OBJECTIVE)).await;
                    started.push((
                        v["session_id"].as_str().unwrap().to_string(),
                        v["task_name"].as_str().unwrap().to_string(),
                    ));
                }
                c.close().await;
                started
            })
        })
        .collect();
    let mut started = Vec::new();
    for run in runs {
        started.extend(run.await.expect("the client finishes"));
    }
    let total = CLIENTS * STARTS_EACH;
    assert_eq!(started.len(), total);
    support::assert_each_start_stored(&sb.project, &started, OBJECTIVE);
    sb.assert_confined(&[]);
}

/// Two clients (one of each era) send the same step to one session at the same moment:
/// exactly one applies, the other is refused with the state, and the history holds the
/// step once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_clients_racing_on_one_session_apply_once() {
    let sb = Sandbox::new();
    let server = Server::start(&["--root", sb.project.to_str().unwrap()], &[]);
    let a = server.connect(Era::Modern, None, &sb.project).await;
    let b = server.connect(Era::Legacy, None, &sb.project).await;
    for round in 0..12 {
        let v = a.ok(start_args(&sb.project, "Search the docs")).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let submit = |score: u32| json!({"action": "submit", "session_id": sid, "claude_result": support::prd_asking(score)});
        let ((a_err, av), (b_err, bv)) = tokio::join!(a.call(submit(61)), b.call(submit(62)));
        let outcomes = [(a_err, &av), (b_err, &bv)];
        let won: Vec<&Value> = outcomes.iter().filter(|o| !o.0).map(|o| o.1).collect();
        let lost: Vec<&Value> = outcomes.iter().filter(|o| o.0).map(|o| o.1).collect();
        assert_eq!(won.len(), 1, "round {round}: {av} {bv}");
        assert_eq!(lost[0]["error"]["code"], "invalid_state", "{:#}", lost[0]);
        assert_eq!(lost[0]["state"], "clarifying");
        let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
        let actions: Vec<&str> = s["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["action"].as_str().unwrap())
            .collect();
        assert_eq!(actions, ["start", "submit"], "round {round}");
        assert_eq!(s["stages"]["po"]["score"], won[0]["score"]);
        let temp = support::files_under(&sb.project.join(format!(".bmad-task/temp/{sid}")));
        assert_eq!(temp.len(), 2, "only the winner's files: {temp:?}");
    }
    a.close().await;
    b.close().await;
    sb.assert_confined(&[]);
}
