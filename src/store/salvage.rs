//! What a damaged session file still says, for `list`: a session file with one bad byte
//! stays visible, as damaged, with the task name, stage, state and time that can still be
//! read from it. Nothing here is trusted for anything but display: the session is still
//! refused (`session_corrupt`) by every call that needs it whole.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::sessions::session_rel;
use super::Project;
use crate::error::clip;
use crate::workflow::stage::Stage;
use crate::workflow::State;

/// A damaged file larger than this is not salvaged (its reason is still listed).
const MAX_SALVAGE_BYTES: u64 = 4 * 1024 * 1024;

/// The listed fields a damaged session file still holds, each where it can be read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Readable {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_stage: Option<Stage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_state: Option<State>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// What the session file of `id` still says (bytes that are not UTF-8 read as U+FFFD).
pub fn salvage(project: &Project, id: &str) -> Readable {
    project
        .read_lossy(&session_rel(id), MAX_SALVAGE_BYTES)
        .map(|text| from_text(&text))
        .unwrap_or_default()
}

fn from_text(text: &str) -> Readable {
    Readable {
        task_name: field::<String>(text, "task_name").map(|t| clip(&t, 100)),
        current_stage: field(text, "current_stage"),
        current_state: field(text, "current_state"),
        updated_at: field::<String>(text, "updated_at")
            .filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()),
    }
}

/// The value of the first `"key": value` in `text`, when it reads as a `T`.
fn field<T: DeserializeOwned>(text: &str, key: &str) -> Option<T> {
    let quoted = format!("\"{key}\"");
    let at = text.find(&quoted)? + quoted.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    serde_json::Deserializer::from_str(rest)
        .into_iter::<T>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_field_is_read_where_it_can_be() {
        let text = "{\n  \"session_id\": \"x\",\n  \"task_name\": \"notes-\u{FFFD}pp\",\n  \
                    \"current_stage\": \"architect\",\n  \"current_state\": \"generating\",\n  \
                    \"updated_at\": \"2026-01-02T03:04:05.000Z\" \"torn";
        let r = from_text(text);
        assert_eq!(r.task_name.as_deref(), Some("notes-\u{FFFD}pp"));
        assert_eq!(r.current_stage, Some(Stage::Architect));
        assert_eq!(r.current_state, Some(State::Generating));
        assert_eq!(r.updated_at.as_deref(), Some("2026-01-02T03:04:05.000Z"));
        let r = from_text("{\"task_name\" 1, \"current_stage\": \"nowhere\"");
        assert_eq!(r, Readable::default());
    }
}
