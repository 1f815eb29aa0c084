//! A task's approved sprint plan as the method's epics file, in the shape of its
//! `bmad-create-epics-and-stories` template: front matter naming the documents it was drawn
//! from (`inputDocuments`), an overview, the requirements inventory (the PRD's functional and
//! non-functional requirements as it words them, the architecture) with the FR coverage map,
//! then one `## Epic N: …` for the task and each approved sprint a `### Story N.M: …` (M the
//! sprint's number) with a user story drawn from the PRD's statements of its FRs
//! ([`super::prd_facts`]), Given/When/Then acceptance criteria (the PRD's criteria as they
//! are written, its requirements with their testable consequences, the plan's definition of
//! done) and the requirement ids, which the method's `sprint_plan.py` parses. No heading the
//! server writes names an epic or a story but the epic's and the stories' (the script warns
//! of any other, the template's own `Epic Breakdown` title and `Epic List` among them), and
//! no line opens a code fence.

use crate::workflow::session::Session;
use crate::workflow::stage::Stage;
use crate::workflow::trace::ids;
use crate::workflow::trace::Requirement;

use super::{heading_title, prd_facts, story_key};

/// How every epics file of the server's begins, after its front matter: one there that does
/// not is someone's own.
pub const MARK: &str = "<!-- bmad-mcp: ";

/// The most tasks and criteria listed per story.
const MOST_LINES: usize = 12;

/// One story of the epic: its sprint's number, title and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    pub number: u32,
    pub title: String,
    pub key: String,
}

/// The stories of `session`'s approved sprints in epic `epic`, in the plan's order.
pub fn stories(session: &Session, epic: u32) -> Vec<Story> {
    let scope = crate::workflow::story::in_scope(session);
    session
        .record(Stage::approval())
        .sprints
        .iter()
        .filter(|s| scope.contains(&s.number))
        .map(|s| Story {
            number: s.number,
            title: heading_title(&s.title),
            key: story_key(epic, s.number, &s.title),
        })
        .collect()
}

/// What a sprint's part of the plan says beyond its heading.
#[derive(Debug, Default)]
pub(super) struct Part {
    pub(super) covers: Vec<String>,
    pub(super) done_when: Vec<String>,
    pub(super) tasks: Vec<String>,
}

/// One line of model-written text as the file may hold it: one line, cut, and never
/// opening a heading or a fence.
pub(super) fn line_of(text: &str, max: usize) -> String {
    let one: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one = one.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = one.trim_start_matches(['#', '`', '~', ' ']);
    crate::code::clip(one, max)
}

/// Each sprint's part of the plan, by number.
pub(super) fn parts(plan: &str) -> std::collections::BTreeMap<u32, Part> {
    let mut out = std::collections::BTreeMap::<u32, Part>::new();
    let mut sprint = None;
    for (_, line) in crate::workflow::sections::outside_code(plan) {
        let t = line.trim();
        if t.starts_with('#') {
            if let Some(n) = crate::workflow::submission::sprint_heading(line) {
                sprint = Some(n);
            } else if t.starts_with("# ") || t.starts_with("## ") {
                sprint = None;
            }
            continue;
        }
        let Some(part) = sprint.map(|n| out.entry(n).or_default()) else {
            continue;
        };
        let item = t.trim_start_matches(['-', '*', '+', ' ']);
        let lower = item.to_lowercase();
        if let Some(v) = ids::keyed(item, &crate::workflow::trace::documents::COVER_KEYS) {
            part.covers.extend(ids::all(v));
        } else if lower.starts_with("definition of done") || lower.starts_with("done when") {
            let what = item.split_once(':').map_or("", |(_, v)| v);
            if !what.trim().is_empty() && part.done_when.len() < MOST_LINES {
                part.done_when.push(line_of(what, 300));
            }
        } else if !item.is_empty() && item.len() < t.len() && part.tasks.len() < MOST_LINES {
            part.tasks.push(line_of(item, 300));
        }
    }
    out
}

