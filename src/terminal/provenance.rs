//! Where a terminal decision comes from: the terminal device, and the chain of processes
//! the command runs under, read from `/proc` on Linux. An assistant's shell tool (Claude
//! Code's Bash tool) can run `bmad-mcp confirm` too, and can even give it a
//! pseudo-terminal; what it cannot hide is that it is an ancestor: a process that is
//! Claude Code itself, or that has `CLAUDECODE` in its environment (Claude Code sets it
//! in the shell of its Bash tool). The variable alone is not the test: it is read from
//! each ancestor, where a command cannot unset it for itself.

use crate::workflow::Provenance;

/// How many ancestors are read at most: a chain is short, a loop must still end.
const MAX_DEPTH: usize = 64;

/// The environment variable Claude Code sets in its Bash tool's shell.
const ASSISTANT_VAR: &str = "CLAUDECODE";

/// What the command found about where it runs, with the reason an assistant was found.
pub(super) struct Origin {
    pub provenance: Provenance,
    /// Which process made it an assistant's: `CLAUDECODE in the environment of bash (pid 7)`.
    pub assistant: Option<String>,
}

/// Reads the terminal device and the process chain of this process.
pub(super) fn read() -> Origin {
    let mut parents = Vec::new();
    let mut assistant = own_environment_marks();
    #[cfg(target_os = "linux")]
    {
        let mut pid = parent_of("self");
        while let Some(p) = pid.filter(|p| *p > 0 && parents.len() < MAX_DEPTH) {
            let at = p.to_string();
            let name = proc_text(&at, "comm")
                .map(|c| c.trim_end().to_string())
                .unwrap_or_else(|| "?".into());
            let label = format!("{name} (pid {p})");
            if assistant.is_none() {
                assistant = assistant_mark(&at, &name, &label);
            }
            parents.push(label);
            pid = parent_of(&at).filter(|next| *next != p);
        }
    }
    Origin {
        provenance: Provenance {
            terminal: terminal_device(),
            parents,
            under_assistant: assistant.is_some(),
        },
        assistant,
    }
}

/// This process's own environment: set by whoever started it.
fn own_environment_marks() -> Option<String> {
    std::env::var_os(ASSISTANT_VAR)
        .filter(|v| !v.is_empty())
        .map(|_| format!("{ASSISTANT_VAR} in this command's environment"))
}

/// Why the process `pid` (named `name`) is an assistant's, if it is.
#[cfg(target_os = "linux")]
fn assistant_mark(pid: &str, name: &str, label: &str) -> Option<String> {
    let args: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default();
    let is_claude = |s: &str| {
        let base = s.rsplit('/').next().unwrap_or(s);
        base == "claude" || s.contains("@anthropic-ai/claude-code")
    };
    // Claude Code: its own binary, or node running its script.
    let runs_claude = name == "claude"
        || args.first().is_some_and(|a| is_claude(a))
        || (name.starts_with("node") && args.iter().skip(1).take(3).any(|a| is_claude(a)));
    if runs_claude {
        return Some(format!("Claude Code is {label}"));
    }
    // Its environment, where readable (the same user's processes are).
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let marked = environ.split(|c| *c == 0).any(|kv| {
        kv.strip_prefix(ASSISTANT_VAR.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .is_some_and(|v| !v.is_empty())
    });
    marked.then(|| format!("{ASSISTANT_VAR} in the environment of {label}"))
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

/// The terminal device stdin is.
fn terminal_device() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_link("/proc/self/fd/0")
            .ok()
            .map(|p| p.display().to_string())
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_chain_starts_at_the_parent_and_names_each_process() {
        let origin = read();
        let parent = std::os::unix::process::parent_id();
        assert!(
            origin.provenance.parents[0].ends_with(&format!("(pid {parent})")),
            "{:?}",
            origin.provenance.parents
        );
    }
}
