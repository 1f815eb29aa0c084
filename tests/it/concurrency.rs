//! Several clients on one project at once, over stdio (a server process each, as when a
//! user has several assistant windows open) and over HTTP (clients of one server, as
//! several IDEs sharing it): every start lands, names never collide, and a session changed
//! by two clients at once records each accepted step exactly once.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::transport::{each_transport, Transport};
use crate::support::{
    assert_each_start_stored, files_under, prd_asking, read_json, start_args, Era, Sandbox,
};

const OBJECTIVE: &str = "Add a search box to the documentation site";

/// 800 starts at once on one project: 4 server processes making 200 each over stdio, 8
/// clients of one server making 100 each over HTTP, both eras. All the clients connect at
/// once, and each starts calling as soon as it is connected.
async fn many_clients_start_sessions_on_one_project(t: Transport) {
    let (clients, starts_each) = match t {
        Transport::Stdio => (4, 200),
        Transport::Http => (8, 100),
    };
    let sb = Sandbox::new();
    let host = Arc::new(t.host(&sb.project));
    let runs: Vec<_> = (0..clients)
        .map(|i| {
            let (host, project) = (Arc::clone(&host), sb.project.clone());
            tokio::spawn(async move {
                let era = if i % 2 == 0 { Era::Legacy } else { Era::Modern };
                let c = host.connect(era).await;
                let mut started = Vec::new();
                for _ in 0..starts_each {
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
    assert_eq!(
        started.len(),
        clients * starts_each,
        "every start succeeded"
    );

    assert_each_start_stored(&sb.project, &started, OBJECTIVE);
    sb.assert_confined(&[]);
}

each_transport!(async many_clients_start_sessions_on_one_project
    => many_clients_start_sessions_on_one_project);

/// The same session, the same moment, two clients (one of each era): one submit is
/// applied and the other is refused with a state error; the history never loses or repeats
/// a step. Repeated so the two calls really overlap in some rounds. Then pipelined calls on
/// one connection, which the same lock serialises.
async fn two_clients_submitting_to_one_session_apply_once(t: Transport) {
    let sb = Sandbox::new();
    let host = t.host(&sb.project);
    let a = host.connect(Era::Modern).await;
    let b = host.connect(Era::Legacy).await;
    let rounds = 12;
    for round in 0..rounds {
        let v = a.ok(start_args(&sb.project, "Search the docs")).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let submit = |score: u32| json!({"action": "submit", "session_id": sid, "stage": "po", "claude_result": prd_asking(score)});
        let ((a_err, av), (b_err, bv)) = tokio::join!(a.call(submit(61)), b.call(submit(62)));
        let outcomes = [(a_err, &av), (b_err, &bv)];
        let won: Vec<&Value> = outcomes.iter().filter(|o| !o.0).map(|o| o.1).collect();
        let lost: Vec<&Value> = outcomes.iter().filter(|o| o.0).map(|o| o.1).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: exactly one submit applies: {av} {bv}"
        );
        let lost = lost[0];
        assert_eq!(lost["error"]["code"], "invalid_state", "{lost:#}");
        assert_eq!(lost["state"], "clarifying");
        assert!(lost["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clarifying"));

        let path = sb.project.join(format!(".bmad-task/session-{sid}.json"));
        let s = read_json(&path);
        let actions: Vec<&str> = s["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["action"].as_str().unwrap())
            .collect();
        assert_eq!(actions, ["start", "submit"], "round {round}");
        let score = won[0]["score"].as_u64().unwrap();
        assert_eq!(
            s["stages"]["po"]["score"], score,
            "the winner's result is stored"
        );
        // Only the winner's files exist: one raw result and one draft.
        let temp = files_under(&sb.project.join(format!(".bmad-task/temp/{sid}")));
        assert_eq!(temp.len(), 2, "{temp:?}");

        // A step legal now, sent from both at once: the first applies, the second finds
        // the session already refining and is refused.
        let answer =
            |text: &str| json!({"action": "answer", "session_id": sid, "answers": {"q1": text}});
        let ((a_err, av), (b_err, bv)) =
            tokio::join!(a.call(answer("Guides only")), b.call(answer("All pages")));
        let applied = [a_err, b_err].iter().filter(|e| !**e).count();
        assert_eq!(applied, 1, "round {round}: {av} {bv}");
        let s = read_json(&path);
        assert_eq!(s["history"].as_array().unwrap().len(), 3);
        assert_eq!(s["current_state"], "refining");
    }
    // Pipelined calls on one connection are serialised by the same lock.
    let v = a.ok(start_args(&sb.project, "Pipelined")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let submit = json!({"action": "submit", "session_id": sid, "claude_result": prd_asking(70)});
    let (r1, r2, r3) = tokio::join!(
        a.call(submit.clone()),
        a.call(submit.clone()),
        a.call(submit)
    );
    assert_eq!(
        [r1.0, r2.0, r3.0].iter().filter(|e| !**e).count(),
        1,
        "one of three pipelined submits applies"
    );
    let s = read_json(&sb.project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(s["history"].as_array().unwrap().len(), 2);
    a.close().await;
    b.close().await;
    sb.assert_confined(&[]);
}

each_transport!(async two_clients_submitting_to_one_session_apply_once
    => two_clients_submitting_to_one_session_apply_once);
