//! Durable sessions: finding the project and the session, taking the project lock,
//! loading fresh state, writing an outcome's files and then the session (SPEC §7).
//! Disk is the only truth, so several server processes can share one project.

mod names;
mod project;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::workflow::machine::{self, ProjectFiles};
use crate::workflow::session::{timestamp, Session};
use crate::workflow::stage::{objective_wants_codex, Stage};
use crate::workflow::{Command, Facts, State};

pub use names::{is_valid as is_valid_task_name, slug_for};
pub use project::{DefaultRoot, Project};

const MAPPING: &str = ".bmad-task/task-mapping.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MappingEntry {
    pub task_name: String,
    pub objective: String,
    pub created_at: String,
}

pub type Mapping = BTreeMap<String, MappingEntry>;

/// One line of `list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListEntry {
    pub session_id: String,
    pub task_name: String,
    pub current_stage: Stage,
    pub current_state: State,
    pub updated_at: String,
}

/// How a call names its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKey {
    Id(String),
    TaskName(String),
}

impl SessionKey {
    fn describe(&self) -> String {
        match self {
            SessionKey::Id(id) => format!("with session_id `{id}`"),
            SessionKey::TaskName(t) => format!("with task_name `{t}`"),
        }
    }
}

pub fn session_rel(id: &str) -> String {
    format!(".bmad-task/session-{id}.json")
}

pub struct Store {
    default_root: DefaultRoot,
}

impl Store {
    pub fn new(default_root: DefaultRoot) -> Store {
        Store { default_root }
    }

    pub fn project(&self, cwd: Option<&str>) -> Result<Project> {
        Project::open(cwd, &self.default_root)
    }

    /// Creates a session: a unique task name whose directory is reserved, the session
    /// file, and its entry in the task mapping.
    pub fn start(&self, cwd: Option<&str>, objective: &str, now: DateTime<Utc>) -> Result<Session> {
        let project = self.project(cwd)?;
        // Refuse unsafe layouts before anything is created.
        project.check(MAPPING)?;
        project.check(".claude/specs/x")?;
        let _lock = project.lock()?;
        let mut mapping = read_mapping(&project)?;
        let base = slug_for(objective);
        let task_name = (0..)
            .map(|n| names::candidate(&base, n))
            .find_map(|name| {
                if mapping.values().any(|e| e.task_name == name) {
                    return None;
                }
                match project.create_dir_new(&format!(".claude/specs/{name}")) {
                    Ok(true) => Some(Ok(name)),
                    Ok(false) => None,
                    Err(e) => Some(Err(e)),
                }
            })
            .expect("an unbounded search finds a free name")?;
        let session = Session::new(
            uuid::Uuid::new_v4().to_string(),
            task_name,
            project.display(),
            objective.to_string(),
            objective_wants_codex(objective),
            now,
        );
        mapping.insert(
            session.session_id.clone(),
            MappingEntry {
                task_name: session.task_name.clone(),
                objective: objective.to_string(),
                created_at: timestamp(now),
            },
        );
        // The session and the mapping land together; the reserved directory is made
        // durable in the same wait for the disk.
        let session_text = json_text(&session);
        let mapping_text = json_text(&mapping);
        project.write_in_order(
            &[&[
                (&session_rel(&session.session_id), session_text.as_bytes()),
                (MAPPING, mapping_text.as_bytes()),
            ]],
            &[".claude/specs"],
        )?;
        tracing::info!(session_id = %session.session_id, task_name = %session.task_name, "session started");
        Ok(session)
    }

