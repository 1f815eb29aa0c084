//! Every argument a call gives is one its action uses. A field the server would pass over
//! (the human's `feedback` with `submit`, `scope` with `confirm`, `answers` with a
//! rejection, a `digest` with `status`) is refused, naming the field and where it goes:
//! never silently dropped (docs/spec.md §2.2).

use serde_json::{Map, Value};

use crate::code::ErrorCode;
use crate::error::{Error, Result};
use crate::workflow::Action;

/// The fields of [`super::args::BmadTaskArgs`], as the input schema names them.
pub const FIELD_NAMES: [&str; 24] = [
    "action",
    "session_id",
    "task_name",
    "cwd",
    "objective",
    "engines",
    "track",
    "parent",
    "sprint",
    "stage",
    "claude_result",
    "codex_result",
    "document_file",
    "answers",
    "confirmed",
    "approved",
    "feedback",
    "scope",
    "cursor",
    "mine",
    "digest",
    "lesson",
    "category",
    "query",
];

/// The fields `action` uses; `accepting` is false for a `confirm` or `approve` given
/// `false` (a rejection).
fn used(action: Action, accepting: bool) -> Vec<&'static str> {
    let fields: &[&str] = match action {
        Action::Start => &["objective", "engines", "track", "parent", "sprint"],
        Action::List => &["cursor", "mine"],
        Action::Promote | Action::Status => &[],
        Action::Remember => &["stage", "lesson", "category"],
        Action::Recall => &["stage", "query"],
        Action::Submit => &["stage", "claude_result", "codex_result", "document_file"],
        Action::Answer => &["digest", "answers"],
        Action::Confirm | Action::ConfirmSave if accepting => {
            &["digest", "feedback", "confirmed", "answers"]
        }
        Action::Confirm | Action::ConfirmSave => &["digest", "feedback", "confirmed"],
        Action::Approve if accepting => &["digest", "feedback", "approved", "scope"],
        Action::Approve => &["digest", "feedback", "approved"],
        Action::Reject => &["digest", "feedback"],
    };
    let session: &[&str] = match action {
        Action::Start | Action::List => &[],
        _ => &["session_id", "task_name"],
    };
    [&["action", "cwd"], session, fields].concat()
}

/// Where `field` belongs, for the refusal.
fn goes_with(field: &str) -> &'static str {
    match field {
        "feedback" => "the human's words go with `reject`, or with `confirm` or `approve` as their note on the decision",
        "answers" => "answers go with `answer`, or with a `confirm` that accepts the document; to send it back, put them in `feedback`",
        "scope" => "it goes with an `approve` that accepts the plan",
        "objective" | "engines" | "track" | "parent" | "sprint" => "it goes with `start`",
        "stage" | "claude_result" | "codex_result" | "document_file" => "it goes with `submit`",
        "cursor" | "mine" => "it goes with `list`",
        "confirmed" => "it goes with `confirm`",
        "approved" => "it goes with `approve`",
        "digest" => "it goes with a decision (`answer`, `confirm`, `approve`, `reject`)",
        _ => "`start` and `list` name no session",
    }
}

/// Refuses the first field given (not null) that the call's action does not use. A call
/// whose `action` is not a known action name passes: parsing refuses it.
pub(super) fn check(map: &Map<String, Value>) -> Result<()> {
    let Some(action) = map
        .get("action")
        .and_then(Value::as_str)
        .and_then(|a| Action::ALL.into_iter().find(|x| x.name() == a))
    else {
        return Ok(());
    };
    let flag = match action {
        Action::Confirm | Action::ConfirmSave => "confirmed",
        _ => "approved",
    };
    let accepting = map.get(flag) != Some(&Value::Bool(false));
    let used = used(action, accepting);
    let Some(field) = FIELD_NAMES
        .into_iter()
        .find(|f| !used.contains(f) && map.get(*f).is_some_and(|v| !v.is_null()))
    else {
        return Ok(());
    };
    let rejecting = if accepting { "" } else { " that rejects" };
    Err(Error::argument(
        ErrorCode::InvalidArgument,
        format!(
            "field `{field}` is not used by `{action}`{rejecting}: {}; nothing was changed",
            goes_with(field)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refusal(v: Value) -> Option<String> {
        let Value::Object(m) = v else { panic!() };
        check(&m).err().map(|e| e.to_string())
    }

    #[test]
    fn every_field_is_one_its_action_uses() {
        for (call, field) in [
            (json!({"action": "submit", "feedback": "x"}), "feedback"),
            (json!({"action": "answer", "feedback": "x"}), "feedback"),
            (json!({"action": "confirm", "scope": "all"}), "scope"),
            (
                json!({"action": "approve", "approved": false, "scope": "1"}),
                "scope",
            ),
            (
                json!({"action": "reject", "answers": {"q1": "a"}}),
                "answers",
            ),
            (
                json!({"action": "approve", "answers": {"q1": "a"}}),
                "answers",
            ),
            (
                json!({"action": "status", "digest": "abcdefabcdef"}),
                "digest",
            ),
            (
                json!({"action": "start", "objective": "o", "session_id": "x"}),
                "session_id",
            ),
            (
                json!({"action": "confirm", "claude_result": "x"}),
                "claude_result",
            ),
        ] {
            let why = refusal(call.clone()).unwrap_or_else(|| panic!("{call} accepted"));
            assert!(
                why.starts_with(&format!("field `{field}` is not used by")),
                "{why}"
            );
        }
        for call in [
            json!({"action": "confirm", "feedback": "note", "answers": {"q1": "a"}, "digest": "ab"}),
            json!({"action": "confirm", "confirmed": false, "feedback": "no"}),
            json!({"action": "approve", "scope": "1", "feedback": "note"}),
            json!({"action": "submit", "stage": "po", "claude_result": "x", "feedback": null}),
            json!({"action": "list", "cursor": "c", "cwd": "/p"}),
            json!({"action": "explode", "feedback": "x"}),
        ] {
            assert_eq!(refusal(call.clone()), None, "{call}");
        }
    }
}
