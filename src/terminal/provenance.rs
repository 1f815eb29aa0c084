//! Where a terminal command comes from: the terminal device, and the chain of processes it runs
//! under, to which [`crate::process_origin`]'s rule applies (an assistant's
//! shell can run `bmad-mcp confirm` too, even on a pseudo-terminal of its own).

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
    // A person may have typed it into their assistant (Claude Code's `!`, Gemini CLI's
    // shell mode): it then runs there, under the assistant and without a terminal, and
    // the refusal says what they can do instead.
    if !std::io::stdin().is_terminal() {
        eprint!(
            "bmad-mcp: refusing to {verb}: stdin is not a terminal.\n{}",
            lines(&format!("{whose}, typed in a terminal of your own. Typed in your assistant (after its `!`, or in its shell mode), it runs there, without a terminal: run it in a terminal outside the assistant, or decide on your dashboard (`bmad-mcp dashboard`)."))
        );
        return Err(super::Exit::NotATerminal);
    }
    let origin = read();
    if let Some(why) = &origin.assistant {
        eprint!(
            "{}",
            lines(&format!("bmad-mcp: refusing to {verb}: this command runs under an assistant's shell ({why}). {whose}: run it yourself in a terminal of your own, outside the assistant (a command typed after the assistant's `!` runs under it too), or decide on your dashboard (`bmad-mcp dashboard`)."))
        );
        return Err(super::Exit::UnderAssistant);
    }
    Ok(origin)
}

/// The widest line of a refusal: an assistant that shows the command's output in a box of
/// its own (Gemini CLI's) wraps a longer one, and drops words where it does.
const WIDTH: usize = 72;

/// `text` in lines of at most [`WIDTH`] characters, broken between words (a word longer
/// than that stands alone), each ending with a newline.
fn lines(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let wide = line.chars().count() + 1 + word.chars().count();
        if !line.is_empty() && wide > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
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

    /// A refusal reads whole in an assistant's box: no line wider than it wraps, no word
    /// broken or lost.
    #[test]
    fn a_refusal_is_said_in_lines_a_box_does_not_wrap() {
        let text = "bmad-mcp: refusing to decide: this command runs under an assistant's shell (GEMINI_CLI=1 in the environment of bash (pid 4242)). A gate decision is the human's: run it yourself.";
        let said = lines(text);
        assert!(said.lines().all(|l| l.chars().count() <= WIDTH), "{said}");
        assert_eq!(
            said.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        assert!(said.ends_with('\n'));
    }

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
