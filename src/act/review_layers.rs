//! What a change does for the review in layers beyond the session, with the project's
//! install read as it is now: the layers' sections a review submission must give; the
//! layers' files, written when the review begins where a v6 install is (derived from the
//! install's layers or the binary's text, rewritten each time, never over a file the
//! server did not write); and the findings a
//! human deferred by accepting a failing review's risk, appended to the BMAD method's
//! deferred-work ledger. The files are written after the change and apart from it: one
//! that cannot be written is said in a notice, and the change stands.

use super::method_files::Wrote;
use crate::bmad_method::{review, Method};
use crate::prompts::review_layers::{self, LAYER_MARK};
use crate::workflow::sections::{items_of, items_under, FINDINGS};
use crate::workflow::{Effects, Session, Stage};

/// The layers' sections a submission on `before` must give: those of its review's layers
/// when it is a review that must report each, else none.
pub(super) fn required(method: &Method, before: &Session) -> Vec<String> {
    if before.current_stage != Stage::Review {
        return Vec::new();
    }
    review_layers::required(method, before)
}

/// The built-in layers' files, written where the review of `after` is to be written now;
/// what could not be written, or was left as someone's own, in notices; each file
/// written, with its text, in `wrote`.
pub(super) fn write_layer_files(
    method: &Method,
    after: &Session,
    wrote: &mut Wrote,
) -> Vec<String> {
    if !reviewing(after) || method.install().is_none() {
        return Vec::new();
    }
    let project = method.project();
    let mut notices = Vec::new();
    // What reading the install's layers said goes with the review's prompt.
    for layer in review_layers::for_review(method, after).0 {
        let (Some(text), Some(file)) = (&layer.text, &layer.file) else {
            continue;
        };
        let content = review_layers::file_text(text);
        let ours = match project.read(file) {
            Ok(None) => true,
            Ok(Some(there)) if there == content => continue,
            Ok(Some(there)) => there.starts_with(LAYER_MARK),
            Err(_) => false,
        };
        let failed = if ours {
            match project.write_atomic(file, content.as_bytes()) {
                Ok(()) => {
                    wrote.files.push((file.clone(), Some(content)));
                    None
                }
                Err(e) => Some(format!("could not be written ({e})")),
            }
        } else {
            Some("is not a file the server wrote, so it was left as it is".into())
        };
        if let Some(why) = failed {
            notices.push(format!(
                "The review layer {}'s instructions, {}, {why}; the layer's fresh context reads that file.",
                layer.section, file
            ));
        }
    }
    notices
}

/// Whether the review of `after` is to be written now.
fn reviewing(after: &Session) -> bool {
    crate::workflow::story::prompt_stage(after) == Stage::Review
        && after.current_state.host_writes()
}

/// The round's diff, written where the review's layers read it (`layers::diff_path`) when
/// the review of `after` is to be written now, with or without an install; `pending`: the
/// files the server writes with the change, never in it. Without git the file says so.
/// What could not be written, in a notice; the file written, in `wrote`.
pub(super) fn write_diff(
    project: &crate::files::Project,
    git: &crate::store::GitNow,
    after: &Session,
    pending: &[String],
    wrote: &mut Wrote,
) -> Option<String> {
    if !reviewing(after) {
        return None;
    }
    let path = review_layers::diff_path(after);
    let text = match git.review_diff(project, after, pending) {
        Some(diff) => diff.text,
        None => "# No diff: the project is not in a git repository, or git could not say. Review the files the development report names.\n".into(),
    };
    match project.write_atomic(&path, text.as_bytes()) {
        Ok(()) => {
            wrote.files.push((path, Some(text)));
            None
        }
        Err(e) => Some(format!(
            "The review's diff, {path}, could not be written ({e}); the layers read `git diff` instead."
        )),
    }
}

/// The review's findings deferred to the method's ledger when the change `did` accepted a
/// failing review's risk (the notice that says so, or why they were not); `files` are the
/// change's own writes, where the review document may be. Nothing without a v6 install.
/// The ledger appended to goes in `wrote`, with its whole text when it was read whole.
pub(super) fn defer_findings(
    method: &Method,
    did: &Effects,
    after: &Session,
    files: &[(String, String)],
    wrote: &mut Wrote,
) -> Option<String> {
    did.accepted_risk_at(Stage::Review)?;
    let project = method.project();
    let install = method.install()?;
    let source = after.record(Stage::Review).artifact.as_ref()?.path.clone();
    let document = match files.iter().find(|(p, _)| *p == source) {
        Some((_, text)) => text.clone(),
        None => project.read(&source).ok()??,
    };
    let Some(ledger) = review::ledger_path(install) else {
        return Some(format!("The review's deferred findings were not written to the BMAD method's deferred-work ledger: its `implementation_artifacts` ({}) is no folder of the project the server writes in.", crate::bmad_method::bmm_config::MODULE_CONFIG));
    };
    let layers: Vec<String> = review_layers::for_review(method, after)
        .0
        .into_iter()
        .map(|l| l.section)
        .collect();
    let mut findings = items_of(FINDINGS, &document);
    for item in items_under(&layers, &document) {
        if !findings.contains(&item) {
            findings.push(item);
        }
    }
    if findings.is_empty() {
        findings.push(format!("the findings of {source}"));
    }
    // Where the new part begins depends on how the ledger ends; one that cannot be read
    // here (too large, not UTF-8) is appended to all the same, a paragraph apart.
    let whole = match project.read_at_most(&ledger, MAX_LEDGER_READ) {
        Ok(None) => Some(String::new()),
        Ok(Some(text)) => Some(text),
        Err(_) => None,
    };
    let existing = whole.as_deref().map_or_else(|| "x".into(), ending);
    let date = after.updated_at.get(..10).unwrap_or(&after.updated_at);
    let why = "the human accepted the failing review's risk in bmad-mcp";
    let entry = review::deferred_entry(&existing, &after.task_name, date, &findings, why);
    Some(match project.append(&ledger, entry.as_bytes()) {
        Ok(()) => {
            // The ledger as the append left it, when what was there was read whole.
            wrote.files.push((ledger.clone(), whole.map(|w| w + &entry)));
            format!(
                "Deferred {} finding(s) of {source} to the BMAD method's ledger {ledger}, where a later task's PO and development are shown them.",
                findings.len()
            )
        }
        Err(e) => format!("The review's deferred findings could not be appended to the BMAD method's ledger {ledger}: {e}"),
    })
}

/// The largest ledger read to see how it ends, in bytes.
const MAX_LEDGER_READ: u64 = 8 * 1024 * 1024;

/// How `text` ends, as [`review::deferred_entry`] reads it: its last two characters
/// behind a stand-in for the rest ("" for an empty file).
fn ending(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let last: String = text
        .chars()
        .rev()
        .take(2)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("x{last}")
}
