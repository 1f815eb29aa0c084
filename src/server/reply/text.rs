//! The reply as the model reads it (docs/spec.md §10, "Two readers"): plain text, one
//! field a line (`key: value`; `stage` and `state` share one), nested values indented
//! beneath their key, lists as `- ` items, and the role prompt last, as the Markdown it
//! is. A host that hands its model the tool's text (Claude Code when a result has no
//! `structuredContent`) shows this; the field names are the ones `next_step` refers to
//! (`user_message`, `role_prompt`, `artifact_path`, …), so an instruction reads the same
//! in either form.

use serde_json::{Map, Value};

/// The fields written first, in this order; the others follow by name, and `role_prompt`
/// always comes last.
const FIRST: [&str; 6] = [
    "user_message",
    "next_step",
    "session_id",
    "task_name",
    "stage",
    "state",
];

/// What the text of one reply leaves out because the model has it already (docs/spec.md
/// §10.8); `structuredContent` keeps it all.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlreadySaid {
    /// Fields the model has: the session id its call named, a `trace` that reads as in the
    /// reply to the step before.
    pub fields: Vec<&'static str>,
    /// Notices about the call itself: that the human decided in the dialog the call opened.
    pub notices: Vec<String>,
}

/// The reply's JSON value as text, without what the model knows already ([`AlreadySaid`]).
pub fn render(reply: &Value, known: &AlreadySaid) -> String {
    let Value::Object(fields) = reply else {
        return reply.to_string();
    };
    let mut out = String::new();
    let shown = |key: &str, v: &Value| !known.fields.contains(&key) && !left_out(key, v, fields);
    for key in FIRST {
        match fields.get(key).filter(|v| shown(key, v)) {
            // Its first line beside the key: the key alone would be a line said in every
            // reply, which says nothing.
            Some(Value::String(s)) if key == "user_message" && s.contains('\n') => {
                let (first, rest) = s.split_once('\n').unwrap_or((s, ""));
                out.push_str(&format!("user_message: {first}\n"));
                for line in rest.trim_end().lines() {
                    out.push_str(&format!("  {line}\n"));
                }
            }
            // Where the session is, on one line: the pair changes less often than either
            // alone, and two lines said in nearly every reply would say it twice.
            Some(Value::String(stage)) if key == "stage" => match fields.get("state") {
                Some(Value::String(state)) if shown("state", &fields["state"]) => {
                    out.push_str(&format!("stage: {stage}; state: {state}\n"));
                }
                _ => out.push_str(&format!("stage: {stage}\n")),
            },
            Some(_) if key == "state" && fields.get("stage").is_some_and(|v| shown("stage", v)) => {
            }
            Some(v) => field(&mut out, 0, key, v),
            None => {}
        }
    }
    for (key, v) in fields {
        if FIRST.contains(&key.as_str()) || key == "role_prompt" || !shown(key, v) {
            continue;
        }
        match key.as_str() {
            "session" => stored_session(&mut out, v),
            "notices" => field(&mut out, 0, key, &new_notices(fields, v, known)),
            "decisions" => latest_decision(&mut out, v),
            "checks" => super::checks_text::render(&mut out, v),
            // Its counts on its line, its lists beneath.
            "trace" if v.is_object() => {
                out.push_str("trace:");
                inline_object(&mut out, 1, v.as_object().expect("an object"));
            }
            // `user_message` says the error's message already; the code is kept.
            "error" => {
                let mut e = v.clone();
                let message = e.get("message").and_then(Value::as_str).unwrap_or_default();
                if !message.is_empty() && said(fields, "user_message").contains(message) {
                    e.as_object_mut().map(|e| e.remove("message"));
                }
                field(&mut out, 0, key, &e);
            }
            _ => field(&mut out, 0, key, v),
        }
    }
    // Its first line beside the key, as `user_message`'s: `role_prompt:` alone would be a
    // line said in every reply that hands a prompt over.
    if let Some(Value::String(prompt)) = fields.get("role_prompt") {
        out.push_str("role_prompt: ");
        out.push_str(prompt.trim());
        out.push('\n');
    }
    out
}

