//! The processes behind a channel, read from `/proc` on Linux: a chain of processes from
//! one up through its ancestors, whether each is an agent host or carries a host's mark in
//! its environment (`CLAUDECODE`, `GEMINI_CLI=1`, … as the hosts table lists them, `crate::hosts`: hosts
//! set them in their shell tool's shell), and the process holding the other end of a
//! loopback TCP connection. The rule
//! that reads them is the module's own ([`super::behind`]). Elsewhere than Linux nothing
//! can be read.

#[cfg(target_os = "linux")]
use crate::hosts::recognise as marks;

/// How many processes are read at most: a chain is short, a loop must still end.
const MAX_DEPTH: usize = 64;

/// One process of a chain.
#[derive(Debug, Clone)]
pub struct Proc {
    /// `bash (pid 4242)`.
    pub label: String,
    /// The host this process is (its executable, or node running its script): `Claude Code`.
    pub host: Option<&'static str>,
    /// The first host's mark in its environment, where readable: `GEMINI_CLI=1`.
    pub mark: Option<String>,
}

/// The parent of this process, if it can be read.
pub fn own_parent() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        parent_of("self")
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
            let at = p.to_string();
            // A process names itself (up to 15 bytes): the label is shown in replies and
            // kept in the history, so no line break or other control character of its own.
            let name: String = proc_text(&at, "comm")
                .map(|c| {
                    let c = c.strip_suffix('\n').unwrap_or(&c);
                    c.chars()
                        .map(|ch| if ch.is_control() { '?' } else { ch })
                        .collect()
                })
                .unwrap_or_else(|| "?".into());
            chain.push(Proc {
                host: runs_host(&at),
                mark: mark_in(&at),
                label: format!("{name} (pid {p})"),
            });
            pid = parent_of(&at).filter(|next| *next != p);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = start;
    chain
}

/// The process holding the socket whose local end is `peer` (a loopback client's end of a
/// connection to this server): its inode from `/proc/net/tcp` or `tcp6`, then the process
/// with that socket among its descriptors (readable for the same user's processes).
pub fn socket_owner(peer: std::net::SocketAddr) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let inode = socket_inode(peer)?;
        let wanted = format!("socket:[{inode}]");
        let own = std::process::id();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == own {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
                continue;
            };
            for fd in fds.flatten() {
                if std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str()) {
                    return Some(pid);
                }
            }
        }
        None
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
        let wanted = format!("socket:[{}]", socket_inode(peer)?);
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok();
        Some(fds.is_some_and(|fds| {
            fds.flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str())
            })
        }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pid, peer);
        None
    }
}

/// Whether process `pid` runs a `bmad-mcp` binary (its executable's file name). `None`
/// when it cannot be told (elsewhere than Linux).
pub fn runs_bmad_mcp(pid: u32) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        Some(exe.is_some_and(|e| {
            e.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "bmad-mcp" || n.starts_with("bmad-mcp "))
        }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// The inode of the TCP socket whose local address is `addr`.
#[cfg(target_os = "linux")]
fn socket_inode(addr: std::net::SocketAddr) -> Option<u64> {
    let (file, local) = match addr {
        std::net::SocketAddr::V4(a) => (
            "/proc/net/tcp",
            format!(
                "{:08X}:{:04X}",
                u32::from_ne_bytes(a.ip().octets()),
                a.port()
            ),
        ),
        std::net::SocketAddr::V6(a) => {
            let hex: String = a
                .ip()
                .octets()
                .chunks(4)
                .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
                .collect();
            ("/proc/net/tcp6", format!("{hex}:{:04X}", a.port()))
        }
    };
    let table = std::fs::read_to_string(file).ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        (fields.get(1)? == &local.as_str())
            .then(|| fields.get(9)?.parse().ok())
            .flatten()
            .filter(|inode| *inode != 0)
    })
}

/// The host `/proc/<pid>` is, by the file it executes (`exe`, which the process cannot
/// rename, unlike its `argv[0]` or its name): the host's own binary, or node or bun running
/// the host's script (the first argument that is not an option).
#[cfg(target_os = "linux")]
fn runs_host(pid: &str) -> Option<&'static str> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    let exe = exe.to_string_lossy();
    // A binary replaced while it runs (an update) reads `/path/claude (deleted)`.
    let exe = exe.strip_suffix(" (deleted)").unwrap_or(&exe);
    if !marks::runs_scripts(exe) {
        return marks::host_of_executable(exe);
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let script = cmdline
        .split(|c| *c == 0)
        .skip(1)
        .find(|a| !a.is_empty() && !a.starts_with(b"-"))?;
    marks::host_of_script(&String::from_utf8_lossy(script))
}

/// The first host's mark set in the environment of `/proc/<pid>`.
#[cfg(target_os = "linux")]
fn mark_in(pid: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ.split(|c| *c == 0).find_map(|kv| {
        let at = kv.iter().position(|c| *c == b'=')?;
        marks::mark_of(&kv[..at], &kv[at + 1..])
    })
}

/// The parent pid of `/proc/<pid>`.
#[cfg(target_os = "linux")]
fn parent_of(pid: &str) -> Option<u32> {
    let stat = proc_text(pid, "stat")?;
    // "pid (comm) state ppid …": the name may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn proc_text(pid: &str, file: &str) -> Option<String> {
    std::fs::read(format!("/proc/{pid}/{file}"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_owner_of_a_loopback_socket_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        // This process holds both ends; the search skips the server's own process, so
        // look the inode up directly.
        let inode = socket_inode(client.local_addr().unwrap()).expect("the socket's inode");
        let wanted = format!("socket:[{inode}]");
        let held = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == wanted.as_str())
            });
        assert!(held, "{wanted}");
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
        while proc_text(&pid.to_string(), "cmdline").is_none_or(|c| !c.starts_with("claude\0")) {
            assert!(std::time::Instant::now() < deadline, "exec -a did not run");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let found = chain(pid);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(found[0].host, None, "{}", found[0].label);
    }

    #[test]
    fn a_process_name_with_a_line_break_is_shown_on_one_line() {
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import ctypes,time; ctypes.CDLL(None).prctl(15, b'x\\nstate: done', 0, 0, 0); print(flush=True); time.sleep(30)",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 1];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut ready).unwrap();
        let found = chain(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            found[0].label,
            format!("x?state: done (pid {})", child.id())
        );
    }
}
