//! Properties of submission reading (docs/spec.md §8) and of the stage markers read from a
//! document (score line, sprint headings, review status).

use bmad_mcp::workflow::score::last_text_score;
use bmad_mcp::workflow::submission::{review_status, sprints, Submission, SubmissionError};
use bmad_mcp::workflow::Stage;
use serde_json::{json, Value};

/// Each stage's own document fields in the order docs/spec.md §8 lists them, before the
/// generic ones (kept here, not imported, so the check is independent of the stage table
/// in the code under test). A stage reads its own and the generic ones, no other.
const SPEC_FIELDS: [(Stage, [&str; 2]); 6] = [
    (Stage::Po, ["prd_draft", "prd_updated"]),
    (Stage::Architect, ["architecture_draft", "architecture_updated"]),
    (Stage::Sm, ["sprint_plan", "sprint_plan_updated"]),
    (Stage::Dev, ["implementation", "dev_result"]),
    (Stage::Review, ["review", "review_result"]),
    (Stage::Qa, ["qa_report", "test_report"]),
];
const GENERIC_FIELDS: [&str; 3] = ["draft", "result", "content"];

/// Reads as a submission at `po`.
fn read(text: &str) -> Result<Submission, SubmissionError> {
    bmad_mcp::workflow::submission::read(Stage::Po, text)
}

/// Runs every submission property on one text.
pub fn check(text: &str) {
    read_is_well_formed(text);
    whole_json_object(text);
    wrapped_in_json(text);
    wrapped_in_fenced_json(text);
    wrapped_in_markdown_fence(text);
    markers(text);
}

fn assert_clean(s: &str, what: &str) {
    assert!(!s.is_empty(), "{what} is empty");
    assert_eq!(s, s.trim(), "{what} is not trimmed");
}

/// What every successful read promises, whatever the input.
fn assert_valid(text: &str, s: &Submission) {
    assert_clean(&s.document, "document");
    // The document is the text, a part of it, or a JSON string decoded from it; decoding
    // never lengthens a string.
    assert!(
        s.document.len() <= text.len(),
        "document longer than the submission"
    );
    if let Some(n) = s.reported_score {
        assert!(n <= 100, "score {n} out of 0..=100");
    }
    for q in &s.questions {
        assert_clean(&q.question, "question");
        if let Some(c) = &q.context {
            assert_clean(c, "question context");
        }
    }
    for g in &s.gaps {
        assert_clean(g, "gap");
    }
}

fn read_is_well_formed(text: &str) {
    let r = read(text);
    match &r {
        Ok(s) => assert_valid(text, s),
        Err(SubmissionError::Empty) => {
            // Only a blank text, or a JSON object / fence that held nothing, is empty.
            assert!(
                text.trim().is_empty() || text.contains('{') || text.contains("```"),
                "non-blank plain text refused as empty"
            );
        }
        Err(SubmissionError::NoDocumentField { keys }) => {
            // Only a JSON object without a document field says so, naming its keys.
            assert!(text.contains('{') && !keys.is_empty());
            for k in keys {
                // (Read at `po`: its own fields and the generic ones.)
                assert!(
                    !SPEC_FIELDS[0].1.contains(&k.as_str()) && !GENERIC_FIELDS.contains(&k.as_str()),
                    "{k} is a document field"
                );
            }
        }
    }
    if !text.contains('{') {
        // No JSON object can be present: the document is the text or the inside of a
        // markdown fence, and only the text can state a score.
        match &r {
            Ok(s) => {
                assert!(text.contains(s.document.as_str()), "document not from text");
                assert!(s.questions.is_empty() && s.gaps.is_empty());
                assert_eq!(s.reported_score, last_text_score(text));
                if !text.contains("```") {
                    // Byte for byte.
                    assert_eq!(s.document, text);
                }
            }
            Err(_) => assert!(text.trim().is_empty() || text.contains("```")),
        }
    }
}

/// A text that is one JSON object as a whole is read by field, per docs/spec.md §8.
fn whole_json_object(text: &str) {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text.trim()) else {
        return;
    };
    for (stage, own) in SPEC_FIELDS {
        whole_json_object_at(text, &obj, stage, &own);
    }
}

