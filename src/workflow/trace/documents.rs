//! Reading the ids out of each document (docs/traceability.md has the syntax):
//!
//! * the PRD defines an id where a line opens with it (`- FR-1: …`, `| FR-1 | … |`,
//!   `### FR-1 …`);
//! * the architecture, the sprint plan and the developer's report name the ids they serve
//!   on `Covers: FR-1, FR-2` lines (also `Implements:`, `Implemented:`, `Requirements:`),
//!   each under the heading of its component, sprint or story;
//! * the closing report gives a result per id on a line that opens with it, `| FR-1 | pass
//!   | test name |` or `- FR-1: fail — test name`, and its verdict on the objective on an
//!   `Intent: met | partly met | not met — what is missing` line.
//!
//! Lines inside fenced code blocks are never read.

use std::collections::BTreeMap;

use super::ids::{self, keyed, opening, unmarked};
use super::{Intent, Met, Outcome, Requirement, TestResult};
use crate::code::clip;
use crate::workflow::sections::outside_code;

/// The keys of a line that names the ids a part of a document serves.
pub const COVER_KEYS: [&str; 5] = [
    "covers",
    "implements",
    "implemented",
    "requirements",
    "serves",
];

/// Each line outside fenced code, with the heading it is under (lower-cased text; empty
/// before the first heading) and whether it is a heading itself.
fn lines(document: &str) -> Vec<(String, &str, bool)> {
    let mut heading = String::new();
    outside_code(document)
        .map(|(_, line)| {
            let t = line.trim_start();
            let is_heading = t.starts_with('#')
                || (t.len() > 4 && t.starts_with("**") && t.trim_end().ends_with("**"));
            if is_heading {
                heading = t
                    .trim_matches(|c: char| c == '#' || c == '*' || c.is_whitespace())
                    .to_string();
            }
            (heading.clone(), line, is_heading)
        })
        .collect()
}

/// What the PRD defines: its ids in order, and what is wrong with them.
pub fn prd(document: &str) -> (Vec<Requirement>, Vec<String>) {
    let mut defined: Vec<Requirement> = Vec::new();
    let mut duplicates: Vec<String> = Vec::new();
    // Whether each requirements section (by kind) was seen, and held an id of its kind.
    let mut sections: BTreeMap<&str, bool> = BTreeMap::new();
    // The requirements section the line is in, and its heading's level.
    let mut within: Option<(&str, usize)> = None;
    let lines = lines(document);
    for (at, (_, line, is_heading)) in lines.iter().enumerate() {
        let (line, is_heading) = (*line, *is_heading);
        if is_heading {
            let (kind, level) = requirements_heading(line);
            match (kind, within) {
                (Some(k), _) => {
                    sections.entry(k).or_insert(false);
                    within = Some((k, level));
                }
                (None, Some((_, l))) if level <= l => within = None,
                _ => {}
            }
        }
        let Some((id, rest)) = opening(line) else {
            continue;
        };
        if let Some((k, _)) = within.filter(|(k, _)| ids::prefix(&id) == *k) {
            sections.insert(k, true);
        }
        if defined.iter().any(|r| r.id == id) {
            if !duplicates.contains(&id) {
                duplicates.push(id);
            }
            continue;
        }
        let more = continuation(&lines[at + 1..], line);
        defined.push(requirement(id, rest, &more));
    }
    let problems = prd_problems(&defined, &duplicates, &sections);
    (defined, problems)
}

/// A requirements section's heading: its kind (`FR`, `NFR`) when it is one, and its level
/// (7 for a line that is not a Markdown heading).
fn requirements_heading(line: &str) -> (Option<&'static str>, usize) {
    let t = line.trim_start();
    let level = match t.bytes().take_while(|b| *b == b'#').count() {
        0 => 7,
        n => n,
    };
    let h = t.to_lowercase();
    let kind = if h.contains("non-functional")
        || h.contains("nonfunctional")
        || h.contains("technical requirement")
    {
        Some("NFR")
    } else if h.contains("functional requirement") {
        Some("FR")
    } else {
        None
    };
    (kind, level)
}

