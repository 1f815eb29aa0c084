//! MCP prompts, which Claude Code offers as slash commands (`/bmad:start …`):
//!
//! * `start` (`objective`): begin a workflow;
//! * `status` (`task`, optional): where a task stands, or the project's tasks;
//! * `resume` (`task`, optional; the most recently updated session by default): a briefing of
//!   at most [`MAX_BRIEFING`] bytes from which an assistant whose context was compacted
//!   carries on: stage, state, the decisions and who took them, the documents by path, the
//!   next action.
//!
//! And the project's BMAD method files, each installed agent as `bmad-agent-<name>` and
//! each workflow as `bmad-workflow-<name>`.
//!
//! Each is one user message. They read the server's default project and change nothing.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use rmcp::ErrorData;

use super::reply;
use super::TOOL_NAME;
use crate::error::{clip, Error};
use crate::prompts::bmad::{self, Installed};
use crate::store::{SessionKey, Store};
use crate::workflow::{DecidedBy, Session, Stage, Via};

/// The most a `resume` briefing holds, in bytes.
pub const MAX_BRIEFING: usize = 4096;
/// Decisions a briefing names (the newest).
const MAX_DECISIONS: usize = 8;
/// Open questions a briefing names.
const MAX_QUESTIONS: usize = 5;

/// The name the prompt `name` is offered under to a client whose own commands include it
/// (`taken`): `resume-task` for `resume`, which Gemini CLI would otherwise rename on every
/// start. `get` takes both names.
pub fn offered_as(name: &str, taken: &[&str]) -> String {
    if taken.contains(&name) {
        format!("{name}{RENAMED}")
    } else {
        name.to_string()
    }
}

/// What [`offered_as`] appends to a name a client's own command holds.
const RENAMED: &str = "-task";

/// The server's own prompts, each named as [`offered_as`] names it for a client whose own
/// commands are `taken`.
pub fn list(taken: &[&str]) -> Vec<Prompt> {
    let mut prompts = own();
    for p in prompts.iter_mut() {
        p.name = offered_as(&p.name, taken);
    }
    prompts
}

fn own() -> Vec<Prompt> {
    let task = || {
        PromptArgument::new("task")
            .with_description("The task name or session id (optional)")
            .with_required(false)
    };
    vec![
        Prompt::new(
            "start",
            Some("Start a BMAD workflow (Product Owner → Architect → Scrum Master → Developer → Reviewer → QA) for what you want built."),
            Some(vec![PromptArgument::new("objective")
                .with_description("What to build, in your words")
                .with_required(false)]),
        )
        .with_title("Start a BMAD workflow"),
        Prompt::new(
            "status",
            Some("Where a BMAD task stands, or the project's tasks when none is named."),
            Some(vec![task()]),
        )
        .with_title("BMAD status"),
        Prompt::new(
            "resume",
            Some("A short briefing to carry on a BMAD task after the conversation lost it (default: the task updated last)."),
            Some(vec![task()]),
        )
        .with_title("Resume a BMAD task"),
    ]
}

/// An argument's value; Claude Code sends `""` for one the user left out.
fn argument(args: Option<&rmcp::model::JsonObject>, name: &str) -> Option<String> {
    args?
        .get(name)?
        .as_str()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn message(description: &str, text: String) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(description)
}

/// `prompts/get` (blocking: it reads the project).
pub fn get(
    store: &Store,
    name: &str,
    args: Option<&rmcp::model::JsonObject>,
) -> Result<GetPromptResult, ErrorData> {
    let name = match name.strip_suffix(RENAMED) {
        Some(own @ ("start" | "status" | "resume")) => own,
        _ => name,
    };
    match name {
        "start" => Ok(message(
            "Start a BMAD workflow",
            start(argument(args, "objective")),
        )),
        "status" => status(store, argument(args, "task")).map(|t| message("BMAD status", t)),
        "resume" => resume(store, argument(args, "task")).map(|t| message("BMAD briefing", t)),
        other if other.starts_with(INSTALLED_PREFIX) => get_installed(store, other),
        other => Err(ErrorData::invalid_params(
            format!(
                "no prompt `{}`; this server has `start`, `status`, `resume` and the project's BMAD method files (`bmad-agent-…`, `bmad-workflow-…`)",
                clip(other, 80)
            ),
            None,
        )),
    }
}

