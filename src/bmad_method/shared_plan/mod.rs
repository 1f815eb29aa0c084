//! One plan shared with the BMAD method: a task's approved sprints written as the method's
//! epics file ([`epics`], in the PRD's own words where it has them, [`prd_facts`]), its
//! stories' statuses kept in the method's `sprint-status.yaml` as the server moves them
//! ([`status_file`], edited as text so that everything else in the file stays), and the
//! three-way merge git runs on that file ([`merge`]), which statuses a change gives
//! ([`story_statuses`]), a story done outside the server's gates ([`by_hand`]), a story's
//! spec as the method's `bmad-build` keeps it ([`spec_file`]) and the stories the method
//! holds ([`held`]). This file holds what they share: the method's keys and its order of
//! statuses, which the method's own `sprint_plan.py` defines and this code follows byte for
//! byte (a key the script would derive otherwise would show as drift).

pub mod by_hand;
pub mod epics;
pub mod held;
pub mod merge;
pub mod prd_facts;
pub mod spec_file;
pub mod status_file;
pub mod story_statuses;

/// The statuses of a story, lowest first: the method never moves one back.
pub const STORY_STATUSES: [&str; 5] = ["backlog", "ready-for-dev", "in-progress", "review", "done"];
/// The statuses of an epic, lowest first.
pub const EPIC_STATUSES: [&str; 3] = ["backlog", "in-progress", "done"];
/// The statuses of an epic's retrospective, lowest first.
pub const RETRO_STATUSES: [&str; 2] = ["optional", "done"];
/// Statuses of the method's v6, which its script reads as the modern one beside them.
const LEGACY: [(&str, &str); 2] = [("drafted", "ready-for-dev"), ("contexted", "in-progress")];

/// The longest slug of a story key, in characters, as the method cuts it.
const SLUG_CHARS: usize = 60;

/// What a key of `development_status` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Epic(u32),
    Story(u32),
    Retrospective(u32),
}

impl Kind {
    /// The kind of `key` and its epic's number, by the method's key grammar; `None` for a
    /// key the method does not recognise.
    pub fn of(key: &str) -> Option<Kind> {
        if let Some(rest) = key.strip_prefix("epic-") {
            if let Some(n) = rest.strip_suffix("-retrospective").and_then(number) {
                return Some(Kind::Retrospective(n));
            }
            return number(rest).map(Kind::Epic);
        }
        let (epic, rest) = key.split_once('-')?;
        let epic = number(epic)?;
        let (story, slug) = rest.split_once('-')?;
        let digits = story.trim_end_matches(|c: char| c.is_ascii_lowercase());
        let split = story.len() - digits.len();
        let ok = number(digits).is_some() && split <= 1 && !slug.is_empty();
        ok.then_some(Kind::Story(epic))
    }

    pub fn epic(self) -> u32 {
        match self {
            Kind::Epic(n) | Kind::Story(n) | Kind::Retrospective(n) => n,
        }
    }

    /// The statuses a key of this kind may hold, lowest first.
    pub fn statuses(self) -> &'static [&'static str] {
        match self {
            Kind::Epic(_) => &EPIC_STATUSES,
            Kind::Story(_) => &STORY_STATUSES,
            Kind::Retrospective(_) => &RETRO_STATUSES,
        }
    }

    /// The rank of `status` for this kind (a v6 status read as its modern one); `None`
    /// for a status the method does not know.
    pub fn rank(self, status: &str) -> Option<usize> {
        let status = LEGACY
            .iter()
            .find(|(old, _)| *old == status)
            .map_or(status, |(_, new)| new);
        self.statuses().iter().position(|s| *s == status)
    }
}

