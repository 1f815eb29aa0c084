//! Who passes a gate, per host, as the client's name and capabilities declare it: a host
//! that cannot ask (Gemini CLI, opencode) has its model's `confirm` refused under the
//! default policy, the reply naming the terminal and the dashboard, and the human's
//! terminal decision passes it; `gates = "host"`, once the human approves it, takes the
//! host's word there. A host that closes every dialog unseen in some of its modes
//! (Codex, Copilot, `claude -p`) gets a reply that the close is not the human's, naming
//! those modes and how to be asked instead, and nothing is recorded; a person who reads the
//! form and declines or closes it is answered as the one who did. Codex and Copilot get no
//! `structuredContent` (their model would read the JSON instead of, or after, the text). A
//! connection the model opens itself from a host's shell tool (the server started by a
//! process carrying the shell's mark) waits for the human's channels whatever name and
//! capabilities the client declares, and a process that poses as a host (its `argv[0]`, a
//! copy of a binary under a host's name) gets no dialog.
#![cfg(unix)]

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::support::terminal::in_terminal;
use crate::support::{
    command, handshake, passing_prd, read_json, server_path, Era, NO_USER_CONFIG,
};

/// A host as it declares itself; `declines` declares the dialog and declines it at once,
/// `accepts` declares it and confirms in it (as a model answering its own dialog would).
#[derive(Clone, Default)]
struct Host {
    name: &'static str,
    declines: bool,
    accepts: bool,
    /// Cancels rather than declines (closes the form, as Esc does).
    cancels: bool,
    /// How long its answer takes: none for a host that answers by itself, more than a
    /// second for a person who reads the form first.
    after: std::time::Duration,
    /// `server/discover` (Claude Code's era) rather than `initialize`.
    modern: bool,
    /// How many dialogs it was shown.
    shown: Arc<AtomicUsize>,
}

impl Host {
    fn named(name: &'static str) -> Host {
        Host {
            name,
            ..Host::default()
        }
    }
}

impl ClientHandler for Host {
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.shown.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.after).await;
        if self.cancels {
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        if self.accepts {
            let mut r = ElicitResult::new(ElicitationAction::Accept);
            r.content = Some(json!({"decision": "confirm"}));
            return Ok(r);
        }
        Ok(ElicitResult::new(ElicitationAction::Decline))
    }

    fn get_info(&self) -> ClientConfig {
        let caps = if self.declines || self.accepts || self.cancels {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(caps, Implementation::new(self.name, "1.0.0"))
    }
}

async fn connect(host: Host, project: &Path) -> RunningService<RoleClient, Host> {
    let (transport, _) = TokioChildProcess::builder(command(project))
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let era = if host.modern {
        Era::Modern
    } else {
        Era::Legacy
    };
    handshake(host, era, transport).await
}

/// The server as a model starts it from a host's shell tool: `sh` carrying `mark` (as the
/// tool's shell does) runs `script`, which starts the server (`$0`) and stays its
/// ancestor; `args` are the script's `$1`….
async fn connect_from_shell(
    host: Host,
    project: &Path,
    mark: (&str, &str),
    script: &str,
    args: &[&str],
) -> RunningService<RoleClient, Host> {
    let mut shell = tokio::process::Command::new("sh");
    shell
        .arg("-c")
        .arg(script)
        .arg(server_path())
        .args(args)
        .current_dir(project)
        .env(mark.0, mark.1)
        .env("XDG_CONFIG_HOME", NO_USER_CONFIG)
        .env_remove("BMAD_PROJECT_ROOT")
        .env_remove("CLAUDE_PROJECT_DIR");
    let (transport, _) = TokioChildProcess::builder(shell)
        .stderr(Stdio::null())
        .spawn()
        .expect("the shell starts");
    handshake(host, Era::Legacy, transport).await
}

/// `; :` keeps the shell from replacing itself with the server.
const STAYS_PARENT: &str = "\"$0\"; :";

