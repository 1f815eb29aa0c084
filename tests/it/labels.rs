//! Every word labelled by who said it, in every channel: a rejection's feedback given by
//! the host, in the terminal and on the dashboard reaches the next role prompt under its
//! author's label; a decision made elsewhere says the human's words are in that prompt
//! (quoting only theirs where no prompt does), and says when there were none, never passing the server's note off as theirs; the dashboard's audit
//! keeps the decider's labelled words and the server's note apart.
#![cfg(target_os = "linux")]

use std::path::Path;

use serde_json::{json, Value};

use crate::support::dash::Dash;
use crate::support::terminal::in_terminal;
use crate::support::{connect, passing_prd, start_args, Client, Era};

const HOST: &str = "the assistant, for the user (not confirmed by them)";

/// A task whose PRD waits for the human's confirmation: its id and task name.
async fn at_confirmation(c: &Client, project: &Path) -> (String, String) {
    let v = c.ok(start_args(project, "Build a todo app")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    (sid, v["task_name"].as_str().unwrap().to_string())
}

/// The PO's role prompt as `status` hands it over after a rejection, and the message.
async fn after(c: &Client, sid: &str) -> (String, String) {
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    let prompt = v["role_prompt"].as_str().unwrap_or_default().to_string();
    (prompt, v["user_message"].as_str().unwrap().to_string())
}

async fn resubmit(c: &Client, sid: &str) {
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_channels_words_reach_the_prompt_and_the_page_under_their_authors_label() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let c = connect(Era::Legacy, &project).await;
    let (sid, task) = at_confirmation(&c, &project).await;

    // The host rejects on its own: its words are the assistant's.
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Host words."}))
        .await;
    let (prompt, _) = after(&c, &sid).await;
    assert!(
        prompt.contains(&format!("- {HOST}: Host words.")),
        "{prompt}"
    );
    resubmit(&c, &sid).await;

    // The human rejects in the terminal.
    let args = ["reject", task.as_str(), "--feedback", "Terminal words."];
    let (code, out) = in_terminal(&project, &args, "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let (prompt, message) = after(&c, &sid).await;
    assert!(
        prompt.contains("- the user, in the terminal: Terminal words."),
        "{prompt}"
    );
    assert!(
        message.contains("The human decided in the terminal: reject at the po stage. The human's words are in the role prompt, as theirs."),
        "{message}"
    );
    resubmit(&c, &sid).await;

    // The human rejects on the dashboard.
    let d = Dash::open(&project);
    let task_view = |d: &Dash| -> Value {
        d.get(&format!("/dashboard/api/task?project=0&id={sid}"))
            .json()
    };
    let digest = task_view(&d)["decision"]["document"]["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let a = d.post(
        "/dashboard/api/decide",
        &json!({"session_id": sid, "action": "reject", "digest": digest, "feedback": "Page words."}),
    );
    assert_eq!(a.status, 200, "{a:?}");
    let (prompt, _) = after(&c, &sid).await;
    assert!(
        prompt.contains("- the user, on the dashboard: Page words."),
        "{prompt}"
    );
    // The first `status` after a decision made elsewhere carries the round it opens whole:
    // every earlier feedback too, each under its own author; so does the next.
    assert!(
        prompt.contains(&format!("- {HOST}: Host words.")),
        "{prompt}"
    );
    let (prompt, _) = after(&c, &sid).await;
    assert!(
        prompt.contains(&format!("- {HOST}: Host words.")),
        "{prompt}"
    );
    assert!(
        prompt.contains("- the user, on the dashboard: Page words."),
        "{prompt}"
    );
    resubmit(&c, &sid).await;

    // The human confirms in the terminal with no words: none are quoted as theirs, and
    // the server's own note (the ids the PRD defines, …) is not passed off as them.
    let (code, out) = in_terminal(&project, &["confirm", task.as_str()], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let (_, message) = after(&c, &sid).await;
    let said = message.lines().next().unwrap();
    assert_eq!(
        said,
        "The human decided in the terminal: confirm at the po stage. They gave no words with it."
    );

    // The page's audit: the decider's words with their label, the server's note apart.
    let audit = task_view(&d)["audit"].as_array().unwrap().clone();
    let words: Vec<&str> = audit.iter().filter_map(|h| h["words"].as_str()).collect();
    assert_eq!(
        words,
        [
            format!("{HOST}: Host words.").as_str(),
            "the user, in the terminal: Terminal words.",
            "the user, on the dashboard: Page words."
        ]
    );
    let confirm = audit.last().unwrap();
    assert_eq!(confirm["action"], "confirm");
    assert!(confirm["words"].is_null(), "{confirm:#}");
    // The server's notes are there, in their own field, and in no entry's words.
    let notes: Vec<&str> = audit
        .iter()
        .filter_map(|h| h["server_note"].as_str())
        .collect();
    assert!(!notes.is_empty(), "{audit:#?}");
    assert!(words.iter().all(|w| notes.iter().all(|n| !w.contains(n))));
    // The stage's feedback on the page says who wrote each.
    let po = &task_view(&d)["stages"];
    let text = po.to_string();
    assert!(
        text.contains("the user, on the dashboard: Page words."),
        "{text}"
    );
    d.stop();
    c.close().await;
}
