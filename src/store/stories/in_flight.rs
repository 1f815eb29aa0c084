//! What the claims on the team's remote (as this clone last fetched them, [`board::Claims`])
//! mean for a session: a parent counts each sprint another clone's story claimed as a
//! story in flight (`claimed`: the core then leaves it out of what the parent builds, and
//! refuses a submission that would build it); where the human kept one of two stories of a
//! sprint, the other is left out. A story learns from them that its sprint was released
//! (by whom, when), and that another story holds it now: it is then stopped, refused any
//! change, before more work is done.

use super::board::{self, Claims, Held};
use super::remote::Claimant;
use crate::code::{clip, visible, ErrorCode};
use crate::error::{Error, Result};
use crate::workflow::session::{Session, SprintClaim, StoryLink, StoryState};
use crate::workflow::when;

/// Whether the story `o` (an entry a parent reads) is the one the claim `c` names.
fn names(c: &Claimant, o: &StoryState) -> bool {
    c.sprint == o.sprint && c.owner == o.owner && c.worktree == o.worktree
}

/// The parent `s` with the sprints claimed on the remote by stories it does not see
/// (`claimed`), from `claims`; where a claim is the human's choice between two stories of
/// its sprint (`kept_by`), the sprint's other stories left out.
pub fn count(s: &mut Session, claims: &Claims) {
    s.claimed.clear();
    for h in claims.held.iter().filter(|h| h.parent_id == s.session_id) {
        let Some(c) = &h.claimant else {
            s.claimed.push(unreadable(h, &claims.remote));
            continue;
        };
        if c.kept_by.is_some() {
            s.stories.retain(|o| o.sprint != h.sprint || names(c, o));
        }
        if s.stories.iter().any(|o| names(c, o)) {
            continue;
        }
        s.claimed.push(SprintClaim {
            sprint: h.sprint,
            // Another clone's words, from the network: cut short, nothing hidden.
            owner: visible(&clip(&c.owner, 200)),
            branch: c.branch.as_deref().map(|b| visible(&clip(b, 100))),
            worktree: visible(&clip(&c.worktree, 300)),
            host: c.elsewhere().map(|h| visible(&clip(h, 100))),
            remote: visible(&clip(&claims.remote, 100)),
            since: visible(&clip(&h.since, 40)),
            gone: c.gone(),
            done: c.done.as_deref().map(|d| visible(&clip(d, 120))),
        });
    }
}

/// A claim whose message cannot be read: the sprint is held all the same.
fn unreadable(h: &Held, remote: &str) -> SprintClaim {
    SprintClaim {
        sprint: h.sprint,
        owner: "someone (the claim could not be read)".into(),
        branch: None,
        worktree: "?".into(),
        host: None,
        remote: visible(&clip(remote, 100)),
        since: visible(&clip(&h.since, 40)),
        gone: false,
        done: None,
    }
}

/// What the claims say of the story whose link is `link`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct News {
    /// Its claim was released: by whom (and through which channel) and when.
    pub released: Option<(String, String)>,
    /// Another story holds its sprint on the remote now: who.
    pub taken: Option<String>,
}

/// Whether the claim `c` is the story's of `link`.
fn is_of(c: &Claimant, link: &StoryLink) -> bool {
    c.sprint == link.sprint && c.owner == link.owner && c.worktree == link.worktree
}

/// What `claims` say of the story `link` links; `None` when nothing is amiss (its claim is
/// on the remote or waits to be pushed, or its sprint is claimed by no one and was never
/// released).
pub fn news(claims: &Claims, link: &StoryLink) -> Option<News> {
    let parent = link.parent_session_id.as_str();
    let now = chrono::Utc::now();
    let held = claims
        .held
        .iter()
        .find(|h| h.parent_id == parent && h.sprint == link.sprint);
    if held.is_some_and(|h| h.claimant.as_ref().is_some_and(|c| is_of(c, link))) {
        return None;
    }
    let pending = claims
        .pending
        .iter()
        .any(|h| h.parent_id == parent && h.sprint == link.sprint);
    let taken = held.map(|h| {
        let who = h.claimant.as_ref().map_or_else(
            || "someone (the claim could not be read)".to_string(),
            |c| visible(&clip(&c.named(), 300)),
        );
        format!("{who}, since {}", when::shown(&h.since, now))
    });
    let released = claims
        .released
        .iter()
        .filter(|r| r.parent_id == parent && r.sprint == link.sprint)
        .filter(|r| {
            r.record
                .as_ref()
                .and_then(|rec| rec.claim.as_ref())
                .is_some_and(|c| is_of(c, link))
        })
        .max_by(|a, b| a.at.cmp(&b.at))
        .map(|r| {
            let by = r.record.as_ref().map_or_else(String::new, |rec| {
                visible(&clip(&format!("{}, {}", rec.released_by, rec.via), 300))
            });
            (by, when::shown(&r.at, now))
        });
    if taken.is_none() && released.is_none() || pending && taken.is_none() {
        return None;
    }
    Some(News { released, taken })
}

