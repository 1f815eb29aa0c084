//! `bmad-mcp hook pre-tool-use`: the Claude Code `PreToolUse` hook of the bmad plugin
//! (`plugins/bmad/.claude-plugin/plugin.json`). It is the human's gate for sessions in
//! which the client's dialog is not shown: before a `confirm`, `confirm_save`, `approve` or
//! `reject` call of the `bmad-task` tool runs, Claude Code asks the human.
//!
//! Claude Code writes the hook's input, one JSON object, on stdin (`hook_event_name`,
//! `tool_name`, `tool_input`, …). For a gate call this prints
//! `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
//! "permissionDecisionReason": "…"}}`, whose reason Claude Code shows in its permission
//! prompt. For anything else it prints nothing: Claude Code then goes on as it would
//! without the hook. It always exits 0, whatever it is given: a hook that fails must not
//! block the calls it has no business with, and an input it cannot read is not a gate
//! call it could name.

use std::io::{Read, Write};

use clap::Subcommand;
use serde_json::{json, Map, Value};

/// The hook events `bmad-mcp hook` answers.
#[derive(Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Reads a PreToolUse input on stdin; for a `confirm`, `confirm_save`, `approve` or
    /// `reject` call of bmad-task prints the decision "ask", else nothing. Exits 0.
    PreToolUse,
}

/// The actions the hook asks the human about: the gate decisions.
pub const GATE_ACTIONS: [&str; 4] = ["confirm", "confirm_save", "approve", "reject"];

/// The name of the tool as the server declares it; Claude Code prefixes it with
/// `mcp__<server>__` (`mcp__bmad__bmad-task`, or `mcp__plugin_bmad_bmad__bmad-task` for the
/// plugin's server).
const TOOL: &str = crate::server::TOOL_NAME;

/// More input than a gate call can be (its texts are capped at 64 KiB each by default): a
/// larger one is a submission, read no further.
const MAX_INPUT_BYTES: u64 = 8 * 1024 * 1024;

/// Characters of the human's or the assistant's text quoted in the reason.
const QUOTE_CHARS: usize = 300;

/// Runs the hook for `event` on this process's stdin and stdout. Always exits 0.
pub fn run(event: Event) -> super::Exit {
    let Event::PreToolUse = event;
    let (sent, received) = std::sync::mpsc::channel();
    // A thread reads, so that a stdin that never closes cannot hold the answer up: after
    // READ_TIME the hook answers "ask" with what it has, and the process ends.
    std::thread::spawn(move || {
        let mut input = Vec::new();
        let mut stdin = std::io::stdin().lock();
        let read = (&mut stdin)
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut input);
        let over = input.len() as u64 > MAX_INPUT_BYTES;
        let _ = sent.send(Input::from(read, input, over));
        // What is left of a larger input is drained, so the writer never meets a closed pipe.
        let _ = std::io::copy(&mut stdin, &mut std::io::sink());
        let _ = sent.send(Input::Drained);
    });
    let deadline = std::time::Instant::now() + READ_TIME;
    let decision = match received.recv_timeout(READ_TIME) {
        Ok(Input::Whole(input)) => pre_tool_use(&input),
        Ok(Input::Failed(e)) => Some(unreadable(&format!("stdin could not be read ({e})"))),
        Ok(Input::Over) => Some(unreadable(&format!(
            "the input is larger than the hook reads ({MAX_INPUT_BYTES} bytes)"
        ))),
        Ok(Input::Drained) | Err(_) => Some(unreadable(&format!(
            "the input did not end within {} seconds",
            READ_TIME.as_secs()
        ))),
    };
    if let Some(out) = decision {
        let mut stdout = std::io::stdout().lock();
        // A closed stdout leaves Claude Code with no decision, as no hook would.
        let _ = writeln!(stdout, "{out}").and_then(|()| stdout.flush());
    }
    // The rest of a larger input is drained while there is time; then the process ends,
    // a read still blocked with it.
    let _ = received.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
    super::Exit::Done
}

/// How long the hook waits for its input to end: within the plugin's 10-second timeout.
const READ_TIME: std::time::Duration = std::time::Duration::from_secs(5);

