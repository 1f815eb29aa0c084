//! Task names: the objective slugged (non-ASCII transliterated), at most 50 characters,
//! made unique with `-1`, `-2`, … (docs/spec.md §7.5). In a git repository the name also
//! says who started it and carries a short tag of the session's id (`add-login-ada-3f9c`),
//! so two clones that start the same objective make two folders that merge side by side.

pub const MAX_TASK_NAME: usize = 50;

/// The base task name for an objective, without a leading article (`A todo app` →
/// `todo-app`), unless the article is all there is.
pub fn slug_for(objective: &str) -> String {
    let s = slug::slugify(objective);
    let s = ["a-", "an-", "the-"]
        .iter()
        .find_map(|a| s.strip_prefix(a))
        .unwrap_or(&s);
    let s = cut(s, MAX_TASK_NAME);
    if s.is_empty() {
        "task".to_string()
    } else {
        s
    }
}

/// The base name of a task started in a git repository: `base`, the owner's `handle` when
/// there is one, and `tag` (a few hex digits of the session id), at most 50 characters.
pub fn for_team(base: &str, handle: Option<&str>, tag: &str) -> String {
    // A story's sprint (`…-sprint-2`) is kept whole: the name is cut before it.
    let kept = base
        .rsplit_once("-sprint-")
        .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or("", |(head, _)| &base[head.len()..]);
    let base = &base[..base.len() - kept.len()];
    let suffix = match handle {
        Some(h) => format!("{kept}-{h}-{tag}"),
        None => format!("{kept}-{tag}"),
    };
    // Every story of one parent gets the same head, whoever starts it and whichever its
    // sprint: the room kept after it is the most a sprint number and a handle take, so
    // the stories of one parent group by name.
    let room = if kept.is_empty() {
        suffix.len()
    } else {
        "-sprint-999-".len() + crate::workflow::person::MAX_HANDLE + 1 + tag.len()
    };
    let head = cut(base, MAX_TASK_NAME.saturating_sub(room));
    let head = if head.is_empty() { "task" } else { &head };
    format!("{head}{suffix}")
}

/// The `n`-th alternative of a base name (`n = 0` is the base itself), still ≤ 50 chars.
pub fn candidate(base: &str, n: u32) -> String {
    if n == 0 {
        return base.to_string();
    }
    let suffix = format!("-{n}");
    format!("{}{suffix}", head_for(base, suffix.len() - 1))
}

/// The suffix number of a name made by [`candidate`] (`build-x-3` → (`build-x`, 3)).
pub fn split_suffix(name: &str) -> Option<(&str, u32)> {
    let (head, digits) = name.rsplit_once('-')?;
    if head.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head, digits.parse().ok()?))
}

/// The head that [`candidate`] puts before a suffix of `digits` digits.
pub fn head_for(base: &str, digits: usize) -> String {
    let head = cut(base, MAX_TASK_NAME - 1 - digits);
    if head.is_empty() {
        "task".into()
    } else {
        head
    }
}

/// Words that begin a phrase: a name cut just after one (`…-for-the`), or after one and a
/// single word more (`…-for-the-new`), ends in the middle of a phrase.
const PHRASE_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "for", "of", "to", "in", "on", "at", "by", "with",
    "from", "that", "which", "who", "as", "into", "than", "so", "if", "its", "their", "your",
    "our", "my", "this", "these", "those", "via", "per",
];

/// At most `max` bytes of an ASCII slug, without a trailing `-`, cut between words when
/// a word boundary is near enough, and a phrase the cut would leave dangling
/// (`…-for-the-new`) left out while what stays holds half of `max`.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.trim_end_matches('-').to_string();
    }
    let head = &s[..max];
    let mid_word = s.as_bytes()[max] != b'-';
    let head = match head.rfind('-') {
        Some(i) if mid_word && i >= max / 2 => &head[..i],
        _ => head,
    };
    whole_phrases(head.trim_end_matches('-'), max / 2).to_string()
}

/// `head` without a last phrase the cut left open: trailing phrase words, or phrase words
/// and one word after them; unchanged when less than `least` bytes would stay.
fn whole_phrases(head: &str, least: usize) -> &str {
    let words: Vec<&str> = head.split('-').collect();
    let phrase = |w: &&str| PHRASE_WORDS.contains(w);
    let open_at = |end: usize| {
        let mut start = end;
        while start > 0 && phrase(&words[start - 1]) {
            start -= 1;
        }
        (start < end).then_some(start)
    };
    let n = words.len();
    let start = open_at(n).or_else(|| open_at(n.checked_sub(1)?));
    match start {
        Some(start) if start > 0 => {
            let kept = words[..start].iter().map(|w| w.len() + 1).sum::<usize>() - 1;
            if kept >= least {
                &head[..kept]
            } else {
                head
            }
        }
        _ => head,
    }
}

/// Whether `name`, as a person types it, names the task of `session`: its name, the
/// name its objective gives, or the beginning of its name up to a `-` (`add-login` for
/// `add-login-ada-3f9c`). The caller makes sure only one session answers.
pub fn answers_to(session: &crate::workflow::session::Session, name: &str) -> bool {
    session.task_name == name
        || slug_for(&session.objective) == name
        || session
            .task_name
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('-'))
}

