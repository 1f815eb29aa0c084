//! The policy the server acts on: the version of `.bmad/config.toml` the human last
//! approved, kept (its exact text and SHA-256, who approved it, how, when) in
//! `.bmad-task/config-approved.json`. An assistant can edit the config file, so a new
//! version takes effect only when it cannot lower the bar: one that only makes the gates
//! stricter applies at once; one that changes the checks or relaxes the gates waits for
//! the human (`bmad-mcp config approve`), and until then the approved version stands.

use serde::{Deserialize, Serialize};

use super::config::{invalid, Config, CONFIG_REL};
use crate::error::Result;
use crate::files::{Project, ReadProblem};
use crate::workflow::machine::sha256_hex;
use crate::workflow::{DecidedBy, Via};

/// Where the approved version is kept, relative to [`home`].
pub const APPROVED_REL: &str = ".bmad-task/config-approved.json";

/// Where the human's approval is kept: in a git repository, the folder the clone's work
/// trees share (`<git common dir>/bmad-mcp/`), so that a story's worktree runs the checks
/// approved in the main one, while a teammate's commit still approves nothing (it is not
/// in git); outside git, the project itself.
pub fn home(project: &Project) -> Project {
    shared_home(project, false).unwrap_or_else(|| project.clone())
}

/// [`home`] to write in: the clone's shared folder made when it is missing.
pub fn home_to_write(project: &Project) -> Project {
    shared_home(project, true).unwrap_or_else(|| project.clone())
}

/// The clone's shared folder, when the project is in a git repository and the folder is
/// there (or `make`s it): a read never creates it.
fn shared_home(project: &Project, make: bool) -> Option<Project> {
    let dir = crate::git::Repo::at(&project.root)?
        .common_dir()
        .join("bmad-mcp");
    if make {
        std::fs::create_dir_all(&dir).ok()?;
    }
    dir.is_dir().then(|| Project::shared(&dir).ok()).flatten()
}

/// The command with which the human approves the config file as it is.
pub const APPROVE_COMMAND: &str = "bmad-mcp config approve";

/// How a version came to be the approved one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum How {
    /// The human approved it (the terminal, or the client's dialog).
    Approved,
    /// It only made the gates stricter, with the same checks, so it applied at once.
    Strengthened,
}

/// The content of `.bmad-task/config-approved.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approved {
    /// The SHA-256 of `text`.
    pub sha256: String,
    /// `.bmad/config.toml` as it was approved, byte for byte.
    pub text: String,
    pub how: How,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<Via>,
    /// When (RFC 3339).
    pub at: String,
}

impl Approved {
    pub fn new(text: String, how: How, by: Option<(DecidedBy, Via)>, at: String) -> Approved {
        Approved {
            sha256: sha256_hex(&text),
            text,
            how,
            decided_by: by.map(|b| b.0),
            via: by.map(|b| b.1),
            at,
        }
    }

    /// The pretty JSON written to [`APPROVED_REL`].
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }
}

/// A version of the file that differs from the approved one in what needs the human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// The SHA-256 of the file as it is now.
    pub sha256: String,
    /// What changed, one line each: "check `lint` added: `cargo clippy`", …
    pub changes: Vec<String>,
}

/// What the server acts on, and what waits for the human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The approved checks, with the stricter of the two gates policies.
    pub effective: Config,
    /// The SHA-256 of the approved text whose checks are `effective.checks` (`None`:
    /// nothing was ever approved, and the defaults stand).
    pub approved_sha256: Option<String>,
    pub waiting: Option<Waiting>,
    /// A version that only strengthens the gates: to be kept as the approved one (under
    /// the lock, by whoever writes next), so that relaxing it later asks the human.
    pub strengthened: Option<String>,
    /// The file as it is now, when there is one.
    pub file_text: Option<String>,
    /// The gates policy of the approved version (the default when none was approved).
    pub approved_gates: super::config::Gates,
}