/// The call's result: whether it is an error, its text, and its `structuredContent`. A
/// refusal reaches Gemini CLI unflagged (its interface would show no text of a flagged
/// one), its text naming the error; everywhere else it is flagged.
async fn call(s: &RunningService<RoleClient, Host>, args: Value) -> (bool, String, Option<Value>) {
    let Value::Object(map) = args else {
        unreachable!()
    };
    let gemini =
        bmad_mcp::hosts::by_client(Some(s.service().name)).is_some_and(|h| h.name == "Gemini CLI");
    let r = s
        .call_tool(CallToolRequestParams::new("bmad-task").with_arguments(map))
        .await
        .expect("answered");
    let text = r.content[0].as_text().expect("text").text.clone();
    let named = text.contains("\nerror:\n  code: ");
    let error = if gemini {
        assert_ne!(r.is_error, Some(true), "unflagged for Gemini CLI: {text}");
        named
    } else {
        assert_eq!(
            r.is_error == Some(true),
            named,
            "flagged as the text says: {text}"
        );
        r.is_error == Some(true)
    };
    crate::support::words_for_the_person(&text);
    (error, text, r.structured_content)
}

fn line<'a>(text: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}: ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{key}:` in\n{text}"))
}

/// Starts a task and submits a passing PRD: the session id and task name.
async fn at_the_prd_gate(s: &RunningService<RoleClient, Host>, project: &Path) -> (String, String) {
    let (_, text, _) = call(
        s,
        json!({"action": "start", "cwd": project, "objective": "Build a todo app"}),
    )
    .await;
    let id = line(&text, "session_id").to_string();
    let task = "build-a-todo-app".to_string();
    assert!(text.contains(&format!("task `{task}`")), "{text}");
    let (error, text, _) = call(
        s,
        json!({"action": "submit", "session_id": id, "claude_result": passing_prd()}),
    )
    .await;
    assert!(!error, "{text}");
    assert!(text.contains("state: awaiting_confirmation"), "{text}");
    (id, task)
}