/// The notices the model does not have: not those it knows ([`AlreadySaid`]), nor the
/// checks' outcome where `checks:` gives it.
fn new_notices(fields: &Map<String, Value>, v: &Value, known: &AlreadySaid) -> Value {
    let checks_shown = fields
        .get("checks")
        .and_then(|c| c["checks"].as_array())
        .is_some_and(|c| !c.is_empty());
    let outcome = |n: &Value| {
        checks_shown
            && n.as_str()
                .is_some_and(|n| n.starts_with(crate::workflow::machine::CHECKS_RAN))
    };
    v.as_array()
        .into_iter()
        .flatten()
        .filter(|n| !known.notices.iter().any(|k| n.as_str() == Some(k)))
        .filter(|n| !outcome(n))
        .cloned()
        .collect()
}

/// How `role_prompt_source` names a prompt made from an installed BMAD method.
const BMAD_SOURCE: &str = "bmad-method ";

/// The fields the text leaves out, each because another field, or the role prompt, says
/// it already (programs find them all in `structuredContent`): the stage's description
/// and the interaction type, `requires_user_confirmation` and the pending actions beside a
/// `next_step` (it says what to do, and when the human decides); an `artifact_path` that
/// `user_message` names and `next_step` does not refer to; the score, whether it passed
/// and who scored it where `user_message` gives the score; a built-in prompt's source,
/// and beside a built-in prompt the engines and the context (the prompt names the
/// documents, the draft and who submits what; so does a BMAD method's, the built-in one
/// with a persona that names its files); the task's name beside its session id;
/// questions and sprints that `user_message` (or the role prompt) lists already; the `full`
/// track, the default; a first submission's `iteration`; a project summary that names no
/// stack, checks or lessons.
fn left_out(key: &str, v: &Value, fields: &Map<String, Value>) -> bool {
    // A BMAD method's prompt is the built-in one with the agent's persona, which names
    // the files it was made from.
    let source = fields.get("role_prompt_source").and_then(Value::as_str);
    let built_in_prompt = fields.contains_key("role_prompt")
        && source.is_some_and(|s| s == "built-in" || s.starts_with(BMAD_SOURCE));
    match key {
        "stage_description" | "interaction_type" => true,
        // `next_step` says when the human decides.
        "requires_user_confirmation" => fields.contains_key("next_step"),
        "artifact_path" => {
            v.as_str()
                .is_some_and(|p| said(fields, "user_message").contains(p))
                && !said(fields, "next_step").contains("`artifact_path`")
        }
        "pending_user_actions" => fields.contains_key("next_step"),
        "role_prompt_source" => built_in_prompt,
        "engines" | "context" => built_in_prompt,
        "task_name" => fields.contains_key("session_id"),
        // The default track says nothing; `quick`, `fix` and `story` are said.
        "track" => v.as_str() == Some("full"),
        // A first submission: the role prompt numbered it.
        "iteration" => v.as_u64() == Some(1),
        // A project with no stack, checks or lessons: nothing to say but the resource.
        "project" => {
            v["stack"].as_array().is_some_and(Vec::is_empty)
                && v["checks"]
                    == serde_json::json!({"approved": [], "gates": "auto", "waiting_for_approval": false})
                && v["lesson_files"] == 0
        }
        // `user_message` gives the score in words, with whether it passed and who scored.
        "score" | "gate_passed" | "score_source" => fields
            .get("score")
            .and_then(Value::as_u64)
            .is_some_and(|n| said(fields, "user_message").contains(&format!("{n}/100"))),
        "questions" => listed(fields, v, |q| {
            Some(format!(
                "- {}: {}",
                q["id"].as_str()?,
                q["question"].as_str()?
            ))
        }),
        "sprints" => listed(fields, v, |sp| {
            Some(format!(
                "- Sprint {}: {}",
                sp["number"],
                sp["title"].as_str()?
            ))
        }),
        _ => false,
    }
}

