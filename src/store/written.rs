//! The files the server itself writes among the project's own (docs/spec.md §7.14): the
//! BMAD method's sprint status and epics, the copies and lessons it writes for the method's
//! skills, what it appends to the deferred-work ledger, the lines `bmad-mcp init` writes.
//! After each such write the blob id now at the path is recorded; a path whose content is
//! still that blob is no one's change, neither drift nor a round's work.
//!
//! The record is kept per work tree in the repository's folder for it
//! (`<git dir>/bmad-mcp/.bmad-task/written.json`; for a project in a folder of its work
//! tree, `written-<digest of the folder>.json`), never in the work tree: it is not
//! committed, so it never merges, and no `.gitignore` line is needed. It is written under
//! the project lock without waiting for the disk; lost or unreadable, it only means the
//! server's files count as anyone's change until the server writes them again. Files of
//! the workflow's own folders (`.bmad-task/`, `.claude/`, `.bmad/`) are not recorded: git's
//! readings leave them out already.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::files::Project;
use crate::git::{GitPath, Repo};

/// Paths recorded at most; past it, the first in order are dropped.
const MAX_RECORDED: usize = 10_000;

/// The blob the server last wrote at each path it wrote, relative to the project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    files: BTreeMap<String, String>,
}

impl Written {
    /// The record of `repo`'s work tree for its project; empty when there is none or it
    /// cannot be read.
    pub fn read(repo: &Repo) -> Written {
        let Some((home, rel)) = home(repo, false) else {
            return Written::default();
        };
        match home.read(&rel) {
            Ok(Some(text)) => serde_json::from_str(&text).unwrap_or_default(),
            _ => Written::default(),
        }
    }

    /// Whether `id` is the blob the server last wrote at `path` (a name as
    /// [`GitPath::key`] gives it).
    pub fn is_ours(&self, path: &str, id: Option<&str>) -> bool {
        id.is_some() && self.files.get(path).map(String::as_str) == id
    }

    /// Whether the server wrote `path` at all.
    pub fn names(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
}

/// The record's folder and its name in it, for `repo`'s project (`make`: the folder made
/// when missing).
fn home(repo: &Repo, make: bool) -> Option<(Project, String)> {
    let dir = repo.git_dir().join("bmad-mcp");
    if make {
        std::fs::create_dir_all(&dir).ok()?;
    }
    let home = dir.is_dir().then(|| Project::shared(&dir).ok())??;
    let within = repo.project_in_tree();
    let name = if within.as_os_str().is_empty() {
        "written.json".to_string()
    } else {
        use std::os::unix::ffi::OsStrExt;
        let digest = sha2::Sha256::digest(within.as_os_str().as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("written-{hex}.json")
    };
    Some((home, format!(".bmad-task/{name}")))
}

/// Records that the server has just written `paths` (relative to the project): the blob
/// now at each of the project's own files among them, read as the round's digest reads it.
/// Called under the project lock; a record that cannot be written is passed over.
pub fn wrote(project: &Project, paths: &[String]) {
    let own: Vec<GitPath> = paths
        .iter()
        .filter(|p| crate::git::is_project_file(p))
        .map(|p| GitPath::from(p.as_str()))
        .collect();
    if own.is_empty() {
        return;
    }
    let Some(repo) = Repo::at(&project.root) else {
        return;
    };
    let like = repo.facts(false).head.unwrap_or_else(|| "0".repeat(40));
    let ids = repo.blob_ids(&own, &like);
    let mut record = Written::read(&repo);
    for (path, id) in own.iter().zip(ids) {
        match id {
            Some(id) => record.files.insert(path.key(), id),
            None => record.files.remove(&path.key()),
        };
    }
    while record.files.len() > MAX_RECORDED {
        record.files.pop_first();
    }
    let Some((home, rel)) = home(&repo, true) else {
        return;
    };
    let text = serde_json::to_string_pretty(&record).unwrap_or_default();
    if let Err(e) = home.replace_unsynced(&rel, text.as_bytes()) {
        tracing::debug!(%e, "the record of the server's own files was not written");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=A", "-c", "user.email=a@e.org"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn what_the_server_wrote_is_recorded_per_work_tree_out_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["commit", "-q", "--allow-empty", "-m", "one"]);
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("out/status.yaml"), "a: 1\n").unwrap();
        let project = Project::shared(&root).unwrap();
        wrote(
            &project,
            &["out/status.yaml".into(), ".bmad-task/s.json".into()],
        );
        let repo = Repo::at(&root).unwrap();
        let record = Written::read(&repo);
        let head = repo.facts(false).head.unwrap();
        let id = repo.blob_ids(&["out/status.yaml".into()], &head).remove(0);
        assert!(record.is_ours("out/status.yaml", id.as_deref()));
        assert!(
            !record.names(".bmad-task/s.json"),
            "the workflow's own files"
        );
        assert!(root.join(".git/bmad-mcp/.bmad-task/written.json").is_file());
        // Changed by someone since: no longer the server's blob.
        std::fs::write(root.join("out/status.yaml"), "a: 2\n").unwrap();
        let id = repo.blob_ids(&["out/status.yaml".into()], &head).remove(0);
        assert!(!Written::read(&repo).is_ours("out/status.yaml", id.as_deref()));
        // A project in a folder of the work tree has a record of its own.
        let app = root.join("app");
        std::fs::create_dir(&app).unwrap();
        std::fs::write(app.join("f"), "x\n").unwrap();
        wrote(&Project::shared(&app).unwrap(), &["f".into()]);
        let sub = Repo::at(&app).unwrap();
        assert!(Written::read(&sub).names("f"));
        assert!(!Written::read(&repo).names("f"));
    }
}
