//! Durable sessions: finding the project and the session, taking the project lock,
//! loading fresh state, writing an outcome's files and then the session (docs/spec.md §7.7–§7.9).
//! Disk is the only truth, so several server processes can share one project.

mod change;
mod conflict;
mod dashboard_link;
mod dev_round;
mod drift;
pub mod faults;
mod ignore;
mod list;
mod mapping;
mod names;
mod review_diff;
mod rewound;
mod salvage;
mod sessions;
#[cfg(test)]
pub(crate) use sessions::READS as SESSION_READS;
mod start;
pub mod stories;
mod written;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::files::{DefaultRoot, Project, ReadProblem, Roots};
use crate::settings::Acting;
use crate::workflow::person::Person;
use crate::workflow::session::Session;
use crate::workflow::stage::Stage;
use crate::workflow::{Action, State};

use mapping::MappingCache;
use sessions::{load_session, session_ids};

pub use change::{documents, not_before_last_entry};
pub use drift::GitNow;
pub use drift::{drift, drift_after, Drift, Seen};
pub use ignore::{
    write_gitattributes, write_gitignore, Ignored, ATTRIBUTES, LOCAL_FILES, MERGE_DRIVER,
};
pub use list::{Damaged, Page, PAGE};
pub use mapping::{Mapping, MappingEntry};
pub use names::{candidate as task_name_candidate, is_valid as is_valid_task_name, slug_for};
pub use review_diff::ReviewDiff;
pub use rewound::went_back;
pub use salvage::Readable;
pub use sessions::session_rel;
pub use start::Started;
pub use written::wrote;

/// How a call names its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKey {
    Id(String),
    TaskName(String),
    /// Both given: they must name the same session.
    Both {
        id: String,
        task_name: String,
    },
}

impl SessionKey {
    /// A task as a person names it on a command line or in a slash command: a session id
    /// when it reads as one, else a task name.
    pub fn from_task(task: &str) -> SessionKey {
        if uuid::Uuid::parse_str(task).is_ok() {
            SessionKey::Id(task.to_string())
        } else {
            SessionKey::TaskName(task.to_string())
        }
    }

    fn describe(&self) -> String {
        match self {
            SessionKey::Id(id) | SessionKey::Both { id, .. } => {
                format!("with session_id `{id}`")
            }
            SessionKey::TaskName(t) => format!("with task_name `{t}`"),
        }
    }
}

/// Where a session is: its project, and its id (its file is `session_rel(id)`).
#[derive(Debug, Clone)]
pub struct Located {
    pub project: Project,
    pub id: String,
}

/// A refusal, with the session when it was found (a reply then names its state).
pub type RefusedWith = (Error, Option<Box<Session>>);

/// One line of `list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ListEntry {
    pub session_id: String,
    pub task_name: String,
    /// The session's track (`full`, `quick`, `fix`, `story`).
    pub track: crate::workflow::Track,
    pub current_stage: Stage,
    pub current_state: State,
    pub updated_at: String,
    /// Who started it (git's identity, or `BMAD_OWNER`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Person>,
    /// The git branch of its latest change, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

pub use dashboard_link::{task_link, DASHBOARD_REL};

/// The file in a task's specs folder that names the session it belongs to.
pub fn owner_rel(task_name: &str) -> String {
    Session::owner_mark_of(task_name)
}

pub struct Store {
    default_root: DefaultRoot,
    /// Over HTTP: the directories calls may name; then `default_root` is not used.
    roots: Option<Roots>,
    /// How long a change waits for the project lock.
    lock_wait: std::time::Duration,
    /// The person the settings name over git's identity (`--owner`, `BMAD_OWNER`).
    owner: Option<Person>,
    /// A project check's time limit when neither it nor the policy file names one.
    check_timeout: std::time::Duration,
    /// Whether a story's sprint is claimed on the team's remote.
    claims_on_remote: bool,
    /// The user's folder of role prompts.
    user_prompts: Option<PathBuf>,
    /// The user's home and Claude Code's configuration folder, where the hooks on its
    /// dialog are read when the host's own process does not say.
    home: Option<PathBuf>,
    claude_config_dir: Option<PathBuf>,
    /// Folders (of any project) this process has already swept of interrupted writes.
    swept: Mutex<HashSet<PathBuf>>,
    /// The parsed task mapping, reused while its file is unchanged.
    mapping: MappingCache,
    /// What `list` read of each session file, reused while the file is unchanged.
    list_cache: list::ListCache,
}

