//! The human's terminal channel: `bmad-mcp confirm|approve|reject|answer <task>` run in a
//! pseudo-terminal shows what is being decided and applies the typed answer as the
//! human's (`via: "cli"`), also under `gates = "human"`; with stdin not a terminal (as an
//! assistant's shell tool runs it) it refuses and changes nothing. `list` and `status`
//! print for people.
#![cfg(unix)]

use crate::support::terminal::in_terminal;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::support::{bin, last_entry, read_json, tree_digest, Raw};
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(harness::repo_path("examples/fixtures").join(name)).unwrap()
}

/// A project whose session has a PO submission `fixture` in it, answered in `state`;
/// returns (task, session id, the submission's reply).
fn submitted(project: &Path, fixture_name: &str, state: &str) -> (String, String, Value) {
    let mut raw = Raw::start(project);
    let started = raw.call(
        1,
        json!({"action": "start", "objective": "Build a weekly changelog service", "cwd": project}),
    );
    let v = &started["result"]["structuredContent"];
    let (task, id) = (
        v["task_name"].as_str().unwrap().to_string(),
        v["session_id"].as_str().unwrap().to_string(),
    );
    let submitted = raw.call(
        2,
        json!({"action": "submit", "session_id": id, "claude_result": fixture(fixture_name)}),
    );
    let reply = submitted["result"]["structuredContent"].clone();
    assert_eq!(reply["state"], state, "{submitted}");
    raw.close();
    (task, id, reply)
}

/// A project whose session waits for the PRD to be confirmed; returns (task, session id).
pub(crate) fn waiting_for_confirmation(project: &Path) -> (String, String) {
    let (task, id, _) = submitted(project, "po-final.json", "awaiting_confirmation");
    (task, id)
}

pub(crate) fn session(project: &Path, id: &str) -> Value {
    read_json(&project.join(format!(".bmad-task/session-{id}.json")))
}

fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn the_human_confirms_in_a_terminal_and_it_counts_under_the_strict_policy() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id) = waiting_for_confirmation(&project);
    std::fs::create_dir(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), "gates = \"human\"\n").unwrap();
    let prd = project.join(format!(".claude/specs/{task}/01-product-requirements.md"));
    let digest = sha256_of(&prd);
    let size = std::fs::metadata(&prd).unwrap().len();

    // Typing no: nothing changes.
    let before = tree_digest(&project);
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "n\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Not decided"), "{out}");
    assert_eq!(tree_digest(&project), before, "a no changes nothing");

    // What is decided is shown, then yes applies it as the human's.
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    for part in [
        format!(
            "01-product-requirements.md ({size} bytes, sha256 {})",
            &digest[..12]
        ),
        "Score: 93/100".to_string(),
        "Product Owner stage complete".to_string(),
    ] {
        assert!(out.contains(&part), "shows {part:?}: {out}");
    }
    let s = session(&project, &id);
    assert_eq!(s["current_stage"], "architect");
    let last = last_entry(&s);
    assert_eq!(
        (
            &last["action"],
            &last["decided_by"],
            &last["via"],
            &last["digest"]
        ),
        (
            &json!("confirm"),
            &json!("human"),
            &json!("cli"),
            &json!(digest)
        ),
        "{last}"
    );

    // `status` and `list` print who decided.
    let status = bin(&project).args(["status", &task]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{text}");
    assert!(
        text.contains("confirm  by human via cli")
            && text.contains(&digest[..12])
            && text.contains("stage architect, state generating"),
        "{text}"
    );
    let list = bin(&project).arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.contains("1 session(s)") && text.contains(&task),
        "{text}"
    );
}

#[test]
fn a_decision_whose_stdin_is_not_a_terminal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, _) = waiting_for_confirmation(&project);
    let before = tree_digest(&project);
    for args in [
        vec!["confirm", task.as_str()],
        vec!["reject", task.as_str(), "--feedback", "more detail"],
        vec!["answer", task.as_str()],
    ] {
        let mut child = bin(&project)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // An assistant's shell tool would pipe its "yes" (the refusal may come first and
        // close the pipe, so a failed write is expected).
        let _ = child.stdin.take().unwrap().write_all(b"y\n");
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        // What a person who typed it into their assistant (its `!`) can do instead, in
        // lines no assistant's box wraps.
        let said = String::from_utf8_lossy(&out.stderr);
        let flat = said.split_whitespace().collect::<Vec<_>>().join(" ");
        for part in [
            "stdin is not a terminal",
            "after its `!`",
            "run it in a terminal outside the assistant",
            "decide on your dashboard (`bmad-mcp dashboard`)",
        ] {
            assert!(flat.contains(part), "{args:?}: {part}: {said}");
        }
        assert!(said.lines().all(|l| l.chars().count() <= 72), "{said}");
    }
    assert_eq!(tree_digest(&project), before, "nothing changed");
}

