//! What the host would run in the person's place when its dialog opens (docs/guide.md, "Who
//! decides"): before a dialog's answer is taken as the human's, the hooks on the dialog of the host
//! behind the connection (Claude Code's, from the settings files it loads:
//! [`crate::hosts::hooks`]), read where that host reads them (its own
//! process's `HOME`, `CLAUDE_CONFIG_DIR`, working directory and `--settings`, else this server's
//! settings) and held against those the human approved
//! ([`crate::policy::hooks`]). An unapproved one makes the answer a hook's,
//! not the human's; an approved one is recorded with the decision.

use std::path::PathBuf;

use crate::hosts::hooks::{found, Hook};
use crate::hosts::DialogHooks;
use crate::process_origin::Proc;
use crate::store::Store;

/// The hooks on a dialog, split by the human's approval.
#[derive(Debug, Clone, Default)]
pub struct OnTheDialog {
    /// The host whose hooks they are.
    pub host: &'static str,
    pub unapproved: Vec<Hook>,
    pub approved: Vec<Hook>,
}

impl OnTheDialog {
    /// Why the dialog's answer would not be the human's, when a hook is unapproved: for
    /// the policy's refusal and the reply.
    pub fn why_not_the_human(&self) -> Option<String> {
        let first = self.unapproved.first()?;
        let more = match self.unapproved.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        Some(format!(
            "{}{more} answers {}'s dialog in the person's place, so its answer is the hook's, not the human's; the human approves a hook with `bmad-mcp config approve` in their terminal",
            crate::policy::hooks::named(first),
            self.host
        ))
    }

    /// The approved hooks, as the decision's provenance keeps them.
    pub fn approved_named(&self) -> Vec<String> {
        self.approved
            .iter()
            .map(|h| format!("{} (approved)", crate::policy::hooks::named(h)))
            .collect()
    }
}

/// The hooks on the dialog of the host behind a connection: the host its first process
/// `first` is, else the one its client's name `client` declares; `None` for a host that
/// runs none (or no host known). `cwd` names the call's project, whose settings and whose
/// approval count.
pub fn on_the_dialog(
    store: &Store,
    cwd: Option<&str>,
    first: Option<&Proc>,
    client: Option<&str>,
) -> Option<OnTheDialog> {
    let by_process = first
        .and_then(|p| p.host)
        .and_then(|name| crate::hosts::HOSTS.iter().find(|h| h.name == name));
    let host = by_process.or_else(|| crate::hosts::by_client(client))?;
    if host.client?.hooks != DialogHooks::ClaudeCodeSettings {
        return None;
    }
    let project = store.project(cwd).ok();
    let root = project.as_ref().map(|p| p.root.clone());
    let own = by_process
        .and(first)
        .and_then(|p| crate::process_origin::settings_of(p.pid));
    let places = match own {
        Some(of) => {
            let projects: Vec<PathBuf> = of.cwd.into_iter().chain(root).collect();
            let mut places =
                crate::hosts::hooks::Places::new(of.home, of.claude_config_dir, projects);
            places.flag = of.settings_flag;
            places
        }
        None => store.claude_places(root.into_iter().collect()),
    };
    let all = found(&places);
    let approved = project
        .as_ref()
        .map(crate::policy::hooks::Approved::read)
        .unwrap_or_default();
    let (approved, unapproved) = all.into_iter().partition(|h| approved.holds(h));
    Some(OnTheDialog {
        host: host.name,
        unapproved,
        approved,
    })
}
