//! What the model reads in Claude Code: a client that declares itself as Claude Code gets
//! each result as text alone (no `structuredContent`, which Claude Code would show its
//! model in place of the text), one field a line with the role prompt last as Markdown; a
//! later round of a stage carries only what is new, and `status` the whole prompt again. A
//! literal host reading only that text and doing what each `next_step` names drives the
//! example's workflow to its end, over stdio and HTTP.

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::{json, Value};

use crate::support::terminal::in_terminal;
use crate::support::transport::{each_transport, Transport};
use crate::support::{Era, ROOT};

fn claude_code() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("claude-code", "2.1.330"),
    )
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/examples/fixtures/{name}")).unwrap()
}

/// Calls the tool; returns the text the model reads. There is nothing else to read.
async fn call(service: &RunningService<RoleClient, ClientConfig>, args: Value) -> String {
    let Value::Object(map) = args else {
        unreachable!()
    };
    let r = service
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
        .await
        .expect("answered");
    assert!(
        r.structured_content.is_none(),
        "no JSON for Claude Code: {r:?}"
    );
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(r.content.len(), 1, "{r:?}");
    let text = r.content[0].as_text().expect("text").text.clone();
    crate::support::words_for_the_person(&text);
    assert!(
        serde_json::from_str::<Value>(&text).is_err(),
        "not JSON: {text}"
    );
    assert!(!text.contains("\"role_prompt\""), "no JSON field: {text}");
    text
}

/// The value of a `key: value` line.
fn line<'a>(text: &'a str, key: &str) -> &'a str {
    crate::support::text_field(text, key)
}

/// The role prompt: everything after `role_prompt: ` (its first line is beside the key).
fn prompt(text: &str) -> &str {
    text.split_once("\nrole_prompt: ")
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no role prompt in\n{text}"))
}

async fn literal_host(t: Transport) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    // Claude Code with no dialog declared: by default its gates wait for the human's
    // terminal; this host follows the text alone, so the project takes the host's word.
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), "gates = \"host\"\n").unwrap();
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let host = t.host(&project);
    let service = host.connect_as(claude_code(), Era::Modern).await;
    let cwd = project.display().to_string();

    let text = call(
        &service,
        json!({"action": "start", "cwd": cwd, "objective": "Build a service that publishes a weekly team changelog"}),
    )
    .await;
    let id = line(&text, "session_id").to_string();
    assert!(prompt(&text).starts_with("# Role: Product Owner"), "{text}");
    assert!(line(&text, "next_step").contains("`submit`"), "{text}");

    // Each step: the call the last `next_step` named, and what the next one must name.
    let submit =
        |doc: &str| json!({"action": "submit", "session_id": id, "claude_result": fixture(doc)});
    let steps: Vec<(Value, &str)> = vec![
        (submit("po-draft.json"), "`answer`"),
        (
            json!({"action": "answer", "session_id": id, "answers": {"q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"}}),
            "`submit`",
        ),
        (submit("po-final.json"), "`confirm`"),
        (json!({"action": "confirm", "session_id": id}), "`submit`"),
        (submit("architect-draft.json"), "`answer`"),
        (
            json!({"action": "answer", "session_id": id, "answers": {"q1": "Our existing Kubernetes cluster"}}),
            "`submit`",
        ),
        (submit("architect-final.json"), "`confirm`"),
        (json!({"action": "confirm", "session_id": id}), "`submit`"),
        (submit("sprint-plan.md"), "`approve`"),
        (
            json!({"action": "approve", "session_id": id, "scope": "all"}),
            "`submit`",
        ),
        (submit("dev-report.md"), "`submit`"),
        (submit("review.md"), "`submit`"),
        (submit("qa-report.md"), "nothing more to call"),
    ];
    for (i, (args, next)) in steps.into_iter().enumerate() {
        let text = call(&service, args.clone()).await;
        assert!(
            line(&text, "next_step").contains(next),
            "step {i} ({}): next_step should name {next}:\n{text}",
            args["action"]
        );
        // The id the call named is not said again.
        assert!(
            !text.contains("session_id:"),
            "step {i}: the id again:\n{text}"
        );
        if i == 1 {
            // A refine round: what is new, not the role's text again.
            let p = prompt(&text);
            assert!(
                !p.contains("# Role:") && !p.contains("**Objective:**"),
                "{p}"
            );
            assert!(
                p.contains("a `status` with nothing new since gives them again"),
                "{p}"
            );
            assert!(
                p.contains(
                    "Answer (the assistant, for the user (not confirmed by them)): GitHub first"
                ),
                "{p}"
            );
            // … and `status` gives the whole prompt back to a model that lost it.
            let status = call(&service, json!({"action": "status", "session_id": id})).await;
            let whole = prompt(&status);
            assert!(whole.starts_with("# Role: Product Owner"), "{status}");
            assert!(
                whole.contains(
                    "Answer (the assistant, for the user (not confirmed by them)): GitHub first"
                ),
                "{status}"
            );
        }
    }
    let done = call(&service, json!({"action": "status", "session_id": id})).await;
    assert_eq!(line(&done, "state"), "completed", "{done}");
    let _ = service.cancel().await;
}

each_transport!(async a_literal_host_reading_only_the_text_completes_the_workflow
    => literal_host);

/// The text says the track where it is not the default one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_text_says_a_short_track_and_not_the_default_one() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let host = Transport::Stdio.host(&project);
    let service = host.connect_as(claude_code(), Era::Modern).await;
    let cwd = project.display().to_string();
    let quick = call(
        &service,
        json!({"action": "start", "cwd": cwd, "objective": "Add a --verbose flag", "track": "quick"}),
    )
    .await;
    assert_eq!(line(&quick, "track"), "quick", "{quick}");
    let full = call(
        &service,
        json!({"action": "start", "cwd": cwd, "objective": "Build a changelog bot"}),
    )
    .await;
    assert!(!full.contains("track:"), "{full}");
    let _ = service.cancel().await;
}
