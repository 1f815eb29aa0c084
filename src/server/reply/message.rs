//! The user message and the state-specific fields of a reply: one function per state the
//! session is left in. Each says what happened and what the human or the host does next.

use crate::prompts::{self, Repeat, Template};
use crate::store::terminal_command;
use crate::workflow::rules::{self, after_reject, failed_checks, failed_verdict};
use crate::workflow::session::{ScoreSource, StageRecord};
use crate::workflow::{story, Action, Engine, Facts, Session, Stage, State};

use super::{context, some_vec, Reply};

/// "`<Role>` stage complete: `<path>` saved (N bytes). " when the change completed a stage.
pub(super) fn completed_stage(s: &Session, completed: Option<Stage>) -> String {
    let Some(done) = completed else {
        return String::new();
    };
    match &s.record(done).artifact {
        Some(a) => format!(
            "{} stage complete: {} saved ({} bytes). ",
            done.role(),
            a.path,
            a.size
        ),
        None => String::new(),
    }
}

/// `generating` and `refining`: the host (re)generates the document with the role prompt,
/// as much of it as `round` says.
pub(super) fn generate(
    s: &Session,
    facts: &Facts,
    (action, round): (Action, Repeat),
    prompt: Option<&Template>,
    r: &mut Reply,
) -> String {
    let stage = story::prompt_stage(s);
    let state = s.current_state;
    let rec = s.record(stage);
    if let Some(template) = prompt.filter(|t| t.stage == stage) {
        let mut text = prompts::render_round(s, stage, &facts.guidance, &template.text, round);
        text.push_str(prompts::retro_block(template, s, stage, round));
        text.push_str(prompts::lessons_block(template));
        text.push_str(&prompts::method_block(template, s, stage, round));
        r.role_prompt = Some(text);
        r.role_prompt_source = Some(template.describe());
        carried(template, r);
    }
    r.engines = Some(s.engines_for(stage));
    let mut context = context(s, stage);
    // A later round: the earlier documents came with the stage's first prompt.
    let later = round != Repeat::Full && prompts::is_revision(s, stage);
    context.documents.retain(|_| !later);
    r.context = Some(context);
    r.guidance = some_vec(facts.guidance.clone());
    let mut msg = String::new();
    if state == State::Refining {
        msg.push_str(&why_revised(rec, stage, action));
    }
    if state == State::Generating && action == Action::Reject {
        msg.push_str("Sent back with the report's findings and the human's feedback. ");
    }
    if let Some(link) = &s.story {
        msg.push_str(&format!(
            "Story of sprint {} ({}) of task `{}`, held by {}. ",
            link.sprint, link.sprint_title, link.parent_task, link.owner
        ));
    }
    if story::runs_as_stories(s) {
        msg.push_str(&stories_line(s));
    }
    if stage.builds_scope() && state == State::Generating && s.track.contains(Stage::approval()) {
        let plan = s.record(Stage::approval());
        // Said when the approval starts the work, not when the work came back.
        let first_round = !prompts::is_revision(s, stage);
        if action != Action::Reject && first_round && !story::runs_as_stories(s) {
            msg.push_str(&format!(
                "Sprint plan approved; scope to build: {}. ",
                plan.scope.as_deref().unwrap_or("all")
            ));
        }
        r.sprints = some_vec(plan.sprints.clone()).filter(|_| !later);
    }
    // For the human: who works on what. The host's instruction is `next_step`; a parent
    // waiting on its stories has nobody writing in it.
    if story::waits_on_stories(s) {
        return msg.trim_end().to_string();
    }
    let doing = if state == State::Generating {
        "writes"
    } else {
        "revises"
    };
    msg.push_str(&format!(
        "The {} {doing} the document ({}).",
        stage.role(),
        stage.id()
    ));
    msg
}

/// Why the document is being revised, for the human: its score stayed below the gate (or
/// the server's own check disagrees with the score), their answers came, or they sent it
/// back.
fn why_revised(rec: &StageRecord, stage: Stage, action: Action) -> String {
    match action {
        Action::Submit => {
            let (Some(score), Some(gate)) = (rec.score, stage.passing_score()) else {
                return String::new();
            };
            let lacking = sections_lacking(rec);
            if score >= gate {
                format!(
                    "The document reports {score}/100, but the server's own check of it disagrees ({}): a score alone does not pass the gate of {gate}. ",
                    lacking.as_deref().unwrap_or("sections are missing")
                )
            } else {
                format!(
                    "The document scored {score}/100 ({}), below the gate of {gate}{}. ",
                    source_word(rec),
                    lacking.map(|l| format!("; {l}")).unwrap_or_default()
                )
            }
        }
        Action::Answer => "Answers recorded. ".into(),
        Action::Reject | Action::Confirm | Action::ConfirmSave | Action::Approve => {
            "Sent back for revision. ".into()
        }
        Action::Start
        | Action::Status
        | Action::List
        | Action::Promote
        | Action::Remember
        | Action::Recall => String::new(),
    }
}

