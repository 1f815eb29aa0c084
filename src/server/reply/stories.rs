//! What a reply says of stories: a parent's stories (who holds each sprint, how far each
//! got) and what the host does while they run (docs/spec.md §18.2).

use crate::workflow::{story, Session, Stage, State};

/// The parent's stories in one sentence: each sprint's holder and state, and what comes
/// next.
pub(super) fn line(s: &Session) -> String {
    let each: Vec<String> = s
        .stories
        .iter()
        .map(|o| format!("sprint {}: {}", o.sprint, o.holder()))
        .collect();
    let next = if story::final_qa_due(s) {
        "every in-scope story completed: the QA Engineer runs the final QA of the whole"
    } else {
        "the final QA of the whole comes when every in-scope story completed"
    };
    format!("Stories: {}; {next}. ", each.join("; "))
}

/// The host's instruction at a parent whose sprints run as stories: wait for them, or
/// run the final QA of the whole once every in-scope story completed.
pub(super) fn next_step(s: &Session) -> Option<String> {
    if s.current_state != State::Generating || !story::takes_stories(s) || s.stories.is_empty() {
        return None;
    }
    Some(if story::final_qa_due(s) {
        format!(
            "Every story completed. {} Submit it with `stage: \"qa\"`.",
            super::message::generate_step(&s.engines_for(Stage::Qa))
        )
    } else {
        "The sprints run as stories, each in its own session (see `stories`): nothing is submitted here until every in-scope story completed; call `status` then.".into()
    })
}
