//! Codex CLI (`@openai/codex`), which declares the dialog and, in `codex exec`, declines it
//! at once: the decline is not the human's rejection, and the gate waits for the human's
//! terminal. Its model reads the text alone: the server sends Codex no
//! `structuredContent`, which it would show in place of the text.

use std::path::Path;

use serde_json::{json, Value};

use super::{first_steps, installed, run, second_steps, Fake, Host, Place};

const HOST: Host = Host {
    package: "codex",
    bin: "codex",
    mark: "CODEX_",
};

fn shell() -> Value {
    json!({"names": ["exec_command", "shell"], "arg": "cmd", "extra": {}})
}

/// `codex exec` in the project, the fake as its model provider and the server, in the
/// throwaway `CODEX_HOME`'s config.
fn codex(place: &Place, bin: &Path, fake: &Fake) -> (i32, String) {
    let codex_home = place.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"danger-full-access\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\n\
         [mcp_servers.bmad]\ncommand = {}\n",
        fake.base(),
        json!(crate::support::server_path())
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    let mut cmd = place.command(bin);
    cmd.args([
        "exec",
        "--json",
        "--skip-git-repo-check",
        "Run the BMAD task.",
    ])
    .env("CODEX_HOME", &codex_home)
    .env("FAKE_API_KEY", "fake");
    run(cmd, "codex exec")
}

#[test]
#[ignore = "needs Codex CLI in target/npm: run ./scripts/test"]
fn codex_runs_a_quick_task_and_the_human_passes_its_gate() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let first = Fake::start(&place, "first", first_steps(&place.project), &shell());
    let (code, out) = codex(&place, &bin, &first);
    assert_eq!(code, 0, "{out}");
    first.assert_read_once(&["# Role: Tech Lead"]);
    let results = first.results();
    let declined = &results[2];
    assert!(
        declined.contains("perhaps by Codex CLI itself")
            && declined.contains("not the human's rejection"),
        "{declined}"
    );
    assert!(
        declined.contains("state: awaiting_confirmation"),
        "{declined}"
    );
    let id = super::the_human_passes_the_gate(&place, &results, HOST.mark);
    drop(first);

    let second = Fake::start(&place, "second", second_steps(&id), &shell());
    let (code, out) = codex(&place, &bin, &second);
    assert_eq!(code, 0, "{out}");
    second.assert_read_once(&["# Role: Developer", "# Role: Code Reviewer"]);
    super::the_task_completes(&place, &second.results(), &id);
}