/// The most of a requirement's text kept: the whole item as written up to here, then cut
/// at the end of a sentence (or a word) and marked as cut.
pub const REQUIREMENT_BUDGET: usize = 400;

/// The lines after an id's line that are the rest of its item: up to a blank line, a
/// heading, a table row, a line that opens with an id, or a list item no deeper than the
/// item's own.
fn continuation<'a>(after: &[(String, &'a str, bool)], opener: &str) -> Vec<&'a str> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let list_item = |t: &str| {
        t.starts_with(['-', '*', '+'])
            || t.split_once(['.', ')'])
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    after
        .iter()
        .take_while(|(_, l, heading)| {
            let t = l.trim();
            let ends = *heading
                || t.is_empty()
                || t.starts_with('|')
                || opening(l).is_some()
                || (list_item(t) && indent(l) <= indent(opener));
            !ends
        })
        .map(|(_, l, _)| l.trim())
        .collect()
}

/// `text` within [`REQUIREMENT_BUDGET`]: whole when it fits, else cut after the last
/// sentence that fits (a word, when none does) and marked `[…]`.
fn within_budget(text: &str) -> String {
    if text.len() <= REQUIREMENT_BUDGET {
        return text.to_string();
    }
    let mut end = REQUIREMENT_BUDGET;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let cut = head
        .rfind(". ")
        .map(|i| i + 1)
        .filter(|i| *i > REQUIREMENT_BUDGET / 3)
        .or_else(|| head.rfind(' '))
        .unwrap_or(end);
    format!("{} […]", head[..cut].trim_end())
}

/// The requirement an item defines (its id's line and the lines that continue it): an
/// acceptance criterion names the requirements it checks (at most five), and its text
/// reads without them.
fn requirement(id: String, rest: &str, more: &[&str]) -> Requirement {
    let refs = if ids::prefix(&id) == "AC" {
        ids::all(rest)
            .into_iter()
            .filter(|r| ids::prefix(r) != "AC")
            .take(5)
            .collect()
    } else {
        Vec::new()
    };
    // `(FR-1): Given …` reads as `Given …`: the ids are in `refs`.
    let rest = match rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
        Some((inside, after))
            if inside
                .split([',', ' '])
                .all(|w| w.is_empty() || ids::parse(w).is_some()) =>
        {
            after.trim_start_matches([':', ' ', '—', '–', '-'])
        }
        _ => rest,
    };
    let mut text = rest.trim_end_matches(['|', ' ']).trim().to_string();
    for line in more {
        text.push(' ');
        text.push_str(line);
    }
    Requirement {
        id,
        text: within_budget(&clip(&text, 4 * REQUIREMENT_BUDGET)),
        refs,
    }
}

/// What is wrong with the PRD's ids: ids defined twice, a requirements section that gives
/// none an id (`sections`: whether each section seen held an id of its kind), no ids at
/// all, or none on the acceptance criteria.
fn prd_problems(
    defined: &[Requirement],
    duplicates: &[String],
    sections: &BTreeMap<&str, bool>,
) -> Vec<String> {
    let mut problems = Vec::new();
    if !duplicates.is_empty() {
        problems.push(format!(
            "ids defined more than once: {}",
            super::few(duplicates, 10)
        ));
    }
    for (kind, name) in [
        ("FR", "Functional Requirements"),
        ("NFR", "Non-functional (technical) requirements"),
    ] {
        if sections.get(kind) == Some(&false) {
            problems.push(format!(
                "the {name} section gives no requirement an id ({kind}-1, {kind}-2, …)"
            ));
        }
    }
    if defined.is_empty() && sections.is_empty() {
        problems.push("no requirement carries an id (FR-1, NFR-1, AC-1, …)".into());
    } else if !defined.is_empty() && !defined.iter().any(|r| ids::prefix(&r.id) == "AC") {
        problems.push("no acceptance criterion carries an id (AC-1, AC-2, …)".into());
    }
    problems
}

