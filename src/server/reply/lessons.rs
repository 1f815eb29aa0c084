//! The lessons a role prompt carried, as the reply names them: their ids in `lessons`, and
//! a notice for each lesson file that could not be read (skipped, never fatal).

use super::Reply;
use crate::prompts::Template;

pub(super) fn carried(template: &Template, r: &mut Reply) {
    if !template.lessons.ids.is_empty() {
        r.lessons = Some(template.lessons.ids.clone());
    }
    for (path, why) in &template.lessons.damaged {
        r.notices
            .get_or_insert_with(Vec::new)
            .push(format!("A lesson file was skipped: {path} {why}"));
    }
}
