//! The role prompts (`prompts/<stage>.md`, embedded at build time by the stage table) and
//! their rendering for a stage and round. A prompt file has three sections, marked by HTML comments: `role`
//! (always), `first` (the first submission of a stage) and `revise` (after answers,
//! feedback or a below-gate score). Earlier documents are given as references (path,
//! size, summary), never inlined.

use crate::workflow::session::{ContentRef, Session};
use crate::workflow::stage::Stage;

fn section(stage: Stage, name: &str) -> &'static str {
    let text = stage.prompt_source();
    let marker = format!("<!-- section: {name} -->");
    let Some(start) = text.find(&marker) else {
        return "";
    };
    let body = &text[start + marker.len()..];
    let end = body.find("<!-- section: ").unwrap_or(body.len());
    body[..end].trim()
}

/// Whether the stage is past its first submission (a revision round).
pub fn is_revision(session: &Session, stage: Stage) -> bool {
    let rec = session.record(stage);
    rec.iteration > 0 || !rec.feedback.is_empty()
}

/// The role prompt for the host's next generation at `stage`.
pub fn render(session: &Session, stage: Stage, guidance: &[String]) -> String {
    let rec = session.record(stage);
    let round = if is_revision(session, stage) {
        "revise"
    } else {
        "first"
    };
    let template = format!("{}\n\n{}\n", section(stage, "role"), section(stage, round));

    let inputs = list_or_none(
        Stage::ALL
            .into_iter()
            .filter(|s| *s < stage)
            .filter_map(|s| session.record(s).final_result_ref.as_ref().map(|r| (s, r)))
            .map(|(s, r)| {
                format!(
                    "- {} ({}): {}",
                    s.role(),
                    describe_ref(r),
                    one_line(&r.summary)
                )
            })
            .collect(),
    );
    let answers = list_or_none(
        rec.questions
            .iter()
            .map(|q| match rec.answers.get(&q.id) {
                Some(a) => format!("- {} {}\n  Answer: {}", q.id, q.question, a),
                None => format!(
                    "- {} {}\n  Answer: (not answered: state your assumption)",
                    q.id, q.question
                ),
            })
            .collect(),
    );
    let feedback = list_or_none(rec.feedback.iter().map(|f| format!("- {f}")).collect());
    // The server's findings, and what the last draft's author said it lacked.
    let guidance = list_or_none(
        guidance
            .iter()
            .map(|g| format!("- {g}"))
            .chain(
                rec.gaps
                    .iter()
                    .map(|g| format!("- The last draft lacked (by its author): {g}")),
            )
            .collect(),
    );
    let previous = rec
        .draft_ref
        .as_ref()
        .or(rec.final_result_ref.as_ref())
        .map(describe_ref)
        .unwrap_or_else(|| "(none)".into());
    let plan = session.record(Stage::approval());
    let sprints = list_or_none(
        plan.sprints
            .iter()
            .map(|s| format!("- Sprint {}: {}", s.number, s.title))
            .collect(),
    );
    let gate = stage
        .passing_score()
        .map(|g| format!("{g}/100"))
        .unwrap_or_else(|| "none".into());

    let values: [(&str, String); 11] = [
        ("task_name", session.task_name.clone()),
        ("objective", session.objective.clone()),
        ("inputs", inputs),
        ("answers", answers),
        ("feedback", feedback),
        ("guidance", guidance),
        ("previous", previous),
        ("iteration", (rec.iteration + 1).to_string()),
        ("scope", plan.scope.clone().unwrap_or_else(|| "all".into())),
        ("sprints", sprints),
        ("gate", gate),
    ];
    let mut out = template;
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), &value);
    }
    out
}

