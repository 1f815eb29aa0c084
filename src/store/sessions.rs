//! The session files (`.bmad-task/session-<id>.json`): finding them, reading and
//! checking them (a file that cannot be trusted is `session_corrupt`, naming the file and
//! the field), and the text they are written as.

use serde::{Deserialize, Serialize};

use super::{names, Project, ReadProblem};
use crate::error::{Error, Result};
use crate::workflow::person::Person;
use crate::workflow::session::Session;
use crate::workflow::{Stage, State};

pub fn session_rel(id: &str) -> String {
    Session::file_of(id)
}

pub(crate) fn session_ids(project: &Project) -> Result<Vec<String>> {
    let dir = project.path(".bmad-task");
    let entries = std::fs::read_dir(&dir).map_err(|e| project.storage_error("read", &dir, &e))?;
    Ok(entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_prefix("session-")?.strip_suffix(".json")?;
            uuid::Uuid::parse_str(id).ok()?;
            Some(id.to_string())
        })
        .collect())
}

/// The fields of a stored session that `list` shows, and those that validate it.
#[derive(Deserialize)]
pub(super) struct Listed {
    pub(super) schema_version: u32,
    pub(super) session_id: String,
    pub(super) task_name: String,
    #[serde(default)]
    pub(super) track: crate::workflow::Track,
    pub(super) current_stage: Stage,
    pub(super) current_state: State,
    pub(super) updated_at: String,
    #[serde(default)]
    pub(super) owner: Option<Person>,
    #[serde(default)]
    pub(super) branch: Option<String>,
}

/// What every stored session is checked for, however much of it is decoded.
pub(super) trait Stored: serde::de::DeserializeOwned {
    fn identity(&self) -> (&str, &str, u32);

    /// Where its history forks (two merged histories), when it holds one.
    fn fork(&self) -> Option<String> {
        None
    }
}

impl Stored for Session {
    fn identity(&self) -> (&str, &str, u32) {
        (&self.session_id, &self.task_name, self.schema_version)
    }

    fn fork(&self) -> Option<String> {
        super::conflict::fork(self)
    }
}

impl Stored for Listed {
    fn identity(&self) -> (&str, &str, u32) {
        (&self.session_id, &self.task_name, self.schema_version)
    }
}

#[cfg(test)]
thread_local! {
    /// The session files read on this thread (tests only: a call reads its session once).
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Loads and validates a stored session; `None` when there is no such file.
pub(crate) fn load_session(project: &Project, id: &str) -> Result<Option<Session>> {
    load_stored(project, id)
}

pub(super) fn load_stored<T: Stored>(project: &Project, id: &str) -> Result<Option<T>> {
    #[cfg(test)]
    READS.with(|n| n.set(n.get() + 1));
    let rel = session_rel(id);
    // The detail quotes the file's values (serde's "unknown variant `…`"): cut it short.
    let corrupt = |detail: String| Error::Corrupt {
        path: rel.clone(),
        detail: crate::error::clip(&detail, 300),
    };
    let text = match project.read(&rel) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(ReadProblem::Unsafe(e)) => return Err(e),
        Err(e @ ReadProblem::Io(_)) => return Err(e.into_error(&rel)),
        Err(problem) => return Err(corrupt(format!("it {problem}"))),
    };
    // Read plainly first: a file that parses holds no merge markers (JSON never has a
    // line that starts with `<<<<<<<`), and the field's path is needed only for an error.
    let s: T = match serde_json::from_str(&text) {
        Ok(s) => s,
        Err(_) => {
            // Two versions from a merge: named, never read as one.
            if let Some(e) = super::conflict::markers_error(&project.root, &rel, &text) {
                return Err(e);
            }
            // The error names the field (`stages.po.iteration`), not only a line and column.
            let mut de = serde_json::Deserializer::from_str(&text);
            let s: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
                match e.path().to_string() {
                    p if p == "." || p.is_empty() => corrupt(e.into_inner().to_string()),
                    p => corrupt(format!("field `{p}`: {}", e.into_inner())),
                }
            })?;
            de.end().map_err(|e| corrupt(e.to_string()))?;
            s
        }
    };
    let (session_id, task_name, schema_version) = s.identity();
    if session_id != id {
        return Err(corrupt(format!("it names session `{session_id}`")));
    }
    if !names::is_valid(task_name) {
        return Err(corrupt(format!(
            "task_name `{task_name}` is not a valid name"
        )));
    }
    if schema_version > crate::workflow::session::SCHEMA_VERSION {
        return Err(corrupt(format!(
            "schema_version {schema_version} is newer than this server understands"
        )));
    }
    if let Some(why) = s.fork() {
        return Err(super::conflict::fork_error(&rel, why));
    }
    Ok(Some(s))
}

/// A stored JSON file's text: pretty, with a final newline.
pub(super) fn json_text<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("stored types serialize");
    text.push('\n');
    text
}
