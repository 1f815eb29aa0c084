//! The task mapping (`.bmad-task/task-mapping.json`, docs/spec.md §7.6): an index from session id
//! to task name that jq users read. The session files are the truth it indexes; a missing,
//! unreadable (a merge's conflict markers) or stale mapping (sessions pulled from another
//! clone) is rebuilt from them, so it is local to each clone and never committed. Reading and parsing it is the part of `start`
//! (and of finding a session by task name) that grows with the project, so the parsed
//! mapping is kept while the file is the one it was parsed from: same inode, size and
//! modification time (ns). Another process replaces the file (a new inode); a hand edit
//! changes its time: either is seen at the next use.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::sessions::{load_session, session_ids};
use super::{names, Project, ReadProblem};
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

/// A parsed mapping with its indexes: task name → session id, and the highest number
/// suffixed to each name head (so a new name is found without trying the taken ones).
#[derive(Debug, Default)]
pub(super) struct Indexed {
    pub mapping: Mapping,
    pub by_name: HashMap<String, String>,
    max_suffix: HashMap<String, u32>,
}

impl Indexed {
    fn new(mapping: Mapping) -> Indexed {
        let mut index = Indexed::default();
        for (id, entry) in mapping {
            index.insert(id, entry);
        }
        index
    }

    /// Adds (or replaces) an entry; true when the id was there already.
    pub fn insert(&mut self, id: String, entry: MappingEntry) -> bool {
        if let Some((head, n)) = names::split_suffix(&entry.task_name) {
            let max = self.max_suffix.entry(head.to_string()).or_default();
            *max = (*max).max(n);
        }
        self.by_name.insert(entry.task_name.clone(), id.clone());
        self.mapping.insert(id, entry).is_some()
    }

    /// The names to try for a new task of `base`, best first: the base itself when it is
    /// free, then numbers above every number already used with it. Names not in the
    /// mapping may still have a folder (made by hand), so the caller tries them in turn.
    pub fn candidates<'a>(&'a self, base: &'a str) -> impl Iterator<Item = String> + 'a {
        let above = (1..=10)
            .filter_map(|digits| self.max_suffix.get(&names::head_for(base, digits)))
            .max()
            .copied()
            // Numbers used up at the top (a name ending in -4294967295): try from 1.
            .filter(|n| *n < u32::MAX - 1)
            .unwrap_or(0);
        let first = (!self.by_name.contains_key(base)).then(|| base.to_string());
        first.into_iter().chain(
            (above.saturating_add(1)..=u32::MAX)
                .map(move |n| names::candidate(base, n))
                .filter(|name| !self.by_name.contains_key(name)),
        )
    }
}

/// The last task mapping read or written, and the text it came from.
struct CachedMapping {
    root: PathBuf,
    /// The file's (inode, size, mtime) when `text` was read or written.
    stamp: (u64, u64, i128),
    text: String,
    index: Indexed,
    /// Whether `text` is this server's own rendering of the mapping (it wrote it), so an
    /// entry can be spliced into it (see [`with_entry`]).
    own: bool,
    /// `.bmad-task/`'s stamp when the entries were last counted against the session files:
    /// while it holds, no session file came or went (a pull, a merge) since.
    dir_stamp: Option<(u64, u64, i128)>,
}

/// The mapping to change (see [`MappingCache::take`]).
pub(super) struct Taken {
    pub index: Indexed,
    /// The file's text when this server wrote it and it is unchanged.
    pub own_text: Option<String>,
    /// Why the file could not be used, when it was rebuilt from the session files.
    pub rebuilt_because: Option<String>,
}

/// The mapping file's text, or why it cannot be used.
enum MappingFile {
    Absent,
    Text(String),
    Unusable(String),
}

fn read(project: &Project) -> Result<MappingFile> {
    match project.read(MAPPING) {
        Ok(None) => Ok(MappingFile::Absent),
        Ok(Some(text)) => Ok(MappingFile::Text(text)),
        // The mapping itself a link out of `.bmad-task/` (not the folder: then the
        // sessions are out of reach too): derived, so rebuilt like a damaged one.
        Err(ReadProblem::Unsafe(_)) if is_link(project) => Ok(MappingFile::Unusable(
            "is a symbolic link that leads outside .bmad-task".into(),
        )),
        Err(ReadProblem::Unsafe(e)) => Err(e),
        Err(problem) => Ok(MappingFile::Unusable(problem.to_string())),
    }
}

/// Whether the mapping is a symbolic link in a `.bmad-task/` that is itself in place.
pub(super) fn is_link(project: &Project) -> bool {
    let in_place = project.check(&format!("{MAPPING}.probe")).is_ok();
    in_place
        && std::fs::symlink_metadata(project.path(MAPPING))
            .is_ok_and(|m| m.file_type().is_symlink())
}

/// `.bmad-task/`'s stamp (its modification time changes when an entry comes or goes).
fn dir_stamp(project: &Project) -> Option<(u64, u64, i128)> {
    let meta = std::fs::metadata(project.path(".bmad-task")).ok()?;
    meta.is_dir().then(|| super::list::stamp(&meta))
}

/// The mapping file's stamp, `None` when it is absent or not a regular file.
fn file_stamp(project: &Project) -> Option<(u64, u64, i128)> {
    let meta = std::fs::metadata(project.check(MAPPING).ok()?).ok()?;
    meta.is_file().then(|| super::list::stamp(&meta))
}

