//! The human's project policy, `.bmad/config.toml` (committed with the project):
//!
//! ```toml
//! # Who may pass the gates: "auto" (the default) asks the human through the client's
//! # dialog where it has one and otherwise takes the host's word, except from an agent
//! # host that cannot ask (Gemini CLI, opencode; any connection opened from a host's
//! # shell tool), whose gates wait for the human's terminal or dashboard; "host" takes
//! # the host's word there too; "human" takes a decision only from the human (the
//! # dialog, `bmad-mcp confirm|approve|reject`, the dashboard).
//! gates = "human"
//! # The default time limit of each check, in seconds (else BMAD_CHECK_TIMEOUT_SECS, 600).
//! check_timeout_secs = 900
//!
//! # The project's own checks, which the server runs after `dev` and before QA completes.
//! [checks]
//! test = "cargo test --locked"
//! lint = { command = "cargo clippy -- -D warnings", timeout_secs = 300 }
//! ```
//!
//! A file that cannot be read, is not TOML, or has an unknown key or value is an error
//! naming the file and the key: a typo must not silently weaken the policy. What the
//! server acts on is the version the human last approved ([`super::approval`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::files::{Project, ReadProblem};

/// Where the policy lives, relative to the project.
pub const CONFIG_REL: &str = ".bmad/config.toml";

/// The most checks a project may name (each one's tail is in the reply).
pub const MAX_CHECKS: usize = 8;
/// The longest command a check may have, in bytes.
const MAX_COMMAND_BYTES: usize = 2000;
/// The longest time limit a check may have: a day.
const MAX_TIMEOUT_SECS: u64 = 24 * 60 * 60;

/// Who may pass the gates. The derived order is the strength: `human` is stricter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gates {
    /// The human through the client's dialog where it has one, else the host's word, even
    /// from an agent host that cannot ask.
    Host,
    /// The human through the client's dialog where it has one, else the host's word,
    /// except from an agent host that cannot ask, or a connection opened from a host's shell
    /// tool: there the human's channels.
    #[default]
    Auto,
    /// Only the human: the dialog or the terminal, never a host's tool call alone.
    Human,
}

impl Gates {
    pub fn name(self) -> &'static str {
        match self {
            Gates::Host => "host",
            Gates::Auto => "auto",
            Gates::Human => "human",
        }
    }
}

/// One check: a command for `sh -c` in the project directory, and its own time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSpec {
    pub command: String,
    pub timeout_secs: Option<u64>,
}

/// The table form of a check: `{ command = "…", timeout_secs = 60 }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckTable {
    command: String,
    timeout_secs: Option<u64>,
}

