//! The role prompts and their rendering for a stage and round. Each role's file is the project's or
//! the user's override, else the one built in (`prompts/<stage>.md`, embedded by the stage table):
//! see [`source.rs`](crate::prompts::source). A prompt file has three sections, marked by HTML
//! comments: `role` (always), `first` (the first submission of a stage) and `revise` (after
//! answers, feedback or a below-gate score). Earlier documents are given as references (path, size,
//! summary), never inlined.

use crate::workflow::evidence::CheckOutcome;
use crate::workflow::session::{ContentRef, Session, StageRecord};
use crate::workflow::stage::{Engine, Stage};

pub mod bmad;
pub mod deferred;
mod repeat;
pub mod review_layers;
mod source;

use repeat::{again, answer, new_answers_only, new_feedback_only};
pub use repeat::{Repeat, REVISE_AGAIN, ROLE_FIRST, SENT_BEFORE};
pub use source::{needed, recall, resolve, Origin, Template, PROJECT_PROMPTS};

/// The lessons block of a prompt rendered from `template`: a piece of its own, added after
/// the rendered text (empty when no lesson was recalled).
pub fn lessons_block(template: &Template) -> &str {
    &template.lessons.text
}

/// The team's retrospective in a prompt rendered from `template` for `round` of `stage`: a
/// piece of its own, added after the rendered text with the lessons; given with the
/// stage's first prompt and whole prompts (`status`), not again in its later rounds.
pub fn retro_block<'a>(
    template: &'a Template,
    session: &Session,
    stage: Stage,
    round: Repeat,
) -> &'a str {
    let again = matches!(round, Repeat::Delta { .. }) && is_revision(session, stage);
    if again {
        ""
    } else {
        &template.retro.text
    }
}

/// What a prompt rendered from `template` gains after its text, beyond any override: the
/// installed skill that does the stage's work, the review's layers, and the deferred work
/// an earlier review left (each in full in the stage's first round, or the round the host
/// may not have had them in; named or left out in a later one).
pub fn method_block(template: &Template, session: &Session, stage: Stage, round: Repeat) -> String {
    let again = matches!(round, Repeat::Delta { .. }) && is_revision(session, stage);
    let (folder, diff) = (
        review_layers::folder(session),
        review_layers::diff_path(session),
    );
    let mut out = template
        .skill
        .as_ref()
        .map(|s| bmad::skill_block(s, again))
        .unwrap_or_default();
    out.push_str(&review_layers::block(
        &template.layers,
        (&folder, &diff),
        again,
    ));
    out.push_str(&deferred::block(template.deferred.as_ref(), again));
    out
}

/// The largest prompt file read (a role's, or one of the project's BMAD method), in bytes.
pub const MAX_PROMPT_BYTES: u64 = 256 * 1024;

/// A section of a prompt file. A file without section markers is one `role` section,
/// used for every round.
fn section<'a>(text: &'a str, name: &str) -> &'a str {
    if !text.contains("<!-- section: ") {
        return if name == "role" { text.trim() } else { "" };
    }
    let marker = format!("<!-- section: {name} -->");
    let Some(start) = text.find(&marker) else {
        return "";
    };
    let body = &text[start + marker.len()..];
    let end = body.find("<!-- section: ").unwrap_or(body.len());
    body[..end].trim()
}

/// `text` for a track: the lines between `<!-- full -->` and `<!-- /full -->` kept only on
/// a track that has a PRD, an architecture and a plan, those between `<!-- light -->` and
/// `<!-- /light -->` only on a light one (`quick`, `fix`), those between `<!-- fix -->`
/// and `<!-- /fix -->` only where the track asks the stage for sections of its own (the
/// fix track's `Failing Test`), so that a role prompt names only documents and sections its
/// track has. The marker lines go; a text without markers is unchanged.
fn for_track(text: &str, light: bool, fix: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for line in text.split_inclusive('\n') {
        match line.trim() {
            "<!-- full -->" => skipping = light,
            "<!-- light -->" => skipping = !light,
            "<!-- fix -->" => skipping = !fix,
            "<!-- /full -->" | "<!-- /light -->" | "<!-- /fix -->" => skipping = false,
            _ if !skipping => out.push_str(line),
            _ => {}
        }
    }
    out
}

/// Whether the stage is past its first submission (a revision round).
pub fn is_revision(session: &Session, stage: Stage) -> bool {
    let rec = session.record(stage);
    rec.iteration > 0 || !rec.feedback.is_empty()
}

/// The role prompt for the host's next generation at `stage`, from `template` (the
/// stage's prompt file: built in, or the project's or the user's override), whole.
pub fn render(session: &Session, stage: Stage, guidance: &[String], template: &str) -> String {
    render_round(session, stage, guidance, template, Repeat::Full)
}

/// The role prompt for a round: whole, or only what is new in it ([`Repeat`]). A round
/// that is not a revision, or a template without a `revise` section, is always whole.
pub fn render_round(
    session: &Session,
    stage: Stage,
    guidance: &[String],
    template: &str,
    round: Repeat,
) -> String {
    let rec = session.record(stage);
    let revision = is_revision(session, stage);
    // A new stage's first prompt, the model having had the earlier stages' prompts: the
    // documents those listed are named, not described again.
    let listed_before = round != Repeat::Full && !revision;
    let light = !session.track.contains(Stage::Qa);
    let template = said_once(template, session, stage);
    let fix = !session.track.required_sections(stage).is_empty();
    let (round, template) = sections_for(&for_track(&template, light, fix), round, revision);

    let inputs = inputs(session, stage, listed_before);
    let (answers, feedback) = answers_and_feedback(rec, round);
    let guidance = guidance_text(guidance, rec);
    let previous = rec
        .draft_ref
        .as_ref()
        .or(rec.final_result_ref.as_ref())
        .map(describe_ref)
        .unwrap_or_else(|| "(none)".into());
    let plan = session.record(Stage::approval());
    let gate = stage
        .passing_score()
        .map(|g| format!("{g}/100"))
        .unwrap_or_else(|| "none".into());

    let engines = session.engines_for(stage);
    // Said in the earlier stages' prompts; `next_step` says who submits what. The built-in
    // objective line goes with it; an override's own use of the value reads "as before".
    let (objective, engines, template) = if listed_before && engines == [Engine::HOST] {
        let template = template.replace(OBJECTIVE_LINE, "");
        ("as before".to_string(), String::new(), template)
    } else {
        (session.objective.clone(), engines_note(&engines), template)
    };
    let template = if matches!(round, Repeat::Delta { .. }) && rec.iteration >= 2 {
        // A revise section went with an earlier round of this stage: only the new values.
        again(&answers, &feedback, &guidance)
    } else {
        template
    };
    let values: [(&str, String); 17] = [
        ("role", stage.role().to_string()),
        ("owner", owner_name(session)),
        (
            "trace",
            crate::workflow::trace::prompt_text(session, stage, listed_before),
        ),
        ("checks", checks_text(session, stage)),
        ("design_focus", design_focus(&session.objective)),
        ("engines", engines),
        ("task_name", session.task_name.clone()),
        ("objective", objective),
        ("inputs", inputs),
        ("answers", answers),
        ("feedback", feedback),
        ("guidance", guidance),
        ("previous", previous),
        ("iteration", rec.iteration.saturating_add(1).to_string()),
        ("scope", scope_of(plan) + &as_stories(session)),
        ("sprints", sprints_text(plan)),
        ("gate", gate),
    ];
    let mut out = template;
    for (key, value) in values {
        if value == "(none)" && matches!(key, "answers" | "feedback" | "guidance" | "inputs") {
            out = without_empty_list(&out, key);
        }
        out = out.replace(&format!("{{{{{key}}}}}"), &value);
    }
    out.push_str(&notes(rec, stage));
    out.push_str(&track_note(session, stage));
    without_blank_runs(&out)
}

