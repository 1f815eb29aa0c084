//! Where a decision typed in the terminal comes from: a plain terminal run records its
//! terminal device and the processes it ran under with the decision; one run under an
//! assistant's shell (a process that is Claude Code, or has `CLAUDECODE` in its
//! environment, read from the process tree) is refused with exit 2 and changes nothing,
//! even when it has a pseudo-terminal and unsets the variable for itself.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::cli::{session, waiting_for_confirmation};
use crate::support::terminal::{in_terminal, run_in_terminal};
use crate::support::{isolate, last_entry, server_path, tree_digest};

/// `bmad-mcp <args>` run by a shell `shell` (not exec'd: the shell stays its parent),
/// with `CLAUDECODE` set in the shell's environment when `marked`; the command itself
/// runs with the variable removed.
fn under_shell(project: &Path, shell: &Path, marked: bool, args: &[&str]) -> Command {
    let mut cmd = Command::new(shell);
    isolate(cmd.current_dir(project))
        .arg("-c")
        .arg("env -u CLAUDECODE \"$0\" \"$@\"; exit $?")
        .arg(server_path())
        .args(args)
        .env_remove("CLAUDECODE");
    if marked {
        cmd.env("CLAUDECODE", "1");
    }
    cmd
}

#[test]
fn a_decision_typed_in_a_plain_terminal_records_where_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, id) = waiting_for_confirmation(&project);
    let (code, out) = in_terminal(&project, &["confirm", &task], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    let last = last_entry(&session(&project, &id));
    assert_eq!(
        (&last["action"], &last["decided_by"], &last["via"]),
        (&json!("confirm"), &json!("human"), &json!("cli")),
        "{last}"
    );
    let p = &last["provenance"];
    assert!(
        p["terminal"]
            .as_str()
            .is_some_and(|t| t.starts_with("/dev/pts/")),
        "{last}"
    );
    // The chain starts at the parent: this test process.
    let parent = format!("(pid {})", std::process::id());
    assert!(
        p["parents"][0]
            .as_str()
            .is_some_and(|s| s.ends_with(&parent)),
        "{last}"
    );
    assert_eq!(p["under_assistant"], false, "{last}");
}

#[test]
fn a_decision_under_an_assistants_shell_is_refused_even_in_a_pseudo_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let (task, _) = waiting_for_confirmation(&project);
    // The host's own program (a shell under Claude Code's file name: what the process
    // executes tells the host), with no variable anywhere.
    let claude = dir.path().join("claude");
    std::fs::copy("/bin/sh", &claude).unwrap();
    let before = tree_digest(&project);
    for (shell, marked, args, why) in [
        (
            Path::new("/bin/sh"),
            true,
            vec!["confirm", task.as_str()],
            "CLAUDECODE in the environment of sh (pid ",
        ),
        (
            Path::new("/bin/sh"),
            true,
            vec!["reject", task.as_str(), "--feedback", "more"],
            "CLAUDECODE in the environment of sh (pid ",
        ),
        (
            claude.as_path(),
            false,
            vec!["confirm", task.as_str()],
            "Claude Code is claude (pid ",
        ),
        (
            Path::new("/bin/sh"),
            true,
            vec!["config", "approve"],
            "CLAUDECODE in the environment of sh (pid ",
        ),
    ] {
        let (code, out) =
            run_in_terminal(under_shell(&project, shell, marked, &args), "[y/N]", "y\n");
        assert_eq!(code, 2, "{args:?}: {out}");
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("runs under an assistant's shell")
                && flat.contains(why.trim_end())
                && flat.contains("in a terminal of your own")
                && flat.contains("`bmad-mcp dashboard`"),
            "{args:?}: {out}"
        );
        assert_eq!(tree_digest(&project), before, "{args:?} changed nothing");
    }
    // The same shell without the marker: the decision goes through.
    let (code, out) = run_in_terminal(
        under_shell(&project, Path::new("/bin/sh"), false, &["confirm", &task]),
        "[y/N]",
        "y\n",
    );
    assert_eq!(code, 0, "{out}");
}