/// What the reading thread found.
enum Input {
    Whole(Vec<u8>),
    Failed(std::io::Error),
    /// More than MAX_INPUT_BYTES.
    Over,
    /// The rest of the input was read to its end.
    Drained,
}

impl Input {
    fn from(read: std::io::Result<usize>, input: Vec<u8>, over: bool) -> Input {
        match read {
            Err(e) => Input::Failed(e),
            Ok(_) if over => Input::Over,
            Ok(_) => Input::Whole(input),
        }
    }
}

/// The decision "ask" for an input of the bmad tool the hook cannot read: it fails
/// closed, as the server may still read the call (the plugin's matcher sends the hook
/// this tool's calls only).
fn unreadable(why: &str) -> String {
    ask(format!(
        "BMAD: this call of the bmad tool could not be checked: {why}. It may be a gate \
         decision (confirm, approve, reject) sent on your behalf: allow it only if you made it."
    ))
}

fn ask(reason: String) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": reason,
        }
    })
    .to_string()
}

/// The input as JSON, read as the server reads a message: a lone UTF-16 surrogate escape
/// is repaired to U+FFFD ([`jsonrpc::surrogates`](crate::jsonrpc::surrogates)) rather than refused.
fn parse(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(bytes).or_else(|e| match crate::jsonrpc::surrogates::repair(bytes) {
        Some(r) => serde_json::from_slice(&r.line),
        None => Err(e),
    })
}

/// The decision for one PreToolUse input, as the JSON line to print; `None` when the
/// call is not a gate call of bmad-task (or the input says too little to tell). An input
/// that is not JSON but names the bmad tool gets "ask" with the reason.
pub fn pre_tool_use(input: &[u8]) -> Option<String> {
    let hook: Value = match parse(input) {
        Ok(v) => v,
        Err(e) if names_the_tool(input) => {
            return Some(unreadable(&format!("it is not JSON ({e})")))
        }
        Err(_) => return None,
    };
    let hook = hook.as_object()?;
    if let Some(event) = hook.get("hook_event_name") {
        if event.as_str() != Some("PreToolUse") {
            return None;
        }
    }
    if !is_bmad_tool(hook.get("tool_name")?.as_str()?) {
        return None;
    }
    let args = tool_input(hook.get("tool_input")?)?;
    let action = args.get("action")?.as_str()?;
    if !GATE_ACTIONS.contains(&action) {
        return None;
    }
    Some(ask(reason(action, &args)))
}

/// Whether bytes that are not JSON name the bmad-task tool anywhere.
fn names_the_tool(input: &[u8]) -> bool {
    input.windows(TOOL.len()).any(|w| w == TOOL.as_bytes())
}

/// Whether `name` is the bmad-task tool under any server name Claude Code gives it.
pub fn is_bmad_tool(name: &str) -> bool {
    name == TOOL
        || name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_suffix(TOOL))
            .is_some_and(|server| server.len() > 2 && server.ends_with("__"))
}

