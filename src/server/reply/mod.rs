//! The tool's output (docs/spec.md §10): one reply, sent as text for the model ([`text`]) and as a
//! JSON object in `structuredContent` for programs (see [`server::result`](crate::server::result)
//! for who gets which). Everything the model and the human need is in it; documents are referenced
//! by path, never inlined.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::act::{Done, ForHuman};
use crate::error::{Error, ErrorCode};
use crate::prompts::{self, Repeat, Template};
use crate::store::{Damaged, Drift, ListEntry};
use crate::workflow::person::Person;
use crate::workflow::session::{Question, ScoreSource, Sprint};
use crate::workflow::story::{SprintClaim, StoryLink, StoryState};
use crate::workflow::{
    allowed_actions, Action, CheckRun, DecidedBy, Effects, Engine, Facts, Session, Stage, State,
    Track, Via,
};

mod bound;
mod built;
mod checks_text;
mod list;
mod message;
mod status;
mod strict;
mod text;
mod undecided;
mod user_message;

pub use bound::{bound, MAX_REPLY_BYTES};
pub use list::for_list;
pub use message::dialog_next_step;
pub use status::{for_status, for_status_round, stopped, with_drift};
pub use strict::human_channel;
pub use text::{render as render_text, AlreadySaid};
pub use undecided::{for_undecided, Undecided};
pub use user_message::instructs_the_model;

