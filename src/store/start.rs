//! `start`: a new session with a unique task name whose folder is reserved and marked as
//! the session's own, written with its task-mapping entry. A `start` that fails (a full
//! disk, an unwritable `.claude/`) takes back everything it made, so a retry gets the
//! same task name and the project looks as it did.

use chrono::{DateTime, Utc};

use super::mapping::{with_entry, MappingEntry, MAPPING};
use super::sessions::{json_text, session_rel};
use super::{names, owner_rel, slug_for, Project, Store};
use crate::error::{Error, Result};
use crate::git::Repo;
use crate::workflow::engine::{self, Engine};
use crate::workflow::person::Person;
use crate::workflow::session::{timestamp, Session};
use crate::workflow::Track;

/// A started session, and what the caller should be told about the project.
#[derive(Debug)]
pub struct Started {
    pub session: Session,
    pub notices: Vec<String>,
}

/// What git says of the project at `start`.
pub(super) struct Team {
    repo: Option<Repo>,
    pub(super) owner: Option<Person>,
    pub(super) branch: Option<String>,
    head: Option<String>,
    /// The project's files the server writes right after this start (a story's sprint
    /// status): the round that begins is measured as if they were written.
    pending: Vec<String>,
}

impl Team {
    pub(super) fn of(project: &Project, over: Option<&Person>) -> Team {
        let repo = Repo::at(&project.root);
        let owner = over.cloned();
        let facts = match &repo {
            Some(r) => r.facts(owner.is_none()),
            None => Default::default(),
        };
        let owner = owner.or(facts.identity);
        let branch = facts.branch;
        Team {
            repo,
            owner,
            branch,
            head: facts.head,
            pending: Vec::new(),
        }
    }
}

/// What this `start` made, to take back if it fails.
#[derive(Default)]
struct Made {
    state_dir: bool,
    claude_dir: bool,
    specs_dir: bool,
    task_dir: Option<String>,
    files: Vec<String>,
}

