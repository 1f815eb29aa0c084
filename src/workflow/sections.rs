//! The sections each stage's document is expected to have: their display names and the
//! heading words that count as each. The stage table ([`super::stage`]) points each stage
//! at its list; the quality estimate and the guidance read them from there.

/// A quality a stage's document is checked for beyond its sections, when it falls below
/// the gate; each stage is checked only for what its own prompt asks of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Numbers with units.
    Measurable,
    /// Given/When/Then or "acceptance criteria".
    AcceptanceCriteria,
    Dependencies,
    ErrorCases,
    /// A timeline or milestones.
    Timeline,
}

/// What a section's text must show beyond being there: `None` when it does, else what it
/// lacks, said for the human.
pub type Judge = fn(&str) -> Option<&'static str>;

/// One expected section: its display name, the heading words that count as it, and what
/// its text must show, where a heading with any text under it is not enough.
#[derive(Debug)]
pub struct Section {
    pub name: &'static str,
    pub any_of: &'static [&'static str],
    pub judge: Option<Judge>,
}

const fn sec(name: &'static str, any_of: &'static [&'static str]) -> Section {
    Section {
        name,
        any_of,
        judge: None,
    }
}

/// The quick track's short technical spec.
pub const SPEC: &[Section] = &[
    sec("Change", &["change", "summary", "goal"]),
    sec(
        "Approach",
        &["approach", "design", "implementation", "plan"],
    ),
    sec("Files", &["file", "module", "component", "affected"]),
    sec(
        "Acceptance Criteria",
        &["acceptance", "criteria", "done when"],
    ),
    sec("Risks", &["risk", "rollback", "out of scope"]),
];

/// The fix track's bug report.
pub const BUG: &[Section] = &[
    sec("Summary", &["summary", "overview", "bug"]),
    sec("Reproduction Steps", &["reproduc", "steps", "repro"]),
    sec("Expected Behaviour", &["expected"]),
    sec("Actual Behaviour", &["actual", "observed"]),
    sec("Suspected Cause", &["cause", "analysis", "suspect", "root"]),
];

/// What the fix track's implementation report must show: the test written first, and
/// how it failed before the fix.
pub const FAILING_TEST: &[Section] = &[Section {
    name: "Failing Test",
    any_of: &["failing test", "test first", "regression test"],
    judge: Some(super::failing_test::shortfall),
}];

pub const PO: &[Section] = &[
    sec(
        "Executive Summary",
        &["executive summary", "summary", "overview"],
    ),
    sec(
        "Business Goals",
        &["business goal", "business objective", "goals"],
    ),
    sec("User Stories", &["user stor"]),
    sec("Functional Requirements", &["functional requirement"]),
    sec(
        "Technical Requirements",
        &["technical requirement", "non-functional", "nonfunctional"],
    ),
    sec("Success Metrics", &["success metric", "kpi", "metrics"]),
];

pub const ARCHITECT: &[Section] = &[
    sec("System Overview", &["overview", "summary", "context"]),
    sec(
        "Technology Stack",
        &["technology stack", "tech stack", "technolog"],
    ),
    sec("Components", &["component", "module", "service"]),
    sec(
        "Data Model",
        &["data model", "schema", "database", "storage", "format"],
    ),
    // The interface of a service, a library or a command-line tool.
    sec(
        "Interface (API, commands)",
        &["api", "interface", "endpoint", "command", "usage"],
    ),
    sec("Security", &["security", "auth"]),
];

pub const SM: &[Section] = &[
    sec("Sprint Overview", &["overview", "summary", "goal"]),
    sec("Sprints", &["sprint 1", "sprint"]),
    sec("Tasks", &["task", "backlog", "stor"]),
    sec("Estimates", &["estimat", "story point", "effort"]),
    sec("Dependencies", &["dependenc"]),
    sec("Risks", &["risk"]),
];

pub const DEV: &[Section] = &[
    sec("Summary", &["summary", "overview"]),
    sec("Changes", &["change", "files", "implementation"]),
    sec("Tests", &["test"]),
    sec("How to Run", &["run", "usage", "setup", "build"]),
    sec(
        "Known Issues",
        &["known issue", "limitation", "todo", "follow-up"],
    ),
    sec("Sprint Scope", &["sprint", "scope"]),
];

pub const REVIEW: &[Section] = &[
    sec("Summary", &["summary", "overview"]),
    sec("Findings", &["finding", "issue"]),
    sec("Security", &["security"]),
    sec("Performance", &["performance"]),
    sec(
        "Recommendations",
        &["recommendation", "suggest", "action item"],
    ),
    sec("Review Status", &["status", "verdict"]),
];

/// The review's built-in layers, each reviewed in a fresh context and reported in a
/// section of its own: the edge cases, the verification gaps, the blind pass (the diff
/// alone) and the acceptance audit (the change against what the task's documents asked;
/// not the light track's `Intent:` line, which is the review's own verdict). Their names
/// are the headings the review prompt asks for, and the sections an installed BMAD
/// method's layers of the same `id` are reported in (`prompts::review_layers::KNOWN`).
pub const LAYERS: &[Section] = &[
    sec("Edge Cases", &["edge case"]),
    sec("Verification Gaps", &["verification gap"]),
    sec("Blind Pass", &["blind pass"]),
    sec("Acceptance Audit", &["acceptance audit"]),
];

/// The sections the review's findings are listed in: its own `Findings` and each layer's.
pub const FINDINGS: &[Section] = &[
    sec("Findings", &["finding"]),
    sec("Edge Cases", &["edge case"]),
    sec("Verification Gaps", &["verification gap"]),
    sec("Blind Pass", &["blind pass"]),
    sec("Acceptance Audit", &["acceptance audit"]),
];

pub const QA: &[Section] = &[
    sec("Test Strategy", &["strategy", "approach", "scope"]),
    sec("Test Cases", &["test case"]),
    sec("Results", &["result"]),
    sec("Coverage", &["coverage"]),
    sec("Defects", &["defect", "bug", "issue"]),
    sec(
        "Recommendation",
        &["recommendation", "release", "sign-off", "conclusion"],
    ),
];

/// A heading of a document: its level (1–6 for `#`…`######`, 7 for a line that is
/// wholly bold), its lower-cased text and its line number.
#[derive(Debug)]
struct Heading {
    level: u8,
    text: String,
    line: usize,
}

/// The heading a line is, if it is one: `#` to `######` followed by a space (or
/// nothing), or a line that is wholly bold (`**Summary**`).
fn heading(line: &str) -> Option<(u8, &str)> {
    let t = line.trim();
    let hashes = t.len() - t.trim_start_matches('#').len();
    if (1..=6).contains(&hashes) {
        let rest = &t[hashes..];
        if rest.is_empty() || rest.starts_with([' ', '\t']) {
            return Some((hashes as u8, rest.trim().trim_end_matches('#').trim()));
        }
        return None;
    }
    let bold = t.len() > 4 && t.starts_with("**") && t.ends_with("**");
    bold.then(|| (7, t.trim_matches('*').trim()))
}

/// Text that fills a section: a letter or a digit, and not a placeholder (`...`, `TBD`,
/// `TODO`, `N/A`, `<what goes here>`) nor the author's score line.
fn is_content(line: &str) -> bool {
    let t = line.trim();
    if (t.starts_with('<') && t.ends_with('>')) || super::score::last_text_score(t).is_some() {
        return false;
    }
    let word = t.trim_matches(|c: char| !c.is_alphanumeric());
    if word.is_empty() {
        return false;
    }
    let lower = word.to_lowercase();
    ![
        "tbd",
        "tbc",
        "todo",
        "n/a",
        "to do",
        "to be done",
        "placeholder",
    ]
    .contains(&lower.as_str())
}

/// The lines of `document` outside fenced code blocks, with their line numbers: a
/// `# comment` in a shell sample is no heading, and no line there is read for ids.
pub(crate) fn outside_code(document: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fence: Option<&str> = None;
    document.lines().enumerate().filter(move |(_, line)| {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m && t.trim_end() == m => fence = None,
            (Some(_), _) => {}
            (None, None) => return true,
        }
        false
    })
}

