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
    let head = cut(base, MAX_TASK_NAME.saturating_sub(suffix.len()));
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

/// At most `max` bytes of an ASCII slug, without a trailing `-`, cut between words when
/// a word boundary is near enough.
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
    head.trim_end_matches('-').to_string()
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
    fn only_slug_shaped_names_are_valid() {
        assert!(is_valid("build-a-cli-2"));
        for bad in ["../x", "a/b", "A", "", "-x", ".", "a b", &"a".repeat(51)] {
            assert!(!is_valid(bad), "{bad}");
        }
    }
}