/// One reply of the tool. Who each field is for:
/// **the human** (show it, or what it points at, to them): `user_message`, `notices`,
/// `artifact_path`, `questions`, `gaps`, `sprints`, `score`, `scores`, `review_status`,
/// `checks`, `decisions`, `drift`, `sessions`, `damaged`, `trace`, `lessons`, `recalled`,
/// `dashboard_url`;
/// **the host's model** (act on it, do not show it): `next_step`, `role_prompt`,
/// `role_prompt_source`, `engines`, `context`, `guidance`, `pending_user_actions`,
/// `allowed_actions`, `document_digest`, `interaction_type`, `requires_user_confirmation`,
/// `next_cursor`, `error`;
/// **both** (what the reply is about): `session_id`, `task_name`, `track`, `stage`, `state`,
/// `stage_description`, `story`, `stories`, `claimed`, `score_source`, `gate_passed`,
/// `missing_sections`, `empty_sections`, `iteration`, `session`, `total`, `project`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, Default)]
pub struct Reply {
    pub session_id: Option<String>,
    pub task_name: Option<String>,
    /// The session's track: `full`, `quick`, `fix`, or `story` (one sprint of a parent).
    pub track: Option<Track>,
    pub stage: Option<Stage>,
    pub state: Option<State>,
    pub stage_description: Option<String>,
    /// A story: its parent task, its sprint, and who runs it where.
    pub story: Option<StoryLink>,
    /// A parent whose sprints run as stories: each story's holder and state, as their
    /// shared entries say now.
    pub stories: Option<Vec<StoryState>>,
    /// A parent's sprints claimed on the team's remote by other clones' stories not seen in
    /// `stories` (the clone's last fetch): they run as stories too.
    pub claimed: Option<Vec<SprintClaim>>,
    pub requires_user_confirmation: Option<bool>,
    pub interaction_type: Option<InteractionType>,
    /// For the human, in English: what happened and what they are asked.
    pub user_message: String,
    /// For the host's model, in the second person: what to do now, one instruction.
    /// Where the human decides, it says to show `user_message` and stop, and what the
    /// human's options are.
    pub next_step: Option<String>,
    /// The actions the workflow waits for now.
    pub pending_user_actions: Option<Vec<Action>>,
    /// The prompt for the host's model, rendered for this stage and round.
    pub role_prompt: Option<String>,
    /// Where `role_prompt` comes from: `built-in`, or the project's or the user's file
    /// that overrides it (`project file .bmad/prompts/po.md`).
    pub role_prompt_source: Option<String>,
    /// The lessons from earlier tasks that `role_prompt` carries: ids of the files
    /// `.bmad/lessons/<id>.md` (the human retires one with `bmad-mcp lessons retire <id>`).
    pub lessons: Option<Vec<String>>,
    /// For `recall`: the lessons found, most relevant first, one line each (id, category,
    /// role, task, whose words, the words).
    pub recalled: Option<Vec<String>>,
    /// In a `status` reply: what the project is (stack, approved checks, how many lesson
    /// files); the resource `bmad://project` has the whole context.
    pub project: Option<super::project_context::ProjectSummary>,
    /// Who writes this document: `claude` is you, the host's own model (submit as
    /// `claude_result`); `codex` is a second, independent model, for instance through a
    /// Codex MCP server (`codex_result`). `next_step` says what to do without one.
    pub engines: Option<Vec<Engine>>,
    pub context: Option<Context>,
    pub score: Option<u32>,
    pub scores: Option<BTreeMap<Engine, u32>>,
    pub score_source: Option<ScoreSource>,
    pub gate_passed: Option<bool>,
    /// Sections the stage requires that the server's own check did not find in the
    /// document: a score does not pass the gate while any is missing.
    pub missing_sections: Option<Vec<String>>,
    /// Sections whose heading the check found with nothing under it.
    pub empty_sections: Option<Vec<String>>,
    pub iteration: Option<u32>,
    pub questions: Option<Vec<Question>>,
    pub gaps: Option<Vec<String>>,
    /// What a below-gate document should add.
    pub guidance: Option<Vec<String>>,
    /// For the human: what they should know besides `user_message` (the project's
    /// policy, how to add checks); `next_step` says to tell them.
    pub notices: Option<Vec<String>>,
    /// The document the human should read now (relative to the project).
    pub artifact_path: Option<String>,
    pub sprints: Option<Vec<Sprint>>,
    pub review_status: Option<String>,
    /// The project's checks as the server ran them on the submission (dev, QA): per
    /// check the command, how it ended, the exit code, the time, the digest of its
    /// output, where the kept output is, and its last lines; and the commit they ran on.
    pub checks: Option<CheckRun>,
    /// `status`: the session as stored (documents are references).
    pub session: Option<Session>,
    /// Where the human decides on a stage document: the first 12 hex digits of its
    /// SHA-256 as saved; pass it back as `digest` to bind the decision to this version.
    pub document_digest: Option<String>,
    /// Where the human decides, while a dashboard serves the project (`bmad-mcp
    /// dashboard`): the address of this task's page, to open in their browser (it asks
    /// for the dashboard's secret once per browser).
    pub dashboard_url: Option<String>,
    /// `status`: every decision taken, with who made it, how, and on which document.
    pub decisions: Option<Vec<DecisionEntry>>,
    /// `status`, `resume`, and a reply that starts development or QA: what changed since
    /// a later stage relied on it (earlier documents, the project's files since the
    /// commit the latest document was written against).
    pub drift: Option<Drift>,
    /// `list`: a page of the project's sessions, newest first.
    pub sessions: Option<Vec<ListEntry>>,
    /// `list`: pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
    /// `list`: how many sessions the project has.
    pub total: Option<usize>,
    /// `list`: session files that cannot be read (first page only), with why.
    pub damaged: Option<Vec<Damaged>>,
    /// The requirements traced from the PRD to the closing report (docs/traceability.md):
    /// counts, and at most ten ids per list that needs attention.
    pub trace: Option<crate::workflow::trace::Summary>,
    pub error: Option<ErrorBody>,
    /// With an error about a known session: what is legal now.
    pub allowed_actions: Option<Vec<Action>>,
    /// Not sent: the gates policy in force where it keeps the decision for the human, for
    /// [`human_channel`] to name their channel once it is known whether there is a dialog.
    #[serde(skip)]
    pub human_gates: Option<String>,
    /// Not sent: the document the human decides on does not pass (its report's verdict or
    /// the project's checks failed), so a dialog's `next_step` does not call it ready.
    #[serde(skip)]
    pub failing: bool,
    /// Not sent: what the model has already, which the text leaves out ([`text`]).
    #[serde(skip)]
    pub known: AlreadySaid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InteractionType {
    /// The host generates the stage document with `role_prompt` and submits it.
    AwaitingGeneration,
    /// The human must decide (answer, confirm, approve or reject) before anything else.
    UserDecision,
    /// The host regenerates the document with the answers, feedback or guidance.
    AwaitingRegeneration,
    WorkflowCompleted,
}

/// An earlier stage document, by reference.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DocumentRef {
    pub stage: Stage,
    pub path: String,
    pub size: u64,
}