impl Store {
    /// A store whose calls that name no project act in `default_root`, with the settings'
    /// part that a change is made with.
    pub fn new(default_root: DefaultRoot, acting: Acting) -> Store {
        let Acting {
            user_prompts,
            owner,
            lock_wait,
            check_timeout,
            claims_on_remote,
            home,
            claude_config_dir,
        } = acting;
        Store {
            default_root,
            roots: None,
            lock_wait,
            owner,
            check_timeout,
            claims_on_remote,
            user_prompts,
            home,
            claude_config_dir,
            swept: Mutex::new(HashSet::new()),
            mapping: MappingCache::default(),
            list_cache: list::ListCache::default(),
        }
    }

    /// Where Claude Code would read the hooks on its dialog for `projects`, by the settings
    /// of this process (the user's home, `CLAUDE_CONFIG_DIR`).
    pub fn claude_places(&self, projects: Vec<PathBuf>) -> crate::hosts::hooks::Places {
        crate::hosts::hooks::Places::new(
            self.home.clone(),
            self.claude_config_dir.clone(),
            projects,
        )
    }

    /// Under the project lock: removes temporary files that a killed writer left behind in
    /// `.bmad-task/` and the directories about to be written, each once per process (a
    /// file left there later is removed by the next process that writes there; it is
    /// never read: every name the server reads is a final one).
    fn sweep(&self, project: &Project, dirs: &[&str]) {
        for dir in std::iter::once(&".bmad-task").chain(dirs) {
            let first = self
                .swept
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(project.root.join(dir));
            if first {
                project.sweep_stale_temp(dir);
            }
        }
    }

    /// A store whose projects must lie inside `roots` (the HTTP server's).
    pub fn within(roots: Roots, acting: Acting) -> Store {
        let first = roots.dirs()[0].display().to_string();
        Store {
            roots: Some(roots),
            ..Store::new(
                DefaultRoot {
                    source_name: "--root",
                    value: first,
                },
                acting,
            )
        }
    }

    /// Whether calls must name projects inside roots of the server's (over HTTP).
    pub fn serves_roots(&self) -> bool {
        self.roots.is_some()
    }

    /// A project check's time limit when neither it nor the policy file names one.
    pub fn check_timeout(&self) -> std::time::Duration {
        self.check_timeout
    }

    /// The user's folder of role prompts, when the settings name one.
    pub fn user_prompts(&self) -> Option<&std::path::Path> {
        self.user_prompts.as_deref()
    }

    pub fn project(&self, cwd: Option<&str>) -> Result<Project> {
        match &self.roots {
            Some(roots) => roots.open(cwd),
            None => Project::open(cwd, &self.default_root),
        }
    }

    /// Finds a session in the given `cwd`, else in the default project root, and reads it
    /// (one read of its file). When both an id and a task name are given, they must name
    /// the same session.
    pub fn load(&self, cwd: Option<&str>, key: &SessionKey) -> Result<(Project, Session)> {
        let at = self.locate(cwd, key)?;
        let session = self.read(&at, key)?;
        Ok((at.project, session))
    }

