//! Codex CLI (`@openai/codex`), which declares the dialog and, in `codex exec`, declines it
//! at once: the decline is not the human's answer, and the gate waits for the human's
//! terminal. Its model reads the text alone: the server sends Codex no
//! `structuredContent`, which it would show in place of the text. Its interactive
//! interface, on a pseudo-terminal, shows the dialog under `approval_policy = "on-request"`
//! (the test answers it as the human) and declines it at once under `never`, which the
//! reply then names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{
    first_steps, gate_steps, installed, results_within, run, second_steps, session_id, Fake, Host,
    Place, SHOWN,
};
use crate::support::screen::Screen;

const HOST: Host = Host {
    package: "codex",
    bin: "codex",
    mark: "CODEX_",
};

fn shell() -> Value {
    json!({"names": ["exec_command", "shell"], "arg": "cmd", "extra": {}})
}

/// The throwaway `CODEX_HOME`: the fake as the model provider, the server, `policy` as the
/// approval policy, and the project trusted (else the interface asks that first).
fn configure(place: &Place, fake: &Fake, policy: &str) -> PathBuf {
    let codex_home = place.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\napproval_policy = \"{policy}\"\n\
         sandbox_mode = \"danger-full-access\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{}/v1\"\nenv_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\n\
         [mcp_servers.bmad]\ncommand = {}\n\n[projects.{}]\ntrust_level = \"trusted\"\n",
        fake.base(),
        json!(crate::support::server_path()),
        json!(place.project),
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    codex_home
}

/// `codex exec` in the project, the fake as its model provider and the server, in the
/// throwaway `CODEX_HOME`'s config.
fn codex(place: &Place, bin: &Path, fake: &Fake) -> (i32, String) {
    let codex_home = configure(place, fake, "never");
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

/// Codex's terminal interface as a person starts it, `codex "…"`, on a pseudo-terminal,
/// under the approval policy `policy`.
fn interactive(place: &Place, bin: &Path, fake: &Fake, policy: &str) -> Screen {
    let codex_home = configure(place, fake, policy);
    let mut cmd = place.command(bin);
    cmd.arg("Run the BMAD task.")
        .env("CODEX_HOME", &codex_home)
        .env("FAKE_API_KEY", "fake")
        .env("TERM", "xterm-256color");
    Screen::start(&cmd)
}

/// `codex exec` as a person runs it in a terminal: the dialog declined at once, its screen
/// shows the model's relay of the reply, with the dashboard and the terminal command.
#[test]
#[ignore = "needs Codex CLI in target/npm: run ./scripts/test"]
fn codex_exec_screen_shows_where_to_decide() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "exec", gate_steps(&place.project), &shell());
    let codex_home = configure(&place, &fake, "never");
    let mut cmd = place.command(&bin);
    cmd.args(["exec", "--skip-git-repo-check", "Run the BMAD task."])
        .env("CODEX_HOME", &codex_home)
        .env("FAKE_API_KEY", "fake")
        .env("TERM", "xterm-256color");
    let shown = Screen::start(&cmd).until_ended(super::RUN_LIMIT);
    let results = fake.results();
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    assert!(
        results[2].contains("Codex CLI closed the dialog before anyone could read it"),
        "{}",
        results[2]
    );
    super::the_way_out_is_on_screen(&place, &shown, "codex exec");
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
        declined.contains("Codex CLI closed the dialog before anyone could read it")
            && declined.contains("it is not the human's answer"),
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

/// Codex's interactive interface under `approval_policy = "on-request"` shows the dialog;
/// the human's answer typed into it (confirm, and a note) is recorded as theirs, via the
/// dialog.
#[test]
#[ignore = "needs Codex CLI in target/npm: run ./scripts/test"]
fn codex_interactive_on_request_shows_the_dialog_and_the_human_decides_in_it() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::start(&place, "asked", gate_steps(&place.project), &shell());
    let screen = interactive(&place, &bin, &fake, "on-request");
    super::the_human_confirms_in_the_form(&place, &fake, screen, ("Field 1/2", "Field 2/2"));
}

/// Under `approval_policy = "never"` the same interface declines the dialog at once, with
/// a person at it: the reply says that this setting declines it (not that nobody is at
/// Codex) and which one shows it, and the screen shows the model's relay of it with the
/// dashboard and the terminal command; nothing is recorded. The person's `/quit` leaves no
/// server running (Codex's app-server daemon, which ran it, stays).
#[test]
#[ignore = "needs Codex CLI in target/npm: run ./scripts/test"]
fn codex_interactive_never_declines_and_the_reply_names_the_setting() {
    let Some(bin) = installed(&HOST) else { return };
    let place = Place::new();
    let fake = Fake::relaying(&place, "never", gate_steps(&place.project), &shell());
    let mut screen = interactive(&place, &bin, &fake, "never");
    let results = results_within(&fake, 3, &mut screen);
    assert!(
        screen.shows("bmad-mcp says", SHOWN),
        "the relay: {}",
        screen.text()
    );
    let server = Path::new(crate::support::server_path())
        .canonicalize()
        .unwrap();
    assert_eq!(
        super::processes_of(&server, &place.project).len(),
        1,
        "the server runs"
    );
    // The person quits: Codex's interface ends, and the server with it.
    screen.type_keys("/quit");
    std::thread::sleep(Duration::from_millis(500));
    screen.type_keys("\r");
    let deadline = Instant::now() + SHOWN;
    while !screen.ended() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let quit = Instant::now();
    assert!(screen.ended(), "/quit ends Codex: {}", screen.text());
    while !super::processes_of(&server, &place.project).is_empty()
        && quit.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = super::processes_of(&server, &place.project);
    let took = quit.elapsed();
    let shown = screen.end();
    assert!(left.is_empty(), "bmad-mcp left after /quit: {left:?}");
    assert!(
        took < Duration::from_millis(1500),
        "it ended {took:?} after /quit"
    );
    super::the_way_out_is_on_screen(&place, &shown, "Codex's interface");
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    let declined = &results[2];
    for said in [
        "It closes every dialog at once in `codex exec`, and in its interactive mode under `approval_policy = \"never\"`",
        "To be asked in the dialog, run Codex interactively with `approval_policy = \"on-request\"`",
        "Codex CLI closed the dialog before anyone could read it",
        "it is not the human's answer",
    ] {
        assert!(declined.contains(said), "{said}: {declined}");
    }
    assert!(!declined.contains("non-interactive mode)"), "{declined}");
    super::nothing_decided(&place, &session_id(&results[0]));
}
