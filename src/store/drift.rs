//! A team's git in the session (docs/spec.md, "Working as a team"): the branch of each
//! change, the person deciding, the commit each stage document was written against, and
//! the drift since: the earlier documents and the project's files a later stage relied on
//! that changed after it was saved (by hand, or by another branch merged in); not, in a
//! later round of development, the files the developer changes, nor a parent's files once
//! its sprints run as stories (their branches merged in are the planned work), nor a file
//! whose content is the blob the server last wrote there ([`super::written`]). New files are
//! recorded by their blob as changed ones are, so work committed unchanged is no drift. The
//! same call's git answers give where a round of development is measured from and what its
//! submission changed (summed up by [`super::dev_round`]).

use schemars::JsonSchema;
use serde::Serialize;

use super::dev_round::{self, all};
use super::written::Written;
use super::Project;
use crate::git::{Checkout, GitPath, Repo, MAX_PATHS, PROJECT_FILES};
use crate::workflow::dev_round::WorkTree;
use crate::workflow::machine::sha256_hex;
use crate::workflow::person::Person;
use crate::workflow::session::{Basis, Session};
use crate::workflow::stage::Stage;

/// Uncommitted files kept in a [`Basis`] at most.
const MAX_UNCOMMITTED: usize = 200;
/// Files a drift report names at most (it counts the rest).
pub const MAX_NAMED: usize = 20;

/// What git says at a change, asked before the lock is taken.
pub struct GitNow {
    repo: Option<Repo>,
    /// The person deciding (for a decision): the settings' (`--owner`, `BMAD_OWNER`), else
    /// git's identity.
    pub person: Option<Person>,
    facts: Checkout,
    /// What git and the server's record said during this call: the round's reading and
    /// the drift's record then ask git once between them.
    said: std::sync::Mutex<Said>,
}

/// What this call read: the tracked files that differ from a commit, the new ones (`None`
/// inside: git could not list them, or named too many), the server's record.
#[derive(Default)]
struct Said {
    tracked: Option<(String, Vec<GitPath>)>,
    untracked: Option<Option<Vec<GitPath>>>,
    written: Option<Written>,
}

impl GitNow {
    pub(super) fn of(project: &Project, decides: bool, over: Option<&Person>) -> GitNow {
        let repo = Repo::at(&project.root);
        let owner = over.filter(|_| decides).cloned();
        let facts = match &repo {
            Some(r) => r.facts(decides && owner.is_none()),
            None => Checkout::default(),
        };
        let person = owner.or_else(|| facts.identity.clone().filter(|_| decides));
        GitNow {
            repo,
            person,
            facts,
            said: Default::default(),
        }
    }

    /// The id git gives `bytes` as a blob in this repository (a SHA-256 one where its
    /// commits are named so; SHA-1, git's default, elsewhere and outside git), computed
    /// here: what the change's record keeps of each file the server wrote.
    pub fn blob_id(&self, bytes: &[u8]) -> String {
        let sha256 = self.facts.head.as_ref().is_some_and(|h| h.len() == 64);
        crate::git::blob_id(bytes, sha256)
    }

    fn said(&self) -> std::sync::MutexGuard<'_, Said> {
        self.said.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The project's tracked files that differ from `commit`: asked of git when `fresh`
    /// or when this call has not asked for that commit yet, else as git said them in this
    /// call.
    pub(super) fn changed_since(
        &self,
        repo: &Repo,
        commit: &str,
        fresh: bool,
    ) -> Option<Vec<GitPath>> {
        if let Some((_, paths)) = self
            .said()
            .tracked
            .as_ref()
            .filter(|(c, _)| !fresh && c == commit)
        {
            return Some(paths.clone());
        }
        let paths = repo.changed_since(commit, &PROJECT_FILES)?;
        self.said().tracked = Some((commit.to_string(), paths.clone()));
        Some(paths)
    }

    /// The project's new files, untracked and not ignored, asked once a call (again when
    /// `fresh`); `None` when git cannot say.
    pub(super) fn untracked(&self, repo: &Repo, fresh: bool) -> Option<Vec<GitPath>> {
        if let Some(known) = self.said().untracked.as_ref().filter(|_| !fresh) {
            return known.clone();
        }
        let paths = repo.untracked(&PROJECT_FILES);
        self.said().untracked = Some(paths.clone());
        paths
    }

    /// The repository, where the project is in one.
    pub(super) fn repo(&self) -> Option<&Repo> {
        self.repo.as_ref()
    }

    /// The commit checked out.
    pub(super) fn head(&self) -> Option<&str> {
        self.facts.head.as_deref()
    }

    /// The server's record of the files it wrote, read once a call.
    pub(super) fn written(&self, repo: &Repo) -> Written {
        self.said()
            .written
            .get_or_insert_with(|| Written::read(repo))
            .clone()
    }

