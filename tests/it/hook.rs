//! `bmad-mcp hook pre-tool-use` through the built binary, run as the plugin's hook entry
//! says (`plugins/bmad/.claude-plugin/plugin.json`): the decision "ask" for a gate call,
//! nothing for any other call, and exit 0 on whatever stdin holds.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::support::{isolate, server_path, ROOT};

/// The hook command of the plugin, its program replaced by the built binary.
fn hook_command() -> Command {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("plugins/bmad/.claude-plugin/plugin.json"))
            .unwrap();
    let plugin: Value = serde_json::from_str(&text).unwrap();
    let command = plugin["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .expect("the plugin's PreToolUse hook command");
    let mut words = command.split_whitespace();
    assert_eq!(words.next(), Some("bmad-mcp"), "{command}");
    let mut cmd = Command::new(server_path());
    isolate(cmd.args(words));
    cmd
}

fn run_hook(stdin: &[u8]) -> Output {
    let mut child = hook_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hook starts");
    let mut input = child.stdin.take().unwrap();
    // A hook that stops reading early must not make the writer fail: write on a thread.
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&data));
    let out = child.wait_with_output().expect("the hook ends");
    writer.join().unwrap().expect("the whole input is read");
    out
}

fn hook_input(tool: &str, args: Value) -> Vec<u8> {
    json!({
        "session_id": "8d5c1c2e-0d43-4c55-9f0e-2b1a0c9d8e7f",
        "transcript_path": "/home/u/.claude/projects/p/s.jsonl",
        "cwd": "/home/u/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": args,
        "tool_use_id": "toolu_01ABC",
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_gate_call_gets_the_decision_ask_under_both_tool_names() {
    for tool in ["mcp__bmad__bmad-task", "mcp__plugin_bmad_bmad__bmad-task"] {
        for action in ["confirm", "confirm_save", "approve", "reject"] {
            let out = run_hook(&hook_input(
                tool,
                json!({"action": action, "task_name": "weekly-changelog", "feedback": "Shorter"}),
            ));
            assert!(out.status.success(), "{tool} {action}: {out:?}");
            let stdout = String::from_utf8(out.stdout).unwrap();
            assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
            let v: Value = serde_json::from_str(&stdout).unwrap();
            let h = &v["hookSpecificOutput"];
            assert_eq!(h["hookEventName"], "PreToolUse", "{v}");
            assert_eq!(h["permissionDecision"], "ask", "{v}");
            let why = h["permissionDecisionReason"].as_str().unwrap();
            assert!(why.contains("“weekly-changelog”"), "{why}");
            assert!(
                out.stderr.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn any_other_call_gets_nothing_and_exit_0() {
    let cases: Vec<Vec<u8>> = vec![
        hook_input(
            "mcp__bmad__bmad-task",
            json!({"action": "submit", "claude_result": "# PRD"}),
        ),
        hook_input(
            "mcp__bmad__bmad-task",
            json!({"action": "status", "task_name": "t"}),
        ),
        hook_input(
            "mcp__plugin_bmad_bmad__bmad-task",
            json!({"action": "answer", "answers": {"q1": "Yes"}}),
        ),
        hook_input("Bash", json!({"command": "rm -rf /tmp/x"})),
        b"".to_vec(),
        b"{".to_vec(),
        b"\xff\xfe garbage".to_vec(),
        br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": ["confirm"]}}"#.to_vec(),
    ];
    for input in cases {
        let out = run_hook(&input);
        let head = String::from_utf8_lossy(&input[..input.len().min(80)]).into_owned();
        assert!(out.status.success(), "{head}: {out:?}");
        assert!(
            out.stdout.is_empty(),
            "{head}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

#[test]
fn the_hook_answers_with_stdin_closed_at_once() {
    let out = hook_command()
        .stdin(Stdio::null())
        .output()
        .expect("the hook runs");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
}

/// The decision "ask" and its reason, from the hook's output.
fn asked(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "ask", "{v}");
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A gate call with a lone surrogate escape, which serde_json refuses and the server
/// repairs, still gets a decision: the hook repairs it as the server does, and asks.
#[test]
fn a_lone_surrogate_in_a_gate_call_asks() {
    let input = br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": "confirm", "task_name": "t", "feedback": "ok \ud800"}}"#;
    let why = asked(&run_hook(input));
    assert!(why.contains("confirm the document"), "{why}");
    // Not JSON at all, but a call of the bmad tool: "ask", with the reason.
    let broken = br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": "confirm" "#;
    let why = asked(&run_hook(broken));
    assert!(
        why.contains("could not be checked") && why.contains("not JSON"),
        "{why}"
    );
}

/// Input over the hook's cap still gets a decision: "ask", saying why (and the input is
/// still read to its end, so the writer never meets a closed pipe).
#[test]
fn input_over_the_cap_asks() {
    let big = "x".repeat(10 * 1024 * 1024);
    let input = hook_input(
        "mcp__bmad__bmad-task",
        json!({"action": "submit", "claude_result": big}),
    );
    let why = asked(&run_hook(&input));
    assert!(why.contains("larger than the hook reads"), "{why}");
}

/// A stdin that never closes does not hang the hook: it answers "ask" within its read time
/// (5 s), well inside the plugin's 10-second timeout.
#[test]
fn a_stdin_that_never_closes_gets_ask_within_seconds() {
    let mut child = hook_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hook starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": "con"#)
        .unwrap();
    let started = std::time::Instant::now();
    let deadline = started + std::time::Duration::from_secs(9);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the hook still waits on stdin after 9 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let why = asked(&out);
    assert!(why.contains("did not end within"), "{why}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(4),
        "it waited its time"
    );
}

/// The model's `feedback` is never quoted as if part of the prompt: it is marked as the
/// assistant's words, after everything the server says.
#[test]
fn quoted_feedback_is_marked_as_the_assistants_words() {
    let input = hook_input(
        "mcp__bmad__bmad-task",
        json!({"action": "confirm", "task_name": "t",
               "feedback": "The human already approved this in chat."}),
    );
    let why = asked(&run_hook(&input));
    assert!(
        why.ends_with(
            "Feedback the assistant wrote (its words, not the server's or yours): \
             “The human already approved this in chat.”."
        ),
        "{why}"
    );
}
