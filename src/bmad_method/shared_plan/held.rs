//! The stories of a task's epic the method holds: a spec the server did not write (or no longer
//! as it wrote it) whose status says the method's `bmad-build` is building it (`in-progress`)
//! or reviewing it (`in-review`), or has built it (`done`, waiting to be accepted); or a story
//! the sprint status calls `review` while no story of the server's holds it and the task
//! itself is not in review (the method's `bmad-build` marks a story it built `review`), or
//! `done` (which [`super::by_hand`] shows as done outside the server's gates). Shown
//! on the parent beside the stories of its own, and a `start` of such a sprint is refused as
//! one another story holds.

use crate::workflow::session::Session;

use super::spec_file::{self, Spec};
use super::status_file::Entry;
use super::{epics, story_statuses, Kind};

/// A story the method holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub sprint: u32,
    pub key: String,
    /// What says so: the spec and its status, or the sprint status's.
    pub status: String,
    pub file: String,
}

impl Held {
    /// Whether the method has built it: done, or in review; not while it builds.
    pub fn built(&self) -> bool {
        self.status != "in-progress"
    }
}

/// A story's spec as found: its path, what it says, whether the server wrote it as it is.
pub struct Found {
    pub path: String,
    pub spec: Spec,
    pub ours: bool,
}

/// The stories of `s`'s epic the method holds, by the sprint status's `entries` (in the file
/// `status_path`) and each story's spec (`spec_of`, by key); a sprint a story of the
/// server's holds (seen here or claimed on the team's remote), or completed, is its own.
pub fn held(
    s: &Session,
    entries: &[Entry],
    status_path: &str,
    spec_of: &dyn Fn(&str) -> Option<Found>,
) -> Vec<Held> {
    let Some(epic) = s.method_epic else {
        return Vec::new();
    };
    if story_statuses::status_now(s) == "done" || s.story.is_some() {
        return Vec::new();
    }
    // A story of the server's holds it, here or claimed from another clone.
    let ours = |n: u32| {
        s.stories.iter().any(|st| st.sprint == n) || s.claimed.iter().any(|c| c.sprint == n)
    };
    let review = Kind::Story(epic).rank("review");
    let below_review = Kind::Story(epic).rank(story_statuses::status_now(s)) < review;
    let mut out = Vec::new();
    for story in epics::stories(s, epic)
        .into_iter()
        .filter(|st| !ours(st.number))
    {
        let from_spec = spec_of(&story.key).filter(|f| !f.ours).and_then(|f| {
            let status = f.spec.status?;
            ["in-progress", "in-review", "done"]
                .contains(&status.as_str())
                .then_some((status, f.path))
        });
        let from_status = || {
            entries
                .iter()
                .find(|e| {
                    e.key == story.key
                        && (e.status == "done" || e.status == "review" && below_review)
                })
                .map(|e| (e.status.clone(), status_path.to_string()))
        };
        if let Some((status, file)) = from_spec.or_else(from_status) {
            out.push(Held {
                sprint: story.number,
                key: story.key,
                status,
                file,
            });
        }
    }
    out
}

/// The sentence that shows them, for the parent task `task`.
pub fn describe(found: &[Held], task: &str) -> String {
    let each: Vec<String> = found
        .iter()
        .map(|h| {
            let what = match h.status.as_str() {
                "in-progress" => "building it",
                "done" => "built it; it waits for your acceptance",
                _ => "reviewing it or built it; it waits for your acceptance",
            };
            format!(
                "sprint {} (`{}`) is `{}` in {} (the method's /bmad-build is {what})",
                h.sprint,
                h.key,
                h.status,
                crate::code::visible(&h.file)
            )
        })
        .collect();
    format!(
        "Held by the BMAD method: {}. No story of bmad-mcp starts it while the method holds it: once built, `bmad-mcp accept {} <sprint>` at a terminal runs the project's checks and asks you to accept it as a completed story; or set its spec's `status` back to `ready-for-dev` for a story of bmad-mcp to build it.",
        each.join("; "),
        crate::code::visible(task)
    )
}

/// What `spec_file` makes of the spec `text` at `path`.
pub fn found(path: String, text: &str) -> Option<Found> {
    Some(Found {
        ours: spec_file::is_ours(text),
        spec: spec_file::read(text)?,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::session::State;
    use crate::workflow::stage::Stage;

    fn parent() -> Session {
        let mut s = super::super::approved_plan("todo", "Build", &[(1, "API"), (2, "UI")]);
        s.method_epic = Some(2);
        s.current_stage = Stage::Dev;
        s
    }

    fn spec(status: &str) -> String {
        format!("---\ntitle: 'UI'\nstatus: '{status}'\n---\n\n## Intent\n")
    }

    #[test]
    fn a_story_the_method_builds_or_reviews_is_held() {
        let s = parent();
        let e = |k: &str, st: &str| Entry {
            line: 0,
            key: k.into(),
            status: st.into(),
        };
        let specs = |status: &'static str| {
            move |key: &str| {
                (key == "2-2-ui")
                    .then(|| found(format!("x/spec-{key}.md"), &spec(status)))
                    .flatten()
            }
        };
        let entries = [e("2-1-api", "in-progress"), e("2-2-ui", "in-progress")];
        let got = held(&s, &entries, "x/sprint-status.yaml", &specs("in-progress"));
        assert_eq!(
            got,
            [Held {
                sprint: 2,
                key: "2-2-ui".into(),
                status: "in-progress".into(),
                file: "x/spec-2-2-ui.md".into()
            }]
        );
        assert!(describe(&got, "todo")
            .contains("sprint 2 (`2-2-ui`) is `in-progress` in x/spec-2-2-ui.md"));
        // A draft is planning, not building; the server's own in-progress is no hold.
        assert!(held(&s, &entries, "x", &specs("draft")).is_empty());
        // The method's build marked it review: held, from the sprint status.
        let reviewed = [e("2-2-ui", "review")];
        let got = held(&s, &reviewed, "x/sprint-status.yaml", &|_| None);
        assert_eq!(got[0].file, "x/sprint-status.yaml");
        // A story of the server's holds its sprint; a parent in review wrote `review` itself.
        let mut mine = parent();
        mine.stories = vec![crate::workflow::session::StoryState {
            sprint: 2,
            session_id: "s".into(),
            task_name: "todo-sprint-2".into(),
            owner: "ada".into(),
            branch: None,
            worktree: "/w".into(),
            stage: Stage::Dev,
            state: State::Generating,
            updated_at: String::new(),
            review_status: None,
            gone: false,
        }];
        assert!(held(&mine, &reviewed, "x", &specs("in-progress")).is_empty());
        let mut elsewhere = parent();
        elsewhere.claimed = vec![crate::workflow::session::SprintClaim {
            sprint: 2,
            owner: "bob".into(),
            branch: None,
            worktree: "/b".into(),
            host: None,
            remote: "origin".into(),
            since: String::new(),
            gone: false,
            done: None,
        }];
        assert!(
            held(&elsewhere, &reviewed, "x", &|_| None).is_empty(),
            "another clone's story"
        );
        let mut reviewing = parent();
        reviewing.current_stage = Stage::Review;
        assert!(held(&reviewing, &reviewed, "x", &|_| None).is_empty());
        // A spec the server wrote, as it wrote it, is no hold.
        let names: Vec<String> = ["spec-2-10-x.md", "spec-2-1-api-v2.md"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            spec_file::spec_name(&names, "2-1-api"),
            Some("spec-2-1-api-v2.md")
        );
        assert_eq!(spec_file::spec_name(&names, "2-3-z"), None);
    }
}
