//! What the policy admits: which decisions it keeps for the human and which checks a submission
//! needs run (as last approved), both decided under the lock on the session as stored
//! ([`crate::act`] then runs the checks outside it); and approving a new version of
//! `.bmad/config.toml`.

use chrono::{DateTime, Utc};

use super::approval::{Approved, How, Policy, Waiting, APPROVED_REL, APPROVE_COMMAND};
use super::checks::Planned;
use super::config::{Gates, CONFIG_REL};
use crate::code::ErrorCode;
use crate::error::{Error, Result};
use crate::files::Project;
use crate::store::{terminal_command, Store};
use crate::workflow::machine::{self, Documents};
use crate::workflow::session::{timestamp, Session};
use crate::workflow::{rules, Action, Command, DecidedBy, Decision, Via};

/// The checks a submission must run before it is recorded.
pub struct ChecksToRun {
    pub project: Project,
    pub planned: Vec<Planned>,
    /// The approved config whose checks these are.
    pub config_sha256: String,
    /// How many steps the session had when the checks started: a submission recorded
    /// later must find it unchanged, or the checks may not be about the work it reports.
    pub steps: usize,
}

/// The key in `notices_given` of the notice that no checks are configured.
const NO_CHECKS: &str = "no_checks";

/// The checks a submission at a stage that runs them needs run, as last approved; `None`
/// when none are approved. The machine is asked first (changing nothing), so that no
/// check runs for a submission that is refused anyway.
fn checks_to_run(
    project: &Project,
    session: &Session,
    documents: &Documents,
    command: &Command,
    policy: &Policy,
    now: DateTime<Utc>,
    check_timeout: std::time::Duration,
) -> Result<Option<ChecksToRun>> {
    let Some(run) = approved_checks(project, policy, check_timeout) else {
        return Ok(None);
    };
    machine::apply(
        session,
        command.clone(),
        &Decision::by_host(None),
        documents,
        now,
    )?;
    Ok(Some(ChecksToRun {
        steps: session.steps(),
        ..run
    }))
}

/// The project's checks as last approved, planned for a run (`steps` 0: no session's
/// submission waits on them); `None` when none are approved. What a submission runs, and
/// what the human's acceptance of a story the BMAD method built runs.
pub fn approved_checks(
    project: &Project,
    policy: &Policy,
    check_timeout: std::time::Duration,
) -> Option<ChecksToRun> {
    let config = &policy.effective;
    let sha = policy
        .approved_sha256
        .clone()
        .filter(|_| !config.checks.is_empty())?;
    let planned = config
        .checks
        .iter()
        .map(|(name, spec)| Planned {
            name: name.clone(),
            command: spec.command.clone(),
            timeout: config.timeout_of(spec, check_timeout),
            pass_env: config.pass_env.clone(),
        })
        .collect();
    Some(ChecksToRun {
        project: project.clone(),
        planned,
        config_sha256: sha,
        steps: 0,
    })
}

/// What the policy says of a change it lets through, decided under the lock on the
/// session as stored.
#[derive(Default)]
pub struct Admitted {
    /// Files written with the change, before the session (path relative to the project).
    pub files: Vec<(String, String)>,
    /// Said in the reply, not kept in the history.
    pub notices: Vec<String>,
    /// Keys of notices said once per session, kept in the session (`notices_given`).
    pub said_once: Vec<String>,
    /// The checks a submission must run before it is recorded, outside the lock.
    pub checks: Option<ChecksToRun>,
    /// When the policy was read: the gates policy cited where it keeps decisions for the
    /// human (`Some(None)` under `gates = "auto"`), for the reply that asks them.
    pub human_gates: Option<Option<String>>,
}

/// Refuses a decision the policy keeps for the human, and otherwise says what goes with
/// the change: the checks a submission needs run (as last approved), the notices of the
/// policy, and the record that the policy file only strengthened the gates. The policy is
/// read for every decision and at every stage that runs checks, so that a broken file is
/// never ignored. `check_timeout` is a check's time limit when neither it nor the file
/// names one.
pub fn admit(
    project: &Project,
    session: &Session,
    documents: &Documents,
    command: &Command,
    decision: &Decision,
    now: DateTime<Utc>,
    check_timeout: std::time::Duration,
) -> Result<Admitted> {
    let Some(policy) = policy_for(project, session, command, decision)? else {
        return Ok(Admitted::default());
    };
    let mut admitted = Admitted {
        notices: policy.waiting_notice().into_iter().collect(),
        human_gates: Some(keeps_for_human(&policy, decision.cannot_ask.as_deref())),
        ..Admitted::default()
    };
    if command.action() == Action::Submit && session.current_stage.runs_checks() {
        admitted.checks = checks_to_run(
            project,
            session,
            documents,
            command,
            &policy,
            now,
            check_timeout,
        )?;
        // Nothing approved, and nothing waiting for approval: say how to add checks,
        // once per session, with examples in the project's own language.
        let advise = admitted.checks.is_none()
            && policy.waiting.is_none()
            && !session.notices_given.iter().any(|k| k == NO_CHECKS);
        if advise {
            admitted
                .notices
                .push(super::advice::how_to_add_checks(project));
            admitted.said_once.push(NO_CHECKS.to_string());
        }
    }
    // The file only strengthened the gates: from now on relaxing them asks the human.
    if let Some(text) = &policy.strengthened {
        let record = Approved::new(text.clone(), How::Strengthened, None, timestamp(now));
        let home = super::approval::home_to_write(project);
        if home.root == project.root {
            // Written with the change, in order.
            admitted
                .files
                .push((APPROVED_REL.to_string(), record.to_json()));
        } else {
            // The clone's shared record: it only ever tightens what runs, so it may land
            // before the change does.
            home.write_atomic(APPROVED_REL, record.to_json().as_bytes())?;
        }
    }
    Ok(admitted)
}

