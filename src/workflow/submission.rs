//! Reading what a model submitted (docs/spec.md §8): the document, its self-reported score, its
//! clarification questions and gaps, and the stage-specific markers (sprint headings,
//! review status). JSON is read with a JSON parser, so documents that contain fences,
//! quotes or braces of their own come through whole.

use serde_json::{Map, Value};

use super::score::last_text_score;
use super::stage::{Stage, GENERIC_DOCUMENT_FIELDS};
use crate::workflow::patterns::Pattern;

// The patterns, built once per process, at their first use.
// Digits are ASCII (`[0-9]`): a score in another script's digits is not a number here.

/// An opening code fence of a JSON block.
pub(in crate::workflow) static FENCE: Pattern = Pattern::new(
    "submission::FENCE",
    r"(?m)^[ \t]*```[ \t]*(?:json|JSON|jsonc)?[ \t]*\r?$",
);
/// A line that opens a JSON object.
pub(in crate::workflow) static LINE_BRACE: Pattern =
    Pattern::new("submission::LINE_BRACE", r"(?m)^[ \t]*\{");
/// `## Sprint N: Title`.
pub(in crate::workflow) static SPRINT_HEADING: Pattern = Pattern::new(
    "submission::SPRINT_HEADING",
    r"(?mi)^[ \t]*#{2,3}[ \t]+sprint[ \t]+([0-9]{1,4})[ \t]*[:\-–—][ \t]*(.+?)[ \t#]*\r?$",
);
/// `Review Status: Pass | Pass with Risk | Fail`.
pub(in crate::workflow) static REVIEW_STATUS: Pattern = Pattern::new(
    "submission::REVIEW_STATUS",
    r"(?i)review[ \t]*status[ \t*_]*[:：][ \t*_]*(pass[ \t]+with[ \t]+risks?|pass|fail)",
);

/// Fields that may carry the document at `stage`, in order of preference: the stage's
/// own, then the generic ones. Exactly these are read, and exactly these are named when
/// none is found (another stage's key is not this stage's document).
pub fn document_fields(stage: Stage) -> impl Iterator<Item = &'static str> + Clone {
    stage
        .document_fields()
        .iter()
        .copied()
        .chain(GENERIC_DOCUMENT_FIELDS)
}

/// A question as the model asked it (ids are assigned by the workflow).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedQuestion {
    pub question: String,
    pub context: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// The document text, trimmed, never empty.
    pub document: String,
    /// A score the submission stated itself, 0–100.
    pub reported_score: Option<u32>,
    /// A `quality_score` the JSON gave that is not a number from 0 to 100 (`"high"`,
    /// `150`), as written and clipped, when no readable score was stated either.
    pub unreadable_score: Option<String>,
    pub questions: Vec<AskedQuestion>,
    pub gaps: Vec<String>,
    /// The keys of the JSON object that nothing reads (not the document, `quality_score`,
    /// `questions`, `gaps` or `review_status`), clipped: reported, never silently dropped.
    pub unread: Vec<String>,
}