    /// Every project file that differs from `commit`, tracked and new, sorted; `None` when
    /// git cannot say or named too many.
    fn differ(&self, repo: &Repo, commit: &str, fresh: bool) -> Option<Vec<GitPath>> {
        let tracked = self.changed_since(repo, commit, fresh)?;
        if tracked.len() >= MAX_PATHS {
            return None;
        }
        Some(all(tracked, &self.untracked(repo, fresh)?))
    }

    /// The project's files now against `commit`, as a round measures them, less `pending`.
    fn work_tree(
        &self,
        repo: &Repo,
        commit: &str,
        fresh: bool,
        pending: &[String],
    ) -> Option<WorkTree> {
        let paths = self.differ(repo, commit, fresh)?;
        dev_round::work_tree(repo, commit, &paths, &self.written(repo), pending)
    }

    /// For a submission at `dev`: the project's files now, against the commit the round
    /// is measured from; `None` when no round was recorded or git cannot say.
    pub fn work_tree_now(&self, session: &Session) -> Option<WorkTree> {
        let began = crate::workflow::dev_round::basis(session)?;
        self.work_tree(self.repo.as_ref()?, &began.commit, true, &[])
    }

    /// Records in `after` the branch, and for each stage whose document this change saved,
    /// the commit it was written against and the project's files that differed from it.
    pub fn record(&self, before: &Session, after: &mut Session) {
        let Some(repo) = self.repo.as_ref() else {
            return;
        };
        if self.facts.branch.is_some() {
            after.branch.clone_from(&self.facts.branch);
        }
        let mut basis = None;
        for stage in Stage::ALL {
            let saved = after.record(stage).artifact.as_ref();
            if saved.is_some() && saved != before.record(stage).artifact.as_ref() {
                let b = basis.get_or_insert_with(|| self.basis_of(repo));
                after.record_mut(stage).written_against.clone_from(b);
            }
        }
    }

    /// Records in `after` where the round of development is measured from (docs/spec.md
    /// §7.15), after the server's own writes for this change (`pending`: the project's
    /// files it writes once the change is written): at an accepted submission of
    /// development, the project's files now, so that what is done while the task waits
    /// for the human counts for the next submission; when a round begins with no such
    /// submission before it, the files now. A round that begins after one keeps it.
    pub fn round(&self, before: &Session, after: &mut Session, pending: &[String]) {
        let (Some(repo), Some(head)) = (self.repo.as_ref(), self.facts.head.as_deref()) else {
            return;
        };
        if crate::workflow::dev_round::measures(before, after) {
            let reading = self.work_tree(repo, head, false, pending);
            crate::workflow::dev_round::set_basis(after, reading);
        }
    }

    /// What git said of the project's tracked files against a commit during the call, for
    /// a drift check in the same call ([`drift_after`]) that then need not ask again.
    pub fn seen(&self) -> Option<Seen> {
        let (commit, changed) = self.said().tracked.clone()?;
        Some(Seen { commit, changed })
    }
}

/// The project's tracked files that differ from a commit, as git said them during a call.
#[derive(Debug, Clone)]
pub struct Seen {
    commit: String,
    changed: Vec<GitPath>,
}

impl GitNow {
    /// The commit checked out, and the project's files that differed from it then, with
    /// the blob of each (the server's own files left out).
    fn basis_of(&self, repo: &Repo) -> Option<Basis> {
        let commit = self.facts.head.clone()?;
        let tracked = self.changed_since(repo, &commit, false)?;
        let untracked = self.untracked(repo, false);
        let complete = untracked.is_some() && tracked.len() < MAX_PATHS;
        let paths = all(tracked, untracked.as_deref().unwrap_or_default());
        let written = self.written(repo);
        // Enough to keep as many as a basis holds once the server's own are left out.
        let named = paths.iter().filter(|p| written.names(&p.key())).count();
        let looked = &paths[..paths.len().min(MAX_UNCOMMITTED + named)];
        let ids = repo.blob_ids(looked, &commit);
        let theirs: Vec<(String, Option<String>)> = looked
            .iter()
            .zip(ids)
            .map(|(p, id)| (p.key(), id))
            .filter(|(key, id)| !written.is_ours(key, id.as_deref()))
            .collect();
        Some(Basis {
            commit,
            partial: !complete || theirs.len() > MAX_UNCOMMITTED || looked.len() < paths.len(),
            uncommitted: theirs.into_iter().take(MAX_UNCOMMITTED).collect(),
        })
    }
}