/// The ids each heading of `document` names on its `Covers:` lines: id → the headings
/// (cut to 60 characters), each once, at most five per id.
pub fn covers(document: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (heading, line, _) in lines(document) {
        let Some(value) = keyed(line, &COVER_KEYS) else {
            continue;
        };
        let place = if heading.is_empty() {
            "(document)".to_string()
        } else {
            clip(&heading, 60)
        };
        for id in ids::all(value) {
            let places = out.entry(id).or_default();
            if !places.contains(&place) && places.len() < 5 {
                places.push(place.clone());
            }
        }
    }
    out
}

/// The sprint plan: id → the sprints whose `Covers:` lines name it (a story heading under a
/// sprint counts for that sprint). Ids named outside any sprint are kept under sprint 0.
pub fn plan(document: &str) -> BTreeMap<String, Vec<u32>> {
    let mut out: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut sprint = 0;
    for (_, line, is_heading) in lines(document) {
        if is_heading {
            // A sprint as the plan's own list reads it (`## Sprint N: Title`), so the
            // matrix credits no id to a sprint that scope approval never offers.
            if let Some(n) = crate::workflow::submission::sprint_heading(line) {
                sprint = n;
            } else if line.trim_start().starts_with("# ") || line.trim_start().starts_with("## ") {
                // A level-1 or level-2 heading that is no sprint ends the sprint.
                sprint = 0;
            }
            continue;
        }
        let Some(value) = keyed(line, &COVER_KEYS) else {
            continue;
        };
        for id in ids::all(value) {
            let sprints = out.entry(id).or_default();
            if !sprints.contains(&sprint) {
                sprints.push(sprint);
            }
        }
    }
    out
}

/// The result word at the start of `text`, and the evidence after it.
fn result_in(text: &str) -> Option<(Outcome, &str)> {
    let lower = text.to_lowercase();
    let words: [(&str, Outcome); 9] = [
        ("not tested", Outcome::NotTested),
        ("not run", Outcome::NotTested),
        ("untested", Outcome::NotTested),
        ("skipped", Outcome::NotTested),
        ("passed", Outcome::Pass),
        ("pass", Outcome::Pass),
        ("failed", Outcome::Fail),
        ("fail", Outcome::Fail),
        ("✅", Outcome::Pass),
    ];
    let (word, outcome) = words.into_iter().find(|(w, _)| lower.starts_with(w))?;
    let rest = &text[word.len()..];
    if rest.chars().next().is_some_and(char::is_alphanumeric) {
        return None;
    }
    let evidence = rest.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '|' | '—' | '–' | '-' | '*' | '(' | ',' | ';')
    });
    Some((outcome, evidence))
}

/// The most characters of a result's evidence the matrix keeps.
const EVIDENCE_CHARS: usize = 80;

/// `text` without the closing brackets at its end that nothing in it opened: the `)` of
/// `passed (tests/x.py)`, whose `(` went with the outcome, but not that of `f (3.9)`.
fn unopened_closed(text: &str) -> &str {
    let mut text = text.trim_end();
    while text.ends_with(')') && text.matches(')').count() > text.matches('(').count() {
        text = text[..text.len() - 1].trim_end();
    }
    text
}

/// At most `max` characters of `evidence`, cut between words and before a bracket or a
/// code span it would leave open, marked with `…` when cut.
fn shown_evidence(evidence: &str, max: usize) -> String {
    if evidence.chars().count() <= max {
        return evidence.to_string();
    }
    let mut head = clip(evidence, max - 1);
    head.pop();
    if let Some(space) = head.rfind(' ').filter(|i| *i >= head.len() / 2) {
        head.truncate(space);
    }
    loop {
        let open_bracket = head.matches('(').count() > head.matches(')').count();
        let open_code = head.matches('`').count() % 2 == 1;
        let opener = match (open_bracket, open_code) {
            (false, false) => break,
            (true, _) => head.rfind('('),
            (false, true) => head.rfind('`'),
        };
        head.truncate(opener.unwrap_or(0));
    }
    format!(
        "{}…",
        head.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'))
    )
}

