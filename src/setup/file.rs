//! Reading and replacing a host's configuration file. The project's confined writers
//! (`crate::files`) do not fit: they write only the server's own folders of a project,
//! never follow a link, and a host's file is elsewhere (the user's home) or the human's
//! (`.vscode/`); and a user's file is often a link into a dotfiles repository, which must
//! stay a link. So the file the path leads to is replaced atomically (a temporary file
//! beside it, fsync, rename, fsync of the folder), keeping its permissions, and only if
//! nobody changed it since it was read (a running host may rewrite its own file).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's text; `None` when there is no file.
pub fn read(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| "it is not UTF-8 text".to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Replaces the file at `path` (the file a link there leads to) with `text`, when it still
/// holds `was` (`None`: it did not exist).
pub fn replace(path: &Path, was: Option<&str>, text: &str) -> Result<(), String> {
    let target = real_target(path)?;
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
    if let Ok(meta) = std::fs::metadata(&target) {
        // A new file gets the temporary file's 0600: a host's file may hold secrets.
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(|e| e.to_string())?;
    }
    tmp.as_file().sync_all().map_err(|e| e.to_string())?;
    if read(&target)?.as_deref() != was {
        return Err("it changed while setup was editing it (is the host running?); nothing was written, run setup again".into());
    }
    tmp.persist(&target).map_err(|e| e.error.to_string())?;
    if let Ok(folder) = std::fs::File::open(&dir) {
        let _ = folder.sync_all();
    }
    Ok(())
}

/// The file `path` names, through any links, so that a link stays a link.
fn real_target(path: &Path) -> Result<PathBuf, String> {
    let mut target = path.to_path_buf();
    for _ in 0..32 {
        match std::fs::read_link(&target) {
            Ok(next) => {
                target = match target.parent() {
                    Some(parent) => parent.join(next),
                    None => next,
                }
            }
            Err(_) => return Ok(target),
        }
    }
    Err("too many links lead to it".into())
}