/// ASCII digits as a number (the method's `\d+` on the keys it writes).
fn number(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// The higher of two statuses of a key of `kind`: the method never lowers one. A status it
/// does not know loses to one it knows; two it does not know keep `ours`.
pub fn higher<'a>(kind: Kind, ours: &'a str, theirs: &'a str) -> &'a str {
    match (kind.rank(ours), kind.rank(theirs)) {
        (Some(a), Some(b)) if b > a => theirs,
        (None, Some(_)) => theirs,
        _ => ours,
    }
}

/// A word character as the method's script reads one (Python's `\w` on text): a letter or
/// a number of any script, or `_`.
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The slug of a story's title, as the method derives it: lower-cased, every run of
/// non-word characters one `-`, trimmed of `-`, cut at 60 characters and trimmed again;
/// a title with no word character at all is the first 8 hex digits of its SHA-256.
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in title.to_lowercase().chars() {
        if word(c) {
            out.push(c);
            gap = false;
        } else if !gap {
            out.push('-');
            gap = true;
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(SLUG_CHARS).collect();
    let slug = trimmed.trim_matches('-').to_string();
    if !slug.is_empty() {
        return slug;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(title.as_bytes());
    digest.iter().take(4).map(|b| format!("{b:02x}")).collect()
}

/// A title as the method's heading parser captures it from `### Story N.M: title`: on one
/// line, without the spaces and closing `#`s at its ends.
pub fn heading_title(title: &str) -> String {
    let one: String = title
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let one = one.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = crate::code::clip(&one, 120);
    cut.trim_end_matches(|c: char| c == '#' || c.is_whitespace())
        .trim()
        .to_string()
}

/// The key of story `story` of epic `epic` titled `title`: `{epic}-{story}-{slug}`.
pub fn story_key(epic: u32, story: u32, title: &str) -> String {
    format!("{epic}-{story}-{}", slug(&heading_title(title)))
}

/// The epic's own key.
pub fn epic_key(epic: u32) -> String {
    format!("epic-{epic}")
}

/// The key of the epic's retrospective.
pub fn retrospective_key(epic: u32) -> String {
    format!("epic-{epic}-retrospective")
}

/// The time stamp the method's files carry (`last_updated`, `generated`), in UTC.
pub fn stamp(now: chrono::DateTime<chrono::Utc>) -> String {
    now.format("%m-%d-%Y %H:%M").to_string()
}

/// A task of the full track whose sprint plan the human approved, with `sprints`: what
/// the tests of the shared plan start from.
#[cfg(test)]
pub(crate) fn approved_plan(
    task: &str,
    objective: &str,
    sprints: &[(u32, &str)],
) -> crate::workflow::session::Session {
    let mut s = crate::workflow::session::Session::test()
        .task(task)
        .objective(objective)
        .build();
    let plan = s.record_mut(crate::workflow::Stage::approval());
    plan.approved = Some(true);
    plan.sprints = sprints
        .iter()
        .map(|(number, title)| crate::workflow::session::Sprint {
            number: *number,
            title: (*title).into(),
        })
        .collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_methods_byte_for_byte() {
        assert_eq!(
            story_key(3, 2, "User Login & Sign-up!"),
            "3-2-user-login-sign-up"
        );
        assert_eq!(
            story_key(1, 1, "  API: the /todos table  ##"),
            "1-1-api-the-todos-table"
        );
        assert_eq!(slug("Ünïcode Straße_x"), "ünïcode-straße_x");
        assert_eq!(slug("日本語 の タイトル"), "日本語-の-タイトル");
        let long = "a".repeat(59) + " bcd";
        assert_eq!(
            slug(&long),
            "a".repeat(59),
            "cut at 60, then trimmed of `-`"
        );
        // Nothing to slug: the title's hash, as the method does it.
        assert_eq!(slug("!!!"), "e84c538e");
        assert_eq!(slug("🎉"), "6146299c");
        assert_eq!(heading_title("Web UI ###"), "Web UI");
    }

    #[test]
    fn kinds_and_ranks_follow_the_methods_grammar() {
        assert_eq!(Kind::of("epic-12"), Some(Kind::Epic(12)));
        assert_eq!(
            Kind::of("epic-2-retrospective"),
            Some(Kind::Retrospective(2))
        );
        assert_eq!(Kind::of("2-6a-split"), Some(Kind::Story(2)));
        assert_eq!(Kind::of("2-6-x"), Some(Kind::Story(2)));
        for not in ["epic-x", "2-6", "a-1-x", "2-6ab-x", "project"] {
            assert_eq!(Kind::of(not), None, "{not}");
        }
        let s = Kind::Story(1);
        assert_eq!(higher(s, "review", "in-progress"), "review");
        assert_eq!(higher(s, "drafted", "in-progress"), "in-progress");
        assert_eq!(higher(s, "contexted", "ready-for-dev"), "contexted");
        assert_eq!(higher(s, "odd", "backlog"), "backlog");
        assert_eq!(higher(Kind::Epic(1), "done", "in-progress"), "done");
    }
}