fn history(project: &Path, id: &str) -> Vec<Value> {
    let s = read_json(&project.join(format!(".bmad-task/session-{id}.json")));
    s["history"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn on_a_host_that_cannot_ask_the_gate_waits_for_the_humans_channels() {
    for name in ["gemini-cli-mcp-client", "opencode"] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let s = connect(Host::named(name), &project).await;
        let (id, task) = at_the_prd_gate(&s, &project).await;
        let before = history(&project, &id).len();
        let (error, text, json) = call(&s, json!({"action": "confirm", "session_id": id})).await;
        assert!(error, "{name}: the model's confirm is refused: {text}");
        // Both show their model the text alone, so the JSON goes beside it (Gemini CLI
        // gets the refusal unflagged: flagged, it would show the whole result as JSON).
        assert!(json.is_some(), "{name}");
        assert!(text.contains("code: human_required"), "{text}");
        assert!(text.contains("cannot ask the human in a dialog"), "{text}");
        assert!(
            text.contains(&format!("`bmad-mcp confirm {task}`")),
            "{text}"
        );
        // Every human channel, the dashboard included, though none is running.
        let next = line(&text, "next_step");
        assert!(
            text.contains("or on their dashboard (`bmad-mcp dashboard`)")
                && next.contains("`bmad-mcp dashboard`"),
            "{text}"
        );
        assert_eq!(history(&project, &id).len(), before, "nothing recorded");

        let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
        assert_eq!(code, 0, "{out}");
        let last = history(&project, &id).last().cloned().unwrap();
        assert_eq!(
            (&last["decided_by"], &last["via"]),
            (&json!("human"), &json!("cli"))
        );
        let (_, text, _) = call(&s, json!({"action": "status", "session_id": id})).await;
        assert!(text.contains("stage: architect"), "{text}");
        s.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn gates_host_once_approved_takes_the_word_of_a_host_that_cannot_ask() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(project.join(".bmad/config.toml"), "gates = \"host\"\n").unwrap();
    let s = connect(Host::named("gemini-cli-mcp-client"), &project).await;
    let (id, _) = at_the_prd_gate(&s, &project).await;
    // Not approved yet: relaxing the gates waits for the human.
    let (error, text, _) = call(&s, json!({"action": "confirm", "session_id": id})).await;
    assert!(
        error && text.contains("waits for the human's approval"),
        "{text}"
    );
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    // The human is told what the change does, and no commands are said to run.
    assert!(
        out.contains("gates relaxed from `auto` to `host`")
            && out.contains("the assistant's word passes a gate wherever its host cannot ask you")
            && out.contains("No checks: the server runs no commands")
            && !out.contains("will run these commands"),
        "{out}"
    );
    let (error, text, _) = call(&s, json!({"action": "confirm", "session_id": id})).await;
    assert!(!error, "{text}");
    assert!(text.contains("stage: architect"), "{text}");
    let last = history(&project, &id).last().cloned().unwrap();
    assert_eq!(last["decided_by"], "host");
    s.cancel().await.unwrap();
}

#[tokio::test]
async fn a_decline_by_a_host_with_nobody_at_it_is_not_the_humans_rejection() {
    // Each reply says when that host closes the dialog unseen and how a person is asked
    // instead: Codex and Copilot decline, `claude -p` cancels (9 ms after the form).
    for (name, host, when) in [
        (
            "codex-mcp-client",
            "Codex CLI",
            "To be asked in the dialog, run Codex interactively with `approval_policy = \"on-request\"`",
        ),
        (
            "copilot-cli",
            "Copilot CLI",
            "To be asked in the dialog, run `copilot` interactively, without `-p`",
        ),
        (
            "claude-code",
            "Claude Code",
            "To be asked in the dialog, run `claude` interactively, without `-p`",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let claude = name == "claude-code";
        let s = connect(
            Host {
                declines: !claude,
                cancels: claude,
                modern: claude,
                ..Host::named(name)
            },
            &project,
        )
        .await;
        let (id, task) = at_the_prd_gate(&s, &project).await;
        let before = history(&project, &id).len();
        let (error, text, json) = call(&s, json!({"action": "confirm", "session_id": id})).await;
        assert!(!error, "{text}");
        assert!(json.is_none(), "{name}: the text alone");
        assert!(
            text.contains(&format!(
                "{host} closed the dialog before anyone could read it"
            )),
            "{text}"
        );
        assert!(text.contains("it is not the human's answer"), "{text}");
        assert!(text.contains(when), "{text}");
        assert!(
            text.contains(&format!("`bmad-mcp confirm {task}`")),
            "{text}"
        );
        assert!(text.contains("bmad-mcp dashboard"), "{text}");
        assert!(text.contains("state: awaiting_confirmation"), "{text}");
        assert_eq!(history(&project, &id).len(), before, "nothing recorded");
        s.cancel().await.unwrap();
    }
}

/// A person who reads the form and declines it, or closes it (Esc), in an interface that
/// shows it (Copilot's, Claude Code's, more than a second after it went out) is answered as
/// the one who did: never told it was perhaps not them, and told where else to decide.
#[tokio::test]
async fn a_person_who_declines_or_closes_the_form_is_answered_as_the_one_who_did() {
    for (name, cancels) in [("copilot-cli", false), ("claude-code", true)] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let claude = name == "claude-code";
        let s = connect(
            Host {
                declines: !cancels,
                cancels,
                modern: claude,
                after: std::time::Duration::from_millis(1500),
                ..Host::named(name)
            },
            &project,
        )
        .await;
        let (id, task) = at_the_prd_gate(&s, &project).await;
        let before = history(&project, &id).len();
        let (error, text, _) = call(&s, json!({"action": "confirm", "session_id": id})).await;
        assert!(!error, "{text}");
        let said = if cancels {
            "The dialog was closed without a decision: it is still pending."
        } else {
            "You declined in the dialog: nothing was approved and nothing changed."
        };
        assert!(text.contains(said), "{name}: {text}");
        for not in ["perhaps", "before anyone could read it", "without `-p`"] {
            assert!(!text.contains(not), "{name}: {not} in {text}");
        }
        for named in [
            format!("`bmad-mcp confirm {task}`"),
            "bmad-mcp dashboard".to_string(),
        ] {
            assert!(text.contains(&named), "{name}: {named} in {text}");
        }
        assert_eq!(history(&project, &id).len(), before, "nothing recorded");
        s.cancel().await.unwrap();
    }
}

/// The model's `confirm` over a connection it opened from a host's shell: refused with
/// `human_required` naming that shell, no dialog shown, nothing recorded.
async fn refused_from_the_shell(
    s: &RunningService<RoleClient, Host>,
    project: &Path,
    id: &str,
    why: &str,
) {
    let before = history(project, id).len();
    let (error, text, _) = call(s, json!({"action": "confirm", "session_id": id})).await;
    assert!(error, "the model's confirm is refused: {text}");
    assert!(text.contains("code: human_required"), "{text}");
    assert!(
        text.contains(why),
        "the reply names the shell ({why}): {text}"
    );
    assert_eq!(history(project, id).len(), before, "nothing recorded");
}

#[tokio::test]
async fn a_connection_from_a_hosts_shell_waits_for_the_humans_channels() {
    // Whatever the client declares: a name no host has, the Inspector's (whose word passes
    // where a person makes the calls), or Gemini CLI's own with the dialog.
    let clients = || {
        [
            Host::named("x"),
            Host::named("inspector-cli"),
            Host {
                accepts: true,
                ..Host::named("gemini-cli-mcp-client")
            },
        ]
    };
    for (mark, host) in [
        (("GEMINI_CLI", "1"), "Gemini CLI"),
        (("OPENCODE", "1"), "opencode"),
    ] {
        for client in clients() {
            let dir = tempfile::tempdir().unwrap();
            let project = dir.path().canonicalize().unwrap();
            let name = client.name;
            let s = connect_from_shell(client.clone(), &project, mark, STAYS_PARENT, &[]).await;
            let (id, task) = at_the_prd_gate(&s, &project).await;
            let why = format!(
                "{host}'s shell tool ({}={} in the environment of sh (pid",
                mark.0, mark.1
            );
            refused_from_the_shell(&s, &project, &id, &why).await;
            assert_eq!(client.shown.load(Ordering::SeqCst), 0, "{name}: no dialog");
            // The human's own terminal still decides.
            let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
            assert_eq!(code, 0, "{out}");
            let last = history(&project, &id).last().cloned().unwrap();
            assert_eq!(
                (&last["decided_by"], &last["via"]),
                (&json!("human"), &json!("cli")),
                "{name} under {host}'s shell"
            );
            let (_, text, _) = call(&s, json!({"action": "status", "session_id": id})).await;
            assert!(text.contains("stage: architect"), "{text}");
            s.cancel().await.unwrap();
        }
    }
}

#[tokio::test]
async fn a_process_posing_as_a_host_under_its_shell_gets_no_dialog() {
    let bins = tempfile::tempdir().unwrap();
    let copy = bins.path().join("claude");
    std::fs::copy("/bin/bash", &copy).expect("a copy of bash");
    let copy = copy.to_str().unwrap().to_string();
    // Each starts the server under Gemini CLI's shell from a process that is Claude Code by
    // its name: `argv[0]` alone, with the shell's mark removed from it; then a copy of a
    // program under Claude Code's own file name, carrying the mark.
    let cases = [
        (
            "env -u GEMINI_CLI bash -c 'exec -a claude bash -c \"\\\"\\$0\\\"; :\" \"$1\"' bash \"$0\"; :",
            "GEMINI_CLI=1 in the environment of sh (pid",
        ),
        (
            "\"$1\" -c '\"$0\"; :' \"$0\"; :",
            "GEMINI_CLI=1 in the environment of claude (pid",
        ),
    ];
    for (script, why) in cases {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let client = Host {
            accepts: true,
            ..Host::named("x")
        };
        let s = connect_from_shell(
            client.clone(),
            &project,
            ("GEMINI_CLI", "1"),
            script,
            &[&copy],
        )
        .await;
        let (id, _) = at_the_prd_gate(&s, &project).await;
        refused_from_the_shell(&s, &project, &id, why).await;
        assert_eq!(
            client.shown.load(Ordering::SeqCst),
            0,
            "{script}: no dialog"
        );
        s.cancel().await.unwrap();
    }
}
