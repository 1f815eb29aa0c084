//! Engines for any host, through the real binary and rmcp's client: `start`'s `engines`
//! overrides the objective's word, a bad list is refused naming the field, replies say
//! what a codex result is and what a host without a second model does, and a submission
//! that does not fit the session's engines gets a notice.

use crate::support::{connect, start_args, Client, Era};
use serde_json::{json, Value};

/// A PRD that passes the gate: every required section and a stated score of 93.
const PRD: &str = include_str!("../../examples/fixtures/po-final.json");

async fn start(c: &Client, objective: &str, engines: Option<Value>) -> Value {
    let mut args = start_args(&c.project, objective);
    if let Some(e) = engines {
        args["engines"] = e;
    }
    c.ok(args).await
}

fn notices(v: &Value) -> Vec<String> {
    v["notices"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_list_of_one_engine_overrides_an_objective_that_names_codex() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Modern, dir.path()).await;
    let objective = "Rename the Codex class";

    // Without a list, the old rule: the objective names codex, so two engines, and the
    // reply says why and how to run one.
    let v = start(&c, objective, None).await;
    assert_eq!(v["engines"], json!(["claude", "codex"]));
    let said = notices(&v).join("\n");
    assert!(
        said.contains("because the objective names codex")
            && said.contains("engines: [\"claude\"]"),
        "{said}"
    );
    let step = v["next_step"].as_str().unwrap();
    assert!(
        step.contains("never write `codex_result` yourself"),
        "{step}"
    );
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("Codex MCP server"), "{prompt}");

    // With ["claude"]: one engine at every stage, and no word of a second model.
    let v = start(&c, objective, Some(json!(["claude"]))).await;
    let sid = v["session_id"].clone();
    assert_eq!(v["engines"], json!(["claude"]));
    assert!(notices(&v).is_empty(), "{:?}", notices(&v));
    let step = v["next_step"].as_str().unwrap();
    assert!(
        step.contains("`claude_result`") && !step.contains("codex"),
        "{step}"
    );
    assert!(!v["role_prompt"].as_str().unwrap().contains("Codex MCP"));
    let status = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(status["session"]["engines"], json!(["claude"]));

    // Two engines for an objective that does not name codex.
    let v = start(&c, "Build a todo app", Some(json!(["claude", "codex"]))).await;
    assert_eq!(v["engines"], json!(["claude", "codex"]));
    assert!(
        notices(&v).is_empty(),
        "the host asked for it: nothing to explain"
    );
    c.close().await;
}

#[tokio::test]
async fn a_bad_engines_list_is_refused_naming_the_field_and_nothing_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Legacy, dir.path()).await;
    for (engines, says) in [
        (json!([]), "empty"),
        (json!(["claude", "gpt"]), "`gpt` is not an engine"),
        (json!(["claude", "claude"]), "listed twice"),
        (json!(["codex", "claude"]), "must come first"),
        (json!(["codex"]), "is missing"),
        (json!("claude"), "expected a sequence"),
    ] {
        let mut args = start_args(dir.path(), "Build a todo app");
        args["engines"] = engines.clone();
        let v = c.refused(args, "invalid_argument").await;
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.starts_with("field `engines"), "{engines}: {msg}");
        assert!(msg.contains(says), "{engines}: {msg}");
    }
    assert!(
        !dir.path().join(".bmad-task").exists() && !dir.path().join(".claude").exists(),
        "a refused start makes nothing"
    );
    c.close().await;
}

#[tokio::test]
async fn submissions_that_do_not_fit_the_engines_are_kept_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let c = connect(Era::Legacy, dir.path()).await;

    // Two engines, one result: scored alone, and the reply says the other is missing.
    let v = start(&c, "Build a todo app", Some(json!(["claude", "codex"]))).await;
    let sid = v["session_id"].clone();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": PRD}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    let said = notices(&v).join("\n");
    assert!(
        said.contains("Only `claude_result` was given") && said.contains("no `codex_result`"),
        "{said}"
    );

    // One engine, a codex result: taken, and the host is told what it is for.
    let v = start(&c, "Build a todo app", Some(json!(["claude"]))).await;
    let sid = v["session_id"].clone();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": PRD}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation");
    let said = notices(&v).join("\n");
    assert!(said.contains("this session runs claude alone"), "{said}");
    c.close().await;
}
