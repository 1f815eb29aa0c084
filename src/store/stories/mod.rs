//! Stories on disk (docs/spec.md §18.2). A story is a session of its own
//! (`.bmad-task/session-<id>.json` in the worktree it runs in, its documents in
//! `.claude/specs/<parent>-sprint-<n>/`), so that stories run from several git worktrees
//! merge without conflict. Which story holds which sprint is kept where every worktree of
//! the repository sees it: one small file per sprint under the git common directory,
//! `<common>/bmad-mcp/.bmad-task/stories/<parent session id>/sprint-<n>.json`, changed under
//! that folder's own lock (outside git, the project's `.bmad-task/stories/`, under the
//! project lock). Each story rewrites its entry after every change; a parent reads them
//! all before each of its changes and each `status`.

pub mod board;
mod by_hand;
mod held;
pub mod identity;
mod in_flight;
mod remote;

pub use in_flight::{completed, twice};
pub use remote::Claimant;

use chrono::{DateTime, Utc};

use super::{SessionKey, Started, Store};
use crate::code::ErrorCode;
use crate::error::{Error, Result};
use crate::files::{Held, Project};
use crate::workflow::engine::Engine;
use crate::workflow::session::{Session, StageStatus};
use crate::workflow::stage::Stage;
use crate::workflow::story::{self, StoryLink, StoryState};
use crate::workflow::Track;

/// Where the stories' entries are kept for one project.
pub struct Registry {
    root: Project,
    /// Whether `root` is not the project itself (the git common directory), so its own
    /// lock must be taken; the project's is held already otherwise.
    shared: bool,
}

fn entry_rel(parent_id: &str, sprint: u32) -> String {
    format!(".bmad-task/stories/{parent_id}/sprint-{sprint}.json")
}

impl Registry {
    /// The registry of `project`: the git common directory's when it is in a git
    /// repository, else the project's own.
    pub fn of(project: &Project) -> Result<Registry> {
        let Some(dirs) = identity::git_dirs(&project.root) else {
            return Ok(Registry {
                root: project.clone(),
                shared: false,
            });
        };
        let dir = dirs.common_dir.join("bmad-mcp");
        std::fs::create_dir_all(&dir).map_err(|e| Error::Storage {
            op: "create",
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let root = Project::shared(&dir)?;
        let shared = root.root != project.root;
        Ok(Registry { root, shared })
    }

    /// Where the entries are, for messages.
    pub fn describe(&self) -> String {
        self.root.path(".bmad-task/stories").display().to_string()
    }

    fn lock(&self, wait: std::time::Duration) -> Result<Option<Held>> {
        if self.shared {
            self.root.lock(wait).map(Some)
        } else {
            Ok(None)
        }
    }

    fn read(&self, parent_id: &str, sprint: u32) -> Option<StoryState> {
        let text = self.root.read(&entry_rel(parent_id, sprint)).ok()??;
        serde_json::from_str(&text).ok()
    }

    /// Every story of `parent_id`, by sprint (an entry that cannot be read is passed over).
    pub fn all(&self, parent_id: &str) -> Vec<StoryState> {
        let dir = self.root.path(&format!(".bmad-task/stories/{parent_id}"));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<StoryState> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let n = name.strip_prefix("sprint-")?.strip_suffix(".json")?;
                self.read(parent_id, n.parse().ok()?)
            })
            .collect();
        out.sort_by_key(|s| s.sprint);
        out
    }

    /// Records `entry` as the story holding its sprint: refused, naming the holder, while
    /// another story that has not completed holds it.
    pub fn claim(
        &self,
        parent: &Session,
        entry: &StoryState,
        wait: std::time::Duration,
    ) -> Result<()> {
        let _lock = self.lock(wait)?;
        if let Some(held) = self.read(&parent.session_id, entry.sprint) {
            if held.session_id != entry.session_id && !held.completed() {
                return Err(Error::argument(
                    ErrorCode::SprintTaken,
                    format!(
                        "sprint {} of task `{}` is held by {}: one active story per sprint. Work on another sprint, or have its holder finish it (its entry: {})",
                        entry.sprint,
                        parent.task_name,
                        held.holder(),
                        self.root.path(&entry_rel(&parent.session_id, entry.sprint)).display()
                    ),
                ));
            }
        }
        self.write(&parent.session_id, entry)
    }

    fn write(&self, parent_id: &str, entry: &StoryState) -> Result<()> {
        let mut text = serde_json::to_string_pretty(entry).unwrap_or_default();
        text.push('\n');
        self.root
            .write_atomic(&entry_rel(parent_id, entry.sprint), text.as_bytes())
    }

