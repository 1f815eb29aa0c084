//! The task mapping (`.bmad-task/task-mapping.json`, SPEC §7): an index from session id
//! to task name that jq users read. The session files are the truth it indexes; an
//! unreadable mapping is rebuilt from them. Parsing it is the part of `start` (and of
//! finding a session by task name) that grows with the project, so the parsed mapping is
//! kept while the file holds exactly the text it was parsed from, compared byte for byte
//! on every use: a change by another process or by hand is always seen.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sessions::{load_session, session_ids};
use super::Project;
use crate::error::Result;

pub const MAPPING: &str = ".bmad-task/task-mapping.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MappingEntry {
    pub task_name: String,
    pub objective: String,
    pub created_at: String,
}

pub type Mapping = BTreeMap<String, MappingEntry>;

/// The last task mapping this process read or wrote.
#[derive(Default)]
pub(super) struct MappingCache {
    cached: Mutex<Option<CachedMapping>>,
}

/// The last task mapping read or written, and the text it came from.
struct CachedMapping {
    root: PathBuf,
    text: String,
    mapping: Mapping,
    /// Whether `text` is this server's own rendering of `mapping` (it wrote it), so an
    /// entry can be spliced into it (see [`with_entry`]).
    own: bool,
}

impl MappingCache {
    /// Runs `f` on the project's task mapping: the cached one when the file still holds
    /// the same text, else the file parsed (and cached), or rebuilt from the session
    /// files when it is unreadable.
    pub(super) fn with<R>(&self, project: &Project, f: impl FnOnce(&Mapping) -> R) -> Result<R> {
        let Some(text) = project.read(MAPPING)? else {
            return Ok(f(&Mapping::new()));
        };
        let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache
            .as_ref()
            .filter(|c| c.root == project.root && c.text == text)
        {
            return Ok(f(&c.mapping));
        }
        match serde_json::from_str::<Mapping>(&text) {
            Ok(mapping) => {
                let out = f(&mapping);
                *cache = Some(CachedMapping {
                    root: project.root.clone(),
                    text,
                    mapping,
                    own: false,
                });
                Ok(out)
            }
            Err(e) => {
                drop(cache);
                tracing::warn!(error = %e, "task-mapping.json is unreadable; rebuilding it from the sessions");
                Ok(f(&rebuild(project)?))
            }
        }
    }

    /// The project's task mapping to change (under the project lock): moved out of the
    /// cache when the file still holds its text, with that text when this server wrote
    /// it; else read from the file.
    pub(super) fn take(&self, project: &Project) -> Result<(Mapping, Option<String>)> {
        let Some(text) = project.read(MAPPING)? else {
            return Ok((Mapping::new(), None));
        };
        {
            let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if cache
                .as_ref()
                .is_some_and(|c| c.root == project.root && c.text == text)
            {
                if let Some(c) = cache.take() {
                    return Ok((c.mapping, c.own.then_some(c.text)));
                }
            }
        }
        match serde_json::from_str::<Mapping>(&text) {
            Ok(mapping) => Ok((mapping, None)),
            Err(e) => {
                tracing::warn!(error = %e, "task-mapping.json is unreadable; rebuilding it from the sessions");
                Ok((rebuild(project)?, None))
            }
        }
    }

    /// Keeps the mapping just written (as `text`) for the next use.
    pub(super) fn remember(&self, project: &Project, text: String, mapping: Mapping) {
        *self.cached.lock().unwrap_or_else(|e| e.into_inner()) = Some(CachedMapping {
            root: project.root.clone(),
            text,
            mapping,
            own: true,
        });
    }
}

/// `text` (the [`json_text`] of the mapping before `id` was added) with the entry of
/// `id` added, exactly as [`json_text`] of the whole `mapping` would write it: the
/// entry's lines go before the next key's (or before the closing brace). Rendering a
/// mapping of thousands of entries again for each `start` is what made `start` grow
/// with the project (see BENCHMARKS.md). `None` when the text is not in that shape.
pub(super) fn with_entry(
    text: &str,
    mapping: &Mapping,
    id: &str,
    entry: &MappingEntry,
) -> Option<String> {
    use std::ops::Bound::{Excluded, Unbounded};
    if mapping.len() < 2 {
        return None;
    }
    // `{\n  "<id>": {\n    …\n  }\n}` without its first and last line.
    let single = serde_json::to_string_pretty(&BTreeMap::from([(id, entry)])).ok()?;
    let lines = single.strip_prefix("{\n")?.strip_suffix("\n}")?;
    let mut out = String::with_capacity(text.len() + lines.len() + 2);
    match mapping.range::<str, _>((Excluded(id), Unbounded)).next() {
        Some((next, _)) => {
            // Top-level keys are the only lines indented by exactly two spaces and
            // opening with a quote (strings never hold a raw newline).
            let at = text.find(&format!("\n  {}: ", serde_json::to_string(next).ok()?))?;
            out.push_str(&text[..at]);
            out.push('\n');
            out.push_str(lines);
            out.push(',');
            out.push_str(&text[at..]);
        }
        None => {
            let head = text.strip_suffix("\n}\n")?;
            out.push_str(head);
            out.push_str(",\n");
            out.push_str(lines);
            out.push_str("\n}\n");
        }
    }
    Some(out)
}

/// The task mapping built from the session files (the truth it indexes).
fn rebuild(project: &Project) -> Result<Mapping> {
    let mut m = Mapping::new();
    for id in session_ids(project)? {
        if let Ok(Some(s)) = load_session(project, &id) {
            m.insert(
                id,
                MappingEntry {
                    task_name: s.task_name,
                    objective: s.objective,
                    created_at: s.created_at,
                },
            );
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sessions::json_text;

    /// Splicing an entry into the mapping's text gives what rendering it whole gives,
    /// wherever the new key sorts, and with text that needs escaping.
    #[test]
    fn an_entry_spliced_into_the_mapping_text_equals_the_whole_rendering() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut mapping = Mapping::new();
        let mut text = json_text(&mapping);
        let mut spliced = 0;
        for i in 0..300 {
            let id = if i % 7 == 0 {
                format!("k\"{}\\é", next() % 1000)
            } else {
                uuid::Uuid::from_u64_pair(next(), next()).to_string()
            };
            if mapping.contains_key(&id) {
                continue;
            }
            let entry = MappingEntry {
                task_name: format!("task-{i}"),
                objective: format!("Objective {i}: \"quoted\"\nnew line, 中文"),
                created_at: "2026-11-21T10:00:00.000Z".into(),
            };
            mapping.insert(id.clone(), entry.clone());
            let whole = json_text(&mapping);
            if let Some(t) = with_entry(&text, &mapping, &id, &entry) {
                assert_eq!(t, whole, "after adding {id:?}");
                spliced += 1;
            }
            text = whole;
        }
        assert!(spliced > 250, "{spliced} of the insertions were spliced");
        // Text in another layout (edited by hand) is not spliced into.
        let compact = serde_json::to_string(&mapping).unwrap();
        let (first, last) = (text_key(&mapping, true), text_key(&mapping, false));
        assert_eq!(
            with_entry(&compact, &mapping, &first, &mapping[&first]),
            None
        );
        assert_eq!(with_entry(&compact, &mapping, &last, &mapping[&last]), None);
    }

    fn text_key(m: &Mapping, first: bool) -> String {
        let mut keys = m.keys();
        let k = if first { keys.next() } else { keys.next_back() };
        k.unwrap().clone()
    }
}