impl News {
    /// For the story's replies: what became of its claim, and what to do.
    pub fn said(&self, link: &StoryLink, remote: &str) -> String {
        let mut out = String::new();
        if let Some((by, at)) = &self.released {
            out.push_str(&format!(
                "Sprint {} of `{}` was released on the remote `{}` by {by}, {at}: this story no longer holds a claim there. ",
                link.sprint,
                link.parent_task,
                visible(remote)
            ));
        }
        match &self.taken {
            Some(who) => out.push_str(&format!(
                "Another story holds sprint {} on the remote `{}` now: {who}. This story is stopped: nothing more is built here, or the sprint is built twice. Agree with its holder; which story is kept is the human's choice (`bmad-mcp claims keep {} {}`, at a terminal), and `bmad-mcp claims` lists the claims.",
                link.sprint,
                visible(remote),
                link.parent_task,
                link.sprint
            )),
            None => out.push_str(
                "Another clone may claim the sprint now; if one does, this story is stopped.",
            ),
        }
        out
    }
}

/// Refuses a change to the story `s` whose sprint another story holds on the remote now
/// (as this clone last fetched the claims): stopped before more work is done.
pub fn stopped(claims: &Claims, s: &Session) -> Result<()> {
    let Some(link) = &s.story else {
        return Ok(());
    };
    match news(claims, link) {
        Some(n) if n.taken.is_some() => Err(Error::argument(
            ErrorCode::SprintTaken,
            format!("{} Nothing was changed", n.said(link, &claims.remote)),
        )),
        _ => Ok(()),
    }
}

/// The sprints of the parent `s` two stories or more hold, for every surface that shows
/// it: each with its holders, and the human's choice asked for. `None` when there are
/// none.
pub fn twice(s: &Session) -> Option<String> {
    let twice = crate::workflow::story::twice(s);
    if twice.is_empty() {
        return None;
    }
    let each: Vec<String> = twice
        .iter()
        .map(|(n, holders)| {
            format!(
                "sprint {n} has {} stories: {}",
                holders.len(),
                holders.join("; and ")
            )
        })
        .collect();
    let first = twice[0].0;
    Some(format!(
        "One sprint is built once, and {}. Which story to keep is the human's choice: `bmad-mcp claims keep {} {first}` at a terminal lists them and asks; the claim on the remote then names the one kept, and the other is stopped. The final QA waits until then.",
        each.join("; "),
        s.task_name
    ))
}