    /// Rewrites the entry of the story `s` after a change, as long as it still holds its
    /// sprint.
    pub fn update(&self, s: &Session, wait: std::time::Duration) -> Result<()> {
        let Some(link) = &s.story else {
            return Ok(());
        };
        let _lock = self.lock(wait)?;
        match self.read(&link.parent_session_id, link.sprint) {
            Some(held) if held.session_id != s.session_id => Ok(()),
            _ => self.write(&link.parent_session_id, &entry_of(s, link)),
        }
    }

    /// Takes back the entry of a story whose `start` failed.
    fn release(&self, parent_id: &str, sprint: u32, session_id: &str) {
        if self
            .read(parent_id, sprint)
            .is_some_and(|h| h.session_id == session_id)
        {
            let _ = self.root.remove_entry(&entry_rel(parent_id, sprint), false);
        }
    }
}

/// The shared entry of the story `s`, as it stands.
fn entry_of(s: &Session, link: &StoryLink) -> StoryState {
    StoryState {
        sprint: link.sprint,
        session_id: s.session_id.clone(),
        task_name: s.task_name.clone(),
        owner: link.owner.clone(),
        branch: link.branch.clone(),
        worktree: link.worktree.clone(),
        stage: s.current_stage,
        state: s.current_state,
        updated_at: s.updated_at.clone(),
        review_status: s.record(Stage::Review).review_status.clone(),
        gone: false,
    }
}

/// A parent with its stories as they stand now (unchanged for any other session): the
/// story sessions in this tree (a story finished in another clone counts once its branch
/// is merged here) and the entries of the stories running in this clone's other
/// worktrees ([`merged`]).
pub fn with_stories(project: &Project, s: &Session) -> Session {
    let mut s = s.clone();
    // Only while the parent waits on its stories does what they say change anything; at
    // any other state the session keeps the list its last change saw, and no file of the
    // project is read for it.
    if !story::takes_stories(&s) {
        return s;
    }
    let mut found: Vec<StoryState> = in_tree(project, &s.session_id)
        .into_iter()
        .map(|o| as_now(o, false))
        .collect();
    if entries_dir(project, &s.session_id).is_dir() {
        if let Ok(registry) = Registry::of(project) {
            found.extend(
                registry
                    .all(&s.session_id)
                    .into_iter()
                    .map(|o| as_now(o, true)),
            );
        }
    }
    s.stories = merged(found);
    s
}

/// A story as it stands where it runs, for what its entry recorded at its last change may
/// be stale: while it is open, its worktree's branch is read there (it may have been
/// renamed); a worktree of this clone (`local`, so a path on this machine) that is not
/// there any more is said to be gone.
fn as_now(mut o: StoryState, local: bool) -> StoryState {
    let dir = std::path::Path::new(&o.worktree);
    o.gone = local && !dir.is_dir();
    if !o.gone && !o.completed() && dir.is_dir() {
        if let Some(branch) = crate::git::Repo::at(dir).and_then(|r| r.branch_in_head()) {
            o.branch = Some(branch);
        }
    }
    o
}

/// The folder of `parent_id`'s shared entries, as [`Registry::of`] places it, found without
/// making anything.
fn entries_dir(project: &Project, parent_id: &str) -> std::path::PathBuf {
    let folder = match identity::git_dirs(&project.root) {
        Some(dirs) => dirs.common_dir.join("bmad-mcp"),
        None => project.root.clone(),
    };
    folder.join(format!(".bmad-task/stories/{parent_id}"))
}

/// Each story once (its completed or latest state, where the tree and this clone's entry
/// both have it), by sprint. Two stories of one sprint (claimed where the remote could
/// not be reached) both stay: the one not completed keeps the final QA waiting, and the
/// refusal names both, so a double claim is never merged silently.
fn merged(mut found: Vec<StoryState>) -> Vec<StoryState> {
    found.sort_by(|a, b| {
        (a.sprint, &a.session_id, b.completed(), &b.updated_at).cmp(&(
            b.sprint,
            &b.session_id,
            a.completed(),
            &a.updated_at,
        ))
    });
    found.dedup_by(|a, b| a.session_id == b.session_id);
    found
}

