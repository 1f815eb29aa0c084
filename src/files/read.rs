//! Reading a file of the project's areas without trusting it. A file there may have been
//! replaced by anything: a directory, a FIFO (whose plain `open` would block the server
//! forever), a device, gigabytes, bytes that are not UTF-8. Each of these is named as what
//! it is, so the caller can say what to do; only "absent" reads as absent.

use std::fmt;
use std::io::Read;

use super::project::unsafe_path;
use super::Project;
use crate::error::Error;

/// The largest file the server reads (sessions, the task mapping, documents). Documents
/// are submitted at most 4 MiB by default; a human's edit may make one larger, but not
/// this large.
pub const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// How a file of the project is opened for reading: a FIFO must not block the open.
const FILE_FLAGS: rustix::fs::OFlags =
    rustix::fs::OFlags::RDONLY.union(rustix::fs::OFlags::NONBLOCK);

/// Why a file that exists cannot be used as text.
#[derive(Debug)]
pub enum ReadProblem {
    /// The path leads out of the project's areas.
    Unsafe(Error),
    /// Not a regular file: "a directory", "a FIFO", …
    NotAFile(&'static str),
    TooLarge {
        size: u64,
        limit: u64,
    },
    /// Not UTF-8; `offset` is the first byte that is not.
    NotText {
        offset: usize,
    },
    /// A regular file with other names (a hard link): what it holds may be written through
    /// a name outside the place it was looked for.
    HardLinked {
        names: u64,
    },
    Io(std::io::Error),
}

impl fmt::Display for ReadProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadProblem::Unsafe(e) => write!(f, "{e}"),
            ReadProblem::NotAFile(what) => write!(f, "is {what}, not a regular file"),
            ReadProblem::TooLarge { size, limit } => {
                write!(
                    f,
                    "is {size} bytes, over the {limit} bytes the server reads"
                )
            }
            ReadProblem::NotText { offset } => write!(
                f,
                "is not UTF-8 text (the first byte that is not is at offset {offset})"
            ),
            ReadProblem::HardLinked { names } => write!(
                f,
                "is a hard link (the file has {names} names): only a file with one name is taken"
            ),
            ReadProblem::Io(e) => write!(f, "cannot be read: {}", crate::error::io_reason(e)),
        }
    }
}

impl ReadProblem {
    /// As a storage error (for files whose problems have no better name).
    pub fn into_error(self, rel: &str) -> Error {
        match self {
            ReadProblem::Unsafe(e) => e,
            other => Error::Storage {
                op: "read",
                path: rel.to_string(),
                reason: other.to_string(),
            },
        }
    }
}

fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_block_device() || t.is_char_device() {
            return Some("a device");
        }
    }
    Some("not a regular file")
}

impl Project {
    /// The text of a file inside the project's areas; `None` when it does not exist.
    pub fn read(&self, rel: &str) -> Result<Option<String>, ReadProblem> {
        self.read_at_most(rel, MAX_READ_BYTES)
    }

    /// [`Project::read`] with a smaller limit than [`MAX_READ_BYTES`] (a role prompt's).
    pub fn read_at_most(&self, rel: &str, limit: u64) -> Result<Option<String>, ReadProblem> {
        let (_, abs) = self.check_names(rel).map_err(ReadProblem::Unsafe)?;
        let bytes = self.read_beneath(rel, &abs, limit)?;
        as_text(bytes)
    }

