//! The claims a team's remote holds, read and changed as a whole: every ref under
//! `refs/bmad/claims/` and `refs/bmad/released/` fetched into the clone (its copies follow
//! the remote's, pruned), listed with the commit's time and message (or listed as the last
//! fetch left them, without asking the remote); one claim released
//! (deleted on the remote only while it is still the claim that was shown, with a record of
//! the release pushed in the same atomic push); and one claim moved to a new message (its
//! owner taking it over from another clone), again only while it is the claim read. Every
//! network command is [`super::claim`]'s, bounded in time and asking nothing.

use super::claim::{git, network};
use super::{run, Repo};

/// Where the claims are.
pub const CLAIMS: &str = "refs/bmad/claims/";
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
    /// Why the remote could not be asked (the refs are then the last fetch's).
    pub unreachable: Option<String>,
}

impl Repo {
    /// Fetches the claims and release records of the remote and lists them; `None` when
    /// the repository has no remote.
    pub fn board(&self) -> Option<Board> {
        let remote = self.remote()?;
        let fetched = network(
            &self.dir,
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--prune",
                "--no-write-fetch-head",
                &remote,
                &format!("+{CLAIMS}*:{CLAIMS}*"),
                &format!("+{RELEASED}*:{RELEASED}*"),
            ],
        );
        let mut board = self.board_kept()?;
        board.unreachable = fetched.err();
        Some(board)
    }

    /// The claims and release records as the clone's last fetch left them, without asking
    /// the remote; `None` when the repository has no remote.
    pub fn board_kept(&self) -> Option<Board> {
        let remote = self.remote()?;
        let (claims, released) = self
            .local_refs()
            .into_iter()
            .partition(|r: &RemoteRef| r.refname.starts_with(CLAIMS));
        Some(Board {
            remote,
            claims,
            released,
            unreachable: None,
        })
    }

    /// The clone's copies of the claims and release records, by name.
    fn local_refs(&self) -> Vec<RemoteRef> {
        let format =
            "--format=%(refname)%00%(objectname)%00%(creatordate:iso-strict)%00%(contents:subject)";
        let out = run(&self.dir, &[], &["for-each-ref", format, CLAIMS, RELEASED]);
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
