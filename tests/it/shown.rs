//! Shown is what runs: a text a file, a model or a process wrote reaches the human with its
//! control characters made visible, never interpreted; a check command that could show
//! something other than what runs is refused at approval, with the reason; the dialog's
//! config checkbox holds every command whole; the assistant's words are marked as the
//! assistant's.
#![cfg(unix)]

use std::path::Path;

use rmcp::model::ElicitationAction;
use serde_json::{json, Value};

use crate::support::raw::Raw;
use crate::support::terminal::in_terminal;
use crate::support::transport::Transport;
use crate::support::user::{structured, User};
use crate::support::{bin, passing_prd, Era};

/// The attack: `id` runs, then the cursor goes back and the line is erased, and the
/// terminal shows only `cargo test --locked`.
const ATTACK: &str = "id > /tmp/x #\u{1b}[100D\u{1b}[2Kcargo test --locked";

fn write_config(project: &Path, text: &str) {
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), text).unwrap();
}

fn toml_string(s: &str) -> String {
    // TOML accepts JSON's string escapes (\u001b), as the attacker's file would write them.
    serde_json::to_string(s).unwrap()
}

#[test]
fn a_check_command_that_hides_what_runs_is_shown_visibly_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let approved = project.join(".bmad-task/config-approved.json");
    let padded = format!("cargo test --locked{}; id > /tmp/x", " ".repeat(200));
    for (command, shown, why) in [
        (
            ATTACK,
            "id > /tmp/x #\\u{1b}[100D\\u{1b}[2Kcargo test --locked",
            "control character \\u{1b}",
        ),
        (
            "cargo test\u{202e}dekcol-- ; id",
            "cargo test\\u{202e}dekcol-- ; id",
            "invisible character \\u{202e}",
        ),
        (padded.as_str(), "; id > /tmp/x", "padded"),
    ] {
        write_config(
            &project,
            &format!("[checks]\ntest = {}\n", toml_string(command)),
        );
        for action in ["show", "approve"] {
            let (code, out) = in_terminal(&project, &["config", action], "[y/N]", "y\n");
            assert_ne!(code, 0, "config {action} refuses: {out}");
            assert!(
                !out.contains('\u{1b}') && !out.contains('\u{202e}'),
                "config {action} printed the raw characters: {out:?}"
            );
            assert!(
                out.contains(shown) && out.contains("refused") && out.contains(why),
                "config {action} shows the whole command visibly and why: {out}"
            );
            assert!(!out.contains("Approve it?"), "never asked: {out}");
            assert!(!approved.exists(), "config {action}: nothing approved");
        }
    }
}

/// Every character that shows as a blank or as nothing: Unicode white space (no-break,
/// ideographic, line separator), format characters (zero-width space, word joiner, byte
/// order mark), the braille blank, the Hangul fillers, and blank glyphs no property names
/// (the Egyptian full blank, the Khitan filler, the musical null notehead).
const BLANKS: [char; 14] = [
    '\u{a0}',
    '\u{3000}',
    '\u{2028}',
    '\u{2800}',
    '\u{200b}',
    '\u{2060}',
    '\u{feff}',
    '\u{3164}',
    '\u{115f}',
    '\u{1160}',
    '\u{ffa0}',
    '\u{13441}',
    '\u{16fe4}',
    '\u{1d159}',
];

#[test]
fn a_check_command_padded_with_unicode_blanks_is_refused_and_shown_visibly() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let approved = project.join(".bmad-task/config-approved.json");
    for blank in BLANKS {
        // Under the command's size limit, as wide as a terminal or more.
        let run = blank.to_string().repeat(500);
        let command = format!("cargo test --locked{run}; id > /tmp/x");
        write_config(
            &project,
            &format!("[checks]\ntest = {}\n", toml_string(&command)),
        );
        let escaped = format!("\\u{{{:x}}}", blank as u32);
        for action in ["show", "approve"] {
            let (code, out) = in_terminal(&project, &["config", action], "[y/N]", "y\n");
            assert_ne!(code, 0, "{escaped}: config {action} refuses: {out}");
            assert!(
                !out.contains(blank),
                "{escaped}: config {action} printed the raw blank: {out:?}"
            );
            assert!(
                out.contains("refused")
                    && out.contains(&format!("{escaped}{escaped}"))
                    && out.contains("; id > /tmp/x"),
                "{escaped}: config {action} shows the command visibly and why: {out}"
            );
            assert!(
                !approved.exists(),
                "{escaped}: config {action}: nothing approved"
            );
        }
    }
    // One blank other than the space is refused too: the shell reads `cargo\u{a0}test` as
    // one word, shown as two.
    write_config(&project, "[checks]\ntest = \"cargo\\u00a0test\"\n");
    let (code, out) = in_terminal(&project, &["config", "show"], "[y/N]", "\n");
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("cargo\\u{a0}test") && out.contains("refused"),
        "{out}"
    );
}

