//! Appending to a file the server shares with others (the BMAD method's deferred-work
//! ledger): the bytes go after what is there, which is never read back or rewritten, so a
//! line someone else appended meanwhile stays; confined as every write is (the folders made
//! and the file opened beneath the project's handle, following no link), then fsynced.

use std::io::Write;

use rustix::fs::{Mode, OFlags};

use super::beneath;
use super::project::Project;
use crate::error::Result;

impl Project {
    /// Appends `content` to `rel` (made when missing), durably.
    pub fn append(&self, rel: &str, content: &[u8]) -> Result<()> {
        let (abs, dir, name) = self.prepare(rel)?;
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE;
        let fd = beneath::open(
            std::os::fd::AsFd::as_fd(&*dir),
            std::path::Path::new(&name),
            flags,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| self.beneath_error(rel, &abs, &e))?;
        let mut file = std::fs::File::from(fd);
        let done = file.write_all(content).and_then(|()| file.sync_all());
        done.map_err(|e| self.beneath_error(rel, &abs, &e))?;
        // A file made now is an entry of its folder: synced too, or a crash could lose it.
        beneath::as_file(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| self.beneath_error(rel, &abs, &e))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_is_there_stays_and_the_new_bytes_follow() {
        let (dir, project) = crate::files::project::tests::project();
        let rel = "out/impl/deferred-work.md";
        project.append(rel, b"# Deferred\n").unwrap();
        project.append(rel, b"- one\n").unwrap();
        let text = std::fs::read_to_string(dir.path().join(rel)).unwrap();
        assert_eq!(text, "# Deferred\n- one\n");
        assert!(
            project.append("src/main.rs", b"x").is_err(),
            "outside the areas"
        );
        #[cfg(unix)]
        {
            std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
            std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("linked"))
                .unwrap();
            assert!(project.append("linked/deferred-work.md", b"x").is_err());
            assert!(!dir.path().join("elsewhere/deferred-work.md").exists());
        }
    }
}
