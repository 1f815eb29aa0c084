//! A fault of the server's own in a call (a panic, or an error it cannot explain to the caller)
//! answered as such: `internal`, saying what failed and that the defect is bmad-mcp's, not in what
//! the caller sent; recorded in the project's fault record
//! ([`store::faults`](crate::store::faults)), whose path the reply names beside the server's stderr
//! log; and a `next_step` that stops the model from retrying a call that would fail the same way.

use chrono::Utc;

use super::args::{Call, LessonCall};
use super::{reply, Reply};
use crate::code::{clip, visible, QUOTE_CHARS};
use crate::error::Error;
use crate::fault::Fault;
use crate::store::faults::{self, FaultRecord};
use crate::store::{SessionKey, Store};

/// What the model is told after a fault: a retry fails the same way, and a workaround
/// (a reworded submission, a risk the human accepts) would blame what was not at fault.
pub const NEXT_STEP: &str = "Stop, and show the human `user_message`: the server itself failed, through a defect in bmad-mcp, not in what you sent. Do not retry this call, and do not work around it (by rewording what you sent, or by asking the human to accept a risk): it would fail the same way, or blame work that is not at fault. Suggest that the human reports the fault to bmad-mcp with the record `user_message` names. Go on only as the human says; `status` shows where the task stands.";

/// What `status` tells the model while a fault of the server's own is the last thing that
/// happened to the task: the call that failed (a submission, a decision) would fail the
/// same way, so it is not made again.
pub const STANDING: &str = "The server failed on this task's last call, through a defect in bmad-mcp (`notices` says what failed and where its record is): do not make that call again, nor work around it (by rewording what you sent, or by asking the human to accept a risk); it would fail the same way. Suggest that the human reports the fault to bmad-mcp with its record, and go on only as they say.";

/// What the reply says of a fault's record, the session's id and its task name, when known.
type Recorded = (String, Option<String>, Option<String>);

/// What a call was, for its fault: the project and session it named, its action.
#[derive(Debug, Clone, Default)]
pub(super) struct Scene {
    pub cwd: Option<String>,
    pub key: Option<SessionKey>,
    /// The action's name (`submit`, `status`, …), or what the server was asked.
    pub action: String,
}

impl Scene {
    pub fn of(call: &Call) -> Scene {
        let (cwd, key, action) = match call {
            Call::Start { cwd, .. } => (cwd, None, "start"),
            Call::List { cwd, .. } => (cwd, None, "list"),
            Call::Status { cwd, key } => (cwd, Some(key), "status"),
            Call::Act {
                cwd, key, command, ..
            } => (cwd, Some(key), command.action().name()),
            Call::Lessons(LessonCall::Remember { cwd, key, .. }) => (cwd, key.as_ref(), "remember"),
            Call::Lessons(LessonCall::Recall { cwd, key, .. }) => (cwd, key.as_ref(), "recall"),
        };
        Scene {
            cwd: cwd.clone(),
            key: key.cloned(),
            action: action.to_string(),
        }
    }

    /// What the server was doing when no guard said more.
    pub fn handling(&self) -> String {
        format!("handle the `{}` call", self.action)
    }

    /// What the caller sent, which the fault is not in.
    fn yours(&self) -> &'static str {
        match self.action.as_str() {
            "submit" => "your submission",
            "start" => "your objective",
            _ => "your call",
        }
    }
}

/// The reply to `fault` in the call `scene` describes, after recording it (a record that
/// cannot be written is said, and the reply is given all the same).
pub(super) fn answer(store: &Store, scene: &Scene, fault: Fault) -> Reply {
    let doing = fault.doing.clone().unwrap_or_else(|| scene.handling());
    tracing::error!(
        action = %scene.action,
        doing = %doing,
        cause = %fault.cause(),
        "a defect in bmad-mcp failed this call"
    );
    let recorded = crate::fault::catch(|| record(store, scene, &doing, &fault));
    let (record, session_id, task) = match recorded {
        Ok(done) => done,
        Err(again) => (
            format!(
                "The fault could not be recorded in the project (recording it failed too: {}); it is in the server's stderr log.",
                clip(&again.message, QUOTE_CHARS)
            ),
            None,
            None,
        ),
    };
    let mut r = said(scene, &doing, &fault, record, session_id);
    if task.is_some() {
        r.task_name = task;
    }
    r
}