/// The closing report's result per id: the worst one stated for each.
pub fn results(document: &str) -> BTreeMap<String, TestResult> {
    let mut out: BTreeMap<String, TestResult> = BTreeMap::new();
    for (_, line, is_heading) in lines(document) {
        if is_heading {
            continue;
        }
        let Some((id, rest)) = opening(line) else {
            continue;
        };
        let Some((outcome, evidence)) = result_in(rest) else {
            continue;
        };
        let evidence = evidence
            .trim_end_matches(|c: char| c == '|' || c.is_whitespace())
            .replace(" | ", "; ");
        let new = TestResult {
            outcome,
            evidence: shown_evidence(unopened_closed(evidence.trim()), EVIDENCE_CHARS),
        };
        match out.get(&id) {
            Some(old) if old.outcome >= new.outcome => {}
            _ => {
                out.insert(id, new);
            }
        }
    }
    out
}

/// The lessons a closing report says the task resolved: the ids on its `Resolves lesson:`
/// lines (`2026-11-24-3fa9c2d1`, as a lesson's file is named), at most ten.
pub fn resolved_lessons(document: &str) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for (_, line) in outside_code(document) {
        let Some(value) = keyed(line, &["Resolves lesson", "Resolves lessons"]) else {
            continue;
        };
        for word in value.split([',', ' ', '`']).map(str::trim) {
            if is_lesson_id(word) && !ids.iter().any(|i| i == word) && ids.len() < 10 {
                ids.push(word.to_string());
            }
        }
    }
    ids
}

/// A lesson's id: a date and eight hex digits.
fn is_lesson_id(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 19
        && s.chars().enumerate().all(|(i, c)| match i {
            4 | 7 | 10 => c == '-',
            0..=9 => c.is_ascii_digit(),
            _ => c.is_ascii_hexdigit(),
        })
        && b[0] == b'2'
}