/// Where the host finds what the next document builds on: the facts themselves (the
/// objective, the answers, the feedback, a line on each earlier document) are written
/// once, in `role_prompt`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Context {
    /// Where this task's documents are saved.
    pub specs_dir: String,
    /// The documents of earlier stages: read them from disk.
    pub documents: Vec<DocumentRef>,
    /// The draft being revised, when there is one.
    pub previous_draft: Option<String>,
    /// For development: the sprint scope the human approved.
    pub scope: Option<String>,
}

/// One decision from the session's history.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DecisionEntry {
    pub stage: Stage,
    pub action: Action,
    pub decided_by: DecidedBy,
    pub via: Via,
    /// The person deciding, as git (or `BMAD_OWNER`) named them.
    pub decider: Option<Person>,
    /// The first 12 hex digits of the SHA-256 of the document decided on.
    pub digest: Option<String>,
    /// The client the decision came through, as it named itself, and how (`stdio`,
    /// `http`), where that was recorded: the host's word is the client's.
    pub client: Option<String>,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

pub(super) fn some_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// The actions the session waits for (never `status`, which is always allowed, nor the
/// `confirm_save` alias).
pub fn pending_actions(track: Track, stage: Stage, state: State) -> Vec<Action> {
    allowed_actions(track, stage, state)
        .into_iter()
        .filter(|a| !matches!(a, Action::Status | Action::ConfirmSave | Action::Promote))
        .collect()
}

/// The reply to a change made, as its record says it: the human's channel when the human
/// decided, the stage it completed, and (before development and QA) the drift.
pub fn for_done(done: &Done) -> Reply {
    let mut facts = done.facts.clone();
    let mut notices = Vec::new();
    let via = done.effects.human_via();
    if let Some(via) = via {
        notices.push(format!(
            "The human decided this through {}.",
            match via {
                Via::Elicitation => "the dialog",
                Via::Cli => "the terminal",
                Via::Tool => "the host",
                Via::Dashboard => "the dashboard",
            }
        ));
    }
    facts.notices.extend(notices.iter().cloned());
    let s = &done.session;
    let mut r = of_change(done, &facts);
    if let Some(human) = &done.human {
        for_human(&mut r, human);
    }
    // The dialog was this call's own: the model, which made the call, knows who answered
    // it; the text leaves that notice out.
    if via == Some(Via::Elicitation) {
        r.known.notices = notices;
    }
    // Before development and QA: what they build on may have moved.
    if done.effects.to.state == State::Generating && done.effects.to.stage.runs_checks() {
        with_drift(
            &mut r,
            crate::store::drift_after(&done.project, s, done.seen.as_ref()),
        );
    }
    r
}

/// The reply after a change, from its record and the session it left (`facts`: the
/// change's, with what the caller adds), with the role prompt the change handed over
/// (none for the terminal and the dashboard, whose reply no host reads). A send-back
/// reads as one whichever action named it (`confirm` with `confirmed: false`).
pub fn of_change(done: &Done, facts: &Facts) -> Reply {
    let did = &done.effects;
    let action = if did.rejected {
        Action::Reject
    } else {
        did.action
    };
    let round = (action, Repeat::after(action));
    for_round(&done.session, facts, round, Some(did), done.prompt.as_ref())
}

/// The reply for a session as it now stands (`status`, `start`, and tests of one
/// state's reply), after `action`. The user message and the state-specific fields come
/// from [`message`], one function per state.
///
/// `prompt`: the role prompt in effect for the current stage, in a state in which the
/// host writes ([`prompts::needed`]); `None` where the reply is not for the host (the
/// terminal, a briefing), and no role prompt is given.
pub fn for_session(s: &Session, facts: &Facts, action: Action, prompt: Option<&Template>) -> Reply {
    for_round(s, facts, (action, Repeat::after(action)), None, prompt)
}