/// The reply to a fault that was not recorded: `why` says so.
pub(super) fn unrecorded(scene: &Scene, fault: &Fault, why: &str) -> Reply {
    let doing = fault.doing.clone().unwrap_or_else(|| scene.handling());
    let record =
        format!("The fault could not be recorded ({why}); it is in the server's stderr log.");
    said(scene, &doing, fault, record, None)
}

fn said(
    scene: &Scene,
    doing: &str,
    fault: &Fault,
    record: String,
    session_id: Option<String>,
) -> Reply {
    let e = Error::Internal {
        failed: visible(&clip(doing, QUOTE_CHARS)),
        yours: scene.yours(),
        cause: visible(&clip(&fault.cause(), QUOTE_CHARS)),
        record,
    };
    let mut r = reply::for_error(&e, None);
    r.session_id = session_id.or_else(|| match &scene.key {
        Some(SessionKey::Id(id) | SessionKey::Both { id, .. }) => Some(id.clone()),
        _ => None,
    });
    if let Some(SessionKey::TaskName(t) | SessionKey::Both { task_name: t, .. }) = &scene.key {
        r.task_name = Some(t.clone());
    }
    r.next_step = Some(NEXT_STEP.to_string());
    r
}

/// Writes the fault's record in the project the call named, under its session when it
/// named one that can be found: what the reply says of it, the session's id and its task.
fn record(store: &Store, scene: &Scene, doing: &str, fault: &Fault) -> Recorded {
    let cwd = scene.cwd.as_deref();
    let found = scene.key.as_ref().and_then(|k| {
        let at = store.locate(cwd, k).ok()?;
        // The task's name too, for whoever reads the record.
        let task = store.read(&at, k).ok().map(|s| s.task_name);
        Some((at, task))
    });
    let (project, session_id, task) = match found {
        Some((at, task)) => (at.project, Some(at.id), task),
        None => match store.project(cwd) {
            Ok(p) => (p, None, None),
            Err(e) => {
                return (
                    format!("The fault could not be recorded in the project ({e}); it is in the server's stderr log."),
                    None,
                    None,
                )
            }
        },
    };
    let rec = FaultRecord {
        at: crate::workflow::session::timestamp(Utc::now()),
        version: env!("CARGO_PKG_VERSION").to_string(),
        action: scene.action.clone(),
        session_id: session_id.clone(),
        task_name: task.clone(),
        doing: doing.to_string(),
        message: fault.message.clone(),
        location: fault.location.clone(),
    };
    let rel = faults::rel_path(session_id.as_deref());
    let path = project.path(&rel).display().to_string();
    let said = match faults::write(&project, &rec) {
        Ok(Some(_)) => format!("The fault is recorded in {path} and in the server's stderr log."),
        Ok(None) => "The fault is in the server's stderr log (no record in the project: it has no .bmad-task/ folder, which a fault does not create).".to_string(),
        Err(e) => format!(
            "The fault could not be written to {path} ({e}); it is in the server's stderr log."
        ),
    };
    (said, session_id, task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_says_what_failed_whose_it_is_and_not_to_retry() {
        let scene = Scene {
            cwd: None,
            key: Some(SessionKey::Id("s-1".into())),
            action: "submit".into(),
        };
        let fault = Fault {
            doing: Some("judge the `Failing Test` section".into()),
            message: "index out of bounds".into(),
            location: Some("src/workflow/sections.rs:294:9".into()),
            panicked: true,
        };
        let r = unrecorded(&scene, &fault, "no project");
        let e = r.error.as_ref().unwrap();
        assert_eq!(e.code, crate::code::ErrorCode::Internal);
        assert!(
            e.message.starts_with("the server could not judge the `Failing Test` section: a defect in bmad-mcp, not in your submission (it panicked at src/workflow/sections.rs:294:9: index out of bounds)."),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("The same call would fail the same way"),
            "{}",
            e.message
        );
        assert!(r.user_message.contains("the server's stderr log"));
        assert_eq!(r.session_id.as_deref(), Some("s-1"));
        assert!(r
            .next_step
            .as_deref()
            .unwrap()
            .contains("Do not retry this call"));
        // Without a guard, the call itself is what failed.
        let bare = Fault {
            doing: None,
            ..fault
        };
        let status = Scene {
            action: "status".into(),
            ..scene
        };
        let r = unrecorded(&status, &bare, "no project");
        assert!(
            r.user_message.contains(
                "could not handle the `status` call: a defect in bmad-mcp, not in your call"
            ),
            "{}",
            r.user_message
        );
        assert!(r
            .user_message
            .contains("The fault could not be recorded (no project)"));
    }
}