/// The document's lines, and its headings outside code.
fn outline_of(document: &str) -> (Vec<&str>, Vec<Heading>) {
    let heads = outside_code(document)
        .filter_map(|(line, text)| {
            let (level, text) = heading(text)?;
            Some(Heading {
                level,
                text: text.to_lowercase(),
                line,
            })
        })
        .collect();
    (document.lines().collect(), heads)
}

/// What the server's own reading of a document finds of the sections a stage requires,
/// in the stage's order: those with no heading, and those whose heading has nothing
/// under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    pub missing: Vec<String>,
    pub empty: Vec<String>,
    /// Sections there and filled whose text does not show what it must: "`Failing Test`
    /// names no test (…)".
    pub short: Vec<String>,
}

impl Found {
    /// Every required section is there, has content, and shows what it must.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.empty.is_empty() && self.short.is_empty()
    }

    /// How many sections are missing or empty.
    fn lacking(&self) -> usize {
        self.missing.len() + self.empty.len() + self.short.len()
    }
}

/// Checks `document` for `sections`. A section is present when a heading holds one of
/// its words, and filled when some real text (not a placeholder) follows that heading
/// before the next heading of the same or a higher level. The document's title (a first
/// heading that encloses every other) is no section: `# Architecture: Invoice Service`
/// is not the "Components" section.
pub fn check(sections: &[Section], document: &str) -> Found {
    let outline = Outline::of(document);
    let mut found = Found::default();
    for s in sections {
        let filled = outline.bodies(s);
        if filled.is_empty() {
            found.missing.push(s.name.to_string());
            continue;
        }
        let Some(text) = filled.iter().find(|b| b.iter().any(|l| is_content(l))) else {
            found.empty.push(s.name.to_string());
            continue;
        };
        let short = s.judge.and_then(|judge| {
            // A judge is the server's reading of the author's words: its failure is ours.
            let _judging = crate::fault::doing("judge", format!("judge the `{}` section", s.name));
            judge(&text.join("\n"))
        });
        if let Some(short) = short {
            found.short.push(format!("`{}` {short}", s.name));
        }
    }
    found
}

