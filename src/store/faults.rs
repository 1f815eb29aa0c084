//! Fault records: what the server was doing when it failed in a call through a defect of
//! its own (never the caller's), kept in `.bmad-task/faults/<session id>.log`
//! (`project.log` for a call on no session), one JSON object a line, the last [`KEPT`],
//! in a project that already has `.bmad-task/` (a fault makes no state of its own).
//! They are this clone's diagnostics, not the team's state: `bmad-mcp init` keeps the
//! folder out of git. A task's last fault counts while it is newer than the task's last
//! change ([`since_last_change`]): `status` shows it; and a risk accepted on work made
//! after a fault, in the same round ([`during_round`]), teaches no lesson.

use chrono::DateTime;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::files::Project;
use crate::workflow::session::Session;
use crate::workflow::Stage;

/// The folder of the fault records.
pub const FAULTS_DIR: &str = ".bmad-task/faults";
/// The records a file keeps: the newest.
pub const KEPT: usize = 20;
/// The most characters of a panic's message (or what was being done) a record keeps.
pub const MAX_TEXT_CHARS: usize = 4000;
/// The name of the record of the calls that named no session.
const PROJECT_NAME: &str = "project";

/// One fault of the server's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// When, as the session's times are written.
    pub at: String,
    /// The version of bmad-mcp that failed.
    pub version: String,
    /// The call's action (`submit`, `confirm`, `status`, …).
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    /// What the server was doing, as "could not …" goes on.
    pub doing: String,
    /// The panic's message (or the error's).
    pub message: String,
    /// Where the panic was raised in bmad-mcp's source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// The record file of the session `session_id` (of the project's calls without one, on
