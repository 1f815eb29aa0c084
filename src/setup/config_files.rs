//! The hosts `bmad-mcp setup` registers the server in, as its command line names them: where each
//! keeps its MCP servers in the user's and in the project's scope, and in which format (read from
//! the hosts table, [`crate::hosts`]), and the fields of the entry it expects. Where
//! each came from: the Claude Code, Codex, Gemini CLI, opencode and Copilot CLI entries are the
//! ones their own `mcp add` writes (checked with the versions `./scripts/test` pins, whose `mcp
//! list` reads what setup writes); Cursor, VS Code and Claude Desktop cannot run here and follow
//! their documentation (docs/setup.md cites it).

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde_json::{json, Value};

pub use crate::hosts::Format;
use crate::hosts::{Base, Config, Dialog};

/// A host, as the command line names it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    ClaudeCode,
    Codex,
    Gemini,
    Opencode,
    Copilot,
    Cursor,
    Vscode,
    ClaudeDesktop,
}

/// Whose configuration: the user's (every project), or the project's (a file in it, which
/// the team may commit).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    #[default]
    User,
    Project,
}

impl Target {
    /// Where this host keeps its servers, from the hosts table.
    fn config(self) -> &'static Config {
        let name = self.to_possible_value().expect("every host has a name");
        crate::hosts::by_setup_name(name.get_name())
            .and_then(|h| h.config.as_ref())
            .expect("every host `bmad-mcp setup` takes is in the hosts table")
    }

    /// The host's name as the user knows it.
    pub fn name(self) -> &'static str {
        let name = self.to_possible_value().expect("every host has a name");
        crate::hosts::by_setup_name(name.get_name()).map_or("this host", |h| h.name)
    }

    pub fn format(self) -> Format {
        self.config().format
    }

    /// What the person must still know or do once the entry is written: where the host
    /// closes unseen the dialog in which they decide a gate, and how they are asked
    /// instead; what a mode of the host needs to offer the tool at all. From the hosts
    /// table, as docs/hosts.md and docs/setup.md say it.
    pub fn left_to_the_person(self) -> Vec<String> {
        let name = self.to_possible_value().expect("every host has a name");
        let dialog = crate::hosts::by_setup_name(name.get_name())
            .and_then(|h| h.client)
            .map(|c| c.dialog);
        let mut left = Vec::new();
        if let Some(Dialog::DeclinedUnattended(u)) = dialog {
            let (host, when, shown) = (self.name(), u.when, u.shown);
            left.push(format!("{host} closes at once, with nobody asked, the dialog in which you decide a gate {when}: the gate then waits for you in a terminal or on the dashboard. To be asked in the dialog, {shown}."));
        }
        left.extend(self.config().still_to_do.map(str::to_string));
        left
    }

    /// The fields of our entry that setup sets (a JSON host's), for the server at `command`: stdio,
    /// no arguments. Every other field a person adds to the entry stays, and so do arguments they
    /// give our server ([`json.rs`](crate::setup::json), [`toml.rs`](crate::setup::toml)).
    pub fn fields(self, command: &str) -> Vec<(&'static str, Value)> {
        match self {
            // Gemini's interactive mode asks before each call of a server not marked
            // `trust`: setup leaves that choice to the person (a `trust` they add is kept),
            // and says what headless runs need (`still_to_do`). Codex's TOML entry has the
            // same two keys (set by `toml.rs`).
            Target::Gemini | Target::Cursor | Target::ClaudeDesktop | Target::Codex => {
                vec![("command", json!(command)), ("args", json!([]))]
            }
            Target::ClaudeCode | Target::Vscode => vec![
                ("type", json!("stdio")),
                ("command", json!(command)),
                ("args", json!([])),
            ],
            Target::Opencode => vec![
                ("type", json!("local")),
                ("command", json!([command])),
                ("enabled", json!(true)),
            ],
            Target::Copilot => vec![
                ("type", json!("local")),
                ("command", json!(command)),
                ("args", json!([])),
                ("tools", json!(["*"])),
            ],
        }
    }

    /// The file this host reads its servers from in `scope` (`project`: the project's
    /// directory), or why there is none.
    pub fn file(self, scope: Scope, project: &Path) -> Result<PathBuf, String> {
        match scope {
            Scope::User => self.user_file(),
            Scope::Project => self.project_file(project),
        }
    }

    fn user_file(self) -> Result<PathBuf, String> {
        let c = self.config();
        let dir =
            match c.user_var.and_then(env_dir) {
                Some(dir) => dir,
                None => match c.user_base {
                    Base::Home => dirs::home_dir()
                        .ok_or("the home directory is not known (HOME is not set)")?,
                    Base::SystemConfig => dirs::config_dir()
                        .ok_or("the user's configuration directory is not known")?,
                }
                .join(c.user_dir),
            };
        Ok(commented_if_only(dir.join(c.user_file), c.commented))
    }

    fn project_file(self, project: &Path) -> Result<PathBuf, String> {
        let c = self.config();
        match c.project_file {
            Some(rel) => Ok(commented_if_only(project.join(rel), c.commented)),
            None => Err(format!(
                "{} has no project configuration; use `--scope user`",
                self.name()
            )),
        }
    }
}

/// `file`, or its commented twin beside it (`opencode.jsonc`) when only that one exists.
fn commented_if_only(file: PathBuf, commented: Option<&str>) -> PathBuf {
    let Some(twin) = commented.map(|name| file.with_file_name(name)) else {
        return file;
    };
    if !file.exists() && twin.exists() {
        twin
    } else {
        file
    }
}

/// A directory named by the variable `name`, when it is set to an absolute path.
fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}
