//! Properties of tool-argument parsing (`server::args::parse`), and a structure-aware
//! generator of argument objects built from the tool's real field names.

use arbitrary::Arbitrary;
use bmad_mcp::server::args::{parse, Call, Limits};
use bmad_mcp::store::{is_valid_task_name, slug_for, task_name_candidate, SessionKey};
use bmad_mcp::workflow::{Action, Command, Engine};
use serde_json::{Map, Number, Value};

/// The fields of `BmadTaskArgs`, as the input schema names them (the server's own list,
/// so a new argument is generated as soon as the server has it).
pub use bmad_mcp::server::args::FIELD_NAMES as FIELDS;

pub const ACTIONS: [&str; 12] = [
    "start",
    "submit",
    "answer",
    "confirm",
    "confirm_save",
    "approve",
    "reject",
    "promote",
    "status",
    "list",
    "remember",
    "recall",
];

/// Engine names as hosts may write them, and one that is none.
const ENGINE_NAMES: [&str; 5] = ["claude", "codex", " Codex", "CLAUDE", "gpt"];

pub const STAGES: [&str; 8] = ["spec", "bug", "po", "architect", "sm", "dev", "review", "qa"];

/// The codes an argument refusal may carry (docs/spec.md §12); parsing never touches a session,
/// so no workflow or storage code can come out of it.
const ARGUMENT_CODES: [&str; 9] = [
    "human_required",
    "missing_field",
    "unknown_field",
    "unknown_action",
    "invalid_stage",
    "invalid_argument",
    "too_large",
    "invalid_session_id",
    "invalid_task_name",
];

fn str_of<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// Present and not null (serde reads a null optional field as absent).
fn given(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(|v| !v.is_null())
}

/// Parses `map` and checks the result against what the input allows.
pub fn check(map: &Map<String, Value>, limits: &Limits) {
    match parse(Some(map.clone()), limits) {
        Ok(call) => check_accepted(map, limits, call),
        Err(e) => check_refused(map, limits, e.code().as_str(), &e.to_string()),
    }
}

fn check_refused(map: &Map<String, Value>, limits: &Limits, code: &str, msg: &str) {
    assert!(!code.is_empty(), "empty error code");
    assert!(!msg.trim().is_empty(), "empty message for {code}");
    assert!(
        ARGUMENT_CODES.contains(&code),
        "unexpected code {code}: {msg}"
    );
    let unknown: Vec<&String> = map
        .keys()
        .filter(|k| !FIELDS.contains(&k.as_str()))
        .collect();
    let action = str_of(map, "action");
    match code {
        "unknown_field" => {
            assert!(!unknown.is_empty(), "unknown_field without one: {msg}");
            // The message names the unknown field as it was given (quoted, maybe clipped).
            assert!(
                unknown.iter().any(|k| names(msg, k)),
                "message does not name any of {unknown:?}: {msg}"
            );
            return;
        }
        "unknown_action" => {
            let a = action.expect("unknown_action for a non-string action");
            assert!(!ACTIONS.contains(&a), "known action {a} refused: {msg}");
        }
        "invalid_stage" => {
            let s = str_of(map, "stage").expect("invalid_stage for a non-string stage");
            assert!(!STAGES.contains(&s), "known stage {s} refused: {msg}");
        }
        "invalid_session_id" => {
            let id = str_of(map, "session_id").expect("invalid_session_id without an id");
            assert!(
                uuid::Uuid::parse_str(id.trim()).is_err(),
                "UUID refused: {id}"
            );
        }
        "invalid_task_name" => {
            assert!(!given(map, "session_id"));
            let t = str_of(map, "task_name").expect("invalid_task_name without a name");
            assert!(!is_valid_task_name(t.trim()), "valid name refused: {t}");
        }
        "too_large" => {
            assert!(
                over_a_limit(map, limits),
                "too_large with nothing too large: {msg}"
            );
        }
        "missing_field" => {
            let start_without_objective = action == Some("start")
                && str_of(map, "objective").is_none_or(|o| o.trim().is_empty());
            let no_key = !given(map, "session_id") && !given(map, "task_name");
            assert!(
                !given(map, "action") || start_without_objective || no_key,
                // (`answer` without `answers` is parsed: a dialog asks the human.)
                "missing_field with everything present: {msg}"
            );
        }
        _ => {}
    }
    // Every other refusal is explained in terms of a field of the tool.
    assert!(
        FIELDS.iter().any(|f| msg.contains(&format!("`{f}"))),
        "message names no field: {msg}"
    );
}