/// The tool's arguments: an object, or a string holding one.
fn tool_input(v: &Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(o) => Some(o.clone()),
        Value::String(s) => match parse(s.as_bytes()).ok()? {
            Value::Object(o) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// What the human is asked to allow, in their terms: which decision, on which task, with
/// the words the assistant is about to send on their behalf.
fn reason(action: &str, args: &Map<String, Value>) -> String {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(quote);
    let task = match (text("task_name"), text("session_id")) {
        (Some(name), _) => format!("task {name}"),
        (None, Some(id)) => format!("session {id}"),
        (None, None) => "the current task".to_string(),
    };
    let refused = |key: &str| args.get(key).and_then(Value::as_bool) == Some(false);
    let what = match action {
        "reject" => "send the document back for revision".to_string(),
        "approve" if refused("approved") => "send the sprint plan back for revision".to_string(),
        "approve" => format!(
            "approve the sprint plan, scope {}",
            text("scope").unwrap_or_else(|| "all".into())
        ),
        _ if refused("confirmed") => "send the document back for revision".to_string(),
        _ => "confirm the document and move the workflow on".to_string(),
    };
    let mut out = format!("BMAD gate: the assistant asks to {what} ({task})");
    if let Some(digest) = text("digest") {
        out.push_str(&format!(", for the document version {digest}"));
    }
    out.push_str(". This decision is yours: allow it only if you made it");
    // The feedback is the assistant's text: marked as its words, never as the server's or
    // the human's, and last, so that nothing of the server's is read as part of it.
    if let Some(feedback) = text("feedback") {
        out.push_str(&format!(
            ". Feedback the assistant wrote (its words, not the server's or yours): {feedback}"
        ));
    }
    out.push('.');
    out
}

/// A caller's text, quoted on one line and cut short.
fn quote(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\t' => ' ',
            // A quote mark inside cannot end the quote early.
            '“' | '”' => '"',
            c => c,
        })
        .collect();
    // Any other control, invisible or reordering character is shown, never interpreted
    // (a right-to-left mark must not rearrange the prompt the human reads).
    let shown = crate::code::visible(crate::code::clip(flat.trim(), QUOTE_CHARS).as_str());
    format!("“{shown}”")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_shows_its_control_and_reordering_characters() {
        let q = quote("ok\u{202e}txet\u{1b}[2K\nnext");
        assert!(!q.contains('\u{202e}') && !q.contains('\u{1b}'), "{q}");
        assert!(
            q.contains("ok") && q.contains("next") && !q.contains('\n'),
            "{q}"
        );
    }

    fn input(tool: &str, args: Value) -> Vec<u8> {
        json!({
            "session_id": "abc",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/work/project",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": args,
            "tool_use_id": "toolu_01",
        })
        .to_string()
        .into_bytes()
    }

    fn decision(bytes: &[u8]) -> Option<Value> {
        pre_tool_use(bytes).map(|s| serde_json::from_str(&s).expect("the output is JSON"))
    }

    const NAMES: [&str; 2] = ["mcp__bmad__bmad-task", "mcp__plugin_bmad_bmad__bmad-task"];

    #[test]
    fn every_gate_action_asks_under_both_tool_names() {
        for tool in NAMES {
            for action in GATE_ACTIONS {
                let out = decision(&input(
                    tool,
                    json!({"action": action, "task_name": "todo-app", "feedback": "Add tests"}),
                ))
                .unwrap_or_else(|| panic!("{tool} {action}: no decision"));
                let h = &out["hookSpecificOutput"];
                assert_eq!(h["hookEventName"], "PreToolUse");
                assert_eq!(h["permissionDecision"], "ask");
                let why = h["permissionDecisionReason"].as_str().unwrap();
                assert!(why.contains("task “todo-app”"), "{why}");
                assert!(why.contains("allow it only if you made it"), "{why}");
                assert_eq!(out.as_object().unwrap().len(), 1, "{out}");
            }
        }
    }

    #[test]
    fn other_actions_and_other_tools_get_no_decision() {
        for action in ["start", "submit", "answer", "status", "list", "explode"] {
            for tool in NAMES {
                let args = json!({"action": action, "objective": "x"});
                assert_eq!(decision(&input(tool, args)), None, "{tool} {action}");
            }
        }
        for tool in [
            "Bash",
            "mcp__other__confirm",
            "mcp__bmad__bmad-task-2",
            "mcp____bmad-task",
            "bmad-task-x",
            "",
        ] {
            let args = json!({"action": "confirm"});
            assert_eq!(decision(&input(tool, args)), None, "{tool}");
        }
        // Another event that reached the command by mistake.
        let mut other: Value =
            serde_json::from_slice(&input(NAMES[0], json!({"action": "confirm"}))).unwrap();
        other["hook_event_name"] = "PostToolUse".into();
        assert_eq!(decision(other.to_string().as_bytes()), None);
    }

    #[test]
    fn odd_input_gets_no_decision_and_never_a_panic() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let odd: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"not json".to_vec(),
            b"[]".to_vec(),
            b"null".to_vec(),
            vec![0xff, 0xfe, 0x00],
            deep.into_bytes(),
            br#"{"tool_name": 3, "tool_input": {"action": "confirm"}}"#.to_vec(),
            br#"{"tool_name": "mcp__bmad__bmad-task"}"#.to_vec(),
            br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": []}"#.to_vec(),
            br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": 1}}"#.to_vec(),
            br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": {"confirm": null}}}"#.to_vec(),
            br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": "{not json"}"#.to_vec(),
        ];
        for bytes in odd {
            assert_eq!(
                decision(&bytes),
                None,
                "{}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
            );
        }
    }

    #[test]
    fn a_gate_call_still_asks_when_the_rest_of_the_input_is_odd() {
        // No event name, the arguments as a JSON string, fields of the wrong type: the
        // action is all it takes.
        let bytes = json!({
            "tool_name": "mcp__plugin_bmad_bmad__bmad-task",
            "tool_input": r#"{"action": "approve", "scope": 2, "task_name": ["x"]}"#,
        })
        .to_string();
        let out = decision(bytes.as_bytes()).expect("asks");
        let why = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            why.contains("approve the sprint plan, scope all (the current task)"),
            "{why}"
        );
    }

    #[test]
    fn the_reason_says_what_is_decided_in_the_humans_terms() {
        let why = |args: Value| {
            decision(&input(NAMES[0], args)).unwrap()["hookSpecificOutput"]
                ["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let id = "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
        let w = why(json!({"action": "confirm", "session_id": id, "digest": "abcdef123456"}));
        assert!(
            w.contains("confirm the document and move the workflow on"),
            "{w}"
        );
        assert!(
            w.contains(&format!("session “{id}”")) && w.contains("version “abcdef123456”"),
            "{w}"
        );
        let w = why(json!({"action": "confirm_save", "confirmed": false, "feedback": "No"}));
        assert!(
            w.contains("send the document back for revision")
                && w.ends_with(
                    "Feedback the assistant wrote (its words, not the server's or yours): “No”."
                ),
            "{w}"
        );
        let w = why(json!({"action": "approve", "scope": "sprint 1"}));
        assert!(
            w.contains("approve the sprint plan, scope “sprint 1”"),
            "{w}"
        );
        let w = why(json!({"action": "approve", "approved": false}));
        assert!(w.contains("send the sprint plan back"), "{w}");
        // Long or multi-line text is cut and kept on one line.
        let w = why(
            json!({"action": "reject", "feedback": format!("a\nb\u{1b}[31m{}", "x".repeat(5000))}),
        );
        assert!(!w.contains('\n') && !w.contains('\u{1b}'), "{w}");
        assert!(w.len() < 600, "{} bytes", w.len());
    }

    #[test]
    fn what_the_server_repairs_the_hook_reads_and_what_it_cannot_read_asks() {
        let lone = br#"{"hook_event_name": "PreToolUse", "tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": "confirm", "feedback": "ok \ud800"}}"#;
        let out = decision(lone).expect("a lone surrogate is repaired, the call asks");
        let why = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            why.contains("confirm the document") && why.contains("“ok \u{fffd}”"),
            "{why}"
        );
        // The same inside arguments given as a JSON string.
        let nested = json!({
            "tool_name": "mcp__bmad__bmad-task",
            "tool_input": r#"{"action": "reject", "feedback": "\udc00 no"}"#,
        })
        .to_string();
        assert!(decision(nested.as_bytes()).is_some(), "{nested}");
        // Not JSON, but naming the tool: "ask", with the reason.
        let broken = br#"{"tool_name": "mcp__bmad__bmad-task", "tool_input": {"action": "confirm""#;
        let out = decision(broken).expect("asks");
        let why = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            why.contains("could not be checked") && why.contains("not JSON"),
            "{why}"
        );
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "ask");
    }

    #[test]
    fn a_quote_mark_in_the_feedback_cannot_end_the_quote() {
        let args = json!({"action": "confirm", "feedback": "ok”. The server verified this. “"});
        let out = decision(&input(NAMES[0], args)).unwrap();
        let why = out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            why.ends_with(
                "(its words, not the server's or yours): “ok\". The server verified this. \"”."
            ),
            "{why}"
        );
    }

    #[test]
    fn the_tool_names_claude_code_gives_are_recognised() {
        for name in [TOOL, NAMES[0], NAMES[1], "mcp__bmad-dev__bmad-task"] {
            assert!(is_bmad_tool(name), "{name}");
        }
    }
}
