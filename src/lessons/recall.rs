//! Recalling lessons into a role prompt: the project's active lessons ranked by BM25 (the
//! `bm25` crate's embedder and scorer, fit to the lessons at hand, with our own small
//! tokenizer: no model, no index on disk) against what the task is about, a lesson of the
//! same role counting more; at most [`MAX_RECALLED`] of them, in a block of at most
//! [`BLOCK_BUDGET`] bytes that says they are earlier lessons, not requirements, each with
//! its source.

use std::collections::{HashMap, HashSet};

use bm25::{EmbedderBuilder, Tokenizer};

use super::{Lesson, Loaded};
use crate::workflow::Stage;

/// The most lessons a prompt carries.
pub const MAX_RECALLED: usize = 5;

/// The most bytes the lessons block adds to a prompt.
pub const BLOCK_BUDGET: usize = 1024;

/// The least relevance a lesson needs to be recalled: its BM25 score (after the role's
/// boost) as a share of what a lesson holding every word of the objective would score.
/// Set on the labelled set `tests/data/lesson-recall.json` (BENCHMARKS.md gives its
/// precision and recall); a lesson that shares one common word with the task stays out.
pub const MIN_RELEVANCE: f32 = 0.36;

/// The fewest lessons a folder is weighed as (see [`scored`]).
const MIN_COLLECTION: usize = 20;

/// A lesson of the prompt's own role counts this much more.
const SAME_ROLE: f32 = 1.5;

/// The most characters of one lesson's words shown in the block (the file has them all).
const SHOWN_CHARS: usize = 240;

/// Words too common to tell lessons apart.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "do",
    "for",
    "from",
    "has",
    "have",
    "in",
    "is",
    "it",
    "its",
    "not",
    "of",
    "on",
    "or",
    "so",
    "that",
    "the",
    "this",
    "to",
    "was",
    "we",
    "were",
    "will",
    "with",
    "you",
    "your",
    "our",
    "all",
    "any",
    "can",
    "should",
    "must",
    "build",
    "make",
    "new",
    "app",
    "when",
    "no",
    "into",
    "their",
    "them",
    "they",
    "each",
    "every",
    "without",
    "only",
    "what",
    "which",
    "who",
    "how",
    "than",
    "then",
    "there",
    "one",
    "also",
    "too",
    "out",
    "up",
    "about",
    "after",
    "before",
    "first",
    "add",
    "use",
    "instead",
    "back",
    "down",
    "other",
    "more",
    "less",
    "never",
    "ones",
    "itself",
    "themselves",
    "is",
    "been",
    "being",
    "does",
    "did",
    "done",
    "may",
    "might",
    "would",
    "could",
    "if",
    "else",
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

/// How many tokens `text` has, and which of `wanted` it holds: one allocation for the
/// text, not one per token (every lesson is scanned; only those that match are embedded).
fn scan<'w>(text: &str, wanted: &'w HashSet<String>) -> (usize, Vec<&'w str>) {
    let lower = text.to_lowercase();
    let mut len = 0;
    let mut hits: Vec<&'w str> = Vec::new();
    for t in Words::tokens(&lower) {
        len += 1;
        if let Some(w) = wanted.get(t) {
            if !hits.contains(&w.as_str()) {
                hits.push(w);
            }
        }
    }
    (len, hits)
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

/// The text a lesson is searched by: its words and its task's name (the category's name
/// would match every task that fails or assumes anything).
fn searched(l: &Lesson) -> String {
    format!("{} {}", l.words, l.task.replace('-', " "))
}

/// The active lessons most relevant to `query` for `role` (when given), best first (at
/// most `limit`, only those sharing a word with the query), leaving out those of `task`
/// itself (its own feedback already reaches its prompts).
pub fn rank<'a>(
    loaded: &'a Loaded,
    query: &str,
    role: Option<Stage>,
    task: Option<&str>,
    limit: usize,
) -> Vec<&'a Lesson> {
    scored(loaded, query, role, task)
        .into_iter()
        .filter(|(_, score)| *score >= MIN_RELEVANCE)
        .take(limit)
        .map(|(l, _)| l)
        .collect()
}

