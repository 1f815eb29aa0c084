//! The tool's input: one loosely required object whose schema comes from [`BmadTaskArgs`],
//! validated here per action so that every refusal names the field and what it expects.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use super::unused_arguments::FIELD_NAMES;
use crate::error::{Error, ErrorCode, Result};
use crate::lessons::Category;
pub use crate::settings::Limits;
use crate::settings::{MAX_OBJECTIVE_ENV, MAX_RESULT_ENV, MAX_TEXT_ENV};
use crate::store::{is_valid_task_name, SessionKey};
use crate::workflow::engine::{self, Engine};
use crate::workflow::{Action, Command, Decision, Stage, Track};

// Which fields a call needs depends on its `action`. The field descriptions are what a
// model reads of each argument, with every request in Claude Code: kept to what the
// argument is and when it is given (docs/spec.md §2).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BmadTaskArgs {
    /// `start`, then `submit` each stage's document; the human's `answer`, `confirm`,
    /// `approve`, `reject`; `status`, `list`; `remember`, `recall` lessons.
    pub action: Action,
    /// From `start` (or `task_name`).
    pub session_id: Option<String>,
    /// Instead of `session_id`.
    pub task_name: Option<String>,
    /// The project's absolute path (needed over HTTP).
    pub cwd: Option<String>,
    /// For `start`: what to build.
    pub objective: Option<String>,
    /// For `start`: `claude` (you), then `codex` only with a second model.
    #[schemars(with = "Option<Vec<Engine>>", extend("minItems" = 1, "uniqueItems" = true))]
    pub engines: Option<Vec<String>>,
    /// For `start`: `full` (default, six stages), `quick` (spec, dev, review), `fix` (a bug:
    /// failing test first).
    #[schemars(extend("enum" = ["full", "quick", "fix"]))]
    pub track: Option<String>,
    /// For a story's `start`: the parent task, with `sprint`.
    pub parent: Option<String>,
    /// The sprint the story builds.
    #[schemars(range(min = 1))]
    pub sprint: Option<u32>,
    /// For `submit`: the current stage; for lessons, a role.
    pub stage: Option<Stage>,
    /// For `submit`: what `role_prompt` asks of you.
    pub claude_result: Option<String>,
    /// For `submit`: the second model's result, never yours.
    pub codex_result: Option<String>,
    /// A BMAD document's path
    // (for `submit` at `po` or `architect`: the method's PRD or architecture, taken as the
    // document; kept this short since the description is sent with every request, and the
    // notice that offers the file says how to use it).
    pub document_file: Option<String>,
    /// For `answer`, `confirm`: question id → the human's answer.
    pub answers: Option<BTreeMap<String, String>>,
    /// False rejects.
    pub confirmed: Option<bool>,
    /// False rejects.
    pub approved: Option<bool>,
    /// The human's words: what to change (`reject`), or a note (`confirm`, `approve`).
    pub feedback: Option<String>,
    /// For `approve`: the sprints to build, `all` or e.g. `1`.
    pub scope: Option<String>,
    /// For `list`: a `next_cursor`.
    pub cursor: Option<String>,
    /// For `list`: only your own sessions.
    pub mine: Option<bool>,
    /// For a decision: the `document_digest` shown.
    pub digest: Option<String>,
    /// For `remember`: what went wrong and what to do instead.
    pub lesson: Option<String>,
    /// For `remember`: CC-FAIL, WRONG-ASSUMPTION, CONTEXT-LOSS, HALLUCINATION, ARCH-MISTAKE
    /// or PROCESS-SKIP.
    pub category: Option<String>,
    /// For `recall`: what to find (default: the objective).
    pub query: Option<String>,
}

