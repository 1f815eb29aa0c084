//! What marks each agent host, as data: the variables it sets in the shell of its model's
//! shell tool (and usually in the servers it spawns), and the programs it runs as. The
//! rule that reads a chain of processes ([`super::behind`]) and `docs/hosts.md` both read
//! this one table; each mark was read from the host's own shell tool.

/// One host's marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostMarks {
    /// The host's name as the user knows it.
    pub host: &'static str,
    /// Environment variables its shell tool sets: the name, and the value it must have
    /// (`None`: any non-empty value).
    pub vars: &'static [(&'static str, Option<&'static str>)],
    /// The file names of its executable (or of the script `node` runs): `claude`.
    pub programs: &'static [&'static str],
    /// A part of the path of its script or executable that only it has (its npm package).
    pub packages: &'static [&'static str],
}

/// Every host known, Claude Code first.
pub const HOSTS: [HostMarks; 5] = [
    HostMarks {
        host: "Claude Code",
        vars: &[("CLAUDECODE", None)],
        programs: &["claude"],
        packages: &["@anthropic-ai/claude-code"],
    },
    HostMarks {
        host: "Codex CLI",
        vars: &[
            ("CODEX_CI", None),
            ("CODEX_SESSION_ID", None),
            ("CODEX_THREAD_ID", None),
        ],
        programs: &["codex"],
        packages: &["@openai/codex"],
    },
    HostMarks {
        host: "Gemini CLI",
        vars: &[("GEMINI_CLI", Some("1"))],
        programs: &["gemini"],
        packages: &["@google/gemini-cli"],
    },
    HostMarks {
        host: "opencode",
        vars: &[("OPENCODE", Some("1")), ("AGENT", Some("1"))],
        programs: &["opencode"],
        packages: &["opencode-ai", "opencode-linux-", "opencode-darwin-"],
    },
    HostMarks {
        host: "Copilot CLI",
        vars: &[("COPILOT_CLI", Some("1"))],
        programs: &["copilot"],
        packages: &["@github/copilot"],
    },
];

impl HostMarks {
    /// The marks as `docs/hosts.md` shows them: `GEMINI_CLI=1`, `CODEX_CI`.
    pub fn vars_shown(&self) -> Vec<String> {
        self.vars
            .iter()
            .map(|(name, value)| match value {
                Some(v) => format!("{name}={v}"),
                None => (*name).to_string(),
            })
            .collect()
    }
}

/// The first mark that `NAME=value` is, as shown (`GEMINI_CLI=1`): a variable of a host's
/// shell tool with the value it sets.
pub fn mark_of(name: &[u8], value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    HOSTS
        .iter()
        .flat_map(|h| h.vars.iter())
        .find_map(|(var, want)| {
            let hit = var.as_bytes() == name && want.is_none_or(|w| w.as_bytes() == value);
            hit.then(|| match want {
                Some(w) => format!("{var}={w}"),
                None => (*var).to_string(),
            })
        })
}

/// The host whose program `arg` (an executable's path, or the script `node` runs) is.
pub fn host_of_program(arg: &str) -> Option<&'static str> {
    let base = arg.rsplit('/').next().unwrap_or(arg);
    HOSTS.iter().find_map(|h| {
        let named = h.programs.iter().any(|p| {
            base == *p
                || base
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
        });
        let packaged = h.packages.iter().any(|p| arg.contains(p));
        (named || packaged).then_some(h.host)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_hosts_real_shell_marks_are_recognised() {
        // As read from each host's shell tool (`env` run by the model).
        let seen: [(&str, &str, &str); 9] = [
            ("CLAUDECODE", "1", "CLAUDECODE"),
            ("CODEX_CI", "1", "CODEX_CI"),
            (
                "CODEX_SESSION_ID",
                "019a0c3e-5b1f-7d53-9f11-2d1c0a7d0e41",
                "CODEX_SESSION_ID",
            ),
            (
                "CODEX_THREAD_ID",
                "019a0c3e-5b1f-7d53-9f11-2d1c0a7d0e41",
                "CODEX_THREAD_ID",
            ),
            ("GEMINI_CLI", "1", "GEMINI_CLI=1"),
            ("OPENCODE", "1", "OPENCODE=1"),
            ("AGENT", "1", "AGENT=1"),
            ("COPILOT_CLI", "1", "COPILOT_CLI=1"),
            ("CLAUDECODE", "true", "CLAUDECODE"),
        ];
        for (name, value, shown) in seen {
            assert_eq!(
                mark_of(name.as_bytes(), value.as_bytes()).as_deref(),
                Some(shown),
                "{name}={value}"
            );
        }
        for (name, value) in [
            ("CLAUDECODE", ""),
            ("GEMINI_CLI", "0"),
            ("AGENT", "codex"),
            ("COPILOT_MODEL", "gpt-5"),
            ("OPENCODE_PID", "42"),
            ("HOME", "/root"),
        ] {
            assert_eq!(
                mark_of(name.as_bytes(), value.as_bytes()),
                None,
                "{name}={value}"
            );
        }
    }

    #[test]
    fn each_hosts_program_is_recognised_by_its_file_or_package() {
        let seen = [
            ("/usr/bin/claude", "Claude Code"),
            (
                "/x/node_modules/@anthropic-ai/claude-code/cli.js",
                "Claude Code",
            ),
            ("/x/node_modules/@openai/codex/bin/codex.js", "Codex CLI"),
            (
                "/x/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
                "Codex CLI",
            ),
            ("/x/node_modules/.bin/gemini", "Gemini CLI"),
            (
                "/x/node_modules/@google/gemini-cli/bundle/gemini.js",
                "Gemini CLI",
            ),
            (
                "/x/node_modules/opencode-linux-x64/bin/opencode",
                "opencode",
            ),
            ("/x/node_modules/opencode-ai/bin/opencode.exe", "opencode"),
            (
                "/x/node_modules/@github/copilot/npm-loader.js",
                "Copilot CLI",
            ),
            ("/x/@github/copilot-linux-x64/copilot", "Copilot CLI"),
        ];
        for (arg, host) in seen {
            assert_eq!(host_of_program(arg), Some(host), "{arg}");
        }
        for arg in [
            "/usr/bin/bash",
            "claudette",
            "/bin/codexify",
            "node",
            "/x/index.js",
        ] {
            assert_eq!(host_of_program(arg), None, "{arg}");
        }
    }
}
