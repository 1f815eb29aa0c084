//! A text the session keeps in a file, as the session points at it: where it is, its size,
//! when it was written and its first characters; and the one way the session writes a
//! time.

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Characters of a document kept inline as its summary.
pub const SUMMARY_CHARS: usize = 300;

/// A pointer to a text kept in a file, with enough inline to recognise it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContentRef {
    /// The first 300 characters, ending in `…` when cut. (Left out of `status` replies,
    /// which point at the files instead; always stored.)
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Path relative to the project directory.
    pub file_path: String,
    /// Size in bytes.
    pub size: u64,
    pub last_updated: String,
}

impl ContentRef {
    pub fn new(file_path: String, text: &str, now: DateTime<Utc>) -> ContentRef {
        ContentRef {
            summary: summarize(text),
            file_path,
            size: text.len() as u64,
            last_updated: timestamp(now),
        }
    }
}

/// The first [`SUMMARY_CHARS`] characters of `text`, cut on a character boundary.
pub fn summarize(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A time as the session stores it: RFC 3339, in milliseconds, UTC.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_cut_on_a_character_boundary_and_mark_the_cut() {
        let long = "界".repeat(400);
        let s = summarize(&long);
        assert_eq!(s.chars().count(), SUMMARY_CHARS + 1);
        assert!(s.ends_with('…'));
        assert_eq!(summarize("  short  "), "short");
    }
}