/// A section of the template an installed BMAD method writes a stage's document in (its
/// PRD template, its architecture spine): the heading as the template words it, the words
/// a document's heading holds to count as it, and whether the template keeps it in every
/// document or lets one leave it out ("cut this section otherwise").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shaped {
    pub name: String,
    pub key: String,
    pub required: bool,
}

/// The heading text a template's section and a document's heading are matched by: lower
/// case, without the numbering the method's PRD gives its sections (`5.`, `2.3`) nor what
/// the template adds in parentheses (`(Explicit)`, `*(optional)*`).
pub fn heading_key(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut key = String::new();
    let mut depth = 0usize;
    for c in lower.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => key.push(c),
            _ => {}
        }
    }
    let key = key.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
    key.trim_matches(|c: char| c.is_whitespace() || c == '*' || c == '_' || c == ':')
        .to_string()
}

/// Checks `document` for the sections of a template: a required one absent is missing,
/// and any of them there with nothing under it is empty (the method writes no empty
/// headings).
pub fn check_shaped(sections: &[Shaped], document: &str) -> Found {
    let outline = Outline::of(document);
    let mut found = Found::default();
    for s in sections.iter().filter(|s| !s.key.is_empty()) {
        let filled = outline.bodies_where(|text| heading_key(text).contains(&s.key));
        if filled.is_empty() {
            if s.required {
                found.missing.push(s.name.clone());
            }
        } else if !filled.iter().any(|b| b.iter().any(|l| is_content(l))) {
            found.empty.push(s.name.clone());
        }
    }
    found
}

/// What a document written in one of two shapes lacks: the stage's own sections (`own`),
/// or the installed template's (`template`, when there is one): the shape it is nearer,
/// the template's on a tie.
pub fn nearer(own: Found, template: Option<Found>) -> Found {
    match template {
        Some(t) if own.complete() && !t.complete() => own,
        Some(t) if t.lacking() <= own.lacking() || t.complete() => t,
        _ => own,
    }
}

/// The real text (placeholders left out) of the first heading of `section` that has any,
/// as [`check`] finds it: `None` when the document has no such section or it is empty.
pub fn text_of(section: &Section, document: &str) -> Option<String> {
    let outline = Outline::of(document);
    let body = outline
        .bodies(section)
        .into_iter()
        .find(|b| b.iter().any(|l| is_content(l)))?;
    let lines: Vec<&str> = body.into_iter().filter(|l| is_content(l)).collect();
    Some(lines.join("\n"))
}

