//! A parent's sprints the BMAD method holds
//! ([`bmad_method::shared_plan::held`](crate::bmad_method::shared_plan::held)), read from the
//! method's sprint status and the stories' specs beside it, as the parent's `status`, `list`
//! and the dashboard show them, and the refusal of a `start` of such a sprint. A spec is read
//! through the project's confined reader: a link, a FIFO or a file over the method's limit is
//! not read, and said.

use super::super::{SessionKey, Store};
use crate::bmad_method::shared_plan::{held, spec_file, status_file};
use crate::bmad_method::Method;
use crate::code::{visible, ErrorCode};
use crate::error::{Error, Result};
use crate::workflow::session::Session;

/// The stories the method holds, and the specs that could not be read, with why.
#[derive(Debug, Default)]
pub struct MethodHolds {
    pub held: Vec<held::Held>,
    pub unread: Vec<String>,
}

impl Store {
    /// The sprints of `s` the method holds; nothing when the plan is not shared with an
    /// installed method, or `s` takes no stories now (a story, a task past development).
    /// `method`: the call's install.
    pub fn method_holds(&self, method: &Method, s: &Session) -> MethodHolds {
        let mut out = MethodHolds::default();
        // Only a parent that takes stories now has sprints to hold: no file is read else.
        if s.method_epic.is_none() || !crate::workflow::story::takes_stories(s) {
            return out;
        }
        let project = method.project();
        let Some(install) = method.install().filter(|i| i.settings.planning_copies) else {
            return out;
        };
        let Some(folder) = install.settings.implementation_artifacts.as_deref() else {
            return out;
        };
        let status_path = format!("{folder}/sprint-status.yaml");
        let text = project
            .read(&status_path)
            .ok()
            .flatten()
            .unwrap_or_default();
        let entries = status_file::entries(&text);
        let names = (project.names_in_project(folder, spec_file::MOST_NAMES)).unwrap_or_default();
        let unread = std::cell::RefCell::new(Vec::new());
        let spec_of = |key: &str| match spec_file::find(project, folder, &names, key) {
            Ok(found) => found.and_then(|(path, text)| held::found(path, &text)),
            Err(why) => {
                unread.borrow_mut().push(why);
                None
            }
        };
        out.held = held::held(s, &entries, &status_path, &spec_of);
        out.unread = unread.into_inner();
        out
    }

    /// The sentence showing the sprints of `s` the method holds, and the specs not read;
    /// `None` when there are none.
    pub fn held_by_method(&self, method: &Method, s: &Session) -> Option<String> {
        let mut holds = self.method_holds(method, s);
        // A `done` the sprint status alone says is shown as done outside the gates.
        holds
            .held
            .retain(|h| !(h.status == "done" && h.file.ends_with("/sprint-status.yaml")));
        let mut out = Vec::new();
        if !holds.held.is_empty() {
            out.push(held::describe(&holds.held, &s.task_name));
        }
        if !holds.unread.is_empty() {
            out.push(format!(
                "Not read, so whether the BMAD method holds the story is not known: {}.",
                holds.unread.join(", ")
            ));
        }
        (!out.is_empty()).then(|| out.join(" "))
    }

    /// Refuses a story of `parent` (a task name) for `sprint` while the method holds that
    /// sprint, as a sprint another story holds is refused; else the parent as read.
    pub fn refuse_held(
        &self,
        cwd: Option<&str>,
        method: &Method,
        parent: &str,
        sprint: u32,
    ) -> Result<Option<Session>> {
        let Ok((project, s)) = self.load(cwd, &SessionKey::TaskName(parent.to_string())) else {
            // The start itself says why the parent cannot be read.
            return Ok(None);
        };
        let s = super::with_stories(&project, &s);
        let holds = self.method_holds(method, &s);
        let Some(h) = holds.held.iter().find(|h| h.sprint == sprint) else {
            return Ok(Some(s));
        };
        Err(Error::argument(
            ErrorCode::SprintTaken,
            format!(
                "sprint {sprint} of task `{}` is held by the BMAD method: its story `{}` is `{}` in {} (its /bmad-build is on it): one story per sprint. Work on another sprint; once it is built, `bmad-mcp accept {} {sprint}` at a terminal accepts it after the project's checks; or set the spec's `status` back to `ready-for-dev` for bmad-mcp to build it",
                s.task_name,
                h.key,
                h.status,
                visible(&h.file),
                s.task_name
            ),
        ))
    }
}

/// The session id of the entry that records a story the method built as accepted: no
/// session of the server's builds it.
pub fn accepted_id(key: &str) -> String {
    format!("bmad-method-{key}")
}

impl Store {
    /// Records `held`, a sprint of `parent` the method built, as the human accepted it: the
    /// sprint's entry names it completed (`by`: who accepted it, through which channel, and
    /// what the checks said), so that the parent counts it as a story of its own and its
    /// final QA comes once every sprint is done. Called under the project lock.
    pub fn record_accepted(
        &self,
        project: &crate::files::Project,
        parent: &Session,
        held: &held::Held,
        by: &str,
    ) -> Result<()> {
        let entry = crate::workflow::session::StoryState::accepted(
            held.sprint,
            (accepted_id(&held.key), held.key.clone()),
            by,
            project.root.display().to_string(),
            format!("built by the BMAD method, accepted by {by}"),
        );
        super::Registry::of(project)?.claim(parent, &entry, self.lock_wait)
    }
}
