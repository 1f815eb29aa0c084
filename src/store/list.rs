//! `list`: the project's sessions, newest first, a page at a time, with the session files
//! that cannot be read reported beside them rather than dropped. The listed fields of each
//! file are kept in memory while the file is the same (inode, size, modification time),
//! so a project of thousands of sessions costs a directory read and a `stat` per file,
//! not a parse of each.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Serialize;

use super::salvage::{salvage, Readable};
use super::sessions::{load_stored, session_rel, Listed};
use super::{ListEntry, Project, Store};
use crate::error::{clip, Error, ErrorCode, Result};

/// Sessions per page.
pub const PAGE: usize = 50;
/// Damaged files named per page (the count says how many there are).
const MAX_DAMAGED: usize = 20;

/// A session file that `list` cannot show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Damaged {
    /// From the file's name.
    pub session_id: String,
    pub file: String,
    pub reason: String,
    /// A merge left two versions in it (`session_conflicted`): `reason` names both and
    /// how to keep one.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub conflicted: bool,
    /// What the file still says (any of `task_name`, `current_stage`, `current_state`,
    /// `updated_at` that can be read), for display only.
    #[serde(flatten)]
    pub readable: Readable,
}

/// One page of `list`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Page {
    pub sessions: Vec<ListEntry>,
    /// Pass as `cursor` for the next page; `None` on the last.
    pub next_cursor: Option<String>,
    /// Sessions in the project (readable ones).
    pub total: usize,
    /// Files that cannot be read, on the first page only.
    pub damaged: Vec<Damaged>,
    pub damaged_total: usize,
}

/// What a file held when it was last read, and the file it was read from.
struct Seen {
    stamp: (u64, u64, i128),
    /// The last listing that saw the file (files gone since are dropped).
    generation: u64,
    entry: std::result::Result<ListEntry, Unlisted>,
}

/// Why a file is not listed, and what it still says.
struct Unlisted {
    reason: String,
    conflicted: bool,
    readable: Readable,
}

/// One project's session files as last listed.
#[derive(Default)]
struct ListedFiles {
    files: HashMap<String, Seen>,
    generation: u64,
}

#[derive(Default)]
pub(super) struct ListCache {
    projects: Mutex<HashMap<PathBuf, ListedFiles>>,
}

/// (inode, size, modification time in ns): a file rewritten by the server is a new inode;
/// one edited in place has a new time.
pub(super) fn stamp(meta: &std::fs::Metadata) -> (u64, u64, i128) {
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let ino = 0;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(-1, |d| d.as_nanos() as i128);
    (ino, meta.len(), mtime)
}

fn cursor_of(e: &ListEntry) -> String {
    format!("{}|{}", e.updated_at, e.session_id)
}

/// Where a page starts: the time and the id of the last entry of the page before, as its
/// `next_cursor` gave them.
fn place_of(cursor: &str) -> Result<(&str, &str)> {
    cursor
        .split_once('|')
        .filter(|(t, id)| !t.is_empty() && !id.is_empty())
        .ok_or_else(|| {
            Error::argument(
                ErrorCode::InvalidArgument,
                format!(
                    "field `cursor`: `{}` is not a cursor that `list` returned; leave it out for the first page",
                    clip(cursor, 80)
                ),
            )
        })
}

impl Store {
    /// A page of the project's sessions, newest first; `cursor` is the `next_cursor` of
    /// the page before.
    pub fn list(&self, cwd: Option<&str>, cursor: Option<&str>) -> Result<Page> {
        self.list_of(cwd, cursor, false)
    }