/// What the file says of the task.
pub struct Of<'a> {
    pub session: &'a Session,
    pub epic: u32,
    /// The project's name for the user story (the method's `project_name`).
    pub project: &'a str,
    /// The approved sprint plan's text and where it is kept.
    pub plan: &'a str,
    pub plan_path: &'a str,
    /// The confirmed PRD's text and where it is kept, and where the confirmed architecture
    /// is (the method's `inputDocuments`).
    pub prd: &'a str,
    pub prd_path: Option<&'a str>,
    pub architecture_path: Option<&'a str>,
}

/// The criteria and requirements of the PRD a sprint covering `covers` answers for: the
/// acceptance criteria it names or that name what it names, then the rest it names.
pub(super) fn criteria<'a>(defined: &'a [Requirement], covers: &[String]) -> Vec<&'a Requirement> {
    let named = |r: &Requirement| covers.contains(&r.id);
    let mut out: Vec<&Requirement> = defined
        .iter()
        .filter(|r| {
            ids::prefix(&r.id) == "AC" && (named(r) || r.refs.iter().any(|x| covers.contains(x)))
        })
        .collect();
    out.extend(
        defined
            .iter()
            .filter(|r| ids::prefix(&r.id) != "AC" && named(r)),
    );
    out.truncate(MOST_LINES);
    out
}

/// One approved story: what the plan says of it, the PRD's criteria and requirements it
/// answers, and every id it serves (those, and what its criteria check).
struct Planned<'a> {
    story: Story,
    part: Part,
    answered: Vec<&'a Requirement>,
    ids: Vec<String>,
}

/// The epics file of the task, in the shape of the method's epics template: its front
/// matter, an overview, the requirements inventory with the FR coverage map, the epic and
/// its stories, each with a user story and Given/When/Then criteria from the PRD and the plan.
pub fn render(of: &Of) -> String {
    let defined = &of.session.record(Stage::FIRST).trace.defined;
    let mut parts = parts(of.plan);
    let planned: Vec<Planned> = stories(of.session, of.epic)
        .into_iter()
        .map(|story| {
            let part = parts.remove(&story.number).unwrap_or_default();
            let answered = criteria(defined, &part.covers);
            let mut ids = part.covers.clone();
            for r in &answered {
                for id in std::iter::once(&r.id).chain(&r.refs) {
                    if !ids.contains(id) {
                        ids.push(id.clone());
                    }
                }
            }
            Planned {
                story,
                part,
                answered,
                ids,
            }
        })
        .collect();
    let mut out = head(of);
    out.push_str(&inventory(of, defined, &planned));
    out.push_str(&epic_part(of, defined, &planned));
    for p in &planned {
        out.push_str(&story_part(of, defined, p));
    }
    out
}

/// A YAML string in single quotes.
fn quoted(text: &str) -> String {
    format!("'{}'", line_of(text, 300).replace('\'', "''"))
}

/// Whether `text` may stand in a heading the method's script would not warn of: no word
/// `epic` or `story` in it (its check for a heading it could not parse).
fn quiet(text: &str) -> bool {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .all(|w| w != "epic" && w != "story")
}

/// The front matter (the documents it was drawn from), the server's mark, the title and
/// the overview.
fn head(of: &Of) -> String {
    let s = of.session;
    let inputs: Vec<&str> = [of.prd_path, of.architecture_path, Some(of.plan_path)]
        .into_iter()
        .flatten()
        .collect();
    let mut out = String::from("---\ninputDocuments:\n");
    for i in &inputs {
        out.push_str(&format!("  - {}\n", quoted(i)));
    }
    out.push_str("---\n");
    let project = line_of(of.project, 80);
    let title = if quiet(&project) {
        format!("{project} - Breakdown")
    } else {
        "Breakdown".to_string()
    };
    out.push_str(&format!(
        "{MARK}the approved sprint plan of bmad-mcp task `{}` ({}), in the BMAD method's format; rewritten at each approval of the plan: change the plan in bmad-mcp, not this file. -->\n\n# {title}\n\n## Overview\n\nThe epic and stories of bmad-mcp task `{}`: its requirements are the confirmed PRD's ({}), its stories the approved sprints of its plan ({}).\n",
        s.task_name,
        of.plan_path,
        s.task_name,
        of.prd_path.unwrap_or("not kept"),
        of.plan_path
    ));
    out
}