/// The lessons the role prompt carried, as the reply names them: their ids in `lessons`, and
/// a notice for each lesson file that could not be read (skipped, never fatal).
fn carried(template: &Template, r: &mut Reply) {
    if !template.lessons.ids.is_empty() {
        r.lessons = Some(template.lessons.ids.clone());
    }
    for (path, why) in &template.lessons.damaged {
        r.notices
            .get_or_insert_with(Vec::new)
            .push(format!("A lesson file was skipped: {path} {why}"));
    }
    for notice in &template.notices {
        let notices = r.notices.get_or_insert_with(Vec::new);
        if !notices.contains(notice) {
            notices.push(notice.clone());
        }
    }
}

/// `clarifying`: the human answers the open questions.
pub(super) fn clarifying(s: &Session, r: &mut Reply) -> String {
    let rec = s.current();
    let open = rec.open_questions();
    let mut msg = String::new();
    if let Some(score) = rec.score {
        msg.push_str(&format!(
            "The {} draft scored {score}/100 ({}). ",
            s.current_stage.role(),
            source_word(rec)
        ));
    }
    msg.push_str("Please answer these questions:\n");
    for q in &open {
        msg.push_str(&format!("- {}: {}\n", q.id, q.question));
    }
    msg.push_str("Answer each by its id; the next draft assumes what is left open.");
    r.questions = Some(open);
    r.gaps = some_vec(rec.gaps.clone());
    msg
}

/// `awaiting_confirmation`: the human confirms or rejects a document that passed the gate,
/// or one that stayed below it for too many rounds.
pub(super) fn awaiting_confirmation(s: &Session, facts: &Facts, r: &mut Reply) -> String {
    let rec = s.current();
    if let Some(failure) = failed_verdict(s.current_stage, rec) {
        return accept_or_send_back(s, &failure, r);
    }
    let role = s.current_stage.role();
    let path = facts
        .review_path
        .clone()
        .or_else(|| rec.artifact.as_ref().map(|a| a.path.clone()))
        .or_else(|| rec.draft_ref.as_ref().map(|d| d.file_path.clone()))
        .unwrap_or_default();
    r.artifact_path = Some(path.clone());
    r.gaps = some_vec(rec.gaps.clone());
    let score = rec.score.unwrap_or(0);
    let mut msg = if rec.gate_passed == Some(true) {
        let digest = short_digest(rec);
        r.document_digest = digest.clone();
        format!(
            "The {role} document scored {score}/100 and passed the quality gate. Please review {path}{}, then confirm it to move on, or send it back with your feedback.",
            digest.map(|d| format!(" (SHA-256 {d}…)")).unwrap_or_default()
        )
    } else {
        r.guidance = some_vec(facts.guidance.clone());
        let lacking = sections_lacking(rec)
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        format!(
            "The {role} document is still below the gate after {} submissions, at {score}/100{lacking}. Please read {path} and decide: accept it as it is, or send it back with your feedback.",
            rec.below_gate
        )
    };
    // Questions the author asked that nobody answered yet: the human sees them before
    // deciding, and can answer them while accepting (`answers` with `confirm`, which the
    // next roles read) or in the feedback of a `reject`.
    let open = rec.open_questions();
    if !open.is_empty() {
        msg.push_str("\nThe author also asked (answer them while accepting, and the next roles read your answers; or in your feedback if you send it back):\n");
        for q in &open {
            msg.push_str(&format!("- {}: {}\n", q.id, q.question));
        }
        msg.truncate(msg.trim_end().len());
        r.questions = Some(open);
    }
    let assumed = rec.assumed_questions();
    if !assumed.is_empty() {
        msg.push_str("\nThe author assumed, where nobody answered (accepting confirms these; correct one with `answers` while accepting, or in your feedback):\n");
        for (q, what) in &assumed {
            msg.push_str(&format!("- {}: {} (assumed: {what})\n", q.id, q.question));
        }
        msg.truncate(msg.trim_end().len());
    }
    msg
}

