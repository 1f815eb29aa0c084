//! Starting a task, the first change of a session: the first role's prompt is resolved before
//! anything is written (an override that cannot be used refuses the call rather than leave a
//! session without its prompt), a task of its own carries the lessons of earlier tasks for that
//! role (a story's first prompt carries them too, with the method's deferred-work ledger, as its
//! later prompts do), and the session is written, as a task or as the story of an approved
//! sprint; a task of its own is offered to begin from the BMAD method's document of its first
//! stage when the project has one ([`bmad_method::begin`](crate::bmad_method::begin)).

use chrono::Utc;

use crate::error::Result;
use crate::prompts::{self, Template};
use crate::store::Store;
use crate::workflow::session::Session;
use crate::workflow::{Engine, Track};

/// A task started: its session, what the reply says beside it, and the first role's
/// prompt.
pub struct Started {
    pub session: Session,
    pub notices: Vec<String>,
    pub prompt: Template,
}

/// What a `start` asks for.
pub struct Start<'a> {
    pub objective: &'a str,
    pub engines: Option<&'a [Engine]>,
    pub track: Track,
    /// The parent task and the sprint, for a story.
    pub story: Option<(&'a str, u32)>,
}

/// Starts the task `start` describes in the project at `cwd`.
pub fn start(store: &Store, cwd: Option<&str>, start: Start) -> Result<Started> {
    let project = store.project(cwd)?;
    // The BMAD install, read once for the whole start.
    let method = crate::bmad_method::Method::of(&project);
    let first = start.track.first();
    let mut prompt = prompts::resolve(&method, store.user_prompts(), first)?;
    let started = match start.story {
        Some((parent, sprint)) => {
            // A sprint the method's own build holds is refused as another story's is.
            let read = store.refuse_held(cwd, &method, parent, sprint)?;
            let started = store.start_story(
                cwd,
                parent,
                sprint,
                start.objective,
                start.engines,
                &super::method_files::at_story_start(&method, read.as_ref(), sprint),
                &Utc::now,
            )?;
            // A story's first prompt carries what its later ones do: the lessons of earlier
            // tasks (not its own) and the method's deferred-work ledger.
            let s = &started.session;
            prompt.lessons = prompts::recall(&project, &s.objective, Some(&s.task_name), first);
            prompt.deferred = prompts::deferred::for_session(&project, method.install(), s, first);
            started
        }
        None => {
            prompt.lessons = prompts::recall(&project, start.objective, None, first);
            prompt.deferred =
                prompts::deferred::for_stage(&project, method.install(), first, first);
            store.start_carrying(
                cwd,
                start.objective,
                start.engines,
                start.track,
                &prompt.lessons.ids,
                &Utc::now,
            )?
        }
    };
    let mut notices = started.notices;
    // A task of its own may begin from what the BMAD method's skills already made.
    if start.story.is_none() {
        notices.extend(crate::bmad_method::begin::offer(&method, first));
    }
    // The method's skills halt without `uv`: said once a task, where its work begins.
    notices.extend(crate::bmad_method::runtime::uv_notice(&method));
    if started.session.story.is_some() {
        prompt.method_spec = prompts::method_spec(&method, &started.session);
        notices.extend(super::method_files::story_started(
            store,
            &method,
            &started.session,
        ));
    }
    Ok(Started {
        session: started.session,
        notices,
        prompt,
    })
}