/// The requirements inventory: the PRD's functional and non-functional requirements as it
/// words them, the architecture, and which story covers each requirement.
fn inventory(of: &Of, defined: &[Requirement], planned: &[Planned]) -> String {
    let mut out = String::from("\n## Requirements Inventory\n");
    for (kind, heading) in [
        ("FR", "Functional Requirements"),
        ("NFR", "NonFunctional Requirements"),
    ] {
        out.push_str(&format!("\n### {heading}\n\n"));
        let listed: Vec<String> = (defined.iter())
            .filter(|r| ids::prefix(&r.id) == kind)
            .map(|r| format!("{}: {}\n", r.id, line_of(&r.text, 300)))
            .collect();
        out.push_str(&if listed.is_empty() {
            "None in the PRD.\n".to_string()
        } else {
            listed.concat()
        });
    }
    out.push_str("\n### Additional Requirements\n\n");
    out.push_str(&match of.architecture_path {
        Some(path) => format!("- The confirmed architecture, {path}, holds the technical decisions the stories follow.\n"),
        None => "None: the task has no confirmed architecture.\n".to_string(),
    });
    out.push_str("\n### FR Coverage Map\n\n");
    let mapped: Vec<String> = (defined.iter())
        .filter(|r| ids::prefix(&r.id) != "AC")
        .map(|r| {
            let by: Vec<String> = (planned.iter())
                .filter(|p| p.ids.contains(&r.id))
                .map(|p| {
                    format!(
                        "Story {}.{} ({})",
                        of.epic,
                        p.story.number,
                        line_of(&p.story.title, 80)
                    )
                })
                .collect();
            match by.is_empty() {
                true => format!("{}: not covered by an approved sprint\n", r.id),
                false => format!("{}: Epic {} - {}\n", r.id, of.epic, by.join(", ")),
            }
        })
        .collect();
    out.push_str(&if mapped.is_empty() {
        "No requirement of the PRD carries an id.\n".to_string()
    } else {
        mapped.concat()
    });
    out
}

/// The epic's heading, its goal (the task's objective) and the FRs its stories cover.
fn epic_part(of: &Of, defined: &[Requirement], planned: &[Planned]) -> String {
    let objective = line_of(&of.session.objective, 120);
    let covered: Vec<&str> = (defined.iter())
        .filter(|r| ids::prefix(&r.id) == "FR" && planned.iter().any(|p| p.ids.contains(&r.id)))
        .map(|r| r.id.as_str())
        .collect();
    let covered = if covered.is_empty() {
        "none named in the plan".to_string()
    } else {
        covered.join(", ")
    };
    format!(
        "\n## Epic {}: {}\n\n{objective}.\n\n**FRs covered:** {covered}\n",
        of.epic,
        heading_title(&objective)
    )
}

/// Who wants the story and what, from the PRD's statements of the FRs it covers
/// ("A member can add a todo" is a member who wants to add a todo); where the PRD does not
/// say who, a user of the project; where the story covers no FR, its sprint's title.
fn user_story(of: &Of, defined: &[Requirement], p: &Planned) -> (String, String) {
    let mut who: Option<String> = None;
    let mut wants: Vec<String> = Vec::new();
    let frs = (defined.iter()).filter(|r| ids::prefix(&r.id) == "FR" && p.ids.contains(&r.id));
    for r in frs.take(3) {
        let said = prd_facts::body(of.prd, &r.id).statement;
        match said.as_deref().and_then(prd_facts::who_can) {
            Some((w, what)) => {
                who.get_or_insert(line_of(&w, 80));
                wants.push(format!("to {} ({})", line_of(&what, 200), r.id));
            }
            None => wants.push(format!(
                "{} ({})",
                line_of(&r.text, 200).trim_end_matches('.'),
                r.id
            )),
        }
    }
    let who = who.unwrap_or_else(|| format!("user of {}", line_of(of.project, 80)));
    let article = match who.chars().next() {
        Some(c) if "aeioAEIO".contains(c) => "an",
        _ => "a",
    };
    let want = if wants.is_empty() {
        format!(
            "{} (sprint {} of the plan)",
            line_of(&p.story.title, 120),
            p.story.number
        )
    } else {
        wants.join("; ")
    };
    (format!("{article} {who}"), want)
}

