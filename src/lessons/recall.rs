//! Recalling lessons into a role prompt: the project's active lessons ranked by BM25 (the
//! `bm25` crate's embedder and scorer, fit to the lessons at hand, with our own small
//! tokenizer: no model, no index on disk) against what the task is about, a lesson of the
//! same role counting more; at most [`MAX_RECALLED`] of them, in a block of at most
//! [`BLOCK_BUDGET`] bytes that says they are earlier lessons, not requirements, each with
//! its source.

use bm25::{EmbedderBuilder, Scorer, Tokenizer};

use super::{Lesson, Loaded};
use crate::workflow::Stage;

/// The most lessons a prompt carries.
pub const MAX_RECALLED: usize = 5;

/// The most bytes the lessons block adds to a prompt.
pub const BLOCK_BUDGET: usize = 2048;

/// A lesson of the prompt's own role counts this much more.
const SAME_ROLE: f32 = 1.5;

/// The characters of one lesson's words shown in the block (the file has them all).
const SHOWN_CHARS: usize = 320;

/// Words too common to tell lessons apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "do", "for", "from", "has", "have",
    "in", "is", "it", "its", "not", "of", "on", "or", "so", "that", "the", "this", "to", "was",
    "we", "were", "will", "with", "you", "your", "our", "all", "any", "can", "should", "must",
    "build", "make", "new", "app",
];

/// Lower case words of letters and digits, stop words left out, a plural `s` cut.
#[derive(Debug, Default, Clone, Copy)]
pub struct Words;

impl Words {
    /// The tokens of `lower` (text already in lower case), borrowed from it.
    fn tokens(lower: &str) -> impl Iterator<Item = &str> {
        lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 1 && !STOP_WORDS.contains(w))
            .map(|w| {
                if w.len() > 4 && w.ends_with('s') && !w.ends_with("ss") {
                    &w[..w.len() - 1]
                } else {
                    w
                }
            })
    }
}

impl Tokenizer for Words {
    fn tokenize(&self, text: &str) -> Vec<String> {
        Words::tokens(&text.to_lowercase())
            .map(String::from)
            .collect()
    }
}

/// How many tokens `text` has, and whether one of them is `wanted`: one allocation, not
/// one per token (every lesson is scanned; only those that match are embedded).
fn scan(text: &str, wanted: &std::collections::HashSet<String>) -> (usize, bool) {
    let lower = text.to_lowercase();
    let mut len = 0;
    let mut hit = false;
    for t in Words::tokens(&lower) {
        len += 1;
        hit = hit || wanted.contains(t);
    }
    (len, hit)
}

/// What a prompt recalled.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recalled {
    /// The lessons' ids, most relevant first.
    pub ids: Vec<String>,
    /// The block added to the prompt (empty when no lesson is relevant).
    pub text: String,
    /// Lesson files that could not be read: path and why.
    pub damaged: Vec<(String, String)>,
}

/// The text a lesson is searched by: its words, its task and its category.
fn searched(l: &Lesson) -> String {
    format!(
        "{} {} {}",
        l.words,
        l.task.replace('-', " "),
        l.category.name()
    )
}

/// The active lessons most relevant to `query` for `role` (when given), best first (at most `limit`,
/// only those sharing a word with the query), leaving out those of `task` itself (its own
/// feedback already reaches its prompts).
pub fn rank<'a>(
    loaded: &'a Loaded,
    query: &str,
    role: Option<Stage>,
    task: Option<&str>,
    limit: usize,
) -> Vec<&'a Lesson> {
    // Only the lessons that share a word with the query can score: the others are not
    // embedded (the average length is still the whole pool's, so scores stay BM25's).
    let wanted: std::collections::HashSet<String> = Words.tokenize(query).into_iter().collect();
    if wanted.is_empty() || limit == 0 {
        return Vec::new();
    }
    let mut total_len = 0usize;
    let mut pool_len = 0usize;
    let mut pool: Vec<&Lesson> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    for l in loaded.active().filter(|l| task.is_none_or(|t| l.task != t)) {
        let text = searched(l);
        let (len, hit) = scan(&text, &wanted);
        total_len += len;
        pool_len += 1;
        if hit {
            pool.push(l);
            texts.push(text);
        }
    }
    if pool.is_empty() {
        return Vec::new();
    }
    let avgdl = total_len as f32 / pool_len as f32;
    let embedder = EmbedderBuilder::<u32, Words>::with_avgdl(avgdl)
        .tokenizer(Words)
        .build();
    let mut scorer = Scorer::<usize, u32>::new();
    for (i, text) in texts.iter().enumerate() {
        scorer.upsert(&i, embedder.embed(text));
    }
    let mut scored: Vec<(usize, f32)> = scorer
        .matches(&embedder.embed(query))
        .into_iter()
        .filter(|m| m.score > 0.0)
        .map(|m| {
            let boost = if Some(pool[m.id].role) == role {
                SAME_ROLE
            } else {
                1.0
            };
            (m.id, m.score * boost)
        })
        .collect();
    // Best first; among equals, the newer lesson (file names begin with the date).
    scored.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| pool[b.0].id.cmp(&pool[a.0].id))
    });
    scored
        .into_iter()
        .take(limit)
        .map(|(i, _)| pool[i])
        .collect()
}