impl Policy {
    /// Reads the file and the approved version. A file that does not parse is an error
    /// (never silently ignored); so is an approved record that is not what the server
    /// wrote (its digest does not match its text).
    pub fn read(project: &Project) -> Result<Policy> {
        let file_text = Config::read_text(project)?;
        let file = match &file_text {
            Some(text) => Config::parse(text).map_err(|p| invalid(project, CONFIG_REL, p))?,
            None => Config::default(),
        };
        let approved = read_approved(project)?;
        let base = match &approved {
            Some(a) => Config::parse(&a.text).map_err(|p| {
                invalid(
                    project,
                    APPROVED_REL,
                    format!("the approved version does not parse ({p}); approve the config again with `{APPROVE_COMMAND}`"),
                )
            })?,
            None => Config::default(),
        };
        Ok(Policy::decide(
            file_text,
            file,
            approved.map(|a| a.sha256),
            base,
        ))
    }

    /// The rule, apart from the files: `file` as it is now against `base`, approved.
    pub fn decide(
        file_text: Option<String>,
        file: Config,
        approved_sha256: Option<String>,
        base: Config,
    ) -> Policy {
        let file_sha = file_text.as_deref().map(sha256_hex);
        let mut effective = base.clone();
        effective.gates = base.gates.max(file.gates);
        let changes = changes(&base, &file);
        let same_file = file_sha.is_some() && file_sha == approved_sha256;
        let waiting = (!same_file && !changes.is_empty()).then(|| Waiting {
            sha256: file_sha.clone().unwrap_or_default(),
            changes,
        });
        let strengthened = (waiting.is_none() && file.gates > base.gates)
            .then(|| file_text.clone())
            .flatten();
        Policy {
            effective,
            approved_sha256,
            waiting,
            strengthened,
            file_text,
            approved_gates: base.gates,
        }
    }

    /// The gates policy in force, as an error or a reply cites it: the approved version
    /// (never the file's text while it waits), or the file where it only made the gates
    /// stricter, which applies at once.
    pub fn cite_gates(&self) -> String {
        let gates = self.effective.gates.name();
        let mut cited = match &self.approved_sha256 {
            Some(sha) if self.approved_gates == self.effective.gates => format!(
                "`gates = \"{gates}\"` as approved in {APPROVED_REL}, sha256 {}",
                sha.get(..12).unwrap_or(sha)
            ),
            _ => format!(
                "`gates = \"{gates}\"` in {CONFIG_REL}, stricter than what was approved, so in force at once"
            ),
        };
        if self.waiting.is_some() {
            cited.push_str(&format!(
                "; {CONFIG_REL} as it is now waits for the human's approval and does not apply"
            ));
        }
        cited
    }

    /// For replies: what waits for the human, and how they approve it.
    pub fn waiting_notice(&self) -> Option<String> {
        let w = self.waiting.as_ref()?;
        Some(format!(
            "{CONFIG_REL} changed and waits for the human's approval ({}; sha256 {}); until then the version last approved stands{}. The human approves it in a terminal in the project (`{APPROVE_COMMAND}`), or in the dialog of their next decision where the client shows one.",
            w.changes.join("; "),
            &w.sha256.get(..12).unwrap_or("none"),
            if self.effective.checks.is_empty() {
                ", with no checks".to_string()
            } else {
                format!(", with its checks {}", names(&self.effective))
            }
        ))
    }
}