/// `None` or an id that is no file name).
pub fn rel_path(session_id: Option<&str>) -> String {
    let name = session_id
        .filter(|id| {
            !id.is_empty()
                && id.len() <= 64
                && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
        .unwrap_or(PROJECT_NAME);
    format!("{FAULTS_DIR}/{name}.log")
}

/// Adds `record` to its file (the oldest past [`KEPT`] dropped; a file that cannot be
/// read is replaced); the file's path in the project. A project without `.bmad-task/` (a
/// folder never used, a root that holds projects) gets no state for a fault: `None`.
pub fn write(project: &Project, record: &FaultRecord) -> Result<Option<String>> {
    if !project.has_state() {
        return Ok(None);
    }
    let rel = rel_path(record.session_id.as_deref());
    let mut record = record.clone();
    record.doing = crate::code::clip(&record.doing, MAX_TEXT_CHARS);
    record.message = crate::code::clip(&record.message, MAX_TEXT_CHARS);
    // Strings and options only: it always serialises.
    let line = serde_json::to_string(&record).unwrap_or_default();
    let before = project.read(&rel).ok().flatten().unwrap_or_default();
    let mut lines: Vec<&str> = before.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.push(&line);
    let kept = &lines[lines.len().saturating_sub(KEPT)..];
    let mut text = kept.join("\n");
    text.push('\n');
    project.write_atomic(&rel, text.as_bytes())?;
    Ok(Some(rel))
}

/// The last fault recorded on the session `session_id`, if any can be read.
pub fn last(project: &Project, session_id: &str) -> Option<FaultRecord> {
    let text = project.read(&rel_path(Some(session_id))).ok()??;
    text.lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
}

/// The session's last fault while it is newer than the session's last change: the server
/// failed on the task, and nothing has moved it since.
pub fn since_last_change(project: &Project, session: &Session) -> Option<FaultRecord> {
    let fault = last(project, &session.session_id)?;
    let at = DateTime::parse_from_rfc3339(&fault.at).ok()?;
    let changed = DateTime::parse_from_rfc3339(&session.updated_at).ok()?;
    (at > changed).then_some(fault)
}

/// The session's last fault while it is newer than the start of the round of `stage`
/// now decided on (the step before that stage's latest submission): the server failed
/// while the work decided on was made, even if a submission came after the fault.
pub fn during_round(project: &Project, session: &Session, stage: Stage) -> Option<FaultRecord> {
    let fault = last(project, &session.session_id)?;
    let at = DateTime::parse_from_rfc3339(&fault.at).ok()?;
    let began = DateTime::parse_from_rfc3339(session.round_began_at(stage)).ok()?;
    (at > began).then_some(fault)
}

/// How a reply or the terminal says a fault that still stands: when, what failed, where
/// its record is.
pub fn describe(project: &Project, fault: &FaultRecord) -> String {
    format!(
        "The server failed on this task at {} and nothing has changed it since: it could not {} (`{}`), a defect in bmad-mcp {}, not in what was sent. Its record: {}. Retrying that call would fail the same way; report the fault to bmad-mcp with that record.",
        fault.at,
        crate::code::clip(&fault.doing, 200),
        fault.action,
        fault.version,
        project.path(&rel_path(fault.session_id.as_deref())).display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::project::tests::project;
    use chrono::{Duration, Utc};

    fn record(at: &str, message: &str) -> FaultRecord {
        FaultRecord {
            at: at.to_string(),
            version: "0.1.0".into(),
            action: "submit".into(),
            session_id: Some("00000000-0000-4000-8000-000000000001".into()),
            task_name: Some("fix-crash".into()),
            doing: "judge the `Failing Test` section".into(),
            message: message.into(),
            location: Some("src/workflow/sections.rs:294:9".into()),
        }
    }

    #[test]
    fn records_are_kept_newest_last_and_bounded() {
        let (dir, p) = project();
        let sid = "00000000-0000-4000-8000-000000000001";
        let first = record("2026-01-01T00:00:00.000Z", "boom");
        assert_eq!(write(&p, &first).unwrap(), None, "a project never used");
        assert!(!dir.path().join(".bmad-task").exists());
        std::fs::create_dir(dir.path().join(".bmad-task")).unwrap();
        assert_eq!(last(&p, sid), None);
        for n in 0..KEPT + 3 {
            let rel = write(
                &p,
                &record(&format!("2026-01-01T00:00:{n:02}.000Z"), "boom"),
            )
            .unwrap();
            assert_eq!(rel, Some(format!(".bmad-task/faults/{sid}.log")));
        }
        let text = std::fs::read_to_string(p.path(&rel_path(Some(sid)))).unwrap();
        assert_eq!(text.lines().count(), KEPT);
        assert_eq!(last(&p, sid).unwrap().at, "2026-01-01T00:00:22.000Z");
        // A long message is kept bounded.
        write(&p, &record("2026-01-01T00:01:00.000Z", &"x".repeat(9000))).unwrap();
        assert_eq!(
            last(&p, sid).unwrap().message.chars().count(),
            MAX_TEXT_CHARS + 1
        );
    }

    #[test]
    fn a_name_that_is_no_session_id_goes_to_the_projects_record() {
        assert_eq!(rel_path(None), ".bmad-task/faults/project.log");
        assert_eq!(rel_path(Some("../x")), ".bmad-task/faults/project.log");
        assert_eq!(rel_path(Some("")), ".bmad-task/faults/project.log");
    }

    #[test]
    fn a_fault_counts_until_the_session_changes() {
        let (dir, p) = project();
        std::fs::create_dir(dir.path().join(".bmad-task")).unwrap();
        let mut s = Session::test()
            .id("00000000-0000-4000-8000-000000000001")
            .task("fix-crash")
            .objective("Fix the crash")
            .at(Utc::now() - Duration::seconds(60))
            .build();
        let now = crate::workflow::session::timestamp(Utc::now());
        write(&p, &record(&now, "boom")).unwrap();
        let standing = since_last_change(&p, &s).unwrap();
        let said = describe(&p, &standing);
        assert!(
            said.contains("could not judge the `Failing Test` section"),
            "{said}"
        );
        assert!(said.contains(".bmad-task/faults/00000000-"), "{said}");
        s.updated_at = crate::workflow::session::timestamp(Utc::now() + Duration::seconds(1));
        assert_eq!(since_last_change(&p, &s), None, "the session moved on");
    }
}
