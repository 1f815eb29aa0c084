//! A lesson file: Markdown with a small front matter of `key: value` lines between two
//! `---` lines, then the words. Written by the server, edited by hand:
//!
//! ```text
//! ---
//! role: po
//! category: WRONG-ASSUMPTION
//! source: human
//! task: build-a-notes-app
//! stage: po
//! date: 2026-11-24T21:40:00.000Z
//! digest: 3fa9…
//! ---
//! The PRD ignored the offline requirement: the app must work without a network.
//! ```
//!
//! `retired: <date>` marks a lesson the human retired; `decided:` says who last retired or
//! restored it, through which channel, and when. Keys it does not know are passed
//! over (a team may add its own); a missing or unreadable required key, or no words, makes
//! the file damaged, named with its reason.

use super::{Category, Lesson, Source};
use crate::workflow::Stage;

/// The text of a lesson file.
pub fn render(l: &Lesson) -> String {
    let mut out = String::from("---\n");
    let mut line = |k: &str, v: &str| {
        // One line per value: a newline in a hand-typed task name must not make a key.
        let v: String = v
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        out.push_str(&format!("{k}: {}\n", v.trim()));
    };
    line("role", l.role.id());
    line("category", l.category.name());
    line("source", l.source.name());
    line("task", &l.task);
    line("stage", l.stage.id());
    line("date", &l.date);
    if let Some(d) = &l.digest {
        line("digest", d);
    }
    if let Some(r) = &l.retired {
        line("retired", r);
    }
    if let Some(d) = &l.decided {
        line("decided", d);
    }
    out.push_str("---\n");
    out.push_str(l.words.trim());
    out.push('\n');
    out
}

/// The SHA-256 of a lesson's words as a file holds them (trimmed, line breaks as `\n`, so
/// a checkout that writes `\r\n` reads the same): what the human's decision keeps of the
/// lessons it taught (`HistoryEntry::taught`), binding the file to those words.
pub fn words_digest(words: &str) -> String {
    crate::workflow::machine::sha256_hex(&words.trim().replace("\r\n", "\n"))
}

/// Refuses a file a merge left with conflict markers, saying how to mend it.
fn conflict_free(text: &str) -> Result<(), String> {
    if text
        .lines()
        .any(|l| l.starts_with("<<<<<<< ") || l == "<<<<<<<")
    {
        return Err("it holds a merge's conflict markers: keep one version (or both sides' words), delete the marker lines, then `git add` it and commit".into());
    }
    Ok(())
}