/// `awaiting_confirmation` at a report whose own verdict failed: the human accepts the
/// risk, or sends the work back with the findings.
fn accept_or_send_back(s: &Session, failure: &str, r: &mut Reply) -> String {
    let stage = s.current_stage;
    let rec = s.current();
    let path = s.artifact_path(stage);
    r.artifact_path = Some(path.clone());
    r.review_status = rec.review_status.clone();
    // Whatever the call (a submission, a decision refused or left open), the reply asking
    // the human says how the report scored against its gate.
    r.score = rec.score;
    r.gate_passed = rec.gate_passed;
    let digest = short_digest(rec);
    r.document_digest = digest.clone();
    r.checks = rec.checks.clone();
    r.failing = true;
    let back = after_reject(stage).0;
    let onward = match s.track.next(stage) {
        Some(next) => format!("go on to the {} ({next})", next.role()),
        None => "complete the workflow".into(),
    };
    let mut msg = format!(
        "The {}'s {} does not pass: {failure}. Please read {path}{}, then decide: accept the risk and {onward}, or send the work back to the {} ({back}) with these findings and your feedback.",
        stage.role(),
        if stage.verdict().is_some() { "report" } else { "work" },
        digest.map(|d| format!(" (SHA-256 {d}…)")).unwrap_or_default(),
        back.role()
    );
    if failed_checks(stage, rec).is_some() {
        msg.push_str(&format!(
            " Each check's output is kept under .bmad-task/temp/. Accepting a failing check is yours alone: in the dialog, or in a terminal in the project (`{}`).",
            terminal_command(Action::Confirm, &s.task_name)
        ));
    }
    msg
}

/// `awaiting_approval`: the human approves the sprint plan with a scope, or rejects it.
pub(super) fn awaiting_approval(s: &Session, r: &mut Reply) -> String {
    let rec = s.current();
    let path = rec
        .artifact
        .as_ref()
        .map(|a| a.path.clone())
        .unwrap_or_default();
    r.artifact_path = Some(path.clone());
    r.sprints = Some(rec.sprints.clone());
    r.document_digest = short_digest(rec);
    let mut msg = format!("The sprint plan is saved at {path}");
    if rec.sprints.is_empty() {
        msg.push_str(" (no `## Sprint N: Title` headings were found). ");
    } else {
        msg.push_str(&format!(" with {} sprints:\n", rec.sprints.len()));
        for sp in &rec.sprints {
            msg.push_str(&format!("- Sprint {}: {}\n", sp.number, sp.title));
        }
    }
    if let Some(t) = crate::workflow::trace::summary(s).filter(|t| !t.unplanned.is_empty()) {
        msg.push_str(&format!(
            "Requirements planned in no sprint (approving leaves them unbuilt): {}.\n",
            t.unplanned.join(", ")
        ));
    }
    // A revised plan: how to approve was said with the first.
    msg.push_str(if rec.iteration > 1 {
        "Please approve it, or send it back with your feedback."
    } else {
        "Please approve it with the sprints to build (all of them, the default, or some, e.g. sprint 1), or send it back with your feedback."
    });
    msg
}

/// The one instruction for the host's model in the session's state.
pub(super) fn next_step(s: &Session) -> String {
    let stage = s.current_stage;
    if let Some(risk) = rules::risk_asked(s) {
        if risk.checks.is_some() {
            return format!(
                "Show `user_message` to the human and stop. The project's checks failed: the human accepts that themselves (the dialog of a `confirm` call, or `{}` in a terminal), or the work goes back to `{}` (`reject` with `feedback` in their words); never decide for them.",
                terminal_command(Action::Confirm, &s.task_name),
                after_reject(stage).0
            );
        }
        return format!(
            "Show `user_message` to the human and stop. The human decides: accept the risk (`confirm`), or send the work back to `{}` (`reject` with `feedback` in their words); never decide for them.",
            after_reject(stage).0
        );
    }
    if let Some(step) = stories_step(s) {
        return step;
    }
    let step = match s.current_state {
        State::Generating | State::Refining => {
            // Which document and round: a line that reads the same in every round would
            // say nothing the model can check its work against.
            let which = format!(
                "the {}, submission {}",
                stage.role(),
                s.current().iteration.saturating_add(1)
            );
            return generate_step(&s.engines_for(stage), &which);
        }
        State::Clarifying => {
            "Show `user_message` to the human and stop. Pass on their answers with `answer`; never answer for them."
        }
        State::AwaitingConfirmation => {
            "Show `user_message` to the human and stop. They `confirm`, or `reject` with `feedback` in their words; never decide for them."
        }
        State::AwaitingApproval => {
            "Show `user_message` to the human and stop. They `approve` with a `scope` (`all` or sprint numbers), or `reject` with `feedback`; never decide for them."
        }
        State::Completed => "Show `user_message` to the human; there is nothing more to call.",
    };
    step.to_string()
}