/// One criterion in the method's form: `Given`, `When`, `Then` and any `And`.
fn criterion(given: &str, when: &str, then: &str, and: &[String]) -> String {
    let mut out = format!("\n**Given** {given}\n**When** {when}\n**Then** {then}\n");
    for a in and {
        out.push_str(&format!("**And** {a}\n"));
    }
    out
}

/// A story's part: its heading, its user story, its acceptance criteria (the PRD's criteria
/// as they are written, its requirements with their testable consequences, the plan's
/// definition of done), the ids it serves and the plan's tasks.
fn story_part(of: &Of, defined: &[Requirement], p: &Planned) -> String {
    let (n, objective) = (p.story.number, line_of(&of.session.objective, 120));
    let (who, want) = user_story(of, defined, p);
    let mut out = format!(
        "\n### Story {}.{n}: {}\n\nAs {who},\nI want {want},\nSo that {}.\n\n**Acceptance Criteria:**\n",
        of.epic,
        p.story.title,
        objective.trim_end_matches('.')
    );
    let built = format!("story {}.{n} is built", of.epic);
    for r in &p.answered {
        let text = line_of(&r.text, 300);
        if let Some((g, w, t)) = prd_facts::given_when_then(&text) {
            out.push_str(&criterion(&g, &w, &format!("{t} ({})", r.id), &[]));
            continue;
        }
        let and: Vec<String> = match ids::prefix(&r.id) {
            "AC" => Vec::new(),
            _ => (prd_facts::body(of.prd, &r.id).consequences.iter())
                .map(|c| line_of(c, 300))
                .collect(),
        };
        out.push_str(&criterion(
            &built,
            &format!("{} is checked", r.id),
            &text,
            &and,
        ));
    }
    for d in &p.part.done_when {
        out.push_str(&criterion(
            &built,
            "the plan's definition of done is checked",
            d,
            &[],
        ));
    }
    if p.answered.is_empty() && p.part.done_when.is_empty() {
        let then = "every task the plan gives the sprint is done";
        out.push_str(&criterion(&built, "it is reviewed", then, &[]));
    }
    let ids = if p.ids.is_empty() {
        "none named in the plan".to_string()
    } else {
        p.ids.join(", ")
    };
    out.push_str(&format!("\n**Requirements:** {ids}\n"));
    if !p.part.tasks.is_empty() {
        out.push_str("\n**Tasks (from the plan):**\n\n");
        for t in &p.part.tasks {
            out.push_str(&format!("- {t}\n"));
        }
    }
    out
}

