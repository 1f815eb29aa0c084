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
/// `bmad-mcp` binary (another install's path is ours to update), or this very binary
/// whatever its file is called (a person who installed it under another name updates and
/// removes the entry its own setup wrote). Anything else is another program that happens
/// to use the name, which setup never overwrites nor removes.
pub fn runs_us(command: &str) -> bool {
    let named_so = Path::new(command)
        .file_stem()
        .is_some_and(|s| s == "bmad-mcp");
    named_so
        || std::env::current_exe()
            .ok()
            .and_then(|me| me.to_str().map(|me| is_this_binary(command, me)))
            .unwrap_or(false)
}

/// What setup does with an entry of ours it finds when it adds its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The user's file: the binary's path follows, the person's other keys stay.
    Update,
    /// A project's file, which whoever committed it wrote: an entry that runs anything
    /// but this binary as setup writes it is refused ([`foreign`]).
    Vet,
    /// `--force`: replaced whole, nothing of it kept.
    Replace,
}

/// The keys a host starts a server with beyond its program and arguments: its variables
/// (`env`; opencode's `environment`, VS Code's `envFile`, Codex's `env_vars` passed
/// through) and its working directory.
const HOW_IT_RUNS: [&str; 5] = ["env", "environment", "envFile", "env_vars", "cwd"];

/// What in `entry` (as JSON) makes the host run something other than this binary
/// (`command`) as setup writes it: another path, arguments, variables other than `env`
/// (Codex's settings, [`Want::Add`]) with the values setup writes now, a working
/// directory. Empty when it runs what setup would write.
pub fn foreign(entry: &serde_json::Value, command: &str, env: &[(String, String)]) -> Vec<String> {
    use serde_json::Value;
    let mut found = Vec::new();
    let (program, extra) = match entry.get("command") {
        Some(Value::Array(all)) => (all.first().and_then(Value::as_str), all.len() > 1),
        Some(Value::String(c)) => (Some(c.as_str()), false),
        _ => (None, false),
    };
    match program {
        Some(c) if is_this_binary(c, command) => {}
        Some(c) => found.push(format!("runs `{c}`, not this binary ({command})")),
        None => found.push("names no program".into()),
    }
    let args = entry.get("args").and_then(Value::as_array);
    if extra || args.is_some_and(|a| !a.is_empty()) {
        found.push("gives the server arguments".into());
    }
    for key in HOW_IT_RUNS {
        let Some(value) = entry.get(key) else {
            continue;
        };
        let ours = |(name, v): (&String, &Value)| {
            env.iter()
                .any(|(n, want)| n == name && v.as_str() == Some(want))
        };
        let only_ours = key == "env" && value.as_object().is_some_and(|o| o.iter().all(ours));
        if !only_ours {
            found.push(format!("sets `{key}`"));
        }
    }
    found
}

/// Whether `found`, an entry's program, is this binary (`ours`): an absolute path to the
/// same file. A relative one (`./bmad-mcp`) is whatever the host's working directory
/// holds.
fn is_this_binary(found: &str, ours: &str) -> bool {
    let path = Path::new(found);
    path.is_absolute()
        && (found == ours
            || matches!((path.canonicalize(), Path::new(ours).canonicalize()), (Ok(a), Ok(b)) if a == b))
}

/// The refusal of an entry of ours a project's file sets up otherwise ([`foreign`]), with
/// the entry as the file has it (`shown`).
pub fn refused(found: &[String], shown: Option<&str>) -> String {
    format!(
        "its `{NAME}` entry {}: a project's file is whoever committed it choosing how your server runs. It reads:\n{}\nRun setup with `--force` to replace it whole with this binary's own entry",
        found.join(", "),
        shown.unwrap_or("(not shown)")
    )
}

/// The refusal to touch an entry named [`NAME`] that is not ours; `what` says what it is.
pub fn not_ours(what: &str) -> String {
    format!(
        "an entry named `{NAME}` is there already and {what}, not bmad-mcp: setup does not overwrite or remove another server's entry; rename or remove it yourself, then run setup again"
    )
}

#[cfg(test)]
mod tests {
    use super::{foreign, runs_us};
    use serde_json::json;

    #[test]
    fn an_entry_is_foreign_by_its_program_arguments_variables_and_folder() {
        let ours = "/opt/bin/bmad-mcp";
        let env = vec![("BMAD_OWNER".to_string(), "Ann <a@x>".to_string())];
        let clean = json!({"type": "stdio", "command": ours, "args": [], "trust": true});
        assert!(foreign(&clean, ours, &env).is_empty());
        let codex = json!({"command": ours, "args": [], "env": {"BMAD_OWNER": "Ann <a@x>"}});
        assert!(foreign(&codex, ours, &env).is_empty());
        for (entry, said) in [
            (json!({"command": "./bmad-mcp"}), "runs `./bmad-mcp`"),
            (
                json!({"command": "/tmp/x/bmad-mcp.sh"}),
                "runs `/tmp/x/bmad-mcp.sh`",
            ),
            (
                json!({"command": ours, "args": ["--owner", "M"]}),
                "arguments",
            ),
            (json!({"command": [ours, "--owner", "M"]}), "arguments"),
            (
                json!({"command": ours, "env": {"LD_PRELOAD": "/tmp/x.so"}}),
                "sets `env`",
            ),
            (
                json!({"command": ours, "env": {"BMAD_OWNER": "Mallory"}}),
                "sets `env`",
            ),
            (
                json!({"command": ours, "environment": {"A": "1"}}),
                "sets `environment`",
            ),
            (json!({"command": ours, "cwd": "/tmp"}), "sets `cwd`"),
        ] {
            let found = foreign(&entry, ours, &env).join(", ");
            assert!(found.contains(said), "{entry}: {found}");
        }
    }

    #[test]
    fn only_a_bmad_mcp_binary_is_ours() {
        assert!(runs_us("/usr/local/bin/bmad-mcp"));
        assert!(runs_us("bmad-mcp"));
        assert!(!runs_us("npx"));
        assert!(!runs_us("/opt/bmad/server"));
        assert!(!runs_us("/usr/bin/bmad-mcp-wrapper"));
    }
}
