//! Whether an assistant is behind a process: the one rule that keeps the human's channels
//! (the terminal commands, the dashboard, the client's dialog) from taking an assistant's
//! word for the human's, and the reading of processes from `/proc` it works on
//! ([`procs`]).
//!
//! An assistant's shell tool (Claude Code's Bash tool, Codex's, Gemini CLI's, opencode's and
//! Copilot CLI's shell tools) can run anything the user can; what it cannot hide is being an
//! ancestor of what it runs: a process that is the host itself (by the file it executes), or that
//! carries a host's mark in its environment (`CLAUDECODE`, `CODEX_CI`, `GEMINI_CLI=1`,
//! `OPENCODE=1`, `COPILOT_CLI=1`: every host's, listed once in the hosts table,
//! [`crate::hosts`]). The mark is read from each ancestor, where a command cannot
//! unset it for itself, and before what the process is: a process that carries a mark is never the
//! host's own. Nor is a process with a marked ancestor: a host is started by the human, never from
//! a host's shell tool, so a program the model copied under a host's file name and started with the
//! mark removed (`env -u CLAUDECODE ./bin/claude`) is still the shell's.
//!
//! A mark can be erased where the shell replaces itself (`exec env -u CLAUDECODE client`,
//! `exec env -i …`, `exec setsid …`): the client then has the shell's pid, the host as its
//! parent and a clean environment. What no shell erases is where the process stands: a
//! host's own connection is the host itself (it spawns its stdio servers as its direct
//! children and connects over HTTP from its own process), so a client with the host
//! anywhere above it, and not the host itself, was started by that host's shell tool.
//! Above a host's own process only its launcher (node running its script) may stand; any
//! other host there means a host started under a host, which no person does.

pub mod procs;

pub use procs::{chain, own_parent, settings_of, socket_owner, Proc, SettingsOf};

/// What the host's own process means in a chain: the one way the channels' rules differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRole {
    /// The host is the assistant: a chain that holds it is the assistant's (the terminal
    /// commands and the dashboard, which a human reaches from their own terminal or
    /// browser, never through the host).
    IsTheAssistant,
    /// The host asks the human itself (the client's dialog: the host started this
    /// server, or connected to it, and shows the form): the chain is read up to the host,
    /// and what runs under its shell is the assistant's. Above the host only a shell's mark
    /// counts, and it unmakes the host: a real host is never started from a shell tool, a
    /// copy of a program under a host's name is.
    AsksTheHuman,
}

/// What makes a chain an assistant's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A process of it is the host itself (only where the host is the assistant).
    Host { host: &'static str, label: String },
    /// A process of it carries the host's shell mark: it runs under that host's shell tool.
    Mark {
        host: &'static str,
        mark: String,
        label: String,
        /// The process below the mark that passed for a host by its file name, if one did.
        posing: Option<String>,
    },
    /// The host stands above the chain's first process without being it (where the host
    /// asks the human): that process was started by the host's shell tool, whatever its
    /// environment says; or a host stands above another host's process.
    Under {
        host: &'static str,
        /// The host's process.
        host_label: String,
        /// The process that is not the host's own connection.
        label: String,
    },
}

impl Found {
    /// Why, as a reply or the history says it: `GEMINI_CLI=1 in the environment of bash
    /// (pid 7)`.
    pub fn why(&self) -> String {
        match self {
            Found::Host { host, label } => format!("{host} is {label}"),
            Found::Mark {
                mark,
                label,
                posing: None,
                ..
            } => format!("{mark} in the environment of {label}"),
            Found::Mark {
                mark,
                label,
                posing: Some(posing),
                ..
            } => format!(
                "{mark} in the environment of {label}, which started {posing}: no host is started from a shell tool"
            ),
            Found::Under {
                host,
                host_label,
                label,
            } => format!(
                "{label} runs under {host} ({host_label}) without being it: {host}'s own connection is {host} itself, so this one was started by its shell tool, however its environment was cleared"
            ),
        }
    }

    /// The host whose shell tool the chain runs under, when a mark, or a host above the
    /// chain's own process, was found.
    pub fn shell_of(&self) -> Option<&'static str> {
        match self {
            Found::Mark { host, .. } | Found::Under { host, .. } => Some(host),
            Found::Host { .. } => None,
        }
    }
}