/// A validated call.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Start {
        cwd: Option<String>,
        objective: String,
        /// The host's `engines`, checked; `None` leaves the choice to the objective.
        engines: Option<Vec<Engine>>,
        track: Track,
        /// A story: the parent's task name and the sprint it builds.
        story: Option<(String, u32)>,
    },
    List {
        cwd: Option<String>,
        cursor: Option<String>,
        /// Only the sessions of the human here.
        mine: bool,
    },
    Status {
        cwd: Option<String>,
        key: SessionKey,
    },
    Act {
        cwd: Option<String>,
        key: SessionKey,
        command: Command,
        decision: Decision,
    },
    /// `remember` and `recall` ([`lessons.rs`](crate::server::lessons)).
    Lessons(LessonCall),
}

/// `remember` or `recall`, checked.
#[derive(Debug, Clone, PartialEq)]
pub enum LessonCall {
    Remember {
        cwd: Option<String>,
        key: Option<SessionKey>,
        role: Option<Stage>,
        category: Category,
        lesson: String,
    },
    Recall {
        cwd: Option<String>,
        key: Option<SessionKey>,
        role: Option<Stage>,
        query: Option<String>,
    },
}

impl LessonCall {
    pub fn cwd_mut(&mut self) -> &mut Option<String> {
        match self {
            LessonCall::Remember { cwd, .. } | LessonCall::Recall { cwd, .. } => cwd,
        }
    }
}

/// Parses the raw tool arguments into a [`Call`], or an error that names the field.
pub fn parse(arguments: Option<Map<String, Value>>, limits: &Limits) -> Result<Call> {
    let map = arguments.unwrap_or_default();
    check_shape(&map)?;
    let used = super::unused_arguments::check(&map);
    // By value, so the (possibly megabyte) results are moved, not copied.
    let args: BmadTaskArgs = serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        describe_serde_error(&path, &inner)
    })?;
    used?;
    validate(args, limits)
}

/// A serde error about the arguments as a refusal that names the field, with the error
/// code of what is wrong (a missing field, an unknown action or stage).
fn describe_serde_error(path: &str, inner: &str) -> Error {
    // serde quotes the offending value whole (`invalid type: string "…"`), and the path
    // holds caller keys (`answers.<id>`).
    let inner = &crate::error::clip(inner, crate::error::QUOTE_CHARS);
    let path = clip(path);
    let path = path.as_str();
    let at_root = path == "." || path.is_empty();
    if at_root {
        if let Some(field) = between(inner, "missing field `", "`") {
            return Error::argument(
                ErrorCode::MissingField,
                format!(
                    "field `{field}` is required (one of: {})",
                    crate::workflow::action::names()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        return Error::argument(ErrorCode::InvalidArgument, inner.to_string());
    }
    let code = match path {
        "action" if inner.contains("unknown variant") => ErrorCode::UnknownAction,
        "stage" if inner.contains("unknown variant") => ErrorCode::InvalidStage,
        _ => ErrorCode::InvalidArgument,
    };
    Error::argument(code, format!("field `{path}`: {inner}"))
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)? + i;
    Some(&s[i..j])
}

/// Refuses what serde would misreport: a key that is not an argument (found here from
/// the keys, not from serde's message, which quotes caller text: an `action` value of
/// "unknown field `x`" must not read as an unknown field), and `action` or `stage` given
/// as a one-key object, which serde would take as the key's variant
/// (`{"action": {"start": null}}`) although the schema allows only a string.
fn check_shape(map: &Map<String, Value>) -> Result<()> {
    if let Some(key) = map.keys().find(|k| !FIELD_NAMES.contains(&k.as_str())) {
        let known: Vec<String> = FIELD_NAMES.iter().map(|f| format!("`{f}`")).collect();
        return Err(Error::argument(
            ErrorCode::UnknownField,
            format!(
                "field `{}` is not an argument of bmad-task; expected one of {}",
                clip(key),
                known.join(", ")
            ),
        ));
    }
    for field in ["action", "stage"] {
        if let Some(Value::Object(_)) = map.get(field) {
            return Err(Error::argument(
                ErrorCode::InvalidArgument,
                format!("field `{field}`: invalid type: object, expected a string"),
            ));
        }
    }
    Ok(())
}

pub(super) fn session_key(args: &BmadTaskArgs) -> Result<SessionKey> {
    let id = args.session_id.as_deref().map(|id| {
        let uuid = uuid::Uuid::parse_str(id.trim()).map_err(|_| {
            Error::argument(
                ErrorCode::InvalidSessionId,
                format!(
                    "field `session_id`: `{}` is not a UUID (as returned by `start`)",
                    clip(id)
                ),
            )
        })?;
        Ok::<_, Error>(uuid.hyphenated().to_string())
    });
    let id = id.transpose()?;
    let name = match &args.task_name {
        Some(name) if !is_valid_task_name(name.trim()) => {
            return Err(Error::argument(
                ErrorCode::InvalidTaskName,
                format!(
                    "field `task_name`: `{}` is not a task name (lowercase letters, digits and `-`, at most 50 characters, as returned by `start`)",
                    clip(name)
                ),
            ))
        }
        Some(name) => Some(name.trim().to_string()),
        None => None,
    };
    match (id, name) {
        (Some(id), Some(task_name)) => Ok(SessionKey::Both { id, task_name }),
        (Some(id), None) => Ok(SessionKey::Id(id)),
        (None, Some(name)) => Ok(SessionKey::TaskName(name)),
        (None, None) => Err(Error::argument(
            ErrorCode::MissingField,
            format!(
                "field `session_id` (or `task_name`) is required for `{}`",
                args.action
            ),
        )),
    }
}

/// A `digest` as given: 12 to 64 hex digits, lowercased.
fn seen_digest(digest: Option<&str>) -> Result<Option<String>> {
    let Some(d) = digest.map(str::trim) else {
        return Ok(None);
    };
    if !(12..=64).contains(&d.len()) || !d.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::argument(
            ErrorCode::InvalidArgument,
            format!(
                "field `digest`: `{}` is not a SHA-256 or a prefix of one (12 to 64 hex digits)",
                clip(d)
            ),
        ));
    }
    Ok(Some(d.to_ascii_lowercase()))
}