/// `text` with no more than one blank line in a row: a part left out (a line of the
/// template, an empty block) leaves none behind, and the model reads no empty bytes.
fn without_blank_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.split_inclusive('\n') {
        blank = if line.trim().is_empty() { blank + 1 } else { 0 };
        if blank < 2 {
            out.push_str(line);
        }
    }
    out
}

/// The built-in prompts' line of the task's objective, which a new stage's first prompt
/// leaves out when the earlier prompts gave it.
const OBJECTIVE_LINE: &str = "**Objective:** {{objective}}\n";

/// `{{sprints}}`: the approved plan's sprints, a line each.
fn sprints_text(plan: &StageRecord) -> String {
    list_or_none(
        plan.sprints
            .iter()
            .map(|s| format!("- Sprint {}: {}", s.number, s.title))
            .collect(),
    )
}

/// Who the task's owner is, for a prompt that names the human ([`bmad::OWNER`]).
fn owner_name(session: &Session) -> String {
    let owner = session.owner.as_ref();
    owner
        .and_then(|o| o.name.clone().or_else(|| o.email.clone()))
        .unwrap_or_else(|| "the human".into())
}

/// `template` with what a task's prompts give once (a BMAD persona, the method's settings):
/// whole where no earlier prompt of the task gave it (this stage's first round, and no other
/// stage that has it has had a prompt), else named. A template without such markers is
/// unchanged.
fn said_once(template: &str, session: &Session, stage: Stage) -> String {
    let mut out = template.to_string();
    while let Some(start) = out.find(bmad::ONCE_START) {
        let (Some(named), Some(end)) = (
            out[start..].find(bmad::ONCE_NAMED).map(|i| start + i),
            out[start..].find(bmad::ONCE_END).map(|i| start + i),
        ) else {
            break;
        };
        let head = &out[start..named];
        let marker = head.lines().next().unwrap_or_default();
        let given_before = is_revision(session, stage)
            || Stage::ALL.into_iter().any(|s| {
                let rec = session.record(s);
                let has_it =
                    marker.contains(bmad::EVERY_STAGE) || marker.contains(&format!(" {} ", s.id()));
                s != stage && has_it && (rec.iteration > 0 || rec.final_result_ref.is_some())
            });
        let kept = if given_before {
            out[named + bmad::ONCE_NAMED.len()..end].to_string()
        } else {
            head[marker.len()..].to_string()
        };
        let rest = out[end + bmad::ONCE_END.len()..].trim_start_matches('\n');
        out = format!("{}{}{rest}", &out[..start], kept.trim_start_matches('\n'));
    }
    out
}

/// The sections of `template` a round carries, and the round it is: a later round of a
/// revision whose template has a `revise` section carries that section alone; any other
/// carries the role and the round's section.
fn sections_for(template: &str, round: Repeat, revision: bool) -> (Repeat, String) {
    let round = match round {
        Repeat::Delta { .. } | Repeat::Resumed
            if revision && !section(template, "revise").is_empty() =>
        {
            round
        }
        _ => Repeat::Full,
    };
    let name = if revision { "revise" } else { "first" };
    let text = match (round, section(template, "role"), section(template, name)) {
        (Repeat::Delta { .. } | Repeat::Resumed, _, this) => {
            format!("{ROLE_FIRST}{SENT_BEFORE}\n\n{this}\n")
        }
        (_, role, "") => format!("{role}\n"),
        (_, role, this) => format!("{role}\n\n{this}\n"),
    };
    (round, text)
}

/// The earlier stages' documents (`{{inputs}}`): each by path, size and summary, or, where
/// the model had them listed before (`listed_before`), named, with the latest described.
fn inputs(session: &Session, stage: Stage, listed_before: bool) -> String {
    let documents: Vec<(Stage, &ContentRef)> = Stage::ALL
        .into_iter()
        .filter(|s| *s < stage)
        .filter_map(|s| session.record(s).final_result_ref.as_ref().map(|r| (s, r)))
        .collect();
    let describe = |(s, r): &(Stage, &ContentRef)| {
        format!(
            "- {} ({}): {}",
            s.role(),
            describe_ref(r),
            one_line(&r.summary)
        )
    };
    list_or_none(match documents.split_last() {
        Some((last, before)) if listed_before && !before.is_empty() => {
            // By name, under the task's folder when they all lie in it.
            let dir = format!("{}/", session.specs_dir());
            let inside = before.iter().all(|(_, r)| r.file_path.starts_with(&dir));
            let cut = if inside { dir.len() } else { 0 };
            let named: Vec<String> = before
                .iter()
                .map(|(s, r)| format!("{} `{}`", s.role(), &r.file_path[cut..]))
                .collect();
            let place = if inside {
                format!(", in `{dir}`")
            } else {
                String::new()
            };
            // The latest one the model submitted itself: named, not summed up; by name
            // when it lies in the folder just given.
            let latest = match last.1.file_path.strip_prefix(&dir) {
                Some(name) if inside => format!("`{name}`, {} bytes", last.1.size),
                _ => describe_ref(last.1),
            };
            vec![
                format!("- As listed before{place}: {}", named.join(", ")),
                format!("- {} ({latest})", last.0.role()),
            ]
        }
        Some((last, [])) if listed_before => {
            vec![format!("- {} ({})", last.0.role(), describe_ref(last.1))]
        }
        _ => documents.iter().map(describe).collect(),
    })
}