/// The stories of `parent_id` whose sessions are in this tree.
fn in_tree(project: &Project, parent_id: &str) -> Vec<StoryState> {
    let ids = super::sessions::session_ids(project).unwrap_or_default();
    // The parent is no story of its own, and the call has read it already.
    ids.iter()
        .filter(|id| *id != parent_id)
        .filter_map(|id| super::sessions::load_session(project, id).ok().flatten())
        .filter_map(|story| {
            let link = story.story.as_ref()?;
            (link.parent_session_id == parent_id).then(|| entry_of(&story, link))
        })
        .collect()
}

/// Refuses a story of `parent` for `sprint` unless the parent takes stories now (the full
/// track, its sprint plan approved, development not submitted) and the sprint is in the
/// scope the human approved.
fn may_take(parent: &Session, sprint: u32) -> Result<()> {
    let scope = story::in_scope(parent);
    if parent.track != Track::Full || !story::takes_stories(parent) {
        return Err(Error::argument(
            ErrorCode::InvalidState,
            format!(
                "task `{}` cannot take stories: it is at stage `{}`, state `{}` on the {} track; stories start once the full track's sprint plan is approved, while development has not been submitted",
                parent.task_name, parent.current_stage, parent.current_state, parent.track
            ),
        ));
    }
    if !scope.contains(&sprint) {
        let list: Vec<String> = scope.iter().map(u32::to_string).collect();
        return Err(Error::argument(
            ErrorCode::InvalidScope,
            format!(
                "field `sprint`: sprint {sprint} is not in the approved scope of `{}` (sprints {})",
                parent.task_name,
                list.join(", ")
            ),
        ));
    }
    Ok(())
}