/// "missing sections: A, B; empty sections: C", as the server's check of the latest
/// scored document found them; `None` when every required section is there.
fn sections_lacking(rec: &StageRecord) -> Option<String> {
    let parts: Vec<String> = [
        ("missing sections", &rec.missing_sections),
        ("empty sections", &rec.empty_sections),
    ]
    .into_iter()
    .filter(|(_, list)| !list.is_empty())
    .map(|(what, list)| format!("{what}: {}", list.join(", ")))
    .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Where a score came from: the author's, or the server's estimate, and why (no score
/// stated, or one that is not a number from 0 to 100).
fn source_word(rec: &StageRecord) -> String {
    match (rec.score_source, &rec.score_unreadable) {
        (Some(ScoreSource::Reported), _) => "reported by the author".into(),
        (Some(ScoreSource::Estimated), Some(v)) => {
            format!(
                "estimated by the server: the stated score \"{v}\" is not a number from 0 to 100"
            )
        }
        (Some(ScoreSource::Estimated), None) => {
            "estimated by the server: no score was stated".into()
        }
        (None, _) => "unscored".into(),
    }
}

/// The parent's stories (docs/spec.md §18.2) in one sentence: each sprint's holder and
/// state, and what comes next.
fn stories_line(s: &Session) -> String {
    let each: Vec<String> = s
        .stories
        .iter()
        .map(|o| format!("sprint {}: {}", o.sprint, o.holder()))
        .chain(
            s.claimed
                .iter()
                .map(|c| format!("sprint {}: {}", c.sprint, c.holder())),
        )
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
fn stories_step(s: &Session) -> Option<String> {
    if s.current_state != State::Generating
        || !story::takes_stories(s)
        || !story::runs_as_stories(s)
    {
        return None;
    }
    Some(if story::final_qa_due(s) {
        format!(
            "Every story completed. {} Submit it with `stage: \"qa\"`.",
            generate_step(&s.engines_for(Stage::Qa), "the final QA of the whole")
        )
    } else {
        let start: Vec<String> = story::to_start(s).iter().map(u32::to_string).collect();
        let start = if start.is_empty() {
            String::new()
        } else {
            format!(
                " No story holds sprint(s) {} yet: each starts as one (`start` with `parent` and `sprint`).",
                start.join(", ")
            )
        };
        format!("The sprints run as stories, each in its own session (see `stories`, and `claimed` for those of other clones): nothing is submitted here until every in-scope story completed; call `status` then.{start}")
    })
}

/// What the host does to generate a document (`which`: whose, and which submission), by
/// the engines that write it: its own model's result is `claude_result`; a
/// `codex_result` is only ever a second model's.
fn generate_step(engines: &[Engine], which: &str) -> String {
    let second = Engine::Codex.what();
    match engines {
        [Engine::Claude, Engine::Codex] => format!(
            "Write the document ({which}) as `role_prompt` says and `submit` it as `claude_result`, with `codex_result` in the same call: the independent result of {second}, given the same `role_prompt`. Without a second model, submit `claude_result` alone; never write `codex_result` yourself."
        ),
        [Engine::Codex] => format!(
            "Have {second} do this ({which}) as `role_prompt` says, and `submit` its result as `codex_result`. Without a second model, do it yourself and submit it as `claude_result`; never as `codex_result`."
        ),
        _ => format!("Do as `role_prompt` says ({which}); `submit` it as `claude_result`."),
    }
}

/// `next_step` where the human decides and the client can show them a dialog: the host
/// makes the call that opens it, since the human's answer there is the one that counts.
/// `failing`: the document decided on does not pass.
pub fn dialog_next_step(state: State, failing: bool) -> Option<&'static str> {
    match state {
        State::AwaitingConfirmation if failing => Some(
            "Tell the human the work does not pass, as `user_message` says, then call `confirm`: a dialog asks them to accept the risk or send it back. If they said what to change, `reject` with it as `feedback`.",
        ),
        State::Clarifying => Some(
            "Tell the human questions await them, then call `answer`: a dialog asks them. Never answer for them.",
        ),
        State::AwaitingConfirmation => Some(
            "Tell the human the document is ready for review, then call `confirm`: a dialog asks them to decide. If they said what to change, `reject` with it as `feedback`.",
        ),
        State::AwaitingApproval => Some(
            "Tell the human the sprint plan is ready, then call `approve`: a dialog asks them to decide.",
        ),
        _ => None,
    }
}

/// The first 12 hex digits of the saved stage document's SHA-256.
fn short_digest(rec: &StageRecord) -> Option<String> {
    rec.artifact
        .as_ref()
        .map(|a| a.sha256.chars().take(12).collect())
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