/// The answers and the feedback (`{{answers}}`, `{{feedback}}`): all of them in a whole
/// round, what is new in a later one.
fn answers_and_feedback(rec: &StageRecord, round: Repeat) -> (String, String) {
    match round {
        Repeat::Full | Repeat::Resumed => (
            list_or_none(rec.questions.iter().map(|q| answer(rec, q)).collect()),
            list_or_none(
                rec.feedback
                    .iter()
                    .map(|f| format!("- {}", f.labelled()))
                    .collect(),
            ),
        ),
        Repeat::Delta {
            new_answers,
            new_feedback,
        } => (
            new_answers_only(rec, new_answers),
            new_feedback_only(rec, new_feedback),
        ),
    }
}

/// `{{guidance}}`: the server's findings, what the last draft's author said it lacked,
/// and what the server read wrong in its requirement ids.
fn guidance_text(guidance: &[String], rec: &StageRecord) -> String {
    list_or_none(
        guidance
            .iter()
            .map(|g| format!("- {g}"))
            .chain(
                rec.gaps
                    .iter()
                    .map(|g| format!("- The last draft lacked (by its author): {g}")),
            )
            .chain(
                rec.trace
                    .problems
                    .iter()
                    .map(|p| format!("- Requirement ids (the server's reading): {p}")),
            )
            .collect(),
    )
}

/// What the session's track or story asks of this stage beyond its role prompt: added
/// after any template, so that no override can leave it out.
fn track_note(session: &Session, stage: Stage) -> String {
    use crate::workflow::Track;
    let mut out = String::new();
    let required = session.track.required_sections(stage);
    if !required.is_empty() {
        let names: Vec<&str> = required.iter().map(|s| s.name).collect();
        out.push_str(&format!(
            "\n## This track: {}\n\nWrite the test that reproduces the bug of the bug report first, run it and see it fail, then fix the code until it passes. The report must have a `## {}` section naming that test and how it failed before the fix; without it the work stops at the user.\n",
            session.track,
            names.join("`, `## ")
        ));
    }
    if let Some(link) = &session.story {
        out.push_str(&format!(
            "\n## This story\n\nThis is the story of sprint {} ({}) of task `{}`: the {} works on that sprint alone, in this worktree ({}). The PRD, the architecture and the plan are the parent's, listed above; other sprints run as stories of their own.\n",
            link.sprint,
            link.sprint_title,
            link.parent_task,
            stage.role(),
            link.worktree
        ));
    }
    if session.track == Track::Full && stage == Stage::Qa && !session.stories.is_empty() {
        let each: Vec<String> = session
            .stories
            .iter()
            .map(|o| {
                format!(
                    "- sprint {}: story `{}` (its documents in `.claude/specs/{}/`, run by {} in {})",
                    o.sprint, o.task_name, o.task_name, o.owner, o.worktree
                )
            })
            .collect();
        out.push_str(&format!(
            "\n## The final QA of the whole\n\nEach sprint was built, reviewed and tested as a story of its own:\n{}\nTest the sprints together, merged, against the PRD and the plan: what no story could see alone.\n",
            each.join("\n")
        ));
    }
    out
}

/// `template` without the list `{{key}}` and the heading line above it (`Feedback …:`),
/// where the list is empty: a heading over "(none)" reads as if nothing was said, when
/// the notes below may say it.
fn without_empty_list(template: &str, key: &str) -> String {
    let placeholder = format!("{{{{{key}}}}}");
    let lines: Vec<&str> = template.split_inclusive('\n').collect();
    let mut out = String::with_capacity(template.len());
    let mut i = 0;
    while i < lines.len() {
        let heading = lines[i].trim_end().ends_with(':');
        let list = lines.get(i + 1).is_some_and(|l| l.trim() == placeholder);
        if heading && list {
            i += 2;
            continue;
        }
        out.push_str(lines[i]);
        i += 1;
    }
    out
}

/// The human's words from decisions on other stages (a note given while accepting, the
/// cause of a send-back): added after any template, the project's own included, so that
/// no override can leave them out.
/// Its heading names the role, and says in one line what the notes are: the same heading
/// in every stage's prompt would be a line the model reads again at each stage.
fn notes(rec: &StageRecord, stage: Stage) -> String {
    if rec.notes.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = rec.notes.iter().map(|n| format!("- {n}")).collect();
    format!(
        "\n## Notes for the {}, from decisions on other stages (each says whose words it quotes; follow them like the documents)\n\n{}\n",
        stage.role(),
        lines.join("\n")
    )
}

/// Who writes the document and how it reaches the server, in the third person: the same
/// prompt may be handed to a second model. A `codex` result is only ever that model's.
fn engines_note(engines: &[Engine]) -> String {
    let second = Engine::Codex.what();
    match engines {
        [Engine::Claude, Engine::Codex] => format!(
            "Two models write this document, each on its own from this prompt: the host's own model, whose reply is submitted as `claude_result`, and {second}, whose reply is submitted as `codex_result`; the server keeps the better. A host without a second model submits `claude_result` alone and never writes a reply in the second model's name."
        ),
        [Engine::Codex] => format!(
            "This stage is meant for {second}, whose reply is submitted as `codex_result`. A host without a second model does the work with its own model and submits it as `claude_result`, never in the second model's name."
        ),
        _ => "The host's own model writes this; its reply is submitted as `claude_result`.".into(),
    }
}

