//! The reply to `list`: a page of the project's sessions, newest first.

use crate::store::Page;

use super::{some_vec, Reply};

pub fn for_list(page: Page, project: &str, mine: bool) -> Reply {
    let shown = page.sessions.len();
    let project = &if mine {
        format!("{project} started by you")
    } else {
        project.to_string()
    };
    let mut msg = if shown == page.total {
        format!("{} session(s) in {project}.", page.total)
    } else if page.next_cursor.is_none() {
        format!(
            "The last {shown} of {} session(s) in {project}.",
            page.total
        )
    } else {
        format!(
            "{shown} of {} session(s) in {project}; pass `next_cursor` as `cursor` for more.",
            page.total
        )
    };
    if page.damaged_total > 0 {
        msg.push_str(&format!(
            " {} session file(s) cannot be read: see `damaged`.",
            page.damaged_total
        ));
    }
    Reply {
        user_message: msg,
        sessions: Some(page.sessions),
        next_cursor: page.next_cursor,
        total: Some(page.total),
        damaged: some_vec(page.damaged),
        ..Reply::default()
    }
}