/// The epic numbers the method's epics file `text` opens (its `## Epic N:` headings).
pub fn epic_numbers(text: &str) -> Vec<u32> {
    crate::workflow::sections::outside_code(text)
        .filter_map(|(_, line)| {
            let t = line.trim_start();
            let level = t.bytes().take_while(|b| *b == b'#').count();
            if !(1..=3).contains(&level) {
                return None;
            }
            let rest = t[level..].trim_start();
            let rest = rest
                .get(..4)
                .filter(|w| w.eq_ignore_ascii_case("epic"))
                .map(|_| &rest[4..])?;
            let digits: String = rest
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let mut s = super::super::approved_plan(
            "todo-app",
            "Build a todo app",
            &[(1, "API ##"), (2, "Web UI"), (3, "Later")],
        );
        let plan = s.record_mut(Stage::approval());
        plan.scope_sprints = Some(vec![1, 2]);
        s.record_mut(Stage::FIRST).trace.defined = vec![
            Requirement {
                id: "FR-1".into(),
                text: "Todos are stored".into(),
                refs: vec![],
            },
            Requirement {
                id: "AC-1".into(),
                text: "Given a todo, when saved, then it is listed".into(),
                refs: vec!["FR-1".into()],
            },
            Requirement {
                id: "FR-2".into(),
                text: "A list page".into(),
                refs: vec![],
            },
        ];
        s
    }

    const PLAN: &str = "# Sprint Plan\n\n## Sprint 1: API ##\nCovers: FR-1\n- Task: the todos table (3 points)\n- Definition of done: the API tests pass\n\n```\n## Epic 9: not a heading\n```\n\n## Sprint 2: Web UI\n- ### Task: the list page\n\n## Risks\n- Task: none\n";

    const PRD: &str = "# PRD\n\n#### FR-1: Store\n\nA member can store a todo. Realizes UJ-1.\n\n**Consequences (testable):**\n- A stored todo survives a restart.\n\n- AC-1 (FR-1): Given a todo, when saved, then it is listed\n- FR-2: A list page\n";

    #[test]
    fn the_approved_sprints_are_the_methods_stories_with_their_criteria() {
        let s = session();
        let text = render(&Of {
            session: &s,
            epic: 4,
            project: "shop",
            plan: PLAN,
            plan_path: ".claude/specs/todo-app/sprint-plan.md",
            prd: PRD,
            prd_path: Some(".claude/specs/todo-app/prd.md"),
            architecture_path: None,
        });
        assert!(
            text.starts_with("---\ninputDocuments:\n  - '.claude/specs/todo-app/prd.md'\n  - '.claude/specs/todo-app/sprint-plan.md'\n---\n"),
            "{text}"
        );
        assert!(crate::bmad_method::findable::marked(&text, MARK), "{text}");
        assert!(text.contains("\n# shop - Breakdown\n"), "{text}");
        // The inventory and the coverage map, as the PRD words its requirements.
        assert!(
            text.contains(
                "\n### Functional Requirements\n\nFR-1: Todos are stored\nFR-2: A list page\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\n### NonFunctional Requirements\n\nNone in the PRD.\n"),
            "{text}"
        );
        assert!(
            text.contains("\n### FR Coverage Map\n\nFR-1: Epic 4 - Story 4.1 (API)\nFR-2: not covered by an approved sprint\n"),
            "{text}"
        );
        assert!(text.contains("\n## Epic 4: Build a todo app\n"), "{text}");
        assert!(text.contains("**FRs covered:** FR-1\n"), "{text}");
        assert!(text.contains("\n### Story 4.1: API\n"), "{text}");
        assert!(text.contains("\n### Story 4.2: Web UI\n"), "{text}");
        assert!(!text.contains("Story 4.3"), "out of scope: {text}");
        // The user story from the PRD's statement of the FR; none made up where it has none.
        assert!(
            text.contains(
                "As a member,\nI want to store a todo (FR-1),\nSo that Build a todo app.\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("As a user of shop,\nI want Web UI (sprint 2 of the plan),\n"),
            "{text}"
        );
        assert!(!text.contains("delivers"), "{text}");
        // The criterion as the PRD writes it, split; a requirement with its consequences.
        assert!(
            text.contains("**Given** a todo\n**When** saved\n**Then** it is listed (AC-1)\n"),
            "{text}"
        );
        assert!(
            text.contains("**Given** story 4.1 is built\n**When** FR-1 is checked\n**Then** Todos are stored\n**And** A stored todo survives a restart.\n"),
            "{text}"
        );
        assert!(text.contains("**Then** the API tests pass\n"), "{text}");
        assert!(text.contains("**Requirements:** FR-1, AC-1\n"), "{text}");
        assert!(
            text.contains("- Task: the list page\n"),
            "no heading from the plan: {text}"
        );
        assert!(
            !text.contains("Task: none"),
            "the risks are no sprint's: {text}"
        );
        // Only the server's headings open a line with `#`, and only the epic's and the
        // stories' name an epic or a story.
        let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(heads.len(), 10, "{heads:?}");
        let naming: Vec<&&str> = heads.iter().filter(|h| !quiet(h)).collect();
        assert_eq!(naming.len(), 3, "{naming:?}");
        assert_eq!(epic_numbers(&text), [4]);
        assert_eq!(stories(&s, 4)[0].key, "4-1-api");
    }
}
