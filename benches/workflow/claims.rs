//! How long a story's claim of a sprint takes through the team's remote (section
//! `claims`): a bare repository on this disk as `origin` and a clone of it, each claim a
//! new ref that the first push creates (`git::Repo::claim`, as a story's `start` makes
//! it), then a claim of a ref another clone holds, which learns the holder instead.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use bmad_mcp::git::{Claim, Repo};

use crate::table::{ms, Table, Target};
use crate::{Config, Res};

fn git(dir: &Path, args: &[&str]) -> Res<()> {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()?
        .status
        .success();
    if ok {
        Ok(())
    } else {
        Err(format!("git {args:?} failed").into())
    }
}

pub fn bench(cfg: &Config, table: &mut Table) -> Res<()> {
    let dir = tempfile::tempdir()?;
    let root = dir.path();
    git(root, &["init", "-q", "--bare", "-b", "main", "origin.git"])?;
    let clone = root.join("clone");
    git(root, &["clone", "-q", "origin.git", "clone"])?;
    for (k, v) in [("user.name", "Bench"), ("user.email", "bench@example.org")] {
        git(&clone, &["config", k, v])?;
    }
    git(&clone, &["commit", "-q", "--allow-empty", "-m", "first"])?;
    git(&clone, &["push", "-q", "-u", "origin", "main"])?;
    let repo = Repo::at(&clone).ok_or("the clone is a repository")?;
    let runs = cfg.runs(20, 5);
    let (mut won, mut held) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let refname = format!("refs/bmad/claims/bench/sprint-{i}");
        let t = Instant::now();
        let claim = repo.claim(&refname, &format!("{{\"sprint\": {i}}}"));
        won.push(ms(t.elapsed()));
        if !matches!(claim, Claim::Won { .. }) {
            return Err(format!("claim {i}: {claim:?}").into());
        }
        // The same ref from a clone that never made it: the holder is learned.
        git(&clone, &["update-ref", "-d", &refname])?;
        let t = Instant::now();
        let again = repo.claim(&refname, "{}");
        held.push(ms(t.elapsed()));
        if !matches!(again, Claim::Held { .. }) {
            return Err(format!("claim {i} again: {again:?}").into());
        }
    }
    table.stats(
        "claim a sprint through a local bare remote",
        &won,
        "ms",
        Target::None,
    );
    table.stats(
        "  a claim another clone holds: the holder learned",
        &held,
        "ms",
        Target::None,
    );
    Ok(())
}