fn parse(text: &str) -> std::result::Result<Mapping, String> {
    serde_json::from_str::<Mapping>(text)
        .map_err(|e| format!("is not a mapping of session ids to tasks ({e})"))
}

impl MappingCache {
    /// Runs `f` on the project's task mapping: the cached one when the file still holds
    /// the same text, else the file parsed (and cached), or rebuilt from the session
    /// files when it cannot be used (the next `start` rewrites it).
    pub(super) fn with<R>(&self, project: &Project, f: impl FnOnce(&Indexed) -> R) -> Result<R> {
        let stamp = file_stamp(project);
        let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache
            .as_ref()
            .filter(|c| c.root == project.root && Some(c.stamp) == stamp)
        {
            return Ok(f(&c.index));
        }
        let text = match read(project)? {
            MappingFile::Absent => return Ok(f(&Indexed::default())),
            MappingFile::Text(text) => text,
            MappingFile::Unusable(why) => {
                drop(cache);
                tracing::warn!("{MAPPING} {why}; using the session files instead");
                return Ok(f(&Indexed::new(rebuild(project)?)));
            }
        };
        match (parse(&text), stamp) {
            (Ok(mapping), Some(stamp)) => {
                let index = Indexed::new(mapping);
                let out = f(&index);
                *cache = Some(CachedMapping {
                    root: project.root.clone(),
                    stamp,
                    text,
                    index,
                    own: false,
                    dir_stamp: None,
                });
                Ok(out)
            }
            (Ok(mapping), None) => Ok(f(&Indexed::new(mapping))),
            (Err(why), _) => {
                drop(cache);
                tracing::warn!("{MAPPING} {why}; using the session files instead");
                Ok(f(&Indexed::new(rebuild(project)?)))
            }
        }
    }

    /// The project's task mapping to change (under the project lock): moved out of the
    /// cache when the file still holds its text, with that text when this server wrote
    /// it; else read from the file, or rebuilt from the session files.
    pub(super) fn take(&self, project: &Project) -> Result<Taken> {
        let rebuilt = |why: String| -> Result<Taken> {
            tracing::warn!("{MAPPING} {why}; rebuilding it from the session files");
            Ok(Taken {
                index: Indexed::new(rebuild(project)?),
                own_text: None,
                rebuilt_because: Some(why),
            })
        };
        let stamp = file_stamp(project);
        {
            let mut cache = self.cached.lock().unwrap_or_else(|e| e.into_inner());
            if cache
                .as_ref()
                .is_some_and(|c| c.root == project.root && Some(c.stamp) == stamp)
            {
                if let Some(c) = cache.take() {
                    // The folder changed since the entries were counted: count again (a
                    // session pulled in while this server ran makes the mapping stale).
                    let fresh = c.dir_stamp.is_some() && c.dir_stamp == dir_stamp(project)
                        || session_ids(project)?.len() == c.index.mapping.len();
                    if fresh {
                        return Ok(Taken {
                            own_text: c.own.then_some(c.text),
                            index: c.index,
                            rebuilt_because: None,
                        });
                    }
                    tracing::info!("{MAPPING} is stale; rebuilding it from the session files");
                    return Ok(Taken {
                        index: Indexed::new(rebuild(project)?),
                        own_text: None,
                        rebuilt_because: None,
                    });
                }
            }
        }
        let text = match read(project)? {
            // No mapping: a new project, or one whose mapping was deleted (or moved aside
            // by a `start` that then failed): the session files say what it held.
            MappingFile::Absent => {
                return Ok(Taken {
                    index: Indexed::new(rebuild(project)?),
                    own_text: None,
                    rebuilt_because: None,
                })
            }
            MappingFile::Text(text) => text,
            MappingFile::Unusable(why) => return rebuilt(why),
        };
        match parse(&text) {
            // Stale: sessions came (a pull, a merge) or went since it was written. It is
            // derived, so it is rebuilt, without a word: that is normal in a team.
            Ok(mapping) if session_ids(project)?.len() != mapping.len() => {
                tracing::info!("{MAPPING} is stale; rebuilding it from the session files");
                Ok(Taken {
                    index: Indexed::new(rebuild(project)?),
                    own_text: None,
                    rebuilt_because: None,
                })
            }
            Ok(mapping) => Ok(Taken {
                index: Indexed::new(mapping),
                own_text: None,
                rebuilt_because: None,
            }),
            Err(why) => rebuilt(why),
        }
    }

    /// Keeps the mapping just written (as `text`) for the next use.
    pub(super) fn remember(&self, project: &Project, text: String, index: Indexed) {
        let Some(stamp) = file_stamp(project) else {
            return;
        };
        *self.cached.lock().unwrap_or_else(|e| e.into_inner()) = Some(CachedMapping {
            root: project.root.clone(),
            stamp,
            text,
            index,
            own: true,
            // Written under the lock with every session file indexed.
            dir_stamp: dir_stamp(project),
        });
    }
}

/// `text` (the [`super::sessions::json_text`] of the mapping before `id` was added) with the entry of `id`
/// added, exactly as [`super::sessions::json_text`] of the whole `mapping` would write it: the entry's lines
/// go before the next key's (or before the closing brace). Rendering a mapping of thousands
/// of entries again for each `start` would make `start` grow with the project
/// (BENCHMARKS.md, "Documents and sessions", has `start` at 10,000 sessions). `None` when
/// the text is not in that shape.
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