/// [`for_session`] with the role prompt cut to `round`; `did`: the change replied to,
/// when there is one.
fn for_round(
    s: &Session,
    facts: &Facts,
    (action, round): (Action, Repeat),
    did: Option<&Effects>,
    prompt: Option<&Template>,
) -> Reply {
    let stage = s.current_stage;
    let state = s.current_state;
    let interaction = match state {
        State::Generating => InteractionType::AwaitingGeneration,
        State::Refining => InteractionType::AwaitingRegeneration,
        State::Clarifying | State::AwaitingConfirmation | State::AwaitingApproval => {
            InteractionType::UserDecision
        }
        State::Completed => InteractionType::WorkflowCompleted,
    };
    let mut r = Reply {
        session_id: Some(s.session_id.clone()),
        task_name: Some(s.task_name.clone()),
        track: Some(s.track),
        stage: Some(stage),
        state: Some(state),
        story: s.story.clone(),
        stories: some_vec(s.stories.clone()),
        claimed: some_vec(s.claimed.clone()),
        stage_description: Some(format!("{}: {}", stage.role(), stage.description())),
        requires_user_confirmation: Some(interaction == InteractionType::UserDecision),
        interaction_type: Some(interaction),
        pending_user_actions: Some(pending_actions(s.track, stage, state)),
        next_step: Some(message::next_step(s)),
        notices: some_vec(facts.notices.clone()),
        ..Reply::default()
    };

    // The scored result of this action (or the current stage's latest, for status).
    let completed = did.and_then(|d| d.completed);
    let scored = s.record(completed.unwrap_or(stage));
    if matches!(action, Action::Submit | Action::Status) {
        r.score = scored.score;
        // Per engine only when there were two: one would repeat `score`.
        r.scores = (scored.scores.len() > 1).then(|| scored.scores.clone());
        r.score_source = scored.score_source;
        r.gate_passed = scored.gate_passed;
        r.missing_sections = some_vec(scored.missing_sections.clone());
        r.empty_sections = some_vec(scored.empty_sections.clone());
        r.iteration = (scored.iteration > 0).then_some(scored.iteration);
        r.review_status = scored.review_status.clone();
        r.checks = scored.checks.clone();
    }
    r.artifact_path = facts.review_path.clone();
    r.trace = match &facts.trace {
        Some(built) => (**built).clone(),
        None => crate::workflow::trace::summary(s),
    };
    // Said in the reply to the step before, or in the final message (its closing line).
    if facts.trace_unchanged || state == State::Completed {
        r.known.fields.push("trace");
    }

    let mut msg = message::completed_stage(s, completed);
    msg.push_str(&match state {
        State::Generating | State::Refining => {
            message::generate(s, facts, (action, round), prompt, &mut r)
        }
        State::Clarifying => message::clarifying(s, &mut r),
        State::AwaitingConfirmation => message::awaiting_confirmation(s, facts, &mut r),
        State::AwaitingApproval => message::awaiting_approval(s, &mut r),
        State::Completed => built::completed(s),
    });
    r.user_message = msg;
    r
}

pub(super) fn context(s: &Session, stage: Stage) -> Context {
    let rec = s.record(stage);
    Context {
        specs_dir: s.specs_dir(),
        documents: Stage::ALL
            .into_iter()
            .filter(|st| *st < stage)
            .filter_map(|st| {
                s.record(st).final_result_ref.as_ref().map(|d| DocumentRef {
                    stage: st,
                    path: d.file_path.clone(),
                    size: d.size,
                })
            })
            .collect(),
        previous_draft: prompts::is_revision(s, stage)
            .then(|| {
                rec.draft_ref
                    .as_ref()
                    .or(rec.final_result_ref.as_ref())
                    .map(|d| d.file_path.clone())
            })
            .flatten(),
        scope: stage
            .works_in_scope()
            .then(|| s.record(Stage::approval()).scope.clone())
            .flatten(),
    }
}

