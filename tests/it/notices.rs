//! The notice that no checks are configured fits the project and reaches the human: its
//! examples are in the project's own language (told by its build files), it is given once
//! per session (recorded in the session, not repeated at QA), and `next_step` tells the
//! host to pass `notices` on. The output schema says who each field is for.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{at_dev, connect, read_json, Client, Era};

const REPORT: &str = "# Implementation Report\n\n## Summary\nBuilt.";

fn notices(v: &Value) -> String {
    v["notices"]
        .as_array()
        .map(|n| {
            n.iter()
                .filter_map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Submits the dev report in a project holding `file`; returns the reply and the session id.
async fn dev_report_in(project: &Path, file: Option<&str>) -> (Client, Value, Value) {
    if let Some(file) = file {
        std::fs::write(project.join(file), "").unwrap();
    }
    let c = connect(Era::Legacy, project).await;
    let sid = at_dev(&c, project).await;
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "codex_result": REPORT}))
        .await;
    (c, v, sid)
}

#[tokio::test]
async fn the_no_checks_notice_speaks_the_projects_language_once_per_session_and_next_step_names_it()
{
    for (file, expected, foreign) in [
        (
            Some("pyproject.toml"),
            "test = \"python -m pytest -q\"\nlint = \"ruff check .\"",
            "cargo",
        ),
        (
            Some("Cargo.toml"),
            "test = \"cargo test --locked\"",
            "pytest",
        ),
        (Some("package.json"), "test = \"npm test\"", "cargo"),
        (Some("go.mod"), "test = \"go test ./...\"", "cargo"),
        (
            None,
            "test = \"<the command that runs your tests>\"",
            "cargo",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap();
        let (c, v, sid) = dev_report_in(&project, file).await;
        let n = notices(&v);
        assert!(
            n.contains("No checks are configured")
                && n.contains(&format!("[checks]\n{expected}"))
                && n.contains("bmad-mcp config approve")
                && !n.contains(foreign),
            "{file:?}: {n}"
        );
        let step = v["next_step"].as_str().unwrap_or_default();
        assert!(step.contains("`notices`"), "{file:?}: {step}");
        let s =
            read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())));
        assert_eq!(s["notices_given"], json!(["no_checks"]), "{file:?}");

        if file == Some("pyproject.toml") {
            // Review, then QA (a stage that runs checks too): not said again.
            let v = c
                .ok(json!({"action": "submit", "session_id": sid, "codex_result": "# Code Review\n\n## Findings\n- none\n\nReview Status: Pass\n"}))
                .await;
            if v["state"] == "awaiting_confirmation" {
                c.ok(json!({"action": "confirm", "session_id": sid})).await;
            }
            let v = c
                .ok(json!({"action": "submit", "session_id": sid, "claude_result": "# QA Report\n\n## Results\nAll pass.\n\nIntent: met\nQuality Score: 95/100\n"}))
                .await;
            assert_eq!(v["stage"], "qa", "{v:#}");
            assert!(!notices(&v).contains("No checks"), "said once: {v:#}");
            assert!(
                !v["next_step"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("`notices`"),
                "{v:#}"
            );
        }
        c.close().await;
    }
}

#[test]
fn the_reply_schema_says_who_each_field_is_for() {
    let output = bmad_mcp::server::reply_schema();
    let description = output["description"].as_str().unwrap_or_default();
    for audience in ["**the human**", "**the host's model**", "**both**"] {
        assert!(description.contains(audience), "{description}");
    }
    let properties = output["properties"].as_object().unwrap();
    assert!(properties.len() > 30);
    for name in properties.keys() {
        assert!(
            description.contains(&format!("`{name}`")),
            "the output schema does not say who `{name}` is for: {description}"
        );
    }
}
