//! The hooks on the host's dialog the human approved (`bmad-mcp config approve`), kept as checks
//! are: each hook's digest ([`crate::hosts::hooks`]), where it was written,
//! what it runs, who approved it and when, in `.bmad-task/hooks-approved.json` of the approval's
//! home (the clone's shared folder in git, as the config's approval). A hook found on the dialog
//! and not in the record makes the dialog's answer not the human's.

use serde::{Deserialize, Serialize};

use super::approval::home;
use crate::error::Result;
use crate::files::Project;
use crate::hosts::hooks::Hook;
use crate::workflow::Via;

/// Where the approved hooks are kept, relative to the approval's home.
pub const APPROVED_HOOKS_REL: &str = ".bmad-task/hooks-approved.json";

/// One approved hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedHook {
    pub sha256: String,
    pub event: String,
    pub source: String,
    pub runs: String,
    pub via: Via,
    /// When (RFC 3339).
    pub at: String,
}

/// The record of approved hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approved {
    pub hooks: Vec<ApprovedHook>,
}

impl Approved {
    /// The record in `project`'s approval home; empty when there is none, or when it is
    /// not the record the server writes (then nothing is approved: a hook asks again).
    pub fn read(project: &Project) -> Approved {
        home(project)
            .read(APPROVED_HOOKS_REL)
            .ok()
            .flatten()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default()
    }

    /// Whether `hook` (by its digest) is approved.
    pub fn holds(&self, hook: &Hook) -> bool {
        self.hooks.iter().any(|a| a.sha256 == hook.sha256)
    }
}

/// The hooks of `found` the human has not approved in `project`.
pub fn unapproved(project: &Project, found: Vec<Hook>) -> Vec<Hook> {
    let approved = Approved::read(project);
    found.into_iter().filter(|h| !approved.holds(h)).collect()
}

/// Records `hooks` as approved by the human through `via` at `at`, beside those approved
/// before, under the project's lock (the caller holds it).
pub fn approve(project: &Project, hooks: &[Hook], via: Via, at: &str) -> Result<()> {
    let mut record = Approved::read(project);
    for h in hooks {
        if record.holds(h) {
            continue;
        }
        record.hooks.push(ApprovedHook {
            sha256: h.sha256.clone(),
            event: h.event.clone(),
            source: h.source.clone(),
            runs: h.runs.clone(),
            via,
            at: at.to_string(),
        });
    }
    let mut text = serde_json::to_string_pretty(&record).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    super::approval::home_to_write(project).write_atomic(APPROVED_HOOKS_REL, text.as_bytes())
}

/// A hook as a reply, the history or the terminal names it: its event, where it is
/// written, and the first digits of its digest.
pub fn named(h: &Hook) -> String {
    format!(
        "an `{}` hook in {} (sha256 {})",
        h.event,
        crate::code::visible(&crate::code::clip(&h.source, 200)),
        &h.sha256[..12.min(h.sha256.len())]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_approved_hook_is_known_by_its_digest_and_only_it() {
        let (_dir, project) = crate::files::project::tests::project();
        let hook = |sha: &str| Hook {
            event: "Elicitation".into(),
            source: "/h/.claude/settings.json".into(),
            runs: "answer.py".into(),
            sha256: sha.repeat(64),
        };
        assert_eq!(unapproved(&project, vec![hook("a")]).len(), 1);
        approve(&project, &[hook("a")], Via::Cli, "2026-11-29T10:00:00Z").unwrap();
        approve(&project, &[hook("a")], Via::Cli, "2026-11-29T10:00:01Z").unwrap();
        assert_eq!(Approved::read(&project).hooks.len(), 1, "once");
        assert!(unapproved(&project, vec![hook("a")]).is_empty());
        assert_eq!(unapproved(&project, vec![hook("b")]).len(), 1);
        assert!(named(&hook("a")).starts_with(
            "an `Elicitation` hook in /h/.claude/settings.json (sha256 aaaaaaaaaaaa)"
        ));
    }
}