fn said<'a>(fields: &'a Map<String, Value>, key: &str) -> &'a str {
    fields.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether `user_message` (or `role_prompt`) already lists every item of `v`, each as
/// `line` writes it.
fn listed(fields: &Map<String, Value>, v: &Value, line: impl Fn(&Value) -> Option<String>) -> bool {
    let (message, prompt) = (said(fields, "user_message"), said(fields, "role_prompt"));
    v.as_array().is_some_and(|items| {
        items
            .iter()
            .all(|item| line(item).is_some_and(|l| message.contains(&l) || prompt.contains(&l)))
    })
}

/// `status`'s decisions as the model reads them: the latest, who made it and how, and how
/// many there are; every `status` would otherwise list again the ones the model read in
/// the last. The others, and when each was taken, are in the session file (`session`'s
/// `record`) and `structuredContent`.
fn latest_decision(out: &mut String, v: &Value) {
    let all = v.as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(last) = all.last() else {
        return;
    };
    let mut last = last.clone();
    last.as_object_mut().map(|d| d.remove("at"));
    match all.len() {
        1 => out.push_str("decisions:\n"),
        n => out.push_str(&format!(
            "decisions: the latest of {n} (all in the session's record):\n"
        )),
    }
    indent(out, 1);
    out.push('-');
    match last.as_object() {
        Some(o) => inline_object(out, 1, o),
        None => value(out, 1, &last),
    }
}