/// After a change that completed the story `after`: its claim on the remote is re-worded to
/// say so (kept as pending, pushed by the next fetch that reaches the remote, started now
/// in the background), so that it is never taken for a dead clone's once its worktree is
/// removed, and the sprint is not claimed again. Nothing when this clone holds no claim of
/// the story.
pub fn completed(project: &crate::files::Project, before: &Session, after: &Session) {
    use crate::workflow::State;
    let Some(link) = &after.story else {
        return;
    };
    if after.current_state != State::Completed || before.current_state == State::Completed {
        return;
    }
    let Some(repo) = crate::git::Repo::at(&project.root) else {
        return;
    };
    let kept = board::Freshness::Kept {
        at: None,
        failed: None,
    };
    let Some(claims) = repo.board_kept().map(|b| board::claims_of(b, kept)) else {
        return;
    };
    let parent = link.parent_session_id.as_str();
    let ours = claims
        .pending
        .iter()
        .chain(&claims.held)
        .filter(|h| h.parent_id == parent && h.sprint == link.sprint)
        .find_map(|h| h.claimant.clone().filter(|c| is_of(c, link)));
    let Some(mut claimant) = ours else {
        return;
    };
    claimant.done = Some(after.task_name.clone());
    let refname = format!("{}{parent}/sprint-{}", crate::git::CLAIMS, link.sprint);
    let message = serde_json::to_string(&claimant).unwrap_or_default();
    if repo.want(&refname, &message).is_some() {
        board::refresh_in_background(project);
    } else {
        tracing::warn!(claim = %refname, "the completed story's claim could not be re-worded");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{Board, RemoteRef};
    use crate::workflow::{Engine, Stage, State};

    const PARENT: &str = "p";

    fn at(kind: &str, rest: &str, c: &impl serde::Serialize, when: &str) -> RemoteRef {
        RemoteRef {
            refname: format!("refs/bmad/{kind}/{PARENT}/{rest}"),
            commit: "c".repeat(40),
            at: when.into(),
            message: serde_json::to_string(c).unwrap(),
        }
    }

    /// The claims as a fetch left them: `held` at sprint 1, `released` records of it.
    fn claims(held: Option<&Claimant>, released: &[(&Claimant, &str)]) -> Claims {
        let board = Board {
            remote: "origin".into(),
            claims: held
                .map(|c| at("claims", "sprint-1", c, "2020-11-29T08:00:00+00:00"))
                .into_iter()
                .collect(),
            released: released
                .iter()
                .map(|(c, by)| {
                    let record = board::Release {
                        released_by: (*by).into(),
                        via: "the human, via cli".into(),
                        claim: Some((*c).clone()),
                    };
                    at(
                        "released",
                        "sprint-1/abc",
                        &record,
                        "2020-11-29T09:00:00+00:00",
                    )
                })
                .collect(),
            pending: Vec::new(),
            unreachable: None,
        };
        let read = board::Freshness::Kept {
            at: None,
            failed: None,
        };
        board::claims_of(board, read)
    }

    fn link(owner: &str, worktree: &str) -> StoryLink {
        StoryLink {
            parent_session_id: PARENT.into(),
            parent_task: "t".into(),
            sprint: 1,
            sprint_title: "Login".into(),
            owner: owner.into(),
            branch: None,
            worktree: worktree.into(),
        }
    }

    fn entry(owner: &str, worktree: &str) -> StoryState {
        StoryState {
            sprint: 1,
            session_id: format!("s-{owner}"),
            task_name: format!("t-sprint-1-{owner}"),
            owner: owner.into(),
            branch: None,
            worktree: worktree.into(),
            stage: Stage::Dev,
            state: State::Generating,
            updated_at: "2026-11-29T08:00:00.000Z".into(),
            review_status: None,
            gone: false,
        }
    }

    fn parent() -> Session {
        let mut s = Session::new(
            PARENT.into(),
            "t".into(),
            "/p".into(),
            "o".into(),
            vec![Engine::Claude],
            chrono::Utc::now(),
        );
        s.stories = vec![entry("Mia", "/w/mia")];
        s
    }

    #[test]
    fn a_claim_of_a_story_seen_here_counts_once_and_another_clone_s_as_claimed() {
        let mut s = parent();
        count(&mut s, &claims(Some(&Claimant::of("Mia", "/w/mia")), &[]));
        assert!(s.claimed.is_empty(), "{:?}", s.claimed);
        count(&mut s, &claims(Some(&Claimant::of("Omar", "/w/omar")), &[]));
        assert_eq!(s.claimed.len(), 1);
        assert!(s.claimed[0]
            .holder()
            .starts_with("Omar in /w/omar, claimed on the remote `origin` since "));
        // Two stories of sprint 1: said, and the human's choice asked for.
        let said = twice(&s).unwrap();
        assert!(
            said.contains("sprint 1 has 2 stories: story `t-sprint-1-Mia` of Mia")
                && said.contains("and the story of Omar in /w/omar")
                && said.contains("`bmad-mcp claims keep t 1`"),
            "{said}"
        );
        // The human kept Omar's: Mia's story is no longer the sprint's here.
        let mut kept = Claimant::of("Omar", "/w/omar");
        kept.kept_by = Some("Lea, the human via cli".into());
        count(&mut s, &claims(Some(&kept), &[]));
        assert!(s.stories.is_empty());
        assert_eq!(s.claimed.len(), 1);
        assert_eq!(twice(&s), None);
    }

    #[test]
    fn a_story_learns_its_sprint_was_released_and_taken_and_is_stopped() {
        let omar = link("Omar", "/w/omar");
        let mine = Claimant::of("Omar", "/w/omar");
        assert_eq!(news(&claims(Some(&mine), &[]), &omar), None);
        assert_eq!(news(&claims(None, &[]), &omar), None);
        // Released by Lea, claimed by no one yet: said, not stopped.
        let released = claims(None, &[(&mine, "Lea <lea@example.org>")]);
        let n = news(&released, &omar).unwrap();
        assert!(n.taken.is_none());
        let said = n.said(&omar, "origin");
        assert!(
            said.starts_with("Sprint 1 of `t` was released on the remote `origin` by Lea <lea@example.org>, the human, via cli, 2020-11-29 09:00 UTC, "),
            "{said}"
        );
        let mut s = parent();
        s.story = Some(omar.clone());
        assert!(stopped(&released, &s).is_ok());
        // Then Mia claimed it: Omar's story is stopped before more work.
        let taken = claims(Some(&Claimant::of("Mia", "/w/mia")), &[(&mine, "Lea")]);
        let e = stopped(&taken, &s).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SprintTaken);
        let m = e.to_string();
        assert!(
            m.contains(
                "Another story holds sprint 1 on the remote `origin` now: Mia in /w/mia, since "
            ) && m.contains("This story is stopped")
                && m.ends_with("Nothing was changed"),
            "{m}"
        );
    }
}
