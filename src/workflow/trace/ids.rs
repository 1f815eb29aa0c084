//! The requirement id syntax, and finding ids in a line of text.
//!
//! An id is one of the prefixes `FR` (functional requirement), `NFR` (non-functional
//! requirement) or `AC` (acceptance criterion), in capitals, a hyphen, and a number from 1
//! to 9999: `FR-1`, `NFR-12`, `AC-3`. Leading zeros are read and dropped (`FR-007` is
//! `FR-7`), so `FR-7` and `FR-007` in one PRD are the same id, twice. An id stands on its
//! own: `XFR-1`, `FR-1a`, `FR-1.2` and `fr-1` are not ids.

/// The prefixes an id may have, longest first so that `NFR` is never read as `FR`.
pub const PREFIXES: [&str; 3] = ["NFR", "FR", "AC"];

/// The highest number an id may carry.
const MAX_NUMBER: u32 = 9999;

/// The id that starts at byte `at` of `text`, in its canonical form, and where it ends.
fn id_at(text: &str, at: usize) -> Option<(String, usize)> {
    let rest = &text[at..];
    let prefix = PREFIXES.iter().find(|p| rest.starts_with(*p))?;
    let after = &rest[prefix.len()..];
    let digits_from = after.strip_prefix('-')?;
    let digits: &str = {
        let n = digits_from.bytes().take_while(u8::is_ascii_digit).count();
        &digits_from[..n]
    };
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let number: u32 = digits.parse().ok()?;
    if number == 0 || number > MAX_NUMBER {
        return None;
    }
    let end = at + prefix.len() + 1 + digits.len();
    // Not followed by a letter, a digit, `_`, or `.`/`-` joined to more of the same.
    let tail = &text[end..];
    let mut next = tail.chars();
    match next.next() {
        Some(c) if c.is_alphanumeric() || c == '_' => return None,
        Some('.' | '-') if next.next().is_some_and(|c| c.is_alphanumeric()) => return None,
        _ => {}
    }
    Some((format!("{prefix}-{number}"), end))
}

/// Whether the character before byte `at` lets an id start there.
fn starts_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
}

/// Every id in `text`, in order, each with where it ends.
pub fn find(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text.is_char_boundary(i) && starts_word(text, i) {
            if let Some((id, end)) = id_at(text, i) {
                out.push((id, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The ids in `text`, each once, in order of first mention.
pub fn all(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (id, _) in find(text) {
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The id `text` is, whole (`FR-1`, ` fr-1 ` is not one).
pub fn parse(text: &str) -> Option<String> {
    let t = text.trim();
    id_at(t, 0)
        .filter(|(_, end)| *end == t.len())
        .map(|(id, _)| id)
}

/// The prefix of a canonical id.
pub fn prefix(id: &str) -> &str {
    id.split('-').next().unwrap_or("")
}

/// `line` without what opens a list item, a table row, a heading or emphasis: `- `, `1. `,
/// `| `, `### `, `**`, `` ` ``, `[`, and the spaces between them.
pub fn unmarked(line: &str) -> &str {
    let mut t = line.trim();
    loop {
        let before = t.len();
        t = t.trim_start_matches(['-', '*', '+', '|', '#', '`', '[', '>', '_']);
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && t[digits..].starts_with(['.', ')']) {
            t = &t[digits + 1..];
        }
        t = t.trim_start();
        if t.len() == before {
            return t;
        }
    }
}

/// The id a line opens with (after list, table, heading and emphasis marks), and the text
/// after it with separators (`:`, `|`, `—`, `-`, `*`) trimmed.
pub fn opening(line: &str) -> Option<(String, &str)> {
    let t = unmarked(line);
    let (id, end) = id_at(t, 0)?;
    // The marks that close the id itself (`**FR-1**:`, `` `FR-1` ``, `[FR-1]`), then one
    // separator: the text's own marks stay (`` `--output raw|json` `` keeps its dashes).
    let rest = t[end..].trim_start_matches(['*', '_', '`', ']', ')']);
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix([':', '|', '—', '–']) {
        Some(after) => after,
        None => rest.strip_prefix("- ").unwrap_or(rest),
    };
    let rest = rest.trim_start_matches(['*', '_']).trim_start();
    Some((id, rest.trim_end()))
}

/// The value of a `Key: value` line whose key is one of `keys` (compared without case,
/// after list and emphasis marks; `**Covers:**` and `- Covers:` count).
pub fn keyed<'a>(line: &'a str, keys: &[&str]) -> Option<&'a str> {
    let t = unmarked(line);
    let (key, value) = t.split_once(':')?;
    let key = key.trim().trim_end_matches(['*', '_']).trim();
    keys.iter()
        .any(|k| key.eq_ignore_ascii_case(k))
        .then(|| value.trim_start_matches(['*', '_']).trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_capital_prefixes_a_hyphen_and_a_number() {
        assert_eq!(all("FR-1, NFR-2 and AC-3."), ["FR-1", "NFR-2", "AC-3"]);
        assert_eq!(all("FR-007 is FR-7"), ["FR-7"]);
        for not in [
            "fr-1", "XFR-1", "FR-1a", "FR-1.2", "FR-0", "FR-10000", "FR1", "FR-", "AC_FR-1",
            "FR-1-b",
        ] {
            assert!(all(not).is_empty(), "{not}");
        }
        // NFR is never read as FR, and an id may end a sentence or sit in brackets.
        assert_eq!(all("(NFR-1). FR-2: x"), ["NFR-1", "FR-2"]);
        assert_eq!(parse(" AC-04 "), Some("AC-4".into()));
        assert_eq!(parse("AC-4 x"), None);
        assert_eq!(prefix("NFR-3"), "NFR");
    }

    #[test]
    fn a_line_opens_with_an_id_after_its_marks() {
        for line in [
            "- FR-1: Add items",
            "1. FR-1 — Add items",
            "| FR-1 | Add items |",
            "### FR-1: Add items",
            "**FR-1**: Add items",
            "- [FR-1] Add items",
        ] {
            let (id, rest) = opening(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(id, "FR-1");
            assert!(rest.starts_with("Add items"), "{line}: {rest}");
        }
        assert_eq!(opening("See FR-1 for this"), None);
        assert_eq!(
            keyed("- **Covers:** FR-1, FR-2", &["covers"]),
            Some("FR-1, FR-2")
        );
        assert_eq!(keyed("Covers FR-1", &["covers"]), None);
    }
}
