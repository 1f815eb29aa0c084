//! The hosts `bmad-mcp setup` registers the server in: where each keeps its MCP servers in
//! the user's and in the project's scope, in which format, and the fields of the entry it
//! expects. Where each came from: the Claude Code, Codex, Gemini CLI, opencode and Copilot
//! CLI entries are the ones their own `mcp add` writes (checked with the versions
//! `./scripts/test` pins, whose `mcp list` reads what setup writes); Cursor, VS Code and
//! Claude Desktop cannot run here and follow their documentation (docs/setup.md cites it).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

/// A host, as the command line names it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
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

/// How a host's file holds its servers.
pub enum Format {
    /// JSON (comments allowed), servers in the top-level object named `container`.
    Json { container: &'static str },
    /// Codex's TOML, servers in `[mcp_servers.NAME]`.
    Toml,
}

impl Host {
    pub fn format(self) -> Format {
        let container = match self {
            Host::Codex => return Format::Toml,
            Host::Opencode => "mcp",
            Host::Vscode => "servers",
            _ => "mcpServers",
        };
        Format::Json { container }
    }

    /// The fields of our entry that setup sets (a JSON host's), for the server at
    /// `command`: stdio, no arguments. Every other field a person adds to the entry stays,
    /// and so do arguments they give our server (`json.rs`, `toml.rs`).
    pub fn fields(self, command: &str) -> Vec<(&'static str, Value)> {
        match self {
            // Gemini asks before each call of a server not marked `trust`: setup leaves
            // that choice to the person (a `trust` they add is kept). Codex's TOML entry
            // has the same two keys (set by `toml.rs`).
            Host::Gemini | Host::Cursor | Host::ClaudeDesktop | Host::Codex => {
                vec![("command", json!(command)), ("args", json!([]))]
            }
            Host::ClaudeCode | Host::Vscode => vec![
                ("type", json!("stdio")),
                ("command", json!(command)),
                ("args", json!([])),
            ],
            Host::Opencode => vec![
                ("type", json!("local")),
                ("command", json!([command])),
                ("enabled", json!(true)),
            ],
            Host::Copilot => vec![
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
        let home = dirs::home_dir().ok_or("the home directory is not known (HOME is not set)")?;
        let config = || dirs::config_dir().ok_or("the user's configuration directory is not known");
        Ok(match self {
            // Claude Code keeps its user state, servers included, in `.claude.json`, in
            // CLAUDE_CONFIG_DIR when that is set.
            Host::ClaudeCode => env_dir("CLAUDE_CONFIG_DIR")
                .unwrap_or(home)
                .join(".claude.json"),
            Host::Codex => env_dir("CODEX_HOME")
                .unwrap_or_else(|| home.join(".codex"))
                .join("config.toml"),
            // GEMINI_CLI_HOME stands for the home directory in Gemini CLI.
            Host::Gemini => env_dir("GEMINI_CLI_HOME")
                .unwrap_or(home)
                .join(".gemini/settings.json"),
            // opencode follows XDG on every system (~/.config, not macOS's Library).
            Host::Opencode => opencode_file(
                &env_dir("XDG_CONFIG_HOME")
                    .unwrap_or_else(|| home.join(".config"))
                    .join("opencode"),
            ),
            Host::Copilot => env_dir("COPILOT_HOME")
                .unwrap_or_else(|| home.join(".copilot"))
                .join("mcp-config.json"),
            Host::Cursor => home.join(".cursor/mcp.json"),
            // The default profile's mcp.json, beside its settings.json.
            Host::Vscode => config()?.join("Code/User/mcp.json"),
            Host::ClaudeDesktop => config()?.join("Claude/claude_desktop_config.json"),
        })
    }

    fn project_file(self, project: &Path) -> Result<PathBuf, String> {
        Ok(project.join(match self {
            Host::ClaudeCode => ".mcp.json",
            // Read only in a project Codex trusts.
            Host::Codex => ".codex/config.toml",
            Host::Gemini => ".gemini/settings.json",
            Host::Opencode => return Ok(opencode_file(project)),
            // Copilot CLI also reads `.mcp.json`, which is Claude Code's: its own file keeps
            // the two hosts' entries apart. Read only in a folder Copilot trusts.
            Host::Copilot => ".github/mcp.json",
            Host::Cursor => ".cursor/mcp.json",
            Host::Vscode => ".vscode/mcp.json",
            Host::ClaudeDesktop => {
                return Err(
                    "Claude Desktop has no project configuration; use `--scope user`".into(),
                )
            }
        }))
    }
}

/// opencode's configuration in `dir`: `opencode.json`, or the `opencode.jsonc` already
/// there.
fn opencode_file(dir: &Path) -> PathBuf {
    let jsonc = dir.join("opencode.jsonc");
    let json = dir.join("opencode.json");
    if !json.exists() && jsonc.exists() {
        jsonc
    } else {
        json
    }
}

/// A directory named by the variable `name`, when it is set to an absolute path.
fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}