/// `status`'s stored session: its documents, and where the whole record is.
fn stored_session(out: &mut String, v: &Value) {
    out.push_str("session:\n");
    let artifacts: Vec<&str> = v
        .get("artifacts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // By name, under their folder when they all lie in the first one's (the task's).
    let dir = artifacts
        .first()
        .and_then(|a| a.rfind('/').map(|i| &a[..=i]))
        .filter(|d| artifacts.iter().all(|a| a.starts_with(d)));
    if !artifacts.is_empty() {
        let (label, cut) = match dir {
            Some(d) => (format!("artifacts, in {d}"), d.len()),
            None => ("artifacts".to_string(), 0),
        };
        let names: Vec<&str> = artifacts.iter().map(|a| &a[cut..]).collect();
        out.push_str(&format!("  {label}: {}\n", names.join(", ")));
    }
    if let Some(id) = v.get("session_id").and_then(Value::as_str) {
        out.push_str(&format!(
            "  record: {} (the whole session: stages, answers, history)\n",
            crate::store::session_rel(id)
        ));
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// `key: value` at `depth`, or `key:` with the value's lines beneath it; nothing for an
/// empty list or object, or a null.
fn field(out: &mut String, depth: usize, key: &str, v: &Value) {
    let empty = match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    };
    if empty {
        return;
    }
    indent(out, depth);
    out.push_str(key);
    out.push(':');
    value(out, depth, v);
}

/// A value after its `key:` (or after `- `): inline when it fits on the line, else on the
/// lines beneath, one level deeper.
fn value(out: &mut String, depth: usize, v: &Value) {
    match v {
        Value::String(s) if s.contains('\n') => {
            out.push('\n');
            for line in s.trim_end().lines() {
                if !line.is_empty() {
                    indent(out, depth + 1);
                }
                out.push_str(line);
                out.push('\n');
            }
        }
        Value::String(s) => {
            out.push(' ');
            out.push_str(s);
            out.push('\n');
        }
        // Short values (ids, actions, numbers) on one line; sentences one per line, since
        // "…NFR-2., The note …" reads as one garbled sentence.
        Value::Array(items)
            if items.iter().all(is_scalar)
                && (items.len() < 2 || !items.iter().any(is_sentence)) =>
        {
            out.push(' ');
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.push_str(&parts.join(", "));
            out.push('\n');
        }
        Value::Array(items) => {
            out.push('\n');
            for item in items {
                indent(out, depth + 1);
                out.push('-');
                match item {
                    Value::Object(o) => inline_object(out, depth + 1, o),
                    other => value(out, depth + 1, other),
                }
            }
        }
        Value::Object(o) => {
            out.push('\n');
            for (k, child) in o {
                field(out, depth + 1, k, child);
            }
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// A string with a space in it: a phrase or a sentence, not an id or a word.
fn is_sentence(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.contains(' '))
}

/// A list item that is an object: its scalar fields on the item's line (`- a: 1; b: x`),
/// the others beneath it.
fn inline_object(out: &mut String, depth: usize, o: &Map<String, Value>) {
    let (simple, beneath): (Vec<_>, Vec<_>) = o
        .iter()
        .partition(|(_, v)| is_scalar(v) && !matches!(v, Value::String(s) if s.contains('\n')));
    let simple: Vec<String> = simple
        .into_iter()
        .map(|(k, v)| format!("{k}: {}", scalar(v)))
        .collect();
    out.push(' ');
    out.push_str(&simple.join("; "));
    out.push('\n');
    for (k, v) in beneath {
        field(out, depth + 1, k, v);
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_a_line_nested_beneath_and_the_prompt_last_as_markdown() {
        let v = json!({
            "session_id": "s-1",
            "role_prompt": "# Role: PO\n\nWrite \"it\".\n",
            "user_message": "Please answer:\n- q1: Which host?",
            "next_step": "Show `user_message` and stop.",
            "pending_user_actions": ["answer"],
            "questions": [{"id": "q1", "question": "Which host?", "round": 1}],
            "context": {"specs_dir": ".claude/specs/t", "documents": []},
            "gate_passed": false,
        });
        let text = render(&v, &AlreadySaid::default());
        assert_eq!(
            text,
            "user_message: Please answer:\n  - q1: Which host?\nnext_step: Show `user_message` and stop.\n\
             session_id: s-1\ncontext:\n  specs_dir: .claude/specs/t\ngate_passed: false\n\
             role_prompt: # Role: PO\n\nWrite \"it\".\n"
        );
    }

    #[test]
    fn stage_and_state_share_a_line() {
        let v = json!({"user_message": "x", "stage": "dev", "state": "generating"});
        assert_eq!(
            render(&v, &AlreadySaid::default()),
            "user_message: x\nstage: dev; state: generating\n"
        );
        let alone = json!({"user_message": "x", "state": "generating"});
        assert_eq!(
            render(&alone, &AlreadySaid::default()),
            "user_message: x\nstate: generating\n"
        );
    }

    #[test]
    fn fields_that_say_nothing_here_are_left_out_and_the_others_kept() {
        let quiet = json!({
            "user_message": "Done.",
            "track": "full",
            "iteration": 1,
            "project": {"stack": [], "checks": {"approved": [], "gates": "auto", "waiting_for_approval": false}, "lesson_files": 0, "resource": "bmad://project"},
        });
        assert_eq!(
            render(&quiet, &AlreadySaid::default()),
            "user_message: Done.\n"
        );
        let said = json!({
            "user_message": "Done.",
            "track": "quick",
            "iteration": 2,
            "project": {"stack": [], "checks": {"approved": [], "gates": "human", "waiting_for_approval": false}, "lesson_files": 0, "resource": "bmad://project"},
        });
        let text = render(&said, &AlreadySaid::default());
        for line in ["track: quick\n", "iteration: 2\n", "gates: human\n"] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    #[test]
    fn what_the_model_knows_is_left_out_of_the_text_alone() {
        let v = json!({
            "user_message": "Answers recorded.",
            "session_id": "s-1",
            "notices": ["The human decided this through the dialog.", "A lesson was recorded."],
            "trace": {"requirements": 3, "criteria": 1, "designed": 0, "planned": 0},
        });
        let all = render(&v, &AlreadySaid::default());
        assert!(
            all.contains("trace: criteria: 1; designed: 0; planned: 0; requirements: 3\n"),
            "{all}"
        );
        // Sentences one per line, never joined into one ("…dialog., A lesson …").
        assert!(
            all.contains("notices:\n  - The human decided this through the dialog.\n  - A lesson was recorded.\n"),
            "{all}"
        );
        assert!(all.contains("through the dialog"), "{all}");
        let known = AlreadySaid {
            fields: vec!["trace", "session_id"],
            notices: vec!["The human decided this through the dialog.".into()],
        };
        assert_eq!(
            render(&v, &known),
            "user_message: Answers recorded.\nnotices: A lesson was recorded.\n"
        );
        // A notice list with nothing new left: no `notices:` line at all.
        let only =
            json!({"user_message": "x", "notices": ["The human decided this through the dialog."]});
        assert_eq!(render(&only, &known), "user_message: x\n");
        // The checks' outcome, beside the checks that say it.
        let ran = json!({"user_message": "x",
            "notices": ["The server ran the project's checks: `test` passed."],
            "checks": {"checks": [{"name": "test", "outcome": "passed"}]}});
        assert_eq!(
            render(&ran, &AlreadySaid::default()),
            "user_message: x\nchecks: passed: test\n"
        );
    }

    #[test]
    fn a_status_names_documents_under_their_folder_and_its_latest_decision_without_its_time() {
        let v = json!({
            "user_message": "Complete.",
            "decisions": [{"stage": "po", "action": "confirm", "decided_by": "human", "via": "elicitation", "digest": "abc123abc123", "at": "2026-11-25T00:00:00Z"}],
            "session": {"session_id": "s-1", "artifacts": [".claude/specs/t/01-prd.md", ".claude/specs/t/02-arch.md"]},
        });
        let text = render(&v, &AlreadySaid::default());
        assert!(text.contains("decisions:\n  - action: confirm; decided_by: human; digest: abc123abc123; stage: po; via: elicitation\n"), "{text}");
        assert!(!text.contains("2026-11-25"), "{text}");
        // Of several, the latest, with how many there are.
        let two = json!({"user_message": "x", "decisions": [
            {"stage": "po", "action": "confirm", "decided_by": "human", "via": "terminal"},
            {"stage": "architect", "action": "reject", "decided_by": "human", "via": "dashboard"},
        ]});
        assert_eq!(
            render(&two, &AlreadySaid::default()),
            "user_message: x\ndecisions: the latest of 2 (all in the session's record):\n  - action: reject; decided_by: human; stage: architect; via: dashboard\n"
        );
        assert!(
            text.contains("  artifacts, in .claude/specs/t/: 01-prd.md, 02-arch.md\n"),
            "{text}"
        );
        assert!(
            text.contains("record: .bmad-task/session-s-1.json"),
            "{text}"
        );
        let apart = json!({"user_message": "x", "session": {"session_id": "s", "artifacts": ["a/1.md", "b/2.md"]}});
        let text = render(&apart, &AlreadySaid::default());
        assert!(text.contains("  artifacts: a/1.md, b/2.md\n"), "{text}");
    }

    #[test]
    fn an_errors_message_is_said_once() {
        let v = json!({"user_message": "Error (invalid_state): `confirm` is not allowed in state refining.",
            "error": {"code": "invalid_state", "message": "`confirm` is not allowed in state refining."}});
        let text = render(&v, &AlreadySaid::default());
        assert_eq!(
            text.matches("is not allowed in state refining").count(),
            1,
            "{text}"
        );
        assert!(text.contains("error:\n  code: invalid_state\n"), "{text}");
        // A message the user_message does not carry is kept.
        let v = json!({"user_message": "Error.", "error": {"code": "internal", "message": "Something else."}});
        assert!(render(&v, &AlreadySaid::default()).contains("message: Something else."));
    }
}