/// Whether `msg` quotes `key` (or the start of it, when it is long).
fn names(msg: &str, key: &str) -> bool {
    let head: String = key.chars().take(40).collect();
    msg.contains(&format!("`{head}"))
}

fn over_a_limit(map: &Map<String, Value>, limits: &Limits) -> bool {
    let longer = |key: &str, limit: usize| str_of(map, key).is_some_and(|s| s.len() > limit);
    let objective =
        str_of(map, "objective").is_some_and(|s| s.trim().len() > limits.objective_bytes);
    let answers = map
        .get("answers")
        .and_then(Value::as_object)
        .is_some_and(|a| {
            a.values()
                .any(|v| v.as_str().is_some_and(|s| s.len() > limits.text_bytes))
        });
    objective
        || answers
        || ["cwd", "feedback", "scope", "document_file"]
            .iter()
            .any(|k| longer(k, limits.text_bytes))
        || ["claude_result", "codex_result"]
            .iter()
            .any(|k| longer(k, limits.result_bytes))
}

fn check_accepted(map: &Map<String, Value>, limits: &Limits, call: Call) {
    for k in map.keys() {
        assert!(FIELDS.contains(&k.as_str()), "unknown field {k:?} accepted");
    }
    let action = str_of(map, "action").expect("accepted without a string action");
    assert!(
        ACTIONS.contains(&action),
        "unknown action {action} accepted"
    );
    if let Some(s) = map.get("stage").filter(|v| !v.is_null()) {
        assert!(s.as_str().is_some_and(|s| STAGES.contains(&s)), "stage {s}");
    }
    // Every text a call carries is within its limit.
    for k in ["cwd", "feedback", "scope"] {
        if let Some(v) = str_of(map, k) {
            assert!(v.len() <= limits.text_bytes, "{k} over the limit accepted");
        }
    }
    let cwd_given = str_of(map, "cwd").map(String::from);
    let cwd = match call {
        Call::Start {
            cwd,
            objective,
            engines,
            story,
            ..
        } => {
            assert_eq!(action, "start");
            // A story may leave the objective out (its sprint names the work).
            let given = str_of(map, "objective").unwrap_or_default();
            assert!(story.is_some() || !given.is_empty(), "start without objective");
            assert_eq!(objective, given.trim());
            assert!(story.is_some() || !objective.is_empty());
            assert!(objective.len() <= limits.objective_bytes);
            check_task_names(&objective);
            check_engines(map, engines.as_deref());
            cwd
        }
        Call::List { cwd, cursor, .. } => {
            assert_eq!(action, "list");
            assert_eq!(cursor.as_deref(), str_of(map, "cursor"));
            cwd
        }
        Call::Status { cwd, key } => {
            assert_eq!(action, "status");
            check_key(map, &key);
            cwd
        }
        Call::Lessons(mut call) => {
            assert!(matches!(action, "remember" | "recall"), "{action}");
            call.cwd_mut().take()
        }
        Call::Act {
            cwd,
            key,
            command,
            decision,
        } => {
            check_key(map, &key);
            // A tool call is the host's word; the digest it names is the one given.
            assert_eq!(decision.decided_by, bmad_mcp::workflow::DecidedBy::Host);
            assert_eq!(
                decision.seen_digest.as_deref(),
                str_of(map, "digest")
                    .map(|d| d.trim().to_ascii_lowercase())
                    .as_deref()
            );
            assert_eq!(
                command.action().name(),
                action,
                "command for another action"
            );
            check_command(map, limits, &command);
            cwd
        }
    };
    assert_eq!(cwd, cwd_given, "cwd changed");
}

/// The session key is the normalised UUID when one is given, else the trimmed name.
fn check_key(map: &Map<String, Value>, key: &SessionKey) {
    match key {
        SessionKey::Id(id) => {
            let given = str_of(map, "session_id").expect("id key without session_id");
            let want = uuid::Uuid::parse_str(given.trim()).expect("accepted id parses");
            assert_eq!(id, &want.hyphenated().to_string());
        }
        SessionKey::Both { id, task_name } => {
            let given = str_of(map, "session_id").expect("both keys without session_id");
            let want = uuid::Uuid::parse_str(given.trim()).expect("accepted id parses");
            assert_eq!(id, &want.hyphenated().to_string());
            assert!(is_valid_task_name(task_name));
            assert_eq!(
                Some(task_name.as_str()),
                str_of(map, "task_name").map(str::trim)
            );
        }
        SessionKey::TaskName(name) => {
            assert!(
                !given(map, "session_id"),
                "task name used over a session_id"
            );
            assert!(
                is_valid_task_name(name),
                "invalid task name accepted: {name:?}"
            );
            assert_eq!(Some(name.as_str()), str_of(map, "task_name").map(str::trim));
        }
    }
}