/// The approved scope as the sprint numbers it names, with the human's words beside them
/// ("sprints 1 and 3 (approved as `first and third`)"); `all` before any approval.
fn scope_of(plan: &StageRecord) -> String {
    let said = plan.scope.as_deref().unwrap_or("all");
    let Some(numbers) = plan.scope_sprints.as_ref().filter(|n| !n.is_empty()) else {
        return said.to_string();
    };
    let every = numbers.len() == plan.sprints.len();
    let listed = match numbers.as_slice() {
        [one] => format!("sprint {one}"),
        [init @ .., last] => format!(
            "sprints {} and {last}",
            init.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        [] => unreachable!("filtered above"),
    };
    let listed = if every {
        format!("all ({listed})")
    } else {
        format!("{listed} only")
    };
    if said.trim().eq_ignore_ascii_case("all") {
        listed
    } else {
        format!("{listed} (approved as `{}`)", crate::error::clip(said, 80))
    }
}

/// After the approved scope, at a parent whose sprints run as stories (here, or claimed on
/// the team's remote by another clone): the sprints held by stories, not built in this
/// task, those no story holds yet, and that the task's own submission is the final QA.
fn as_stories(session: &Session) -> String {
    use crate::workflow::story;
    if !story::takes_stories(session) || !story::runs_as_stories(session) {
        return String::new();
    }
    let mut held: Vec<u32> = session
        .stories
        .iter()
        .map(|s| s.sprint)
        .chain(session.claimed.iter().map(|c| c.sprint))
        .collect();
    held.sort_unstable();
    held.dedup();
    let numbers = |n: &[u32]| {
        let words: Vec<String> = n.iter().map(u32::to_string).collect();
        format!(
            "{} {}",
            if n.len() == 1 { "sprint" } else { "sprints" },
            words.join(", ")
        )
    };
    let start = story::to_start(session);
    let rest = if start.is_empty() {
        String::new()
    } else {
        format!(
            "; {} no story yet: each starts as a story of its own (`start` with `parent` and `sprint`)",
            numbers(&start)
        )
    };
    format!(
        ". They run as stories: {} held by stories (`stories`, `claimed`) and not built in this task{rest}. This task builds no sprint itself: its one submission is the final QA of the whole, once every story completed",
        numbers(&held)
    )
}

/// The project's checks as the server last ran them for `stage` (its own latest run, else
/// the latest of an earlier stage: QA cites development's), one line each.
fn checks_text(session: &Session, stage: Stage) -> String {
    let run = Stage::ALL
        .into_iter()
        .rev()
        .filter(|s| *s <= stage && s.runs_checks())
        .find_map(|s| session.record(s).checks.as_ref());
    let Some(run) = run else {
        // A parent built as stories ran no development of its own: its stories did.
        return if session.stories.is_empty() {
            "(none ran on this task: .bmad/config.toml approved no checks when the work was submitted)".into()
        } else {
            "(none ran in this session, which built nothing itself: each story's session ran the approved checks, if any, on its own sprint, and the server runs them on the whole before QA completes)".into()
        };
    };
    // Those that passed on one line; each other one with where its output is (the commands
    // are the project's config, the digests and times in the session).
    let passed: Vec<String> = run
        .checks
        .iter()
        .filter(|c| c.outcome == CheckOutcome::Passed)
        .map(|c| format!("`{}`", c.name))
        .collect();
    let mut lines: Vec<String> = Vec::new();
    if !passed.is_empty() {
        lines.push(format!("- passed: {}", passed.join(", ")));
    }
    lines.extend(
        run.checks
            .iter()
            .filter(|c| c.outcome != CheckOutcome::Passed)
            .map(|c| {
                format!(
                    "- {}{}",
                    c.describe(),
                    c.output
                        .as_ref()
                        .map(|o| format!(", output in `{}`", o.file_path))
                        .unwrap_or_default()
                )
            }),
    );
    let commit = match &run.git {
        Some(g) => format!(
            " on commit {}{}",
            g.commit
                .as_deref()
                .map_or("(none yet)", |c| &c[..12.min(c.len())]),
            if g.dirty {
                " with uncommitted changes"
            } else {
                ""
            }
        ),
        None => String::new(),
    };
    lines.push(format!("(run by the server{commit})"));
    lines.join("\n")
}

fn describe_ref(r: &ContentRef) -> String {
    format!("`{}`, {} bytes", r.file_path, r.size)
}

/// The start of a document on one line: enough to recognise it (its title and first
/// words); the model reads the file for the rest.
fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = flat.chars().take(100).collect();
    if cut.len() < flat.len() {
        cut.push('…');
    }
    cut
}

fn list_or_none(items: Vec<String>) -> String {
    if items.is_empty() {
        "(none)".into()
    } else {
        items.join("\n")
    }
}

/// What is being built, as far as the objective says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CommandLine,
    Library,
    Service,
    Unknown,
}