    /// The bytes of `rel`, opened beneath the project's folder without following a link.
    fn read_beneath(
        &self,
        rel: &str,
        abs: &std::path::Path,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, ReadProblem> {
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK;
        let opened = super::beneath::open(
            self.dir(),
            std::path::Path::new(rel),
            flags,
            rustix::fs::Mode::empty(),
        )
        .map(std::fs::File::from);
        match opened {
            Err(e) if super::beneath::is_link(&e) => Err(ReadProblem::Unsafe(
                self.explain(rel, &e)
                    .unwrap_or_else(|| self.beneath_error(rel, abs, &e)),
            )),
            Err(e) => match self.explain(rel, &e) {
                Some(why) => Err(ReadProblem::Unsafe(why)),
                None => read_opened(Err(e), limit),
            },
            other => read_opened(other, limit),
        }
    }

    /// The file's bytes as text with every byte that is not UTF-8 read as U+FFFD, for
    /// salvaging what a damaged file still says; `None` when it cannot be read at all.
    pub fn read_lossy(&self, rel: &str, limit: u64) -> Option<String> {
        let (_, abs) = self.check_names(rel).ok()?;
        let bytes = self.read_beneath(rel, &abs, limit).ok()??;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Project {
    /// A file anywhere inside the project, not only in its areas, but for hidden files and
    /// folders, read only: opened beneath the project's handle without following a link, at
    /// most `limit` bytes; `None` when it does not exist. For the files a project's own configuration points the server at
    /// (the BMAD method's `file:` facts).
    pub fn read_in_project(&self, rel: &str, limit: u64) -> Result<Option<String>, ReadProblem> {
        read_opened(self.open_in_project(rel, FILE_FLAGS)?, limit).and_then(as_text)
    }

    /// [`Project::read_in_project`] of a file that has one name: a hard link (a file with
    /// other names, which may be written through one outside the project) is refused, as a
    /// link is.
    pub fn read_one_name_in_project(
        &self,
        rel: &str,
        limit: u64,
    ) -> Result<Option<String>, ReadProblem> {
        let opened = self.open_in_project(rel, FILE_FLAGS)?;
        if let Ok(file) = &opened {
            use std::os::unix::fs::MetadataExt;
            let meta = file.metadata().map_err(ReadProblem::Io)?;
            if meta.is_file() && meta.nlink() > 1 {
                return Err(ReadProblem::HardLinked {
                    names: meta.nlink(),
                });
            }
        }
        read_opened(opened, limit).and_then(as_text)
    }

    /// The names in the folder `rel` anywhere inside the project, by the rules of
    /// [`Project::read_in_project`] (no hidden name, no link), at most `limit` of them in
    /// name order; `None` when it is not there or cannot be listed.
    pub fn names_in_project(&self, rel: &str, limit: usize) -> Option<Vec<String>> {
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY;
        let dir = self.open_in_project(rel, flags).ok()?.ok()?;
        let entries = rustix::fs::Dir::read_from(&dir).ok()?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().ok().map(String::from))
            .filter(|n| n != "." && n != "..")
            .take(limit)
            .collect();
        names.sort();
        Some(names)
    }

    /// What [`Project::read_in_project`] would open at `rel`, by the same rules, without
    /// reading it: its size and when it changed, for a listing; `None` when it does not
    /// exist, and what it is when it is not a regular file.
    pub fn stat_in_project(&self, rel: &str) -> Result<Option<std::fs::Metadata>, ReadProblem> {
        let meta = match self.open_in_project(rel, FILE_FLAGS)? {
            Ok(file) => file.metadata().map_err(ReadProblem::Io)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ReadProblem::Io(e)),
        };
        match kind_of(&meta) {
            Some(what) => Err(ReadProblem::NotAFile(what)),
            None => Ok(Some(meta)),
        }
    }

    /// `rel` opened beneath the project's handle for reading, by the rules of
    /// [`Project::read_in_project`]; the open's own failure (absent, …) is the inner one.
    fn open_in_project(
        &self,
        rel: &str,
        flags: rustix::fs::OFlags,
    ) -> Result<std::io::Result<std::fs::File>, ReadProblem> {
        may_read_in_project(rel)?;
        let p = std::path::Path::new(rel);
        let opened = super::beneath::open(self.dir(), p, flags, rustix::fs::Mode::empty())
            .map(std::fs::File::from);
        match opened {
            Err(e) if super::beneath::is_link(&e) => Err(ReadProblem::Unsafe(unsafe_path(
                rel,
                "a symbolic link is on the path (the server follows none inside the project)",
            ))),
            other => Ok(other),
        }
    }
}

/// Whether `rel` names a file [`Project::read_in_project`] may read, by its name alone
/// (relative, no `..`, no hidden name), wherever its text is then read from (the work
/// tree, or git's objects).
pub fn may_read_in_project(rel: &str) -> Result<(), ReadProblem> {
    let p = std::path::Path::new(rel);
    let normal = p
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if rel.is_empty() || !normal {
        return Err(ReadProblem::Unsafe(unsafe_path(
            rel,
            "the path must be relative without `..`",
        )));
    }
    // Hidden names hold what must never reach a prompt: `.env`, `.git/config`, keys, the
    // server's own state.
    if p.components()
        .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
    {
        return Err(ReadProblem::Unsafe(unsafe_path(
            rel,
            "a hidden file or folder (`.env`, `.git`, …) is never read into a prompt",
        )));
    }
    Ok(())
}

/// The entries of one folder, each with its text or why it cannot be used.
pub type FolderTexts = Vec<(String, Result<Option<String>, ReadProblem>)>;

impl Project {
    /// The text of each entry of the folder `rel` whose name `keep` accepts (at most `max`
    /// of them, in name order), each at most `limit` bytes: the folder is opened beneath the
    /// project once and each file in it without following a link (a link is unsafe), so a
    /// folder of ten thousand small files costs one open each and no path walk. `None`
    /// when the folder does not exist.
    pub fn read_folder(
        &self,
        rel: &str,
        keep: impl Fn(&str) -> bool,
        max: usize,
        limit: u64,
    ) -> crate::error::Result<Option<FolderTexts>> {
        use rustix::fs::{Mode, OFlags};
        let Some((abs, dir)) = self.open_folder(rel)? else {
            return Ok(None);
        };
        let entries = rustix::fs::Dir::read_from(&dir)
            .map_err(|e| self.storage_error("read", &abs, &e.into()))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().ok().map(String::from))
            .filter(|n| n != "." && n != ".." && keep(n))
            .collect();
        names.sort();
        names.truncate(max);
        let file_flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let out = names
            .into_iter()
            .map(|name| {
                let opened = rustix::fs::openat(&dir, name.as_str(), file_flags, Mode::empty())
                    .map(std::fs::File::from)
                    .map_err(std::io::Error::from);
                let text = match opened {
                    Err(e) if super::beneath::is_link(&e) => Err(ReadProblem::Unsafe(unsafe_path(
                        &format!("{rel}/{name}"),
                        "is a symbolic link (the server follows none inside the project)",
                    ))),
                    other => read_opened(other, limit).and_then(as_text),
                };
                (name, text)
            })
            .collect();
        Ok(Some(out))
    }
}