    /// Finds a session in the given `cwd`, else in the default project root.
    pub fn load(&self, cwd: Option<&str>, key: &SessionKey) -> Result<(Project, Session)> {
        let mut searched = Vec::new();
        let mut first_err = None;
        let mut candidates = Vec::new();
        match self.project(cwd) {
            Ok(p) => candidates.push(p),
            Err(e) => return Err(e),
        }
        if cwd.is_some() {
            if let Ok(p) = self.project(None) {
                if p.root != candidates[0].root {
                    candidates.push(p);
                }
            }
        }
        for project in candidates {
            searched.push(project.display());
            match find_session(&project, key) {
                Ok(Some(s)) => return Ok((project, s)),
                Ok(None) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        Err(first_err.unwrap_or(Error::SessionNotFound {
            what: key.describe(),
            project: searched.join(" or "),
        }))
    }

    /// Applies a session action under the project lock, on the freshest stored state.
    /// Files are written first and the session last, so a crash leaves the old session
    /// pointing at files that still exist.
    pub fn act(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        command: Command,
        now: DateTime<Utc>,
    ) -> Result<(Session, Facts)> {
        let (project, found) = self.load(cwd, key)?;
        let _lock = project.lock()?;
        let session =
            load_session(&project, &found.session_id)?.ok_or_else(|| Error::SessionNotFound {
                what: key.describe(),
                project: project.display(),
            })?;
        let outcome = machine::apply(&session, command, &Files(&project), now)?;
        for w in &outcome.writes {
            project.check(&w.path)?;
        }
        let files: Vec<(&str, &[u8])> = outcome
            .writes
            .iter()
            .map(|w| (w.path.as_str(), w.content.as_bytes()))
            .collect();
        let session_text = json_text(&outcome.session);
        let session_path = session_rel(&outcome.session.session_id);
        project.write_in_order(&[&files, &[(&session_path, session_text.as_bytes())]], &[])?;
        tracing::info!(
            session_id = %outcome.session.session_id,
            stage = %outcome.session.current_stage,
            state = %outcome.session.current_state,
            files = outcome.writes.len(),
            "action applied"
        );
        Ok((outcome.session, outcome.facts))
    }

    /// The project's sessions, newest first.
    pub fn list(&self, cwd: Option<&str>) -> Result<Vec<ListEntry>> {
        let project = self.project(cwd)?;
        if !project.has_state() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for id in session_ids(&project)? {
            // Only the listed fields are decoded: a whole session costs several times
            // more, and `list` reads every one (see BENCHMARKS.md).
            match load_stored::<Listed>(&project, &id) {
                Ok(Some(s)) => out.push(ListEntry {
                    session_id: s.session_id,
                    task_name: s.task_name,
                    current_stage: s.current_stage,
                    current_state: s.current_state,
                    updated_at: s.updated_at,
                }),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "skipping unreadable session"),
            }
        }
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        Ok(out)
    }
}

/// The machine's read access to project files, confined like every write.
struct Files<'a>(&'a Project);

impl ProjectFiles for Files<'_> {
    fn read(&self, rel_path: &str) -> Option<String> {
        self.0.read(rel_path).ok().flatten()
    }
}

fn find_session(project: &Project, key: &SessionKey) -> Result<Option<Session>> {
    if !project.has_state() {
        return Ok(None);
    }
    match key {
        SessionKey::Id(id) => load_session(project, id),
        SessionKey::TaskName(name) => {
            let mapping = read_mapping(project)?;
            if let Some((id, _)) = mapping.iter().find(|(_, e)| &e.task_name == name) {
                if let Some(s) = load_session(project, id)? {
                    return Ok(Some(s));
                }
            }
            // The mapping is an index; the session files are the truth.
            for id in session_ids(project)? {
                if let Ok(Some(s)) = load_session(project, &id) {
                    if &s.task_name == name {
                        return Ok(Some(s));
                    }
                }
            }
            Ok(None)
        }
    }
}

fn session_ids(project: &Project) -> Result<Vec<String>> {
    let dir = project.path(".bmad-task");
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::storage("read", &dir, &e))?;
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
struct Listed {
    schema_version: u32,
    session_id: String,
    task_name: String,
    current_stage: Stage,
    current_state: State,
    updated_at: String,
}

/// What every stored session is checked for, however much of it is decoded.
trait Stored: serde::de::DeserializeOwned {
    fn identity(&self) -> (&str, &str, u32);
}

impl Stored for Session {
    fn identity(&self) -> (&str, &str, u32) {
        (&self.session_id, &self.task_name, self.schema_version)
    }
}

impl Stored for Listed {
    fn identity(&self) -> (&str, &str, u32) {
        (&self.session_id, &self.task_name, self.schema_version)
    }
}

/// Loads and validates a stored session; `None` when there is no such file.
fn load_session(project: &Project, id: &str) -> Result<Option<Session>> {
    load_stored(project, id)
}

fn load_stored<T: Stored>(project: &Project, id: &str) -> Result<Option<T>> {
    let rel = session_rel(id);
    let Some(text) = project.read(&rel)? else {
        return Ok(None);
    };
    let corrupt = |detail: String| Error::Corrupt {
        path: rel.clone(),
        detail,
    };
    let s: T = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
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
    Ok(Some(s))
}

/// A stored JSON file's text: pretty, with a final newline.
fn json_text<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("stored types serialize");
    text.push('\n');
    text
}

