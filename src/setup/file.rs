//! Reading and replacing a host's configuration file. The project's confined writers
//! ([`crate::files`]) do not fit: they write only the server's own folders of a
//! project, never follow a link, and a host's file is elsewhere (the user's home) or the human's
//! (`.vscode/`); and a user's file is often a link into a dotfiles repository, which must stay a
//! link. So where the path leads is worked out first, every link on the way followed
//! ([`destination`]: the caller checks a project's file stays in the project), and that file is
//! replaced atomically (a temporary file beside it, fsync, rename, fsync of the folder), keeping
//! its permissions, and only if nobody changed it since it was read (a running host may rewrite its
//! own file).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The most links followed on the way to one file, as the kernel's limit.
const MAX_LINKS: usize = 40;

/// The largest host file setup edits. The edit holds the text, its syntax tree and the
/// new text at once (a 300 MiB file took 929 MB); Claude Code's own file, which keeps
/// every project's history, is the largest seen in use, at a few MiB.
pub const MAX_BYTES: u64 = 32 << 20;

/// The file's text; `None` when there is no file. One over [`MAX_BYTES`] is refused
/// before it is read, and a file that grows past it while read is too.
pub fn read(path: &Path) -> Result<Option<String>, String> {
    use std::io::Read;
    // Not opened unless a plain file: a FIFO would hold the open until someone writes.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err("it is not a plain file".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let too_big = || {
        format!(
            "it is larger than {} MiB, more than any host's configuration: setup does not read it",
            MAX_BYTES >> 20
        )
    };
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if meta.len() > MAX_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| "it is not UTF-8 text".to_string())
}

/// Replaces the file at `target` (a [`destination`]) with `text`, when it still holds `was`
/// (`None`: it did not exist), making the folders it needs.
pub fn replace(target: &Path, was: Option<&str>, text: &str) -> Result<(), String> {
    let dir = target
        .parent()
        .ok_or("the file has no folder")?
        .to_path_buf();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".bmad-mcp-setup.")
        .tempfile_in(&dir)
        .map_err(|e| e.to_string())?;
    tmp.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    if let Ok(meta) = std::fs::metadata(target) {
        // A new file gets the temporary file's 0600: a host's file may hold secrets.
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(|e| e.to_string())?;
    }
    tmp.as_file().sync_all().map_err(|e| e.to_string())?;
    if read(target)?.as_deref() != was {
        return Err("it changed while setup was editing it (is the host running?); nothing was written, run setup again".into());
    }
    tmp.persist(target).map_err(|e| e.error.to_string())?;
    if let Ok(folder) = std::fs::File::open(&dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// Where a write to `path` lands: an absolute path with no link in it, every link on the
/// way (of the file and of each folder above it, a dangling one too) followed, and `..`
/// taken after the link before it; the folders and the file that are not there yet are
/// where they would be made. Replacing this file keeps a link to it a link.
pub fn destination(path: &Path) -> Result<PathBuf, String> {
    let path = std::path::absolute(path).map_err(|e| e.to_string())?;
    // Each part owned: a link's text joins the parts still to walk.
    let owned = |p: &Path| -> Vec<PathBuf> {
        p.components()
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect()
    };
    let mut todo: VecDeque<PathBuf> = owned(&path).into();
    let mut links = 0;
    let mut out = PathBuf::new();
    while let Some(part) = todo.pop_front() {
        match part.components().next() {
            Some(Component::Prefix(_) | Component::RootDir) => out.push(&part),
            Some(Component::Normal(name)) => {
                let next = out.join(name);
                let Ok(to) = std::fs::read_link(&next) else {
                    out = next;
                    continue;
                };
                links += 1;
                if links > MAX_LINKS {
                    return Err("too many links lead to it".into());
                }
                for c in owned(&to).into_iter().rev() {
                    todo.push_front(c);
                }
            }
            // `out` holds no link: its parent is the folder `..` names.
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) | None => {}
        }
    }
    Ok(out)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn the_destination_follows_every_link_and_takes_dot_dot_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("deep/er")).unwrap();
        // `in/..` is the folder above where `in` leads, not `base`.
        symlink(base.join("deep/er"), base.join("in")).unwrap();
        assert_eq!(
            destination(&base.join("in/../new/f.json")).unwrap(),
            base.join("deep/new/f.json")
        );
        // A dangling link is followed to where the file would be made.
        symlink("gone/x", base.join("f")).unwrap();
        assert_eq!(destination(&base.join("f")).unwrap(), base.join("gone/x"));
        symlink("loop", base.join("loop")).unwrap();
        assert!(destination(&base.join("loop")).is_err());
    }
}