    /// A page of the sessions, or with `mine` of those whose owner is the human here
    /// (`BMAD_OWNER`, else git's identity): refused when neither names anyone.
    pub fn list_of(&self, cwd: Option<&str>, cursor: Option<&str>, mine: bool) -> Result<Page> {
        let project = self.project(cwd)?;
        let me = match mine {
            false => None,
            true => Some(crate::git::owner(self.owner.as_ref(), &project.root).ok_or_else(|| {
                Error::argument(
                    ErrorCode::InvalidArgument,
                    "field `mine`: nobody is named here: set git's `user.name` and `user.email` in the project, or BMAD_OWNER for the server".to_string(),
                )
            })?),
        };
        let after = cursor.map(place_of).transpose()?;
        if !project.has_state() {
            return Ok(Page::default());
        }
        let mut projects = self
            .list_cache
            .projects
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let known = projects.entry(project.root.clone()).or_default();
        let damaged = known.refresh(&project)?;
        // Sorted by reference: only the page's entries are copied.
        let mut entries: Vec<&ListEntry> = known
            .files
            .values()
            .filter_map(|s| s.entry.as_ref().ok())
            .filter(|e| match &me {
                Some(me) => e.owner.as_ref().is_some_and(|o| o.is(me)),
                None => true,
            })
            .collect();
        entries.sort_unstable_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.session_id.cmp(&b.session_id))
        });
        let total = entries.len();
        // Entries up to and including the cursor's place in this order (whether or not
        // that session is still there) were on earlier pages.
        let start = after.map_or(0, |(t, id)| {
            entries.partition_point(|e| {
                let at = e.updated_at.as_str();
                at > t || (at == t && e.session_id.as_str() <= id)
            })
        });
        let sessions: Vec<ListEntry> = entries
            .into_iter()
            .skip(start)
            .take(PAGE)
            .cloned()
            .collect();
        let next_cursor = (start + sessions.len() < total)
            .then(|| sessions.last().map(cursor_of))
            .flatten();
        let damaged_total = damaged.len();
        Ok(Page {
            sessions,
            next_cursor,
            total,
            damaged: if cursor.is_none() {
                damaged.into_iter().take(MAX_DAMAGED).collect()
            } else {
                Vec::new()
            },
            damaged_total,
        })
    }
}

impl ListedFiles {
    /// Brings the project's entries up to date with its session files (reading only the
    /// files that changed) and returns the files that cannot be read.
    fn refresh(&mut self, project: &Project) -> Result<Vec<Damaged>> {
        let dir = project.path(".bmad-task");
        let read = std::fs::read_dir(&dir).map_err(|e| project.storage_error("read", &dir, &e))?;
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        for e in read.flatten() {
            let name = e.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("session-"))
                .and_then(|n| n.strip_suffix(".json"))
                .filter(|id| uuid::Uuid::parse_str(id).is_ok())
            else {
                continue;
            };
            let Ok(meta) = e.metadata() else { continue };
            let stamp = stamp(&meta);
            if let Some(seen) = self.files.get_mut(id) {
                if seen.stamp == stamp {
                    seen.generation = generation;
                    continue;
                }
            }
            let Some((entry, retry)) = entry_of(project, id) else {
                continue;
            };
            self.files.insert(
                id.to_string(),
                Seen {
                    // A stamp no file has, so the next listing reads it again.
                    stamp: if retry { (0, 0, i128::MIN) } else { stamp },
                    generation,
                    entry,
                },
            );
        }
        self.files.retain(|_, s| s.generation == generation);
        let mut damaged: Vec<Damaged> = self
            .files
            .iter()
            .filter_map(|(id, s)| {
                s.entry.as_ref().err().map(|u| Damaged {
                    session_id: id.clone(),
                    file: session_rel(id),
                    reason: u.reason.clone(),
                    conflicted: u.conflicted,
                    readable: u.readable.clone(),
                })
            })
            .collect();
        damaged.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        Ok(damaged)
    }
}

/// A session file's entry, or why it cannot be listed, and whether to read it again at
/// the next listing; `None` when the file is gone.
fn entry_of(
    project: &Project,
    id: &str,
) -> Option<(std::result::Result<ListEntry, Unlisted>, bool)> {
    // A read that failed for the OS's reasons (permissions, too many open files)
    // is tried again next time: only what the file holds is remembered.
    let mut retry = false;
    let entry = match load_stored::<Listed>(project, id) {
        Ok(Some(s)) if chrono::DateTime::parse_from_rfc3339(&s.updated_at).is_err() => {
            Err(Unlisted {
                reason: format!(
                    "{} is not a valid session file: field `updated_at` is not an RFC 3339 time",
                    session_rel(id)
                ),
                conflicted: false,
                readable: salvage(project, id),
            })
        }
        Ok(Some(s)) => Ok(ListEntry {
            session_id: s.session_id,
            task_name: s.task_name,
            track: s.track,
            current_stage: s.current_stage,
            current_state: s.current_state,
            updated_at: s.updated_at,
            owner: s.owner,
            branch: s.branch,
        }),
        Ok(None) => return None,
        Err(e) => {
            retry = e.code() == ErrorCode::StorageError;
            let readable = if retry {
                Readable::default()
            } else {
                salvage(project, id)
            };
            let conflicted = e.code() == ErrorCode::SessionConflicted;
            Err(Unlisted {
                // A conflict's reason names both versions and how to keep one.
                reason: clip(&e.to_string(), if conflicted { 1200 } else { 300 }),
                conflicted,
                readable,
            })
        }
    };
    Some((entry, retry))
}
