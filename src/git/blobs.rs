//! The work tree's files as git names them and hashes their content, read within bounds
//! (docs/spec.md §7.15): a name is bytes, as git's `-z` output gives it, so a name that is
//! not UTF-8 is a file like any other; a link's id is that of the path it names, as git
//! hashes a link, never of what it leads to; a FIFO, a device, a socket or a folder is
//! named and never opened; a regular file streams through the hash (none is held whole), up
//! to [`MAX_FILE`] bytes a file and [`MAX_READ`] bytes a reading, and a larger one, or one
//! past that budget, is taken by its size and modification time. A reading therefore costs
//! at most [`MAX_READ`] bytes read and a buffer, whatever the work tree holds.

use std::io::Read;
use std::path::Path;

use sha2::Digest as _;

use crate::files::{Look, Tree};

/// The largest file whose content is hashed; a larger one is taken by its size and
/// modification time.
pub const MAX_FILE: u64 = 8 * 1024 * 1024;
/// The most content one reading hashes; the files after it are taken as a larger one is.
pub const MAX_READ: u64 = 256 * 1024 * 1024;

/// A path git named, relative to the project: the bytes of its `-z` output.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GitPath(Vec<u8>);

impl GitPath {
    pub fn new(bytes: Vec<u8>) -> GitPath {
        GitPath(bytes)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The name as text, for a record and for people: itself when it is UTF-8, else each
    /// byte that is not shown as `\xNN`.
    pub fn key(&self) -> String {
        let mut out = String::new();
        for chunk in self.0.utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02X}"));
            }
        }
        out
    }
}

impl From<&str> for GitPath {
    fn from(s: &str) -> GitPath {
        GitPath(s.as_bytes().to_vec())
    }
}

/// The id of each path's content in the work tree at `dir`, in order, as described above
/// (`sha256`: the repository's ids are SHA-256 ones); `None` for a path with nothing there.
pub fn ids(dir: &Path, paths: &[GitPath], sha256: bool) -> Vec<Option<String>> {
    let Ok(tree) = Tree::open(dir) else {
        return vec![None; paths.len()];
    };
    let mut budget = MAX_READ;
    let mut buffer = vec![0u8; 64 * 1024];
    paths
        .iter()
        .map(|p| match tree.look(p.as_bytes(), MAX_FILE.min(budget)) {
            Look::Absent => None,
            Look::Link(target) => Some(blob_id(&target, sha256)),
            Look::File(file, size) => {
                budget = budget.saturating_sub(size);
                Some(streamed(file, size, sha256, &mut buffer))
            }
            Look::Large { size, modified } => Some(format!(
                "{size} bytes, modified {}.{:09}",
                modified.0, modified.1
            )),
            Look::Other(what) => Some(format!("({what})")),
        })
        .collect()
}

/// The blob id of `size` bytes read from `file`: the hash of `blob <size>\0` and the
/// bytes; a file that did not hold `size` bytes while it was read is said to be changing.
fn streamed(file: std::fs::File, size: u64, sha256: bool, buffer: &mut [u8]) -> String {
    let mut hash = Hash::new(sha256);
    hash.update(format!("blob {size}\0").as_bytes());
    let mut left = file.take(size);
    let mut read = 0u64;
    loop {
        match left.read(buffer) {
            Ok(0) => break,
            Ok(n) => {
                hash.update(&buffer[..n]);
                read += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return "(unreadable)".into(),
        }
    }
    if read != size {
        return "(changing while read)".into();
    }
    hash.hex()
}

/// A blob's id: the hash of `blob <size>\0` and the bytes (SHA-256 in a repository that
/// names objects so, else SHA-1).
pub fn blob_id(bytes: &[u8], sha256: bool) -> String {
    let mut hash = Hash::new(sha256);
    hash.update(format!("blob {}\0", bytes.len()).as_bytes());
    hash.update(bytes);
    hash.hex()
}

/// git's hash: SHA-1, or SHA-256 in a repository of SHA-256 ids.
enum Hash {
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Hash {
    fn new(sha256: bool) -> Hash {
        if sha256 {
            Hash::Sha256(sha2::Sha256::new())
        } else {
            Hash::Sha1(sha1::Sha1::new())
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Hash::Sha1(h) => h.update(bytes),
            Hash::Sha256(h) => h.update(bytes),
        }
    }

    fn hex(self) -> String {
        let bytes = match self {
            Hash::Sha1(h) => h.finalize().to_vec(),
            Hash::Sha256(h) => h.finalize().to_vec(),
        };
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_that_is_not_utf8_is_kept_and_shown() {
        let p = GitPath::new(b"caf\xe9.txt".to_vec());
        assert_eq!(p.key(), "caf\\xE9.txt");
        assert_eq!(GitPath::from("src/a.rs").key(), "src/a.rs");
    }

    #[test]
    fn links_devices_fifos_and_large_files_are_named_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("small"), "small\n").unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        let big = std::fs::File::create(root.join("big")).unwrap();
        big.set_len(MAX_FILE + 1).unwrap();
        let paths: Vec<GitPath> = ["small", "zero", "big", "gone"]
            .into_iter()
            .map(GitPath::from)
            .collect();
        let ids = ids(root, &paths, false);
        assert_eq!(ids[0].as_deref(), Some(blob_id(b"small\n", false).as_str()));
        // A link is the blob of the path it names, as git hashes it.
        assert_eq!(
            ids[1].as_deref(),
            Some(blob_id(b"/dev/zero", false).as_str())
        );
        let large = ids[2].as_deref().unwrap();
        assert!(
            large.starts_with(&format!("{} bytes, modified ", MAX_FILE + 1)),
            "{large}"
        );
        assert_eq!(ids[3], None);
        // git agrees on the file and the link.
        let out = std::process::Command::new("git")
            .args(["hash-object", "--no-filters", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(b"/dev/zero")?;
                c.wait_with_output()
            })
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            ids[1].as_deref().unwrap()
        );
    }
}