/// Refuses a decision the policy keeps for the human, and a failure of the project's
/// checks accepted on the host's word alone. Returns the policy, read for every decision
/// so that a broken file is never ignored.
fn policy_for(
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
    if let Some(policy) = keeps_for_human(&policy, decision.cannot_ask.as_deref()) {
        return Err(Error::HumanRequired {
            action: action.name().into(),
            policy,
            commands: human_commands(session),
            dashboard: crate::store::task_link(project, &session.session_id),
        });
    }
    // The risk a confirmation would accept, by the one rule: failing checks among it are
    // not accepted on the host's word.
    let accepts = matches!(command, Command::Confirm { .. });
    let risk = rules::risk_in(session.current_stage, session.current()).filter(|_| accepts);
    if let Some(failure) = risk.and_then(|r| r.checks) {
        return Err(Error::ChecksFailed {
            failure,
            command: terminal_command(Action::Confirm, &session.task_name),
            dashboard: crate::store::task_link(project, &session.session_id),
        });
    }
    Ok(Some(policy))
}

/// The terminal commands with which the human takes the decisions legal in the session's
/// state: "`bmad-mcp confirm t` or `bmad-mcp reject t --feedback …`".
pub fn human_commands(session: &Session) -> String {
    let commands: Vec<String> =
        crate::store::human_decisions(session.current_stage, session.current_state)
            .into_iter()
            .map(|a| format!("`{}`", terminal_command(a, &session.task_name)))
            .collect();
    commands.join(" or ")
}

/// The gates policy in force in `project` when it keeps decisions for the human, as
/// [`keeps_for_human`] cites it (`cannot_ask`: who cannot ask the human, when their word
/// is not taken by default); `None` when it takes the host's word, or when the policy
/// cannot be read (the decision itself then says why).
pub fn human_gates(project: &Project, cannot_ask: Option<&str>) -> Option<String> {
    keeps_for_human(&Policy::read(project).ok()?, cannot_ask)
}

/// Why `policy` keeps a gate decision for the human, as a refusal cites it; `None` when the
/// host's word passes. `cannot_ask` names who cannot ask the human (an agent host with no
/// dialog, or a connection opened from a host's shell tool): under `gates = "auto"` their
/// word is not the human's, and the gate waits for the human's terminal or dashboard. What
/// the model reads here does not say how to relax the policy (docs/hosts.md does, for the
/// human).
pub fn keeps_for_human(policy: &Policy, cannot_ask: Option<&str>) -> Option<String> {
    match policy.effective.gates {
        Gates::Human => Some(policy.cite_gates()),
        Gates::Auto => cannot_ask.map(|who| {
            let mut cited = format!(
                "`gates = \"auto\"` with {who}, so the gate waits for the human's terminal or dashboard"
            );
            if policy.waiting.is_some() {
                cited.push_str(&format!(
                    "; {CONFIG_REL} as it is now waits for the human's approval and does not apply"
                ));
            }
            cited
        }),
        Gates::Host => None,
    }
}

/// What of `.bmad/config.toml` waits for the human's approval in the project at `cwd`.
pub fn config_waiting(store: &Store, cwd: Option<&str>) -> Result<Option<Waiting>> {
    Ok(Policy::read(&store.project(cwd)?)?.waiting)
}

/// Approves `.bmad/config.toml` as it is now, as the human decided through `via`: from now
/// on its checks run and its gates policy holds. `seen_sha256` is the digest of the version
/// the human was shown; another version is not approved.
pub fn approve_config(
    store: &Store,
    cwd: Option<&str>,
    seen_sha256: &str,
    via: Via,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Approved> {
    let project = store.project(cwd)?;
    let _lock = store.lock(&project)?;
    let policy = Policy::read(&project)?;
    let text = policy.file_text.ok_or_else(|| {
        Error::argument(
            ErrorCode::InvalidConfig,
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
            ErrorCode::StaleDecision,
            format!("{CONFIG_REL} changed while you decided (sha256 now {}); run `{APPROVE_COMMAND}` again to see it as it is", &approved.sha256[..12]),
        ));
    }
    super::approval::home_to_write(&project)
        .write_atomic(APPROVED_REL, approved.to_json().as_bytes())?;
    Ok(approved)
}
