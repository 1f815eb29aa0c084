//! The sprints a team holds on its remote, for the humans who lead it: each claim read
//! with who made it, from which clone and branch, and since when (the claim commit's
//! time), through one bounded fetch ([`crate::git::Repo::board`]); when the remote cannot
//! be reached, the clone's copies from its last fetch, said to be that old. A claim whose
//! clone is gone is released here, recorded on the remote with who released it.

use serde::{Deserialize, Serialize};

use super::remote::Claimant;
use super::Registry;
use crate::files::Project;
use crate::git::{Board, RemoteRef, Repo};

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

/// The claims on the team's remote, as read now or at the clone's last fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    pub remote: String,
    pub held: Vec<Held>,
    pub released: Vec<Released>,
    /// Why the remote could not be reached, and when the copies shown were fetched
    /// (`None`: never, as far as this clone knows).
    pub stale: Option<(String, Option<String>)>,
}

impl Claims {
    /// The claim of `sprint` of the parent `parent_id`.
    pub fn of(&self, parent_id: &str, sprint: u32) -> Option<&Held> {
        self.held
            .iter()
            .find(|h| h.parent_id == parent_id && h.sprint == sprint)
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

/// The claims on the remote of the project's repository; `None` outside git or without a
/// remote.
pub fn read(project: &Project) -> Option<Claims> {
    let repo = Repo::at(&project.root)?;
    let Board {
        remote,
        claims,
        released,
        unreachable,
    } = repo.board()?;
    let registry = Registry::of(project).ok();
    let stale = match unreachable {
        None => {
            let now = crate::workflow::session::timestamp(chrono::Utc::now());
            if let Some(r) = &registry {
                let _ = r
                    .root
                    .write_atomic(FETCHED_REL, format!("{now}\n").as_bytes());
            }
            None
        }
        Some(why) => {
            let at = registry
                .and_then(|r| r.root.read(FETCHED_REL).ok().flatten())
                .map(|t| t.trim().to_string());
            Some((why, at))
        }
    };
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
    Some(Claims {
        remote,
        held,
        released,
        stale,
    })
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

/// Who holds which sprint of the parent `parent_id` on the team's remote, for its
/// `status`: one line, fresh or said to be as old as the clone's last fetch; `None` when
/// no sprint of it is claimed there (or there is no remote).
pub fn holders(
    project: &Project,
    parent_id: &str,
    titles: &dyn Fn(u32) -> String,
) -> Option<String> {
    let claims = read(project)?;
    let now = chrono::Utc::now();
    let held: Vec<String> = claims
        .held
        .iter()
        .filter(|h| h.parent_id == parent_id)
        .map(|h| {
            let who = h.claimant.as_ref().map_or_else(
                || "someone (the claim could not be read)".to_string(),
                // Another clone's words, from the network: cut short, nothing hidden.
                |c| crate::code::visible(&crate::code::clip(&c.named(), 300)),
            );
            format!(
                "sprint {} ({}) by {who}, since {}",
                h.sprint,
                titles(h.sprint),
                crate::workflow::when::shown(&h.since, now)
            )
        })
        .collect();
    if held.is_empty() {
        return None;
    }
    let how = match &claims.stale {
        None => "read now".to_string(),
        Some((why, at)) => format!(
            "the remote could not be reached ({}), so as this clone last fetched them{}",
            crate::code::visible(&crate::code::clip(why, 200)),
            at.as_deref()
                .map(|t| format!(", {}", crate::workflow::when::shown(t, now)))
                .unwrap_or_default()
        ),
    };
    Some(format!(
        "Claimed on the remote `{}` ({how}): {}. `bmad-mcp claims` lists every claim; `bmad-mcp claims release <task> <sprint>` frees one whose clone is gone.",
        claims.remote,
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
}