#[test]
fn the_human_sends_back_and_approves_a_scope_in_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id) = waiting_for_confirmation(&project);
    let (code, out) = in_terminal(
        &project,
        &["reject", &task, "--feedback", "Name the release cadence"],
        "[y/N]",
        "yes\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Feedback: Name the release cadence"), "{out}");
    let s = session(&project, &id);
    assert_eq!(s["current_state"], "refining");
    assert_eq!(
        s["stages"]["po"]["feedback"],
        json!([{"by": "human", "via": "cli", "text": "Name the release cadence"}])
    );
    // The lesson the send-back taught is the human's: their decision records it.
    let listed = crate::support::bin(&project)
        .args(["lessons", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.contains(" human ") && l.contains(task.as_str())),
        "{listed}"
    );

    // On to the sprint plan through the tool, then approve sprint 1 in the terminal.
    let mut raw = Raw::start(&project);
    let mut n = 10;
    let mut call = |raw: &mut Raw, args: Value| {
        n += 1;
        raw.call(n, args)["result"]["structuredContent"].clone()
    };
    call(
        &mut raw,
        json!({"action": "submit", "session_id": id, "claude_result": fixture("po-final.json")}),
    );
    call(&mut raw, json!({"action": "confirm", "session_id": id}));
    call(
        &mut raw,
        json!({"action": "submit", "session_id": id, "claude_result": fixture("architect-final.json")}),
    );
    call(&mut raw, json!({"action": "confirm", "session_id": id}));
    let v = call(
        &mut raw,
        json!({"action": "submit", "session_id": id, "claude_result": fixture("sprint-plan.md")}),
    );
    assert_eq!(v["state"], "awaiting_approval", "{v}");
    raw.close();
    let (code, out) = in_terminal(
        &project,
        &["approve", &task, "--scope", "1"],
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Sprints in the plan: 1 (") && out.contains("Scope: 1"),
        "{out}"
    );
    let s = session(&project, &id);
    assert_eq!(s["current_stage"], "dev");
    assert_eq!(s["stages"]["sm"]["scope_sprints"], json!([1]));
    let last = last_entry(&s);
    assert_eq!(
        (&last["decided_by"], &last["via"]),
        (&json!("human"), &json!("cli"))
    );
}

/// `answer` asks each open question in turn and records what was typed, with no y/N step
/// (docs/guide.md says so): an empty line leaves a question open, and with nothing typed
/// nothing changes (exit 1).
#[test]
fn the_human_answers_each_question_in_a_terminal_without_a_yes() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id, asked) = submitted(&project, "po-draft.json", "clarifying");
    assert_eq!(
        asked["questions"].as_array().map(Vec::len),
        Some(3),
        "{asked}"
    );

    let before = tree_digest(&project);
    let (code, out) = in_terminal(&project, &["answer", &task], "> ", "\n\n\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("No answers given: nothing changed."), "{out}");
    assert_eq!(
        tree_digest(&project),
        before,
        "nothing typed changes nothing"
    );

    let (code, out) = in_terminal(
        &project,
        &["answer", &task],
        "> ",
        "GitHub first\n\nMaintainers only\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Answer each question"), "{out}");
    assert!(!out.contains("[y/N]"), "no y/N step: {out}");
    let s = session(&project, &id);
    assert_eq!(s["current_state"], "refining");
    assert_eq!(
        s["stages"]["po"]["answers"],
        json!({"q1": "GitHub first", "q3": "Maintainers only"})
    );
    let last = last_entry(&s);
    assert_eq!(
        (&last["action"], &last["decided_by"], &last["via"]),
        (&json!("answer"), &json!("human"), &json!("cli"))
    );
}