/// What makes `chain` (a process first, then its ancestors) an assistant's; `None` when
/// nothing does. A process's mark is read before what it is: a host's own process does
/// not carry its shell's mark, so a process that carries one is never the host's own
/// connection, whatever it runs; and a host's process is not one when a process above it
/// carries a mark, since no host is started from a shell tool. Where the host asks the
/// human, the host's own connection is the chain's first process: a host further up means
/// the first process is one its shell tool started.
pub fn found(chain: &[Proc], host: HostRole) -> Option<Found> {
    for (i, p) in chain.iter().enumerate() {
        if let Some(found) = marked(p, None) {
            return Some(found);
        }
        let Some(name) = p.host else { continue };
        return match host {
            HostRole::IsTheAssistant => Some(Found::Host {
                host: name,
                label: p.label.clone(),
            }),
            HostRole::AsksTheHuman if i > 0 => Some(Found::Under {
                host: name,
                host_label: p.label.clone(),
                label: chain[0].label.clone(),
            }),
            HostRole::AsksTheHuman => above_the_host(p, &chain[1..]),
        };
    }
    None
}

/// What makes the processes `above` a host's own process `own` an assistant's: a mark, or
/// a host (another one, or the same one by another program: a copy of something else under
/// its name). Only the host's own processes stand above it: its launchers (node running its
/// script) and the same program (Codex's interface above the app server that spawns its
/// servers).
fn above_the_host(own: &Proc, above: &[Proc]) -> Option<Found> {
    let same_binary = |a: &Proc| a.program.is_some() && a.program == own.program;
    let launchers = above
        .iter()
        .take_while(|a| a.host == own.host && a.mark.is_none() && (a.launcher || same_binary(a)))
        .count();
    above.iter().skip(launchers).find_map(|a| {
        marked(a, Some(own)).or_else(|| {
            a.host.map(|host| Found::Under {
                host,
                host_label: a.label.clone(),
                label: own.label.clone(),
            })
        })
    })
}

/// The mark `p` carries, as what makes a chain an assistant's (`posing`: the process below
/// it that passed for a host).
fn marked(p: &Proc, posing: Option<&Proc>) -> Option<Found> {
    p.mark.as_ref().map(|mark| Found::Mark {
        host: crate::hosts::recognise::host_of_mark(mark).unwrap_or("an assistant"),
        mark: mark.clone(),
        label: p.label.clone(),
        posing: posing.map(|q| q.label.clone()),
    })
}

/// Why `chain` is an assistant's ([`found`]); `None` when it is not.
pub fn behind(chain: &[Proc], host: HostRole) -> Option<String> {
    found(chain, host).map(|f| f.why())
}

/// Why this process runs under an assistant, `chain` being its ancestors (parent first):
/// its own environment carries the mark (set by whoever started it), or an ancestor is the
/// host or carries it. `None` when it does not. For the commands only a human may run
/// (the terminal's decisions, the dashboard, whose secret its starter reads).
pub fn behind_this_process(chain: &[Proc]) -> Option<String> {
    let own = std::env::vars_os()
        .find_map(|(name, value)| {
            crate::hosts::recognise::mark_of(name.as_encoded_bytes(), value.as_encoded_bytes())
        })
        .map(|mark| format!("{mark} in this command's environment"));
    own.or_else(|| behind(chain, HostRole::IsTheAssistant))
}

