//! Copilot CLI (`@github/copilot`), which declares the dialog and, with `-p`, declines it
//! at once: the decline is not the human's rejection, and the gate waits for the human's
//! terminal. Its model reads the text once: the server sends Copilot no
//! `structuredContent`, which it would show after the text.

use std::path::Path;

use serde_json::{json, Value};

use super::{first_steps, installed, run, second_steps, Fake, Host, Place};

const HOST: Host = Host {
    package: "copilot",
    bin: "copilot",
    mark: "COPILOT_CLI=1",
};

fn shell() -> Value {
    json!({"names": ["bash"], "arg": "command", "extra": {"description": "Run the command"}})
}

/// `copilot -p` in the project, offline, the fake as its provider and the server in the
/// throwaway HOME's `~/.copilot/mcp-config.json`. The package unpacks itself into the
/// cache on its first run: a cache kept under `target/npm` spares that on later runs.
fn copilot(place: &Place, bin: &Path, fake: &Fake) -> (i32, String) {
    let config = json!({"mcpServers": {"bmad": {
        "type": "local", "command": crate::support::server_path(), "args": [], "tools": ["*"],
    }}});
    std::fs::create_dir_all(place.home.join(".copilot")).unwrap();
    std::fs::write(
        place.home.join(".copilot/mcp-config.json"),
        config.to_string(),
    )
    .unwrap();
    let cache = Path::new(crate::support::ROOT).join("target/npm/copilot.cache");
    let mut cmd = place.command(bin);
    cmd.args([
        "-p",
        "Run the BMAD task.",
        "--allow-all-tools",
        "--allow-all-paths",
        "-s",
    ])
    .env("XDG_CACHE_HOME", cache)
    .env("COPILOT_OFFLINE", "true")
    .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", fake.base()))
    .env("COPILOT_PROVIDER_API_KEY", "fake")
    .env("COPILOT_MODEL", "fake-model");
    run(cmd, "copilot -p")
}

#[test]
#[ignore = "needs Copilot CLI in target/npm: run ./scripts/test"]
fn copilot_runs_a_quick_task_and_the_human_passes_its_gate() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let first = Fake::start(&place, "first", first_steps(&place.project), &shell());
    let (code, out) = copilot(&place, &bin, &first);
    assert_eq!(code, 0, "{out}");
    first.assert_read_once(&["# Role: Tech Lead"]);
    let results = first.results();
    let declined = &results[2];
    assert!(
        declined.contains("perhaps by Copilot CLI itself")
            && declined.contains("not the human's rejection"),
        "{declined}"
    );
    let id = super::the_human_passes_the_gate(&place, &results, HOST.mark);
    drop(first);

    let second = Fake::start(&place, "second", second_steps(&id), &shell());
    let (code, out) = copilot(&place, &bin, &second);
    assert_eq!(code, 0, "{out}");
    second.assert_read_once(&["# Role: Developer", "# Role: Code Reviewer"]);
    super::the_task_completes(&place, &second.results(), &id);
}
