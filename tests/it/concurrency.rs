//! Several server processes on one project, as when a user has several assistant windows
//! open: every start lands, names never collide, and a session changed from two processes at
//! once records each accepted step exactly once.

use crate::support;

use crate::support::{connect, read_json, start_args, Era, Sandbox};
use serde_json::{json, Value};

const PROCESSES: usize = 4;
const STARTS_EACH: usize = 200;
const OBJECTIVE: &str = "Add a search box to the documentation site";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_processes_start_two_hundred_sessions_each() {
    let sb = Sandbox::new();
    // All four are spawned at once, and each starts calling as soon as it is connected.
    let runs = (0..PROCESSES).map(|i| {
        let project = sb.project.clone();
        tokio::spawn(async move {
            let era = if i % 2 == 0 { Era::Legacy } else { Era::Modern };
            let c = connect(era, &project).await;
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
    });
    let mut started = Vec::new();
    for run in futures_join(runs).await {
        started.extend(run);
    }
    let total = PROCESSES * STARTS_EACH;
    assert_eq!(started.len(), total, "every start succeeded");

    support::assert_each_start_stored(&sb.project, &started, OBJECTIVE);
    sb.assert_confined(&[]);
}

/// Runs the spawned tasks to the end, in order.
async fn futures_join<T>(runs: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for r in runs.collect::<Vec<_>>() {
        out.push(r.await.expect("the task finishes"));
    }
    out
}

/// The same session, the same moment, two processes: one submit is applied and the other
/// is refused with a state error, or applied after it; the history never loses or repeats
/// a step. Repeated so the two calls really overlap in some rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_submitting_to_one_session_apply_once() {
    let sb = Sandbox::new();
    let a = connect(Era::Modern, &sb.project).await;
    let b = connect(Era::Legacy, &sb.project).await;
    let rounds = 12;
    for round in 0..rounds {
        let v = a.ok(start_args(&sb.project, "Search the docs")).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        let submit = |score: u32| json!({"action": "submit", "session_id": sid, "stage": "po", "claude_result": support::prd_asking(score)});
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
        let temp = support::files_under(&sb.project.join(format!(".bmad-task/temp/{sid}")));
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
    let submit =
        json!({"action": "submit", "session_id": sid, "claude_result": support::prd_asking(70)});
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