/// What changed since a later stage relied on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Drift {
    /// The earlier stage documents changed since they were saved (edited by hand, or by a
    /// merge), each relative to the project.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<String>,
    /// The stage whose document the project's files are compared with (the latest saved
    /// in a git repository) …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_stage: Option<Stage>,
    /// … the commit it was written against …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_commit: Option<String>,
    /// … and the project's files changed since (at most [`MAX_NAMED`]) …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// … with how many in all.
    #[serde(skip_serializing_if = "is_zero")]
    pub files_total: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Drift {
    /// The warning, in words.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.documents.is_empty() {
            parts.push(format!(
                "Drift: {} changed after a later stage relied on it (edited by hand, or by a merge); check that the later documents still hold.",
                self.documents.join(", ")
            ));
        }
        if let (Some(stage), Some(commit)) = (self.since_stage, &self.since_commit) {
            if self.files_total > 0 {
                let more = self.files_total - self.files.len();
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                parts.push(format!(
                    "Drift: {} project file(s) changed since the {} document was written against commit {}: {}{more}.",
                    self.files_total,
                    stage.role(),
                    &commit[..12.min(commit.len())],
                    self.files.join(", ")
                ));
            }
        }
        parts.join(" ")
    }
}

/// What changed since the session's stages relied on it; `None` when nothing did.
pub fn drift(project: &Project, session: &Session) -> Option<Drift> {
    drift_after(project, session, None)
}

/// [`drift`], with what git said of the files during this call, when it did.
pub fn drift_after(project: &Project, session: &Session, seen: Option<&Seen>) -> Option<Drift> {
    let documents = changed_documents(project, session);
    let mut d = Drift {
        documents,
        since_stage: None,
        since_commit: None,
        files: Vec::new(),
        files_total: 0,
    };
    let latest = Stage::ALL
        .iter()
        .rev()
        .find_map(|s| session.record(*s).written_against.as_ref().map(|b| (*s, b)));
    // In a later round of development the files changed since are the developer's own
    // work, which the round is for: only the first round hears of files changed since the
    // plan.
    // So are a parent's, once its sprints run as stories: the files their branches bring
    // in are the plan's own work merged, not a change under it.
    let own_work = (session.current_stage == Stage::Dev
        && session.record(Stage::Dev).iteration > 0)
        || !session.stories.is_empty();
    if let Some((stage, basis)) = latest.filter(|_| !own_work) {
        let files = Repo::at(&project.root).and_then(|r| changed_files(&r, basis, seen));
        if let Some(files) = files {
            d.since_stage = Some(stage);
            d.since_commit = Some(basis.commit.clone());
            d.files_total = files.len();
            d.files = files.into_iter().take(MAX_NAMED).collect();
        }
    }
    (!d.documents.is_empty() || d.files_total > 0).then_some(d)
}

/// The saved documents of stages before the current one whose file no longer holds what
/// was saved.
fn changed_documents(project: &Project, session: &Session) -> Vec<String> {
    let current = session.current_stage.index();
    let done = session.current_state == crate::workflow::State::Completed;
    Stage::ALL
        .iter()
        .filter(|s| s.index() < current || (done && **s != session.current_stage))
        .filter_map(|s| session.record(*s).artifact.as_ref())
        .filter(|a| match project.read(&a.path) {
            Ok(Some(text)) => sha256_hex(&text) != a.sha256,
            Ok(None) => true,
            Err(_) => false,
        })
        .map(|a| a.path.clone())
        .collect()
}

/// The project's files whose content now is not the one `basis` saw, nor the one the
/// server last wrote there.
fn changed_files(repo: &Repo, basis: &Basis, seen: Option<&Seen>) -> Option<Vec<String>> {
    let now = match seen.filter(|s| s.commit == basis.commit) {
        Some(s) => s.changed.clone(),
        None => repo.changed_since(&basis.commit, &PROJECT_FILES)?,
    };
    let written = Written::read(repo);
    let now: Vec<(String, GitPath)> = now.into_iter().map(|p| (p.key(), p)).collect();
    let listed = |key: &str| now.iter().any(|(k, _)| k == key);
    // Whose content is looked at: the files that differed then, listed now or not (a new
    // file still untracked is not), and the server's own that are listed.
    let looked: Vec<(String, GitPath)> = now
        .iter()
        .filter(|(k, _)| basis.uncommitted.contains_key(k) || written.names(k))
        .cloned()
        .chain(
            basis
                .uncommitted
                .keys()
                .filter(|k| !listed(k))
                .map(|k| (k.clone(), GitPath::from(k.as_str()))),
        )
        .collect();
    let paths: Vec<GitPath> = looked.iter().map(|(_, p)| p.clone()).collect();
    let ids = repo.blob_ids(&paths, &basis.commit);
    let same: Vec<&String> = looked
        .iter()
        .zip(ids)
        .filter(|((k, _), id)| {
            basis.uncommitted.get(k) == Some(id) || written.is_ours(k, id.as_deref())
        })
        .map(|((k, _), _)| k)
        .collect();
    // What git lists now, and what differed then that it does not list (back to the
    // commit's content, or new and still untracked): changed, unless its content is the
    // one seen then or the one the server last wrote.
    let mut out: Vec<String> = now
        .iter()
        .map(|(k, _)| k)
        .chain(basis.uncommitted.keys().filter(|k| !listed(k)))
        .filter(|k| !same.contains(k))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    Some(out)
}