/// The closing report's `Intent:` line (the last one), with what it names as not done: the
/// rest of the line, and the list items right under it.
pub fn intent(document: &str) -> Option<Intent> {
    let all = lines(document);
    let (at, value) = all
        .iter()
        .enumerate()
        .filter_map(|(i, (_, line, _))| {
            keyed(line, &["intent", "intent check", "intent verdict"]).map(|v| (i, v))
        })
        .next_back()?;
    let lower = value.to_lowercase();
    // The verdict word, whole: `no` is a verdict, `none` and `not stated` are not.
    let (word_end, verdict) = [
        ("not met", Met::NotMet),
        ("partly met", Met::Partly),
        ("partially met", Met::Partly),
        ("partly", Met::Partly),
        ("partially", Met::Partly),
        ("met", Met::Met),
        ("yes", Met::Met),
        ("no", Met::NotMet),
    ]
    .into_iter()
    .find(|(w, _)| {
        lower.starts_with(w)
            && !lower[w.len()..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric)
    })
    .map(|(w, v)| (w.len(), v))?;
    let mut unmet: Vec<String> = Vec::new();
    let rest = value[word_end..].trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '—' | '–' | '-' | '.' | ',' | '(' | '*')
    });
    if !rest.trim().is_empty() {
        unmet.push(rest.trim().trim_end_matches(')').to_string());
    }
    for (_, line, is_heading) in all.iter().skip(at + 1) {
        let t = line.trim_start();
        if *is_heading || !(t.starts_with("- ") || t.starts_with("* ")) {
            break;
        }
        unmet.push(unmarked(t).to_string());
    }
    Some(Intent {
        verdict,
        unmet: clip(&unmet.join("; "), 300),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRD: &str = "# PRD\n\n## Functional Requirements\n- FR-1: Add items\n| FR-2 | Share a list | Must |\n### FR-3 Export\n\n## Non-functional Requirements\n- NFR-1: p95 under 200 ms\n\n## Acceptance Criteria\n- AC-1 (FR-1): Given a list, when I add, then it shows.\n\n```\n- FR-9: in code, not a definition\n```\nSee FR-1 again.\n";

    #[test]
    fn the_prd_defines_ids_where_a_line_opens_with_one() {
        let (defined, problems) = prd(PRD);
        let ids: Vec<&str> = defined.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["FR-1", "FR-2", "FR-3", "NFR-1", "AC-1"]);
        assert_eq!(defined[1].text, "Share a list | Must");
        assert_eq!(defined[4].refs, ["FR-1"]);
        assert_eq!(defined[4].text, "Given a list, when I add, then it shows.");
        assert!(problems.is_empty(), "{problems:?}");
    }

    /// Each id's whole item as written: the lines that continue it, its own code marks,
    /// and within the budget, cut at a sentence and marked.
    #[test]
    fn a_requirement_is_its_whole_item_as_written() {
        let doc = "## Functional Requirements\n- FR-11: `--output raw|json` (default raw) picks the format.\n- FR-12: **Export** a list\n  to CSV, with headers.\n  - a sub-point of FR-12\n- FR-13: next\n\n## Acceptance Criteria\n- AC-1: Given a syslog file of 10 lines,\n  when I run the parser,\n  then it prints 10 records.\n\nA paragraph after a blank line is not.\n";
        let (defined, _) = prd(doc);
        let text: Vec<&str> = defined.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(
            text,
            [
                "`--output raw|json` (default raw) picks the format.",
                "**Export** a list to CSV, with headers. - a sub-point of FR-12",
                "next",
                "Given a syslog file of 10 lines, when I run the parser, then it prints 10 records.",
            ]
        );
        let long = format!("- FR-1: {}\n", "A sentence of some words. ".repeat(40));
        let (defined, _) = prd(&format!("## Functional Requirements\n{long}"));
        let t = &defined[0].text;
        assert!(t.len() <= REQUIREMENT_BUDGET + 6, "{}", t.len());
        assert!(t.ends_with("some words. […]"), "{t}");
    }

    #[test]
    fn duplicates_and_sections_without_ids_are_named() {
        let doc = "## Functional Requirements\n- FR-1: a\n- FR-01: b\n## Technical Requirements\n- fast\n";
        let (defined, problems) = prd(doc);
        assert_eq!(defined.len(), 1);
        assert_eq!(problems[0], "ids defined more than once: FR-1");
        assert!(
            problems[1].contains(
                "Non-functional (technical) requirements section gives no requirement an id"
            ),
            "{problems:?}"
        );
        assert!(
            problems[2].contains("no acceptance criterion"),
            "{problems:?}"
        );
        let (_, problems) = prd("## Functional Requirements\n- add items\n");
        assert!(problems[0].contains("Functional Requirements section gives no requirement an id"));
        let (_, problems) = prd("## Summary\ntext\n");
        assert_eq!(
            problems,
            ["no requirement carries an id (FR-1, NFR-1, AC-1, …)"]
        );
    }

    #[test]
    fn covers_lines_name_ids_under_their_heading() {
        let doc = "# Architecture\n## Components\n### API server\nCovers: FR-1, FR-2\n### Store\n- **Covers:** NFR-1 and FR-2\nMentions FR-3 in prose.\n";
        let c = covers(doc);
        assert_eq!(c["FR-2"], ["API server", "Store"]);
        assert_eq!(c["NFR-1"], ["Store"]);
        assert!(!c.contains_key("FR-3"));
    }

    #[test]
    fn the_plan_names_ids_per_sprint() {
        let doc = "# Plan\n## Sprint 1: Core\nCovers: FR-1\n### Story 1.1\nCovers: NFR-1\n## Sprint 2: Share\n- Covers: FR-2, FR-1\n## Risks\nCovers: FR-9\n";
        let p = plan(doc);
        assert_eq!(p["FR-1"], [1, 2]);
        assert_eq!(p["NFR-1"], [1]);
        assert_eq!(p["FR-2"], [2]);
        assert_eq!(p["FR-9"], [0]);
    }

    /// The matrix counts the sprints the plan's own list counts: a heading the list does not
    /// read as a sprint (no title, a deeper level) opens none.
    #[test]
    fn the_plan_credits_only_sprints_the_plan_lists() {
        let doc = "## Sprint 1: Core\nCovers: FR-1\n#### Sprint 3 notes\nCovers: FR-3\n## Sprint 2\nCovers: FR-2\n";
        let listed: Vec<u32> = crate::workflow::submission::sprints(doc)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(listed, [1]);
        let p = plan(doc);
        assert_eq!(p["FR-1"], [1]);
        assert_eq!(p["FR-3"], [1], "a sub-heading of sprint 1");
        assert_eq!(
            p["FR-2"],
            [0],
            "`## Sprint 2` without a title is no sprint of the plan"
        );
    }

    #[test]
    fn the_report_gives_a_result_per_id_and_the_worst_counts() {
        let doc = "| Id | Result | Evidence |\n|---|---|---|\n| FR-1 | pass | tests/add.rs::adds |\n| FR-2 | FAIL | share_test |\n- NFR-1: not tested — no load rig\n- AC-1: passed\n- AC-1: failed (manual step 3)\n- FR-3 passes the bar\n";
        let r = results(doc);
        assert_eq!(r["FR-1"].outcome, Outcome::Pass);
        assert_eq!(r["FR-1"].evidence, "tests/add.rs::adds");
        assert_eq!(r["FR-2"].outcome, Outcome::Fail);
        assert_eq!(r["NFR-1"].outcome, Outcome::NotTested);
        assert_eq!(r["NFR-1"].evidence, "no load rig");
        assert_eq!(r["AC-1"].outcome, Outcome::Fail);
        assert!(!r.contains_key("FR-3"), "{r:?}");
    }

    /// Evidence keeps the brackets it closes, and a long one is cut whole: never inside
    /// a bracket or a code span it would leave open.
    #[test]
    fn evidence_keeps_its_brackets_balanced() {
        let long = "`tests.test_fire.PrevTests.test_strictly_before_on_the_minute` (3.9 and 3.11, run twice)";
        let doc = format!("| AC-1 | pass | `test_a` (3.9 and 3.11) |\n| AC-2 | pass | {long} |\n- AC-3: failed (manual step 3)\n");
        let r = results(&doc);
        assert_eq!(r["AC-1"].evidence, "`test_a` (3.9 and 3.11)");
        assert_eq!(r["AC-3"].evidence, "manual step 3");
        let cut = &r["AC-2"].evidence;
        assert_eq!(
            cut, "`tests.test_fire.PrevTests.test_strictly_before_on_the_minute`…",
            "{cut}"
        );
        assert!(cut.chars().count() <= EVIDENCE_CHARS);
    }

    #[test]
    fn the_intent_line_is_read_with_what_is_missing() {
        let i = intent("## Intent\nIntent: Not met — sharing is missing\n- export fails on empty lists\n\nQuality Score: 80/100").unwrap();
        assert_eq!(i.verdict, Met::NotMet);
        assert_eq!(i.unmet, "sharing is missing; export fails on empty lists");
        assert_eq!(intent("**Intent:** met").unwrap().verdict, Met::Met);
        assert_eq!(
            intent("- Intent: partly met (no export)").unwrap().unmet,
            "no export"
        );
        assert_eq!(intent("Intent: maybe"), None);
        assert_eq!(intent("Intent: not stated"), None);
        assert_eq!(
            intent("Intent: No, export is missing").unwrap().unmet,
            "export is missing"
        );
        assert_eq!(intent("no line"), None);
    }
}
