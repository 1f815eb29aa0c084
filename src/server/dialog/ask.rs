//! The question put to the human in the client's own dialog (MCP elicitation, form mode),
//! and what their answer means. The dialog shows `message` and each property's `title`
//! and `description`, so everything the human must see to decide is written there: the
//! document's path, size and digest, the score, the sprints to choose a scope from, the
//! questions. Forms are flat: strings and single-choice lists.

use std::collections::BTreeMap;

use rmcp::model::{ElicitRequestParams, ElicitationSchema};
use serde_json::{json, Map, Value};

use crate::code::visible;
use crate::error::clip;
use crate::policy::approval::Waiting;
use crate::policy::config::CONFIG_REL;
use crate::workflow::machine::{Asked, Pending};
use crate::workflow::{Action, Command};

/// The most characters of a question or its context that a form shows.
const QUESTION_CHARS: usize = 1_000;

/// The form's property for approving a changed `.bmad/config.toml` beside the decision.
pub const APPROVE_CONFIG: &str = "approve_config";

/// The form for `pending`, pre-filled with what the host proposed in `command`. When the
/// project's config waits for the human (`config`), the form also offers to approve it:
/// a separate choice, off unless the human ticks it.
pub fn form(
    pending: &Pending,
    command: &Command,
    note: Option<&str>,
    config: Option<&Waiting>,
) -> ElicitRequestParams {
    let mut lines = vec![headline(pending)];
    if let Some(doc) = &pending.document {
        lines.push(format!(
            "Document: {} ({} bytes, sha256 {}).",
            visible(&doc.path),
            doc.size,
            &doc.sha256[..12]
        ));
    }
    if let (Some(score), Some(gate)) = (pending.score, pending.gate) {
        lines.push(match pending.asked {
            _ if score >= gate => format!("Score: {score}/100 (passes the gate of {gate})."),
            // Answers lead to a revised draft: nothing is accepted here.
            Asked::Answer => format!("Score: {score}/100, below the gate of {gate}."),
            _ => format!(
                "Score: {score}/100, below the gate of {gate}: confirming accepts it as it is."
            ),
        });
    }
    lines.extend(pending.notices.iter().map(|n| visible(n)));
    if !pending.assumed.is_empty() {
        lines.push("The author assumed, where nobody answered (confirming accepts these; to correct one, write your answer in its field):".into());
        lines.extend(pending.assumed.iter().map(|(q, what)| {
            format!(
                "- {}: {} (assumed: {})",
                clip(&visible(&q.id), 60),
                clip(&visible(&q.question), QUESTION_CHARS),
                clip(&visible(what), QUESTION_CHARS)
            )
        }));
    }
    if let Some(note) = note {
        lines.push(note.to_string());
    }
    lines.push(match pending.asked {
        Asked::Answer => {
            "Answer what you can; leave a field empty to have the next draft state its assumption."
                .into()
        }
        _ => "Read the document, then decide. Declining changes nothing.".into(),
    });
    let (mut properties, required): (_, &[&str]) = match pending.asked {
        Asked::Answer => (answer_properties(pending, command), &[]),
        Asked::Confirm | Asked::Approve => (decision_properties(pending, command), &["decision"]),
    };
    if let Some(waiting) = config {
        lines.push(format!(
            "Also waiting for you: {CONFIG_REL} changed ({}).",
            visible(&waiting.changes.join("; "))
        ));
        properties.insert(APPROVE_CONFIG.into(), config_choice(waiting));
    }
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: lines.join("\n"),
        requested_schema: schema(properties, required),
    }
}

fn headline(p: &Pending) -> String {
    if let Some(failed) = &p.failed_verdict {
        return format!(
            "bmad: task `{}`, {} stage: it does not pass ({}). Accept the risk and go on, or send the work back to development with your feedback.",
            visible(&p.task_name), p.stage, visible(failed)
        );
    }
    let what = match p.asked {
        Asked::Answer => format!("answer the {}'s questions", p.stage.role()),
        Asked::Approve => "approve the sprint plan (and which sprints to build)".into(),
        Asked::Confirm => format!("confirm the {}'s document", p.stage.role()),
    };
    format!(
        "bmad: task `{}`, {} stage: {what}.",
        visible(&p.task_name),
        p.stage
    )
}

