//! What git says of one file of the project: the text its last commit holds (a `file:`
//! fact is read from there, not from the work tree, where a file git is told to ignore
//! changes of, `--skip-worktree` or `--assume-unchanged`, can say anything), and who
//! changed it last, as git and the work tree show it (a draft taken from a file names its
//! author truly).

use super::{run, Repo};

/// Who last changed a file, as git and the work tree show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastChange {
    /// The work tree holds what the last commit that touched it holds.
    Committed(Commit),
    /// Changed in the work tree since `since`, its last commit (`None`: added to the index
    /// and never committed): not committed.
    Uncommitted { since: Option<Commit> },
    /// git does not track it (new, or ignored): never committed.
    Untracked,
}

/// A commit that touched a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// Its abbreviated id.
    pub id: String,
    /// Its author, `Name <email>`, as the commit says.
    pub author: String,
    /// When it was authored (ISO 8601).
    pub date: String,
}

impl Repo {
    /// The text of `rel` (relative to the project) in the commit checked out, read from
    /// git's objects; `Some(None)` when that commit does not hold it (or HEAD has no
    /// commit yet), `None` when git cannot say or the blob is not UTF-8.
    pub fn committed_text(&self, rel: &str) -> Option<Option<String>> {
        let tracked_in_head = run(
            &self.dir,
            &[],
            &[
                "ls-tree",
                "--name-only",
                "-z",
                "HEAD",
                "--",
                &format!(":(literal){rel}"),
            ],
        );
        match tracked_in_head {
            None => return self.facts(false).head.is_none().then_some(None),
            Some(out) if !out.split('\0').any(|p| p == rel) => return Some(None),
            Some(_) => {}
        }
        // `cat-file blob` prints the object as stored: no filter, no text conversion.
        run(
            &self.dir,
            &[],
            &["cat-file", "blob", &format!("HEAD:./{rel}")],
        )
        .map(Some)
    }

    /// Who last changed `rel` (relative to the project), as git and the work tree show it;
    /// `None` when git cannot say.
    pub fn last_change(&self, rel: &str) -> Option<LastChange> {
        let literal = format!(":(literal){rel}");
        let off = self.without_drivers();
        let status = run(
            &self.dir,
            &off,
            &[
                "status",
                "--porcelain",
                "--no-renames",
                "-z",
                "--ignored",
                "--",
                &literal,
            ],
        )?;
        let code = status.get(..2).unwrap_or("");
        if code == "??" || code == "!!" {
            return Some(LastChange::Untracked);
        }
        let format = "--format=%h%x00%an <%ae>%x00%aI";
        let log = run(&self.dir, &[], &["log", "-1", format, "--", &literal]);
        let since = log.and_then(|l| {
            let mut parts = l.trim_end().splitn(3, '\0');
            Some(Commit {
                id: parts.next()?.to_string(),
                author: parts.next()?.to_string(),
                date: parts.next()?.to_string(),
            })
        });
        Some(match (code.trim().is_empty(), since) {
            (true, Some(commit)) => LastChange::Committed(commit),
            (_, since) => LastChange::Uncommitted { since },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.org")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.org")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_files_last_change_and_committed_text_are_gits() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        git(p, &["init", "-q"]);
        std::fs::write(p.join("a.md"), "one\n").unwrap();
        let repo = Repo::at(p).unwrap();
        assert_eq!(repo.last_change("a.md"), Some(LastChange::Untracked));
        assert_eq!(repo.committed_text("a.md"), Some(None), "no commit yet");
        git(p, &["add", "a.md"]);
        git(p, &["commit", "-qm", "first"]);
        let Some(LastChange::Committed(c)) = repo.last_change("a.md") else {
            panic!("{:?}", repo.last_change("a.md"))
        };
        assert_eq!(c.author, "Ada <ada@example.org>");
        assert_eq!(repo.committed_text("a.md"), Some(Some("one\n".into())));
        // A change hidden from git's status: the committed text is still the commit's.
        std::fs::write(p.join("a.md"), "password: hunter2\n").unwrap();
        git(p, &["update-index", "--skip-worktree", "a.md"]);
        assert_eq!(repo.committed_text("a.md"), Some(Some("one\n".into())));
        git(p, &["update-index", "--no-skip-worktree", "a.md"]);
        assert!(matches!(
            repo.last_change("a.md"),
            Some(LastChange::Uncommitted { since: Some(_) })
        ));
        assert_eq!(repo.committed_text("b.md"), Some(None));
    }
}
