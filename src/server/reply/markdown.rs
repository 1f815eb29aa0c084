//! The reply as the model reads it (docs/spec.md §10, "Two readers"): plain text, one
//! field a line (`key: value`), nested values indented beneath their key, lists as `- `
//! items, and the role prompt last, as the Markdown it is. A host that hands its model
//! the tool's text (Claude Code when a result has no `structuredContent`) shows this; the
//! field names are the ones `next_step` refers to (`user_message`, `role_prompt`,
//! `artifact_path`, …), so an instruction reads the same in either form.

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

/// The reply's JSON value as text, without the fields in `known` (the model has them: the
/// session id its call named).
pub fn render(reply: &Value, known: &[&str]) -> String {
    let Value::Object(fields) = reply else {
        return reply.to_string();
    };
    let mut out = String::new();
    let shown = |key: &str, v: &Value| !known.contains(&key) && !left_out(key, v, fields);
    for key in FIRST {
        if let Some(v) = fields.get(key).filter(|v| shown(key, v)) {
            field(&mut out, 0, key, v);
        }
    }
    for (key, v) in fields {
        if FIRST.contains(&key.as_str()) || key == "role_prompt" || !shown(key, v) {
            continue;
        }
        if key == "session" {
            stored_session(&mut out, v);
        } else {
            field(&mut out, 0, key, v);
        }
    }
    if let Some(Value::String(prompt)) = fields.get("role_prompt") {
        out.push_str("role_prompt:\n\n");
        out.push_str(prompt.trim_end());
        out.push('\n');
    }
    out
}

/// The fields the text leaves out, each because another field, or the role prompt, says
/// it already (programs find them all in `structuredContent`): the stage's description
/// and the interaction type, `requires_user_confirmation` and the pending actions beside a
/// `next_step` (it says what to do, and when the human decides); an `artifact_path` that
/// `user_message` names and `next_step` does not refer to; the score, whether it passed
/// and who scored it where `user_message` gives the score; a built-in prompt's source,
/// and beside a built-in prompt the engines and the context (the prompt names the
/// documents, the draft and who submits what); the task's name beside its session id;
/// questions and sprints that `user_message` lists already.
fn left_out(key: &str, v: &Value, fields: &Map<String, Value>) -> bool {
    let built_in_prompt = fields.contains_key("role_prompt")
        && fields.get("role_prompt_source").and_then(Value::as_str) == Some("built-in");
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
        "role_prompt_source" => v.as_str() == Some("built-in"),
        "engines" | "context" => built_in_prompt,
        "task_name" => fields.contains_key("session_id"),
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

/// Whether `user_message` already lists every item of `v`, each as `line` writes it.
fn listed(fields: &Map<String, Value>, v: &Value, line: impl Fn(&Value) -> Option<String>) -> bool {
    let message = fields
        .get("user_message")
        .and_then(Value::as_str)
        .unwrap_or("");
    v.as_array().is_some_and(|items| {
        items
            .iter()
            .all(|item| line(item).is_some_and(|l| message.contains(&l)))
    })
}

/// `status`'s stored session: its documents, and where the whole record is.
fn stored_session(out: &mut String, v: &Value) {
    out.push_str("session:\n");
    if let Some(artifacts) = v
        .get("artifacts")
        .filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
    {
        field(out, 1, "artifacts", artifacts);
    }
    if let Some(id) = v.get("session_id").and_then(Value::as_str) {
        out.push_str(&format!(
            "  record: .bmad-task/session-{id}.json (the whole session: stages, answers, history)\n"
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
        Value::Array(items) if items.iter().all(is_scalar) => {
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

/// A list item that is an object: its scalar fields on the item's line (`- a: 1; b: x`),
/// the others beneath it.
fn inline_object(out: &mut String, depth: usize, o: &Map<String, Value>) {
    let simple: Vec<String> = o
        .iter()
        .filter(|(_, v)| is_scalar(v) && !matches!(v, Value::String(s) if s.contains('\n')))
        .map(|(k, v)| format!("{k}: {}", scalar(v)))
        .collect();
    out.push(' ');
    out.push_str(&simple.join("; "));
    out.push('\n');
    for (k, v) in o {
        let inline = is_scalar(v) && !matches!(v, Value::String(s) if s.contains('\n'));
        if !inline {
            field(out, depth + 1, k, v);
        }
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
        let text = render(&v, &[]);
        assert_eq!(
            text,
            "user_message:\n  Please answer:\n  - q1: Which host?\nnext_step: Show `user_message` and stop.\n\
             session_id: s-1\ncontext:\n  specs_dir: .claude/specs/t\ngate_passed: false\n\
             role_prompt:\n\n# Role: PO\n\nWrite \"it\".\n"
        );
    }
}
