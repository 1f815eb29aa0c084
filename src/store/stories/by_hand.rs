//! A parent's sprints the BMAD method's `sprint-status.yaml` calls `done` while no story of the
//! server's completed them
//! ([`bmad_method::shared_plan::by_hand`](crate::bmad_method::shared_plan::by_hand)), as the
//! parent's `status` and `list` show them. A sprint counts as the server's when a story of the
//! parent completed it: one its shared entries name, or one whose session a merge brought into this
//! clone.

use super::super::{SessionKey, Store};
use crate::bmad_method::shared_plan::{by_hand, status_file};
use crate::bmad_method::Method;
use crate::files::Project;
use crate::workflow::session::{Session, State};
use crate::workflow::Track;

/// The most pages of the session list read for the merged stories.
const MOST_PAGES: usize = 20;

impl Store {
    /// The sentence showing `s`'s sprints done outside the server's gates; `None` when
    /// there are none, the plan is not shared with an installed method, or the file cannot
    /// be read. `method`: the call's install.
    pub fn done_by_hand(&self, method: &Method, s: &Session) -> Option<String> {
        s.method_epic?;
        let project = method.project();
        let install = method.install()?;
        if !install.settings.planning_copies {
            return None;
        }
        let path = format!(
            "{}/sprint-status.yaml",
            install.settings.implementation_artifacts.as_deref()?
        );
        let text = project.read(&path).ok()??;
        let entries = status_file::entries(&text);
        let ours = |n: u32| s.stories.iter().any(|st| st.sprint == n && st.completed());
        if by_hand::done_by_hand(&entries, s, &ours).is_empty() {
            return None;
        }
        let merged = self.completed_stories(project, &s.session_id);
        let found = by_hand::done_by_hand(&entries, s, &|n| ours(n) || merged.contains(&n));
        (!found.is_empty()).then(|| by_hand::describe(&found, &path))
    }

    /// The sprints of parent `parent_id` whose story sessions in `project` completed.
    fn completed_stories(&self, project: &Project, parent_id: &str) -> Vec<u32> {
        let cwd = project.display();
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MOST_PAGES {
            let Ok(page) = self.list_of(Some(&cwd), cursor.as_deref(), false) else {
                break;
            };
            let done = page
                .sessions
                .iter()
                .filter(|e| e.track == Track::Story && e.current_state == State::Completed);
            for e in done {
                let key = SessionKey::Id(e.session_id.clone());
                let Ok((_, story)) = self.load(Some(&cwd), &key) else {
                    continue;
                };
                if let Some(link) = story.story.filter(|l| l.parent_session_id == parent_id) {
                    out.push(link.sprint);
                }
            }
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        out
    }
}
