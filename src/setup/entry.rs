//! The entry `bmad-mcp setup` owns in a host's configuration: its name, what it runs,
//! whether an entry found under that name is ours, and the change made to a file (its new
//! text, our entry before and after), shared by the JSON and the TOML editors.

use std::path::Path;

/// The name the server is registered under in every host: the hosts derive the tool's
/// name from it (`mcp__bmad__bmad-task`, `bmad_bmad-task`, …).
pub const NAME: &str = "bmad";

/// What the command does to our entry.
pub enum Want {
    /// Register the server: the absolute path of the binary, and the variables the host
    /// must pass it (Codex only; empty elsewhere).
    Add {
        command: String,
        env: Vec<(String, String)>,
    },
    /// Take our entry out, and nothing else.
    Remove,
}

/// A file's text after the edit, with our entry as it was and as it is (`None`: absent),
/// each rendered in the file's own format.
#[derive(Debug)]
pub struct Change {
    pub text: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// Whether `command`, the program an entry named [`NAME`] runs, is this server: any
/// `bmad-mcp` binary (another install's path is ours to update). Anything else is another
/// program that happens to use the name, which setup never overwrites nor removes.
pub fn runs_us(command: &str) -> bool {
    Path::new(command)
        .file_stem()
        .is_some_and(|s| s == "bmad-mcp")
}

/// The refusal to touch an entry named [`NAME`] that is not ours; `what` says what it is.
pub fn not_ours(what: &str) -> String {
    format!(
        "an entry named `{NAME}` is there already and {what}, not bmad-mcp: setup does not overwrite or remove another server's entry; rename or remove it yourself, then run setup again"
    )
}

#[cfg(test)]
mod tests {
    use super::runs_us;

    #[test]
    fn only_a_bmad_mcp_binary_is_ours() {
        assert!(runs_us("/usr/local/bin/bmad-mcp"));
        assert!(runs_us("bmad-mcp"));
        assert!(!runs_us("npx"));
        assert!(!runs_us("/opt/bmad/server"));
        assert!(!runs_us("/usr/bin/bmad-mcp-wrapper"));
    }
}
