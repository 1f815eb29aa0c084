//! The tool's output (SPEC §10): one JSON object, declared as the tool's `outputSchema`
//! and sent as `structuredContent`. Everything the model and the human need is in it;
//! documents are referenced by path, never inlined.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Error;
use crate::prompts;
use crate::store::ListEntry;
use crate::workflow::session::{Question, ScoreSource, Sprint};
use crate::workflow::{allowed_actions, Engine, Facts, Session, Stage, State};

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
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AnsweredQuestion {
    pub id: String,
    pub question: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// What the host needs to generate the next document.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Context {
    pub objective: String,
    /// Where this task's documents are saved.
    pub specs_dir: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<AnsweredQuestion>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub feedback: Vec<String>,
    /// The documents of earlier stages: read them from disk.
    pub documents: Vec<DocumentRef>,
    /// The draft being revised, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_draft: Option<String>,
    /// For development: the sprint scope the human approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema, Default)]
pub struct Reply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<State>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_user_confirmation: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_type: Option<InteractionType>,
    /// For the human, in English: what happened and what they are asked.
    pub user_message: String,
    /// The actions the workflow waits for now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending_user_actions: Option<Vec<String>>,
    /// The prompt for the host's model, rendered for this stage and round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engines: Option<Vec<Engine>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<Context>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores: Option<BTreeMap<Engine, u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_source: Option<ScoreSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate_passed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub questions: Option<Vec<Question>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gaps: Option<Vec<String>>,
    /// What a below-gate document should add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guidance: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notices: Option<Vec<String>>,
    /// The document the human should read now (relative to the project).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sprints: Option<Vec<Sprint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_status: Option<String>,
    /// `status`: the session as stored (documents are references).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
    /// `list`: the project's sessions, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<ListEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// With an error about a known session: what is legal now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_actions: Option<Vec<String>>,
}

fn some_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// The actions a state waits for (never `status`, which is always allowed).
pub fn pending_actions(state: State) -> Vec<String> {
    allowed_actions(state)
        .into_iter()
        .filter(|a| *a != "status" && *a != "confirm_save")
        .map(String::from)
        .collect()
}

/// The reply after an action (or for `status`), from the session as it now stands.
pub fn for_session(s: &Session, facts: &Facts, action: &str) -> Reply {
    let stage = s.current_stage;
    let rec = s.current();
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
        stage: Some(stage),
        state: Some(state),
        stage_description: Some(format!("{}: {}", stage.role(), stage.description())),
        requires_user_confirmation: Some(interaction == InteractionType::UserDecision),
        interaction_type: Some(interaction),
        pending_user_actions: Some(pending_actions(state)),
        notices: some_vec(facts.notices.clone()),
        ..Reply::default()
    };

    // The scored result of this action (or the current stage's latest, for status).
    let scored_stage = facts.completed_stage.unwrap_or(stage);
    let scored = s.record(scored_stage);
    if action == "submit" || action == "status" {
        r.score = scored.score;
        r.scores = (!scored.scores.is_empty()).then(|| scored.scores.clone());
        r.score_source = scored.score_source;
        r.gate_passed = scored.gate_passed;
        r.iteration = (scored.iteration > 0).then_some(scored.iteration);
        r.review_status = scored.review_status.clone();
    }
    r.artifact_path = facts.review_path.clone();

    let stage_name = stage.role();
    let mut msg = String::new();
    if let Some(done) = facts.completed_stage {
        if let Some(a) = &s.record(done).artifact {
            msg.push_str(&format!(
                "{} stage complete: {} saved ({} bytes). ",
                done.role(),
                a.path,
                a.size
            ));
        }
    }
    match state {
        State::Generating | State::Refining => {
            r.role_prompt = Some(prompts::render(s, stage, &facts.guidance));
            r.engines = Some(s.engines_for(stage));
            r.context = Some(context(s, stage));
            r.guidance = some_vec(facts.guidance.clone());
            let engines: Vec<&str> = s.engines_for(stage).iter().map(|e| e.id()).collect();
            let doing = if state == State::Generating {
                "generate"
            } else {
                "revise"
            };
            if state == State::Refining && action == "submit" {
                if let (Some(score), Some(gate)) = (rec.score, stage.passing_score()) {
                    msg.push_str(&format!(
                        "The document scored {score}/100 ({}), below the gate of {gate}. ",
                        source_word(rec.score_source)
                    ));
                }
            }
            if state == State::Refining && action == "answer" {
                msg.push_str("Answers recorded. ");
            }
            if state == State::Refining
                && matches!(action, "reject" | "confirm" | "confirm_save" | "approve")
            {
                msg.push_str("Sent back for revision. ");
            }
            if stage == Stage::Dev && state == State::Generating {
                let sm = s.record(Stage::Sm);
                msg.push_str(&format!(
                    "Sprint plan approved; scope to build: {}. ",
                    sm.scope.as_deref().unwrap_or("all")
                ));
                r.sprints = some_vec(sm.sprints.clone());
            }
            msg.push_str(&format!(
                "Stage {} ({stage_name}): {doing} the document with `role_prompt` (engines: {}) and `submit` it.",
                stage.id(),
                engines.join(", ")
            ));
        }
        State::Clarifying => {
            let open = rec.open_questions();
            if let Some(score) = rec.score {
                msg.push_str(&format!(
                    "The {} draft scored {score}/100 ({}). ",
                    stage_name,
                    source_word(rec.score_source)
                ));
            }
            msg.push_str("Please answer these questions:\n");
            for q in &open {
                msg.push_str(&format!("- {}: {}\n", q.id, q.question));
            }
            msg.push_str("Then call `answer` with {\"<id>\": \"<answer>\", …}.");
            r.questions = Some(open);
            r.gaps = some_vec(rec.gaps.clone());
        }
        State::AwaitingConfirmation => {
            let path = facts
                .review_path
                .clone()
                .or_else(|| rec.artifact.as_ref().map(|a| a.path.clone()))
                .or_else(|| rec.draft_ref.as_ref().map(|d| d.file_path.clone()))
                .unwrap_or_default();
            r.artifact_path = Some(path.clone());
            let score = rec.score.unwrap_or(0);
            if rec.gate_passed == Some(true) {
                msg.push_str(&format!(
                    "The {stage_name} document scored {score}/100 and passed the quality gate. Please review {path}, then `confirm` to accept it and move on, or `reject` with feedback."
                ));
            } else {
                msg.push_str(&format!(
                    "The {stage_name} document is still at {score}/100, below the gate, after {} submissions. Please read {path} and decide: `confirm` to accept it anyway, or `reject` with feedback.",
                    rec.iteration
                ));
                r.guidance = some_vec(facts.guidance.clone());
            }
            r.gaps = some_vec(rec.gaps.clone());
        }
        State::AwaitingApproval => {
            let path = rec
                .artifact
                .as_ref()
                .map(|a| a.path.clone())
                .unwrap_or_default();
            r.artifact_path = Some(path.clone());
            r.sprints = Some(rec.sprints.clone());
            msg.push_str(&format!("The sprint plan is saved at {path}"));
            if rec.sprints.is_empty() {
                msg.push_str(" (no `## Sprint N: Title` headings were found). ");
            } else {
                msg.push_str(&format!(" with {} sprints:\n", rec.sprints.len()));
                for sp in &rec.sprints {
                    msg.push_str(&format!("- Sprint {}: {}\n", sp.number, sp.title));
                }
            }
            msg.push_str("Please `approve` it with the scope to build (`all`, the default, or e.g. `sprint 1`), or `reject` with feedback.");
        }
        State::Completed => {
            msg.push_str("The workflow is complete. Documents:\n");
            for a in &s.artifacts {
                msg.push_str(&format!("- {a}\n"));
            }
            msg.truncate(msg.trim_end().len());
        }
    }
    r.user_message = msg;
    r
}