fn decision_properties(p: &Pending, command: &Command) -> Map<String, Value> {
    let (yes, yes_title) = match p.asked {
        Asked::Approve => ("approve", "Approve the plan"),
        _ if p.failed_verdict.is_some() => ("confirm", "Accept the risk and go on"),
        _ => ("confirm", "Confirm the document"),
    };
    let no_title = if p.failed_verdict.is_some() {
        "Send the work back to development with feedback"
    } else {
        "Send it back with feedback"
    };
    let proposed_reject = matches!(command, Command::Reject { .. });
    // Work that fails (a verdict, a check, a score below the gate) is never decided by
    // Enter: the human picks one side or the other.
    let failing = p.failed_verdict.is_some()
        || matches!((p.score, p.gate), (Some(score), Some(gate)) if score < gate);
    let host_feedback = match command {
        Command::Reject { feedback, .. } => feedback.clone(),
        Command::Confirm { note, .. } | Command::Approve { note, .. } => note.clone(),
        _ => None,
    };
    let mut properties = Map::new();
    let mut decision = json!({
        "type": "string",
        "title": "Your decision",
        "oneOf": [
            {"const": yes, "title": yes_title},
            {"const": "reject", "title": no_title},
        ],
    });
    if !failing {
        decision["default"] = if proposed_reject { "reject" } else { yes }.into();
    }
    properties.insert("decision".into(), decision);
    assumed_properties(p, command, &mut properties);
    if p.asked == Asked::Approve {
        let options = scope_options(p);
        let proposed = match command {
            Command::Approve { scope: Some(s), .. } => {
                let s = s.trim().to_ascii_lowercase();
                options
                    .iter()
                    .find(|(v, _)| *v == s)
                    .map(|(v, _)| v.clone())
            }
            _ => None,
        };
        properties.insert(
            "scope".into(),
            json!({
                "type": "string",
                "title": "Sprints to build",
                "description": "Development works on these sprints only.",
                "oneOf": options.iter().map(|(v, t)| json!({"const": v, "title": t})).collect::<Vec<_>>(),
                "default": proposed.unwrap_or_else(|| "all".into()),
            }),
        );
    }
    let mut feedback = json!({
        "type": "string",
        "title": "Feedback",
        "description": "What should change (needed to send it back); when accepting, a note the next roles read.",
    });
    if let Some(f) = host_feedback.filter(|f| !f.trim().is_empty()) {
        feedback["default"] = clip(&visible(&f), QUESTION_CHARS).into();
        feedback["description"] = "What should change (needed to send it back); when accepting, a note the next roles read. Pre-filled with the assistant's words, not yours: edit or clear it.".into();
    }
    properties.insert("feedback".into(), feedback);
    properties
}

/// The property of the form that corrects what the author assumed for question `id`.
fn assumed_key(id: &str) -> String {
    format!("assumed_{id}")
}

/// A field for each question the author answered with an assumption (confirming accepts
/// them): pre-filled with the answer the assistant proposed with its `confirm`, else with
/// the assumption; what the human writes there instead is their answer.
fn assumed_properties(p: &Pending, command: &Command, properties: &mut Map<String, Value>) {
    let proposed = match command {
        Command::Confirm { answers, .. } => answers.clone(),
        _ => BTreeMap::new(),
    };
    for (q, what) in &p.assumed {
        let shown = proposed.get(&q.id).unwrap_or(what);
        properties.insert(
            assumed_key(&q.id),
            json!({
                "type": "string",
                "title": format!("{}: {}", clip(&visible(&q.id), 60), clip(&visible(&q.question), 200)),
                "description": format!(
                    "Assumed by the author, where nobody answered: {}. Confirming accepts what this field holds; write your answer to correct it.",
                    clip(&visible(what), QUESTION_CHARS)
                ),
                "default": clip(&visible(shown), QUESTION_CHARS),
            }),
        );
    }
}

/// The scopes offered for a plan: all of it, the first k sprints, or one sprint.
fn scope_options(p: &Pending) -> Vec<(String, String)> {
    let mut out = vec![(
        "all".to_string(),
        format!("All sprints ({})", p.sprints.len().max(1)),
    )];
    let Some(first) = p.sprints.first() else {
        return out;
    };
    for (i, s) in p.sprints.iter().enumerate().take(40) {
        out.push((
            s.number.to_string(),
            format!("Sprint {}: {}", s.number, clip(&visible(&s.title), 60)),
        ));
        if i > 0 {
            out.push((
                format!("{}-{}", first.number, s.number),
                format!("Sprints {} to {}", first.number, s.number),
            ));
        }
    }
    out
}

