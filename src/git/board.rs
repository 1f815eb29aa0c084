//! The claims a team's remote holds, read and changed as a whole: every ref under
//! `refs/bmad/claims/` and `refs/bmad/released/` fetched into the clone (its copies follow
//! the remote's, pruned), listed with the commit's time and message (or listed as the last
//! fetch left them, without asking the remote); one claim released
//! (deleted on the remote only while it is still the claim that was shown, with a record of
//! the release pushed in the same atomic push); and one claim moved to a new message (its
//! owner taking it over from another clone), again only while it is the claim read. Every
//! network command is [`super::claim`]'s, bounded in time and asking nothing.

use super::claim::{fetch, git, network, CLAIMS, PENDING};
use super::{run, Repo};

/// Where the records of released claims are.
pub const RELEASED: &str = "refs/bmad/released/";

/// One ref under [`CLAIMS`] or [`RELEASED`], as this clone has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRef {
    pub refname: String,
    pub commit: String,
    /// When its commit was made (git's strict ISO 8601).
    pub at: String,
    /// The first line of its commit's message (another clone's words: untrusted).
    pub message: String,
}

/// The claims and the release records, fresh from the remote or, when it could not be
/// reached, as the clone's last fetch left them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    pub remote: String,
    pub claims: Vec<RemoteRef>,
    pub released: Vec<RemoteRef>,
    /// The claims this clone took (or re-worded) that the remote has not had yet, under
    /// [`PENDING`]: never fetched, never pruned.
    pub pending: Vec<RemoteRef>,
    /// Why the remote could not be asked (the refs are then the last fetch's).
    pub unreachable: Option<String>,
}

impl Repo {
    /// Fetches the claims and release records of the remote and lists them; `None` when
    /// the repository has no remote.
    pub fn board(&self) -> Option<Board> {
        let remote = self.remote()?;
        let fetched = self.fetch_board(&remote);
        let mut board = self.board_kept()?;
        board.unreachable = fetched.err();
        Some(board)
    }

    /// Fetches the claims and release records into the clone's copies, waiting out
    /// another git process's lock ([`fetch`]).
    fn fetch_board(&self, remote: &str) -> Result<(), String> {
        let (claims, released) = (
            format!("+{CLAIMS}*:{CLAIMS}*"),
            format!("+{RELEASED}*:{RELEASED}*"),
        );
        let args = [
            "--prune",
            "--no-write-fetch-head",
            remote,
            &claims,
            &released,
        ];
        fetch(&self.dir, &args).map(|_| ())
    }

    /// The claims and release records as the clone's last fetch left them, without asking
    /// the remote; `None` when the repository has no remote.
    pub fn board_kept(&self) -> Option<Board> {
        let remote = self.remote()?;
        let (mut claims, mut released, mut pending) = (Vec::new(), Vec::new(), Vec::new());
        for r in self.local_refs() {
            if r.refname.starts_with(CLAIMS) {
                claims.push(r);
            } else if r.refname.starts_with(RELEASED) {
                released.push(r);
            } else {
                pending.push(r);
            }
        }
        Some(Board {
            remote,
            claims,
            released,
            pending,
            unreachable: None,
        })
    }