fn start(objective: Option<String>) -> String {
    let call = format!("Call the `{TOOL_NAME}` tool with `action: \"start\"` and that objective, then follow the reply's `next_step`.");
    match objective {
        None => format!("I want to run a BMAD workflow. Ask me what I want built (the objective), in one or two sentences. {call}"),
        Some(o) => format!(
            "Run a BMAD workflow for this objective: «{}». Some clients pass only the first word of what follows a slash command: if the command I typed holds more words than that, the objective is all of them. {call}",
            clip(&o, 2000)
        ),
    }
}

fn tool_error(e: Error) -> ErrorData {
    match e {
        Error::SessionNotFound { .. } => ErrorData::invalid_params(e.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

fn status(store: &Store, task: Option<String>) -> Result<String, ErrorData> {
    let Some(task) = task else {
        let page = store.list(None, None).map_err(tool_error)?;
        let project = store.project(None).map_err(tool_error)?.display();
        if page.total == 0 {
            return Ok(format!("There are no BMAD tasks in {project} yet. Tell me what to build, and start one with the `{TOOL_NAME}` tool (`action: \"start\"`)."));
        }
        let mut text = format!(
            "Show me the BMAD tasks of {project} ({} in all, newest first) as a short table:\n",
            page.total
        );
        for e in page.sessions.iter().take(20) {
            text.push_str(&format!(
                "- {}: {} track, {} stage, {} (updated {})\n",
                e.task_name,
                e.track,
                e.current_stage.id(),
                e.current_state.id(),
                e.updated_at
            ));
        }
        text.push_str(&format!(
            "For one of them, call `{TOOL_NAME}` with `action: \"status\"` and its `task_name`."
        ));
        return Ok(text);
    };
    let (_, s) = store
        .load(None, &SessionKey::from_task(&task))
        .map_err(tool_error)?;
    let r = reply::for_status(&s, None);
    Ok(format!(
        "Tell me where BMAD task `{}` stands, from this:\n\n{}\n\nWhat the assistant does next: {}\n\nCall `{TOOL_NAME}` with `action: \"status\"` and `task_name: \"{}\"` for everything else.",
        s.task_name,
        r.user_message,
        r.next_step.unwrap_or_default(),
        s.task_name
    ))
}

fn resume(store: &Store, task: Option<String>) -> Result<String, ErrorData> {
    let key = match task {
        Some(t) => SessionKey::from_task(&t),
        None => {
            let page = store.list(None, None).map_err(tool_error)?;
            match page.sessions.first() {
                Some(newest) => SessionKey::Id(newest.session_id.clone()),
                None => {
                    let project = store.project(None).map_err(tool_error)?.display();
                    return Ok(format!("There is no BMAD task in {project} to resume. Ask me what to build, and start one with the `{TOOL_NAME}` tool (`action: \"start\"`)."));
                }
            }
        }
    };
    let (project, s) = store.load(None, &key).map_err(tool_error)?;
    let mut b = briefing(&s);
    if let Some(d) = crate::store::drift(&project, &s) {
        // On a line of its own: the briefing's last sentence ends without one.
        if !b.ends_with('\n') {
            b.push('\n');
        }
        // Within the briefing's bound: cut on a character boundary.
        let room = MAX_BRIEFING.saturating_sub(b.len() + 1);
        b.push_str(prefix(&d.describe(), room));
        b.push('\n');
    }
    Ok(b)
}

fn who(by: DecidedBy, via: Via) -> &'static str {
    match (by, via) {
        (DecidedBy::Human, Via::Elicitation) => "the human, in the dialog",
        (DecidedBy::Human, Via::Cli) => "the human, in the terminal",
        (DecidedBy::Human, Via::Tool) => "the human",
        (DecidedBy::Human, Via::Dashboard) => "the human, on the dashboard",
        (DecidedBy::Host, _) => "the host, on the human's word",
    }
}

/// The briefing, at most [`MAX_BRIEFING`] bytes: each part is bounded, and the whole is
/// cut at the limit as a last resort.
pub fn briefing(s: &Session) -> String {
    let rec = s.current();
    let mut b = format!(
        "BMAD briefing (resume): task `{}` ({} track: {}), session {}, project {}.\nObjective: {}\nNow: stage {} ({}), state {}: {}. Updated {}.\n",
        clip(&s.task_name, 80),
        s.track,
        s.track.description(),
        s.session_id,
        clip(&s.cwd, 200),
        clip(&s.objective, 400),
        s.current_stage.role(),
        s.current_stage.id(),
        s.current_state.id(),
        s.current_stage.description(),
        s.updated_at
    );
    b.push_str(&documents(s));
    b.push_str(&decisions(s));
    let open = rec.open_questions();
    if !open.is_empty() {
        b.push_str(&format!("Open questions for the human ({}):\n", open.len()));
        for q in open.iter().take(MAX_QUESTIONS) {
            b.push_str(&format!("- {}: {}\n", q.id, clip(&q.question, 160)));
        }
    }
    if let Some(scope) = &s.record(Stage::approval()).scope {
        b.push_str(&format!("Approved scope: {}.\n", clip(scope, 120)));
    }
    let status = format!(
        "`{TOOL_NAME}` with `action: \"status\"` and `session_id: \"{}\"`",
        s.session_id
    );
    let r = reply::for_status(s, None);
    let mut next = r.next_step.unwrap_or_default();
    // A briefing has no `user_message` field: what the next step asks to show the human
    // is given here, and named as it is here.
    if next.contains("`user_message`") {
        b.push_str(&format!(
            "For the human:\n{}\n",
            clip(&r.user_message, 1500)
        ));
        next = next.replace("`user_message`", "\"For the human\" above");
    }
    if s.current_state.host_writes() {
        b.push_str(&format!(
            "Next: the role prompt is not in this briefing: call {status}; its `role_prompt` says what to write. Then: {next}"
        ));
    } else {
        b.push_str(&format!("Next: {next}\nFor the full state, call {status}."));
    }
    cut(b, MAX_BRIEFING)
}

/// The briefing's documents: each stage's by path, size and score, and the current
/// draft.
fn documents(s: &Session) -> String {
    let rec = s.current();
    let mut b = String::new();
    let done: Vec<String> = Stage::ALL
        .into_iter()
        .filter_map(|st| {
            let r = s.record(st);
            let a = r.artifact.as_ref()?;
            let score = r.score.map(|x| format!(", {x}/100")).unwrap_or_default();
            let risk = if r.accepted_risk {
                ", risk accepted"
            } else {
                ""
            };
            Some(format!(
                "- {}: {} ({} bytes{score}{risk})",
                st.role(),
                a.path,
                a.size
            ))
        })
        .collect();
    if !done.is_empty() {
        b.push_str("Documents (read them from disk when you need them):\n");
        b.push_str(&done.join("\n"));
        b.push('\n');
    }
    if let Some(d) = rec.draft_ref.as_ref().filter(|_| rec.artifact.is_none()) {
        b.push_str(&format!(
            "Current draft: {} ({} bytes).\n",
            d.file_path, d.size
        ));
    }
    b
}

/// The briefing's decisions (the newest [`MAX_DECISIONS`]): who took each, how, on
/// which document.
fn decisions(s: &Session) -> String {
    let decisions: Vec<String> = s
        .decisions()
        .filter_map(|h| {
            let by = h.decided_by?;
            let via = h.via?;
            let digest = h
                .digest
                .as_deref()
                .map(|d| format!(", on sha256 {}", &d[..d.len().min(12)]))
                .unwrap_or_default();
            Some(format!(
                "- {} {}: {}{digest} ({})",
                h.stage.id(),
                h.action,
                who(by, via),
                h.at
            ))
        })
        .collect();
    if decisions.is_empty() {
        return String::new();
    }
    let skip = decisions.len().saturating_sub(MAX_DECISIONS);
    format!(
        "Decisions ({} in all{}):\n{}\n",
        decisions.len(),
        if skip > 0 { ", the newest shown" } else { "" },
        decisions[skip..].join("\n")
    )
}

/// `text` cut to at most `max` bytes on a character boundary, marked when cut.
fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mark = "\n[cut]";
    text.truncate(prefix(&text, max - mark.len()).len());
    text.push_str(mark);
    text
}

/// The longest start of `text` of at most `max` bytes that ends on a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut at = max.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

/// The names of the prompts of the project's BMAD method files begin with it.
pub const INSTALLED_PREFIX: &str = "bmad-";

/// A prompt's name for an installed file: a v6 skill's own name (`bmad-prd`), else
/// `bmad-<kind>-<name>`, in the characters a client's command names allow.
fn prompt_name(i: &Installed) -> String {
    let name: String = i
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    match i.kind {
        "skill" if name.starts_with(INSTALLED_PREFIX) => name,
        "skill" => format!("{INSTALLED_PREFIX}{name}"),
        kind => format!("{INSTALLED_PREFIX}{kind}-{name}"),
    }
}

/// The project's BMAD method files as prompts: a v6 install's skills under their own names with the
/// descriptions of its skill manifest, each v4 agent as `bmad-agent-<name>` (adopt its persona) and
/// workflow as `bmad-workflow-<name>` (follow it), read from the server's default project through
/// the confined, bounded reader ([`prompts::bmad`](crate::prompts::bmad)); a project without an
/// install lists none. For Claude Code (`claude_code`), the skills in `.claude/skills` are left
/// out: it has each as a slash command of its own already.
pub fn list_installed(store: &Store, claude_code: bool) -> Vec<Prompt> {
    let mut seen = std::collections::BTreeSet::new();
    let installed = store
        .project(None)
        .map(|p| bmad::installed(&crate::bmad_method::Method::of(&p)));
    installed
        .unwrap_or_default()
        .into_iter()
        .filter(|i| !(claude_code && i.in_claude_skills))
        .filter(|i| seen.insert(prompt_name(i)))
        .map(|i| {
            let about = match i.description.as_str() {
                "" => format!(
                    "The project's BMAD method {} `{}` ({}).",
                    i.kind, i.name, i.path
                ),
                d => format!("{d} (the project's BMAD method, {})", i.path),
            };
            Prompt::new(prompt_name(&i), Some(about), None)
                .with_title(format!("BMAD {} {}", i.kind, i.name))
        })
        .collect()
}

/// The prompt of one of the project's BMAD method files.
fn get_installed(store: &Store, name: &str) -> Result<GetPromptResult, ErrorData> {
    let project = store
        .project(None)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let Some(found) = bmad::installed(&crate::bmad_method::Method::of(&project))
        .into_iter()
        .find(|i| prompt_name(i) == name)
    else {
        return Err(ErrorData::invalid_params(
            format!(
                "no prompt `{}`: the project's BMAD method has no such agent or workflow",
                clip(name, 80)
            ),
            None,
        ));
    };
    let text = bmad::read_installed(&project, &found.path)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let ask = match found.kind {
        "agent" => "Adopt this persona of the project's BMAD method for what follows",
        "skill" => "Follow this skill of the project's BMAD method",
        _ => "Follow this workflow of the project's BMAD method",
    };
    Ok(message(
        &format!("BMAD {} {}", found.kind, found.name),
        format!("{ask} (`{}`):\n\n{text}", found.path),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::State;

    /// At a state that waits for the human, the briefing carries what to show them, and
    /// names it as the briefing does: it has no `user_message` field.
    #[test]
    fn a_briefing_gives_what_to_show_the_human_itself() {
        let mut s = Session::new(
            "00000000-0000-4000-8000-000000000000".into(),
            "build-it".into(),
            "/p".into(),
            "Build it".into(),
            vec![crate::workflow::Engine::Claude],
            chrono::Utc::now(),
        );
        s.current_state = State::AwaitingConfirmation;
        let b = briefing(&s);
        assert!(!b.contains("user_message"), "{b}");
        assert!(b.contains("For the human:\n"), "{b}");
        assert!(b.contains("\"For the human\" above"), "{b}");
    }

    #[test]
    fn a_cut_keeps_characters_whole_and_the_limit() {
        let long = "é".repeat(5000);
        let c = cut(long, MAX_BRIEFING);
        assert!(c.len() <= MAX_BRIEFING, "{}", c.len());
        assert!(c.ends_with("[cut]"));
        assert_eq!(cut("short".into(), 10), "short");
    }

    #[test]
    fn the_start_prompt_says_what_to_call_with_or_without_an_objective() {
        let with = start(Some("Build a todo app".into()));
        assert!(with.contains("«Build a todo app»"), "{with}");
        assert!(with.contains("action: \"start\""), "{with}");
        let without = start(None);
        assert!(without.contains("Ask me what I want built"), "{without}");
    }
}