/// Refuses `value` over `limit` (docs/spec.md §12.2), naming the environment variable that
/// raises the limit.
fn check_size(field: &str, value: &str, limit: usize) -> Result<()> {
    if value.len() > limit {
        let variable = match field {
            "claude_result" | "codex_result" => MAX_RESULT_ENV,
            "objective" => MAX_OBJECTIVE_ENV,
            _ => MAX_TEXT_ENV,
        };
        return Err(Error::TooLarge {
            field: field.to_string(),
            size: value.len(),
            limit,
            variable,
        });
    }
    Ok(())
}

/// At most 80 characters of a caller's value, for quoting it in a message.
pub(super) fn clip(s: &str) -> String {
    crate::error::clip(s, 80)
}

fn validate(args: BmadTaskArgs, limits: &Limits) -> Result<Call> {
    for (field, value) in [
        ("cwd", &args.cwd),
        ("feedback", &args.feedback),
        ("scope", &args.scope),
        ("cursor", &args.cursor),
    ] {
        if let Some(v) = value {
            check_size(field, v, limits.text_bytes)?;
        }
    }
    let cwd = args.cwd.clone();
    let action = args.action;
    let digest = args.digest.clone();
    // The session is named before anything else of a session action is checked.
    let (key, command) = match action {
        Action::Start => return start(&args, cwd, limits),
        Action::Promote => return Err(promote(&session_key(&args)?)),
        Action::List => {
            return Ok(Call::List {
                cwd,
                cursor: args.cursor,
                mine: args.mine.unwrap_or(false),
            })
        }
        Action::Status => {
            let key = session_key(&args)?;
            return Ok(Call::Status { cwd, key });
        }
        Action::Remember | Action::Recall => return lessons(args, limits),
        Action::Submit => (session_key(&args)?, submit(args, limits)?),
        Action::Answer => {
            let key = session_key(&args)?;
            // Absent: a client with a dialog asks the human each open question; without
            // one, the workflow refuses an answer with nothing in it.
            let answers = answers(args.answers, limits)?;
            (key, Command::Answer { answers })
        }
        Action::Confirm | Action::ConfirmSave | Action::Approve | Action::Reject => {
            (session_key(&args)?, decision(action, args, limits)?)
        }
    };
    let decision = Decision::by_host(seen_digest(digest.as_deref())?);
    Ok(Call::Act {
        cwd,
        key,
        command,
        decision,
    })
}

