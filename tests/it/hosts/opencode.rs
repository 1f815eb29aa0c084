//! opencode (`opencode-ai`), which declares no dialog: its model's `confirm` is refused
//! and the gate waits for the human's terminal; its model reads the text alone.

use std::path::Path;

use serde_json::{json, Value};

use super::{first_steps, installed, run, second_steps, Fake, Host, Place};

const HOST: Host = Host {
    package: "opencode",
    bin: "opencode",
    mark: "AGENT=1",
};

fn shell() -> Value {
    json!({"names": ["bash"], "arg": "command", "extra": {"description": "Run the command"}})
}

/// `opencode run` in the project, the fake as an OpenAI-compatible provider and the
/// server, in the project's `opencode.json`.
fn opencode(place: &Place, bin: &Path, fake: &Fake) -> (i32, String) {
    let config = json!({
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{}/v1", fake.base()), "apiKey": "fake"},
            "models": {"fake-model": {"name": "Fake", "tool_call": true}},
        }},
        "model": "fake/fake-model",
        "mcp": {"bmad": {"type": "local", "command": [crate::support::server_path()], "enabled": true}},
        "permission": {"bash": "allow", "edit": "allow"},
    });
    std::fs::write(place.project.join("opencode.json"), config.to_string()).unwrap();
    let mut cmd = place.command(bin);
    cmd.args(["run", "--format", "json", "Run the BMAD task."])
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
    run(cmd, "opencode")
}

#[test]
#[ignore = "needs opencode in target/npm: run ./scripts/test"]
fn opencode_runs_a_quick_task_and_the_human_passes_its_gate() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let first = Fake::start(&place, "first", first_steps(&place.project), &shell());
    let (code, out) = opencode(&place, &bin, &first);
    assert_eq!(code, 0, "{out}");
    first.assert_read_once(&["# Role: Tech Lead"]);
    let results = first.results();
    let refused = &results[2];
    assert!(refused.contains("code: human_required"), "{refused}");
    assert!(
        refused.contains("opencode, which cannot ask the human in a dialog"),
        "{refused}"
    );
    let id = super::the_human_passes_the_gate(&place, &results, HOST.mark);
    drop(first);

    let second = Fake::start(&place, "second", second_steps(&id), &shell());
    let (code, out) = opencode(&place, &bin, &second);
    assert_eq!(code, 0, "{out}");
    second.assert_read_once(&["# Role: Developer", "# Role: Code Reviewer"]);
    super::the_task_completes(&place, &second.results(), &id);
}
