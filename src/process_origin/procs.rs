//! The processes behind a channel, read from `/proc` on Linux through `procfs`: a chain of
//! processes from one up through its ancestors, whether each is an agent host or carries a host's
//! mark in its environment (`CLAUDECODE`, `GEMINI_CLI=1`, … as the hosts table lists them,
//! [`crate::hosts`]: hosts set them in their shell tool's shell), and the process
//! holding the other end of a loopback TCP connection. The rule that reads them is the module's own
//! ([`super::behind`]). Elsewhere than Linux nothing can be read.

#[cfg(target_os = "linux")]
use procfs::process::{FDTarget, Process};

#[cfg(target_os = "linux")]
use crate::hosts::recognise as marks;

/// How many processes are read at most: a chain is short, a loop must still end.
const MAX_DEPTH: usize = 64;

/// One process of a chain.
#[derive(Debug, Clone)]
pub struct Proc {
    /// Its process id.
    pub pid: u32,
    /// `bash (pid 4242)`.
    pub label: String,
    /// The host this process is (its executable, or node running its script): `Claude Code`.
    pub host: Option<&'static str>,
    /// Whether it is the host by the script node or bun runs (a launcher some hosts start
    /// their own binary from), not by its own executable.
    pub launcher: bool,
    /// What the file it executes (`/proc/<pid>/exe`) is, for a host's process: its size
    /// and a digest of its first and last 64 KiB. A host made of several processes of one
    /// binary runs the same program, even from two copies (Codex's interface, and the app
    /// server it copies into `~/.codex/packages/` to spawn its servers); a program copied
    /// under a host's name is another.
    pub program: Option<String>,
    /// The first host's mark in its environment, where readable: `GEMINI_CLI=1`.
    pub mark: Option<String>,
}