/// The list items of `sections` in `document`, each with the lines that continue it on
/// one line, in the document's order, the same item once; an item that says there is
/// nothing (`No findings.`) is left out.
pub fn items_of(sections: &[Section], document: &str) -> Vec<String> {
    let outline = Outline::of(document);
    let bodies = sections.iter().flat_map(|s| outline.bodies(s));
    listed(bodies.collect())
}

/// [`items_of`] for sections named at run time (a review's layers as an install configures
/// them): a heading holding a name's words counts as its section.
pub fn items_under(names: &[String], document: &str) -> Vec<String> {
    let outline = Outline::of(document);
    let keys: Vec<String> = names.iter().map(|n| heading_key(n)).collect();
    let bodies = keys
        .iter()
        .filter(|k| !k.is_empty())
        .flat_map(|k| outline.bodies_where(|text| heading_key(text).contains(k.as_str())));
    listed(bodies.collect())
}

/// [`check`] for sections named at run time: each must be there with text under it.
pub fn check_named(names: &[String], document: &str) -> Found {
    let shaped: Vec<Shaped> = names
        .iter()
        .map(|n| Shaped {
            name: n.clone(),
            key: heading_key(n),
            required: true,
        })
        .collect();
    check_shaped(&shaped, document)
}

/// The list items of `bodies`, each with the lines that continue it on one line, the same
/// item once, none that says there is nothing.
fn listed(bodies: Vec<Vec<&str>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for body in bodies {
        let mut open = false;
        for line in body {
            let t = line.trim_start();
            let marker = ["- ", "* ", "+ "].iter().find_map(|m| t.strip_prefix(m));
            match marker {
                Some(item) if line.len() - t.len() < 2 => {
                    out.push(item.trim().to_string());
                    open = true;
                }
                _ if open && !t.is_empty() => {
                    if let Some(last) = out.last_mut() {
                        last.push(' ');
                        last.push_str(t.trim_end());
                    }
                }
                _ => open = false,
            }
        }
    }
    let nothing = |i: &str| {
        let l = i.to_lowercase();
        l.starts_with("no finding") || l.starts_with("none")
    };
    let mut seen = Vec::new();
    out.retain(|i| {
        !nothing(i) && !seen.contains(i) && {
            seen.push(i.clone());
            true
        }
    });
    out
}

/// A document's lines, its headings outside code, and its title (a first heading that
/// encloses every other).
struct Outline<'a> {
    lines: Vec<&'a str>,
    heads: Vec<Heading>,
    head_lines: Vec<usize>,
    title: Option<usize>,
}

impl<'a> Outline<'a> {
    fn of(document: &'a str) -> Outline<'a> {
        let (lines, heads) = outline_of(document);
        let title = heads
            .first()
            .filter(|h| heads.len() > 1 && heads[1..].iter().all(|o| o.level > h.level))
            .map(|h| h.line);
        let head_lines = heads.iter().map(|h| h.line).collect();
        Outline {
            lines,
            heads,
            head_lines,
            title,
        }
    }

    /// The lines of a heading's own text: to its next heading of the same or a higher
    /// level, its subheadings left out.
    fn body(&self, i: usize) -> Vec<&'a str> {
        let h = &self.heads[i];
        let end = self.heads[i + 1..]
            .iter()
            .find(|o| o.level <= h.level)
            .map_or(self.lines.len(), |o| o.line);
        (h.line + 1..end)
            .filter(|l| self.head_lines.binary_search(l).is_err())
            .map(|l| self.lines[l])
            .collect()
    }

    /// The text of every heading (not the title) that holds one of `section`'s words.
    fn bodies(&self, section: &Section) -> Vec<Vec<&'a str>> {
        self.bodies_where(|text| section.any_of.iter().any(|w| text.contains(w)))
    }

    /// The text of every heading (not the title) whose lower-cased text `holds`.
    fn bodies_where(&self, holds: impl Fn(&str) -> bool) -> Vec<Vec<&'a str>> {
        (0..self.heads.len())
            .filter(|i| Some(self.heads[*i].line) != self.title)
            .filter(|i| holds(&self.heads[*i].text))
            .map(|i| self.body(i))
            .collect()
    }
}

