//! rmcp's own client as a host whose user answers the server's dialog, over stdio and over
//! HTTP. In the legacy era the server sends `elicitation/create` during the call (over
//! HTTP on the call's event stream, the client answering with a POST of its own); in
//! 2026-07-28 it returns an input-required result that rmcp's `call_tool` fulfils through
//! the same handler and retries. A declined dialog changes nothing; an accepted one is
//! recorded as the human's.

use rmcp::model::ElicitationAction;
use serde_json::{json, Value};

use crate::support::transport::{each_transport, Transport};
use crate::support::user::{decline_then_confirm, structured, User};
use crate::support::{passing_architecture, passing_prd, read_json, Era};

async fn decide_in_dialog(t: Transport, era: Era) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let host = t.host(&project);
    let user = User::default();
    let service = host.connect_as(user.clone(), era).await;
    decline_then_confirm(&service, &user, &project).await;
    let _ = service.cancel().await;
}

each_transport!(async the_user_decides_in_the_dialog_during_the_call
    => |t| decide_in_dialog(t, Era::Legacy));

each_transport!(async the_user_decides_in_the_dialog_of_an_input_required_result
    => |t| decide_in_dialog(t, Era::Modern));

/// A `.bmad/config.toml` that waits for the human (its checks were never approved) is
/// offered beside the decision, off by default: left unticked nothing is approved; ticked,
/// the version shown is approved as the human's, via the dialog.
async fn approve_the_config_in_the_dialog(t: Transport, era: Era) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(
        project.join(".bmad/config.toml"),
        "[checks]\nunit = \"true\"\n",
    )
    .unwrap();
    let host = t.host(&project);
    let user = User::default();
    let service = host.connect_as(user.clone(), era).await;
    let call = |args: Value| structured(&service, args);
    let approved = project.join(".bmad-task/config-approved.json");
    let v = call(json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}))
        .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    call(json!({"action": "submit", "session_id": id, "claude_result": passing_prd()})).await;
    // Confirmed, the config left alone.
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm", "approve_config": false})),
    );
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "architect", "{v}");
    assert!(!approved.exists(), "not ticked: not approved");
    let shown = user.last_shown();
    assert!(
        shown.contains(
            "Also waiting for you: .bmad/config.toml changed (check `unit` added: `true`"
        ),
        "{shown}"
    );

    call(json!({"action": "submit", "session_id": id, "claude_result": passing_architecture()}))
        .await;
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm", "approve_config": true})),
    );
    let v = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "sm", "{v}");
    assert!(
        v["notices"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("The human also approved .bmad/config.toml")),
        "{v}"
    );
    let record = read_json(&approved);
    assert_eq!(
        (&record["decided_by"], &record["via"], &record["how"]),
        (&json!("human"), &json!("elicitation"), &json!("approved")),
        "{record}"
    );
    // Nothing waits now: the next dialog offers no config.
    call(json!({"action": "submit", "session_id": id, "claude_result": "# Sprint Plan\n\n## Sprint 1: All\n- it\n"}))
        .await;
    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "approve", "scope": "all"})),
    );
    let v = call(json!({"action": "approve", "session_id": id})).await;
    assert_eq!(v["stage"], "dev", "{v}");
    let shown = user.last_shown();
    assert!(!shown.contains("Also waiting for you"), "{shown}");
    let _ = service.cancel().await;
}

each_transport!(async the_user_approves_the_changed_config_in_the_dialog_during_the_call
    => |t| approve_the_config_in_the_dialog(t, Era::Legacy));

each_transport!(async the_user_approves_the_changed_config_in_the_dialog_of_an_input_required_result
    => |t| approve_the_config_in_the_dialog(t, Era::Modern));

/// The text of a reply the human decided in the call's own dialog leaves out the notice
/// that says so (the model made that call), and the `trace` the reply before gave;
/// `structuredContent` keeps both, and `status` gives the trace again (docs/spec.md §10.8).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_text_leaves_out_what_the_model_has_and_the_json_keeps_it() {
    use rmcp::model::CallToolRequestParams;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let host = Transport::Stdio.host(&project);
    let user = User::default();
    let service = host.connect_as(user.clone(), Era::Modern).await;
    let call = |args: Value| {
        let Value::Object(map) = args else {
            unreachable!()
        };
        let service = &service;
        async move {
            let r = service
                .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
                .await
                .expect("answered");
            let text = r.content[0].as_text().expect("text").text.clone();
            crate::support::words_for_the_person(&text);
            (r.structured_content.expect("structured"), text)
        }
    };
    let (v, _) =
        call(json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}))
            .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    // The example's PRD, whose requirements have ids.
    let prd =
        std::fs::read_to_string(harness::repo_path("examples/fixtures/po-final.json")).unwrap();
    let (v, text) = call(json!({"action": "submit", "session_id": id, "claude_result": prd})).await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v}");
    // The trace's first appearance is in the text.
    assert!(v["trace"].is_object(), "{v}");
    assert!(text.contains("\ntrace: "), "{text}");

    user.will(
        ElicitationAction::Accept,
        Some(json!({"decision": "confirm"})),
    );
    let (v, text) = call(json!({"action": "confirm", "session_id": id})).await;
    assert_eq!(v["stage"], "architect", "{v}");
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("The human decided this through the dialog."),
        "{v}"
    );
    assert!(!text.contains("through the dialog"), "{text}");
    // Confirming the PRD left the trace as the reply before gave it.
    assert!(v["trace"].is_object(), "{v}");
    assert!(!text.contains("\ntrace:"), "{text}");
    // The default track is not said; `status` says the trace again.
    assert_eq!(v["track"], "full");
    assert!(!text.contains("track:"), "{text}");
    let (_, text) = call(json!({"action": "status", "session_id": id})).await;
    assert!(text.contains("\ntrace: "), "{text}");
    let _ = service.cancel().await;
}