fn answer_properties(p: &Pending, command: &Command) -> Map<String, Value> {
    let proposed = match command {
        Command::Answer { answers } => answers.clone(),
        _ => BTreeMap::new(),
    };
    let mut properties = Map::new();
    for q in &p.questions {
        let mut description = format!(
            "The assistant asks: {}",
            clip(&visible(&q.question), QUESTION_CHARS)
        );
        if let Some(c) = q.context.as_deref().filter(|c| !c.trim().is_empty()) {
            description.push_str(&format!(" ({})", clip(&visible(c), QUESTION_CHARS)));
        }
        let mut field = json!({
            "type": "string",
            "title": clip(&visible(&q.id), 60),
            "description": description,
        });
        if let Some(a) = proposed.get(&q.id) {
            field["default"] = clip(&visible(a), QUESTION_CHARS).into();
        }
        properties.insert(q.id.clone(), field);
    }
    properties
}

fn schema(properties: Map<String, Value>, required: &[&str]) -> ElicitationSchema {
    let value = json!({"type": "object", "properties": properties, "required": required});
    // Every property above is a string or a titled single choice, which the schema type
    // reads; a failure would be a bug in this file, caught by its tests.
    serde_json::from_value(value).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a dialog form did not fit the elicitation schema");
        ElicitationSchema::builder()
            .build()
            .unwrap_or_else(|_| unreachable!("an empty form is valid"))
    })
}

/// The choice of approving a changed `.bmad/config.toml` beside the decision.
fn config_choice(waiting: &Waiting) -> Value {
    json!({
        "type": "boolean",
        "title": format!("Also approve {CONFIG_REL} as it is now (sha256 {})", &waiting.sha256[..12.min(waiting.sha256.len())]),
        // Whole, never clipped: the human approves every byte of every command.
        "description": format!(
            "The server runs the approved checks after dev and before QA completes, and holds the approved gates policy. Changed: {}.",
            visible(&waiting.changes.join("; "))
        ),
        "default": false,
    })
}

