//! The merge driver of the BMAD method's `sprint-status.yaml`: `bmad-mcp init` installs it
//! (the committed `.gitattributes` line that names it, and its command in the clone's own
//! git config, this binary by its absolute path), and git runs the hidden
//! `bmad-mcp merge-sprint-status %O %A %B %L` for each merge of the file: the result goes
//! to the file git names `%A`, and the exit status says whether conflicts are left in it
//! ([`bmad_method::shared_plan::merge`](crate::bmad_method::shared_plan::merge) merges).

use std::path::Path;

use super::{Exit, Outcome};
use crate::files::Project;

/// Merges `ours` (written over with the result) and `theirs` from `base`: done when
/// nothing conflicts, failed when conflicts are left marked in `ours` (or the merge could
/// not be made, `ours` left as it was). A side that is not UTF-8, or that holds the
/// driver's own marker lines, is refused: `ours` gets git's own line merge of the three
/// (its conflict markers where it conflicts) and the merge fails, so git leaves the file
/// conflicted for the person instead of taking a lossy or a forged merge.
pub(super) fn merge(base: &Path, ours: &Path, theirs: &Path, marker_size: usize) -> Outcome {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    let texts = [&b, &o, &t].map(|bytes| std::str::from_utf8(bytes));
    let refused = texts
        .iter()
        .zip(["the base", "ours", "theirs"])
        .find_map(|(text, side)| match text {
            Err(e) => Some(format!(
                "{side} is not UTF-8 (byte {} is not)",
                e.valid_up_to()
            )),
            Ok(text) => crate::bmad_method::shared_plan::merge::refused(text)
                .map(|why| format!("{side}: {why}")),
        });
    if let Some(why) = refused {
        return leave_to_git(&b, ours, &o, &t, marker_size, &why);
    }
    let [Ok(b), Ok(o), Ok(t)] = texts else {
        unreachable!("every side was read as UTF-8 above")
    };
    let Some((text, conflicted)) =
        crate::bmad_method::shared_plan::merge::merge(b, o, t, marker_size)
    else {
        return Err("git merge-file could not be run: the file is left as a conflict".into());
    };
    std::fs::write(ours, text).map_err(|e| format!("{}: {e}", ours.display()))?;
    if conflicted {
        eprintln!("bmad-mcp: sprint-status.yaml holds conflicts for you to resolve");
        return Ok(Exit::Failed);
    }
    Ok(Exit::Done)
}

