//! The store's side of the project's checks and of its policy: which checks a submission
//! needs run (as last approved, found without the lock, so that minutes of checks never
//! hold it), which decisions the policy keeps for the human, and approving a new
//! version of `.bmad/config.toml`.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{Files, SessionKey, Store};
use crate::checks::Planned;
use crate::config::approval::{Approved, How, Policy, Waiting, APPROVED_REL, APPROVE_COMMAND};
use crate::config::{Gates, CONFIG_REL};
use crate::error::{Error, Result};
use crate::workflow::machine;
use crate::workflow::session::{timestamp, Session};
use crate::workflow::{rules, Action, Command, DecidedBy, Decision, Via};

use super::Project;

/// What a call must do before its submission is recorded.
pub enum Plan {
    /// Nothing to run; the notices say why (no checks named, or none approved yet).
    Record { notices: Vec<String> },
    /// Run these checks first, then record the submission with what they showed.
    Run(ChecksToRun),
}

pub struct ChecksToRun {
    pub project: Project,
    pub planned: Vec<Planned>,
    /// The approved config whose checks these are.
    pub config_sha256: String,
    /// The session as it was when the checks started: a submission recorded later must
    /// find it unchanged, or the checks may not be about the work it reports.
    pub history_len: usize,
    pub notices: Vec<String>,
}

/// What a submission's checks showed, and the session state they belong to.
#[derive(Default)]
pub struct Observed {
    pub evidence: crate::workflow::Evidence,
    pub history_len: Option<usize>,
    pub notices: Vec<String>,
}

/// How to add checks, for a project that names none.
pub const HOW_TO_ADD_CHECKS: &str = "No checks are configured, so nothing was run to show that the code builds and its tests pass. To have the server run them after `dev` and before QA completes, name them in .bmad/config.toml, e.g.\n[checks]\ntest = \"cargo test --locked\"\nlint = { command = \"cargo clippy -- -D warnings\", timeout_secs = 300 }\nthen approve the file in a terminal: `bmad-mcp config approve`.";

impl Store {
    /// Which checks `command` needs run before it is recorded: a submission at a stage
    /// that runs checks, and only when it would be accepted (the machine is asked first,
    /// changing nothing), so that no check runs for a call that is refused anyway.
    pub fn plan_checks(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        command: &Command,
        default_timeout: Duration,
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> Result<Plan> {
        if command.action() != Action::Submit {
            return Ok(Plan::Record { notices: vec![] });
        }
        let (project, session) = self.load(cwd, key)?;
        if !session.current_stage.runs_checks() {
            return Ok(Plan::Record { notices: vec![] });
        }
        machine::apply(
            &session,
            command.clone(),
            &Decision::by_host(None),
            &Files(&project),
            clock(),
        )?;
        let policy = Policy::read(&project)?;
        let mut notices: Vec<String> = policy.waiting_notice().into_iter().collect();
        let config = &policy.effective;
        let Some(sha) = policy
            .approved_sha256
            .clone()
            .filter(|_| !config.checks.is_empty())
        else {
            if policy.waiting.is_none() {
                notices.push(HOW_TO_ADD_CHECKS.into());
            }
            return Ok(Plan::Record { notices });
        };
        let planned = config
            .checks
            .iter()
            .map(|(name, spec)| Planned {
                name: name.clone(),
                command: spec.command.clone(),
                timeout: config.timeout_of(spec, default_timeout),
            })
            .collect();
        Ok(Plan::Run(ChecksToRun {
            project,
            planned,
            config_sha256: sha,
            history_len: session.history.len(),
            notices,
        }))
    }

    /// Before a change: refuses a decision the policy keeps for the human, and a
    /// failure of the project's checks accepted on the host's word alone. Returns the
    /// policy, read for every decision so that a broken file is never ignored.
    pub(super) fn policy_for(
        &self,
        project: &Project,
        session: &Session,
        command: &Command,
        decision: &Decision,
    ) -> Result<Option<Policy>> {
        let action = command.action();
        if !action.decides() && !session.current_stage.runs_checks() {
            return Ok(None);
        }
        let policy = Policy::read(project)?;
        if !action.decides() || decision.decided_by == DecidedBy::Human {
            return Ok(Some(policy));
        }
        let asked = match command {
            Command::Reject { .. } => Action::Reject,
            _ => action,
        };
        if policy.effective.gates == Gates::Human {
            return Err(Error::HumanRequired {
                action: action.name().into(),
                command: super::terminal_command(asked, &session.task_name),
            });
        }
        let stage = session.current_stage;
        let accepts = matches!(command, Command::Confirm { .. });
        if let Some(failure) = rules::failed_checks(stage, session.current()).filter(|_| accepts) {
            return Err(Error::ChecksFailed {
                failure,
                command: super::terminal_command(Action::Confirm, &session.task_name),
            });
        }
        Ok(Some(policy))
    }

    /// What of `.bmad/config.toml` waits for the human's approval in the project at `cwd`.
    pub fn config_waiting(&self, cwd: Option<&str>) -> Result<Option<Waiting>> {
        Ok(Policy::read(&self.project(cwd)?)?.waiting)
    }

    /// Approves `.bmad/config.toml` as it is now, as the human decided through `via`:
    /// from now on its checks run and its gates policy holds. `seen_sha256` is the
    /// digest of the version the human was shown; another version is not approved.
    pub fn approve_config(
        &self,
        cwd: Option<&str>,
        seen_sha256: &str,
        via: Via,
        clock: &dyn Fn() -> DateTime<Utc>,
    ) -> Result<Approved> {
        let project = self.project(cwd)?;
        let _lock = project.lock(self.lock_wait)?;
        let policy = Policy::read(&project)?;
        let text = policy.file_text.ok_or_else(|| {
            Error::argument(
                crate::error::ErrorCode::InvalidConfig,
                format!(
                    "there is no {CONFIG_REL} to approve in {}",
                    project.display()
                ),
            )
        })?;
        let approved = Approved::new(
            text,
            How::Approved,
            Some((DecidedBy::Human, via)),
            timestamp(clock()),
        );
        if approved.sha256 != seen_sha256 {
            return Err(Error::argument(
                crate::error::ErrorCode::StaleDecision,
                format!("{CONFIG_REL} changed while you decided (sha256 now {}); run `{APPROVE_COMMAND}` again to see it as it is", &approved.sha256[..12]),
            ));
        }
        project.write_atomic(APPROVED_REL, approved.to_json().as_bytes())?;
        Ok(approved)
    }
}

/// The approved record to write beside a change, when the file only strengthened the
/// gates: from then on relaxing them asks the human.
pub(super) fn strengthened_record(policy: Option<&Policy>, now: DateTime<Utc>) -> Option<String> {
    let text = policy?.strengthened.clone()?;
    Some(Approved::new(text, How::Strengthened, None, timestamp(now)).to_json())
}