/// The reply to `start`. `engines_given`: whether the host listed the engines; when it
/// did not and the objective's word turned the second model on, the reply says so.
pub fn for_start(
    s: &Session,
    mut notices: Vec<String>,
    engines_given: bool,
    prompt: Option<&Template>,
) -> Reply {
    if !engines_given && s.dual_engine() {
        notices.push(format!(
            "This session runs claude and codex because the objective names codex: codex is {}, and each reply's `engines` says who writes the document. If none is at hand, start again with `engines: [\"{}\"]`.",
            Engine::Codex.what(),
            Engine::HOST
        ));
    }
    let facts = Facts {
        notices,
        ..Facts::default()
    };
    let mut r = for_session(s, &facts, Action::Start, prompt);
    r.user_message = format!(
        "Started task `{}`; its documents will be saved in {}/. {}",
        s.task_name,
        s.specs_dir(),
        r.user_message
    );
    r
}

/// A tool error: code and message, plus the session's state where one is known.
pub fn for_error(e: &Error, session: Option<&Session>) -> Reply {
    let mut r = Reply {
        user_message: format!("Error ({}): {e}", e.code()),
        error: Some(ErrorBody {
            code: e.code(),
            message: e.to_string(),
        }),
        ..Reply::default()
    };
    if let Some(s) = session {
        r.session_id = Some(s.session_id.clone());
        r.task_name = Some(s.task_name.clone());
        r.stage = Some(s.current_stage);
        r.state = Some(s.current_state);
        r.allowed_actions = Some(allowed_actions(s.track, s.current_stage, s.current_state));
    }
    r.next_step = e.next_step();
    strict::human_required(e, &mut r);
    if let Error::HumanRequired {
        dashboard: Some(url),
        ..
    }
    | Error::ChecksFailed {
        dashboard: Some(url),
        ..
    } = e
    {
        with_dashboard(&mut r, url);
    }
    r
}

/// What a reply asking the human carries of the project: the policy, when it keeps the
/// decision for them, and the dashboard's page, while one serves the project.
pub fn for_human(r: &mut Reply, human: &ForHuman) {
    r.human_gates.clone_from(&human.gates);
    if let Some(url) = &human.dashboard {
        with_dashboard(r, url);
    }
}

/// Links the dashboard's page where the human can read and decide, in words and as
/// `dashboard_url`.
fn with_dashboard(r: &mut Reply, url: &str) {
    if r.session_id.is_none() {
        return;
    }
    r.user_message.push_str(&format!(
        "\nYou can also read it, compare its rounds and decide on your dashboard: {url}"
    ));
    r.dashboard_url = Some(url.to_string());
}

/// Drops the notices `user_message` already says word for word (a decision made
/// elsewhere opens both), so the human is not told a thing twice.
pub fn drop_said_notices(r: &mut Reply) {
    let Some(notices) = r.notices.as_mut() else {
        return;
    };
    notices.retain(|n| !r.user_message.contains(n.trim()));
    if notices.is_empty() {
        r.notices = None;
    }
}

/// Appends to `next_step` that `notices` are to be told to the human, when they say
/// something `user_message` does not, the model does not know already, and the reply's
/// other fields do not show (the outcome of the checks, beside `checks`); at a task's end,
/// moves them into `user_message` instead.
pub fn name_notices(r: &mut Reply) {
    drop_said_notices(r);
    let shown =
        |n: &String| r.checks.is_some() && n.starts_with(crate::workflow::machine::CHECKS_RAN);
    let new = r
        .notices
        .iter()
        .flatten()
        .any(|n| !r.known.notices.contains(n) && !shown(n));
    if !new {
        return;
    }
    // At a task's end there is nothing more to call: what the notices say is for the human,
    // and goes with the message the model shows them.
    if r.state == Some(State::Completed) {
        let (told, kept): (Vec<String>, Vec<String>) = (r.notices.take().into_iter().flatten())
            .partition(|n| !r.known.notices.contains(n) && !shown(n));
        for n in told {
            r.user_message.push('\n');
            r.user_message.push_str(&n);
        }
        r.notices = Some(kept).filter(|k| !k.is_empty());
        return;
    }
    const TELL: &str = "Also tell the human what `notices` says: it is for them.";
    r.next_step = Some(match r.next_step.take() {
        Some(step) => format!("{step} {TELL}"),
        None => TELL.to_string(),
    });
}