/// The JSON keys a submission is read by, besides its stage's document keys.
const READ_KEYS: [&str; 4] = ["quality_score", "questions", "gaps", "review_status"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmissionError {
    #[error("the submission holds no document text")]
    Empty,
    /// A JSON object was read, but none of its keys is a document field, and there is no
    /// text around it: the document was most likely put under another key.
    #[error("the JSON has no document field (its keys: {})", .keys.join(", "))]
    NoDocumentField { keys: Vec<String> },
}

/// Reads one engine's submission at `stage`.
pub fn read(stage: Stage, text: &str) -> Result<Submission, SubmissionError> {
    let fields = document_fields(stage);
    // Documents can be megabytes: each is copied once, or moved out of the JSON.
    let (json, document) = match find_json_object(text, fields.clone()) {
        Some((mut obj, span)) => {
            let document = match take_document_field(&mut obj, fields.clone()) {
                // Byte for byte, as the author wrote it (a trailing newline included).
                Some(doc) => doc,
                // A JSON block with only metadata: the document is the text around it.
                None => format!("{}{}", &text[..span.start], &text[span.end..])
                    .trim()
                    .to_string(),
            };
            (Some(obj), document)
        }
        None => (None, unwrap_markdown_fence(text).to_string()),
    };
    if document.trim().is_empty() {
        return Err(match json {
            // A document field given empty is an empty document; none at all, a document
            // put under a key no stage reads.
            Some(obj) if !obj.is_empty() && !fields.clone().any(|f| obj.contains_key(f)) => {
                SubmissionError::NoDocumentField {
                    keys: obj.keys().cloned().collect(),
                }
            }
            _ => SubmissionError::Empty,
        });
    }

    let reported_score = json
        .as_ref()
        .and_then(|o| o.get("quality_score"))
        .and_then(score_value)
        .or_else(|| last_text_score(text));
    let unreadable_score = match json.as_ref().and_then(|o| o.get("quality_score")) {
        Some(v) if reported_score.is_none() && !v.is_null() => Some(crate::code::clip(
            &match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            40,
        )),
        _ => None,
    };

    let questions = json
        .as_ref()
        .and_then(|o| o.get("questions"))
        .map(read_questions)
        .unwrap_or_default();
    let gaps = json
        .as_ref()
        .and_then(|o| o.get("gaps"))
        .map(read_strings)
        .unwrap_or_default();

    let unread = json
        .iter()
        .flat_map(|o| o.keys())
        .filter(|k| !READ_KEYS.contains(&k.as_str()) && !fields.clone().any(|f| f == k.as_str()))
        .take(10)
        .map(|k| crate::code::clip(k, 40))
        .collect();

    Ok(Submission {
        document,
        reported_score,
        unreadable_score,
        questions,
        gaps,
        unread,
    })
}

/// The JSON object that wraps the submission: the whole text, or a fenced block (```json
/// or a bare fence opening on `{`), or an object opening a line. Documents often carry
/// JSON samples of their own (an API design, a config file), so an embedded object counts
/// only when it looks like a submission (see [`looks_like_submission`]).
/// Returns the object and the byte span it covered (fences included).
fn find_json_object(
    text: &str,
    fields: impl Iterator<Item = &'static str> + Clone,
) -> Option<(Map<String, Value>, std::ops::Range<usize>)> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(trimmed) {
            return Some((o, 0..text.len()));
        }
    }

    let fenced = FENCE.find_iter(text).filter_map(|m| {
        let body_start = m.end();
        let (obj, used) = parse_prefix_object(&text[body_start..])?;
        let mut end = body_start + used;
        // Swallow the closing fence when it follows the object.
        if let Some(stripped) = text[end..].trim_start().strip_prefix("```") {
            end = text.len() - stripped.len();
        }
        Some((obj, m.start()..end))
    });
    let bare = LINE_BRACE.find_iter(text).filter_map(|m| {
        let start = m.end() - 1;
        let (obj, used) = parse_prefix_object(&text[start..])?;
        Some((obj, start..start + used))
    });
    fenced
        .chain(bare)
        .find(|(obj, span)| looks_like_submission(obj, text.len() - span.len(), fields.clone()))
}

/// An embedded object is the submission when it states a score or carries a
/// stage-specific document field; with only a generic field (`draft`, `result`,
/// `content`) it must hold more text than surrounds it, as a wrapper does and a sample
/// inside a document does not.
fn looks_like_submission(
    obj: &Map<String, Value>,
    outside_len: usize,
    mut fields: impl Iterator<Item = &'static str>,
) -> bool {
    if obj.contains_key("quality_score") {
        return true;
    }
    fields.any(|f| {
        let Some(doc) = obj.get(f).and_then(Value::as_str) else {
            return false;
        };
        !GENERIC_DOCUMENT_FIELDS.contains(&f) || doc.len() > outside_len
    })
}

/// Parses one JSON object at the start of `s` (after whitespace), returning it and the
/// number of bytes consumed. Whatever follows the object is left alone.
fn parse_prefix_object(s: &str) -> Option<(Map<String, Value>, usize)> {
    let lead = s.len() - s.trim_start().len();
    if !s[lead..].starts_with('{') {
        return None;
    }
    let mut stream = serde_json::Deserializer::from_str(&s[lead..]).into_iter::<Value>();
    match stream.next() {
        Some(Ok(Value::Object(o))) => Some((o, lead + stream.byte_offset())),
        _ => None,
    }
}