fn names(c: &Config) -> String {
    c.checks
        .keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What in `new` differs from `old` in a way the human must approve: the checks (added,
/// removed, changed, their time limits) and a relaxed gates policy.
pub fn changes(old: &Config, new: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if new.gates < old.gates {
        out.push(format!(
            "gates relaxed from `{}` to `{}`",
            old.gates.name(),
            new.gates.name()
        ));
    }
    for (name, spec) in &new.checks {
        match old.checks.get(name) {
            None => out.push(format!("check `{name}` added: `{}`", spec.command)),
            Some(was) if was != spec => out.push(format!(
                "check `{name}` changed: `{}` (was `{}`)",
                spec.command, was.command
            )),
            Some(_) => {}
        }
    }
    for name in old.checks.keys().filter(|n| !new.checks.contains_key(*n)) {
        out.push(format!("check `{name}` removed"));
    }
    if new.check_timeout_secs != old.check_timeout_secs {
        out.push("`check_timeout_secs` changed".into());
    }
    if new.pass_env != old.pass_env {
        out.push(format!(
            "`pass_env` (variables the checks are given) changed to [{}]",
            new.pass_env.join(", ")
        ));
    }
    if new.run != old.run {
        out.push("`[run]` (the night shift's budget, notification or time limit) changed".into());
    }
    out
}

/// The approval [`home`] keeps, else (an approval made before it was shared) the one in
/// the project's own `.bmad-task/`.
fn read_approved(project: &Project) -> Result<Option<Approved>> {
    let shared = home(project);
    match read_approved_in(&shared)? {
        None if shared.root != project.root => read_approved_in(project),
        found => Ok(found),
    }
}

fn read_approved_in(project: &Project) -> Result<Option<Approved>> {
    let text = match project.read(APPROVED_REL) {
        Ok(None) => return Ok(None),
        Ok(Some(text)) => text,
        Err(ReadProblem::Unsafe(e)) => return Err(e),
        Err(p) => {
            return Err(invalid(
                project,
                APPROVED_REL,
                format!("cannot be read: {p}"),
            ))
        }
    };
    let approved: Approved = serde_json::from_str(&text).map_err(|e| {
        invalid(
            project,
            APPROVED_REL,
            format!("is not the record the server writes ({e}); approve the config again with `{APPROVE_COMMAND}`"),
        )
    })?;
    if approved.sha256 != sha256_hex(&approved.text) {
        return Err(invalid(
            project,
            APPROVED_REL,
            format!("its `sha256` is not the digest of its `text`: it was edited by hand; approve the config again with `{APPROVE_COMMAND}`"),
        ));
    }
    Ok(Some(approved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::config::Gates;

    fn policy(file: &str, approved: Option<&str>) -> Policy {
        let base = approved
            .map(|a| Config::parse(a).unwrap())
            .unwrap_or_default();
        Policy::decide(
            Some(file.to_string()),
            Config::parse(file).unwrap(),
            approved.map(sha256_hex),
            base,
        )
    }

    const CHECKED: &str = "gates = \"human\"\n[checks]\ntest = \"cargo test\"\n";

    #[test]
    fn a_stricter_policy_applies_at_once_and_a_laxer_one_waits() {
        // Nothing approved yet: `human` alone applies, and is to be kept.
        let p = policy("gates = \"human\"\n", None);
        assert_eq!(p.effective.gates, Gates::Human);
        assert!(p.waiting.is_none());
        assert!(p.strengthened.is_some());
        // Back to auto: the approved `human` stands until the human approves.
        let p = policy("gates = \"auto\"\n", Some("gates = \"human\"\n"));
        assert_eq!(p.effective.gates, Gates::Human);
        let w = p.waiting.as_ref().unwrap();
        assert_eq!(w.changes, ["gates relaxed from `human` to `auto`"]);
        assert!(p.waiting_notice().unwrap().contains(APPROVE_COMMAND));
        // A comment changes nothing that needs the human.
        let p = policy(&format!("# ok\n{CHECKED}"), Some(CHECKED));
        assert!(p.waiting.is_none() && p.strengthened.is_none());
        assert_eq!(p.effective.checks.len(), 1);
    }

    #[test]
    fn checks_run_only_as_approved() {
        // A first config with checks: none run until the human approves it.
        let p = policy(CHECKED, None);
        assert!(p.effective.checks.is_empty());
        assert_eq!(p.effective.gates, Gates::Human, "the stricter gates apply");
        assert!(
            p.strengthened.is_none(),
            "kept only with the checks approved"
        );
        assert_eq!(
            p.waiting.unwrap().changes,
            ["check `test` added: `cargo test`"]
        );
        // A changed command waits, and the approved one runs.
        let changed = CHECKED.replace("cargo test", "true");
        let p = policy(&changed, Some(CHECKED));
        assert_eq!(p.effective.checks["test"].command, "cargo test");
        assert_eq!(
            p.waiting.unwrap().changes,
            ["check `test` changed: `true` (was `cargo test`)"]
        );
        // Removing the checks waits too.
        let p = policy("gates = \"human\"\n", Some(CHECKED));
        assert_eq!(p.effective.checks.len(), 1);
        assert_eq!(p.waiting.unwrap().changes, ["check `test` removed"]);
        // The approved file itself: nothing waits.
        let p = policy(CHECKED, Some(CHECKED));
        assert!(p.waiting.is_none());
    }
}
