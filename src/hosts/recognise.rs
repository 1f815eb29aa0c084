//! Which host a shell mark, an executable or a script belongs to, read from the marks of
//! [`super::HOSTS`]: the facts the rule that refuses a decision under an assistant
//! (`assistant`) works on.

use super::{Shell, HOSTS};

/// Each host with a shell tool, by name, with its marks.
fn shells() -> impl Iterator<Item = (&'static str, &'static Shell)> {
    HOSTS
        .iter()
        .filter_map(|h| h.shell.as_ref().map(|s| (h.name, s)))
}

/// The first mark that `NAME=value` is, as shown (`GEMINI_CLI=1`): a variable of a host's
/// shell tool with the value it sets.
pub fn mark_of(name: &[u8], value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    shells()
        .flat_map(|(_, s)| s.vars.iter())
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
    shells()
        .find(|(_, s)| s.vars_shown().iter().any(|v| v == shown))
        .map(|(name, _)| name)
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
    shells()
        .find(|(_, s)| {
            s.programs
                .iter()
                .any(|p| name == *p || versioned == Some(*p))
        })
        .map(|(name, _)| name)
}

/// The host whose script `script` (the file node or bun runs) is: its file name is exactly
/// one of the host's programs (`node_modules/.bin/gemini`), or it lies in the host's npm
/// package (`node_modules/@google/gemini-cli/…`).
pub fn host_of_script(script: &str) -> Option<&'static str> {
    let name = file_name(script);
    shells()
        .find(|(_, s)| {
            let packaged = s.packages.iter().any(|p| {
                let within = format!("node_modules/{p}/");
                script.starts_with(&within) || script.contains(&format!("/{within}"))
            });
            packaged || s.programs.contains(&name)
        })
        .map(|(host, _)| host)
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