/// A reply wrapped whole in one ```markdown (or ```md) fence is the document inside it.
fn unwrap_markdown_fence(text: &str) -> &str {
    let t = text.trim();
    let Some(first_nl) = t.find('\n') else {
        return text;
    };
    let opener = t[..first_nl].trim();
    if !(opener == "```markdown" || opener == "```md") {
        return text;
    }
    match t[first_nl + 1..].strip_suffix("```") {
        Some(inner) => inner,
        None => text,
    }
}

/// Removes and returns the first non-blank document field.
fn take_document_field(
    obj: &mut Map<String, Value>,
    mut fields: impl Iterator<Item = &'static str>,
) -> Option<String> {
    let field = fields.find(|f| {
        obj.get(*f)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    })?;
    match obj.remove(field) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// A score given as a number or a numeric string, within 0–100.
fn score_value(v: &Value) -> Option<u32> {
    let n = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s
            .trim()
            .trim_end_matches("/100")
            .trim()
            .parse::<f64>()
            .ok()?,
        _ => return None,
    };
    (0.0..=100.0).contains(&n).then(|| n.round() as u32)
}

fn read_questions(v: &Value) -> Vec<AskedQuestion> {
    let Some(items) = v.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(s) => Some(AskedQuestion {
                question: s.trim().to_string(),
                context: None,
            }),
            Value::Object(o) => {
                let q = ["question", "text", "q"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(Value::as_str))?;
                let context = o
                    .get("context")
                    .and_then(Value::as_str)
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty());
                Some(AskedQuestion {
                    question: q.trim().to_string(),
                    context,
                })
            }
            _ => None,
        })
        .filter(|q| !q.question.is_empty())
        .collect()
}

fn read_strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// What a sprint heading with nothing but markup after its number is called.
pub const UNTITLED_SPRINT: &str = "(untitled)";

/// Sprints from headings `## Sprint N: Title` (also `###`, and `-`/`–`/`—` for `:`).
pub fn sprints(document: &str) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = Vec::new();
    for c in SPRINT_HEADING.captures_iter(document) {
        let Ok(n) = c[1].parse::<u32>() else { continue };
        if out.iter().any(|(m, _)| *m == n) {
            continue;
        }
        let title = c[2].trim().trim_matches('*').trim();
        let title = if title.is_empty() {
            UNTITLED_SPRINT
        } else {
            title
        };
        out.push((n, title.to_string()));
    }
    out
}

/// The sprint a line of a sprint plan opens, read as [`sprints`] reads the plan's headings.
pub fn sprint_heading(line: &str) -> Option<u32> {
    SPRINT_HEADING.captures(line)?[1].parse().ok()
}

/// `Review Status: Pass | Pass with Risk | Fail`, the last one stated.
pub fn review_status(document: &str) -> Option<String> {
    let last = REVIEW_STATUS.captures_iter(document).last()?;
    let v = last[1].to_ascii_lowercase();
    Some(if v.starts_with("pass") && v.contains("risk") {
        "Pass with Risk".to_string()
    } else if v == "pass" {
        "Pass".to_string()
    } else {
        "Fail".to_string()
    })
}

/// The value of `key` in the JSON object of a submission at `stage`, if it is JSON and has
/// one.
pub fn json_field(stage: Stage, text: &str, key: &str) -> Option<Value> {
    find_json_object(text, document_fields(stage)).and_then(|(mut obj, _)| obj.remove(key))
}

/// The submission whose document is `document` (a file's text, taken whole: a JSON or a
/// fence inside it stays the document's) and whose score, questions and gaps are those of
/// the JSON object `meta`, when given; refused when `meta` is not one, or carries a
/// document of its own.
pub fn with_document(stage: Stage, meta: Option<&str>, document: &str) -> Result<String, String> {
    let meta = meta.map(str::trim).filter(|m| !m.is_empty());
    let mut obj = match meta {
        None => Map::new(),
        Some(m) => match serde_json::from_str::<Value>(unwrap_json_fence(m)) {
            Ok(Value::Object(obj)) => obj,
            _ => return Err("with `document_file`, `claude_result` is only a JSON object of `quality_score`, `questions` and `gaps` (the document is the file)".into()),
        },
    };
    if let Some(key) = document_fields(stage).find(|f| obj.contains_key(*f)) {
        return Err(format!(
            "`claude_result` holds a document under `{key}`, and `document_file` names one: only one of them can be the document"
        ));
    }
    let key = document_fields(stage).next().unwrap_or("draft");
    obj.insert(key.to_string(), Value::String(document.to_string()));
    Ok(Value::Object(obj).to_string())
}