    /// The clone's copies of the claims and release records, and its pending claims, by
    /// name.
    fn local_refs(&self) -> Vec<RemoteRef> {
        let format =
            "--format=%(refname)%00%(objectname)%00%(creatordate:iso-strict)%00%(contents:subject)";
        let out = run(
            &self.dir,
            &[],
            &["for-each-ref", format, CLAIMS, RELEASED, PENDING],
        );
        out.unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let mut f = line.split('\0');
                Some(RemoteRef {
                    refname: f.next()?.to_string(),
                    commit: f.next()?.to_string(),
                    at: f.next()?.to_string(),
                    message: f.next().unwrap_or_default().to_string(),
                })
            })
            .collect()
    }

    /// The commit the clone's copy of `refname` points at.
    pub fn local_ref(&self, refname: &str) -> Option<String> {
        run(&self.dir, &[], &["rev-parse", "--verify", "-q", refname])
            .map(|c| c.trim().to_string())
            .filter(|c| super::is_commit_id(c))
    }

    /// Releases `claim` on the remote, as long as it still points where it did when read,
    /// and records the release (`record`, a message whose commit descends from the claim's)
    /// at `record_ref` in the same atomic push: the remote has both or neither.
    pub fn release(&self, claim: &RemoteRef, record_ref: &str, record: &str) -> Result<(), String> {
        let remote = self.remote().ok_or("the repository has no remote")?;
        let commit = self
            .claim_commit(record, Some(&claim.commit))
            .ok_or("git could not make the release's record")?;
        self.push_leased(
            &remote,
            (claim.refname.as_str(), claim.commit.as_str()),
            &[
                format!(":{}", claim.refname),
                format!("{commit}:{record_ref}"),
            ],
        )?;
        let _ = git(&self.dir)
            .args(["update-ref", "-d", &claim.refname])
            .output();
        let _ = git(&self.dir)
            .args(["update-ref", record_ref, &commit])
            .output();
        Ok(())
    }

    /// Moves `claim` to a new commit saying `message`, as long as the remote still has it
    /// where it was read, and records the release of the claim it replaces (`record.1`, a
    /// message whose commit descends from the old claim's) at `record.0`, in the same atomic
    /// push: the remote has both or neither.
    pub fn hand_over(
        &self,
        claim: &RemoteRef,
        message: &str,
        record: (&str, &str),
    ) -> Result<(), String> {
        let remote = self.remote().ok_or("the repository has no remote")?;
        let commit = self
            .claim_commit(message, None)
            .ok_or("git could not make the claim's commit")?;
        let kept = self
            .claim_commit(record.1, Some(&claim.commit))
            .ok_or("git could not make the release's record")?;
        self.push_leased(
            &remote,
            (claim.refname.as_str(), claim.commit.as_str()),
            &[
                format!("{commit}:{}", claim.refname),
                format!("{kept}:{}", record.0),
            ],
        )?;
        let _ = git(&self.dir)
            .args(["update-ref", &claim.refname, &commit])
            .output();
        let _ = git(&self.dir)
            .args(["update-ref", record.0, &kept])
            .output();
        Ok(())
    }

    /// Moves the claim at `refname` from the commit `was` to a new one saying `message`, as
    /// long as the remote still has `was` there.
    pub fn take_over(&self, refname: &str, was: &str, message: &str) -> Result<(), String> {
        let remote = self.remote().ok_or("the repository has no remote")?;
        let commit = self
            .claim_commit(message, None)
            .ok_or("git could not make the claim's commit")?;
        self.push_leased(&remote, (refname, was), &[format!("{commit}:{refname}")])?;
        let _ = git(&self.dir)
            .args(["update-ref", refname, &commit])
            .output();
        Ok(())
    }

    /// Pushes `specs` to `remote` in one atomic push, as long as the remote's `lease.0`
    /// still points at `lease.1`: nothing changes there otherwise.
    pub(super) fn push_leased(
        &self,
        remote: &str,
        lease: (&str, &str),
        specs: &[String],
    ) -> Result<String, String> {
        let lease = format!("--force-with-lease={}:{}", lease.0, lease.1);
        let mut args: Vec<&str> =
            vec!["push", "--quiet", "--no-verify", "--atomic", &lease, remote];
        args.extend(specs.iter().map(String::as_str));
        network(&self.dir, &args)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use super::super::claim::{locked, network_failing, LOCK_PAUSES};
    use super::*;

    const CLAIM: &str = "refs/bmad/claims/p/sprint-1";

    fn git_ok(dir: &Path, args: &[&str]) {
        let out = git(dir).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A bare remote holding the claim [`CLAIM`], and a clone of it without a copy of the
    /// claim, whose next fetch of the claims must write that copy; and where git takes the
    /// copy's lock.
    fn team() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git_ok(root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        git_ok(root, &["clone", "-q", "origin.git", "c"]);
        let clone = root.join("c");
        let repo = Repo::at(&clone).unwrap();
        let commit = repo.claim_commit("Ada holds sprint 1", None).unwrap();
        git_ok(
            &clone,
            &["push", "-q", "origin", &format!("{commit}:{CLAIM}")],
        );
        let lock = clone.join(".git/refs/bmad/claims/p/sprint-1.lock");
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        (dir, clone, lock)
    }

    #[test]
    fn git_s_own_lock_message_is_told_from_a_remote_that_cannot_be_reached() {
        let (_dir, clone, lock) = team();
        std::fs::write(&lock, "").unwrap();
        let args = [
            "fetch",
            "--quiet",
            "origin",
            "+refs/bmad/claims/*:refs/bmad/claims/*",
        ];
        let failure = network_failing(&clone, &args).unwrap_err();
        let line = locked(&failure.stderr).expect(&failure.stderr);
        assert!(
            line.starts_with("cannot lock ref") && line.ends_with("sprint-1.lock': File exists."),
            "{line}"
        );
        git_ok(
            &clone,
            &["remote", "set-url", "origin", "/nowhere/origin.git"],
        );
        let failure = network_failing(&clone, &args).unwrap_err();
        assert_eq!(locked(&failure.stderr), None, "{}", failure.stderr);
    }

    /// A start's claim that meets the lock while it reads the holder's claim waits it out
    /// too, and learns the holder: it does not go on with a claim of its own clone alone.
    #[test]
    fn a_claim_that_meets_a_lock_reading_the_holder_waits_it_out() {
        let (_dir, clone, lock) = team();
        std::fs::write(&lock, "").unwrap();
        let held = lock.clone();
        let other = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(250));
            std::fs::remove_file(held).unwrap();
        });
        let got = Repo::at(&clone).unwrap().claim(CLAIM, "Bea holds sprint 1");
        other.join().unwrap();
        let message = "Ada holds sprint 1".to_string();
        let remote = "origin".to_string();
        assert_eq!(got, crate::git::Claim::Held { remote, message });
    }

    #[test]
    fn a_lock_held_a_moment_is_waited_out_and_one_that_stays_is_said_after_bounded_tries() {
        let (_dir, clone, lock) = team();
        let repo = Repo::at(&clone).unwrap();
        // Another git process holds the lock for 250 ms: the fetch, tried again, gets the claim.
        std::fs::write(&lock, "").unwrap();
        let held = lock.clone();
        let other = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(250));
            std::fs::remove_file(held).unwrap();
        });
        let board = repo.board().unwrap();
        other.join().unwrap();
        assert_eq!(board.unreachable, None);
        assert_eq!(board.claims.len(), 1, "{board:?}");
        assert_eq!(board.claims[0].refname, CLAIM);

        // A lock that stays (a git process that crashed holding it): given up after the
        // bounded pauses, saying which lock, and the clone's copies are what it had.
        git_ok(&clone, &["update-ref", "-d", CLAIM]);
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, "").unwrap();
        let started = Instant::now();
        let board = repo.board().unwrap();
        let took = started.elapsed();
        let waited: Duration = LOCK_PAUSES.iter().sum();
        assert!(
            took >= waited && took < waited + crate::git::NETWORK_DEADLINE,
            "{took:?}"
        );
        let why = board.unreachable.clone().unwrap();
        assert!(
            why.starts_with(
                "another git process held a lock of the clone, 4 times: cannot lock ref"
            ) && why.contains("sprint-1.lock': File exists."),
            "{why}"
        );
        assert!(board.claims.is_empty(), "{board:?}");
    }
}