/// [`behind_this_process`], reading this process's ancestors.
pub fn behind_me() -> Option<String> {
    behind_this_process(&own_parent().map(chain).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(label: &str, claude: bool, marked: bool) -> Proc {
        Proc {
            pid: 0,
            label: label.into(),
            host: claude.then_some("Claude Code"),
            launcher: false,
            program: None,
            mark: marked.then(|| "CLAUDECODE".to_string()),
        }
    }

    #[test]
    fn the_hosts_own_child_is_the_humans_only_where_the_host_asks() {
        let direct = [
            p("claude (pid 2)", true, false),
            p("zsh (pid 1)", false, false),
        ];
        assert_eq!(behind(&direct, HostRole::AsksTheHuman), None);
        assert_eq!(
            behind(&direct, HostRole::IsTheAssistant).as_deref(),
            Some("Claude Code is claude (pid 2)")
        );
        let shell = [
            p("bash (pid 3)", false, true),
            p("claude (pid 2)", true, false),
        ];
        for host in [HostRole::AsksTheHuman, HostRole::IsTheAssistant] {
            assert_eq!(
                behind(&shell, host).as_deref(),
                Some("CLAUDECODE in the environment of bash (pid 3)")
            );
        }
        // Above the host only a mark counts where it asks, and it unmakes the host: no host
        // is started from a shell tool, a copy under a host's name is.
        let above = [
            p("claude (pid 2)", true, false),
            p("zsh (pid 1)", false, false),
            p("bash (pid 0)", false, true),
        ];
        assert_eq!(
            behind(&above, HostRole::AsksTheHuman).as_deref(),
            Some("CLAUDECODE in the environment of bash (pid 0), which started claude (pid 2): no host is started from a shell tool")
        );
        assert_eq!(
            found(&above, HostRole::AsksTheHuman).unwrap().shell_of(),
            Some("Claude Code")
        );
        let human = [
            p("firefox (pid 9)", false, false),
            p("init (pid 1)", false, false),
        ];
        assert_eq!(behind(&human, HostRole::IsTheAssistant), None);
    }

    #[test]
    fn every_hosts_shell_and_process_count_as_the_assistants() {
        let proc = |label: &str, host: Option<&'static str>, mark: Option<&str>| Proc {
            pid: 0,
            label: label.into(),
            host,
            launcher: false,
            program: None,
            mark: mark.map(String::from),
        };
        for (host, mark) in [
            ("Codex CLI", "CODEX_CI"),
            ("Gemini CLI", "GEMINI_CLI=1"),
            ("opencode", "OPENCODE=1"),
            ("Copilot CLI", "COPILOT_CLI=1"),
        ] {
            let shell = [
                proc("bash (pid 3)", None, Some(mark)),
                proc("node (pid 2)", Some(host), None),
            ];
            let why = format!("{mark} in the environment of bash (pid 3)");
            assert_eq!(behind(&shell, HostRole::AsksTheHuman), Some(why.clone()));
            assert_eq!(behind(&shell, HostRole::IsTheAssistant), Some(why));
            let direct = [proc("node (pid 2)", Some(host), None)];
            assert_eq!(behind(&direct, HostRole::AsksTheHuman), None);
            assert_eq!(
                behind(&direct, HostRole::IsTheAssistant),
                Some(format!("{host} is node (pid 2)"))
            );
        }
    }

    #[test]
    fn a_process_with_a_shells_mark_is_never_the_hosts_own() {
        // A program the model runs as `claude` (or a copy of a host) from Gemini CLI's
        // shell: the mark it inherited is read before what it runs.
        let posing = Proc {
            pid: 0,
            label: "claude (pid 5)".into(),
            host: Some("Claude Code"),
            launcher: false,
            program: None,
            mark: Some("GEMINI_CLI=1".into()),
        };
        let chain = [posing, p("bash (pid 4)", false, true)];
        for host in [HostRole::AsksTheHuman, HostRole::IsTheAssistant] {
            let found = found(&chain, host).expect("the shell's");
            assert_eq!(found.shell_of(), Some("Gemini CLI"));
            assert_eq!(
                found.why(),
                "GEMINI_CLI=1 in the environment of claude (pid 5)"
            );
        }
        // The host's own process, unmarked, is no shell's.
        let direct = [p("claude (pid 2)", true, false)];
        assert_eq!(found(&direct, HostRole::AsksTheHuman), None);
        let own = found(&direct, HostRole::IsTheAssistant).unwrap();
        assert_eq!(own.shell_of(), None);
    }

    /// The shell replaced itself with a client and erased its mark (`exec env -u
    /// CLAUDECODE client`, `exec env -i …`): the client has the host as its parent and a
    /// clean environment, and is still not the host's own connection. A copy under the
    /// host's name started that way stands under the real host; a host's launcher (node
    /// running its script) above it is the host's.
    #[test]
    fn a_client_under_the_host_without_being_it_is_the_shells() {
        let exec = [
            p("python3 (pid 5)", false, false),
            p("claude (pid 2)", true, false),
            p("zsh (pid 1)", false, false),
        ];
        let found = found(&exec, HostRole::AsksTheHuman).expect("the shell's");
        assert_eq!(found.shell_of(), Some("Claude Code"));
        assert!(
            found.why().starts_with(
                "python3 (pid 5) runs under Claude Code (claude (pid 2)) without being it"
            ),
            "{}",
            found.why()
        );
        let copy = [
            p("claude (pid 5)", true, false),
            p("claude (pid 2)", true, false),
        ];
        let found_copy = super::found(&copy, HostRole::AsksTheHuman).expect("the shell's");
        assert_eq!(found_copy.shell_of(), Some("Claude Code"));
        let launched = |host: &'static str| {
            [
                Proc {
                    pid: 3,
                    label: "codex (pid 3)".into(),
                    host: Some(host),
                    launcher: false,
                    program: Some("9:codex".into()),
                    mark: None,
                },
                Proc {
                    pid: 2,
                    label: "node (pid 2)".into(),
                    host: Some(host),
                    launcher: true,
                    program: Some("7:node".into()),
                    mark: None,
                },
                p("bash (pid 1)", false, false),
            ]
        };
        assert_eq!(
            super::found(&launched("Codex CLI"), HostRole::AsksTheHuman),
            None
        );
        // The host's own process, under another host: started by that one.
        let mut nested = launched("Codex CLI").to_vec();
        nested.insert(2, p("claude (pid 9)", true, false));
        let found_nested = super::found(&nested, HostRole::AsksTheHuman).expect("nested");
        assert_eq!(found_nested.shell_of(), Some("Claude Code"));
        // Where the host is the assistant, the host anywhere is.
        assert!(matches!(
            super::found(&exec, HostRole::IsTheAssistant),
            Some(Found::Host { .. })
        ));
    }
}