fn source_word(s: Option<ScoreSource>) -> &'static str {
    match s {
        Some(ScoreSource::Reported) => "reported by the author",
        Some(ScoreSource::Estimated) => "estimated by the server: no score was stated",
        None => "unscored",
    }
}

fn context(s: &Session, stage: Stage) -> Context {
    let rec = s.record(stage);
    Context {
        objective: s.objective.clone(),
        specs_dir: s.specs_dir(),
        answers: rec
            .questions
            .iter()
            .map(|q| AnsweredQuestion {
                id: q.id.clone(),
                question: q.question.clone(),
                answer: rec.answers.get(&q.id).cloned(),
            })
            .collect(),
        feedback: rec.feedback.clone(),
        documents: Stage::ALL
            .into_iter()
            .filter(|st| *st < stage)
            .filter_map(|st| {
                s.record(st).final_result_ref.as_ref().map(|d| DocumentRef {
                    stage: st,
                    path: d.file_path.clone(),
                    size: d.size,
                    summary: d.summary.clone(),
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
        scope: (stage >= Stage::Dev)
            .then(|| s.record(Stage::Sm).scope.clone())
            .flatten(),
    }
}

pub fn for_start(s: &Session) -> Reply {
    let mut r = for_session(s, &Facts::default(), "start");
    r.user_message = format!(
        "Started task `{}` (session {}). Its documents will be saved in {}/. {}",
        s.task_name,
        s.session_id,
        s.specs_dir(),
        r.user_message
    );
    r
}

pub fn for_status(s: &Session) -> Reply {
    let mut r = for_session(s, &Facts::default(), "status");
    r.session = Some(s.clone());
    r
}

pub fn for_list(sessions: Vec<ListEntry>, project: &str) -> Reply {
    Reply {
        user_message: format!("{} session(s) in {project}.", sessions.len()),
        sessions: Some(sessions),
        ..Reply::default()
    }
}

/// A tool error: code and message, plus the session's state where one is known.
pub fn for_error(e: &Error, session: Option<&Session>) -> Reply {
    let mut r = Reply {
        user_message: format!("Error ({}): {e}", e.code()),
        error: Some(ErrorBody {
            code: e.code().to_string(),
            message: e.to_string(),
        }),
        ..Reply::default()
    };
    if let Some(s) = session {
        r.session_id = Some(s.session_id.clone());
        r.task_name = Some(s.task_name.clone());
        r.stage = Some(s.current_stage);
        r.state = Some(s.current_state);
        r.allowed_actions = Some(
            allowed_actions(s.current_state)
                .into_iter()
                .map(String::from)
                .collect(),
        );
    }
    r
}
