//! Where a terminal command comes from: the terminal device, and the chain of processes
//! it runs under, to which `crate::process_origin`'s rule applies (an assistant's shell can run
//! `bmad-mcp confirm` too, even on a pseudo-terminal of its own).

use crate::process_origin::{self, procs};
use crate::workflow::Provenance;

/// What the command found about where it runs, with the reason an assistant was found.
pub(super) struct Origin {
    pub provenance: Provenance,
    /// Which process made it an assistant's: `CLAUDECODE in the environment of bash (pid 7)`.
    pub assistant: Option<String>,
}

/// The human at their own terminal, or the exit that refuses the command: stdin is not a
/// terminal, or the command runs under an assistant's shell. `verb` names the command
/// (`decide`), `whose` says whose decision it is (`A gate decision is the human's`).
pub(super) fn human_at_terminal(verb: &str, whose: &str) -> Result<Origin, super::Exit> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "bmad-mcp: refusing to {verb}: stdin is not a terminal. {whose}; run this command yourself in a terminal."
        );
        return Err(super::Exit::NotATerminal);
    }
    let origin = read();
    if let Some(why) = &origin.assistant {
        eprintln!(
            "bmad-mcp: refusing to {verb}: this command runs under an assistant's shell ({why}). {whose}: run it yourself, in your own terminal, outside the assistant."
        );
        return Err(super::Exit::UnderAssistant);
    }
    Ok(origin)
}

/// Reads the terminal device and the process chain of this process.
pub(super) fn read() -> Origin {
    let chain = procs::own_parent().map(procs::chain).unwrap_or_default();
    let assistant = process_origin::behind_this_process(&chain);
    Origin {
        provenance: Provenance {
            terminal: terminal_device(),
            parents: chain.into_iter().map(|p| p.label).collect(),
            under_assistant: assistant.is_some(),
            ..Provenance::default()
        },
        assistant,
    }
}

/// The terminal device stdin is.
fn terminal_device() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        let info = procfs::process::Process::myself()
            .ok()?
            .fd_from_fd(0)
            .ok()?;
        match info.target {
            procfs::process::FDTarget::Path(p) => Some(p.display().to_string()),
            _ => None,
        }
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
