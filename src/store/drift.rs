//! A team's git in the session (docs/spec.md, "Working as a team"): the branch of each
//! change, the person deciding, the commit each stage document was written against, and
//! the drift since: the earlier documents and the project's files a later stage relied on
//! that changed after it was saved (by hand, or by another branch merged in); not, in a
//! later round of development, the files the developer changes, nor a parent's files once
//! its sprints run as stories (their branches merged in are the planned work). The same
//! call's git answers give where a round of development begins and what its submission
//! changed (summed up by `round.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::Project;
use crate::git::{Checkout, Repo};
use crate::workflow::machine::sha256_hex;
use crate::workflow::person::Person;
use crate::workflow::round::WorkTree;
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
    /// The project's files that differ from a commit, as git last said them during this
    /// call: the round's reading and the drift's record then ask git once between them.
    said: std::sync::Mutex<Option<(String, Vec<String>)>>,
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

    /// The project's files that differ from `commit`: asked of git when `fresh` or when
    /// this call has not asked for that commit yet, else as git said them in this call.
    fn changed_since(&self, repo: &Repo, commit: &str, fresh: bool) -> Option<Vec<String>> {
        let mut said = self.said.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, paths)) = said.as_ref().filter(|(c, _)| !fresh && c == commit) {
            return Some(paths.clone());
        }
        let paths = repo.changed_since(commit, &crate::git::PROJECT_FILES)?;
        *said = Some((commit.to_string(), paths.clone()));
        Some(paths)
    }

    /// For a submission at `dev`: the project's files now, against the commit the round
    /// began from; `None` when no round was recorded or git cannot say.
    pub fn work_tree_now(&self, session: &Session) -> Option<WorkTree> {
        if session.current_stage != Stage::Dev {
            return None;
        }
        let began = session.record(Stage::Dev).round_began.as_ref()?;
        let repo = self.repo.as_ref()?;
        let changed = self.changed_since(repo, &began.commit, true)?;
        super::round::work_tree(repo, &began.commit, changed)
    }

    /// Records in `after` the branch, and for each stage whose document this change saved,
    /// the commit it was written against, and where a round of development begins, the
    /// project's files then. Returns what git said of the project's files against a commit
    /// during the call, for a drift check in the same call ([`drift_after`]) that then need
    /// not ask again.
    pub fn record(&self, before: &Session, after: &mut Session) -> Option<Seen> {
        let repo = self.repo.as_ref()?;
        if self.facts.branch.is_some() {
            after.branch.clone_from(&self.facts.branch);
        }
        if crate::workflow::round::begins(before, after) {
            let head = self.facts.head.as_deref();
            after.record_mut(Stage::Dev).round_began = head.and_then(|h| {
                let changed = self.changed_since(repo, h, false)?;
                super::round::work_tree(repo, h, changed)
            });
        }
        let mut basis = None;
        for stage in Stage::ALL {
            let saved = after.record(stage).artifact.as_ref();
            if saved.is_some() && saved != before.record(stage).artifact.as_ref() {
                let b = basis.get_or_insert_with(|| self.basis_of(repo));
                after
                    .record_mut(stage)
                    .written_against
                    .clone_from(&b.as_ref().map(|b| b.0.clone()));
            }
        }
        let seen = basis.flatten().map(|(_, seen)| seen);
        // A change that saved nothing may still have asked git (a round that began).
        seen.or_else(|| {
            let said = self.said.lock().unwrap_or_else(|e| e.into_inner());
            let (commit, changed) = said.clone()?;
            Some(Seen { commit, changed })
        })
    }
}

/// The project's files that differ from a commit, as git said them during a call.
#[derive(Debug, Clone)]
pub struct Seen {
    commit: String,
    changed: Vec<String>,
}

impl GitNow {
    /// The commit checked out, and the project's files that differ from it now.
    fn basis_of(&self, repo: &Repo) -> Option<(Basis, Seen)> {
        let commit = self.facts.head.clone()?;
        let changed = self.changed_since(repo, &commit, false)?;
        basis_from(repo, commit, changed)
    }
}

/// A [`Basis`] of `commit` with the files that differ from it, and what git said.
fn basis_from(repo: &Repo, commit: String, changed: Vec<String>) -> Option<(Basis, Seen)> {
    let kept = &changed[..changed.len().min(MAX_UNCOMMITTED)];
    let ids = repo.blob_ids(kept, &commit);
    let basis = Basis {
        commit: commit.clone(),
        uncommitted: kept.iter().cloned().zip(ids).collect(),
        partial: changed.len() > kept.len(),
    };
    Some((basis, Seen { commit, changed }))
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

/// The project's files whose content now is not the one `basis` saw.
fn changed_files(repo: &Repo, basis: &Basis, seen: Option<&Seen>) -> Option<Vec<String>> {
    let now = match seen.filter(|s| s.commit == basis.commit) {
        Some(s) => s.changed.clone(),
        None => repo.changed_since(&basis.commit, &crate::git::PROJECT_FILES)?,
    };
    // A file uncommitted then is unchanged when its content is the same blob now.
    let then: Vec<String> = now
        .iter()
        .filter(|p| basis.uncommitted.contains_key(*p))
        .cloned()
        .collect();
    let ids = repo.blob_ids(&then, &basis.commit);
    let same: Vec<&String> = then
        .iter()
        .zip(ids)
        .filter(|(p, id)| basis.uncommitted.get(*p) == Some(id))
        .map(|(p, _)| p)
        .collect();
    let mut out: Vec<String> = now.iter().filter(|p| !same.contains(p)).cloned().collect();
    // Uncommitted then, and back to the commit's content now: changed too.
    out.extend(
        basis
            .uncommitted
            .keys()
            .filter(|p| !now.contains(p))
            .cloned(),
    );
    out.sort();
    out.dedup();
    Some(out)
}