/// Whether a caller-given task name has the form the server creates (so it can never
/// name a path outside `.claude/specs/`).
pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TASK_NAME
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_objectives_become_readable_slugs() {
        assert_eq!(
            slug_for("Build user authentication system!"),
            "build-user-authentication-system"
        );
    }

    #[test]
    fn a_leading_article_is_dropped() {
        assert_eq!(slug_for("A todo app"), "todo-app");
        assert_eq!(slug_for("An inventory tracker"), "inventory-tracker");
        assert_eq!(slug_for("The  changelog bot"), "changelog-bot");
        assert_eq!(slug_for("Build a todo app"), "build-a-todo-app");
        for kept in [
            "Anthology search",
            "Theme editor",
            "A",
            "the",
            "Apple picker",
        ] {
            assert!(!slug_for(kept).is_empty(), "{kept}");
        }
        assert_eq!(slug_for("Anthology search"), "anthology-search");
        assert_eq!(slug_for("Theme editor"), "theme-editor");
        assert_eq!(slug_for("A"), "a");
    }

    #[test]
    fn chinese_objectives_are_transliterated_not_dropped() {
        let s = slug_for("构建用户认证系统");
        assert!(s.len() >= 10, "{s}");
        assert!(is_valid(&s), "{s}");
        assert!(s.contains("yong"), "{s}");
    }

    #[test]
    fn names_are_capped_at_fifty_without_a_trailing_dash() {
        let s = slug_for(&"word ".repeat(40));
        assert!(s.len() <= MAX_TASK_NAME);
        assert!(!s.ends_with('-'));
        let c = candidate(&s, 12);
        assert!(c.len() <= MAX_TASK_NAME && c.ends_with("-12"), "{c}");
        assert!(!c.contains("--"));
    }

    #[test]
    fn long_names_are_cut_between_words() {
        let s = slug_for("Build a service that publishes a weekly team changelog");
        assert_eq!(s, "build-a-service-that-publishes-a-weekly-team");
        let one_word = slug_for(&"x".repeat(80));
        assert_eq!(one_word.len(), MAX_TASK_NAME);
    }

    /// A name cut in the middle of a phrase drops the phrase's open end, but never what
    /// was not cut, nor so much that less than half stays.
    #[test]
    fn a_cut_name_does_not_end_in_an_open_phrase() {
        let t = for_team(
            &slug_for("Migrate the billing service of the shop for the new payment provider"),
            Some("rosa"),
            "b4a1",
        );
        assert_eq!(t, "migrate-the-billing-service-of-the-shop-rosa-b4a1");
        let t = for_team(&slug_for("Write the importer for"), Some("rosa"), "b4a1");
        assert_eq!(
            t, "write-the-importer-for-rosa-b4a1",
            "not cut: kept as said"
        );
        assert_eq!(
            slug_for(
                "A Python library that parses cron expressions and computes the next fire times"
            ),
            "python-library-that-parses-cron-expressions"
        );
        assert_eq!(
            whole_phrases("x-for-the-new", 20),
            "x-for-the-new",
            "too little stays"
        );
    }

    /// A task answers to its name, its objective's, and the beginning of its name up to
    /// a `-`; not to a part cut inside a word.
    #[test]
    fn a_task_answers_to_the_visible_beginning_of_its_name() {
        let s = crate::workflow::session::Session::test()
            .task("build-a-service-that-publishes-a-weekly-ana-3f9c")
            .objective("Build a service that publishes a weekly team changelog")
            .build();
        for name in [
            "build-a-service-that-publishes-a-weekly-ana-3f9c",
            "build-a-service-that-publishes-a-weekly-team",
            "build-a-service-that-publishes",
            "build-a-service-that-publishes-a-weekly-ana",
        ] {
            assert!(answers_to(&s, name), "{name}");
        }
        for name in [
            "build-a-serv",
            "build-a-service-that-publishes-",
            "publishes",
        ] {
            assert!(!answers_to(&s, name), "{name}");
        }
    }

    #[test]
    fn nothing_left_gives_task() {
        assert_eq!(slug_for("!!! ???"), "task");
        assert_eq!(slug_for(""), "task");
        assert_eq!(candidate("task", 2), "task-2");
    }

    #[test]
    fn team_names_say_who_and_carry_a_tag_within_fifty() {
        assert_eq!(
            for_team("add-login", Some("ada"), "3f9c"),
            "add-login-ada-3f9c"
        );
        assert_eq!(for_team("add-login", None, "3f9c"), "add-login-3f9c");
        let long = slug_for(&"word ".repeat(40));
        let t = for_team(&long, Some("bartholomewm"), "3f9c");
        assert!(
            t.len() <= MAX_TASK_NAME && t.ends_with("-bartholomewm-3f9c"),
            "{t}"
        );
        assert!(is_valid(&t), "{t}");
        assert!(!t.contains("--"), "{t}");
        // A story keeps its sprint whole; the parent's name is what is cut.
        let story = format!("{}-sprint-12", slug_for(&"word ".repeat(40)));
        let t = for_team(&story, Some("alice"), "63d7");
        assert!(
            t.len() <= MAX_TASK_NAME && t.ends_with("-sprint-12-alice-63d7"),
            "{t}"
        );
    }

    #[test]
    fn stories_of_one_parent_are_cut_alike_whoever_starts_them() {
        let parent = "add-a-python-todo-library-with-tags-lea-3f9c";
        let heads: Vec<String> = [(1, "ben"), (2, "cy"), (10, "bartholomewm")]
            .iter()
            .map(|(n, who)| {
                let t = for_team(&format!("{parent}-sprint-{n}"), Some(who), "63d7");
                assert!(t.len() <= MAX_TASK_NAME && is_valid(&t), "{t}");
                assert!(t.ends_with(&format!("-sprint-{n}-{who}-63d7")), "{t}");
                t.split("-sprint-").next().unwrap().to_string()
            })
            .collect();
        assert_eq!(heads[0], "add-a-python-todo");
        assert!(heads.iter().all(|h| *h == heads[0]), "{heads:?}");
    }

    #[test]
    fn only_slug_shaped_names_are_valid() {
        assert!(is_valid("build-a-cli-2"));
        for bad in ["../x", "a/b", "A", "", "-x", ".", "a b", &"a".repeat(51)] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