/// Whether the human's accepted form also approves the project's config.
pub fn approves_config(content: Option<&Value>) -> bool {
    content
        .and_then(|c| c.get(APPROVE_CONFIG))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// What the human's accepted form means: the command to apply, or why nothing is.
pub fn read(pending: &Pending, content: Option<&Value>) -> Result<Command, String> {
    let empty = Map::new();
    let content = content.and_then(Value::as_object).unwrap_or(&empty);
    let text = |key: &str| {
        content
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    match pending.asked {
        Asked::Answer => {
            let answers: BTreeMap<String, String> = pending
                .questions
                .iter()
                .filter_map(|q| text(&q.id).map(|a| (q.id.clone(), a)))
                .collect();
            if answers.is_empty() {
                return Err("The human left every question empty: nothing was recorded.".into());
            }
            Ok(Command::Answer { answers })
        }
        Asked::Confirm | Asked::Approve => match text("decision").as_deref() {
            Some("reject") => match text("feedback") {
                Some(feedback) => Ok(Command::Reject {
                    action: Action::Reject,
                    feedback: Some(feedback),
                }),
                None => Err(
                    "The human chose to send it back but wrote no feedback: nothing was changed."
                        .into(),
                ),
            },
            Some("approve") if pending.asked == Asked::Approve => Ok(Command::Approve {
                scope: text("scope"),
                note: text("feedback"),
            }),
            Some("confirm") if pending.asked == Asked::Confirm => Ok(Command::Confirm {
                action: Action::Confirm,
                note: text("feedback"),
                answers: corrections(pending, &text),
            }),
            other => Err(format!(
                "The dialog's answer has no usable `decision` ({}): nothing was changed.",
                clip(other.unwrap_or("none"), 40)
            )),
        },
    }
}

/// What the human's form answers of the questions the author assumed: each field that
/// holds other words than the assumption (as the form showed it), by question id.
fn corrections(
    pending: &Pending,
    text: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    pending
        .assumed
        .iter()
        .filter_map(|(q, what)| {
            let given = text(&assumed_key(&q.id))?;
            let shown = clip(&visible(what), QUESTION_CHARS);
            (given != shown.trim() && given != what.trim()).then(|| (q.id.clone(), given))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::machine::Shown;
    use crate::workflow::session::{Question, Sprint};
    use crate::workflow::Stage;

    fn pending(asked: Asked) -> Pending {
        Pending {
            asked,
            stage: Stage::Sm,
            task_name: "t".into(),
            session_id: "s".into(),
            document: Some(Shown {
                path: ".claude/specs/t/03-sprint-plan.md".into(),
                sha256: "0123456789abcdef".repeat(4),
                size: 42,
            }),
            score: None,
            gate: None,
            sprints: vec![
                Sprint {
                    number: 1,
                    title: "Core".into(),
                },
                Sprint {
                    number: 2,
                    title: "UI".into(),
                },
            ],
            failed_verdict: None,
            questions: vec![Question {
                id: "q1".into(),
                question: "Web or CLI?".into(),
                context: None,
                round: 1,
            }],
            assumed: vec![],
            notices: vec![],
        }
    }

    fn wire(params: &ElicitRequestParams) -> Value {
        serde_json::to_value(params).unwrap()
    }

    #[test]
    fn the_approval_form_shows_the_document_and_offers_the_plans_sprints() {
        let p = pending(Asked::Approve);
        let f = wire(&form(
            &p,
            &Command::Approve {
                scope: Some("1".into()),
                note: None,
            },
            None,
            None,
        ));
        let message = f["message"].as_str().unwrap();
        assert!(message.contains("03-sprint-plan.md (42 bytes, sha256 0123456789ab)"));
        let scope = &f["requestedSchema"]["properties"]["scope"];
        let offered: Vec<&str> = scope["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["const"].as_str().unwrap())
            .collect();
        assert_eq!(offered, ["all", "1", "2", "1-2"]);
        assert_eq!(scope["default"], "1");
        assert_eq!(
            f["requestedSchema"]["properties"]["decision"]["default"],
            "approve"
        );
    }

    #[test]
    fn an_answer_is_read_as_the_human_gave_it() {
        let p = pending(Asked::Approve);
        let c = json!({"decision": "approve", "scope": "1-2"});
        assert_eq!(
            read(&p, Some(&c)).unwrap(),
            Command::Approve {
                scope: Some("1-2".into()),
                note: None,
            }
        );
        let c = json!({"decision": "reject", "feedback": "  split sprint 2 "});
        assert_eq!(
            read(&p, Some(&c)).unwrap(),
            Command::Reject {
                action: Action::Reject,
                feedback: Some("split sprint 2".into())
            }
        );
        assert!(read(&p, Some(&json!({"decision": "reject"}))).is_err());
        assert!(read(&p, Some(&json!({"decision": "confirm"}))).is_err());
        assert!(read(&p, None).is_err());
        let q = pending(Asked::Answer);
        let c = json!({"q1": "CLI", "zz": "not asked"});
        assert_eq!(
            read(&q, Some(&c)).unwrap(),
            Command::Answer {
                answers: [("q1".to_string(), "CLI".to_string())].into()
            }
        );
        assert!(read(&q, Some(&json!({"q1": "  "}))).is_err());
    }

    #[test]
    fn a_waiting_config_is_offered_as_a_choice_of_its_own_off_by_default() {
        let p = pending(Asked::Confirm);
        let waiting = Waiting {
            sha256: "abcdef0123456789".repeat(4),
            changes: vec!["check `test` added: `cargo test`".into()],
        };
        let confirm = Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        };
        let f = wire(&form(&p, &confirm, None, Some(&waiting)));
        let choice = &f["requestedSchema"]["properties"][APPROVE_CONFIG];
        assert_eq!(choice["type"], "boolean");
        assert_eq!(choice["default"], false);
        assert!(
            choice["title"]
                .as_str()
                .unwrap()
                .contains("sha256 abcdef012345"),
            "{choice}"
        );
        assert!(choice["description"]
            .as_str()
            .unwrap()
            .contains("check `test` added: `cargo test`"));
        assert!(f["message"]
            .as_str()
            .unwrap()
            .contains("Also waiting for you"));
        let required = f["requestedSchema"]["required"].as_array().unwrap();
        assert!(!required.contains(&json!(APPROVE_CONFIG)), "optional");
        assert!(approves_config(Some(
            &json!({"decision": "confirm", APPROVE_CONFIG: true})
        )));
        assert!(!approves_config(Some(&json!({"decision": "confirm"}))));
        assert!(
            !approves_config(Some(&json!({APPROVE_CONFIG: "true"}))),
            "only a boolean"
        );
        let plain = wire(&form(&p, &confirm, None, None));
        assert!(plain["requestedSchema"]["properties"]
            .get(APPROVE_CONFIG)
            .is_none());
    }

    #[test]
    fn the_answer_form_asks_each_open_question() {
        let p = pending(Asked::Answer);
        let f = wire(&form(
            &p,
            &Command::Answer {
                answers: [("q1".to_string(), "Web".to_string())].into(),
            },
            Some("note"),
            None,
        ));
        assert_eq!(
            f["requestedSchema"]["properties"]["q1"]["description"],
            "The assistant asks: Web or CLI?"
        );
        assert_eq!(f["requestedSchema"]["properties"]["q1"]["default"], "Web");
        assert!(f["message"].as_str().unwrap().contains("note"));
    }

    /// Below the gate, only a decision on the document accepts it: answering questions
    /// does not, and the form does not say it does.
    #[test]
    fn only_a_decision_form_says_confirming_accepts_a_score_below_the_gate() {
        let message = |asked: Asked, command: &Command| {
            let p = Pending {
                score: Some(72),
                gate: Some(90),
                ..pending(asked)
            };
            wire(&form(&p, command, None, None))["message"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let answer = Command::Answer {
            answers: [("q1".to_string(), "Web".to_string())].into(),
        };
        let m = message(Asked::Answer, &answer);
        assert!(m.contains("Score: 72/100, below the gate of 90."), "{m}");
        assert!(!m.contains("confirming"), "{m}");
        let confirm = Command::Confirm {
            action: crate::workflow::Action::Confirm,
            answers: Default::default(),
            note: None,
        };
        let m = message(Asked::Confirm, &confirm);
        assert!(m.contains("confirming accepts it as it is"), "{m}");
    }

    /// Failing work (a failed verdict, a score below the gate) has no default decision:
    /// Enter decides nothing. Work that passes keeps its default.
    #[test]
    fn failing_work_has_no_default_decision() {
        let confirm = Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        };
        let decision = |p: &Pending| {
            wire(&form(p, &confirm, None, None))["requestedSchema"]["properties"]["decision"]
                .clone()
        };
        let failed = Pending {
            failed_verdict: Some("Review Status: Fail".into()),
            ..pending(Asked::Confirm)
        };
        assert!(
            decision(&failed).get("default").is_none(),
            "{}",
            decision(&failed)
        );
        let below = Pending {
            score: Some(72),
            gate: Some(90),
            ..pending(Asked::Confirm)
        };
        assert!(decision(&below).get("default").is_none());
        let passing = Pending {
            score: Some(93),
            gate: Some(90),
            ..pending(Asked::Confirm)
        };
        assert_eq!(decision(&passing)["default"], "confirm");
    }

    /// The assumptions confirming accepts are listed, each with a field pre-filled with
    /// what was assumed (or the answer the assistant proposed); a field the human changes
    /// is their answer, one left as shown accepts the assumption.
    #[test]
    fn the_assumptions_are_listed_each_with_a_field_to_correct_it() {
        let q = |id: &str, question: &str| Question {
            id: id.into(),
            question: question.into(),
            context: None,
            round: 1,
        };
        let p = Pending {
            assumed: vec![
                (q("q2", "Offline?"), "No offline mode".into()),
                (q("q3", "Which browsers?"), "Evergreen only".into()),
            ],
            ..pending(Asked::Confirm)
        };
        let host = Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: [("q3".to_string(), "Evergreen and Safari 16".to_string())].into(),
        };
        let f = wire(&form(&p, &host, None, None));
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("- q2: Offline? (assumed: No offline mode)"),
            "{message}"
        );
        let props = &f["requestedSchema"]["properties"];
        assert_eq!(props["assumed_q2"]["default"], "No offline mode");
        assert_eq!(props["assumed_q3"]["default"], "Evergreen and Safari 16");
        assert!(props["assumed_q2"]["title"]
            .as_str()
            .unwrap()
            .contains("Offline?"));
        let answered = json!({"decision": "confirm", "assumed_q2": "Offline first", "assumed_q3": "Evergreen only"});
        assert_eq!(
            read(&p, Some(&answered)).unwrap(),
            Command::Confirm {
                action: Action::Confirm,
                note: None,
                answers: [("q2".to_string(), "Offline first".to_string())].into(),
            }
        );
        let untouched = json!({"decision": "confirm", "assumed_q2": "No offline mode"});
        assert_eq!(
            read(&p, Some(&untouched)).unwrap(),
            Command::Confirm {
                action: Action::Confirm,
                note: None,
                answers: Default::default(),
            }
        );
    }
}