/// The task mapping; rebuilt from the session files if it is unreadable.
fn read_mapping(project: &Project) -> Result<Mapping> {
    match project.read(MAPPING)? {
        None => Ok(Mapping::new()),
        Some(text) => match serde_json::from_str(&text) {
            Ok(m) => Ok(m),
            Err(e) => {
                tracing::warn!(error = %e, "task-mapping.json is unreadable; rebuilding it from the sessions");
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
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_at(dir: &std::path::Path) -> Store {
        Store::new(DefaultRoot {
            source_name: "test",
            value: dir.display().to_string(),
        })
    }

    #[test]
    fn concurrent_starts_get_distinct_names_and_all_land_in_the_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let root = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    let store = store_at(&root);
                    (0..20)
                        .map(|_| store.start(None, "Same objective", Utc::now()).unwrap())
                        .map(|s| s.task_name)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut names: Vec<String> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 120);
        let project = Project::open(None, &store_at(dir.path()).default_root).unwrap();
        assert_eq!(read_mapping(&project).unwrap().len(), 120);
        assert_eq!(session_ids(&project).unwrap().len(), 120);
    }

    #[test]
    fn a_session_is_found_by_task_name_even_when_the_mapping_lost_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_at(dir.path());
        let s = store.start(None, "Find me", Utc::now()).unwrap();
        std::fs::write(dir.path().join(MAPPING), "{ torn").unwrap();
        let (_, found) = store
            .load(None, &SessionKey::TaskName("find-me".into()))
            .unwrap();
        assert_eq!(found.session_id, s.session_id);
        // The next start rebuilds the mapping from the session files.
        store.start(None, "Find me", Utc::now()).unwrap();
        let project = store.project(None).unwrap();
        assert_eq!(read_mapping(&project).unwrap().len(), 2);
    }

    #[test]
    fn list_shows_what_the_sessions_hold_and_skips_invalid_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_at(dir.path());
        let kept: Vec<Session> = ["One", "Two", "Three"]
            .iter()
            .map(|o| store.start(None, o, Utc::now()).unwrap())
            .collect();
        let (after, _) = store
            .act(
                None,
                &SessionKey::Id(kept[1].session_id.clone()),
                Command::Submit {
                    stage: None,
                    claude_result: Some("# PRD\nQuality Score: 95/100".into()),
                    codex_result: None,
                },
                Utc::now(),
            )
            .unwrap();
        let broken: Vec<Session> = ["Torn", "Renamed", "Wrong id", "Future"]
            .iter()
            .map(|o| store.start(None, o, Utc::now()).unwrap())
            .collect();
        let path = |s: &Session| dir.path().join(session_rel(&s.session_id));
        let text = |s: &Session| std::fs::read_to_string(path(s)).unwrap();
        std::fs::write(path(&broken[0]), &text(&broken[0])[..40]).unwrap();
        std::fs::write(
            path(&broken[1]),
            text(&broken[1]).replace("\"task_name\": \"renamed\"", "\"task_name\": \"../x\""),
        )
        .unwrap();
        std::fs::write(
            path(&broken[2]),
            text(&broken[2]).replace(&broken[2].session_id, &kept[0].session_id),
        )
        .unwrap();
        std::fs::write(
            path(&broken[3]),
            text(&broken[3]).replace("\"schema_version\": 1", "\"schema_version\": 99"),
        )
        .unwrap();
        for b in &broken {
            assert!(store
                .load(None, &SessionKey::Id(b.session_id.clone()))
                .is_err());
        }

        let listed = store.list(None).unwrap();
        let mut expected: Vec<ListEntry> = [&kept[0], &after, &kept[2]]
            .into_iter()
            .map(|s| ListEntry {
                session_id: s.session_id.clone(),
                task_name: s.task_name.clone(),
                current_stage: s.current_stage,
                current_state: s.current_state,
                updated_at: s.updated_at.clone(),
            })
            .collect();
        expected.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        assert_eq!(listed, expected);
        assert_eq!(listed[0].session_id, after.session_id, "newest first");
        assert_eq!(listed[0].current_state, State::AwaitingConfirmation);
    }

    #[test]
    fn a_tampered_session_file_cannot_steer_writes_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_at(dir.path());
        let s = store.start(None, "Tamper", Utc::now()).unwrap();
        let path = dir.path().join(session_rel(&s.session_id));
        let text = std::fs::read_to_string(&path).unwrap();
        let tampered = text.replace("\"task_name\": \"tamper\"", "\"task_name\": \"../../evil\"");
        assert_ne!(tampered, text, "the test really tampers with the file");
        std::fs::write(&path, tampered).unwrap();
        let listing = |d: &std::path::Path| -> Vec<_> {
            std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect()
        };
        let root_before = listing(dir.path());
        let e = store
            .act(
                None,
                &SessionKey::Id(s.session_id.clone()),
                Command::Submit {
                    stage: None,
                    claude_result: Some("# PRD\nQuality Score: 95/100".into()),
                    codex_result: None,
                },
                Utc::now(),
            )
            .unwrap_err();
        assert_eq!(e.code(), "session_corrupt");
        // `.claude/specs/../../evil` would have landed in the project root.
        assert!(!dir.path().join("evil").exists());
        assert_eq!(listing(dir.path()), root_before);
    }
}