impl Store {
    /// Starts a story of `parent` (a task name) for its approved sprint `sprint`, in the
    /// project `cwd` names (a worktree of the parent's repository, where the parent's
    /// session and documents are, as committed). Refused while another story holds the
    /// sprint, naming it. `pending`: the project's files the caller writes right after the
    /// start (the method's sprint status), which the story's first round is measured
    /// without.
    #[allow(clippy::too_many_arguments)]
    pub fn start_story(
        &self,
        cwd: Option<&str>,
        parent: &str,
        sprint: u32,
        objective: &str,
        engines: Option<&[Engine]>,
        pending: &[String],
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> Result<Started> {
        let (project, parent) = self.load(cwd, &SessionKey::TaskName(parent.to_string()))?;
        let parent = with_stories(&project, &parent);
        may_take(&parent, sprint)?;
        let link = self.link_to(&project, &parent, sprint);
        let objective = if objective.trim().is_empty() {
            format!(
                "Sprint {sprint} ({}) of: {}",
                link.sprint_title, parent.objective
            )
        } else {
            objective.to_string()
        };
        let registry = Registry::of(&project)?;
        // Before the lock: a round trip to the remote must not hold up the project.
        let remote = self.claim_on_remote(&project, &parent, &link)?;
        // `<parent>-sprint-<n>`, the parent's name cut to keep the sprint in 50 characters.
        let suffix = format!("-sprint-{sprint}");
        let base = format!(
            "{}{suffix}",
            super::names::head_for(&parent.task_name, suffix.len() - 1)
        );
        let wait = self.lock_wait;
        let mut claimed = None::<String>;
        let started = self.start_named(
            cwd,
            &objective,
            engines,
            Some(&base),
            &[],
            pending,
            clock,
            &mut |s| {
                s.begin_track(Track::Story);
                inherit(s, &parent, sprint);
                let entry = entry_of(s, &link);
                registry.claim(&parent, &entry, wait)?;
                claimed = Some(s.session_id.clone());
                s.story = Some(link.clone());
                Ok(())
            },
        );
        if started.is_err() {
            if let Some(id) = claimed.as_deref() {
                registry.release(&parent.session_id, sprint, id);
            }
            if let Some(claim) = &remote {
                claim.take_back(&project);
            }
        }
        let mut started = started?;
        if !self.claims_on_remote {
            started.notices.push(format!(
                "The claim of sprint {sprint} is local to this clone: BMAD_CLAIMS=local keeps it off the team's remote, so another clone may claim the same sprint."
            ));
        }
        started.notices.extend(remote.map(|c| c.said));
        started.notices.push(format!(
            "Story of sprint {sprint} of `{}`; which story holds which sprint is kept in {}, where every worktree of the repository sees it.",
            parent.task_name,
            registry.describe()
        ));
        Ok(started)
    }

    /// Claims the story's sprint on the team's remote, unless the settings keep claims in
    /// the clone.
    fn claim_on_remote(
        &self,
        project: &Project,
        parent: &Session,
        link: &StoryLink,
    ) -> Result<Option<remote::RemoteClaim>> {
        if !self.claims_on_remote {
            return Ok(None);
        }
        let who = remote::Claimant {
            owner: link.owner.clone(),
            branch: link.branch.clone(),
            worktree: link.worktree.clone(),
            sprint: link.sprint,
            host: identity::host().map(str::to_string),
            done: None,
            kept_by: None,
        };
        remote::claim(project, parent, &who)
    }

    /// A story's link to `sprint` of `parent`: who starts it and on which branch, as git
    /// says it (asked once: `start` asks the same and gets it from the cache).
    fn link_to(&self, project: &Project, parent: &Session, sprint: u32) -> StoryLink {
        let team = super::start::Team::of(project, self.owner.as_ref());
        let plan = parent.record(Stage::approval());
        StoryLink {
            parent_session_id: parent.session_id.clone(),
            parent_task: parent.task_name.clone(),
            sprint,
            sprint_title: plan
                .sprints
                .iter()
                .find(|s| s.number == sprint)
                .map(|s| s.title.clone())
                .unwrap_or_default(),
            owner: team
                .owner
                .as_ref()
                .map(|p| crate::code::clip(&p.to_string(), 200))
                .unwrap_or_else(|| "unknown".into()),
            branch: team.branch,
            worktree: project.display(),
        }
    }

    /// Who holds which sprint of the parent `s` among `claims` (read once, for one task or
    /// many): `None` when claims are kept in the clone, or `s` takes no stories.
    pub fn holders_in(&self, claims: &board::Claims, s: &Session) -> Option<String> {
        if !self.claims_on_remote || !story::takes_stories(s) || s.track != Track::Full {
            return None;
        }
        let plan = s.record(Stage::approval());
        let title = |n: u32| {
            plan.sprints
                .iter()
                .find(|p| p.number == n)
                .map(|p| crate::code::clip(&p.title, 80))
                .unwrap_or_else(|| "not in the plan".into())
        };
        board::holders(claims, &s.session_id, &title)
    }

    /// The claims on the team's remote that bear on `s` (a parent taking stories, or a
    /// story): fetched now for a person's command (`fetch`), else as the clone last fetched
    /// them ([`board::kept`], never waiting once a fetch was tried); `None` when claims are
    /// kept in the clone, or nothing of `s` is claimed.
    pub fn claims_for(&self, project: &Project, s: &Session, fetch: bool) -> Option<board::Claims> {
        let bears = (story::takes_stories(s) && s.track == Track::Full) || s.story.is_some();
        if !self.claims_on_remote || !bears {
            return None;
        }
        if fetch {
            board::read(project)
        } else {
            board::kept(project)
        }
    }

    /// A parent with its stories as they stand now ([`with_stories`]) and the sprints
    /// claimed on the team's remote by stories of other clones (`claims`, as read for the
    /// caller; else the clone's copies, read without waiting on the network).
    pub fn with_stories(
        &self,
        project: &Project,
        s: &Session,
        claims: Option<&board::Claims>,
    ) -> Session {
        let mut s = with_stories(project, s);
        if !self.claims_on_remote || !story::takes_stories(&s) {
            return s;
        }
        let kept;
        let claims = match claims {
            Some(c) => Some(c),
            None => {
                kept = board::kept_only(project);
                kept.as_ref()
            }
        };
        if let Some(c) = claims {
            in_flight::count(&mut s, c);
        }
        s
    }

    /// Reads a session for `status` (the model's, the terminal's with `fetch`, the
    /// dashboard's), with a parent's stories as their entries and the remote's claims say
    /// now, and the claims read for it.
    pub fn load_fresh(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        fetch: bool,
    ) -> Result<(Project, Session, Option<board::Claims>)> {
        let (project, s) = self.load(cwd, key)?;
        let claims = self.claims_for(&project, &s, fetch);
        let s = self.with_stories(&project, &s, claims.as_ref());
        Ok((project, s, claims))
    }

    /// What the claims on the remote say of the story `s`: its sprint released (by whom,
    /// when), another story holding it now (`s` is then stopped); `None` for any other
    /// session, or when nothing is amiss.
    pub fn claim_news(&self, s: &Session, claims: Option<&board::Claims>) -> Option<String> {
        let (link, claims) = (s.story.as_ref()?, claims?);
        in_flight::news(claims, link).map(|n| n.said(link, &claims.remote))
    }

    /// Why the story `s` is stopped (another story holds its sprint on the remote, as
    /// `claims` say), for its `status`; `None` for any other session.
    pub fn stopped(&self, s: &Session, claims: Option<&board::Claims>) -> Option<String> {
        let (link, claims) = (s.story.as_ref()?, claims?);
        let news = in_flight::news(claims, link).filter(|n| n.taken.is_some())?;
        Some(news.said(link, &claims.remote))
    }

    /// Refuses a change to a session that must not change now: a stale copy of a parent
    /// ([`stale_parent`]), or a story whose sprint another story holds on the team's
    /// remote (as the clone last fetched the claims, read without waiting on the network).
    pub fn may_change(&self, project: &Project, s: &Session) -> Result<()> {
        stale_parent(project, s)?;
        if !self.claims_on_remote || s.story.is_none() {
            return Ok(());
        }
        match board::kept_only(project) {
            Some(claims) => in_flight::stopped(&claims, s),
            None => Ok(()),
        }
    }

    /// For a change to `s` (read under the lock): what the claims say of it, the clone's
    /// copies read without waiting on the network.
    pub fn claim_news_now(&self, project: &Project, s: &Session) -> Option<String> {
        if !self.claims_on_remote || s.story.is_none() {
            return None;
        }
        self.claim_news(s, board::kept_only(project).as_ref())
    }
}

/// A story keeps its parent's PRD, architecture and plan where they are: its records of
/// those stages point at the parent's documents and carry what the server read of them
/// (the requirement ids, the components and sprints that name them), and its approved
/// scope is its sprint, so its prompts name that sprint's ids and its QA needs a result
/// for each, as the parent's final QA will.
fn inherit(s: &mut Session, parent: &Session, sprint: u32) {
    for stage in Track::Full.stages() {
        if s.track.contains(*stage) {
            continue;
        }
        let from = parent.record(*stage);
        let rec = s.record_mut(*stage);
        rec.final_result_ref = from.final_result_ref.clone();
        rec.artifact = from.artifact.clone();
        rec.sprints = from.sprints.clone();
        rec.approved = from.approved;
        rec.trace = from.trace.clone();
        rec.status = if from.final_result_ref.is_some() {
            StageStatus::Completed
        } else {
            StageStatus::Pending
        };
    }
    s.method_epic = parent.method_epic;
    let plan = s.record_mut(Stage::approval());
    plan.scope = Some(format!("sprint {sprint}"));
    plan.scope_sprints = Some(vec![sprint]);
}

/// After a change to `s`: a story's shared entry follows it. Said in the log when it
/// cannot be written (the story's own session is written already).
pub fn follow(project: &Project, s: &Session, wait: std::time::Duration) {
    if !s.stories.is_empty() {
        note_parent(project, s);
    }
    if s.story.is_none() {
        return;
    }
    let written = Registry::of(project).and_then(|r| r.update(s, wait));
    if let Err(e) = written {
        tracing::warn!(session_id = %s.session_id, error = %e, "the story's shared entry was not updated");
    }
}

/// Where a parent with stories last changed, and how far it was then: kept beside its
/// stories' entries, where every worktree of the clone sees it.
#[derive(serde::Serialize, serde::Deserialize)]
struct ParentNote {
    worktree: String,
    branch: Option<String>,
    stage: Stage,
    state: crate::workflow::State,
    updated_at: String,
}

fn parent_rel(parent_id: &str) -> String {
    format!(".bmad-task/stories/{parent_id}/parent.json")
}

/// Records where the parent `s` changed last (logged, not fatal, when it cannot be).
fn note_parent(project: &Project, s: &Session) {
    let Ok(registry) = Registry::of(project) else {
        return;
    };
    let note = ParentNote {
        worktree: project.display(),
        branch: s.branch.clone(),
        stage: s.current_stage,
        state: s.current_state,
        updated_at: s.updated_at.clone(),
    };
    let text = serde_json::to_string_pretty(&note).unwrap_or_default() + "\n";
    if let Err(e) = registry
        .root
        .write_atomic(&parent_rel(&s.session_id), text.as_bytes())
    {
        tracing::warn!(session_id = %s.session_id, error = %e, "where the parent changed was not noted");
    }
}

/// Where the parent `s` changed later than this worktree's copy of it, when its stories ran
/// in other worktrees and it moved on elsewhere (its final QA ran there): this copy is stale.
fn newer_copy(project: &Project, s: &Session) -> Option<ParentNote> {
    // A stale copy is one still waiting on its stories; nothing is made to find out.
    if !story::takes_stories(s) || !entries_dir(project, &s.session_id).is_dir() {
        return None;
    }
    let registry = Registry::of(project).ok()?;
    let note = registry
        .root
        .read(&parent_rel(&s.session_id))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<ParentNote>(&t).ok())?;
    (note.worktree != project.display() && note.updated_at > s.updated_at).then_some(note)
}

