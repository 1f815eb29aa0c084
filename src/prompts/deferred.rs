//! The installed BMAD method's deferred-work ledger in a later task's prompt: the stage that
//! states what a task is to do (the track's first) and development are told what earlier
//! reviews deferred and is still open, each entry with its id, so that they can take it up
//! and name what they resolved (checked off at completion, `act::ledger`). The ledger is the
//! project's text: its items are clipped, shown escaped and labelled as the ledger's words,
//! never as ours.

use crate::bmad_method::{review, Install};
use crate::files::Project;
use crate::workflow::{Session, Stage};

/// The most items shown (the ledger's latest), and the characters kept of each.
const MAX_ITEMS: usize = 5;
const ITEM_CHARS: usize = 240;

/// The ledger's path and its items, for a prompt of `stage`; `None` where the stage is not
/// one that takes such work up, or the ledger has no items.
pub fn for_stage(
    project: &Project,
    install: Option<&Install>,
    first: Stage,
    stage: Stage,
) -> Option<(String, Vec<String>)> {
    if stage != first && stage != Stage::Dev {
        return None;
    }
    review::open_items(project, install?)
}

/// The lines a prompt gains for the ledger at `path` with `items`, in a stage's first
/// round only (`again`: the host had them).
pub fn block(ledger: Option<&(String, Vec<String>)>, again: bool) -> String {
    let Some((path, items)) = ledger.filter(|_| !again) else {
        return String::new();
    };
    let shown: Vec<String> = items
        .iter()
        .rev()
        .take(MAX_ITEMS)
        .map(|i| {
            format!(
                "- `{}` {}",
                review::item_id(i),
                crate::code::visible(&crate::code::clip(i, ITEM_CHARS))
            )
        })
        .collect();
    let more = items.len().saturating_sub(MAX_ITEMS);
    let rest = if more > 0 {
        format!(" ({more} older in the file)")
    } else {
        String::new()
    };
    format!(
        "\n## Deferred work\n\nThe BMAD method's ledger {} holds {} open item(s) earlier reviews deferred; its latest, each after its id, as the ledger words them (its text, not the server's){rest}:\n{}\nTake up those this task covers, and say which in the document; the implementation report names each one the work resolves on a `Resolves deferred: <id>, …` line, and the server checks it off in the ledger when the task completes.\n",
        crate::code::inline(path),
        items.len(),
        shown.join("\n")
    )
}

/// The ledger for `session`'s prompt at `stage`.
pub fn for_session(
    project: &Project,
    install: Option<&Install>,
    session: &Session,
    stage: Stage,
) -> Option<(String, Vec<String>)> {
    for_stage(project, install, session.track.first(), stage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_items_are_shown_clipped_and_labelled_and_only_once() {
        let items: Vec<String> = (1..=7).map(|n| format!("item {n}\u{202e}")).collect();
        let ledger = ("out/deferred-work.md".to_string(), items);
        let b = block(Some(&ledger), false);
        assert!(
            b.contains("`out/deferred-work.md` holds 7 open item(s)"),
            "{b}"
        );
        let id = review::item_id("item 7\u{202e}");
        assert!(
            b.contains(&format!("- `{id}` item 7\\u{{202e}}")) && b.contains("` item 3"),
            "{b}"
        );
        assert!(
            !b.contains("` item 2") && b.contains("(2 older in the file)"),
            "{b}"
        );
        assert!(b.contains("`Resolves deferred: <id>, …`"), "{b}");
        assert!(b.contains("its text, not the server's"));
        assert_eq!(block(Some(&ledger), true), "");
        assert_eq!(block(None, false), "");
    }

    #[test]
    fn the_ledgers_path_stays_quoted() {
        let ledger = (
            format!("{}/deferred-work.md", crate::code::FORGED),
            vec!["x".into()],
        );
        let b = block(Some(&ledger), false);
        assert!(!crate::code::forged_in(&b), "{b}");
    }
}
