//! A story's sprint claimed on the team's remote ([`crate::git::Repo::claim`]), so that
//! every clone that reaches the remote sees the sprint taken before work starts. The claim
//! is made before the project is locked: a network round trip of up to
//! [`crate::git::NETWORK_DEADLINE`] must not hold up the project's other calls.

use serde::{Deserialize, Serialize};

use crate::code::ErrorCode;
use crate::error::{Error, Result};
use crate::files::Project;
use crate::git::{Claim, Repo};
use crate::workflow::session::Session;

/// Who claims a sprint, as the claim's commit message says it (JSON): enough for another
/// clone to name the holder, and for this worktree to know its own earlier claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claimant {
    pub owner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub worktree: String,
    pub sprint: u32,
    /// The machine the claim was taken on (its host name): `worktree` is a path there.
    /// Claims taken before it was recorded have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Its story completed (named here): the claim stays, so that the sprint is not built
    /// twice, and is never taken for a dead clone's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// Who chose this story where the sprint had two (the human, and the channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_by: Option<String>,
}

impl Claimant {
    /// "Ada on branch `s1` in /work/ada", with " (gone)" after a worktree that is gone,
    /// or " (on lab-7)" after one of another machine, and ", story `x` completed" once
    /// its story completed.
    pub fn named(&self) -> String {
        let mut there = match self.elsewhere() {
            _ if self.gone() => " (gone)".to_string(),
            Some(h) => format!(" (on {h})"),
            None => String::new(),
        };
        if let Some(story) = &self.done {
            there.push_str(&format!(", story `{story}` completed"));
        }
        let who =
            crate::workflow::session::held_by(&self.owner, self.branch.as_deref(), &self.worktree);
        format!("{who}{there}")
    }

    /// Whether the claim's worktree is gone: taken on this machine, and no folder is at
    /// its path now. A path of another machine (or of a claim that does not say which)
    /// is not looked for here, where it means nothing.
    pub fn gone(&self) -> bool {
        self.done.is_none()
            && self.host.is_some()
            && self.host.as_deref() == super::identity::host()
            && !std::path::Path::new(&self.worktree).is_dir()
    }

    /// The machine the claim was taken on, when it is another than this one.
    pub fn elsewhere(&self) -> Option<&str> {
        self.host
            .as_deref()
            .filter(|h| Some(*h) != super::identity::host())
    }

    /// A claim of sprint 1 by `owner` in `worktree`, for tests.
    #[cfg(test)]
    pub(super) fn of(owner: &str, worktree: &str) -> Claimant {
        Claimant {
            owner: owner.into(),
            branch: None,
            worktree: worktree.into(),
            sprint: 1,
            host: None,
            done: None,
            kept_by: None,
        }
    }

    /// Whether `other` is the same story's claim: the same sprint, person and worktree.
    pub fn same_story(&self, other: &Claimant) -> bool {
        self.sprint == other.sprint && self.owner == other.owner && self.worktree == other.worktree
    }
}

/// A claim made on the team's remote: what the reply says of it, and whether this start
/// pushed it (and so must take it back if the start fails).
pub struct RemoteClaim {
    pub said: String,
    pub won: bool,
    refname: String,
}

impl RemoteClaim {
    /// Takes back a claim this start pushed, for a story whose start failed after it.
    pub fn take_back(&self, project: &Project) {
        if self.won {
            if let Some(repo) = Repo::at(&project.root) {
                repo.unclaim(&self.refname);
            }
        }
    }
}

/// The ref on the team's remote that says who holds `sprint` of `parent`.
pub fn claim_ref(parent: &Session, sprint: u32) -> String {
    format!("refs/bmad/claims/{}/sprint-{sprint}", parent.session_id)
}

