//! Who a reply's fields are for: the notices are the human's, so `next_step` (the host's
//! one instruction) names them.

use super::Reply;

/// Appends to `next_step` that `notices` are to be told to the human, when there are any.
pub fn name_notices(r: &mut Reply) {
    if r.notices.as_ref().is_none_or(|n| n.is_empty()) {
        return;
    }
    const TELL: &str = "Also tell the human what `notices` says: it is for them.";
    r.next_step = Some(match r.next_step.take() {
        Some(step) => format!("{step} {TELL}"),
        None => TELL.to_string(),
    });
}