/// The parent of this process, if it can be read.
pub fn own_parent() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        parent_of(&Process::myself().ok()?.stat().ok()?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The process `start` and its ancestors, `start` first.
pub fn chain(start: u32) -> Vec<Proc> {
    let mut chain = Vec::new();
    #[cfg(target_os = "linux")]
    {
        let mut pid = Some(start);
        while let Some(p) = pid.filter(|p| *p > 0 && chain.len() < MAX_DEPTH) {
            let process = process(p);
            let stat = process.as_ref().and_then(|pr| pr.stat().ok());
            let comm = stat.as_ref().map(|s| s.comm.as_str());
            let found = process.as_ref().and_then(runs_host);
            let host = found.map(|(h, _)| h);
            let name = name_of(comm, process.as_ref(), host);
            chain.push(Proc {
                pid: p,
                program: host.and(process.as_ref()).and_then(program_of),
                host,
                launcher: found.is_some_and(|(_, script)| script),
                mark: process.as_ref().and_then(mark_in),
                label: format!("{name} (pid {p})"),
            });
            pid = stat.as_ref().and_then(parent_of).filter(|next| *next != p);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = start;
    chain
}

/// A process's name as a person reads it: the name it gave itself (`comm`, up to 15
/// bytes) when that begins its executable's file name or its command's (`sh` runs `dash`),
/// else the executable's file name, with the host it is when it is one. A thread's name
/// (`MainThread`, which some hosts' runtimes give their first thread) is not who decided.
/// The label is shown in replies and kept in the history, so no line break or other
/// control character of its own.
#[cfg(target_os = "linux")]
fn name_of(comm: Option<&str>, process: Option<&Process>, host: Option<&str>) -> String {
    let file_name = |path: &std::path::Path| -> Option<String> {
        let name = path.file_name()?.to_string_lossy().into_owned();
        Some(name.strip_suffix(" (deleted)").unwrap_or(&name).to_string())
    };
    let exe = process
        .and_then(|p| p.exe().ok())
        .and_then(|e| file_name(&e));
    let argv0 = process
        .and_then(|p| std::fs::read(format!("/proc/{}/cmdline", p.pid())).ok())
        .and_then(|bytes| {
            let first = bytes.split(|b| *b == 0).next()?;
            file_name(std::path::Path::new(&*String::from_utf8_lossy(first)))
        });
    let begins = |c: &str, of: &Option<String>| of.as_ref().is_some_and(|n| n.starts_with(c));
    let name = match (comm, exe) {
        (Some(c), Some(_)) if !c.is_empty() && begins(c, &argv0) => c.to_string(),
        (Some(c), e @ Some(_)) if !c.is_empty() && begins(c, &e) => c.to_string(),
        (_, Some(e)) => match host {
            Some(host) => format!("{host}: {e}"),
            None => e,
        },
        (Some(c), None) => c.to_string(),
        (None, None) => "?".into(),
    };
    name.chars()
        .map(|ch| if ch.is_control() { '?' } else { ch })
        .collect()
}

/// What a process says of where it reads its settings: its `HOME` and `CLAUDE_CONFIG_DIR`,
/// its working directory, and the value its command line gives `--settings`, each when it
/// can be read (a process of the same user).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsOf {
    pub home: Option<std::path::PathBuf>,
    pub claude_config_dir: Option<std::path::PathBuf>,
    pub cwd: Option<std::path::PathBuf>,
    pub settings_flag: Option<String>,
}

/// [`SettingsOf`] process `pid`; `None` elsewhere than Linux or when it cannot be read.
pub fn settings_of(pid: u32) -> Option<SettingsOf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let process = process(pid)?;
        let environ = process.environ().ok()?;
        let var = |name: &str| {
            environ
                .get(std::ffi::OsStr::new(name))
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from)
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let settings_flag = args.iter().enumerate().find_map(|(i, a)| {
            let given = a.strip_prefix(b"--settings=").or_else(|| {
                (*a == b"--settings")
                    .then(|| args.get(i + 1).copied())
                    .flatten()
            })?;
            Some(
                std::ffi::OsStr::from_bytes(given)
                    .to_string_lossy()
                    .into_owned(),
            )
        });
        Some(SettingsOf {
            home: var("HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            cwd: process.cwd().ok(),
            settings_flag,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The process holding the socket whose local end is `peer` (a loopback client's end of a
/// connection to this server): its inode from `/proc/net/tcp` or `tcp6`, then the process
/// with that socket among its descriptors (readable for the same user's processes).
pub fn socket_owner(peer: std::net::SocketAddr) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let inode = socket_inode(peer)?;
        let own = std::process::id();
        let pid = procfs::process::all_processes()
            .ok()?
            .flatten()
            .filter(|p| u32::try_from(p.pid()).is_ok_and(|pid| pid != own))
            .find(|p| holds_inode(p, inode))?
            .pid();
        u32::try_from(pid).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = peer;
        None
    }
}

/// Whether process `pid` holds the socket whose local end is `peer`. `None` when it cannot
/// be told (the socket is not in `/proc/net`, or elsewhere than Linux).
pub fn holds(pid: u32, peer: std::net::SocketAddr) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        let inode = socket_inode(peer)?;
        Some(process(pid).is_some_and(|p| holds_inode(&p, inode)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, peer);
        None
    }
}

/// Whether process `pid` runs this build of bmad-mcp, whatever its file is named: the same
/// executable file as this process's, or a copy of it (the same size, and the same bytes at
/// its start and at its end, where a build's code and its own sections lie). `None` when it
/// cannot be told (elsewhere than Linux).
pub fn runs_this_build(pid: u32) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let (theirs, ours) = (format!("/proc/{pid}/exe"), "/proc/self/exe");
        let (Ok(t), Ok(o)) = (std::fs::metadata(&theirs), std::fs::metadata(ours)) else {
            return Some(false);
        };
        if (t.dev(), t.ino()) == (o.dev(), o.ino()) {
            return Some(true);
        }
        Some(t.len() == o.len() && ends(&theirs, t.len()) == ends(ours, o.len()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The first and the last 64 KiB of the file at `path`, `len` bytes long (`None` when it
/// cannot be read).
#[cfg(target_os = "linux")]
fn ends(path: &str, len: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    const SPAN: u64 = 64 * 1024;
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = Vec::new();
    f.by_ref().take(SPAN).read_to_end(&mut head).ok()?;
    f.seek(SeekFrom::Start(len.saturating_sub(SPAN))).ok()?;
    let mut tail = Vec::new();
    f.take(SPAN).read_to_end(&mut tail).ok()?;
    Some((head, tail))
}

#[cfg(target_os = "linux")]
fn process(pid: u32) -> Option<Process> {
    Process::new(i32::try_from(pid).ok()?).ok()
}

/// Whether `process` has the socket `inode` among its descriptors.
#[cfg(target_os = "linux")]
fn holds_inode(process: &Process, inode: u64) -> bool {
    process.fd().is_ok_and(|mut fds| {
        fds.any(|fd| fd.is_ok_and(|fd| matches!(fd.target, FDTarget::Socket(i) if i == inode)))
    })
}

/// The inode of the TCP socket whose local address is `addr`.
#[cfg(target_os = "linux")]
fn socket_inode(addr: std::net::SocketAddr) -> Option<u64> {
    let table = match addr {
        std::net::SocketAddr::V4(_) => procfs::net::tcp(),
        std::net::SocketAddr::V6(_) => procfs::net::tcp6(),
    };
    table.ok()?.into_iter().find_map(|entry| {
        let local = entry.local_address;
        (local.ip() == addr.ip() && local.port() == addr.port() && entry.inode != 0)
            .then_some(entry.inode)
    })
}

/// The host `process` is, by the file it executes (`exe`, which the process cannot rename,
/// unlike its `argv[0]` or its name): the host's own binary, or node or bun running the
/// host's script (the first argument that is not an option); and whether by a script.
#[cfg(target_os = "linux")]
fn runs_host(process: &Process) -> Option<(&'static str, bool)> {
    let exe = process.exe().ok()?;
    let exe = exe.to_string_lossy();
    // A binary replaced while it runs (an update) reads `/path/claude (deleted)`.
    let exe = exe.strip_suffix(" (deleted)").unwrap_or(&exe);
    if !marks::runs_scripts(exe) {
        return marks::host_of_executable(exe).map(|h| (h, false));
    }
    // Read as bytes, not through procfs's `cmdline`, which fails on any argument that is
    // not UTF-8: a host would then go unseen.
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", process.pid())).ok()?;
    let script = cmdline
        .split(|c| *c == 0)
        .skip(1)
        .find(|a| !a.is_empty() && !a.starts_with(b"-"))?;
    marks::host_of_script(&String::from_utf8_lossy(script)).map(|h| (h, true))
}

/// What `process` executes, as [`Proc::program`] says: the size of its file (read through
/// `/proc/<pid>/exe`, the file it runs even if replaced since) and a SHA-256 of its first
/// and last 64 KiB.
#[cfg(target_os = "linux")]
fn program_of(process: &Process) -> Option<String> {
    use sha2::Digest;
    use std::io::{Read, Seek, SeekFrom};
    const PART: u64 = 64 * 1024;
    let mut f = std::fs::File::open(format!("/proc/{}/exe", process.pid())).ok()?;
    let len = f.metadata().ok()?.len();
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; PART as usize];
    for at in [0, len.saturating_sub(PART)] {
        f.seek(SeekFrom::Start(at)).ok()?;
        let n = f.read(&mut buf).ok()?;
        h.update(&buf[..n]);
    }
    let digest: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{len}:{digest}"))
}

/// A host's mark set in the environment of `process`; of several, the first by name (the
/// environment is read as a map).
#[cfg(target_os = "linux")]
fn mark_in(process: &Process) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let environ = process.environ().ok()?;
    environ
        .iter()
        .filter_map(|(name, value)| marks::mark_of(name.as_bytes(), value.as_bytes()))
        .min()
}

/// The parent pid in a process's `stat`.
#[cfg(target_os = "linux")]
fn parent_of(stat: &procfs::process::Stat) -> Option<u32> {
    u32::try_from(stat.ppid).ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// This process runs this build; a process of another program does not, and neither
    /// does a file of the same size that differs at its end.
    #[test]
    fn this_build_is_told_by_its_file_not_its_name() {
        assert_eq!(runs_this_build(std::process::id()), Some(true));
        let mut other = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        assert_eq!(runs_this_build(other.id()), Some(false));
        let _ = other.kill();
        let _ = other.wait();
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let bytes = vec![7u8; 200 * 1024];
        std::fs::write(&a, &bytes).unwrap();
        let mut changed = bytes.clone();
        *changed.last_mut().unwrap() = 8;
        std::fs::write(&b, &changed).unwrap();
        let len = bytes.len() as u64;
        let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
        assert_eq!(ends(a, len), ends(a, len));
        assert_ne!(ends(a, len), ends(b, len));
    }

    #[test]
    fn the_owner_of_a_loopback_socket_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // This process holds both ends; the search skips the server's own process, so
        // look the inode up directly.
        let inode = socket_inode(client.local_addr().unwrap()).expect("the socket's inode");
        let held = Process::myself()
            .unwrap()
            .fd()
            .unwrap()
            .flatten()
            .any(|fd| matches!(fd.target, FDTarget::Socket(i) if i == inode));
        assert!(held, "socket {inode}");
        let me = std::process::id();
        assert_eq!(holds(me, client.local_addr().unwrap()), Some(true));
        assert_eq!(holds(1, client.local_addr().unwrap()), Some(false));
    }

    #[test]
    fn a_chain_starts_at_the_process_it_is_asked_about() {
        let chain = chain(std::process::id());
        assert!(chain[0]
            .label
            .ends_with(&format!("(pid {})", std::process::id())));
        assert!(chain.len() >= 2);
    }

    #[test]
    fn a_process_named_as_a_host_is_not_one() {
        // `exec -a claude` sets argv[0] (and a name can be set too): only the executable
        // tells the program, and `sleep` is no host.
        let mut child = std::process::Command::new("bash")
            .args(["-c", "exec -a claude sleep 30"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let argv0 = || {
            Process::new(pid as i32)
                .and_then(|p| p.cmdline())
                .ok()?
                .into_iter()
                .next()
        };
        while argv0().as_deref() != Some("claude") {
            assert!(std::time::Instant::now() < deadline, "exec -a did not run");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let found = chain(pid);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found[0].host, None, "{}", found[0].label);
    }

    /// A process that names itself otherwise than its executable (a thread's name such as
    /// `MainThread`, a line break) is shown by its executable's file name.
    #[test]
    fn a_process_is_named_by_its_executable_when_its_own_name_is_another() {
        for name in ["MainThread", "x\\nstate: done"] {
            let mut child = std::process::Command::new("python3")
                .args([
                    "-c",
                    &format!("import ctypes,time; ctypes.CDLL(None).prctl(15, b'{name}', 0, 0, 0); print(flush=True); time.sleep(30)"),
                ])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut ready = [0u8; 1];
            std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut ready).unwrap();
            let found = chain(child.id());
            let exe = Process::new(child.id() as i32).unwrap().exe().unwrap();
            let _ = child.kill();
            let _ = child.wait();
            let exe = exe.file_name().unwrap().to_string_lossy().into_owned();
            assert!(exe.starts_with("python"), "{exe}");
            assert_eq!(found[0].label, format!("{exe} (pid {})", child.id()));
        }
    }
}
