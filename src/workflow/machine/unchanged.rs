//! A document submitted again exactly as the human rejected it (docs/spec.md §3.7): the
//! feedback was not acted on, and the human is told so, in the reply's notices and beside
//! the decision.

use super::super::action::Action;
use super::super::session::Session;
use super::super::stage::Stage;

/// The notice for `sha256`, the digest of `stage`'s document, when it is the digest of the
/// document the human last rejected at that stage; `None` otherwise.
pub(super) fn since_rejection(session: &Session, stage: Stage, sha256: &str) -> Option<String> {
    let rejected = session
        .history
        .iter()
        .rev()
        .find(|h| h.action == Action::Reject && h.stage == stage)?
        .digest
        .as_deref()?;
    (rejected == sha256).then(|| {
        format!(
            "Unchanged: the {}'s document is the same one that was sent back (SHA-256 {}…); the feedback given then was not acted on.",
            stage.role(),
            &sha256[..12.min(sha256.len())]
        )
    })
}
