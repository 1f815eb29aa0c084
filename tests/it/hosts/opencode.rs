//! opencode (`opencode-ai`), which declares no dialog: its model's `confirm` is refused
//! and the gate waits for the human's terminal; its model reads the text alone. `opencode
//! run` prints a refused call's result to the person; its interface shows a call as a line
//! of arguments and never its result, so the person reads what the model relays.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{first_steps, installed, run, second_steps, Fake, Host, Place};
use crate::support::screen::Screen;

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
    let mut cmd = command(place, bin, fake);
    cmd.args(["run", "--format", "json", "Run the BMAD task."]);
    run(cmd, "opencode")
}

/// `opencode` in the project with the fake and the server configured; no arguments yet.
fn command(place: &Place, bin: &Path, fake: &Fake) -> Command {
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
    cmd.env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("TERM", "xterm-256color");
    cmd
}

/// The refusal's `user_message` as `opencode run` prints it to the person (it prints an
/// error result whole, after `Error: `): the dashboard and the terminal command, and no
/// instruction to the model.
fn printed_refusal(shown: &str) -> String {
    let at = shown
        .find("Error: user_message: ")
        .unwrap_or_else(|| panic!("the refusal is printed: {shown}"));
    shown[at..].lines().next().unwrap_or_default().to_string()
}

/// `opencode run` as a person runs it in a terminal: it prints the refused call's result,
/// whose `user_message` names the dashboard and the terminal command and tells the model
/// nothing, and the model's relay of it.
#[test]
#[ignore = "needs opencode in target/npm: run ./scripts/test"]
fn opencode_run_prints_where_to_decide_and_no_instruction_to_the_model() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "run", super::gate_steps(&place.project), &shell());
    let mut cmd = command(&place, &bin, &fake);
    cmd.args(["run", "Run the BMAD task."]);
    let shown = Screen::start(&cmd).until_ended(super::RUN_LIMIT);
    let printed = printed_refusal(&shown);
    assert!(printed.contains("human_required"), "{printed}");
    crate::support::person_reads(printed.trim_start_matches("Error: user_message: "));
    super::the_way_out_is_on_screen(&place, &printed, "opencode run");
    super::the_way_out_is_on_screen(&place, &shown, "opencode run");
}

/// opencode's interface shows each call as one line of its arguments and never a result:
/// the person learns of the refusal from the model, whose relay of `user_message` on the
/// screen names the dashboard and the terminal command.
#[test]
#[ignore = "needs opencode in target/npm: run ./scripts/test"]
fn opencode_interface_shows_the_relayed_refusal_with_where_to_decide() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "tui", super::gate_steps(&place.project), &shell());
    let mut cmd = command(&place, &bin, &fake);
    cmd.args(["--prompt", "Run the BMAD task."]);
    let mut screen = Screen::start(&cmd);
    assert!(
        screen.shows("bmad-mcp says", super::RUN_LIMIT),
        "{}",
        screen.text()
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let shown = screen.end();
    // The result itself is not on the screen: only the call's arguments, then the relay,
    // which tells the person nothing meant for the model.
    assert!(!shown.contains("user_message:"), "{shown}");
    let flat = crate::support::screen::compact(&shown);
    for model in ["Do not call", "Show the human", "call `status`"] {
        assert!(
            !flat.contains(&crate::support::screen::compact(model)),
            "{model}: {shown}"
        );
    }
    let results = fake.results();
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    super::the_way_out_is_on_screen(&place, &shown, "opencode's interface");
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