impl<'de> Deserialize<'de> for CheckSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = CheckSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a command string, or a table with `command` and `timeout_secs`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<CheckSpec, E> {
                Ok(CheckSpec {
                    command: v.to_string(),
                    timeout_secs: None,
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<CheckSpec, A::Error> {
                let t = CheckTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(CheckSpec {
                    command: t.command,
                    timeout_secs: t.timeout_secs,
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub gates: Gates,
    /// The default time limit of each check, in seconds.
    #[serde(default)]
    pub check_timeout_secs: Option<u64>,
    /// The project's checks by name, run in name order.
    #[serde(default)]
    pub checks: BTreeMap<String, CheckSpec>,
    /// Variables of the server's environment passed on to the checks although their
    /// names look like secrets (`pass_env = ["GITHUB_TOKEN"]`); never `BMAD_MCP_TOKEN`.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// The night shift's limits (`bmad-mcp run`).
    #[serde(default)]
    pub run: RunPolicy,
}

/// What the human sets for the night shift (`[run]`): read from the approved version
/// only, so that a model that edits the file raises no budget until the human approves it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunPolicy {
    /// The tokens a story may use, all its steps together, before it parks for the human.
    #[serde(default)]
    pub budget_tokens: Option<u64>,
    /// A command run (no shell: split on blanks) with each parked story's line as its last
    /// argument, to tell the human.
    #[serde(default)]
    pub notify: Option<String>,
    /// How long one host session may take before it is stopped.
    #[serde(default)]
    pub step_timeout_secs: Option<u64>,
}

impl RunPolicy {
    /// A notification command with nothing hidden in it, a time limit within reason.
    fn validate(&self, at: &dyn Fn(&str) -> String) -> std::result::Result<(), String> {
        if let Some(why) = self.notify.as_deref().and_then(crate::code::hidden_in) {
            return Err(format!("{}key `run.notify`: refused, {why}", at("notify")));
        }
        if self
            .step_timeout_secs
            .is_some_and(|t| !(1..=MAX_TIMEOUT_SECS).contains(&t))
        {
            return Err(format!(
                "{}key `run.step_timeout_secs`: give a number of seconds from 1 to {MAX_TIMEOUT_SECS}",
                at("step_timeout_secs")
            ));
        }
        Ok(())
    }
}

impl Config {
    /// Reads the policy from TOML text; the error names the key and the line.
    pub fn parse(text: &str) -> std::result::Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| {
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
        })?;
        config.validate(text)?;
        Ok(config)
    }

    /// What TOML cannot say: check names that are safe in a file name, commands that are
    /// not blank, time limits within reason, and not more checks than a reply can show.
    fn validate(&self, text: &str) -> std::result::Result<(), String> {
        let at = |key: &str| {
            text.lines()
                .position(|l| {
                    let l = l.trim_start();
                    l.starts_with(key)
                        || l.starts_with(&format!("\"{key}\""))
                        || l.starts_with(&format!("[checks.{key}]"))
                })
                .map(|i| format!("line {}: ", i + 1))
                .unwrap_or_default()
        };
        if self.checks.len() > MAX_CHECKS {
            return Err(format!(
                "`checks` names {} checks, more than the {MAX_CHECKS} the server runs; combine some into one command",
                self.checks.len()
            ));
        }
        for name in &self.pass_env {
            let ok = !name.is_empty()
                && name.len() <= 100
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok || name == "BMAD_MCP_TOKEN" {
                return Err(format!(
                    "{}key `pass_env`: `{}` is not a variable the checks may be given (letters, digits and `_`; never BMAD_MCP_TOKEN)",
                    at("pass_env"),
                    crate::code::visible(&crate::error::clip(name, 100))
                ));
            }
        }
        let timeout_ok = |t: Option<u64>| t.is_none_or(|t| (1..=MAX_TIMEOUT_SECS).contains(&t));
        if !timeout_ok(self.check_timeout_secs) {
            return Err(format!(
                "{}key `check_timeout_secs`: give a number of seconds from 1 to {MAX_TIMEOUT_SECS}",
                at("check_timeout_secs")
            ));
        }
        self.run.validate(&at)?;
        for (name, spec) in &self.checks {
            let safe = !name.is_empty()
                && name.len() <= 40
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !safe {
                return Err(format!(
                    "{}key `checks.{}`: a check's name is 1 to 40 letters, digits, `-` or `_`",
                    at(name),
                    crate::error::clip(name, 40)
                ));
            }
            if spec.command.trim().is_empty() {
                return Err(format!(
                    "{}key `checks.{name}`: the command is empty",
                    at(name)
                ));
            }
            if let Some(why) = crate::code::hidden_in(&spec.command) {
                return Err(format!(
                    "{}key `checks.{name}`: refused, {why}: `{}`",
                    at(name),
                    crate::code::ascii_visible(&spec.command)
                ));
            }
            if spec.command.len() > MAX_COMMAND_BYTES {
                return Err(format!(
                    "{}key `checks.{name}`: the command is longer than {MAX_COMMAND_BYTES} bytes; put it in a script and run that",
                    at(name)
                ));
            }
            if !timeout_ok(spec.timeout_secs) {
                return Err(format!(
                    "{}key `checks.{name}.timeout_secs`: give a number of seconds from 1 to {MAX_TIMEOUT_SECS}",
                    at(name)
                ));
            }
        }
        Ok(())
    }

    /// The time limit of the check `spec`: its own, else the file's default, else
    /// `fallback` (the settings' `BMAD_CHECK_TIMEOUT_SECS`, else
    /// [`crate::settings::DEFAULT_CHECK_TIMEOUT`]).
    pub fn timeout_of(&self, spec: &CheckSpec, fallback: Duration) -> Duration {
        spec.timeout_secs
            .or(self.check_timeout_secs)
            .map(Duration::from_secs)
            .unwrap_or(fallback)
    }

    /// The text of the file as it is now (`None` when there is none).
    pub fn read_text(project: &Project) -> Result<Option<String>> {
        match project.read(CONFIG_REL) {
            Ok(text) => Ok(text),
            Err(ReadProblem::Unsafe(e)) => Err(e),
            Err(problem) => Err(invalid(
                project,
                CONFIG_REL,
                format!("cannot be read: {problem}"),
            )),
        }
    }

    /// The project's policy as the file says it now: the defaults when the file is
    /// absent. (What the server acts on is [`super::approval::Policy`].)
    pub fn load(project: &Project) -> Result<Config> {
        match Config::read_text(project)? {
            None => Ok(Config::default()),
            Some(text) => Config::parse(&text).map_err(|p| invalid(project, CONFIG_REL, p)),
        }
    }
}

pub(crate) fn invalid(project: &Project, rel: &str, problem: String) -> Error {
    Error::InvalidConfig {
        path: project.shown(&project.path(rel)),
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_night_shift_s_limits_are_read_checked_and_their_change_waits_for_the_human() {
        let c =
            Config::parse("[run]\nbudget_tokens = 5000\nnotify = \"notify-send bmad\"\n").unwrap();
        assert_eq!(c.run.budget_tokens, Some(5000));
        assert_eq!(c.run.notify.as_deref(), Some("notify-send bmad"));
        let zero = Config::parse("[run]\nstep_timeout_secs = 0\n").unwrap_err();
        assert!(
            zero.contains("line 2: key `run.step_timeout_secs`"),
            "{zero}"
        );
        let typo = Config::parse("[run]\nbudget = 1\n").unwrap_err();
        assert!(typo.contains("unknown field `budget`"), "{typo}");
        let raised = Config::parse("[run]\nbudget_tokens = 9000\n").unwrap();
        let said = super::super::approval::changes(&c, &raised);
        assert!(said.iter().any(|c| c.contains("`[run]`")), "{said:?}");
    }

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

    #[test]
    fn checks_read_as_strings_or_tables_and_wrong_ones_are_named() {
        let c = Config::parse(
            "check_timeout_secs = 30\n[checks]\ntest = \"cargo test\"\nlint = { command = \"cargo clippy\", timeout_secs = 5 }\n",
        )
        .unwrap();
        assert_eq!(c.checks.len(), 2);
        assert_eq!(c.checks["test"].command, "cargo test");
        let fallback = Duration::from_secs(600);
        assert_eq!(
            c.timeout_of(&c.checks["lint"], fallback),
            Duration::from_secs(5)
        );
        assert_eq!(
            c.timeout_of(&c.checks["test"], fallback),
            Duration::from_secs(30)
        );
        let bad = Config::parse("[checks]\nlint = { command = \"x\", timeout = 5 }\n").unwrap_err();
        assert!(
            bad.contains("unknown field `timeout`") && bad.contains("line 2"),
            "{bad}"
        );
        let bad = Config::parse("\n[checks]\n\"a b\" = \"x\"\n").unwrap_err();
        assert!(
            bad.contains("checks.a b") && bad.contains("line 3"),
            "{bad}"
        );
        let bad = Config::parse("[checks]\ntest = \"  \"\n").unwrap_err();
        assert!(
            bad.contains("checks.test") && bad.contains("empty"),
            "{bad}"
        );
        let bad = Config::parse("[checks]\ntest = 5\n").unwrap_err();
        assert!(bad.contains("command string"), "{bad}");
        let bad = Config::parse("[checks.t]\ncommand = \"x\"\ntimeout_secs = 0\n").unwrap_err();
        assert!(bad.contains("checks.t.timeout_secs"), "{bad}");
        assert!(Gates::Human > Gates::Auto);
        assert!(Gates::Auto > Gates::Host);
        assert_eq!(
            Config::parse("gates = \"host\"\n").unwrap().gates,
            Gates::Host
        );
    }
}
