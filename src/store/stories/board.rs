//! The sprints a team holds on its remote, for the humans who lead it: each claim read
//! with who made it, from which clone and branch, and since when (the claim commit's
//! time), through one bounded fetch ([`crate::git::Repo::board`]) for the commands a person
//! types, or, for the model's `status` and the dashboard, the clone's copies from its last
//! fetch while they are young, said to be that old, refreshed in the background ([`kept`]);
//! when the remote cannot be reached, the last fetch's copies, said to be that old. A claim whose
//! clone is gone is released here, recorded on the remote with who released it.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::remote::Claimant;
use super::Registry;
use crate::code::{clip, visible};
use crate::files::Project;
use crate::git::{Board, RemoteRef, Repo};
use crate::workflow::when;

/// Where a clone notes when its claims were last fetched, beside the stories' entries.
const FETCHED_REL: &str = ".bmad-task/claims-fetched";

/// A sprint claimed on the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub parent_id: String,
    pub sprint: u32,
    /// Who claimed it, as the claim says (`None`: the claim could not be read).
    pub claimant: Option<Claimant>,
    /// When it was claimed.
    pub since: String,
    claim: RemoteRef,
}

impl Held {
    /// The claim's commit: what a release is bound to.
    pub fn commit(&self) -> &str {
        &self.claim.commit
    }
}

/// The record of a released claim, as its commit's message says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Release {
    pub released_by: String,
    pub via: String,
    pub claim: Option<Claimant>,
}

/// A claim released, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub parent_id: String,
    pub sprint: u32,
    pub at: String,
    pub record: Option<Release>,
}

/// How the claims shown were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// Fetched from the remote now.
    Now,
    /// The clone's copies from its fetch at this time, younger than [`KEPT_FOR`]; a fetch
    /// refreshes them in the background.
    Kept(String),
    /// The claims could not be fetched (why: the remote out of reach, or another git
    /// process's lock held past the retries), so the copies from the clone's last fetch
    /// (when: `None`, never as far as this clone knows).
    Unreachable(String, Option<String>),
}

/// The claims on the team's remote, as read now or at the clone's last fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub remote: String,
    pub held: Vec<Held>,
    pub released: Vec<Released>,
    pub read: Read,
}

impl Claims {
    /// The claim of `sprint` of the parent `parent_id`.
    pub fn of(&self, parent_id: &str, sprint: u32) -> Option<&Held> {
        self.held
            .iter()
            .find(|h| h.parent_id == parent_id && h.sprint == sprint)
    }

    /// How they were read, for a person: "read now", "as of 40 s ago", or why they could
    /// not be fetched and how old the copies are.
    pub fn how_read(&self, now: chrono::DateTime<chrono::Utc>) -> String {
        let age = |t: &str| {
            chrono::DateTime::parse_from_rfc3339(t.trim())
                .map(|t| when::ago_in_seconds(t.with_timezone(&chrono::Utc), now))
                .unwrap_or_else(|_| visible(&clip(t, 40)))
        };
        match &self.read {
            Read::Now => "read now".into(),
            Read::Kept(at) => format!("as of {}, this clone's last fetch", age(at)),
            Read::Unreachable(why, at) => format!(
                "they could not be fetched ({}), so as this clone last fetched them, {}",
                visible(&clip(why, 200)),
                at.as_deref().map_or_else(|| "never before".into(), age)
            ),
        }
    }
}

/// `<parent id>/sprint-<n>` after `prefix`, read from a ref's name.
fn parent_and_sprint(refname: &str, prefix: &str) -> Option<(String, u32)> {
    let rest = refname.strip_prefix(prefix)?;
    let mut parts = rest.split('/');
    let parent = parts.next()?.to_string();
    let sprint = parts.next()?.strip_prefix("sprint-")?.parse().ok()?;
    Some((parent, sprint))
}

/// The claims on the remote of the project's repository, fetched now (bounded in time);
/// `None` outside git or without a remote.
pub fn read(project: &Project) -> Option<Claims> {
    let repo = Repo::at(&project.root)?;
    let board = repo.board()?;
    let registry = Registry::of(project).ok();
    let read = match &board.unreachable {
        None => {
            if let Some(r) = &registry {
                let now = crate::workflow::session::timestamp(chrono::Utc::now());
                let _ = r
                    .root
                    .write_atomic(FETCHED_REL, format!("{now}\n").as_bytes());
            }
            Read::Now
        }
        Some(why) => Read::Unreachable(why.clone(), registry.as_ref().and_then(last_fetch)),
    };
    Some(claims_of(board, read))
}

/// The claims as the clone's last fetch left them, when that fetch is younger than
/// [`KEPT_FOR`], with a fetch started in the background so that the next reading is
/// fresh; else fetched now, as [`read`] does. For the model's `status` and the dashboard,
/// which must not wait on the network each time they are read.
pub fn kept(project: &Project) -> Option<Claims> {
    let registry = Registry::of(project).ok();
    let at = registry.as_ref().and_then(last_fetch);
    let young = at.as_deref().is_some_and(|t| {
        chrono::DateTime::parse_from_rfc3339(t)
            .is_ok_and(|t| chrono::Utc::now() - t.with_timezone(&chrono::Utc) <= KEPT_FOR)
    });
    let (Some(at), true) = (at, young) else {
        return read(project);
    };
    let board = Repo::at(&project.root)?.board_kept()?;
    refresh_in_background(project);
    Some(claims_of(board, Read::Kept(at)))
}

