//! The method's deferred-work ledger after a task completes: the entries its documents (its
//! implementation report) say it resolved (`Resolves deferred: <id>`, the ids its prompts
//! showed) are checked off in a part appended to the ledger ([`review::closing_entry`]), so
//! that later prompts no longer show them; what was there stays byte for byte. A task or a
//! story closes what its own documents name; nothing without a v6 install.

use crate::bmad_method::{review, Method};
use crate::workflow::{Effects, Session};

use super::method_files::Wrote;

/// The largest ledger read to close entries, in bytes.
const MAX_LEDGER_READ: u64 = 8 * 1024 * 1024;

/// The entries of the ledger the task completed by `did` resolved, checked off; the notice
/// that says so (or why not). `files` are the change's own writes, where the report may be.
/// The ledger as written goes in `wrote`.
pub(super) fn close_resolved(
    method: &Method,
    did: &Effects,
    after: &Session,
    files: &[(String, String)],
    wrote: &mut Wrote,
) -> Option<String> {
    if !did.completes_task() {
        return None;
    }
    let ledger = review::ledger_path(method.install()?)?;
    let project = method.project();
    let shown = crate::code::visible(&ledger);
    // The ledger first: without open entries the task's documents are not read.
    let text = match project.read_at_most(&ledger, MAX_LEDGER_READ) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(problem) => {
            let (named, _) = named_in(method, after, files);
            return (!named.is_empty()).then(|| format!("The BMAD method's ledger {shown} could not be read ({problem}): what the task resolved was not checked off there."));
        }
    };
    let open = review::open(&text);
    if open.is_empty() {
        return None;
    }
    let (named, report) = named_in(method, after, files);
    if named.is_empty() {
        return None;
    }
    let closed: Vec<String> = open
        .into_iter()
        .filter(|i| named.contains(&review::item_id(i)))
        .collect();
    let unknown = named.len() - closed.len();
    let not_open = if unknown > 0 {
        format!(" {unknown} id(s) it names are no open entry of the ledger.")
    } else {
        String::new()
    };
    if closed.is_empty() {
        return Some(format!(
            "Nothing was checked off in the BMAD method's ledger {shown}:{not_open}"
        ));
    }
    let date = after.updated_at.get(..10).unwrap_or(&after.updated_at);
    let entry = review::closing_entry(&text, &after.task_name, date, &closed);
    Some(match project.append(&ledger, entry.as_bytes()) {
        Ok(()) => {
            wrote.files.push((ledger.clone(), Some(text + &entry)));
            format!(
                "Checked off {} entr{} of the BMAD method's ledger {shown} that {report} resolved, under `## Resolved in: {}`.{not_open}",
                closed.len(),
                if closed.len() == 1 { "y" } else { "ies" },
                after.task_name
            )
        }
        Err(e) => format!("The entries {report} resolved could not be checked off in the BMAD method's ledger {shown}: {e}"),
    })
}

/// The ids of the entries the task's documents (as the change left them) say it resolved,
/// each once, and the first document that names one.
fn named_in(method: &Method, after: &Session, files: &[(String, String)]) -> (Vec<String>, String) {
    let mut named: Vec<String> = Vec::new();
    let mut report = String::new();
    for stage in after.track.stages() {
        let Some(path) = after
            .record(*stage)
            .artifact
            .as_ref()
            .map(|a| a.path.clone())
        else {
            continue;
        };
        let document = match files.iter().find(|(p, _)| *p == path) {
            Some((_, text)) => Some(text.clone()),
            None => method.project().read(&path).ok().flatten(),
        };
        let ids = review::resolved_ids(document.as_deref().unwrap_or(""));
        if !ids.is_empty() && report.is_empty() {
            report = path;
        }
        for id in ids {
            if !named.contains(&id) {
                named.push(id);
            }
        }
    }
    (named, report)
}