fn as_text(bytes: Option<Vec<u8>>) -> Result<Option<String>, ReadProblem> {
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| ReadProblem::NotText {
            offset: e.utf8_error().valid_up_to(),
        })
}

/// The text of the file at `abs`, at most `limit` bytes, without trusting what it is;
/// `None` when it does not exist. The path is the caller's to have checked.
pub fn read_text(abs: &std::path::Path, limit: u64) -> Result<Option<String>, ReadProblem> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading waits for a writer unless non-blocking; whatever the
    // open gives is then checked with fstat before a byte is read.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    as_text(read_opened(options.open(abs), limit)?)
}

/// What an open (or its failure) gives: absent, the bytes, or what is wrong with it.
fn read_opened(
    opened: std::io::Result<std::fs::File>,
    limit: u64,
) -> Result<Option<Vec<u8>>, ReadProblem> {
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadProblem::Io(e)),
    };
    let meta = file.metadata().map_err(ReadProblem::Io)?;
    if let Some(what) = kind_of(&meta) {
        return Err(ReadProblem::NotAFile(what));
    }
    if meta.len() > limit {
        return Err(ReadProblem::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte past the limit tells a file that grew while being read.
    (&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadProblem::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadProblem::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, Project) {
        let (dir, p) = crate::files::project::tests::project();
        std::fs::create_dir_all(dir.path().join(".claude/specs/t")).unwrap();
        (dir, p)
    }

    #[test]
    fn only_absence_reads_as_absent_and_every_other_problem_is_named() {
        let (dir, p) = project();
        let at = |name: &str| dir.path().join(".claude/specs/t").join(name);
        let rel = |name: &str| format!(".claude/specs/t/{name}");
        assert!(matches!(p.read(&rel("none.md")), Ok(None)));
        std::fs::write(at("ok.md"), "é\n").unwrap();
        assert_eq!(p.read(&rel("ok.md")).unwrap().as_deref(), Some("é\n"));
        std::fs::write(at("latin1.md"), b"caf\xe9").unwrap();
        let e = p.read(&rel("latin1.md")).unwrap_err();
        assert!(matches!(e, ReadProblem::NotText { offset: 3 }), "{e}");
        std::fs::create_dir(at("dir.md")).unwrap();
        let e = p.read(&rel("dir.md")).unwrap_err();
        assert_eq!(e.to_string(), "is a directory, not a regular file");
        #[cfg(unix)]
        {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                at("fifo.md"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
            // Would block forever with a plain open.
            let e = p.read(&rel("fifo.md")).unwrap_err();
            assert_eq!(e.to_string(), "is a FIFO, not a regular file");
        }
        let big = std::fs::File::create(at("big.md")).unwrap();
        big.set_len(MAX_READ_BYTES + 1).unwrap();
        let e = p.read(&rel("big.md")).unwrap_err();
        assert!(matches!(e, ReadProblem::TooLarge { .. }), "{e}");
        let e = p.read("../outside").unwrap_err();
        assert!(matches!(e, ReadProblem::Unsafe(_)), "{e}");
    }
}