/// Deciding on a teammate's task: the terminal says whose it is and as whom one decides.
#[test]
fn deciding_on_a_teammates_task_says_whose_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id) = waiting_for_confirmation(&project);
    let file = project.join(format!(".bmad-task/session-{id}.json"));
    let mut s = session(&project, &id);
    s["owner"] = json!({"name": "Ada Lovelace", "email": "ada@example.org"});
    std::fs::write(&file, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    let (code, out) = in_terminal(
        &project,
        &["--owner", "Bob Smith <bob@example.org>", "confirm", &task],
        "[y/N]",
        "n\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("This task is Ada Lovelace <ada@example.org>'s")
            && out.contains("You decide on it as Bob Smith <bob@example.org>"),
        "{out}"
    );
    // Its owner is told nothing of the kind.
    let (_, out) = in_terminal(
        &project,
        &[
            "--owner",
            "Ada Lovelace <ada@example.org>",
            "confirm",
            &task,
        ],
        "[y/N]",
        "n\n",
    );
    assert!(!out.contains("This task is"), "{out}");
}

/// A command whose reader goes away after a few lines stops quietly: no panic on stderr.
#[test]
fn a_command_whose_reader_goes_away_stops_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, _) = waiting_for_confirmation(&project);
    let mut child = bin(&project)
        .args(["status", &task])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader closes its end before the command writes a line, as `head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(out.status.code(), Some(3), "{said}");
}

/// `list` keeps its columns in line whatever the length of a task name: the stage, state
/// and time of each row start at the same column (a name over 44 characters used to push
/// its row apart).
#[test]
fn list_keeps_its_columns_for_long_task_names() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let mut raw = Raw::start(project);
    let objectives = [
        "Fix it",
        "Build a service that publishes a weekly team changelog for every repository we own",
    ];
    for (i, objective) in objectives.iter().enumerate() {
        let v = raw.call(
            i as i64 + 1,
            json!({"action": "start", "objective": objective, "cwd": project}),
        );
        assert!(
            v["result"]["structuredContent"]["task_name"].is_string(),
            "{v}"
        );
    }
    raw.close();
    let out = bin(project).arg("list").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = text.lines().filter(|l| l.starts_with("  "));
    // A header row names the columns, above them.
    let header = rows.next().unwrap_or_default();
    assert!(header.trim_start().starts_with("TASK "), "{text}");
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), 2, "{text}");
    // The stage column: where "po" starts after the name and its padding.
    let stage_at: Vec<usize> = rows.iter().map(|r| r.find(" po ").unwrap()).collect();
    assert_eq!(
        stage_at[0], stage_at[1],
        "the stage columns differ:\n{text}"
    );
    assert_eq!(
        header.find(" STAGE "),
        Some(stage_at[0]),
        "the header names the stage column above it:\n{text}"
    );
    assert!(
        rows.iter().any(|r| r.trim_start().len() > 60),
        "a long name was listed whole:\n{text}"
    );
}

/// `list` shows every session file, those it cannot read too, so one the assistant
/// corrupted never vanishes from the human's view: it is listed as damaged, with what can
/// still be read of it (its task name) and why the server cannot read it.
#[test]
fn list_shows_damaged_sessions_as_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let mut raw = Raw::start(project);
    let mut ids = Vec::new();
    for (i, objective) in ["Kept task", "Broken task"].iter().enumerate() {
        let v = raw.call(
            i as i64 + 1,
            json!({"action": "start", "objective": objective, "cwd": project}),
        );
        let v = &v["result"]["structuredContent"];
        ids.push((
            v["task_name"].as_str().unwrap().to_string(),
            v["session_id"].as_str().unwrap().to_string(),
        ));
    }
    raw.close();
    let (broken_task, broken_id) = &ids[1];
    let file = project.join(format!(".bmad-task/session-{broken_id}.json"));
    let text = std::fs::read_to_string(&file).unwrap();
    let cut = text.trim_end().trim_end_matches('}').to_string() + ",,}";
    std::fs::write(&file, cut).unwrap();

    let out = bin(project).arg("list").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("1 session(s) in "), "{text}");
    assert!(text.contains(&ids[0].0), "{text}");
    assert!(
        text.contains("1 damaged session file(s), which the server cannot read:"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("  DAMAGED "))
        .unwrap_or_else(|| panic!("no damaged row:\n{text}"));
    assert!(row.contains(broken_task.as_str()), "{row}");
    assert!(row.contains(&format!("session-{broken_id}.json")), "{row}");
}
