//! Copilot CLI (`@github/copilot`), which declares the dialog and, with `-p`, declines it
//! at once: the decline is not the human's answer, and the gate waits for the human's
//! terminal. Its model reads the text once: the server sends Copilot no
//! `structuredContent`, which it would show after the text. Its interactive interface, on
//! a pseudo-terminal, shows the dialog (with `--allow-all-tools` too), and the test answers
//! it as the human.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use super::{first_steps, gate_steps, installed, run, second_steps, Fake, Host, Place};
use crate::support::screen::Screen;

const HOST: Host = Host {
    package: "copilot",
    bin: "copilot",
    mark: "COPILOT_CLI=1",
};

fn shell() -> Value {
    json!({"names": ["bash"], "arg": "command", "extra": {"description": "Run the command"}})
}

/// The server in the throwaway HOME's `~/.copilot/mcp-config.json`, and `copilot args` in
/// the project, offline, the fake as its provider. The package unpacks itself into the
/// cache on its first run: a cache kept under `target/npm` spares that on later runs.
fn command(place: &Place, bin: &Path, fake: &Fake, args: &[&str]) -> Command {
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
    cmd.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", fake.base()))
        .env("COPILOT_PROVIDER_API_KEY", "fake")
        .env("COPILOT_MODEL", "fake-model");
    cmd
}

/// `copilot -p` in the project.
fn copilot(place: &Place, bin: &Path, fake: &Fake) -> (i32, String) {
    let args = [
        "-p",
        "Run the BMAD task.",
        "--allow-all-tools",
        "--allow-all-paths",
        "-s",
    ];
    run(command(place, bin, fake, &args), "copilot -p")
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
        declined.contains("Copilot CLI closed the dialog before anyone could read it")
            && declined.contains("it is not the human's answer"),
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

/// `copilot -p` as a person runs it in a terminal: the dialog declined at once, its screen
/// shows the model's relay of the reply, with the dashboard and the terminal command.
#[test]
#[ignore = "needs Copilot CLI in target/npm: run ./scripts/test"]
fn copilot_print_mode_screen_shows_where_to_decide() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "print", gate_steps(&place.project), &shell());
    let args = [
        "-p",
        "Run the BMAD task.",
        "--allow-all-tools",
        "--allow-all-paths",
    ];
    let mut cmd = command(&place, &bin, &fake, &args);
    cmd.env("TERM", "xterm-256color");
    let shown = Screen::start(&cmd).until_ended(super::RUN_LIMIT);
    let results = fake.results();
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    assert!(
        results[2].contains("Copilot CLI closed the dialog before anyone could read it"),
        "{}",
        results[2]
    );
    super::the_way_out_is_on_screen(&place, &shown, "copilot -p");
}

/// In Copilot's interface the person reads the form and declines it: the reply is theirs
/// ("You declined"), never "perhaps not by you" nor how to run it without `-p`, and the
/// screen shows the model's relay of it with the dashboard and the terminal command.
#[test]
#[ignore = "needs Copilot CLI in target/npm: run ./scripts/test"]
fn copilot_interactive_a_persons_decline_is_answered_as_theirs() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "declined", gate_steps(&place.project), &shell());
    let mut screen = started(&place, &bin, &fake);
    assert!(
        screen.shows("ctrl+d decline", super::SHOWN)
            && screen.shows("Confirm the document", super::SHOWN),
        "the form is shown: {}",
        screen.text()
    );
    // A person reads the form before declining it.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    screen.type_keys("\x04");
    assert!(
        screen.shows("bmad-mcp says", super::RUN_LIMIT),
        "{}",
        screen.text()
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    let shown = screen.end();
    let results = fake.results();
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    let declined = &results[2];
    assert!(
        declined.contains("You declined in the dialog: nothing was approved and nothing changed."),
        "{declined}"
    );
    for not in ["perhaps", "without `-p`", "not the human's"] {
        assert!(!declined.contains(not), "{not}: {declined}");
    }
    super::the_way_out_is_on_screen(&place, &shown, "Copilot's interface");
    super::nothing_decided(&place, &super::session_id(&results[0]));
}

/// Copilot's interface as a person starts it (`copilot --allow-all-tools -i "…"`), past
/// its question whether the folder is trusted.
fn started(place: &Place, bin: &Path, fake: &Fake) -> Screen {
    let args = ["--allow-all-tools", "-i", "Run the BMAD task."];
    let mut cmd = command(place, bin, fake, &args);
    cmd.env("TERM", "xterm-256color");
    let mut screen = Screen::start(&cmd);
    // It asks first whether the folder is trusted: once, for this session.
    let trust = "Do you trust the files in this folder?";
    assert!(screen.shows(trust, super::SHOWN), "{}", screen.text());
    screen.type_keys("\r");
    screen
}

/// Copilot's interactive interface (`copilot -i "…"`, tools allowed) shows the dialog; the
/// human's answer typed into it (confirm, and a note) is recorded as theirs, via the
/// dialog.
#[test]
#[ignore = "needs Copilot CLI in target/npm: run ./scripts/test"]
fn copilot_interactive_shows_the_dialog_and_the_human_decides_in_it() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::start(&place, "asked", gate_steps(&place.project), &shell());
    let screen = started(&place, &bin, &fake);
    super::the_human_confirms_in_the_form(
        &place,
        &fake,
        screen,
        ("ctrl+d decline", "shift+tab prev"),
    );
}
