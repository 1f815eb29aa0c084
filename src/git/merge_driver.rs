//! What the merge driver of the method's `sprint-status.yaml` asks of git: its own
//! three-way line merge (`git merge-file`) for the lines the driver does not merge key by
//! key, and the driver's entry in a clone's own config (`merge.<name>.driver`), which
//! `bmad-mcp init` writes (a clone's config is not shared: each clone names its binary).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// `ours`, `base` and `theirs` merged by git's three-way line merge: the text, and whether
/// it holds conflicts (marked with `marker_size` characters, labelled `ours`, `base` and
/// `theirs`). `None` when git cannot be run.
pub fn merge_text(
    ours: &str,
    base: &str,
    theirs: &str,
    marker_size: usize,
) -> Option<(String, bool)> {
    let (merged, conflicted) = merge_bytes(
        ours.as_bytes(),
        base.as_bytes(),
        theirs.as_bytes(),
        marker_size,
    )?;
    Some((String::from_utf8(merged).ok()?, conflicted))
}

/// [`merge_text`] on bytes, whatever their encoding: what git's own line merge makes of a
/// file the driver does not merge key by key.
pub fn merge_bytes(
    ours: &[u8],
    base: &[u8],
    theirs: &[u8],
    marker_size: usize,
) -> Option<(Vec<u8>, bool)> {
    let dir = tempfile::tempdir().ok()?;
    let mut paths = Vec::new();
    for (name, text) in [("ours", ours), ("base", base), ("theirs", theirs)] {
        let path = dir.path().join(name);
        let mut f = std::fs::File::create(&path).ok()?;
        f.write_all(text).ok()?;
        paths.push(path);
    }
    let out = Command::new("git")
        .args(["merge-file", "-p"])
        .arg(format!("--marker-size={}", marker_size.clamp(7, 64)))
        .args(["-L", "ours", "-L", "base", "-L", "theirs"])
        .args(&paths)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    // Its status is the number of conflicts; a negative one (above 127 here) an error.
    let code = out.status.code()?;
    if !(0..=127).contains(&code) {
        return None;
    }
    Some((out.stdout, code > 0))
}

/// Sets `merge.<name>.name` and `merge.<name>.driver` in the config of the repository at
/// `dir` (the clone's own, never the committed files).
pub fn set_driver(dir: &Path, name: &str, description: &str, driver: &str) -> Result<(), String> {
    for (key, value) in [("name", description), ("driver", driver)] {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["config", "--local", &format!("merge.{name}.{key}"), value])
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("git could not be run: {e}"))?;
        if !out.status.success() {
            return Err(crate::code::clip(
                String::from_utf8_lossy(&out.stderr).trim(),
                300,
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_merges_lines_and_marks_what_conflicts() {
        let base = "a\nb\nc\n";
        let (clean, conflicted) = merge_text("A\nb\nc\n", base, "a\nb\nC\n", 7).unwrap();
        assert_eq!((clean.as_str(), conflicted), ("A\nb\nC\n", false));
        let (text, conflicted) = merge_text("x\nb\nc\n", base, "y\nb\nc\n", 7).unwrap();
        assert!(conflicted);
        assert!(
            text.contains("<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"),
            "{text}"
        );
    }
}
