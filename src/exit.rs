//! Every exit status of the `bmad-mcp` binary, in one place: each server and each of the
//! human's commands ends with one [`Exit`], and `main` returns it. docs/reference.md ("Exit
//! status") lists them per command. A command whose reader went away ends with
//! [`Exit::StdoutClosed`] ([`quiet_when_stdout_closes`]).

use std::process::{ExitCode, Termination};

/// How the process ends. Several variants share a number: the number is what a script
/// sees, the variant says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done. A command did what was asked (`hook` always ends so); a server stopped as
    /// asked: stdin closed, or SIGTERM (and SIGINT for `serve --http` and the dashboard),
    /// after answering the calls it had received; `--help` and `--version` printed.
    Done,
    /// 1: failed. A command refused, failed or decided nothing (the reason is on stderr or
    /// stdout); a server could not start (its runtime, stdin, the project, the address to
    /// listen on) or stopped on an error.
    Failed,
    /// 2: the command line is refused before anything starts: arguments that do not
    /// parse, `serve --http` options that would leave the server open or cannot work, a
    /// dashboard address that is not loopback.
    Refused,
    /// 2: a decision refused because stdin is not a terminal (a person types at one; an
    /// assistant's shell tool or a script pipes its input).
    NotATerminal,
    /// 2: a decision, or the dashboard, refused because the command runs under an
    /// assistant's shell.
    UnderAssistant,
    /// 3: the stdio server's client closed stdout (no call was applied after that), or a
    /// command's reader went away before it printed everything (`| head`).
    StdoutClosed,
}

impl Exit {
    /// The process's exit status.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Failed => 1,
            Exit::Refused | Exit::NotATerminal | Exit::UnderAssistant => 2,
            Exit::StdoutClosed => 3,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// So that `main` returns an [`Exit`].
impl Termination for Exit {
    fn report(self) -> ExitCode {
        self.into()
    }
}

/// A command whose reader went away (`bmad-mcp status t | head -3`) stops there, quietly,
/// as Unix tools do: std's printing panics on the closed pipe (SIGPIPE is ignored in Rust
/// programs), and that is no fault of ours to report.
pub fn quiet_when_stdout_closes() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let said = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if said.starts_with("failed printing to stdout") && said.contains("Broken pipe") {
            std::process::exit(Exit::StdoutClosed.code().into());
        }
        previous(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::Exit;

    /// The numbers are a promise to scripts (docs/reference.md): they never move.
    #[test]
    fn each_exit_keeps_its_number() {
        let numbers = [
            (Exit::Done, 0),
            (Exit::Failed, 1),
            (Exit::Refused, 2),
            (Exit::NotATerminal, 2),
            (Exit::UnderAssistant, 2),
            (Exit::StdoutClosed, 3),
        ];
        for (exit, code) in numbers {
            assert_eq!(exit.code(), code, "{exit:?}");
        }
    }
}