/// The JSON inside a ```` ```json ```` fence, or the text as it is.
fn unwrap_json_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, b)| b);
    body.trim_end().strip_suffix("```").unwrap_or(text).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A submission at `po`, where most of these tests submit.
    fn read(text: &str) -> Result<Submission, SubmissionError> {
        super::read(Stage::Po, text)
    }

    #[test]
    fn document_fields_are_read_in_the_order_the_spec_gives() {
        let spec: [(Stage, [&str; 2]); 6] = [
            (Stage::Po, ["prd_draft", "prd_updated"]),
            (
                Stage::Architect,
                ["architecture_draft", "architecture_updated"],
            ),
            (Stage::Sm, ["sprint_plan", "sprint_plan_updated"]),
            (Stage::Dev, ["implementation", "dev_result"]),
            (Stage::Review, ["review", "review_result"]),
            (Stage::Qa, ["qa_report", "test_report"]),
        ];
        for (stage, own) in spec {
            let want: Vec<&str> = own
                .into_iter()
                .chain(["draft", "result", "content"])
                .collect();
            assert_eq!(document_fields(stage).collect::<Vec<_>>(), want, "{stage}");
        }
    }

    #[test]
    fn another_stages_key_is_not_read_and_is_named() {
        // A stage reads exactly the keys its error lists.
        let text = r##"{"qa_report": "# QA", "quality_score": 95}"##;
        assert_eq!(
            read(text),
            Err(SubmissionError::NoDocumentField {
                keys: vec!["qa_report".into(), "quality_score".into()]
            })
        );
        assert_eq!(super::read(Stage::Qa, text).unwrap().document, "# QA");
        // A generic key is read at every stage.
        for stage in Stage::ALL {
            let s = super::read(stage, r##"{"content": "# Doc"}"##).unwrap();
            assert_eq!(s.document, "# Doc", "{stage}");
        }
    }

    #[test]
    fn a_files_document_is_taken_whole_beside_the_jsons_questions() {
        let doc = "# PRD\n\n```json\n{\"prd_draft\": \"not this\"}\n```\n";
        let text = with_document(Stage::Po, None, doc).unwrap();
        assert_eq!(super::read(Stage::Po, &text).unwrap().document, doc);
        let meta =
            "```json\n{\"quality_score\": 70, \"questions\": [{\"question\": \"Who?\"}]}\n```";
        let s = super::read(
            Stage::Po,
            &with_document(Stage::Po, Some(meta), doc).unwrap(),
        )
        .unwrap();
        assert_eq!(
            (s.document.as_str(), s.reported_score, s.questions.len()),
            (doc, Some(70), 1)
        );
        let both = with_document(Stage::Po, Some(r#"{"content": "x"}"#), doc).unwrap_err();
        assert!(both.contains("`content`"), "{both}");
        assert!(with_document(Stage::Po, Some("# my PRD"), doc).is_err());
    }

    #[test]
    fn plain_markdown_is_the_document() {
        let s = read("# PRD\n\nSome text").unwrap();
        assert_eq!(s.document, "# PRD\n\nSome text");
        assert_eq!(s.reported_score, None);
        assert!(s.questions.is_empty());
    }

    #[test]
    fn whole_text_json_object_is_read() {
        let s = read(r##"{"prd_draft": "# PRD", "quality_score": 72, "gaps": ["metrics"], "questions": [{"id": "x", "question": "Who?", "context": "users"}, "When?"]}"##).unwrap();
        assert_eq!(s.document, "# PRD");
        assert_eq!(s.reported_score, Some(72));
        assert_eq!(s.gaps, vec!["metrics"]);
        assert_eq!(s.questions.len(), 2);
        assert_eq!(s.questions[0].question, "Who?");
        assert_eq!(s.questions[0].context.as_deref(), Some("users"));
        assert_eq!(s.questions[1].question, "When?");
    }

    #[test]
    fn a_fenced_document_holding_fences_and_quotes_survives_whole() {
        let doc = "# Architecture\n\n```rust\nfn main() { println!(\"{}\", \"}\"); }\n```\n\nSay \"hi\" and `x`.\n```json\n{\"a\": 1}\n```\nEnd.";
        let payload = serde_json::json!({"architecture_draft": doc, "quality_score": "93"});
        let text = format!(
            "Here is my work.\n\n```json\n{}\n```\n\nThanks.",
            serde_json::to_string_pretty(&payload).unwrap()
        );
        let s = super::read(Stage::Architect, &text).unwrap();
        assert_eq!(s.document, doc);
        assert_eq!(s.reported_score, Some(93));
    }

    #[test]
    fn scores_may_be_numbers_or_numeric_strings() {
        for (v, want) in [
            ("92", Some(92)),
            ("\"88\"", Some(88)),
            ("\" 91 \"", Some(91)),
            ("\"90/100\"", Some(90)),
            ("89.6", Some(90)),
            ("150", None),
            ("-3", None),
            ("\"high\"", None),
            ("null", None),
        ] {
            let s = read(&format!(
                r##"{{"prd_draft": "# PRD", "quality_score": {v}}}"##
            ))
            .unwrap();
            assert_eq!(s.reported_score, want, "quality_score {v}");
        }
    }

    #[test]
    fn the_last_quality_score_line_in_text_wins() {
        let text = "Quality Score: 40/100 in the draft\n...\n**Quality Score:** 91 / 100\n";
        assert_eq!(read(text).unwrap().reported_score, Some(91));
        assert_eq!(last_text_score("**quality score: 77/100**"), Some(77));
        assert_eq!(last_text_score("QUALITY SCORE : 65 /100"), Some(65));
        assert_eq!(last_text_score("Quality Score: 300/100"), None);
        assert_eq!(last_text_score("quality is great"), None);
        // Only ASCII digits are a score: other scripts' digits are not read as numbers.
        assert_eq!(last_text_score("Quality Score: ٩٠/100"), None);
        assert_eq!(last_text_score("Quality Score: 9٠/100"), None);
    }

    #[test]
    fn a_json_score_beats_a_text_score() {
        let text =
            "```json\n{\"prd_updated\": \"Quality Score: 50/100\", \"quality_score\": 95}\n```";
        assert_eq!(read(text).unwrap().reported_score, Some(95));
    }

    #[test]
    fn an_empty_document_is_refused() {
        assert_eq!(read("   \n "), Err(SubmissionError::Empty));
        assert_eq!(
            read(r#"{"prd_draft": "", "quality_score": 95}"#),
            Err(SubmissionError::Empty)
        );
        // Only metadata, nothing around it: the message will say where a document goes.
        assert_eq!(
            read("```json\n{\"quality_score\": 95}\n```"),
            Err(SubmissionError::NoDocumentField {
                keys: vec!["quality_score".into()]
            })
        );
        assert_eq!(
            read(r##"{"prd": "# PRD", "quality_score": 95}"##),
            Err(SubmissionError::NoDocumentField {
                keys: vec!["prd".into(), "quality_score".into()]
            })
        );
    }

    #[test]
    fn a_metadata_only_block_leaves_the_surrounding_text_as_the_document() {
        let text = "# QA report\n\nAll good.\n\n```json\n{\"quality_score\": 94}\n```\n";
        let s = read(text).unwrap();
        assert_eq!(s.document, "# QA report\n\nAll good.");
        assert_eq!(s.reported_score, Some(94));
    }

    #[test]
    fn document_fields_are_tried_in_order() {
        let s = read(r#"{"content": "c", "prd_updated": "u", "prd_draft": "  "}"#).unwrap();
        assert_eq!(s.document, "u");
    }

    #[test]
    fn braces_in_a_plain_document_are_not_mistaken_for_json() {
        let text = "# Dev report\n\n{\n  \"name\": \"config\"\n}\n\nDone.";
        let s = read(text).unwrap();
        assert_eq!(s.document, text);
    }

    #[test]
    fn json_samples_inside_a_markdown_document_stay_in_the_document() {
        let text = "# API design\n\n```json\n{\"content\": \"hello\", \"id\": 3}\n```\n\nThe endpoint returns the object above with a long explanation of fields.";
        let s = read(text).unwrap();
        assert_eq!(s.document, text);
        let text = "# Config\n\n```\n{\"port\": 8080}\n```\n";
        assert_eq!(read(text).unwrap().document, text);
    }

    #[test]
    fn an_unfenced_submission_object_after_prose_is_found() {
        let text = "Sure, here it is:\n{\"prd_draft\": \"# PRD\\n```\\ncode\\n```\", \"quality_score\": 70}";
        let s = read(text).unwrap();
        assert_eq!(s.document, "# PRD\n```\ncode\n```");
        assert_eq!(s.reported_score, Some(70));
    }

    #[test]
    fn sprint_headings_in_every_allowed_form() {
        let doc = "# Plan\n## Sprint 1: Foundations\ntext\n### Sprint 2 - API **\n## Sprint 3 – UI\n## Sprint 4 — Polish ##\n#### Sprint 5: too deep\n## Sprint 1: duplicate\nSprint 6: not a heading";
        let got = sprints(doc);
        assert_eq!(
            got,
            vec![
                (1, "Foundations".to_string()),
                (2, "API".to_string()),
                (3, "UI".to_string()),
                (4, "Polish".to_string())
            ]
        );
        let untitled = "## Sprint 1: **\n## Sprint 2: *** ***\n## Sprint 3: ** Real **";
        assert_eq!(
            sprints(untitled),
            vec![
                (1, UNTITLED_SPRINT.to_string()),
                (2, UNTITLED_SPRINT.to_string()),
                (3, "Real".to_string())
            ]
        );
    }

    #[test]
    fn a_markdown_fence_around_the_whole_reply_is_removed() {
        let s = read("```markdown\n# Plan\n\n```sh\nls\n```\n## Sprint 1: A\n```\n").unwrap();
        assert_eq!(s.document, "# Plan\n\n```sh\nls\n```\n## Sprint 1: A\n");
        let plain = "```sh\nls\n```";
        assert_eq!(read(plain).unwrap().document, plain);
    }

    #[test]
    fn documents_are_kept_byte_for_byte() {
        for doc in [
            "# PRD\n\nBody.\n",
            "\n  # Indented start\r\nCRLF line\r\n\n",
            "# No final newline",
        ] {
            assert_eq!(read(doc).unwrap().document, doc);
            let json = serde_json::json!({"prd_draft": doc, "quality_score": 90}).to_string();
            assert_eq!(read(&json).unwrap().document, doc);
        }
        assert_eq!(read(" \n\t\n"), Err(SubmissionError::Empty));
    }

    #[test]
    fn every_form_the_guidance_suggests_for_a_score_is_read() {
        // The forms the guidance and the prompts name, after a Markdown document.
        for (ending, want) in [
            ("Quality Score: 92/100", 92),
            ("**Quality Score: 88 / 100**", 88),
            ("\"quality_score\": 93", 93),
            ("\"quality_score\": 91,", 91),
            ("quality_score: 90", 90),
            ("`\"quality_score\": 94`", 94),
        ] {
            let doc = format!("# PRD\n\n## Executive Summary\nText.\n\n{ending}\n");
            assert_eq!(read(&doc).unwrap().reported_score, Some(want), "{ending}");
        }
        // Mentioned in passing, or out of range, it is not a score.
        for text in [
            "We track the quality_score: of each build",
            "quality_score: 250",
            "a quality_score: 90 mid-sentence",
        ] {
            assert_eq!(read(text).unwrap().reported_score, None, "{text}");
        }
        // The guidance names these forms; each is read (the advice and the parser agree).
        let advice = crate::workflow::quality::guidance(crate::workflow::Stage::Po, "x", false);
        let last = advice.last().unwrap();
        assert!(
            last.contains("\"quality_score\": N") && last.contains("Quality Score: N/100"),
            "{last}"
        );
    }

    #[test]
    fn review_status_is_normalised() {
        assert_eq!(
            review_status("Review Status: Pass").as_deref(),
            Some("Pass")
        );
        assert_eq!(
            review_status("**Review Status:** pass with risk").as_deref(),
            Some("Pass with Risk")
        );
        assert_eq!(
            review_status("review status: FAIL").as_deref(),
            Some("Fail")
        );
        assert_eq!(review_status("no status"), None);
    }
}
