//! The human's project policy, `.bmad/config.toml` (committed with the project):
//!
//! ```toml
//! # Who may pass the gates: "auto" (the default) asks the human through the client's
//! # dialog where it has one and otherwise takes the host's word; "human" takes a
//! # decision only from the human (the dialog, or `bmad-mcp confirm|approve|reject`).
//! gates = "human"
//! ```
//!
//! A file that cannot be read, is not TOML, or has an unknown key or value is an error
//! naming the file and the key: a typo must not silently weaken the policy.

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::store::{Project, ReadProblem};

/// Where the policy lives, relative to the project.
pub const CONFIG_REL: &str = ".bmad/config.toml";

/// Who may pass the gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gates {
    /// The human through the client's dialog where it has one, else the host's word.
    #[default]
    Auto,
    /// Only the human: the dialog or the terminal, never a host's tool call alone.
    Human,
}

impl Gates {
    pub fn name(self) -> &'static str {
        match self {
            Gates::Auto => "auto",
            Gates::Human => "human",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub gates: Gates,
}

impl Config {
    /// Reads the policy from TOML text; the error names the key and the line.
    pub fn parse(text: &str) -> std::result::Result<Config, String> {
        toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            // A span over the whole file (an unknown key at the top) points at no line.
            let line = e
                .span()
                .filter(|s| !(s.start == 0 && s.end >= text.len()))
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            match line {
                Some(line) => format!("line {line}: {message}"),
                None => message,
            }
        })
    }

    /// The project's policy: the defaults when the file is absent.
    pub fn load(project: &Project) -> Result<Config> {
        let invalid = |problem: String| Error::InvalidConfig {
            path: project.path(CONFIG_REL).display().to_string(),
            problem,
        };
        match project.read(CONFIG_REL) {
            Ok(None) => Ok(Config::default()),
            Ok(Some(text)) => Config::parse(&text).map_err(invalid),
            Err(ReadProblem::Unsafe(e)) => Err(e),
            Err(problem) => Err(invalid(format!("cannot be read: {problem}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_reads_its_one_key_and_names_what_is_wrong() {
        assert_eq!(Config::parse("").unwrap().gates, Gates::Auto);
        assert_eq!(
            Config::parse("gates = \"human\"\n").unwrap().gates,
            Gates::Human
        );
        assert_eq!(
            Config::parse("# comment\ngates = 'auto'").unwrap().gates,
            Gates::Auto
        );
        let typo = Config::parse("\ngate = \"human\"\n").unwrap_err();
        assert!(typo.contains("unknown field `gate`"), "{typo}");
        let value = Config::parse("gates = \"humans\"").unwrap_err();
        assert!(
            value.contains("humans") || value.contains("variant"),
            "{value}"
        );
        let syntax = Config::parse("# policy\ngates = ").unwrap_err();
        assert!(syntax.contains("line 2"), "{syntax}");
        let kind = Config::parse("gates = true").unwrap_err();
        assert!(!kind.is_empty());
    }
}
