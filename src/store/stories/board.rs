//! The sprints a team holds on its remote, for the humans who lead it: each claim read
//! with who made it, from which clone and branch, and since when (the claim commit's
//! time), through one bounded fetch ([`crate::git::Repo::board`]) for the commands a person
//! types, or, for the model's `status`, `list` and the dashboard, the clone's copies from its
//! last fetch, said to be that old, refreshed in the background whatever became of that
//! fetch ([`kept`]): they never wait on the network once the clone has tried a fetch. When
//! a fetch fails, when and why is noted beside the last success, and said. A fetch that
//! reaches the remote pushes the claims this clone kept while it could not
//! ([`push_pending`]). A claim is released here, recorded on the remote with who released
//! it, and a sprint held twice given to the story the human keeps ([`keep`]).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::remote::Claimant;
use super::Registry;
use crate::code::{clip, visible};
use crate::files::Project;
use crate::git::{Board, RemoteRef, Repo};
use crate::workflow::when;

/// Where a clone notes when its claims were last fetched, and its latest try that failed,
/// beside the stories' entries ([`Fetched`]).
const FETCHED_REL: &str = ".bmad-task/claims-fetched";

/// What a clone notes of its fetches of the claims: when one last succeeded, and the
/// latest try that failed after it (when and why). A note of an older version (the time
/// alone) reads as a success at that time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Fetched {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failed: Option<Failed>,
}

/// A fetch of the claims that failed: when, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failed {
    pub at: String,
    pub why: String,
}

