//! A task's approved sprint plan as the method's epics file: one `## Epic N: …` for the
//! task, each approved sprint a `### Story N.M: …` (M the sprint's number) with a user
//! story, Given/When/Then acceptance criteria (the PRD's criteria and requirements the
//! sprint covers, its definition of done) and the requirement ids, in the shape the
//! method's `bmad-create-epics-and-stories` writes and its `sprint_plan.py` parses. No line
//! the server writes here is a heading but the epic's and the stories' (the script warns of
//! any other heading naming an epic or a story), and no line opens a code fence.

use crate::workflow::session::Session;
use crate::workflow::stage::Stage;
use crate::workflow::trace::ids;
use crate::workflow::trace::Requirement;

use super::{heading_title, story_key};

/// How every epics file of the server's begins: one there that does not is someone's own.
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

/// The epics file of the task.
pub fn render(of: &Of) -> String {
    let s = of.session;
    let objective = line_of(&s.objective, 120);
    let mut out = format!(
        "{MARK}the approved sprint plan of bmad-mcp task `{}` ({}), in the BMAD method's format; rewritten at each approval of the plan: change the plan in bmad-mcp, not this file. -->\n\n# The plan of task `{}`\n\n## Epic {}: {}\n\n{objective}. Each story is an approved sprint of the task's plan.\n",
        s.task_name, of.plan_path, s.task_name, of.epic, heading_title(&objective)
    );
    let defined = &s.record(Stage::FIRST).trace.defined;
    let mut parts = parts(of.plan);
    for story in stories(s, of.epic) {
        let part = parts.remove(&story.number).unwrap_or_default();
        out.push_str(&format!(
            "\n### Story {}.{}: {}\n\nAs a user of {},\nI want what sprint {} of the plan delivers ({}),\nSo that the task's objective is met ({objective}).\n\n**Acceptance Criteria:**\n",
            of.epic,
            story.number,
            story.title,
            line_of(of.project, 80),
            story.number,
            line_of(&story.title, 120)
        ));
        let given = format!(
            "**Given** sprint {} ({}) is built",
            story.number,
            line_of(&story.title, 80)
        );
        let answered = criteria(defined, &part.covers);
        for r in &answered {
            out.push_str(&format!(
                "\n{given}\n**When** {} is checked\n**Then** {}\n",
                r.id,
                line_of(&r.text, 300)
            ));
        }
        for d in &part.done_when {
            out.push_str(&format!(
                "\n{given}\n**When** its definition of done is checked\n**Then** {d}\n"
            ));
        }
        if answered.is_empty() && part.done_when.is_empty() {
            out.push_str(&format!("\n{given}\n**When** it is reviewed\n**Then** every task the plan gives the sprint is done\n"));
        }
        let mut ids = part.covers.clone();
        ids.extend(
            answered
                .iter()
                .map(|r| r.id.clone())
                .filter(|id| !part.covers.contains(id)),
        );
        let ids = if ids.is_empty() {
            "none named in the plan".to_string()
        } else {
            ids.join(", ")
        };
        out.push_str(&format!("\n**Requirements:** {ids}\n"));
        if !part.tasks.is_empty() {
            out.push_str("\n**Tasks (from the plan):**\n\n");
            for t in &part.tasks {
                out.push_str(&format!("- {t}\n"));
            }
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

    #[test]
    fn the_approved_sprints_are_the_methods_stories_with_their_criteria() {
        let s = session();
        let text = render(&Of {
            session: &s,
            epic: 4,
            project: "shop",
            plan: PLAN,
            plan_path: ".claude/specs/todo-app/sprint-plan.md",
        });
        assert!(text.starts_with(MARK), "{text}");
        assert!(text.contains("\n## Epic 4: Build a todo app\n"), "{text}");
        assert!(text.contains("\n### Story 4.1: API\n"), "{text}");
        assert!(text.contains("\n### Story 4.2: Web UI\n"), "{text}");
        assert!(!text.contains("Story 4.3"), "out of scope: {text}");
        assert!(
            text.contains(
                "**When** AC-1 is checked\n**Then** Given a todo, when saved, then it is listed\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("**When** FR-1 is checked\n**Then** Todos are stored\n"),
            "{text}"
        );
        assert!(text.contains("**Then** the API tests pass\n"), "{text}");
        assert!(text.contains("**Requirements:** FR-1, AC-1\n"), "{text}");
        assert!(text.contains("I want what sprint 2 of the plan delivers (Web UI),\nSo that the task's objective is met (Build a todo app).\n"), "{text}");
        assert!(
            text.contains("- Task: the list page\n"),
            "no heading from the plan: {text}"
        );
        assert!(
            !text.contains("Task: none"),
            "the risks are no sprint's: {text}"
        );
        assert!(!text.contains("FR-2"), "{text}");
        // Only the server's headings open a line with `#`.
        let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(heads.len(), 4, "{heads:?}");
        assert_eq!(epic_numbers(&text), [4]);
        assert_eq!(stories(&s, 4)[0].key, "4-1-api");
    }
}