/// "this worktree's copy of task `t` is behind the one in /w on branch `b` (stage …)", or,
/// when the task completed there, "… is behind: the task completed on branch `b` in /w".
fn behind(s: &Session, note: &ParentNote) -> String {
    let branch = note
        .branch
        .as_ref()
        .map(|b| format!("branch `{}`", crate::code::clip(b, 60)));
    let worktree = crate::code::clip(&note.worktree, 200);
    let facts = format!(
        "(stage `{}`, state `{}`, updated {})",
        note.stage,
        note.state,
        crate::code::clip(&note.updated_at, 40)
    );
    if note.state == crate::workflow::State::Completed {
        return format!(
            "this worktree's copy of task `{}` is behind: the task completed on {} in {worktree} {facts}. Merge that branch here to see it",
            s.task_name,
            branch.unwrap_or_else(|| "its branch".into()),
        );
    }
    format!(
        "this worktree's copy of task `{}` is behind the one in {worktree}{} {facts}: the parent's work happens there. Merge that branch here to see it",
        s.task_name,
        branch.map(|b| format!(" on {b}")).unwrap_or_default(),
    )
}

/// Refuses a change to this worktree's copy of a parent that moved on in another worktree
/// ([`newer_copy`]): a change here would become a second version of the task.
pub fn stale_parent(project: &Project, s: &Session) -> Result<()> {
    match newer_copy(project, s) {
        None => Ok(()),
        Some(note) => Err(Error::argument(
            ErrorCode::InvalidState,
            format!("{}; nothing was changed", behind(s, &note)),
        )),
    }
}