impl Fetched {
    fn parse(text: &str) -> Fetched {
        let text = text.trim();
        serde_json::from_str(text).unwrap_or_else(|_| Fetched {
            ok: (!text.is_empty()).then(|| text.to_string()),
            failed: None,
        })
    }
}

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
pub enum Freshness {
    /// Fetched from the remote now.
    Now,
    /// The clone's copies from its last fetch (`at`; `None`: never), not waited for: a
    /// fetch refreshes them in the background. `failed`: the latest try, when it failed
    /// after that fetch.
    Kept {
        at: Option<String>,
        failed: Option<Failed>,
    },
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
    /// The claims this clone took while the remote could not be reached (or re-worded
    /// since), not pushed yet.
    pub pending: Vec<Held>,
    pub read: Freshness,
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
            Freshness::Now => "read now".into(),
            Freshness::Kept { at, failed } => {
                let last = at.as_deref().map_or_else(
                    || "never fetched by this clone".to_string(),
                    |t| format!("as of {}, this clone's last fetch", age(t)),
                );
                match failed {
                    None => last,
                    Some(f) => format!(
                        "{last}; the latest try, {}, failed: {}",
                        age(&f.at),
                        visible(&clip(&f.why, 200))
                    ),
                }
            }
            Freshness::Unreachable(why, at) => format!(
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
/// `None` outside git or without a remote. A fetch that reaches the remote pushes the
/// claims kept while it could not be ([`push_pending`]); one that fails is noted.
pub fn read(project: &Project) -> Option<Claims> {
    let repo = Repo::at(&project.root)?;
    let mut board = repo.board()?;
    let registry = Registry::of(project).ok();
    let mut fetched = registry.as_ref().map(last_fetch).unwrap_or_default();
    let now = crate::workflow::session::timestamp(chrono::Utc::now());
    let read = match board.unreachable.clone() {
        None => {
            fetched = Fetched {
                ok: Some(now),
                failed: None,
            };
            if !board.pending.is_empty() {
                push_pending(&repo, &board);
                board = repo.board_kept().unwrap_or(board);
            }
            Freshness::Now
        }
        Some(why) => {
            fetched.failed = Some(Failed {
                at: now,
                why: why.clone(),
            });
            Freshness::Unreachable(why, fetched.ok.clone())
        }
    };
    if let Some(r) = &registry {
        let text = serde_json::to_string(&fetched).unwrap_or_default() + "\n";
        let _ = r.root.write_atomic(FETCHED_REL, text.as_bytes());
    }
    Some(claims_of(board, read))
}

/// The claims as the clone's last fetch left them, whenever it was and whatever became of
/// the latest try (said in [`Freshness::Kept`]), with a fetch started in the background so that
/// the next reading is fresh. For the model's `status` and the dashboard, which never wait
/// on the network: only a clone that never tried a fetch fetches first (bounded), having
/// nothing to show.
pub fn kept(project: &Project) -> Option<Claims> {
    let registry = Registry::of(project).ok();
    let fetched = registry.as_ref().map(last_fetch).unwrap_or_default();
    if fetched == Fetched::default() {
        return read(project);
    }
    copies(project, fetched)
}

/// [`kept`] without ever waiting on the network, not even a first time: for a change,
/// read under the project's lock. `None`, without starting git, in a clone that never
/// fetched the claims (one with no remote among them): it has none to show.
pub fn kept_only(project: &Project) -> Option<Claims> {
    let fetched = last_fetch(&Registry::of(project).ok()?);
    if fetched == Fetched::default() {
        // A claim kept while the remote was out of reach (a loose ref git wrote there) is
        // pushed by a fetch all the same.
        let dirs = super::identity::git_dirs(&project.root);
        if dirs.is_some_and(|d| d.common_dir.join(crate::git::PENDING).is_dir()) {
            refresh_in_background(project);
        }
        return None;
    }
    copies(project, fetched)
}

/// The clone's copies, said to be as `fetched` left them, and a fetch in the background.
fn copies(project: &Project, fetched: Fetched) -> Option<Claims> {
    let board = Repo::at(&project.root)?.board_kept()?;
    refresh_in_background(project);
    let read = Freshness::Kept {
        at: fetched.ok,
        failed: fetched.failed,
    };
    Some(claims_of(board, read))
}

/// Pushes the claims this clone kept while the remote could not be reached (`board`, just
/// fetched): one the remote has no claim for is pushed as a first claim is (refused if
/// another got there first); one that re-words this clone's own claim there (its story
/// completed) moves it, while it is still the one fetched; one whose sprint another story
/// claimed meanwhile is dropped, and that story's next reply says it lost the sprint.
pub fn push_pending(repo: &Repo, board: &Board) {
    for p in &board.pending {
        let Some(target) = p
            .refname
            .strip_prefix(crate::git::PENDING)
            .map(|rest| format!("{}{rest}", crate::git::CLAIMS))
        else {
            continue;
        };
        let on_remote = board.claims.iter().find(|c| c.refname == target);
        let ours: Option<Claimant> = serde_json::from_str(&p.message).ok();
        let outcome = match on_remote {
            Some(c) if c.commit == p.commit => Ok(()),
            // A re-worded claim moves this clone's own claim, never creates one.
            None if ours.as_ref().is_some_and(|o| o.done.is_some()) => Ok(()),
            None => repo.push_claim(&target, &p.commit, None),
            Some(c) => {
                let theirs: Option<Claimant> = serde_json::from_str(&c.message).ok();
                match (&ours, &theirs) {
                    (Some(o), Some(t)) if o.same_story(t) => {
                        repo.push_claim(&target, &p.commit, Some(&c.commit))
                    }
                    _ => {
                        tracing::warn!(claim = %target, "another clone claimed the sprint while this clone's claim waited to be pushed");
                        Ok(())
                    }
                }
            }
        };
        match outcome {
            Ok(()) => repo.drop_pending(&target),
            Err(why) => {
                tracing::warn!(claim = %target, error = %why, "a kept claim was not pushed; tried again at the next fetch")
            }
        }
    }
}

/// One fetch of the claims at a time per process, run on a thread of its own; a reading
/// while it runs is given the copies it is about to replace.
pub(super) fn refresh_in_background(project: &Project) {
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

/// What this clone noted of its fetches of the claims.
fn last_fetch(registry: &Registry) -> Fetched {
    registry
        .root
        .read(FETCHED_REL)
        .ok()
        .flatten()
        .map(|t| Fetched::parse(&t))
        .unwrap_or_default()
}

pub(super) fn claims_of(board: Board, read: Freshness) -> Claims {
    let Board {
        remote,
        claims,
        released,
        pending,
        ..
    } = board;
    let held_of = |refs: Vec<RemoteRef>, prefix: &str| -> Vec<Held> {
        refs.into_iter()
            .filter_map(|claim| {
                let (parent_id, sprint) = parent_and_sprint(&claim.refname, prefix)?;
                Some(Held {
                    parent_id,
                    sprint,
                    claimant: serde_json::from_str(&claim.message).ok(),
                    since: claim.at.clone(),
                    claim,
                })
            })
            .collect()
    };
    let held = held_of(claims, crate::git::CLAIMS);
    let pending = held_of(pending, crate::git::PENDING);
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
        pending,
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

/// Gives `sprint` of the parent `parent_id` to the story `kept` names, the human's choice
/// where the sprint had two stories: the claim on the remote is made to name it (created
/// where there is none; else moved while it is still `was`, the claim shown, with a record
/// of the release of the claim it replaced pushed in the same atomic push). Whose story it
/// was then reads the claim, and stops.
pub fn keep(
    project: &Project,
    (parent_id, sprint): (&str, u32),
    kept: &Claimant,
    was: Option<&Held>,
    (by, via): (&str, &str),
) -> Result<(), String> {
    let repo = Repo::at(&project.root).ok_or("the project is not in a git repository")?;
    let refname = format!("{}{parent_id}/sprint-{sprint}", crate::git::CLAIMS);
    let message = serde_json::to_string(kept).unwrap_or_default();
    let Some(was) = was else {
        let commit = repo
            .want(&refname, &message)
            .ok_or("git could not make the claim's commit")?;
        repo.push_claim(&refname, &commit, None)?;
        repo.drop_pending(&refname);
        return Ok(());
    };
    // The claim already names the story kept: it is re-worded to say the human kept it,
    // and nothing is released.
    if was.claimant.as_ref().is_some_and(|c| c.same_story(kept)) {
        repo.take_over(&refname, was.commit(), &message)?;
        repo.drop_pending(&refname);
        return Ok(());
    }
    let record = Release {
        released_by: by.to_string(),
        via: via.to_string(),
        claim: was.claimant.clone(),
    };
    let record_ref = format!(
        "{}{parent_id}/sprint-{sprint}/{}",
        crate::git::RELEASED,
        was.commit()
    );
    let record = serde_json::to_string(&record).unwrap_or_default();
    repo.hand_over(&was.claim, &message, (&record_ref, &record))?;
    repo.drop_pending(&refname);
    Ok(())
}

/// Who holds which sprint of the parent `parent_id` among `claims`, for its `status`, its
/// row in `list` and its page: one line saying how the claims were read (how old they are
/// when not read now), the claims this clone keeps until the remote can be reached among
/// them; `None` when no sprint of it is claimed, unless the picture is old (not read now,
/// or the latest fetch failed): that nothing is claimed is then said with its age.
pub fn holders(claims: &Claims, parent_id: &str, titles: &dyn Fn(u32) -> String) -> Option<String> {
    let now = chrono::Utc::now();
    let who = |h: &Held| {
        h.claimant.as_ref().map_or_else(
            || "someone (the claim could not be read)".to_string(),
            // Another clone's words, from the network: cut short, nothing hidden.
            |c| visible(&clip(&c.named(), 300)),
        )
    };
    let mine = |h: &&Held| h.parent_id == parent_id;
    let mut held: Vec<String> = claims
        .held
        .iter()
        .filter(mine)
        .map(|h| {
            format!(
                "sprint {} ({}) by {}, since {}",
                h.sprint,
                titles(h.sprint),
                who(h),
                when::shown(&h.since, now)
            )
        })
        .collect();
    held.extend(claims.pending.iter().filter(mine).map(|h| {
        format!(
            "sprint {} ({}) by {}, kept in this clone since {}: not on the remote yet, the next fetch that reaches it pushes it",
            h.sprint,
            titles(h.sprint),
            who(h),
            when::shown(&h.since, now)
        )
    }));
    let remote = visible(&claims.remote);
    if held.is_empty() {
        return match &claims.read {
            Freshness::Now | Freshness::Kept { failed: None, .. } => None,
            _ => Some(format!(
                "No sprint of this task is claimed on the remote `{remote}` as far as this clone knows ({}).",
                claims.how_read(now)
            )),
        };
    }
    Some(format!(
        "Claimed on the remote `{remote}` ({}): {}. `bmad-mcp claims` lists every claim; `bmad-mcp claims release <task> <sprint>`, at a person's terminal, frees one.",
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
            pending: Vec::new(),
            read,
        };
        assert_eq!(
            claims(Freshness::Unreachable(why.into(), Some(at.clone()))).how_read(now),
            format!(
                "they could not be fetched ({why}), so as this clone last fetched them, 40 s ago"
            )
        );
        assert!(claims(Freshness::Unreachable(why.into(), None))
            .how_read(now)
            .ends_with("last fetched them, never before"));
        assert_eq!(
            claims(Freshness::Kept {
                at: Some(at.clone()),
                failed: None
            })
            .how_read(now),
            "as of 40 s ago, this clone's last fetch"
        );
        // The latest try failed after that fetch: both said, each with its age.
        let failed = Failed {
            at: crate::workflow::session::timestamp(now - chrono::TimeDelta::seconds(3)),
            why: "`git fetch` took longer than 10 s and was stopped".into(),
        };
        let kept = claims(Freshness::Kept {
            at: Some(at),
            failed: Some(failed.clone()),
        });
        assert_eq!(
            kept.how_read(now),
            "as of 40 s ago, this clone's last fetch; the latest try, 3 s ago, failed: `git fetch` took longer than 10 s and was stopped"
        );
        let never = claims(Freshness::Kept {
            at: None,
            failed: Some(failed),
        });
        assert!(never
            .how_read(now)
            .starts_with("never fetched by this clone; the latest try, 3 s ago, failed: "));
        // Nothing claimed is said only when the picture is old.
        assert_eq!(
            holders(&claims(Freshness::Now), "p", &|_| String::new()),
            None
        );
        let said = holders(&kept, "p", &|_| String::new()).unwrap();
        assert!(
            said.starts_with("No sprint of this task is claimed on the remote `origin` as far as this clone knows (as of 40 s ago"),
            "{said}"
        );
    }

    /// An older clone's note (the time alone) reads as a success then.
    #[test]
    fn a_note_of_an_older_version_is_a_fetch_that_succeeded() {
        let t = "2026-11-27T10:00:00.000Z";
        assert_eq!(
            Fetched::parse(&format!("{t}\n")),
            Fetched {
                ok: Some(t.into()),
                failed: None
            }
        );
        assert_eq!(Fetched::parse(""), Fetched::default());
        let both = Fetched {
            ok: Some(t.into()),
            failed: Some(Failed {
                at: t.into(),
                why: "x".into(),
            }),
        };
        assert_eq!(Fetched::parse(&serde_json::to_string(&both).unwrap()), both);
    }

    fn git_ok(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Two clones of a bare remote, the first's remote out of reach: (the folder, the
    /// remote, the first clone's project, the second clone).
    fn two_clones() -> (
        tempfile::TempDir,
        std::path::PathBuf,
        Project,
        std::path::PathBuf,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git_ok(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        let origin = root.join("origin.git");
        for c in ["mia", "omar"] {
            git_ok(&root, &["clone", "-q", origin.to_str().unwrap(), c]);
        }
        let mia = root.join("mia");
        git_ok(
            &mia,
            &["remote", "set-url", "origin", "/nowhere/origin.git"],
        );
        let at = crate::files::DefaultRoot {
            source_name: "test",
            value: mia.display().to_string(),
        };
        let project = Project::open(None, &at).unwrap();
        (dir, origin, project, root.join("omar"))
    }

    const CLAIM: &str = "refs/bmad/claims/p/sprint-1";

    /// A claim taken while the remote could not be reached is kept, said so, and pushed by
    /// the next fetch that reaches the remote.
    #[test]
    fn an_offline_claim_is_pushed_by_the_next_fetch_that_reaches_the_remote() {
        let (_dir, origin, project, _) = two_clones();
        let repo = Repo::at(&project.root).unwrap();
        let mia = serde_json::to_string(&Claimant::of("Mia", "/w/mia")).unwrap();
        let got = repo.claim(CLAIM, &mia);
        assert!(
            matches!(got, crate::git::Claim::Unreachable { pending: true, .. }),
            "{got:?}"
        );
        let claims = read(&project).unwrap();
        assert!(
            matches!(claims.read, Freshness::Unreachable(..)),
            "{claims:?}"
        );
        assert_eq!(claims.pending.len(), 1);
        let said = holders(&claims, "p", &|_| "Login".into()).unwrap();
        assert!(
            said.contains("sprint 1 (Login) by Mia in /w/mia, kept in this clone since "),
            "{said}"
        );
        // The remote is back: the next fetch pushes the claim, and keeps it no more.
        git_ok(
            &project.root,
            &["remote", "set-url", "origin", origin.to_str().unwrap()],
        );
        let claims = read(&project).unwrap();
        assert_eq!(claims.read, Freshness::Now);
        assert!(claims.pending.is_empty(), "{claims:?}");
        assert_eq!(claims.held.len(), 1);
        let on_remote = git_ok(
            &origin,
            &["for-each-ref", "--format=%(contents:subject)", CLAIM],
        );
        assert_eq!(on_remote.trim(), mia);
    }

    /// Another clone won the sprint meanwhile: the kept claim is not pushed over it, and is
    /// dropped; the claims then name the winner.
    #[test]
    fn an_offline_claim_another_clone_won_meanwhile_is_dropped() {
        let (_dir, origin, project, omar) = two_clones();
        let repo = Repo::at(&project.root).unwrap();
        let mia = serde_json::to_string(&Claimant::of("Mia", "/w/mia")).unwrap();
        repo.claim(CLAIM, &mia);
        let theirs = serde_json::to_string(&Claimant::of("Omar", "/w/omar")).unwrap();
        let won = Repo::at(&omar).unwrap().claim(CLAIM, &theirs);
        assert!(matches!(won, crate::git::Claim::Won { .. }), "{won:?}");
        git_ok(
            &project.root,
            &["remote", "set-url", "origin", origin.to_str().unwrap()],
        );
        let claims = read(&project).unwrap();
        assert!(claims.pending.is_empty(), "{claims:?}");
        let holder = claims.of("p", 1).and_then(|h| h.claimant.clone()).unwrap();
        assert_eq!(holder.owner, "Omar");
        let on_remote = git_ok(
            &origin,
            &["for-each-ref", "--format=%(contents:subject)", CLAIM],
        );
        assert_eq!(on_remote.trim(), theirs);
    }
}