/// Every active lesson that shares a word with `query` (not those of `task`), with its
/// BM25 score (a lesson of `role` boosted), best first.
pub fn scored<'a>(
    loaded: &'a Loaded,
    query: &str,
    role: Option<Stage>,
    task: Option<&str>,
) -> Vec<(&'a Lesson, f32)> {
    // Only the lessons that share a word with the query can score, and only they are
    // embedded; the average length and each query word's document frequency are counted
    // over every lesson, so that the scores are BM25's over the whole folder (a word that
    // half the lessons share weighs little, one that a single lesson has weighs much).
    let wanted: HashSet<String> = Words.tokenize(query).into_iter().collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let (mut total_len, mut count) = (0usize, 0usize);
    let mut df: HashMap<&str, usize> = HashMap::new();
    let mut pool: Vec<(&Lesson, String)> = Vec::new();
    for l in loaded.active().filter(|l| task.is_none_or(|t| l.task != t)) {
        let text = searched(l);
        let (len, hits) = scan(&text, &wanted);
        total_len += len;
        count += 1;
        for w in &hits {
            *df.entry(w).or_default() += 1;
        }
        if !hits.is_empty() {
            pool.push((l, text));
        }
    }
    if pool.is_empty() {
        return Vec::new();
    }
    let embedder = EmbedderBuilder::<u32, Words>::with_avgdl(total_len as f32 / count as f32)
        .tokenizer(Words)
        .build();
    // A folder counts as at least this many lessons: in a young project a word that the
    // one lesson has is no less telling than in a large one (BM25's weight falls to nothing
    // in a collection of one).
    let n = count.max(MIN_COLLECTION) as f32;
    let weight = |d: usize| ((n - d as f32 + 0.5) / (d as f32 + 0.5) + 1.0).ln();
    // Each query word's weight (its inverse document frequency) by its place in the
    // embedding space.
    let idf: HashMap<u32, f32> = df
        .iter()
        .filter_map(|(w, d)| Some((*embedder.embed(w).indices().next()?, weight(*d))))
        .collect();
    // What a lesson of average length holding every word of the query once would score:
    // the scores are shares of it, so that a long objective does not lift every lesson
    // over the bar and a short one keep every lesson under it.
    let whole: f32 = wanted
        .iter()
        .map(|w| weight(df.get(w.as_str()).copied().unwrap_or(0)))
        .sum();
    let mut scored: Vec<(&Lesson, f32)> = pool
        .into_iter()
        .map(|(l, text)| {
            let score: f32 = embedder
                .embed(&text)
                .iter()
                .filter_map(|t| Some(idf.get(&t.index)? * t.value))
                .sum();
            let boost = if Some(l.role) == role { SAME_ROLE } else { 1.0 };
            (l, score * boost / whole)
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    // Best first; among equals, the newer lesson (file names begin with the date).
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.id.cmp(&a.0.id)));
    scored
}

/// A lesson's words on one line: whole up to [`SHOWN_CHARS`], else cut between words,
/// saying the file has the rest.
fn shown(words: &str) -> String {
    let line = words.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= SHOWN_CHARS {
        return line;
    }
    let head = crate::code::clip(&line, SHOWN_CHARS);
    let head = head.trim_end_matches('…');
    let head = head.rfind(' ').map_or(head, |space| &head[..space]);
    format!(
        "{}… (the rest in the file)",
        head.trim_end_matches([',', ';', ':'])
    )
}