/// For `status` of a stale copy of a parent ([`newer_copy`]): that it is stale, and where
/// the task is now.
pub fn stale_copy(project: &Project, s: &Session) -> Option<String> {
    let note = newer_copy(project, s)?;
    let said = behind(s, &note);
    let mut first = said.chars();
    Some(first.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + first.as_str() + "."
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::State;

    fn entry(sprint: u32, id: &str, state: State, at: &str) -> StoryState {
        StoryState {
            sprint,
            session_id: id.into(),
            task_name: format!("t-sprint-{sprint}-{id}"),
            owner: id.into(),
            branch: None,
            worktree: "/w".into(),
            stage: Stage::Qa,
            state,
            updated_at: at.into(),
            review_status: None,
            gone: false,
        }
    }

    #[test]
    fn a_story_whose_worktree_is_gone_says_so_and_keeps_its_recorded_branch() {
        let mut e = entry(1, "a", State::Generating, "2026-11-26T08:00:00.000Z");
        e.worktree = "/nonexistent/bmad-mcp/worktree-deleted".into();
        e.branch = Some("s1".into());
        let now = as_now(e.clone(), true);
        assert!(now.gone);
        assert_eq!(now.branch.as_deref(), Some("s1"));
        assert!(
            now.holder().contains("worktree-deleted (gone)"),
            "{}",
            now.holder()
        );
        // A story merged from another clone names a path of another machine: not gone.
        assert!(!as_now(e, false).gone);
    }

    #[test]
    fn one_state_per_story_and_a_double_claim_kept_in_view() {
        let got = merged(vec![
            entry(1, "a", State::Generating, "2026-11-26T08:00:00.000Z"),
            entry(1, "a", State::Completed, "2026-11-26T07:00:00.000Z"),
            entry(2, "b", State::Generating, "2026-11-26T08:00:00.000Z"),
            entry(2, "b", State::Generating, "2026-11-26T09:00:00.000Z"),
            entry(2, "c", State::Completed, "2026-11-26T09:30:00.000Z"),
        ]);
        let seen: Vec<(u32, &str, bool, &str)> = got
            .iter()
            .map(|e| {
                (
                    e.sprint,
                    e.session_id.as_str(),
                    e.completed(),
                    e.updated_at.as_str(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1, "a", true, "2026-11-26T07:00:00.000Z"),
                (2, "b", false, "2026-11-26T09:00:00.000Z"),
                (2, "c", true, "2026-11-26T09:30:00.000Z"),
            ]
        );
    }
}