/// Claims `who.sprint` of `parent` on the team's remote: refused when someone else claimed
/// it there first, naming who; `None` outside git or without a remote. A claim this
/// worktree's owner made earlier (a start that failed before it could take it back) is
/// theirs again.
pub fn claim(project: &Project, parent: &Session, who: &Claimant) -> Result<Option<RemoteClaim>> {
    let Some(repo) = Repo::at(&project.root) else {
        return Ok(None);
    };
    let message = serde_json::to_string(who).unwrap_or_default();
    let refname = claim_ref(parent, who.sprint);
    let sprint = who.sprint;
    let (said, won) = match repo.claim(&refname, &message) {
        Claim::NoRemote => return Ok(None),
        Claim::Won { remote } => (
            format!("Sprint {sprint} is claimed for this story on the remote `{remote}` ({refname}): every clone that fetches from it sees it taken."),
            true,
        ),
        Claim::Held {
            remote,
            message: theirs,
        } => {
            let held: Option<Claimant> = serde_json::from_str(&theirs).ok();
            match held {
                Some(h) if h.owner == who.owner && h.worktree == who.worktree => (
                    format!("Sprint {sprint} was already claimed from this worktree on `{remote}`."),
                    false,
                ),
                // The same person from another clone (theirs was deleted, or re-cloned):
                // their own claim, moved here so that it names where the work now is.
                Some(h) if h.owner == who.owner => (take_over(&repo, &refname, &remote, &h, &message), false),
                held => {
                    // Another clone's words, from the network: cut short, nothing hidden.
                    let holder = held.map_or_else(
                        || "another clone (its claim could not be read)".to_string(),
                        |h| crate::code::visible(&crate::code::clip(&h.named(), 300)),
                    );
                    return Err(Error::argument(
                        ErrorCode::SprintTaken,
                        format!(
                            "sprint {sprint} of task `{}` is claimed on the remote `{remote}` by {holder}: one story per sprint, whoever pushed the claim first. Work on another sprint, or agree with its holder ({refname}). If the clone that claimed it is gone, `bmad-mcp claims` lists the team's claims and `bmad-mcp claims release {} {sprint}`, run by a person in a terminal, frees this one",
                            parent.task_name, parent.task_name
                        ),
                    ));
                }
            }
        }
        Claim::Unreachable {
            remote,
            why,
            pending,
        } => (
            if pending {
                format!("The claim of sprint {sprint} is kept in this clone for now: the remote `{remote}` could not be reached ({why}). The next call that reaches it pushes the claim; if another clone claimed the sprint there meanwhile, this story is told and stops.")
            } else {
                format!("The claim of sprint {sprint} is local to this clone: the remote `{remote}` could not be reached ({why}). Another clone may claim the same sprint meanwhile.")
            },
            false,
        ),
    };
    Ok(Some(RemoteClaim { said, won, refname }))
}

/// Moves `who`'s own claim, made from another clone (`h`), to this worktree: what the
/// reply says of it.
fn take_over(repo: &Repo, refname: &str, remote: &str, h: &Claimant, message: &str) -> String {
    let sprint = h.sprint;
    // Their own words, from the network: cut short, nothing hidden.
    let from = crate::code::visible(&crate::code::clip(&h.named(), 300));
    let moved = repo
        .local_ref(refname)
        .ok_or_else(|| "the claim could not be read".to_string())
        .and_then(|was| repo.take_over(refname, &was, message));
    match moved {
        Ok(()) => format!("Sprint {sprint} was claimed on `{remote}` by the same person, {from}: the claim is taken over and now names this worktree."),
        Err(why) => format!("Sprint {sprint} is claimed on `{remote}` by the same person, {from}; the claim could not be moved here ({why}), so it still names that clone."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claimant(worktree: &str, host: Option<&str>) -> Claimant {
        Claimant {
            owner: "Ben <ben@example.org>".into(),
            branch: Some("main".into()),
            worktree: worktree.into(),
            sprint: 1,
            host: host.map(str::to_string),
            done: None,
            kept_by: None,
        }
    }

    #[test]
    fn a_claim_s_worktree_is_gone_only_when_taken_on_this_machine_and_missing_here() {
        let here = super::super::identity::host().expect("this machine has a name");
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().display().to_string();
        let deleted = dir.path().join("deleted").display().to_string();
        let c = claimant(&deleted, Some(here));
        assert!(c.gone());
        assert_eq!(
            c.named(),
            format!("Ben <ben@example.org> on branch `main` in {deleted} (gone)")
        );
        assert!(!claimant(&there, Some(here)).gone());
        // Another machine's path, and a claim that does not say where it was taken.
        let elsewhere = claimant(&deleted, Some("another-machine"));
        assert!(!elsewhere.gone());
        assert!(
            elsewhere
                .named()
                .ends_with(&format!("in {deleted} (on another-machine)")),
            "{}",
            elsewhere.named()
        );
        assert!(claimant(&deleted, None).named().ends_with(&deleted));
        assert!(claimant(&there, Some(here)).named().ends_with(&there));
    }

    #[test]
    fn a_claim_written_before_the_host_was_recorded_still_reads_and_a_new_one_names_it() {
        let old = r#"{"owner":"Ben","branch":"s1","worktree":"/w/ben","sprint":2}"#;
        let c: Claimant = serde_json::from_str(old).unwrap();
        assert_eq!((c.sprint, c.host.as_deref()), (2, None));
        let new = serde_json::to_string(&claimant("/w/ben", Some("lab-7"))).unwrap();
        assert!(new.contains(r#""host":"lab-7""#), "{new}");
    }
}