#[cfg(test)]
mod layer_tests {
    use super::*;

    #[test]
    fn the_findings_of_the_review_and_of_each_layer_are_listed_once() {
        let doc = "# Code Review\n\n## Findings\n- major, `a.rs`: no guard\n  on empty input\n\n## Edge Cases\n- `b.rs`: overflow at 2^31\n- major, `a.rs`: no guard on empty input\n\n## Blind Pass\nNo findings.\n\n## Acceptance Audit\n- No findings\n\n## Security\n- not a finding\n";
        assert_eq!(
            items_of(FINDINGS, doc),
            vec![
                "major, `a.rs`: no guard on empty input".to_string(),
                "`b.rs`: overflow at 2^31".into()
            ]
        );
        let found = check(LAYERS, doc);
        assert_eq!(found.missing, vec!["Verification Gaps"]);
        assert!(found.empty.is_empty(), "`No findings.` is said explicitly");
    }
}

/// A document with every one of `sections`, each with a line of text under its heading:
/// what tests submit where the server's check must find nothing lacking.
#[cfg(test)]
pub(crate) fn filled(title: &str, sections: &[Section]) -> String {
    let mut doc = format!("# {title}\n");
    for s in sections {
        doc.push_str(&format!("\n## {}\n{} of {title}.\n", s.name, s.name));
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_a_heading_with_text_under_it() {
        let doc = "# PRD: Todo\n\nIntro.\n\n## Executive Summary\nA todo app.\n\n## Business Goals\n\n## User Stories\n...\n\n## Functional Requirements\n### FR-1\nAdd items.\n\n## Technical Requirements\nTBD\n\nQuality Score: 95/100";
        let found = check(PO, doc);
        assert_eq!(found.missing, ["Success Metrics"]);
        assert_eq!(
            found.empty,
            ["Business Goals", "User Stories", "Technical Requirements"]
        );
        assert!(!found.complete());
    }

    #[test]
    fn the_title_is_no_section_and_code_is_no_heading() {
        // The title holds "service" (a Components word) and encloses everything.
        let doc = "# Architecture: Invoice Service\nOverview text.\n## Overview\nA box.\n```sh\n# components\nls\n```\n";
        let found = check(ARCHITECT, doc);
        assert!(found.missing.iter().any(|m| m == "Components"), "{found:?}");
        assert!(
            !found.missing.iter().any(|m| m == "System Overview"),
            "{found:?}"
        );
        // A single heading that encloses nothing else is a section, not a title.
        assert!(check(&PO[..1], "# Executive Summary\nText.").complete());
    }

    #[test]
    fn text_under_a_subheading_fills_the_section_above_it() {
        let doc = "## User Stories\n### US-1\nAs a user I add items.\n## Success Metrics\n**Targets**\n- 99% uptime";
        let found = check(&PO[2..], doc);
        assert_eq!(found.missing.len(), 2, "{found:?}");
        assert!(found.empty.is_empty(), "{found:?}");
        // A heading followed at once by one of the same level is empty, and so is one
        // whose only lines are placeholders.
        let found = check(&PO[2..3], "## User Stories\n## Other\ntext");
        assert_eq!(found.empty, ["User Stories"]);
        for placeholder in ["...", "<stories>", "- TBD", "TODO.", "---", "N/A"] {
            let doc = format!("## User Stories\n{placeholder}\n");
            assert_eq!(check(&PO[2..3], &doc).empty, ["User Stories"], "{doc}");
        }
    }

    #[test]
    fn the_test_fixture_has_every_section_of_every_stage() {
        for sections in [PO, ARCHITECT, SM, DEV, REVIEW, QA] {
            assert!(check(sections, &filled("Doc", sections)).complete());
        }
    }

    #[test]
    fn bold_lines_are_headings_and_hashes_need_a_space() {
        let doc = "**Executive Summary**\nText.\n#Business Goals\nMore.";
        let found = check(&PO[..2], doc);
        assert_eq!(found.missing, ["Business Goals"]);
        assert!(found.empty.is_empty());
    }
}