fn check_command(map: &Map<String, Value>, limits: &Limits, command: &Command) {
    let text = |k: &str| str_of(map, k).map(String::from);
    match command {
        Command::Submit {
            stage,
            claude_result,
            codex_result,
            document_file,
        } => {
            assert_eq!(stage.map(|s| s.id()), str_of(map, "stage"));
            assert_eq!(document_file, &text("document_file").map(|p| p.trim().to_string()));
            assert_eq!(claude_result, &text("claude_result"));
            assert_eq!(codex_result, &text("codex_result"));
            for r in [claude_result, codex_result].into_iter().flatten() {
                assert!(r.len() <= limits.result_bytes, "result over the limit");
            }
        }
        Command::Answer { answers } => {
            // Absent (or null): an empty set, which a dialog fills or the machine refuses.
            let none = Map::new();
            let given = match map.get("answers") {
                None | Some(Value::Null) => &none,
                Some(v) => v.as_object().expect("answers object"),
            };
            assert_eq!(answers.len(), given.len());
            for (k, v) in answers {
                assert_eq!(given.get(k).and_then(Value::as_str), Some(v.as_str()));
                assert!(v.len() <= limits.text_bytes, "answer over the limit");
            }
        }
        Command::Confirm { note, answers, .. } => {
            assert_ne!(map.get("confirmed"), Some(&Value::Bool(false)));
            // The human's words are kept: the feedback as the note, the answers whole.
            assert_eq!(note, &text("feedback"));
            let given = map.get("answers").and_then(Value::as_object);
            assert_eq!(answers.len(), given.map_or(0, Map::len));
        }
        Command::Approve { scope, note } => {
            assert_ne!(map.get("approved"), Some(&Value::Bool(false)));
            assert_eq!(scope, &text("scope"));
            assert_eq!(note, &text("feedback"));
        }
        Command::Reject { action, feedback } => {
            let flag = match *action {
                Action::Confirm | Action::ConfirmSave => Some("confirmed"),
                Action::Approve => Some("approved"),
                Action::Reject => None,
                other => panic!("reject named {other}"),
            };
            if let Some(flag) = flag {
                assert_eq!(map.get(flag), Some(&Value::Bool(false)));
            }
            assert_eq!(feedback, &text("feedback"));
        }
        Command::Promote { .. } => panic!("the tool gave a promote: it is the human's"),
    }
}

/// An accepted `engines` is the list given, each name a known engine once, the host's
/// own model first; none given, none kept.
fn check_engines(map: &Map<String, Value>, kept: Option<&[Engine]>) {
    let Some(given) = map.get("engines").filter(|v| !v.is_null()) else {
        assert_eq!(kept, None, "engines kept though none were given");
        return;
    };
    let names = given.as_array().expect("engines accepted that are not a list");
    let kept = kept.expect("engines given but not kept");
    assert_eq!(names.len(), kept.len());
    for (name, engine) in names.iter().zip(kept) {
        let name = name.as_str().expect("an engine that is not a string");
        assert!(engine.id().eq_ignore_ascii_case(name.trim()), "{name:?} read as {engine}");
    }
    assert_eq!(kept.first(), Some(&Engine::HOST), "{kept:?}");
    for (i, e) in kept.iter().enumerate() {
        assert!(!kept[..i].contains(e), "{e} twice in {kept:?}");
    }
}

/// The task names `start` derives from an objective can only name a directory directly
/// under `.claude/specs/`.
fn check_task_names(objective: &str) {
    let base = slug_for(objective);
    assert!(is_valid_task_name(&base), "slug {base:?} of {objective:?}");
    for n in [0, 1, 9, 10, 12345, u32::MAX] {
        let c = task_name_candidate(&base, n);
        assert!(is_valid_task_name(&c), "candidate {c:?} of {base:?}");
        if n > 0 {
            assert!(c.ends_with(&format!("-{n}")));
        }
    }
}

// ---------------------------------------------------------------------------
// Structure-aware inputs: objects made of the tool's own field names, with values that
// are mostly of the right type and sometimes not, so the fuzzer gets past the shape
// checks into validation.

