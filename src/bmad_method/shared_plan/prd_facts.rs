//! What the epics file draws from the approved PRD beyond its requirements' ids and texts
//! (`workflow::trace` reads those): a functional requirement's statement as the method's PRD
//! template words one under its `#### FR-n: name` heading (`[Actor] can [capability] [under
//! conditions]`), read as who wants what for the story's user story, its testable
//! consequences (the template's `**Consequences (testable):**` list), and an acceptance
//! criterion written as "Given …, when …, then …" split into its three parts. Nothing is
//! made up: where the PRD does not say it so, the caller says the requirement as written.

use crate::workflow::sections::outside_code;
use crate::workflow::trace::ids;

/// The most consequences kept of one requirement.
const MOST_CONSEQUENCES: usize = 5;

/// What the PRD says under one requirement's heading.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Body {
    /// Its first line of prose.
    pub statement: Option<String>,
    pub consequences: Vec<String>,
}

/// What the PRD `prd` says under the heading of requirement `id` (`#### FR-1: …`), up to
/// the next heading as deep or deeper; empty where the id opens no heading.
pub fn body(prd: &str, id: &str) -> Body {
    let mut out = Body::default();
    let mut level = None;
    let mut in_consequences = false;
    for (_, line) in outside_code(prd) {
        let t = line.trim();
        let hashes = t.bytes().take_while(|b| *b == b'#').count();
        if let Some(l) = level {
            if hashes > 0 && hashes <= l {
                break;
            }
            // Another requirement's line ends this one's body; a blank line its list.
            if ids::opening(t).is_some() {
                break;
            }
            if t.is_empty() && !out.consequences.is_empty() {
                in_consequences = false;
            }
            if hashes > 0 || t.is_empty() {
                continue;
            }
            if t.starts_with("**") {
                in_consequences = t.to_lowercase().contains("consequences");
            } else if let Some(item) = t.strip_prefix(['-', '*']).map(str::trim) {
                if in_consequences && out.consequences.len() < MOST_CONSEQUENCES {
                    out.consequences.push(item.to_string());
                }
            } else if out.statement.is_none() {
                out.statement = Some(t.to_string());
            }
        } else if hashes > 0 && ids::opening(t).is_some_and(|(i, _)| i == id) {
            level = Some(hashes);
        }
    }
    out
}

/// A statement `[Actor] can [capability] …` as who (without its article) and what they can
/// do (its first sentence); `None` for a statement not said so.
pub fn who_can(statement: &str) -> Option<(String, String)> {
    let sentence = statement
        .split_once(". ")
        .map_or(statement, |(first, _)| first)
        .trim_end_matches('.');
    let (who, what) = sentence.split_once(" can ")?;
    let who = ["a ", "an ", "the "]
        .iter()
        .find_map(|a| {
            who.get(..a.len())
                .filter(|w| w.eq_ignore_ascii_case(a))
                .map(|_| &who[a.len()..])
        })
        .unwrap_or(who)
        .trim();
    let what = what.trim();
    (!who.is_empty() && !what.is_empty()).then(|| (who.to_string(), what.to_string()))
}

/// An acceptance criterion "Given …, when …, then …" as its three parts; `None` for one not
/// written so.
pub fn given_when_then(text: &str) -> Option<(String, String, String)> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let given = lower.strip_prefix("given ").map(|_| 6)?;
    // Each word where one begins: after a space, never inside another word.
    let when = given + lower[given..].find(" when ")? + 1;
    let then = when + lower[when..].find(" then ")? + 1;
    let part = |s: &str| {
        s.trim()
            .trim_end_matches([',', ';', '.'])
            .trim()
            .to_string()
    };
    let (g, w, th) = (
        part(&t[given..when]),
        part(&t[when + 5..then]),
        part(&t[then + 5..]),
    );
    (!g.is_empty() && !w.is_empty() && !th.is_empty()).then_some((g, w, th))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requirements_statement_and_consequences_are_read_under_its_heading() {
        let prd = "## 4. Features\n\n#### FR-1: Add\n\nA member can add a todo to a shared list. Realizes UJ-1.\n\n**Consequences (testable):**\n- The todo shows at once.\n- An empty todo is refused.\n\n**Out of Scope:**\n- Sharing.\n\n```\n#### FR-2: not here\n```\n#### FR-2: Share\n\nLists are shared.\n";
        let b = body(prd, "FR-1");
        assert_eq!(
            b.statement.as_deref(),
            Some("A member can add a todo to a shared list. Realizes UJ-1.")
        );
        assert_eq!(
            b.consequences,
            ["The todo shows at once.", "An empty todo is refused."]
        );
        assert_eq!(
            who_can(b.statement.as_deref().unwrap()),
            Some(("member".into(), "add a todo to a shared list".into()))
        );
        assert_eq!(
            body(prd, "FR-2").statement.as_deref(),
            Some("Lists are shared.")
        );
        assert_eq!(who_can("Lists are shared."), None);
        assert_eq!(body("- FR-1: Add a todo.\n", "FR-1"), Body::default());
    }

    #[test]
    fn an_acceptance_criterion_is_split_into_given_when_then() {
        assert_eq!(
            given_when_then("Given a list, when I add a todo, then it shows."),
            Some(("a list".into(), "I add a todo".into(), "it shows".into()))
        );
        assert_eq!(given_when_then("The list shows todos."), None);
        assert_eq!(given_when_then("Given x, then y"), None);
        assert_eq!(
            given_when_then("Given ünï, when ß, then ok"),
            Some(("ünï".into(), "ß".into(), "ok".into()))
        );
    }
}
