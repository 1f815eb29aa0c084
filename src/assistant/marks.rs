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
    /// The exact file names of its executable (`/proc/<pid>/exe`), or of the script node or
    /// bun runs (`node_modules/.bin/gemini`): `claude`, `claude.exe`.
    pub programs: &'static [&'static str],
    /// Its npm packages: a script node or bun runs from `node_modules/<package>/` is its.
    pub packages: &'static [&'static str],
}

/// Every host known, Claude Code first.
pub const HOSTS: [HostMarks; 5] = [
    HostMarks {
        host: "Claude Code",
        vars: &[("CLAUDECODE", None)],
        programs: &["claude", "claude.exe"],
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
        programs: &["opencode", "opencode.exe"],
        packages: &["opencode-ai"],
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

/// The host a shell mark (as [`mark_of`] shows it: `GEMINI_CLI=1`) belongs to.
pub fn host_of_mark(shown: &str) -> Option<&'static str> {
    HOSTS
        .iter()
        .find(|h| h.vars_shown().iter().any(|v| v == shown))
        .map(|h| h.host)
}

/// The file name of `path`, `/`-separated.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether the executable `exe` is a JavaScript runtime (node, bun), whose script tells
/// which program it runs.
pub fn runs_scripts(exe: &str) -> bool {
    matches!(file_name(exe), "node" | "nodejs" | "bun")
}

/// The host whose executable `exe` (what `/proc/<pid>/exe` points to) is: its file name is
/// exactly one of the host's programs, or it is a version kept in `<program>/versions/`
/// (as Claude Code's own installer keeps `~/.local/share/claude/versions/2.1.330`). Never
/// a prefix: `claudette` and `codex-x` are not hosts.
pub fn host_of_executable(exe: &str) -> Option<&'static str> {
    let mut parts = exe.rsplit('/');
    let name = parts.next().unwrap_or(exe);
    let versioned = (parts.next() == Some("versions"))
        .then(|| parts.next())
        .flatten();
    HOSTS
        .iter()
        .find(|h| {
            h.programs
                .iter()
                .any(|p| name == *p || versioned == Some(*p))
        })
        .map(|h| h.host)
}

/// The host whose script `script` (the file node or bun runs) is: its file name is exactly
/// one of the host's programs (`node_modules/.bin/gemini`), or it lies in the host's npm
/// package (`node_modules/@google/gemini-cli/…`).
pub fn host_of_script(script: &str) -> Option<&'static str> {
    let name = file_name(script);
    HOSTS
        .iter()
        .find(|h| {
            let packaged = h.packages.iter().any(|p| {
                let within = format!("node_modules/{p}/");
                script.starts_with(&within) || script.contains(&format!("/{within}"))
            });
            packaged || h.programs.contains(&name)
        })
        .map(|h| h.host)
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
    fn each_hosts_executable_is_recognised_by_its_exact_name() {
        // As `/proc/<pid>/exe` points to them, from the pinned installs in `target/`.
        let seen = [
            ("/usr/bin/claude", "Claude Code"),
            (
                "/x/node_modules/@anthropic-ai/claude-code/bin/claude.exe",
                "Claude Code",
            ),
            (
                "/home/u/.local/share/claude/versions/2.1.330",
                "Claude Code",
            ),
            (
                "/x/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
                "Codex CLI",
            ),
            ("/x/node_modules/opencode-ai/bin/opencode.exe", "opencode"),
            (
                "/x/node_modules/opencode-linux-x64/bin/opencode",
                "opencode",
            ),
            ("/x/@github/copilot-linux-x64/copilot", "Copilot CLI"),
        ];
        for (exe, host) in seen {
            assert_eq!(host_of_executable(exe), Some(host), "{exe}");
        }
        // A prefix, a package in the path, or a host's name elsewhere is not the host.
        for exe in [
            "/usr/bin/bash",
            "/usr/bin/python3",
            "claudette",
            "/bin/codexify",
            "/x/codex-x",
            "/x/gemini.py",
            "/tmp/@anthropic-ai/claude-code/python3",
            "/x/opencode-linux-x64/bin/python3",
            "/x/claude/python3",
            "/x/versions/2.1.330",
            "/usr/bin/node",
        ] {
            assert_eq!(host_of_executable(exe), None, "{exe}");
        }
        assert!(runs_scripts("/usr/bin/node") && runs_scripts("/x/bun"));
        assert!(!runs_scripts("/usr/bin/node-x") && !runs_scripts("/x/claude.exe"));
    }

    #[test]
    fn each_hosts_script_is_recognised_by_its_name_or_package() {
        let seen = [
            (
                "/x/node_modules/@anthropic-ai/claude-code/cli.js",
                "Claude Code",
            ),
            ("/x/node_modules/@openai/codex/bin/codex.js", "Codex CLI"),
            ("/x/node_modules/.bin/codex", "Codex CLI"),
            ("/x/node_modules/.bin/gemini", "Gemini CLI"),
            (
                "node_modules/@google/gemini-cli/bundle/gemini.js",
                "Gemini CLI",
            ),
            ("/x/node_modules/opencode-ai/bin/opencode", "opencode"),
            (
                "/x/node_modules/@github/copilot/npm-loader.js",
                "Copilot CLI",
            ),
            ("/x/node_modules/.bin/copilot", "Copilot CLI"),
        ];
        for (script, host) in seen {
            assert_eq!(host_of_script(script), Some(host), "{script}");
        }
        for script in [
            "/x/index.js",
            "/x/gemini-x.js",
            "/x/@google/gemini-cli-core/index.js",
            "/x/node_modules/@openai/codex-sdk/index.js",
            "/x/my-node_modules/@openai/codex/bin/codex.js",
        ] {
            assert_eq!(host_of_script(script), None, "{script}");
        }
        assert_eq!(host_of_mark("GEMINI_CLI=1"), Some("Gemini CLI"));
        assert_eq!(host_of_mark("AGENT=1"), Some("opencode"));
        assert_eq!(host_of_mark("CODEX_THREAD_ID"), Some("Codex CLI"));
        assert_eq!(host_of_mark("GEMINI_CLI"), None);
    }
}