    /// Where the session `key` names is, found without reading its file where the key
    /// allows: an id names its file, a task name is looked up in the mapping (the session
    /// files are read only when the mapping does not know the name).
    pub fn locate(&self, cwd: Option<&str>, key: &SessionKey) -> Result<Located> {
        let mut searched = Vec::new();
        let mut first_err = None;
        let mut candidates = vec![self.project(cwd)?];
        if cwd.is_some() {
            if let Ok(p) = self.project(None) {
                if candidates.iter().all(|c| c.root != p.root) {
                    candidates.push(p);
                }
            }
        }
        for project in candidates {
            searched.push(project.display());
            match self.locate_in(&project, key) {
                Ok(Some(id)) => return Ok(Located { project, id }),
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

    /// Reads the located session (one read of its file) and checks it is the one `key`
    /// names: a task name the mapping placed wrongly is looked for in the session files.
    pub fn read(&self, at: &Located, key: &SessionKey) -> Result<Session> {
        let missing = || Error::SessionNotFound {
            what: key.describe(),
            project: at.project.display(),
        };
        let mut session = load_session(&at.project, &at.id)?.ok_or_else(missing)?;
        // Where it was found, not where it was last written (another clone, another path).
        session.cwd = at.project.display();
        match key {
            SessionKey::TaskName(name) if !names::answers_to(&session, name) => {
                let mut found = self.scan(&at.project, name)?.ok_or_else(missing)?;
                found.cwd = at.project.display();
                Ok(found)
            }
            SessionKey::Both { id, task_name } if &session.task_name != task_name => {
                let named = self
                    .locate_in(&at.project, &SessionKey::TaskName(task_name.clone()))
                    .ok()
                    .flatten()
                    .map(|s| format!("session `{s}`"))
                    .unwrap_or_else(|| "no session".into());
                Err(Error::ConflictingIds {
                    id: id.clone(),
                    its_task: session.task_name,
                    task_name: task_name.clone(),
                    named,
                })
            }
            _ => Ok(session),
        }
    }

    /// The id of the session `key` names in `project`, when its file is there.
    fn locate_in(&self, project: &Project, key: &SessionKey) -> Result<Option<String>> {
        if !project.has_state() {
            return Ok(None);
        }
        let there = |id: &str| std::fs::symlink_metadata(project.path(&session_rel(id))).is_ok();
        match key {
            SessionKey::Id(id) | SessionKey::Both { id, .. } => Ok(there(id).then(|| id.clone())),
            SessionKey::TaskName(name) => {
                let id = self
                    .mapping
                    .with(project, |m| m.by_name.get(name).cloned())?;
                match id.filter(|id| there(id)) {
                    Some(id) => Ok(Some(id)),
                    None => Ok(self.scan(project, name)?.map(|s| s.session_id)),
                }
            }
        }
    }

    /// The session named `name`, looked for in every session file: the mapping is an
    /// index, the session files are the truth.
    fn scan(&self, project: &Project, name: &str) -> Result<Option<Session>> {
        let mut conflicted = None;
        let mut by_objective = Vec::new();
        for id in session_ids(project)? {
            match load_session(project, &id) {
                Ok(Some(s)) if s.task_name == name => return Ok(Some(s)),
                // The name the objective gives, which a team's task name extends with
                // its owner and a tag, or the part of the name a person sees and types.
                Ok(Some(s)) if names::answers_to(&s, name) => by_objective.push(s),
                // A session a merge left in two versions is named, not passed over.
                Err(e @ Error::SessionConflicted { .. })
                    if salvage::salvage(project, &id).task_name.as_deref() == Some(name) =>
                {
                    conflicted = Some(e);
                }
                _ => {}
            }
        }
        if let Some(e) = conflicted {
            return Err(e);
        }
        match by_objective.len() {
            0 | 1 => Ok(by_objective.pop()),
            _ => {
                let mut named: Vec<String> = by_objective
                    .iter()
                    .map(|s| format!("`{}`", s.task_name))
                    .collect();
                named.sort();
                Err(Error::SessionNotFound {
                    what: format!(
                        "named `{name}` alone ({} all answer to that name: name one of them)",
                        named.join(", ")
                    ),
                    project: project.display(),
                })
            }
        }
    }
}

/// The decisions the human can take at (`stage`, `state`), each once (never the
/// `confirm_save` alias): what the terminal's commands offer there.
pub fn human_decisions(stage: Stage, state: State) -> Vec<Action> {
    crate::workflow::rules::gate_decisions(stage, state)
        .into_iter()
        .filter(|a| *a != Action::ConfirmSave)
        .collect()
}

/// The command a human runs in a terminal, in the project, to take `action` themselves.
pub fn terminal_command(action: Action, task_name: &str) -> String {
    match action {
        Action::Answer => format!("bmad-mcp answer {task_name}"),
        Action::Approve => format!("bmad-mcp approve {task_name} [--scope <sprints>]"),
        Action::Reject => {
            format!("bmad-mcp reject {task_name} --feedback \"<what should change>\"")
        }
        _ => format!("bmad-mcp confirm {task_name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::LOCK_FILE;
    use crate::store::mapping::MAPPING;
    use crate::workflow::{Command, Decision, Facts};
    use chrono::Utc;

    /// A change by the host's word, with no policy: the store's primitives in the order
    /// [`crate::act`] uses them.
    fn act(store: &Store, key: &SessionKey, command: Command) -> Result<(Session, Facts)> {
        let at = store.locate(None, key)?;
        let (_lock, before) = store.lock_and_read(&at, key).map_err(|(e, _)| e)?;
        let now = not_before_last_entry(&before, Utc::now());
        let outcome = crate::workflow::machine::apply_observed(
            &before,
            command,
            &Decision::by_host(None),
            Default::default(),
            &documents(&at.project, &before),
            now,
        )?;
        let files: Vec<(String, String)> = outcome
            .writes
            .into_iter()
            .map(|w| (w.path, w.content))
            .collect();
        store.write_change(&at.project, &before, &outcome.session, &files)?;
        Ok((outcome.session, outcome.facts))
    }

    /// The mapping as the file holds it.
    fn read_mapping(project: &Project) -> Result<Mapping> {
        let text = project
            .read(MAPPING)
            .map_err(|p| p.into_error(MAPPING))?
            .unwrap_or_else(|| "{}".into());
        Ok(serde_json::from_str(&text).expect("the mapping file parses"))
    }

    /// A PRD that passes the gate: every section it requires, and a score.
    fn passing_prd() -> String {
        let sections = crate::workflow::Stage::Po.sections();
        let doc = crate::workflow::sections::filled("PRD", sections);
        format!("{doc}\nQuality Score: 95/100")
    }

    fn store_at(dir: &std::path::Path) -> Store {
        Store::new(
            DefaultRoot {
                source_name: "test",
                value: dir.display().to_string(),
            },
            Acting::default(),
        )
    }

    /// Two `start`s race in a new project and one finds it busy: it must not take back
    /// the `.bmad-task/` and lock file that the other made and holds (found in review: the
    /// loser's undo removed them, so a third process could lock the project at once).
    #[test]
    fn a_start_that_finds_a_new_project_busy_takes_nothing_of_the_holders() {
        let mut busy = 0;
        for _ in 0..100 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().to_path_buf();
            let racers: Vec<_> = (0..2)
                .map(|_| {
                    let root = root.clone();
                    std::thread::spawn(move || {
                        let store = Store::new(
                            DefaultRoot {
                                source_name: "test",
                                value: root.display().to_string(),
                            },
                            Acting {
                                lock_wait: std::time::Duration::ZERO,
                                ..Acting::default()
                            },
                        );
                        store
                            .start(None, "Race", None, crate::workflow::Track::Full, &Utc::now)
                            .map(|s| s.session)
                    })
                })
                .collect();
            let results: Vec<_> = racers.into_iter().map(|t| t.join().unwrap()).collect();
            for r in &results {
                match r {
                    Ok(s) => {
                        assert!(
                            root.join(LOCK_FILE).is_file(),
                            "the winner's lock file went"
                        );
                        assert!(root.join(session_rel(&s.session_id)).is_file());
                    }
                    Err(e) => {
                        assert_eq!(e.code(), "busy", "{e}");
                        busy += 1;
                    }
                }
            }
        }
        eprintln!("{busy} of 200 starts found the project busy");
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
                        .map(|_| {
                            store
                                .start(
                                    None,
                                    "Same objective",
                                    None,
                                    crate::workflow::Track::Full,
                                    &Utc::now,
                                )
                                .unwrap()
                                .session
                        })
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
        let s = store
            .start(
                None,
                "Find me",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        std::fs::write(dir.path().join(MAPPING), "{ torn").unwrap();
        let (_, found) = store
            .load(None, &SessionKey::TaskName("find-me".into()))
            .unwrap();
        assert_eq!(found.session_id, s.session_id);
        // The next start rebuilds the mapping from the session files.
        store
            .start(
                None,
                "Find me",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap();
        let project = store.project(None).unwrap();
        assert_eq!(read_mapping(&project).unwrap().len(), 2);
    }

    /// Sessions pulled from another clone while this server runs: the mapping it wrote
    /// itself is stale, and the next `start` rebuilds it with them.
    #[test]
    fn a_mapping_made_stale_by_pulled_sessions_is_rebuilt() {
        let (here, there) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (store_at(here.path()), store_at(there.path()));
        a.start(None, "Mine", None, crate::workflow::Track::Full, &Utc::now)
            .unwrap();
        let pulled = b
            .start(
                None,
                "Theirs",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        let rel = session_rel(&pulled.session_id);
        std::fs::copy(there.path().join(&rel), here.path().join(&rel)).unwrap();
        let project = a.project(None).unwrap();
        assert_eq!(read_mapping(&project).unwrap().len(), 1, "stale now");
        a.start(
            None,
            "Mine again",
            None,
            crate::workflow::Track::Full,
            &Utc::now,
        )
        .unwrap();
        let mapping = read_mapping(&project).unwrap();
        assert_eq!(mapping.len(), 3, "{mapping:?}");
        assert_eq!(mapping[&pulled.session_id].task_name, "theirs");
    }

    #[test]
    fn the_cached_mapping_follows_changes_made_by_other_processes() {
        let dir = tempfile::tempdir().unwrap();
        // Two stores over one project stand for two server processes.
        let (a, b) = (store_at(dir.path()), store_at(dir.path()));
        let first = a
            .start(
                None,
                "Shared name",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        let second = b
            .start(
                None,
                "Shared name",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        let third = a
            .start(
                None,
                "Shared name",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        assert_eq!(
            [&first, &second, &third].map(|s| s.task_name.as_str()),
            ["shared-name", "shared-name-1", "shared-name-2"]
        );
        let project = a.project(None).unwrap();
        assert_eq!(read_mapping(&project).unwrap().len(), 3);

        // A hand edit that keeps the file's size is seen too (a rename made in the
        // session file, the truth, and in the mapping).
        let path = dir.path().join(MAPPING);
        let text = std::fs::read_to_string(&path).unwrap();
        let edited = text.replace("\"shared-name-1\"", "\"renamed-task1\"");
        assert_eq!(edited.len(), text.len());
        std::fs::write(&path, edited).unwrap();
        let session_file = dir.path().join(session_rel(&second.session_id));
        let body = std::fs::read_to_string(&session_file).unwrap();
        std::fs::write(
            &session_file,
            body.replace("\"shared-name-1\"", "\"renamed-task1\""),
        )
        .unwrap();
        let (_, found) = a
            .load(None, &SessionKey::TaskName("renamed-task1".into()))
            .unwrap();
        assert_eq!(found.session_id, second.session_id);
        let fourth = a
            .start(
                None,
                "Shared name",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
        assert_eq!(fourth.task_name, "shared-name-3");
        let mapping = read_mapping(&project).unwrap();
        assert_eq!(mapping.len(), 4);
        assert_eq!(mapping[&second.session_id].task_name, "renamed-task1");
    }

    /// The line `list` gives `s`, started outside a repository.
    fn entry_for(s: &Session) -> ListEntry {
        ListEntry {
            session_id: s.session_id.clone(),
            task_name: s.task_name.clone(),
            track: s.track,
            current_stage: s.current_stage,
            current_state: s.current_state,
            updated_at: s.updated_at.clone(),
            owner: None,
            branch: None,
        }
    }

    /// A full-track session started for each objective, in order.
    fn start_each(store: &Store, objectives: &[&str]) -> Vec<Session> {
        objectives
            .iter()
            .map(|o| {
                store
                    .start(None, o, None, crate::workflow::Track::Full, &Utc::now)
                    .unwrap()
                    .session
            })
            .collect()
    }

    #[test]
    fn list_shows_what_the_sessions_hold_and_reports_invalid_ones_apart() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_at(dir.path());
        let kept = start_each(&store, &["One", "Two", "Three"]);
        let damaged = start_each(&store, &["Damaged body"]).remove(0);
        let (after, _) = act(
            &store,
            &SessionKey::Id(kept[1].session_id.clone()),
            Command::Submit {
                stage: None,
                claude_result: Some(passing_prd()),
                codex_result: None,
                document_file: None,
            },
        )
        .unwrap();
        let broken = start_each(&store, &["Torn", "Renamed", "Wrong id", "Future"]);
        let path = |s: &Session| dir.path().join(session_rel(&s.session_id));
        let text = |s: &Session| std::fs::read_to_string(path(s)).unwrap();
        // Cut short; a name that escapes; another session's id; a layout from the future.
        let edits: [(&Session, String); 4] = [
            (&broken[0], text(&broken[0])[..40].to_string()),
            (
                &broken[1],
                text(&broken[1]).replace("\"task_name\": \"renamed\"", "\"task_name\": \"../x\""),
            ),
            (
                &broken[2],
                text(&broken[2]).replace(&broken[2].session_id, &kept[0].session_id),
            ),
            (
                &broken[3],
                text(&broken[3]).replace("\"schema_version\": 1", "\"schema_version\": 99"),
            ),
        ];
        for (s, edited) in edits {
            std::fs::write(path(s), edited).unwrap();
        }
        for b in &broken {
            assert!(store
                .load(None, &SessionKey::Id(b.session_id.clone()))
                .is_err());
        }

        // A file whose listed fields read but whose body is damaged is listed, so it does
        // not vanish from view; acting on it reports what is wrong with it.
        let body = text(&damaged);
        let stages_at = body.find("\"stages\": {").expect("stages are stored");
        std::fs::write(
            path(&damaged),
            format!(
                "{}\"stages\": 5, \"was\": {}",
                &body[..stages_at],
                &body[stages_at + 10..]
            ),
        )
        .unwrap();
        let err = store
            .load(None, &SessionKey::Id(damaged.session_id.clone()))
            .unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");

        let page = store.list(None, None).unwrap();
        // The four files that cannot be trusted are reported, by the id in their name.
        let mut reported: Vec<&str> = page.damaged.iter().map(|d| d.session_id.as_str()).collect();
        reported.sort_unstable();
        let mut want: Vec<&str> = broken.iter().map(|s| s.session_id.as_str()).collect();
        want.sort_unstable();
        assert_eq!(reported, want);
        assert_eq!(page.damaged_total, 4);
        let listed = page.sessions;
        let mut expected: Vec<ListEntry> = [&kept[0], &after, &kept[2], &damaged]
            .into_iter()
            .map(entry_for)
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
        let s = store
            .start(
                None,
                "Tamper",
                None,
                crate::workflow::Track::Full,
                &Utc::now,
            )
            .unwrap()
            .session;
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
        let e = act(
            &store,
            &SessionKey::Id(s.session_id.clone()),
            Command::Submit {
                stage: None,
                claude_result: Some(passing_prd()),
                codex_result: None,
                document_file: None,
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), "session_corrupt");
        // `.claude/specs/../../evil` would have landed in the project root.
        assert!(!dir.path().join("evil").exists());
        assert_eq!(listing(dir.path()), root_before);
    }
}