/// The lessons block for `role`'s prompt in a task about `objective` (named `task`).
pub fn block(loaded: &Loaded, objective: &str, task: &str, role: Stage) -> Recalled {
    // The objective alone: the task's name is its slug, with the owner's handle and a tag.
    let query = objective;
    let mut out = Recalled {
        damaged: loaded.damaged.clone(),
        ..Recalled::default()
    };
    let ranked = rank(loaded, query, Some(role), Some(task), MAX_RECALLED);
    if ranked.is_empty() {
        return out;
    }
    let mut text = String::from(
        "\n## Lessons from earlier tasks\n\nEarlier lessons of this project, recalled because they look relevant: what went wrong before, not requirements of this task. Weigh each against the objective and the documents; the user's words in them are quoted as they were recorded. If this task removes a lesson's cause, the closing report says so on a line `Resolves lesson: <id>`: when the task completes, a lesson of the model's or the server's words is retired, and one of a person's words is proposed to the human, who decides.\n",
    );
    // Most relevant first; a lesson that does not fit in what is left is passed over for
    // a shorter, less relevant one, never cut to fit.
    for l in ranked {
        let words = shown(&l.words);
        let line = format!(
            "- [{}, {} role, task {}, {}: {}] {}\n",
            l.category,
            l.role.id(),
            crate::code::inline(&l.task),
            l.source.said_by(),
            crate::code::inline(&l.rel_path()),
            words
        );
        if text.len() + line.len() > BLOCK_BUDGET {
            continue;
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
            decided: None,
            words: words.into(),
        }
    }

    /// The labelled set: its lessons as loaded, and per task the query, role and the ids
    /// of the lessons it should recall.
    /// A labelled task: its objective, its name, the role, the lessons it should recall.
    type Task = (String, String, Stage, Vec<String>);

    fn labelled() -> (Loaded, Vec<Task>) {
        let set: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/data/lesson-recall.json")).unwrap();
        let stage = |v: &serde_json::Value| Stage::parse(v.as_str().unwrap()).unwrap();
        let lessons = set["lessons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| Lesson {
                category: Category::parse(l["category"].as_str().unwrap()).unwrap(),
                ..lesson(
                    l["id"].as_str().unwrap(),
                    stage(&l["role"]),
                    l["task"].as_str().unwrap(),
                    l["words"].as_str().unwrap(),
                )
            })
            .collect();
        let tasks = set["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let relevant = t["relevant"].as_array().unwrap();
                (
                    t["objective"].as_str().unwrap().to_string(),
                    t["task"].as_str().unwrap().to_string(),
                    stage(&t["role"]),
                    relevant
                        .iter()
                        .map(|r| r.as_str().unwrap().to_string())
                        .collect(),
                )
            })
            .collect();
        (loaded(lessons), tasks)
    }

    /// Precision and recall of [`rank`] on the labelled set: of the lessons recalled, the
    /// share that are relevant, and of the relevant ones, the share recalled.
    pub(crate) fn precision_and_recall() -> (f32, f32, usize) {
        let (all, tasks) = labelled();
        let (mut recalled, mut right, mut relevant_total) = (0, 0, 0);
        for (objective, task, role, relevant) in &tasks {
            let got = rank(&all, objective, Some(*role), Some(task), MAX_RECALLED);
            recalled += got.len();
            right += got.iter().filter(|l| relevant.contains(&l.id)).count();
            relevant_total += relevant.len();
        }
        let pairs = tasks.len() * all.lessons.len();
        (
            right as f32 / recalled.max(1) as f32,
            right as f32 / relevant_total.max(1) as f32,
            pairs,
        )
    }

    /// The scores of the labelled set, relevant pairs marked: what [`MIN_RELEVANCE`] was
    /// set from (`cargo test --lib print_the_labelled -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_the_labelled_scores() {
        let (all, tasks) = labelled();
        for (objective, task, role, relevant) in tasks {
            for (l, s) in scored(&all, &objective, Some(role), Some(&task)) {
                let mark = if relevant.contains(&l.id) {
                    "REL"
                } else {
                    "---"
                };
                println!("{mark} {s:6.2} {} <- {objective}", l.id);
            }
        }
    }

    #[test]
    fn recall_on_the_labelled_set_is_precise_and_finds_most() {
        let (precision, recall, pairs) = precision_and_recall();
        assert!(pairs >= 30, "{pairs} labelled pairs");
        assert!(precision >= 0.8, "precision {precision}");
        assert!(recall >= 0.7, "recall {recall}");
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
            ["1"],
            "unrelated, own task, and another role's lesson sharing one word left out"
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
        let got = ids(rank(
            &all,
            "A recipe app that works offline",
            Some(Stage::Po),
            Some("this-task"),
            5,
        ));
        assert!(
            got.is_empty(),
            "a retired lesson is never recalled: {got:?}"
        );
    }

    #[test]
    fn the_block_stays_within_its_budget_and_names_each_source() {
        // Ten long lessons about the task's subject among forty.
        let many: Vec<Lesson> = (0..40)
            .map(|i| {
                let words = if i % 4 == 0 {
                    "offline sync conflict ".repeat(40)
                } else {
                    format!("database migration timeout {i} ").repeat(10)
                };
                lesson(&format!("2026-11-24-{i:08}"), Stage::Po, "t", &words)
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

    /// Lessons are shown whole, or cut between words with a word that says so; one that
    /// does not fit in what the budget leaves is passed over for the next that does.
    #[test]
    fn the_block_keeps_whole_lessons_and_fills_its_budget_by_relevance() {
        // The best match and the second are long (only one fits); the third is short, and
        // shares one word with the task.
        let best = format!("{}offline sync conflict", "careful ".repeat(30));
        let second = format!("offline sync conflict {}", "replicas lost data ".repeat(12));
        let all = loaded(vec![
            lesson("2026-11-24-a", Stage::Po, "t1", &best),
            lesson("2026-11-24-b", Stage::Po, "t2", &second),
            lesson("2026-11-24-c", Stage::Po, "t3", "offline mode lost a write"),
        ]);
        let ranked: Vec<&str> = rank(&all, "offline sync conflict", Some(Stage::Po), None, 5)
            .iter()
            .map(|l| l.id.as_str())
            .collect();
        assert_eq!(ranked, ["2026-11-24-a", "2026-11-24-b", "2026-11-24-c"]);
        let b = block(&all, "offline sync conflict", "other", Stage::Po);
        assert!(b.text.len() <= BLOCK_BUDGET, "{}", b.text.len());
        assert_eq!(b.ids, ["2026-11-24-a", "2026-11-24-c"], "{}", b.text);
        assert!(
            b.text.contains("careful careful… (the rest in the file)"),
            "cut between words: {}",
            b.text
        );
        assert!(
            b.text.contains("] offline mode lost a write\n"),
            "{}",
            b.text
        );
    }

    /// A lesson's file is the repository's: its task and its file's name stay inside their
    /// quotes in the prompt.
    #[test]
    fn a_lessons_task_and_file_stay_quoted() {
        let forged = crate::code::FORGED;
        let l = lesson(forged, Stage::Po, forged, "offline sync lost data");
        let b = block(&loaded(vec![l]), "offline sync", "t", Stage::Po);
        assert_eq!(b.ids.len(), 1, "{}", b.text);
        assert!(!crate::code::forged_in(&b.text), "{}", b.text);
    }
}