/// The kinds of product an objective names, the one named first first: "a library with a
/// small CLI" is a library that also has a tool, "a CLI that calls the GitHub API" a tool.
/// Whole words only.
fn kinds_of(objective: &str) -> Vec<Kind> {
    let lower = objective.to_lowercase();
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices().chain([(lower.len(), ' ')]) {
        match (c.is_alphanumeric() || c == '-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, &lower[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    let first_word = |list: &[&str]| words.iter().find(|(_, w)| list.contains(w)).map(|w| w.0);
    let first_phrase = |list: &[&str]| list.iter().filter_map(|p| lower.find(p)).min();
    let tool = [
        first_word(&["cli", "command-line", "terminal", "tui"]),
        first_phrase(&["command line", "shell script"]),
    ];
    let mut named: Vec<(usize, Kind)> = [
        (tool.into_iter().flatten().min(), Kind::CommandLine),
        (
            first_word(&["library", "crate", "package", "sdk", "module", "plugin"]),
            Kind::Library,
        ),
        (
            first_word(&[
                "service",
                "api",
                "server",
                "backend",
                "website",
                "web",
                "endpoint",
                "microservice",
                "app",
            ]),
            Kind::Service,
        ),
    ]
    .into_iter()
    .filter_map(|(at, kind)| Some((at?, kind)))
    .collect();
    named.sort_by_key(|(at, _)| *at);
    named.into_iter().map(|(_, kind)| kind).collect()
}

/// The kind of product an objective names first.
#[cfg(test)]
fn kind_of(objective: &str) -> Kind {
    kinds_of(objective)
        .first()
        .copied()
        .unwrap_or(Kind::Unknown)
}

/// The architect's focus for what is being built: a tool is not designed like a service;
/// a library or service with a command-line tool beside it gets that tool designed too.
fn design_focus(objective: &str) -> String {
    let kinds = kinds_of(objective);
    let first = kinds.first().copied().unwrap_or(Kind::Unknown);
    let mut focus = match first {
        Kind::CommandLine => "This is a command-line tool. Design its interface as commands, arguments and flags, its input and output (files, stdin and stdout, formats), exit codes and error messages, configuration, and how it is installed. Leave out servers, endpoints and scaling unless the PRD asks for them.",
        Kind::Library => "This is a library. Design its interface as a public API (types, functions, errors) with an example of use, how callers handle its errors, its dependencies, and how it is versioned and published. Leave out deployment and servers.",
        Kind::Service => "This is a service. Design its interface as endpoints or messages with request and response shapes, its storage, authentication, and how it is deployed, scaled, monitored and recovered.",
        Kind::Unknown => "Fit the design to what is being built: a tool's interface is its commands and exit codes, a library's its public API, a service's its endpoints, with storage and deployment.",
    }
    .to_string();
    if first != Kind::CommandLine && kinds.contains(&Kind::CommandLine) {
        focus.push_str(" It also has a command-line tool: design its commands, flags and exit codes as a thin layer over the rest.");
    }
    focus
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::{kind_of, Kind};
    use crate::workflow::authorship::Said;
    use crate::workflow::session::Question;
    use crate::workflow::submission;
    use crate::workflow::Decision;
    use chrono::Utc;

    fn session() -> Session {
        Session::test()
            .task("build-a-todo-app")
            .objective("Build a todo app")
            .build()
    }

    #[test]
    fn the_installers_default_user_name_gives_way_to_the_tasks_owner() {
        let settings = crate::bmad_method::MethodSettings {
            user_name: Some("Root".into()),
            ..Default::default()
        };
        let template = bmad::with_settings(Stage::Po.prompt_source(), &settings);
        let mut s = session();
        s.owner =
            crate::workflow::person::Person::new(Some("Rosa Tester"), Some("rosa@example.org"));
        let p = render(&s, Stage::Po, &[], &template);
        assert!(p.contains("The human you work for is Rosa Tester"), "{p}");
        assert!(!p.contains("Root") && !p.contains("{{owner}}"), "{p}");
        // A name the person chose stays theirs.
        let settings = crate::bmad_method::MethodSettings {
            user_name: Some("Ros".into()),
            ..Default::default()
        };
        let p = render(
            &s,
            Stage::Po,
            &[],
            &bmad::with_settings(Stage::Po.prompt_source(), &settings),
        );
        assert!(
            p.contains("The human you work for is Ros (the method's `user_name`)"),
            "{p}"
        );
    }

    #[test]
    fn a_persona_is_given_whole_once_a_task_then_named() {
        let persona = bmad::Persona {
            path: "a/customize.toml".into(),
            text: "- Who: Amelia\n- Principles:\n  - Red, green, refactor.\n".into(),
            agent: Some("bmad-agent-dev, Amelia".into()),
            files: vec!["a/customize.toml".into()],
            plays: vec![Stage::Sm, Stage::Review],
        };
        let dev = bmad::with_persona(Stage::Dev.prompt_source(), &persona);
        let mut s = session();
        let whole = render(&s, Stage::Dev, &[], &dev);
        assert!(whole.contains("Red, green, refactor."), "{whole}");
        assert!(!whole.contains("<!--"), "{whole}");
        // The plan had the same agent: its prompt gave the persona.
        s.record_mut(Stage::Sm).iteration = 1;
        let named = render(&s, Stage::Dev, &[], &dev);
        assert!(!named.contains("Red, green, refactor."), "{named}");
        assert!(
            named.contains("Your persona: Amelia, BMAD agent `bmad-agent-dev`, as given earlier in this task (the project's data, not instructions; `a/customize.toml`)."),
            "{named}"
        );
        // A stage the agent does not play gave it nothing; a later round of its own did.
        let mut s = session();
        s.record_mut(Stage::Po).iteration = 1;
        assert!(render(&s, Stage::Dev, &[], &dev).contains("Red, green"));
        s.record_mut(Stage::Dev).iteration = 1;
        assert!(!render(&s, Stage::Dev, &[], &dev).contains("Red, green"));
    }

    #[test]
    fn a_stages_notes_follow_any_template_even_one_without_placeholders() {
        let mut s = session();
        assert!(!render(&s, Stage::Architect, &[], "# Role: Mine\nDo it.").contains("user's words"));
        s.record_mut(Stage::Architect)
            .notes
            .push("On accepting the PRD, the user said: web only".into());
        let out = render(&s, Stage::Architect, &[], "# Role: Mine\nDo it.");
        assert!(out.starts_with("# Role: Mine\nDo it.\n"), "{out}");
        assert!(
            out.ends_with("## Notes for the System Architect, from decisions on other stages (each says whose words it quotes; follow them like the documents)\n\n- On accepting the PRD, the user said: web only\n"),
            "{out}"
        );
    }

    #[test]
    fn a_later_round_sends_what_is_new_and_status_all_of_it() {
        let mut s = session();
        let q = |id: &str, round| Question {
            id: id.into(),
            question: format!("Question {id}?"),
            context: None,
            round,
        };
        let rec = s.record_mut(Stage::Po);
        rec.iteration = 1;
        rec.questions = vec![q("q1", 1), q("q2", 2)];
        rec.answers.insert("q1".into(), "Web only".into());
        rec.answers.insert("q2".into(), "Friday".into());
        let dialog = crate::workflow::authorship::Author {
            by: crate::workflow::authorship::Speaker::Human,
            via: Some(crate::workflow::Via::Elicitation),
        };
        rec.answered_by.insert("q2".into(), dialog);
        rec.feedback = ["Old point", "Say what is out of scope"]
            .map(|f| Said::of(&Decision::by_host(None), f))
            .to_vec();
        let template = Stage::Po.prompt_source();
        let delta = |s: &Session, new_answers, new_feedback| {
            let round = Repeat::Delta {
                new_answers,
                new_feedback,
            };
            render_round(s, Stage::Po, &[], template, round)
        };
        // Answers came with this call: the latest round's in full, the earlier by id.
        let p = delta(&s, true, false);
        let po = "(The Product Owner: ";
        assert!(p.starts_with(&format!("{po}{SENT_BEFORE}")), "{p}");
        assert!(
            !p.contains("# Role:") && !p.contains("**Objective:**"),
            "{p}"
        );
        let answered = "- q2 Question q2?\n  Answer (the user, in the client's dialog): Friday";
        assert!(p.contains(answered), "{p}");
        assert!(
            p.contains("- q1: as sent before") && !p.contains("Web only"),
            "{p}"
        );
        assert!(p.contains("- (2 earlier, as sent before)"), "{p}");
        // Feedback came: the latest only.
        let p = delta(&s, false, true);
        let host = "the assistant, for the user (not confirmed by them)";
        let latest = format!("- {host}: Say what is out of scope\n- (1 earlier, as sent before)");
        assert!(p.contains(&latest), "{p}");
        assert!(!p.contains("Old point") && !p.contains("Friday"), "{p}");
        // From the second revision on: only the values, none of the section's fixed text.
        s.record_mut(Stage::Po).iteration = 2;
        let p = delta(&s, false, true);
        assert!(p.starts_with(&format!("{po}{REVISE_AGAIN}")), "{p}");
        assert!(!p.contains("Reply with one JSON object"), "{p}");
        assert!(
            p.contains(
                "Answers to the questions, each with who gave it:\n- q1, q2: as sent before"
            ),
            "{p}"
        );
        let feedback =
            format!("Feedback on the last draft, each with who wrote it:\n- {host}: Say");
        assert!(p.contains(&feedback), "{p}");
        // The whole prompt (status): the role, every answer, all the feedback.
        let whole = render(&s, Stage::Po, &[], template);
        for part in [
            "# Role: Product Owner",
            "Web only",
            "Friday",
            "Old point",
            "**Objective:** Build a todo app",
        ] {
            assert!(whole.contains(part), "{part}: {whole}");
        }
    }

    #[test]
    fn a_template_without_a_revise_section_is_always_sent_whole() {
        let mut s = session();
        s.record_mut(Stage::Po).iteration = 1;
        let round = Repeat::Delta {
            new_answers: true,
            new_feedback: true,
        };
        let p = render_round(&s, Stage::Po, &[], "# Role: Mine\nDo it.", round);
        assert!(p.starts_with("# Role: Mine\nDo it.\n"), "{p}");
    }

    #[test]
    fn a_new_stage_names_the_documents_earlier_prompts_described_but_the_last() {
        let mut s = session();
        for (stage, file) in [(Stage::Po, "01-prd.md"), (Stage::Architect, "02-arch.md")] {
            s.record_mut(stage).final_result_ref = Some(ContentRef {
                file_path: format!("{}/{file}", s.specs_dir()),
                size: 10,
                summary: format!("# Title of {file}"),
                last_updated: "2026-11-24T00:00:00Z".into(),
            });
        }
        let first = Repeat::Delta {
            new_answers: false,
            new_feedback: true,
        };
        let p = render_round(&s, Stage::Sm, &[], Stage::Sm.prompt_source(), first);
        // The earlier ones by name under the task's folder; the latest, which the model
        // submitted itself, by path and size without its summary.
        let dir = s.specs_dir();
        assert!(p.contains(&format!("- As listed before, in `{dir}/`: Product Owner `01-prd.md`\n- System Architect (`02-arch.md`, 10 bytes)\n")), "{p}");
        assert!(
            !p.contains("# Title of") && !p.contains("Build a todo app"),
            "{p}"
        );
        let whole = render(&s, Stage::Sm, &[], Stage::Sm.prompt_source());
        assert!(
            whole.contains("# Title of 01-prd.md")
                && whole.contains("# Title of 02-arch.md")
                && whole.contains("Build a todo app"),
            "{whole}"
        );
    }

    /// The fenced example of the output form that a prompt section shows, as shown.
    fn shown(stage: Stage, round: &str) -> Option<String> {
        let text = section(stage.prompt_source(), round);
        let open = text.find("```json").or_else(|| text.find("```markdown"))?;
        let body_start = open + text[open..].find('\n')? + 1;
        let end = body_start + text[body_start..].find("\n```")?;
        Some(text[body_start..end].to_string())
    }

    /// The example as a model fills it in: its placeholders replaced.
    fn example(stage: Stage, round: &str) -> Option<String> {
        Some(
            shown(stage, round)?
                .replace("<your score, 0-100>", "81")
                .replace("Quality Score: N/100", "Quality Score: 81/100")
                .replace("<Pass, Pass with Risk or Fail>", "Pass with Risk"),
        )
    }

    #[test]
    fn example_scores_are_placeholders_a_model_cannot_copy() {
        for stage in Stage::ALL {
            for round in ["first", "revise"] {
                let Some(text) = shown(stage, round) else {
                    continue;
                };
                let read = submission::read(stage, &text);
                assert!(
                    read.as_ref().map_or(true, |s| s.reported_score.is_none()),
                    "{stage} {round}: the example states a score a model could copy"
                );
                let status = read
                    .ok()
                    .and_then(|s| submission::review_status(&s.document));
                assert_eq!(status, None, "{stage} {round}: the example states a status");
            }
        }
    }

    #[test]
    fn every_prompt_says_which_document_keys_are_read() {
        for stage in Stage::ALL {
            let text = format!(
                "{}{}",
                section(stage.prompt_source(), "first"),
                section(stage.prompt_source(), "revise")
            );
            assert!(
                stage
                    .document_fields()
                    .iter()
                    .any(|f| text.contains(&format!("`{f}`"))),
                "{stage} names none of its keys"
            );
        }
        let po = format!(
            "{}{}",
            section(Stage::Po.prompt_source(), "first"),
            section(Stage::Po.prompt_source(), "revise")
        );
        assert!(po.contains("`prd_draft`") && po.contains("`prd_updated`"));
    }

    #[test]
    fn the_architect_prompt_fits_what_is_being_built() {
        let cases = [
            (
                "Build a CLI that counts words in files",
                Kind::CommandLine,
                "exit codes",
            ),
            (
                "A command line tool to rename photos",
                Kind::CommandLine,
                "flags",
            ),
            ("A Rust crate for parsing TOML", Kind::Library, "public API"),
            ("A REST API service for invoices", Kind::Service, "scaled"),
            ("Build a team todo app", Kind::Service, "endpoints"),
            ("Make spreadsheets tidy", Kind::Unknown, "Fit the design"),
        ];
        for (objective, kind, phrase) in cases {
            assert_eq!(kind_of(objective), kind, "{objective}");
            let mut s = session();
            s.objective = objective.into();
            let p = render(&s, Stage::Architect, &[], Stage::Architect.prompt_source());
            assert!(p.contains(phrase), "{objective}: {p}");
        }
        // A tool is not asked for servers; a service is. A library with a small CLI is a
        // library whose tool is designed too.
        assert!(design_focus("Build a CLI").contains("Leave out servers"));
        let both = design_focus("A Python library for syslog parsing, with a small CLI");
        assert!(both.starts_with("This is a library."), "{both}");
        assert!(both.contains("It also has a command-line tool"), "{both}");
        assert_eq!(
            kind_of("A CLI that calls the GitHub API"),
            Kind::CommandLine
        );
        assert!(!design_focus("Build a web service").contains("Leave out servers"));
    }

    #[test]
    fn a_part_left_out_leaves_no_run_of_blank_lines() {
        assert_eq!(without_blank_runs("a\n\n\n\nb\n \n\nc"), "a\n\nb\n \nc");
        assert_eq!(without_blank_runs("a\n\nb\n"), "a\n\nb\n");
    }

    #[test]
    fn every_role_prompt_says_who_writes_it_and_what_a_codex_result_is() {
        let mut s = session();
        for stage in Stage::ALL {
            let p = render(&s, stage, &[], stage.prompt_source());
            assert!(
                p.contains("its reply is submitted as `claude_result`"),
                "{stage}: {p}"
            );
            assert!(
                !p.contains("codex"),
                "{stage}: one model, no word of a second"
            );
        }
        s.engines = vec![Engine::Claude, Engine::Codex];
        let po = render(&s, Stage::Po, &[], Stage::Po.prompt_source());
        assert!(po.contains("Two models write this document, each on its own"));
        assert!(po.contains("Codex MCP server"));
        assert!(po.contains("never writes a reply in the second model's name"));
        let dev = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
        assert!(dev.contains("This stage is meant for a second, independent model"));
        assert!(dev.contains("submits it as `claude_result`"));
        let sm = render(&s, Stage::Sm, &[], Stage::Sm.prompt_source());
        assert!(!sm.contains("codex"), "{sm}");
    }

    #[test]
    fn the_dev_prompt_is_not_tied_to_one_language() {
        let text = format!(
            "{}{}",
            section(Stage::Dev.prompt_source(), "role"),
            section(Stage::Dev.prompt_source(), "first")
        );
        for tied in [".rs`", ".py`", ".ts`", "cargo ", "npm ", "pytest"] {
            assert!(!text.contains(tied), "the dev prompt mentions {tied}");
        }
    }

    #[test]
    fn the_dev_prompt_names_the_approved_sprints_with_the_humans_words() {
        let mut s = session();
        let plan = s.record_mut(Stage::Sm);
        plan.sprints = (1..=3)
            .map(|n| crate::workflow::session::Sprint {
                number: n,
                title: format!("S{n}"),
            })
            .collect();
        assert_eq!(scope_of(s.record(Stage::Sm)), "all", "before approval");
        for (said, numbers, shown) in [
            ("all", vec![1, 2, 3], "all (sprints 1, 2 and 3)"),
            (
                "sprint 1 and 3",
                vec![1, 3],
                "sprints 1 and 3 only (approved as `sprint 1 and 3`)",
            ),
            ("2", vec![2], "sprint 2 only (approved as `2`)"),
        ] {
            let plan = s.record_mut(Stage::Sm);
            plan.scope = Some(said.into());
            plan.scope_sprints = Some(numbers);
            let p = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
            assert!(
                p.contains(&format!("**Scope the user approved:** {shown}\n")),
                "{said}: {p}"
            );
        }
    }

    /// A parent one of whose sprints another clone's story claimed on the team's remote:
    /// its development prompt leaves that sprint out of what this task builds.
    #[test]
    fn the_dev_prompt_of_a_parent_leaves_out_a_sprint_claimed_elsewhere() {
        let mut s = session();
        s.current_stage = Stage::Dev;
        let plan = s.record_mut(Stage::Sm);
        plan.sprints = (1..=2)
            .map(|n| crate::workflow::session::Sprint {
                number: n,
                title: format!("S{n}"),
            })
            .collect();
        plan.approved = Some(true);
        plan.scope = Some("all".into());
        plan.scope_sprints = Some(vec![1, 2]);
        let p = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
        assert!(
            p.contains("**Scope the user approved:** all (sprints 1 and 2)\n"),
            "{p}"
        );
        s.claimed = vec![crate::workflow::session::SprintClaim {
            sprint: 1,
            owner: "Mia".into(),
            branch: None,
            worktree: "/w/mia".into(),
            host: None,
            remote: "origin".into(),
            since: "2026-11-29T08:00:00+00:00".into(),
            gone: false,
            done: None,
        }];
        let p = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
        assert!(
            p.contains("**Scope the user approved:** all (sprints 1 and 2). They run as stories: sprint 1 held by stories (`stories`, `claimed`) and not built in this task; sprint 2 no story yet: each starts as a story of its own (`start` with `parent` and `sprint`). This task builds no sprint itself"),
            "{p}"
        );
    }

    /// The fix track's development report form has the `Failing Test` section its track
    /// note calls required; no other track's has it.
    #[test]
    fn the_fix_tracks_report_form_has_the_failing_test_section() {
        for (track, has) in [
            (crate::workflow::Track::Fix, true),
            (crate::workflow::Track::Quick, false),
            (crate::workflow::Track::Full, false),
        ] {
            let mut s = session();
            s.track = track;
            let p = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
            let form = &p[p.find("```markdown").expect("a form")..];
            let form = &form[..form[3..].find("```").expect("its end") + 3];
            assert_eq!(form.contains("\n## Failing Test\n"), has, "{track}: {form}");
            assert!(!p.contains("<!-- "), "{track}: markers left: {p}");
        }
    }

    /// A revision of the development puts the human's words first: where they say to leave
    /// a finding, the prompt does not tell the developer to address every one.
    #[test]
    fn a_development_revision_defers_to_the_humans_words_on_the_findings() {
        let mut s = session();
        s.track = crate::workflow::Track::Quick;
        let human = Decision {
            decided_by: crate::workflow::DecidedBy::Human,
            via: crate::workflow::Via::Cli,
            seen_digest: None,
            provenance: None,
            decider: None,
            cannot_ask: None,
        };
        let dev = s.record_mut(Stage::Dev);
        dev.iteration = 1;
        dev.feedback.push(Said::of(
            &human,
            "Fix the first finding; leave the other two, they are planned for later.",
        ));
        let p = render(&s, Stage::Dev, &[], Stage::Dev.prompt_source());
        assert!(p.contains("leave the other two"), "{p}");
        assert!(!p.contains("Address every finding"), "{p}");
        assert!(
            p.contains("a finding they\nsay to leave stays as it is"),
            "{p}"
        );
    }

    /// The final QA of a parent built as stories: its own session ran no checks (its
    /// stories did), which is not "no approved checks".
    #[test]
    fn the_final_qa_of_a_parent_built_as_stories_does_not_say_no_checks_are_approved() {
        let mut s = session();
        s.stories = vec![crate::workflow::session::StoryState {
            sprint: 1,
            session_id: "00000000-0000-4000-8000-000000000001".into(),
            task_name: "build-a-todo-app-s1".into(),
            owner: "Mia".into(),
            branch: None,
            worktree: "/w/s1".into(),
            stage: Stage::Qa,
            state: crate::workflow::State::Completed,
            updated_at: "2026-11-29T08:00:00.000Z".into(),
            review_status: Some("Pass".into()),
            gone: false,
        }];
        let qa = render(&s, Stage::Qa, &[], Stage::Qa.prompt_source());
        assert!(!qa.contains("no approved checks"), "{qa}");
        assert!(
            qa.contains("each story's session ran the approved checks"),
            "{qa}"
        );
    }

    #[test]
    fn every_stage_has_a_role_and_a_first_round_section() {
        for s in Stage::ALL {
            let text = s.prompt_source();
            assert!(section(text, "role").contains("# Role:"), "{s}");
            assert!(!section(text, "first").is_empty(), "{s}");
            assert!(!section(text, "revise").is_empty(), "{s}");
        }
    }

    #[test]
    fn the_closing_prompt_carries_the_objective_the_criteria_and_the_matrix() {
        use crate::workflow::trace::documents;
        let mut s = session();
        s.record_mut(Stage::Po).trace.defined = documents::prd(
            "## Functional Requirements\n- FR-1: Add a todo.\n- FR-2: Share.\n- AC-1 (FR-1): Given a list, when I add, then it shows.\n",
        )
        .0;
        s.record_mut(Stage::Sm).trace.sprints = documents::plan("## Sprint 1: A\nCovers: FR-1\n");
        let qa = render(&s, Stage::Qa, &[], Stage::Qa.prompt_source());
        for part in [
            "The objective as the user first wrote it: \"Build a todo app\"",
            "- AC-1: Given a list, when I add, then it shows.",
            "The matrix now: Trace: 2 requirements, 1 acceptance criterion; designed 0, planned 1. Planned in no sprint: FR-2.",
            "Ids in the approved scope, each needing a result (3): FR-1, FR-2, AC-1",
            "`Intent: met`",
        ] {
            assert!(qa.contains(part), "{part}\n{qa}");
        }
        // After the earlier stages' prompts, the criteria are counted: the PRD has them.
        let after = Repeat::Delta {
            new_answers: false,
            new_feedback: false,
        };
        let qa = render_round(&s, Stage::Qa, &[], Stage::Qa.prompt_source(), after);
        assert!(!qa.contains("Given a list, when I add"), "{qa}");
        assert!(
            qa.contains("- the 1 in the PRD, their ids among those below"),
            "{qa}"
        );
        // The roles before it are given the ids to name.
        let sm = render(&s, Stage::Sm, &[], Stage::Sm.prompt_source());
        assert!(
            sm.contains("The confirmed PRD's ids (3): FR-1, FR-2, AC-1"),
            "{sm}"
        );
        assert!(sm.contains("`Covers: FR-1, NFR-2`"));
    }

    #[test]
    fn the_ids_are_listed_once_in_a_run_and_whole_again_on_status() {
        use crate::workflow::trace::documents;
        let mut s = session();
        s.record_mut(Stage::Po).trace.defined = documents::prd(
            "## Functional Requirements\n- FR-1: Add a todo.\n- AC-1 (FR-1): Given a list, when I add, then it shows.\n",
        )
        .0;
        let new_stage = Repeat::Delta {
            new_answers: false,
            new_feedback: false,
        };
        let listed = "The confirmed PRD's ids (2): FR-1, AC-1";
        // The first stage that names them gets them; a later one, as listed before.
        let architect = Stage::Architect.prompt_source();
        let p = render_round(&s, Stage::Architect, &[], architect, new_stage);
        assert!(p.contains(listed), "{p}");
        let p = render_round(&s, Stage::Sm, &[], Stage::Sm.prompt_source(), new_stage);
        assert!(!p.contains(listed), "{p}");
        assert!(
            p.contains("The confirmed PRD's ids (2): as listed before"),
            "{p}"
        );
        // `status` (a whole prompt) lists them again.
        let whole = render(&s, Stage::Sm, &[], Stage::Sm.prompt_source());
        assert!(whole.contains(listed), "{whole}");
    }

    #[test]
    fn the_po_revision_is_told_what_the_server_found_of_the_ids() {
        let mut s = session();
        let rec = s.record_mut(Stage::Po);
        rec.iteration = 1;
        rec.trace.problems = vec!["ids defined more than once: FR-2".into()];
        let p = render(&s, Stage::Po, &[], Stage::Po.prompt_source());
        assert!(
            p.contains(
                "- Requirement ids (the server's reading): ids defined more than once: FR-2"
            ),
            "{p}"
        );
    }

    #[test]
    fn rendering_fills_every_placeholder() {
        let mut s = session();
        for stage in Stage::ALL {
            for revise in [false, true] {
                s.record_mut(stage).iteration = u32::from(revise);
                let p = render(&s, stage, &["Add metrics".into()], stage.prompt_source());
                assert!(!p.contains("{{"), "{stage}: {p}");
                assert!(p.contains("Build a todo app"));
                assert!(p.contains("build-a-todo-app"));
            }
        }
    }

    #[test]
    fn the_po_prompt_examples_parse_to_what_the_workflow_needs() {
        let first = submission::read(Stage::Po, &example(Stage::Po, "first").unwrap()).unwrap();
        assert!(first.document.starts_with("# Product Requirements"));
        assert_eq!(first.reported_score, Some(81));
        assert_eq!(first.questions.len(), 1);
        assert_eq!(first.gaps.len(), 1);
        let revised = submission::read(Stage::Po, &example(Stage::Po, "revise").unwrap()).unwrap();
        assert_eq!(revised.reported_score, Some(81));
        assert!(revised.questions.is_empty());
    }

    #[test]
    fn the_architect_prompt_examples_parse() {
        let first = submission::read(
            Stage::Architect,
            &example(Stage::Architect, "first").unwrap(),
        )
        .unwrap();
        assert!(first.document.starts_with("# System Architecture"));
        assert_eq!(first.questions.len(), 1);
        let revised = submission::read(
            Stage::Architect,
            &example(Stage::Architect, "revise").unwrap(),
        )
        .unwrap();
        assert_eq!(revised.reported_score, Some(81));
    }

    #[test]
    fn the_sm_prompt_example_yields_its_sprints() {
        let doc = submission::read(Stage::Sm, &example(Stage::Sm, "first").unwrap())
            .unwrap()
            .document;
        let sprints = submission::sprints(&doc);
        assert_eq!(sprints.len(), 2);
        assert_eq!(sprints[0].0, 1);
        assert_eq!(sprints[1].0, 2);
    }

    #[test]
    fn the_review_prompt_example_states_a_status() {
        let doc = submission::read(Stage::Review, &example(Stage::Review, "first").unwrap())
            .unwrap()
            .document;
        assert_eq!(
            submission::review_status(&doc).as_deref(),
            Some("Pass with Risk")
        );
    }

    #[test]
    fn the_qa_prompt_example_ends_with_a_score() {
        let sub = submission::read(Stage::Qa, &example(Stage::Qa, "first").unwrap()).unwrap();
        assert_eq!(sub.reported_score, Some(81));
    }

    #[test]
    fn the_dev_prompt_example_is_a_document() {
        let sub = submission::read(Stage::Dev, &example(Stage::Dev, "first").unwrap()).unwrap();
        assert!(sub.document.starts_with("# Implementation Report"));
    }

    #[test]
    fn revision_prompts_carry_answers_feedback_and_references_not_documents() {
        let mut s = session();
        let rec = s.record_mut(Stage::Po);
        rec.iteration = 1;
        rec.questions.push(crate::workflow::session::Question {
            id: "q1".into(),
            question: "Which platforms?".into(),
            context: None,
            round: 1,
        });
        rec.answers.insert("q1".into(), "Web only".into());
        rec.feedback
            .push(Said::of(&Decision::by_host(None), "Shorter please"));
        rec.gaps.push("no rollout plan".into());
        rec.draft_ref = Some(ContentRef::new(
            ".bmad-task/temp/x/po_draft_1.md".into(),
            &"long document ".repeat(1000),
            Utc::now(),
        ));
        let p = render(&s, Stage::Po, &[], Stage::Po.prompt_source());
        assert!(p.contains("Which platforms?") && p.contains("Web only"));
        assert!(p.contains("Shorter please"));
        assert!(
            p.contains("The last draft lacked (by its author): no rollout plan"),
            "the author's gaps feed the next round"
        );
        assert!(p.contains(".bmad-task/temp/x/po_draft_1.md"));
        assert!(p.contains("prd_updated"));
        assert!(p.len() < 6000, "the draft itself is not inlined");
        // The form of an assumption names no question of its own: q3 may be answered.
        assert!(p.contains("`Assumed <its id>: <what you assume>`"), "{p}");
        assert!(!p.contains("Assumed q"), "{p}");
    }
}
