//! A story the method's sprint status calls `done` while the server did not complete it
//! (the human set it, or the method's own `/bmad-build`): done outside the server's gates.
//! It is shown on the parent for the human to accept or reopen, and never counted as
//! completed: what the server counts stays what its sessions say.

use crate::workflow::session::{Session, State};

use super::epics;
use super::status_file::Entry;

/// A story marked done outside the server's gates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoneByHand {
    pub sprint: u32,
    pub key: String,
}

/// The stories of `s`'s epic that `entries` call `done` and `completed` (whether the
/// server completed a sprint) does not; none once the task itself completed.
pub fn done_by_hand(
    entries: &[Entry],
    s: &Session,
    completed: &dyn Fn(u32) -> bool,
) -> Vec<DoneByHand> {
    let Some(epic) = s.method_epic else {
        return Vec::new();
    };
    if s.current_state == State::Completed {
        return Vec::new();
    }
    epics::stories(s, epic)
        .into_iter()
        .filter(|st| {
            entries
                .iter()
                .any(|e| e.key == st.key && e.status == "done")
        })
        .filter(|st| !completed(st.number))
        .map(|st| DoneByHand {
            sprint: st.number,
            key: st.key,
        })
        .collect()
}

/// The sentence that shows them, naming the file.
pub fn describe(found: &[DoneByHand], path: &str) -> String {
    let path = crate::code::visible(path);
    let each: Vec<String> = found
        .iter()
        .map(|d| format!("sprint {} (`{}`)", d.sprint, d.key))
        .collect();
    format!(
        "Done outside the server's gates: {} marked `done` in {path} (by hand or the method's /bmad-build) without a completed story here; not counted as completed. Accept it with `bmad-mcp accept <task> <sprint>` at a terminal (it runs the project's checks and asks you), or reopen it by setting its status back in {path}.",
        each.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_done_the_server_did_not_complete_is_shown() {
        let mut s = super::super::approved_plan("todo", "Build", &[(1, "API"), (2, "UI")]);
        s.method_epic = Some(2);
        let e = |k: &str, st: &str| Entry {
            line: 0,
            key: k.into(),
            status: st.into(),
        };
        let entries = [
            e("2-1-api", "done"),
            e("2-2-ui", "done"),
            e("1-1-x", "done"),
        ];
        let found = done_by_hand(&entries, &s, &|n| n == 2);
        assert_eq!(
            found,
            [DoneByHand {
                sprint: 1,
                key: "2-1-api".into()
            }]
        );
        assert!(describe(&found, "x/sprint-status.yaml").contains("sprint 1 (`2-1-api`)"));
        s.current_state = State::Completed;
        assert!(done_by_hand(&entries, &s, &|_| false).is_empty());
    }
}