fn describe_ref(r: &ContentRef) -> String {
    format!("`{}`, {} bytes", r.file_path, r.size)
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = flat.chars().take(160).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::submission;
    use chrono::Utc;

    fn session() -> Session {
        Session::new(
            "00000000-0000-4000-8000-000000000000".into(),
            "build-a-todo-app".into(),
            "/p".into(),
            "Build a todo app".into(),
            false,
            Utc::now(),
        )
    }

    /// The fenced example of the output form that a prompt section shows.
    fn example(stage: Stage, round: &str) -> Option<String> {
        let text = section(stage, round);
        let open = text.find("```json").or_else(|| text.find("```markdown"))?;
        let body_start = open + text[open..].find('\n')? + 1;
        let end = body_start + text[body_start..].find("\n```")?;
        Some(text[body_start..end].to_string())
    }

    #[test]
    fn every_stage_has_a_role_and_a_first_round_section() {
        for s in Stage::ALL {
            assert!(section(s, "role").contains("# Role:"), "{s}");
            assert!(!section(s, "first").is_empty(), "{s}");
            assert!(!section(s, "revise").is_empty(), "{s}");
        }
    }

    #[test]
    fn rendering_fills_every_placeholder() {
        let mut s = session();
        for stage in Stage::ALL {
            for revise in [false, true] {
                s.record_mut(stage).iteration = u32::from(revise);
                let p = render(&s, stage, &["Add metrics".into()]);
                assert!(!p.contains("{{"), "{stage}: {p}");
                assert!(p.contains("Build a todo app"));
                assert!(p.contains("build-a-todo-app"));
            }
        }
    }

    #[test]
    fn the_po_prompt_examples_parse_to_what_the_workflow_needs() {
        let first = submission::read(&example(Stage::Po, "first").unwrap()).unwrap();
        assert!(first.document.starts_with("# Product Requirements"));
        assert_eq!(first.reported_score, Some(72));
        assert_eq!(first.questions.len(), 1);
        assert_eq!(first.gaps.len(), 1);
        let revised = submission::read(&example(Stage::Po, "revise").unwrap()).unwrap();
        assert_eq!(revised.reported_score, Some(92));
        assert!(revised.questions.is_empty());
    }

    #[test]
    fn the_architect_prompt_examples_parse() {
        let first = submission::read(&example(Stage::Architect, "first").unwrap()).unwrap();
        assert!(first.document.starts_with("# System Architecture"));
        assert_eq!(first.questions.len(), 1);
        let revised = submission::read(&example(Stage::Architect, "revise").unwrap()).unwrap();
        assert_eq!(revised.reported_score, Some(93));
    }

    #[test]
    fn the_sm_prompt_example_yields_its_sprints() {
        let doc = submission::read(&example(Stage::Sm, "first").unwrap())
            .unwrap()
            .document;
        let sprints = submission::sprints(&doc);
        assert_eq!(sprints.len(), 2);
        assert_eq!(sprints[0], (1, "Core data model and API".to_string()));
    }

    #[test]
    fn the_review_prompt_example_states_a_status() {
        let doc = submission::read(&example(Stage::Review, "first").unwrap())
            .unwrap()
            .document;
        assert_eq!(
            submission::review_status(&doc).as_deref(),
            Some("Pass with Risk")
        );
    }

    #[test]
    fn the_qa_prompt_example_ends_with_a_score() {
        let sub = submission::read(&example(Stage::Qa, "first").unwrap()).unwrap();
        assert_eq!(sub.reported_score, Some(88));
    }

    #[test]
    fn the_dev_prompt_example_is_a_document() {
        let sub = submission::read(&example(Stage::Dev, "first").unwrap()).unwrap();
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
        rec.feedback.push("Shorter please".into());
        rec.gaps.push("no rollout plan".into());
        rec.draft_ref = Some(ContentRef::new(
            ".bmad-task/temp/x/po_draft_1.md".into(),
            &"long document ".repeat(1000),
            Utc::now(),
        ));
        let p = render(&s, Stage::Po, &[]);
        assert!(p.contains("Which platforms?") && p.contains("Web only"));
        assert!(p.contains("Shorter please"));
        assert!(
            p.contains("The last draft lacked (by its author): no rollout plan"),
            "the author's gaps feed the next round"
        );
        assert!(p.contains(".bmad-task/temp/x/po_draft_1.md"));
        assert!(p.contains("prd_updated"));
        assert!(p.len() < 6000, "the draft itself is not inlined");
    }
}