fn whole_json_object_at(text: &str, obj: &serde_json::Map<String, Value>, stage: Stage, own: &[&str]) {
    let r = bmad_mcp::workflow::submission::read(stage, text);
    let want = own
        .iter()
        .chain(GENERIC_FIELDS.iter())
        .filter_map(|f| obj.get(*f).and_then(Value::as_str))
        .map(str::trim)
        .find(|d| !d.is_empty());
    match want {
        Some(doc) => {
            let s = r.as_ref().expect("a JSON object with a document is read");
            assert_eq!(s.document, doc);
            if let Some(n) = obj.get("quality_score").and_then(Value::as_f64) {
                if (0.0..=100.0).contains(&n) {
                    assert_eq!(s.reported_score, Some(n.round() as u32));
                }
            }
            let asked = obj
                .get("questions")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            assert!(s.questions.len() <= asked);
            let gaps = obj
                .get("gaps")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            assert!(s.gaps.len() <= gaps);
        }
        // Without a document under a key this stage reads: empty, or (with keys) the
        // keys named.
        None => assert!(
            matches!(
                r,
                Err(SubmissionError::Empty | SubmissionError::NoDocumentField { .. })
            ),
            "no document field at {stage}: {r:?}"
        ),
    }
}

/// Any document put in a JSON submission comes back whole (trimmed).
fn wrapped_in_json(doc: &str) {
    let text = json!({"prd_draft": doc, "quality_score": 77}).to_string();
    let r = read(&text);
    if doc.trim().is_empty() {
        assert_eq!(r, Err(SubmissionError::Empty));
    } else {
        let s = r.expect("wrapped document is read");
        assert_eq!(s.document, doc.trim());
        assert_eq!(s.reported_score, Some(77));
    }
}

/// A fenced JSON submission between prose: the fuzz input is split on U+0001 into
/// prose before, the document, and prose after (fences and braces are taken out of
/// the prose so that it holds no second submission).
fn wrapped_in_fenced_json(text: &str) {
    let parts: Vec<&str> = text.splitn(3, '\u{1}').collect();
    let (before, doc, after) = match parts.as_slice() {
        [b, d, a] => (b.replace(['{', '`'], ""), *d, a.replace(['{', '`'], "")),
        _ => (
            "Here is the draft:".to_string(),
            text,
            "Thanks.".to_string(),
        ),
    };
    let payload = json!({"architecture_draft": doc, "quality_score": "91/100", "gaps": [doc]});
    let pretty = serde_json::to_string_pretty(&payload).unwrap();
    let text = format!("{before}\n```json\n{pretty}\n```\n{after}");
    let r = bmad_mcp::workflow::submission::read(Stage::Architect, &text);
    if doc.trim().is_empty() {
        // A block with metadata only: the prose around it is the document.
        let rest = format!("{before}\n\n{after}");
        if rest.trim().is_empty() {
            assert_eq!(r, Err(SubmissionError::Empty));
        } else {
            let s = r.expect("prose around a metadata block is read");
            assert_eq!(s.document, rest.trim());
            assert_eq!(s.reported_score, Some(91));
        }
    } else {
        let s = r.expect("fenced document is read");
        assert_eq!(s.document, doc.trim());
        assert_eq!(s.reported_score, Some(91));
        assert_eq!(s.gaps, vec![doc.trim().to_string()]);
    }
}

/// A reply wrapped whole in a ```markdown fence is the text inside it.
fn wrapped_in_markdown_fence(text: &str) {
    let inner = text.replace('{', "(");
    let text = format!("```markdown\n{inner}\n```");
    let r = read(&text);
    if inner.trim().is_empty() {
        assert_eq!(r, Err(SubmissionError::Empty));
    } else {
        let s = r.expect("fenced markdown is read");
        assert_eq!(s.document, inner.trim());
        assert_eq!(s.reported_score, last_text_score(&text));
    }
}

fn markers(text: &str) {
    if let Some(n) = last_text_score(text) {
        assert!(n <= 100);
    }
    // A score line added on its own line is the last one stated.
    assert_eq!(
        last_text_score(&format!("{text}\n**Quality Score:** 42 / 100")),
        Some(42)
    );

    let found = sprints(text);
    for (i, (n, title)) in found.iter().enumerate() {
        assert!(*n <= 9999);
        assert!(!title.contains('\n'));
        assert_eq!(title, title.trim());
        assert!(!title.is_empty(), "sprint {n} has an empty title");
        assert!(
            found[..i].iter().all(|(m, _)| m != n),
            "sprint {n} listed twice"
        );
    }
    // A heading added on its own line is found after the others.
    let n = (1..).find(|n| found.iter().all(|(m, _)| m != n)).unwrap();
    let mut more = found.clone();
    more.push((n, "Added sprint".to_string()));
    assert_eq!(
        sprints(&format!("{text}\n## Sprint {n}: Added sprint")),
        more
    );

    if let Some(s) = review_status(text) {
        assert!(["Pass", "Pass with Risk", "Fail"].contains(&s.as_str()));
    }
    assert_eq!(
        review_status(&format!("{text}\nReview Status: pass with risks")).as_deref(),
        Some("Pass with Risk")
    );
}