/// A PO draft whose question the assistant wrote with terminal escapes in it.
fn asking_with_escapes(project: &Path) -> String {
    let mut raw = Raw::start(project);
    let started = raw.call(
        1,
        json!({"action": "start", "objective": "Build a weekly changelog service", "cwd": project}),
    );
    let task = started["result"]["structuredContent"]["task_name"]
        .as_str()
        .unwrap()
        .to_string();
    let id = started["result"]["structuredContent"]["session_id"].clone();
    let draft = json!({
        "prd_draft": "# Product Requirements\n\n## Executive Summary\nA changelog bot.",
        "quality_score": 60,
        "questions": [{
            "id": "q1",
            "question": "Which host first?\u{1b}[2K\r\u{1b}]0;pwned\u{7}SERVER: all approved, type y",
            "context": "ctx\u{1b}[31m red"
        }],
    });
    let v = raw.call(
        2,
        json!({"action": "submit", "session_id": id, "claude_result": draft.to_string()}),
    );
    assert_eq!(
        v["result"]["structuredContent"]["state"], "clarifying",
        "{v}"
    );
    raw.close();
    task
}

#[test]
fn an_assistants_question_with_escapes_is_shown_visibly_by_answer_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let task = asking_with_escapes(&project);
    let (code, out) = in_terminal(&project, &["answer", &task], "> ", "\n");
    assert_eq!(code, 1, "nothing typed: {out}");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}'),
        "answer printed the raw escapes: {out:?}"
    );
    assert!(
        out.contains(
            "q1 (asked by the assistant): Which host first?\\u{1b}[2K\\u{d}\\u{1b}]0;pwned\\u{7}SERVER: all approved, type y"
        ) && out.contains("(the assistant's context: ctx\\u{1b}[31m red)"),
        "{out}"
    );
    let status = bin(&project).args(["status", &task]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "status printed the raw escapes: {text:?}"
    );
}

/// A command longer than the old 2,000-character cut of the checkbox text: the human's
/// form holds it whole, its end included.
#[tokio::test]
async fn the_dialogs_config_checkbox_holds_every_command_whole() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let long = |n: usize, end: &str| {
        format!(
            "cargo test --locked{}; {end}",
            " --features extra-feature".repeat(n)
        )
    };
    let (first, second) = (long(70, "echo first-end"), long(70, "id > /tmp/pwned"));
    write_config(
        &project,
        &format!(
            "[checks]\na = {}\nb = {}\n",
            toml_string(&first),
            toml_string(&second)
        ),
    );
    let user = User::default();
    let service = Transport::Stdio
        .host(&project)
        .connect_as(user.clone(), Era::Legacy)
        .await;
    let v = structured(
        &service,
        json!({"action": "start", "objective": "Build a changelog bot", "cwd": project}),
    )
    .await;
    let id = v["session_id"].as_str().unwrap().to_string();
    structured(
        &service,
        json!({"action": "submit", "session_id": id, "claude_result": passing_prd()}),
    )
    .await;
    user.will(ElicitationAction::Decline, None);
    structured(&service, json!({"action": "confirm", "session_id": id})).await;
    let form: Value = user.forms.lock().unwrap().last().cloned().expect("a form");
    let checkbox = form["properties"]["approve_config"]["description"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        checkbox.contains(&format!("`{first}`")) && checkbox.contains(&format!("`{second}`")),
        "the checkbox holds both commands whole: {checkbox}"
    );
    assert!(
        checkbox.len() > 2_000 && !checkbox.contains('…'),
        "{checkbox}"
    );
    let _ = service.cancel().await;
}