/// A lesson from its file's text, or why it cannot be read.
pub fn parse(id: &str, text: &str) -> Result<Lesson, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    conflict_free(text)?;
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("it does not start with a `---` line (the front matter)".into());
    }
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let mut closed = false;
    let mut body_start = 0;
    let mut consumed = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines.by_ref() {
        consumed += line.len() + 1;
        if line.trim_end() == "---" {
            closed = true;
            body_start = consumed.min(text.len());
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(format!(
                "the front matter line `{}` is not `key: value`",
                crate::code::clip(line, 60)
            ));
        };
        fields.push((k.trim(), v.trim()));
    }
    if !closed {
        return Err("its front matter has no closing `---` line".into());
    }
    let get = |k: &str| fields.iter().rev().find(|(key, _)| *key == k).map(|f| f.1);
    let need = |k: &str| {
        get(k)
            .filter(|v| !v.is_empty())
            .ok_or(format!("it has no `{k}`"))
    };
    let stage = |k: &str| -> Result<Stage, String> {
        let v = need(k)?;
        Stage::parse(v).ok_or(format!(
            "its `{k}` `{}` is none of {}",
            crate::code::clip(v, 40),
            Stage::ALL.map(|s| s.id()).join(", ")
        ))
    };
    let role = stage("role")?;
    let category = need("category")?;
    let category = Category::parse(category).ok_or(format!(
        "its category `{}` is none of {}",
        crate::code::clip(category, 40),
        Category::ALL.map(|c| c.name()).join(", ")
    ))?;
    let source = match get("source") {
        // Nobody's word was recorded: the least trusted source.
        None | Some("") => Source::File,
        Some(s) => Source::parse(s).ok_or(format!(
            "its source `{}` is none of human, host, report, server, file",
            crate::code::clip(s, 40)
        ))?,
    };
    let words = text[body_start..].trim().to_string();
    if words.is_empty() {
        return Err("it has no words after its front matter".into());
    }
    let optional = |k: &str| get(k).filter(|v| !v.is_empty()).map(String::from);
    Ok(Lesson {
        id: id.to_string(),
        role,
        category,
        source,
        task: optional("task").unwrap_or_else(|| "(none)".into()),
        stage: get("stage").and_then(Stage::parse).unwrap_or(role),
        date: optional("date").unwrap_or_default(),
        digest: optional("digest"),
        retired: optional("retired"),
        decided: optional("decided"),
        words,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson() -> Lesson {
        Lesson {
            id: "2026-11-24-0a1b2c3d".into(),
            role: Stage::Po,
            category: Category::WrongAssumption,
            source: Source::Human,
            task: "notes\napp".into(),
            stage: Stage::Po,
            date: "2026-11-24T21:40:00.000Z".into(),
            digest: Some("ab".repeat(32)),
            retired: None,
            decided: None,
            words: "It must work offline.\n\nNo sync server.".into(),
        }
    }

    #[test]
    fn a_lesson_reads_back_as_written_and_a_hand_edit_is_read() {
        let l = lesson();
        let text = render(&l);
        assert!(
            text.starts_with("---\nrole: po\ncategory: WRONG-ASSUMPTION\n"),
            "{text}"
        );
        assert!(
            text.contains("task: notes app\n"),
            "no key smuggled in: {text}"
        );
        let back = parse(&l.id, &text).unwrap();
        assert_eq!(back.words, l.words);
        assert_eq!(
            (back.role, back.category, back.source),
            (l.role, l.category, l.source)
        );
        assert_eq!(back.digest, l.digest);
        let edited = text.replace(
            "category: WRONG-ASSUMPTION",
            "category: arch-mistake\nteam: x",
        ) + "retired: no\n";
        let e = parse(&l.id, &edited).unwrap();
        assert_eq!(e.category, Category::ArchMistake);
        assert!(e.words.ends_with("retired: no"), "a body line is words");
        let conflicted = format!("<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> other\n");
        assert!(parse(&l.id, &conflicted)
            .unwrap_err()
            .contains("conflict markers"));
        let retired = text.replace("---\nIt", "retired: 2026-11-25\n---\nIt");
        assert_eq!(
            parse(&l.id, &retired).unwrap().retired.as_deref(),
            Some("2026-11-25")
        );
    }

    #[test]
    fn a_damaged_file_is_named_with_its_reason() {
        for (text, reason) in [
            ("just words", "does not start"),
            (
                "---\nrole: po\ncategory: CC-FAIL\nwords",
                "is not `key: value`",
            ),
            ("---\nrole: po\ncategory: CC-FAIL\n", "no closing"),
            ("---\ncategory: CC-FAIL\n---\nx", "no `role`"),
            (
                "---\nrole: boss\ncategory: CC-FAIL\n---\nx",
                "`role` `boss` is none of",
            ),
            ("---\nrole: po\ncategory: OOPS\n---\nx", "category `OOPS`"),
            ("---\nrole: po\ncategory: CC-FAIL\n---\n  \n", "no words"),
            (
                "---\nrole: po\ncategory: CC-FAIL\nsource: bot\n---\nx",
                "source `bot`",
            ),
        ] {
            let e = parse("x", text).unwrap_err();
            assert!(e.contains(reason), "{text:?}: {e}");
        }
    }
}