/// A checked `submit`, its results moved (they may be megabytes).
fn submit(args: BmadTaskArgs, limits: &Limits) -> Result<Command> {
    for (field, value) in [
        ("claude_result", &args.claude_result),
        ("codex_result", &args.codex_result),
    ] {
        if let Some(v) = value {
            check_size(field, v, limits.result_bytes)?;
        }
    }
    if let Some(path) = &args.document_file {
        check_size("document_file", path, limits.text_bytes)?;
        if path.trim().is_empty() {
            return Err(Error::argument(
                ErrorCode::InvalidArgument,
                "field `document_file`: empty; name the method's document by its path in the project",
            ));
        }
    }
    Ok(Command::Submit {
        stage: args.stage,
        claude_result: args.claude_result,
        codex_result: args.codex_result,
        document_file: args
            .document_file
            .map(|p| crate::bmad_method::begin::draft_path(&p).to_string()),
    })
}

/// The `answers` given, each within the size limit; none given is none.
fn answers(
    given: Option<BTreeMap<String, String>>,
    limits: &Limits,
) -> Result<BTreeMap<String, String>> {
    let answers = given.unwrap_or_default();
    for (id, a) in &answers {
        check_size(&format!("answers.{}", clip(id)), a, limits.text_bytes)?;
    }
    Ok(answers)
}

/// A checked decision on a document: `confirm`, `approve` or `reject` (`confirmed: false`
/// and `approved: false` reject too).
fn decision(action: Action, args: BmadTaskArgs, limits: &Limits) -> Result<Command> {
    let accepted = match action {
        Action::Confirm | Action::ConfirmSave => args.confirmed,
        Action::Approve => args.approved,
        _ => Some(false),
    };
    let answers = answers(args.answers, limits)?;
    // `answers` with a rejection or an `approve` is refused by `used`.
    let accepts = accepted != Some(false) && action != Action::Reject;
    Ok(match (accepts, action) {
        (false, _) => Command::Reject {
            action,
            feedback: args.feedback,
        },
        (true, Action::Approve) => Command::Approve {
            scope: args.scope,
            note: args.feedback,
        },
        (true, _) => Command::Confirm {
            action,
            note: args.feedback,
            answers,
        },
    })
}

/// A checked `start`: the objective, the engines, the track, and for a story its parent and
/// sprint (docs/spec.md §18).
fn start(args: &BmadTaskArgs, cwd: Option<String>, limits: &Limits) -> Result<Call> {
    let story =
        match (&args.parent, args.sprint) {
            (Some(parent), Some(sprint)) => {
                let parent = parent.trim().to_string();
                if !is_valid_task_name(&parent) {
                    return Err(Error::argument(
                        ErrorCode::InvalidTaskName,
                        format!(
                            "field `parent`: `{}` is not a task name (as returned by `start`)",
                            clip(&parent)
                        ),
                    ));
                }
                Some((parent, sprint))
            }
            (None, None) => None,
            (Some(_), None) => return Err(Error::argument(
                ErrorCode::MissingField,
                "field `sprint` is required with `parent`: the approved sprint the story builds",
            )),
            (None, Some(_)) => return Err(Error::argument(
                ErrorCode::MissingField,
                "field `parent` is required with `sprint`: the task whose plan the sprint is in",
            )),
        };
    let track = match args.track.as_deref().map(str::trim) {
        None => Track::Full,
        Some(name) => Track::parse(name).ok_or_else(|| {
            Error::argument(
                ErrorCode::InvalidArgument,
                format!(
                    "field `track`: `{}` is not a track; expected one of `full`, `quick`, `fix` (a story is started with `parent` and `sprint`)",
                    clip(name)
                ),
            )
        })?,
    };
    if story.is_some() && args.track.is_some() {
        return Err(Error::argument(
            ErrorCode::InvalidArgument,
            "field `track`: a story runs development, review and QA of its sprint; leave `track` out with `parent` and `sprint`",
        ));
    }
    let objective = args.objective.as_deref().map(str::trim).unwrap_or("");
    if objective.is_empty() && story.is_none() {
        return Err(Error::argument(
            ErrorCode::MissingField,
            "field `objective` is required for `start`: say what to build",
        ));
    }
    check_size("objective", objective, limits.objective_bytes)?;
    let engines = args.engines.as_deref().map(|names| {
        engine::check_list(names, &Stage::required_engines()).map_err(|why| {
            Error::argument(
                ErrorCode::InvalidArgument,
                format!("field `engines`: {why}"),
            )
        })
    });
    let engines = engines.transpose()?;
    Ok(Call::Start {
        cwd,
        objective: objective.to_string(),
        engines,
        track: if story.is_some() { Track::Story } else { track },
        story,
    })
}