impl Store {
    /// Starts a session for `objective`, running `engines` when the host listed them
    /// (checked by the caller), else the engines the objective implies.
    pub fn start(
        &self,
        cwd: Option<&str>,
        objective: &str,
        engines: Option<&[Engine]>,
        track: Track,
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> Result<Started> {
        self.start_carrying(cwd, objective, engines, track, &[], clock)
    }

    /// [`Store::start`], recording in the first history entry the lessons that the first
    /// role prompt carries (their ids).
    pub fn start_carrying(
        &self,
        cwd: Option<&str>,
        objective: &str,
        engines: Option<&[Engine]>,
        track: Track,
        lessons: &[String],
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> Result<Started> {
        self.start_named(
            cwd,
            objective,
            engines,
            None,
            lessons,
            &[],
            clock,
            &mut |session| {
                session.begin_track(track);
                Ok(())
            },
        )
    }

    /// [`Store::start`], with `shape` making the new session what it is to be (a track,
    /// a story) under the lock, before anything of it is written; what `shape` refuses
    /// is taken back. `base`: the task name to number from (a valid one), instead of the
    /// objective's; `lessons`: the ids of the lessons the first role prompt carries;
    /// `pending`: the project's files the caller writes right after (a story's sprint
    /// status), which the round a story begins is measured without.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start_named(
        &self,
        cwd: Option<&str>,
        objective: &str,
        engines: Option<&[Engine]>,
        base: Option<&str>,
        lessons: &[String],
        pending: &[String],
        clock: &dyn Fn() -> DateTime<Utc>,
        shape: &mut dyn FnMut(&mut Session) -> Result<()>,
    ) -> Result<Started> {
        let project = self.project(cwd)?;
        // Refuse unsafe layouts before anything is created.
        // (The mapping itself may be a link out: it is derived, and moved aside below.)
        project.check(&format!("{MAPPING}.new"))?;
        project.check(".claude/specs/x")?;
        let exists = |rel: &str| project.path(rel).symlink_metadata().is_ok();
        let mut made = Made {
            state_dir: !exists(".bmad-task"),
            claude_dir: !exists(".claude"),
            specs_dir: !exists(".claude/specs"),
            ..Made::default()
        };
        let lock = match project.lock(self.lock_wait) {
            Ok(lock) => lock,
            // Another process holds the project: what exists now is its.
            Err(e @ Error::Busy { .. }) => return Err(e),
            Err(e) => {
                undo(&project, &made);
                return Err(e);
            }
        };
        let engines = engine::for_start(objective, engines);
        // Asked of git before the lock is taken: who starts it, on which branch.
        let mut team = Team::of(&project, self.owner.as_ref());
        team.pending = pending.to_vec();
        let result = self.start_locked(
            &project, objective, base, engines, &team, lessons, clock, shape, &mut made,
        );
        if result.is_err() {
            // Under the lock, so no other `start` is half-way in this project.
            undo(&project, &made);
        }
        drop(lock);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn start_locked(
        &self,
        project: &Project,
        objective: &str,
        base: Option<&str>,
        engines: Vec<Engine>,
        team: &Team,
        lessons: &[String],
        clock: &dyn Fn() -> DateTime<Utc>,
        shape: &mut dyn FnMut(&mut Session) -> Result<()>,
        made: &mut Made,
    ) -> Result<Started> {
        self.sweep(project, &[]);
        let mut taken = self.mapping.take(project)?;
        let mut notices = Vec::new();
        if let Some(why) = &taken.rebuilt_because {
            notices.push(keep_aside(project, why, clock())?);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let base = base_name(objective, base, team, &id);
        let task_name = reserve(project, taken.index.candidates(&base), &base)?;
        made.task_dir = Some(format!(".claude/specs/{task_name}"));
        let now = clock();
        let mut session = Session::new(
            id,
            task_name,
            project.display(),
            objective.to_string(),
            engines,
            now,
        );
        session.owner = team.owner.clone();
        session.branch = team.branch.clone();
        session.carry_lessons(lessons);
        let fresh = session.clone();
        shape(&mut session)?;
        // A story begins at development: its first round starts from the files now.
        if let Some(repo) = team.repo.as_ref() {
            if crate::workflow::dev_round::begins(&fresh, &session) {
                let reading = super::dev_round::began(repo, team.head.as_deref(), &team.pending);
                crate::workflow::dev_round::set_basis(&mut session, reading);
            }
        }
        let entry = MappingEntry {
            task_name: session.task_name.clone(),
            objective: objective.to_string(),
            created_at: timestamp(now),
        };
        let id = session.session_id.clone();
        let replaced = taken.index.insert(id.clone(), entry.clone());
        let mapping_text = taken
            .own_text
            .filter(|_| !replaced)
            .and_then(|text| with_entry(&text, &taken.index.mapping, &id, &entry))
            .unwrap_or_else(|| json_text(&taken.index.mapping));
        let owner = owner_rel(&session.task_name);
        let session_path = session_rel(&id);
        made.files = vec![owner.clone(), session_path.clone()];
        // The folder's owner mark first, then the session; the reserved directory is made
        // durable in the same wait for the disk. The mapping, an index rebuilt from the
        // session files whenever it is unusable, is replaced without that wait: its fsync
        // grew with the project (2 MB at 10,000 sessions) and made every `start` slower.
        let owner_text = format!("{id}\n");
        project.write_in_order(
            &[
                &[(&owner, owner_text.as_bytes())],
                &[(&session_path, json_text(&session).as_bytes())],
            ],
            &made.new_entries(),
        )?;
        project.replace_unsynced(MAPPING, mapping_text.as_bytes())?;
        self.mapping.remember(project, mapping_text, taken.index);
        tracing::info!(session_id = %id, task_name = %session.task_name, "session started");
        Ok(Started { session, notices })
    }
}

/// The name a new task's folder is made from: a story's own (its parent and sprint), or
/// the objective's slug; in a team's repository either with the owner's handle and a
/// piece of the id, so that two clones (two people starting the same objective, or the
/// same sprint as a story) never pick the same.
fn base_name(objective: &str, base: Option<&str>, team: &Team, id: &str) -> String {
    let base = base.map_or_else(|| slug_for(objective), str::to_string);
    match &team.repo {
        Some(_) => names::for_team(
            &base,
            team.owner.as_ref().and_then(Person::handle).as_deref(),
            &id[..4],
        ),
        None => base,
    }
}

/// The first of `candidates` whose folder under `.claude/specs/` this call could make.
fn reserve(
    project: &Project,
    candidates: impl Iterator<Item = String>,
    base: &str,
) -> Result<String> {
    for name in candidates {
        if project.create_dir_new(&format!(".claude/specs/{name}"))? {
            return Ok(name);
        }
    }
    Err(Error::Storage {
        op: "reserve",
        path: format!(".claude/specs/{base}-…"),
        reason: "every numbered name is taken".into(),
    })
}

impl Made {
    /// The folders this start made, as new entries of their parents: synced with the
    /// files, or a power cut could take them (and the session in one) away.
    fn new_entries(&self) -> Vec<&'static str> {
        let mut new_entries = vec![".claude/specs"];
        if self.specs_dir {
            new_entries.push(".claude");
        }
        if self.state_dir || self.claude_dir {
            new_entries.push(".");
        }
        new_entries
    }
}

/// Moves an unusable task mapping aside (nothing is deleted) and says so.
fn keep_aside(project: &Project, why: &str, now: DateTime<Utc>) -> Result<String> {
    let aside = format!("{MAPPING}.unreadable-{}", now.format("%Y%m%dT%H%M%S%3fZ"));
    project.check(&aside)?;
    // Beneath the project's handle: a link out of `.bmad-task/` is moved aside itself (a
    // rename never follows it), and a folder swapped for a link is not followed.
    project.move_entry(MAPPING, &aside)?;
    Ok(format!(
        "{MAPPING} {why}; it was rebuilt from the session files, and the old one is kept as {aside}."
    ))
}

/// Takes back what a failed `start` made. Only what it made, and directories only when
/// empty, so nothing of anyone else's can go.
fn undo(project: &Project, made: &Made) {
    for rel in &made.files {
        let _ = project.remove_entry(rel, false);
    }
    let mut dirs: Vec<&str> = Vec::new();
    if let Some(d) = &made.task_dir {
        dirs.push(d);
    }
    if made.specs_dir {
        dirs.push(".claude/specs");
    }
    if made.claude_dir {
        dirs.push(".claude");
    }
    if made.state_dir {
        project.sweep_stale_temp(".bmad-task");
        // Only when the lock file is all that is left: another process may have begun
        // using the project since (it re-takes a lock whose file went, see `lock`).
        let only_lock = std::fs::read_dir(project.path(".bmad-task")).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|e| e.file_name() == std::ffi::OsStr::new(".lock"))
        });
        if only_lock {
            let _ = project.remove_entry(crate::files::LOCK_FILE, false);
            dirs.push(".bmad-task");
        }
    }
    for d in dirs {
        let _ = project.remove_entry(d, true);
    }
}