/// The lessons block for `role`'s prompt in a task about `objective` (named `task`).
pub fn block(loaded: &Loaded, objective: &str, task: &str, role: Stage) -> Recalled {
    let query = format!("{objective} {}", task.replace('-', " "));
    let mut out = Recalled {
        damaged: loaded.damaged.clone(),
        ..Recalled::default()
    };
    let ranked = rank(loaded, &query, Some(role), Some(task), MAX_RECALLED);
    if ranked.is_empty() {
        return out;
    }
    let mut text = String::from(
        "\n## Lessons from earlier tasks\n\nEarlier lessons of this project, recalled because they look relevant: what went wrong before, not requirements of this task. Weigh each against the objective and the documents; the user's words in them are quoted as they were recorded.\n",
    );
    for l in ranked {
        let words = crate::code::clip(
            &l.words.split_whitespace().collect::<Vec<_>>().join(" "),
            SHOWN_CHARS,
        );
        let line = format!(
            "- [{}, {} role, task `{}`, {}: `{}`] {}\n",
            l.category,
            l.role.id(),
            l.task,
            l.source.said_by(),
            l.rel_path(),
            words
        );
        if text.len() + line.len() > BLOCK_BUDGET {
            break;
        }
        text.push_str(&line);
        out.ids.push(l.id.clone());
    }
    if !out.ids.is_empty() {
        out.text = text;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Category, Source};
    use super::*;

    fn lesson(id: &str, role: Stage, task: &str, words: &str) -> Lesson {
        Lesson {
            id: id.into(),
            role,
            category: Category::WrongAssumption,
            source: Source::Human,
            task: task.into(),
            stage: role,
            date: String::new(),
            digest: None,
            retired: None,
            words: words.into(),
        }
    }

    fn loaded(lessons: Vec<Lesson>) -> Loaded {
        Loaded {
            lessons,
            damaged: Vec::new(),
        }
    }

    #[test]
    fn the_relevant_lessons_come_first_and_an_unrelated_one_not_at_all() {
        let mut all = loaded(vec![
            lesson(
                "1",
                Stage::Po,
                "notes",
                "The PRD ignored the offline requirement: it must work without a network",
            ),
            lesson(
                "2",
                Stage::Review,
                "parser",
                "Input validation was missing from the parser",
            ),
            lesson(
                "3",
                Stage::Architect,
                "sync",
                "The design assumed an offline cache nobody asked for",
            ),
            lesson(
                "4",
                Stage::Po,
                "this-task",
                "Offline too, but from this very task",
            ),
        ]);
        let ids = |r: Vec<&Lesson>| r.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
        let got = ids(rank(
            &all,
            "A recipe app that works offline",
            Some(Stage::Po),
            Some("this-task"),
            5,
        ));
        assert_eq!(
            got,
            ["1", "3"],
            "same role first, unrelated and own task left out"
        );
        let got = ids(rank(
            &all,
            "Offline recipes",
            Some(Stage::Architect),
            None,
            5,
        ));
        assert_eq!(
            got[0], "3",
            "the architect's own lesson first for the architect"
        );
        all.lessons[0].retired = Some("2026-11-24".into());
        let got = ids(rank(&all, "offline", Some(Stage::Po), Some("this-task"), 5));
        assert_eq!(got, ["3"], "a retired lesson is never recalled");
    }

    #[test]
    fn the_block_stays_within_its_budget_and_names_each_source() {
        let many: Vec<Lesson> = (0..40)
            .map(|i| {
                lesson(
                    &format!("2026-11-24-{i:08}"),
                    Stage::Po,
                    "t",
                    &"offline sync conflict ".repeat(40),
                )
            })
            .collect();
        let b = block(&loaded(many), "offline sync", "other", Stage::Po);
        assert!(b.text.len() <= BLOCK_BUDGET, "{}", b.text.len());
        assert!(!b.ids.is_empty() && b.ids.len() <= MAX_RECALLED);
        assert!(b.text.contains("not requirements of this task"));
        assert!(
            b.text.contains("the user said: `.bmad/lessons/2026-11-24-"),
            "{}",
            b.text
        );
        let none = block(&loaded(vec![]), "offline", "t", Stage::Po);
        assert_eq!((none.text.as_str(), none.ids.len()), ("", 0));
    }
}