/// `promote` over the tool: refused, naming the human's command.
fn promote(key: &SessionKey) -> Error {
    let task = match key {
        SessionKey::TaskName(t) | SessionKey::Both { task_name: t, .. } => t.clone(),
        SessionKey::Id(_) => "<task>".into(),
    };
    Error::argument(
        ErrorCode::HumanRequired,
        format!(
            "`promote` is the human's decision: they run `bmad-mcp promote {task}` in a terminal in the project, if the task outgrew the quick track"
        ),
    )
}

/// A checked `remember` or `recall`.
fn lessons(args: BmadTaskArgs, limits: &Limits) -> Result<Call> {
    let key = match (&args.session_id, &args.task_name) {
        (None, None) => None,
        _ => Some(session_key(&args)?),
    };
    let missing = |what: &str| Error::argument(ErrorCode::MissingField, what.to_string());
    let call = if args.action == Action::Remember {
        let lesson = args.lesson.as_deref().map(str::trim).unwrap_or("");
        if lesson.is_empty() {
            return Err(missing(
                "field `lesson` is required for `remember`: the lesson, in a few sentences",
            ));
        }
        check_size("lesson", lesson, limits.text_bytes)?;
        let given = args.category.as_deref().unwrap_or("");
        let category = Category::parse(given).ok_or_else(|| {
            Error::argument(
                if given.is_empty() {
                    ErrorCode::MissingField
                } else {
                    ErrorCode::InvalidArgument
                },
                format!(
                    "field `category`: `{}` is none of {} (required for `remember`)",
                    clip(given),
                    Category::ALL.map(|c| c.name()).join(", ")
                ),
            )
        })?;
        if args.stage.is_none() && key.is_none() {
            return Err(missing("field `stage` (the role the lesson is for) is required for `remember` without a session"));
        }
        LessonCall::Remember {
            cwd: args.cwd,
            key,
            role: args.stage,
            category,
            lesson: lesson.to_string(),
        }
    } else {
        if let Some(q) = &args.query {
            check_size("query", q, limits.text_bytes)?;
        }
        let query = args.query.filter(|q| !q.trim().is_empty());
        if query.is_none() && key.is_none() {
            return Err(missing(
                "field `query` (or a session, whose objective is the query) is required for `recall`",
            ));
        }
        LessonCall::Recall {
            cwd: args.cwd,
            key,
            role: args.stage,
            query,
        }
    };
    Ok(Call::Lessons(call))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> Result<Call> {
        let Value::Object(m) = v else { panic!() };
        parse(Some(m), &Limits::default())
    }

    fn code(v: Value) -> (ErrorCode, String) {
        let e = call(v).unwrap_err();
        (e.code(), e.to_string())
    }

    #[test]
    fn malformed_calls_get_codes_and_messages_naming_the_field() {
        let id = "2f1e4c1a-8a4b-4c39-9d1f-1a2b3c4d5e6f";
        let cases: Vec<(Value, &str, &str)> = vec![
            (json!({}), "missing_field", "`action`"),
            (json!({"action": "explode"}), "unknown_action", "`action`"),
            (json!({"action": 3}), "invalid_argument", "`action`"),
            (json!({"action": "start"}), "missing_field", "`objective`"),
            (
                json!({"action": "start", "objective": "  "}),
                "missing_field",
                "`objective`",
            ),
            (
                json!({"action": "start", "objective": 5}),
                "invalid_argument",
                "`objective`",
            ),
            (
                json!({"action": "start", "objective": "x".repeat(5000)}),
                "too_large",
                "`objective`",
            ),
            (json!({"action": "status"}), "missing_field", "`session_id`"),
            (
                json!({"action": "status", "session_id": "../../etc"}),
                "invalid_session_id",
                "`session_id`",
            ),
            (
                json!({"action": "status", "task_name": "../x"}),
                "invalid_task_name",
                "`task_name`",
            ),
            (
                json!({"action": "status", "task_name": "/abs"}),
                "invalid_task_name",
                "`task_name`",
            ),
            (
                json!({"action": "submit", "session_id": id, "stage": "../.."}),
                "invalid_stage",
                "`stage`",
            ),
            (
                json!({"action": "submit", "session_id": id, "claude_result": 1}),
                "invalid_argument",
                "`claude_result`",
            ),
            (
                json!({"action": "answer", "session_id": id, "answers": ["a"]}),
                "invalid_argument",
                "`answers`",
            ),
            (
                json!({"action": "answer", "session_id": id, "answers": {"q1": 2}}),
                "invalid_argument",
                "`answers.q1`",
            ),
            (
                json!({"action": "confirm", "session_id": id, "confirmed": "yes"}),
                "invalid_argument",
                "`confirmed`",
            ),
            (
                json!({"action": "status", "session_id": id, "sesion": 1}),
                "unknown_field",
                "`sesion`",
            ),
            (
                json!({"action": "reject", "session_id": id, "feedback": "x".repeat(70_000)}),
                "too_large",
                "`feedback`",
            ),
        ];
        for (args, want_code, want_field) in cases {
            let (c, msg) = code(args.clone());
            assert_eq!(c, want_code, "{args}: {msg}");
            assert!(msg.contains(want_field), "{args}: {msg}");
        }
    }

    #[test]
    fn caller_text_in_a_value_never_reads_as_an_unknown_field() {
        // Found by fuzzing: the unknown-field check read serde's message, which quotes
        // the caller's value, so this action was refused as an unknown *field*.
        let (c, msg) = code(json!({"action": "unknown field `x`"}));
        assert_eq!(c, "unknown_action", "{msg}");
        assert!(msg.starts_with("field `action`"), "{msg}");
        let (c, msg) = code(json!({"action": "list", "a`b": 1}));
        assert_eq!(c, "unknown_field");
        assert!(msg.contains("field `a`b`"), "{msg}");
        let long = "k".repeat(200);
        let (c, msg) = code(json!({"action": "list", long.clone(): 1}));
        assert_eq!(c, "unknown_field");
        assert!(msg.contains(&format!("`{}…`", &long[..80])), "{msg}");
    }

    #[test]
    fn action_and_stage_are_strings_not_one_key_objects() {
        // Found by fuzzing: serde reads an enum from a one-key object, so
        // {"action": {"start": null}} was accepted as `start`.
        let id = "2f1e4c1a-8a4b-4c39-9d1f-1a2b3c4d5e6f";
        for (args, field) in [
            (
                json!({"action": {"start": null}, "objective": "x"}),
                "action",
            ),
            (json!({"action": {"q0": ""}}), "action"),
            (
                json!({"action": "submit", "session_id": id, "stage": {"po": null}}),
                "stage",
            ),
        ] {
            let (c, msg) = code(args.clone());
            assert_eq!(c, "invalid_argument", "{args}: {msg}");
            assert!(msg.starts_with(&format!("field `{field}`")), "{msg}");
        }
    }

    #[test]
    fn field_names_are_the_schema_properties() {
        let schema = serde_json::to_value(schemars::schema_for!(BmadTaskArgs)).unwrap();
        let mut props: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut names = FIELD_NAMES.to_vec();
        props.sort_unstable();
        names.sort_unstable();
        assert_eq!(props, names);
    }

    #[test]
    fn engines_are_checked_for_start_and_name_the_field() {
        let start = |engines: Value| {
            call(
                json!({"action": "start", "objective": "Rename the Codex class", "engines": engines}),
            )
        };
        let Call::Start { engines, .. } = start(json!(["claude"])).unwrap() else {
            panic!()
        };
        assert_eq!(engines, Some(vec![Engine::Claude]));
        let Call::Start { engines, .. } = start(json!(["claude", "codex"])).unwrap() else {
            panic!()
        };
        assert_eq!(engines, Some(vec![Engine::Claude, Engine::Codex]));
        let Call::Start { engines, .. } = start(Value::Null).unwrap() else {
            panic!()
        };
        assert_eq!(engines, None, "null is as absent: the objective decides");
        for (engines, says) in [
            (json!([]), "empty"),
            (json!(["claude", "gemini"]), "`gemini` is not an engine"),
            (json!(["claude", "codex", "codex"]), "listed twice"),
            (json!(["codex"]), "`claude`"),
            (json!(["codex", "claude"]), "must come first"),
            (json!("claude"), "expected a sequence"),
            (json!([{"claude": null}]), "expected a string"),
            (json!([1]), "expected a string"),
        ] {
            let e = start(engines.clone()).unwrap_err();
            assert_eq!(e.code(), "invalid_argument", "{engines}: {e}");
            let msg = e.to_string();
            assert!(msg.starts_with("field `engines"), "{engines}: {msg}");
            assert!(msg.contains(says), "{engines}: {msg}");
        }
        // The schema offers the two names, each once, at least one.
        let schema = crate::server::tool();
        let engines = &schema.input_schema["properties"]["engines"];
        let names: Vec<&Value> = engines["items"]["enum"]
            .as_array()
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        assert_eq!(names, [&json!("claude"), &json!("codex")], "{engines}");
        assert_eq!(engines["uniqueItems"], true);
        assert_eq!(engines["minItems"], 1);
    }

    #[test]
    fn over_limit_results_are_refused() {
        let id = "2f1e4c1a-8a4b-4c39-9d1f-1a2b3c4d5e6f";
        let big = "x".repeat(4 * 1024 * 1024 + 1);
        let (c, msg) = code(json!({"action": "submit", "session_id": id, "codex_result": big}));
        assert_eq!(c, "too_large");
        assert!(msg.contains("codex_result"));
    }

    #[test]
    fn confirm_and_approve_with_false_are_rejections() {
        let id = "2f1e4c1a-8a4b-4c39-9d1f-1a2b3c4d5e6f";
        let Call::Act { command, .. } = call(json!({"action": "confirm_save", "session_id": id, "confirmed": false, "feedback": "no"})).unwrap() else { panic!() };
        assert_eq!(
            command,
            Command::Reject {
                action: Action::ConfirmSave,
                feedback: Some("no".into())
            }
        );
        let Call::Act { command, .. } =
            call(json!({"action": "approve", "session_id": id, "approved": false})).unwrap()
        else {
            panic!()
        };
        assert_eq!(command.action(), Action::Approve);
        assert!(matches!(command, Command::Reject { .. }));
        let Call::Act { command, .. } =
            call(json!({"action": "approve", "task_name": "t", "scope": "sprint 1"})).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            command,
            Command::Approve {
                scope: Some("sprint 1".into()),
                note: None,
            }
        );
    }

    #[test]
    fn session_ids_are_normalised_and_both_keys_are_kept_to_be_checked() {
        let Call::Status { key, .. } = call(json!({"action": "status", "session_id": "2F1E4C1A-8A4B-4C39-9D1F-1A2B3C4D5E6F", "task_name": "x"})).unwrap() else { panic!() };
        assert_eq!(
            key,
            SessionKey::Both {
                id: "2f1e4c1a-8a4b-4c39-9d1f-1a2b3c4d5e6f".into(),
                task_name: "x".into()
            }
        );
    }
}
