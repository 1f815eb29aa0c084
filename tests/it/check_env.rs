//! Secrets stay with the server: a check is a process of the project's own code, so it runs
//! without the server's token, its `BMAD_*` settings and any variable whose name says it is
//! a secret, unless the approved config passes that one on (`pass_env`). Everything else of
//! the server's environment it keeps.
#![cfg(unix)]

use std::path::Path;

use serde_json::json;

use crate::support::http::Server;
use crate::support::terminal::in_terminal;
use crate::support::{at_dev, Era};

const TOKEN: &str = "s3cr3t-token-of-the-server-0123456789";

/// Every kept output of the project's checks, joined.
fn kept_outputs(project: &Path) -> String {
    let mut out = String::new();
    let mut dirs = vec![project.join(".bmad-task/temp")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "log") {
                out.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_prints_its_environment_shows_no_secret_of_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    std::fs::write(
        project.join(".bmad/config.toml"),
        "pass_env = [\"DEPLOY_TOKEN\"]\n[checks]\nenv = \"env; echo end of env\"\n",
    )
    .unwrap();
    let (code, out) = in_terminal(&project, &["config", "approve"], "[y/N]", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("the checks are also given: DEPLOY_TOKEN"),
        "the approval names what is passed on: {out}"
    );
    let server = Server::for_project(
        &project,
        &[
            ("BMAD_MCP_TOKEN", TOKEN),
            ("BMAD_LOCK_WAIT_SECS", "9"),
            ("MY_SERVICE_API_KEY", "api-key-value-42"),
            ("DB_PASSWORD", "password-value-43"),
            ("DEPLOY_TOKEN", "passed-on-by-the-config-44"),
            ("PLAIN_SETTING", "plain-value-45"),
        ],
    );
    let c = server.connect(Era::Legacy, Some(TOKEN), &project).await;
    let sid = at_dev(&c, &project).await;
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": "# Implementation Report\n\n## Summary\nBuilt."}))
        .await;
    c.close().await;
    assert_eq!(v["checks"]["checks"][0]["outcome"], "passed", "{v}");
    let kept = kept_outputs(&project);
    assert!(kept.contains("end of env"), "the check ran: {kept}");
    let reply = v.to_string();
    for (what, text) in [("the kept output", &kept), ("the reply", &reply)] {
        for secret in [
            TOKEN,
            "BMAD_MCP_TOKEN",
            "BMAD_LOCK_WAIT_SECS",
            "api-key-value-42",
            "password-value-43",
        ] {
            assert!(!text.contains(secret), "{secret} in {what}: {text}");
        }
    }
    // What the config passes on, and what is not a secret, the check has.
    assert!(
        kept.contains("DEPLOY_TOKEN=passed-on-by-the-config-44"),
        "{kept}"
    );
    assert!(kept.contains("PLAIN_SETTING=plain-value-45"), "{kept}");
    assert!(kept.contains("PATH="), "{kept}");
}