/// How long the copies of a clone's last fetch are shown without waiting on a new fetch.
pub const KEPT_FOR: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// One fetch of the claims at a time per process, run on a thread of its own; a reading
/// while it runs is given the copies it is about to replace.
fn refresh_in_background(project: &Project) {
    static RUNNING: AtomicBool = AtomicBool::new(false);
    if RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    let project = project.clone();
    let started = std::thread::Builder::new()
        .name("bmad-claims-fetch".into())
        .spawn(move || {
            let _ = read(&project);
            RUNNING.store(false, Ordering::Release);
        });
    if started.is_err() {
        RUNNING.store(false, Ordering::Release);
    }
}

/// When this clone last fetched the claims, as it noted it.
fn last_fetch(registry: &Registry) -> Option<String> {
    registry
        .root
        .read(FETCHED_REL)
        .ok()
        .flatten()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn claims_of(board: Board, read: Read) -> Claims {
    let Board {
        remote,
        claims,
        released,
        ..
    } = board;
    let held = claims
        .into_iter()
        .filter_map(|claim| {
            let (parent_id, sprint) = parent_and_sprint(&claim.refname, crate::git::CLAIMS)?;
            Some(Held {
                parent_id,
                sprint,
                claimant: serde_json::from_str(&claim.message).ok(),
                since: claim.at.clone(),
                claim,
            })
        })
        .collect();
    let released = released
        .into_iter()
        .filter_map(|r| {
            let (parent_id, sprint) = parent_and_sprint(&r.refname, crate::git::RELEASED)?;
            Some(Released {
                parent_id,
                sprint,
                at: r.at,
                record: serde_json::from_str(&r.message).ok(),
            })
        })
        .collect();
    Claims {
        remote,
        held,
        released,
        read,
    }
}

/// Releases `held` on the remote, recorded as released by `by` through `via`: refused when
/// the claim moved since it was read (someone took or released it meanwhile).
pub fn release(project: &Project, held: &Held, by: &str, via: &str) -> Result<(), String> {
    let repo = Repo::at(&project.root).ok_or("the project is not in a git repository")?;
    let record = Release {
        released_by: by.to_string(),
        via: via.to_string(),
        claim: held.claimant.clone(),
    };
    let record_ref = format!(
        "{}{}/sprint-{}/{}",
        crate::git::RELEASED,
        held.parent_id,
        held.sprint,
        held.commit()
    );
    let message = serde_json::to_string(&record).unwrap_or_default();
    repo.release(&held.claim, &record_ref, &message)
}

/// Who holds which sprint of the parent `parent_id` among `claims`, for its `status`, its
/// row in `list` and its page: one line saying how the claims were read (how old they are
/// when not read now); `None` when no sprint of it is claimed.
pub fn holders(claims: &Claims, parent_id: &str, titles: &dyn Fn(u32) -> String) -> Option<String> {
    let now = chrono::Utc::now();
    let held: Vec<String> = claims
        .held
        .iter()
        .filter(|h| h.parent_id == parent_id)
        .map(|h| {
            let who = h.claimant.as_ref().map_or_else(
                || "someone (the claim could not be read)".to_string(),
                // Another clone's words, from the network: cut short, nothing hidden.
                |c| visible(&clip(&c.named(), 300)),
            );
            format!(
                "sprint {} ({}) by {who}, since {}",
                h.sprint,
                titles(h.sprint),
                when::shown(&h.since, now)
            )
        })
        .collect();
    if held.is_empty() {
        return None;
    }
    Some(format!(
        "Claimed on the remote `{}` ({}): {}. `bmad-mcp claims` lists every claim; `bmad-mcp claims release <task> <sprint>` frees one whose clone is gone.",
        visible(&claims.remote),
        claims.how_read(now),
        held.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_its_parent_and_sprint_and_nothing_else_does() {
        let id = "0b6c3c9e-3c1e-4a4e-9d59-2f0e6e1c7a10";
        assert_eq!(
            parent_and_sprint(
                &format!("refs/bmad/claims/{id}/sprint-3"),
                crate::git::CLAIMS
            ),
            Some((id.to_string(), 3))
        );
        assert_eq!(
            parent_and_sprint(
                &format!("refs/bmad/released/{id}/sprint-2/abc"),
                crate::git::RELEASED
            ),
            Some((id.to_string(), 2))
        );
        assert_eq!(
            parent_and_sprint(&format!("refs/bmad/claims/{id}/x"), crate::git::CLAIMS),
            None
        );
    }

    /// A fetch that finally failed (here on another git process's lock) says why and how
    /// old the copies shown are.
    #[test]
    fn a_failed_fetch_says_why_and_how_old_the_copies_shown_are() {
        let now = chrono::Utc::now();
        let at = crate::workflow::session::timestamp(now - chrono::TimeDelta::seconds(40));
        let why = "another git process held a lock of the clone, 4 times: cannot lock ref 'refs/bmad/claims/p/sprint-1'";
        let claims = |read| Claims {
            remote: "origin".into(),
            held: Vec::new(),
            released: Vec::new(),
            read,
        };
        assert_eq!(
            claims(Read::Unreachable(why.into(), Some(at.clone()))).how_read(now),
            format!(
                "they could not be fetched ({why}), so as this clone last fetched them, 40 s ago"
            )
        );
        assert!(claims(Read::Unreachable(why.into(), None))
            .how_read(now)
            .ends_with("last fetched them, never before"));
        assert_eq!(
            claims(Read::Kept(at)).how_read(now),
            "as of 40 s ago, this clone's last fetch"
        );
    }
}
