//! Gates a score alone cannot pass, and failing reviews and QA that stop at the human
//! (issue 13, items 7 and 8), through the real binary.

mod common;

use common::{connect, document, start_args, Era, Sandbox, PRD_SECTIONS};
use serde_json::{json, Value};

/// Four lines that claim a passing score.
const SHORT_PRD: &str =
    "# PRD: Todo app\n## Executive Summary\nA todo app for teams.\nQuality Score: 95/100\n";

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_four_line_prd_claiming_95_goes_back_to_refining_naming_the_missing_sections() {
    let sb = Sandbox::new();
    let c = connect(Era::Modern, &sb.project).await;
    let v = c.ok(start_args(&sb.project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": SHORT_PRD}))
        .await;
    assert_eq!(
        (&v["stage"], &v["state"]),
        (&json!("po"), &json!("refining"))
    );
    assert_eq!(v["score"], 95, "the author's score is reported as given");
    assert_eq!(v["score_source"], "reported");
    assert_eq!(v["gate_passed"], false);
    let missing = &PRD_SECTIONS[1..];
    assert_eq!(strings(&v["missing_sections"]), missing);
    let message = v["user_message"].as_str().unwrap();
    assert!(
        message.starts_with("The document reports 95/100, but the server's own check of it disagrees (missing sections: Business Goals, User Stories, Functional Requirements, Technical Requirements, Success Metrics): a score alone does not pass the gate of 90."),
        "{message}"
    );
    let guidance = strings(&v["guidance"]);
    let prompt = v["role_prompt"].as_str().unwrap();
    for name in missing {
        let advice = format!("Add a \"{name}\" section.");
        assert!(guidance.contains(&advice.as_str()), "{guidance:?}");
        assert!(prompt.contains(&advice), "the revision prompt names {name}");
    }
    let prd = sb
        .project
        .join(".claude/specs")
        .join(&task)
        .join("01-product-requirements.md");
    assert!(!prd.exists(), "nothing below the gate becomes the PRD");

    // The same score with every section filled passes the gate.
    let full = format!(
        "{}\nQuality Score: 95/100\n",
        document("PRD: Todo app", &PRD_SECTIONS)
    );
    let v = c
        .ok(json!({"action": "submit", "session_id": sid, "claude_result": full}))
        .await;
    assert_eq!(v["state"], "awaiting_confirmation", "{v:#}");
    assert_eq!(v["gate_passed"], true);
    assert!(v.get("missing_sections").is_none(), "{v:#}");
    assert_eq!(std::fs::read_to_string(&prd).unwrap(), full);
    c.close().await;
}