/// A refused merge: `ours` (the file at `path`) gets what git's own line merge makes of
/// the three sides, and the merge fails whatever that holds, so the file stays a conflict
/// for the person.
fn leave_to_git(
    base: &[u8],
    path: &Path,
    ours: &[u8],
    theirs: &[u8],
    marker_size: usize,
    why: &str,
) -> Outcome {
    eprintln!("bmad-mcp: sprint-status.yaml not merged key by key: {why}; left as git's conflict for you to resolve");
    if let Some((merged, _)) = crate::git::merge_bytes(ours, base, theirs, marker_size) {
        std::fs::write(path, merged).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(Exit::Failed)
}

/// The command git runs for the driver: this binary (`exe`, by its absolute path), and, when
/// the shell cannot run it (the binary moved or was deleted: status 126 or 127), git's own
/// line merge of the three versions into `%A`, so that what conflicts is left marked as
/// git marks it: nothing of the other side is dropped silently, and the merge stops.
fn driver_command(exe: &str) -> String {
    format!(
        "{} merge-sprint-status %O %A %B %L || {{ s=$?; [ $s -lt 126 ] && exit $s; echo 'bmad-mcp: the merge driver of sprint-status.yaml is not there (run bmad-mcp init in this clone): merged line by line' >&2; git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B; }}",
        quoted(exe)
    )
}

/// `s` quoted for the shell git runs a driver's command with.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Installs the driver in `project` when it is in a git repository: the `.gitattributes`
/// block and the clone's config. What was done, for the person; `None` outside git.
pub(super) fn install(project: &Project) -> Option<Result<String, String>> {
    crate::git::Repo::at(&project.root)?;
    let exe = match std::env::current_exe() {
        Ok(p) => p.display().to_string(),
        Err(e) => return Some(Err(format!("this binary's path is unknown: {e}"))),
    };
    let name = crate::store::MERGE_DRIVER;
    let driver = driver_command(&exe);
    let describe = "the BMAD method's sprint status, merged key by key by bmad-mcp";
    if let Err(e) = crate::git::set_driver(&project.root, name, describe, &driver) {
        return Some(Err(format!(
            "the merge driver could not be set in git's config: {e}"
        )));
    }
    let attributes = match crate::store::write_gitattributes(project) {
        Ok(crate::store::Ignored::AlreadyThere) => "already names it",
        Ok(_) => "now names it",
        Err(e) => return Some(Err(e.to_string())),
    };
    Some(Ok(format!(
        "{}/.gitattributes {attributes} for {}; this clone's git config runs it as {driver} (each clone runs `bmad-mcp init` once: a clone's config is not shared).",
        project.display(),
        crate::store::ATTRIBUTES.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_writes_the_merge_and_says_whether_conflicts_are_left() {
        let dir = tempfile::tempdir().unwrap();
        let f = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let head = "generated: 11-27-2026 10:00\nlast_updated: 11-27-2026 10:00\nproject: p\n\ndevelopment_status:\n";
        let base = f(
            "O",
            &format!("{head}  epic-1: backlog\n  1-1-a: backlog\n  1-2-b: backlog\n"),
        );
        let ours = f(
            "A",
            &format!(
                "{}  epic-1: in-progress\n  1-1-a: done\n  1-2-b: backlog\n",
                head.replace("last_updated: 11-27-2026 10", "last_updated: 11-27-2026 11")
            ),
        );
        let theirs = f(
            "B",
            &format!(
                "{}  epic-1: in-progress\n  1-1-a: backlog\n  1-2-b: review\n",
                head.replace("last_updated: 11-27-2026 10", "last_updated: 11-27-2026 12")
            ),
        );
        assert_eq!(merge(&base, &ours, &theirs, 7), Ok(Exit::Done));
        let merged = std::fs::read_to_string(&ours).unwrap();
        assert!(
            merged.contains("last_updated: 11-27-2026 12:00\n"),
            "{merged}"
        );
        assert!(
            merged.contains("  1-1-a: done\n  1-2-b: review\n"),
            "{merged}"
        );
        let odd = f(
            "C",
            &format!("{head}  epic-1: backlog\n  1-1-a: backlog\n  1-2-b: strange\n"),
        );
        let other = f(
            "D",
            &format!("{head}  epic-1: backlog\n  1-1-a: backlog\n  1-2-b: odd\n"),
        );
        assert_eq!(merge(&base, &odd, &other, 7), Ok(Exit::Failed));
        assert!(std::fs::read_to_string(&odd)
            .unwrap()
            .contains("<<<<<<< ours\n  1-2-b: strange\n"));
        assert_eq!(quoted("/a b/it's"), "'/a b/it'\\''s'");
    }

    const HEAD: &str = "generated: 11-27-2026 10:00\nlast_updated: 11-27-2026 10:00\nproject: p\n\ndevelopment_status:\n";

    /// The three sides written in a folder: (base, ours, theirs).
    fn sides(dir: &Path, [b, o, t]: [&[u8]; 3]) -> [std::path::PathBuf; 3] {
        [("O", b), ("A", o), ("B", t)].map(|(name, bytes)| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        })
    }

    #[test]
    fn a_side_that_is_not_utf8_is_left_to_git_as_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let base = format!("{HEAD}  1-1-a: backlog\n  1-2-b: backlog\n");
        let ours = base.replace("1-1-a: backlog", "1-1-a: done");
        // A Latin-1 `é` in a comment theirs added.
        let mut theirs = base.replace("1-2-b: backlog", "1-2-b: review").into_bytes();
        theirs.extend_from_slice(b"# caf\xe9\n");
        let [b, o, t] = sides(dir.path(), [base.as_bytes(), ours.as_bytes(), &theirs]);
        assert_eq!(merge(&b, &o, &t, 7), Ok(Exit::Failed));
        let left = std::fs::read(&o).unwrap();
        assert!(
            left.windows(5).any(|w| w == b"caf\xe9\n"),
            "the byte is kept as it was, not replaced: {}",
            String::from_utf8_lossy(&left)
        );
        let replaced = "\u{fffd}".as_bytes();
        assert!(!left.windows(3).any(|w| w == replaced), "no U+FFFD written");
    }

    #[test]
    fn a_side_holding_the_drivers_own_markers_is_left_to_git_as_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let base = format!("{HEAD}  1-1-a: backlog\n");
        let ours = base.replace("1-1-a: backlog", "1-1-a: done");
        let forged = format!(
            "{base}\u{1}bmad-mcp: development_status entries\u{1}\n\u{1}bmad-mcp: last_updated\u{1}\n"
        );
        let [b, o, t] = sides(
            dir.path(),
            [base.as_bytes(), ours.as_bytes(), forged.as_bytes()],
        );
        assert_eq!(merge(&b, &o, &t, 7), Ok(Exit::Failed));
        let left = std::fs::read_to_string(&o).unwrap();
        // Git's line merge, its conflict marked, the forged lines left as lines: not the
        // merged entries pasted in their place, and no clean merge.
        assert!(left.contains("<<<<<<< ours\n  1-1-a: done\n"), "{left}");
        assert!(
            left.contains("\u{1}bmad-mcp: development_status entries\u{1}\n"),
            "{left}"
        );
    }

    fn git(dir: &Path, args: &[&str]) -> std::process::Output {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .output()
            .unwrap()
    }

    /// The driver's binary moved after `init`: git's merge of two stories moved on two
    /// branches stops with git's own conflict markers in the file, both sides' statuses in
    /// it, rather than this side's file alone.
    #[test]
    fn a_driver_whose_binary_moved_leaves_git_s_own_markers() {
        let (dir, project) = crate::files::project::tests::project();
        let repo = dir.path();
        let file = repo.join("sprint-status.yaml");
        let status = |a: &str, b: &str, at: &str| {
            format!("last_updated: {at}\ndevelopment_status:\n  1-1-a: {a}\n  1-2-b: {b}\n")
        };
        assert!(git(repo, &["init", "-q", "-b", "main"]).status.success());
        assert!(install(&project).expect("in git").is_ok());
        std::fs::write(&file, status("backlog", "backlog", "10:00")).unwrap();
        git(repo, &["add", "-A"]);
        assert!(git(repo, &["commit", "-q", "-m", "base"]).status.success());
        // `init` named this binary; it is not there any more.
        let key = "merge.bmad-sprint-status.driver";
        let out = git(repo, &["config", key]);
        let driver = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let exe = quoted(&std::env::current_exe().unwrap().display().to_string());
        let moved = quoted(&repo.join("moved-away/bmad-mcp").display().to_string());
        assert!(driver.starts_with(&exe), "{driver}");
        assert!(
            git(repo, &["config", key, &driver.replacen(&exe, &moved, 1)])
                .status
                .success()
        );
        git(repo, &["checkout", "-q", "-b", "other"]);
        std::fs::write(&file, status("backlog", "review", "12:00")).unwrap();
        assert!(git(repo, &["commit", "-q", "-am", "theirs"])
            .status
            .success());
        git(repo, &["checkout", "-q", "main"]);
        std::fs::write(&file, status("done", "backlog", "11:00")).unwrap();
        assert!(git(repo, &["commit", "-q", "-am", "ours"]).status.success());
        let merged = git(repo, &["merge", "-q", "--no-edit", "other"]);
        assert!(!merged.status.success(), "the merge stops on the conflict");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("<<<<<<< ours") && text.contains(">>>>>>> theirs"),
            "{text}"
        );
        assert!(
            text.contains("1-1-a: done") && text.contains("1-2-b: review"),
            "{text}"
        );
        let said = String::from_utf8_lossy(&merged.stderr);
        assert!(said.contains("run bmad-mcp init in this clone"), "{said}");
    }
}