#[derive(Debug, Arbitrary)]
pub struct ArgsInput {
    pub limits: (u8, u8, u8),
    pub action: ActionValue,
    pub fields: Vec<(Key, FieldValue)>,
}

#[derive(Debug, Arbitrary)]
pub enum ActionValue {
    Known(u8),
    Other(FieldValue),
    Absent,
}

#[derive(Debug, Arbitrary)]
pub enum Key {
    Known(u8),
    Other(String),
}

#[derive(Debug, Arbitrary)]
pub enum FieldValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(Text),
    Uuid { bits: u128, upper: bool, pad: bool },
    Stage(u8),
    Action(u8),
    Answers(Vec<(AnswerKey, Text)>),
    /// A list of engine names, known ones mostly (for `engines`).
    Engines(Vec<u8>),
    List(Vec<Text>),
    Object(Vec<(String, Text)>),
}

#[derive(Debug, Arbitrary)]
pub enum AnswerKey {
    Question(u8),
    Other(String),
}

#[derive(Debug, Arbitrary)]
pub enum Text {
    Free(String),
    /// One character repeated (up to 2,100 times, just past the largest fuzzed limit):
    /// reaches the size limits cheaply.
    Repeat(char, u16),
    Padded(String),
    TaskName(String),
}

impl Text {
    fn build(&self) -> String {
        match self {
            Text::Free(s) => s.clone(),
            Text::Repeat(c, n) => std::iter::repeat_n(*c, usize::from(*n % 2100)).collect(),
            Text::Padded(s) => format!("  \t{s}\n "),
            Text::TaskName(s) => slug_for(s),
        }
    }
}

impl FieldValue {
    fn build(&self) -> Value {
        match self {
            FieldValue::Null => Value::Null,
            FieldValue::Bool(b) => Value::Bool(*b),
            FieldValue::Int(i) => Value::from(*i),
            FieldValue::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            FieldValue::Text(t) => Value::String(t.build()),
            FieldValue::Uuid { bits, upper, pad } => {
                let mut s = uuid::Uuid::from_u128(*bits).hyphenated().to_string();
                if *upper {
                    s = s.to_uppercase();
                }
                if *pad {
                    s = format!(" {s}\n");
                }
                Value::String(s)
            }
            FieldValue::Stage(i) => Value::String(STAGES[usize::from(*i) % STAGES.len()].into()),
            FieldValue::Action(i) => Value::String(ACTIONS[usize::from(*i) % ACTIONS.len()].into()),
            FieldValue::Answers(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, t)| {
                        let k = match k {
                            AnswerKey::Question(n) => format!("q{}", n % 8),
                            AnswerKey::Other(s) => s.clone(),
                        };
                        (k, Value::String(t.build()))
                    })
                    .collect(),
            ),
            FieldValue::Engines(picks) => Value::Array(
                picks
                    .iter()
                    .map(|i| ENGINE_NAMES[usize::from(*i) % ENGINE_NAMES.len()].into())
                    .collect(),
            ),
            FieldValue::List(items) => {
                Value::Array(items.iter().map(|t| Value::String(t.build())).collect())
            }
            FieldValue::Object(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, t)| (k.clone(), Value::String(t.build())))
                    .collect(),
            ),
        }
    }
}

impl ArgsInput {
    /// The argument object and the limits to parse it with (small, so that the size
    /// checks are reached with short inputs).
    pub fn build(&self) -> (Map<String, Value>, Limits) {
        let mut map = Map::new();
        match &self.action {
            ActionValue::Known(i) => {
                map.insert(
                    "action".into(),
                    ACTIONS[usize::from(*i) % ACTIONS.len()].into(),
                );
            }
            ActionValue::Other(v) => {
                map.insert("action".into(), v.build());
            }
            ActionValue::Absent => {}
        }
        for (k, v) in &self.fields {
            let k = match k {
                Key::Known(i) => FIELDS[usize::from(*i) % FIELDS.len()].to_string(),
                Key::Other(s) => s.clone(),
            };
            map.insert(k, v.build());
        }
        let limits = Limits {
            result_bytes: 1 + usize::from(self.limits.0) * 8,
            objective_bytes: 1 + usize::from(self.limits.1),
            text_bytes: 1 + usize::from(self.limits.2) * 2,
            lock_wait: bmad_mcp::files::DEFAULT_LOCK_WAIT,
        };
        (map, limits)
    }
}
