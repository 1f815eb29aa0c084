//! Recalling lessons from a project with 10,000 of them in `.bmad/lessons/`: reading and
//! ranking them in-process (the `lessons` module: load, then BM25), and the release
//! binary's `start` (which recalls for the PO prompt) against a project without lessons:
//! its latency, the bytes the lessons block adds to the prompt, and the server's peak
//! resident set. It prints each figure beside its target and never fails because of one.
//!
//!     cargo bench --bench lessons
//!     cargo bench --bench lessons -- --quick        # fewer runs

mod common;
#[allow(dead_code)]
#[path = "workflow/driver.rs"]
mod driver;
#[allow(dead_code)]
#[path = "workflow/table.rs"]
mod table;

use std::path::{Path, PathBuf};
use std::time::Instant;

use bmad_mcp::files::{DefaultRoot, Project};
use bmad_mcp::lessons::{self, Category, Lesson, Source, BLOCK_BUDGET};
use bmad_mcp::workflow::Stage;
use serde_json::json;
use table::{kib_to_mib, ms, Table, Target};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// What the driver needs to start the server.
pub struct Config {
    pub bin: PathBuf,
    pub wrapper: Vec<String>,
}

const LESSONS: usize = 10_000;
const OBJECTIVE: &str = "A field survey app that works offline and syncs photos later";

/// Words lessons are made of: common engineering words, so that a query matches many
/// lessons a little and a few of them well, as in a real project.
const VOCABULARY: &[&str] = &[
    "validation",
    "input",
    "parser",
    "timeout",
    "retry",
    "cache",
    "database",
    "migration",
    "schema",
    "index",
    "query",
    "latency",
    "memory",
    "leak",
    "thread",
    "lock",
    "deadlock",
    "test",
    "flaky",
    "mock",
    "fixture",
    "coverage",
    "lint",
    "format",
    "build",
    "release",
    "deploy",
    "rollback",
    "config",
    "secret",
    "token",
    "auth",
    "session",
    "cookie",
    "csrf",
    "api",
    "endpoint",
    "pagination",
    "rate",
    "limit",
    "error",
    "message",
    "log",
    "metric",
    "alert",
    "dashboard",
    "ui",
    "button",
    "form",
    "accessibility",
    "contrast",
    "mobile",
    "tablet",
    "sync",
    "conflict",
    "upload",
    "photo",
    "image",
    "resize",
    "storage",
    "quota",
    "encryption",
    "backup",
    "restore",
    "export",
    "import",
    "csv",
    "json",
    "unicode",
    "locale",
    "timezone",
    "date",
    "currency",
    "rounding",
    "invoice",
    "payment",
    "refund",
    "email",
    "notification",
    "queue",
    "worker",
    "cron",
    "schedule",
    "permission",
    "role",
    "admin",
    "audit",
    "history",
    "search",
    "filter",
    "sort",
    "offline",
    "network",
    "proxy",
    "dns",
];

/// A deterministic stream of numbers (a linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below
    }
}

fn write_lessons(project: &Path, n: usize) -> Res<()> {
    let dir = project.join(lessons::LESSONS_DIR);
    std::fs::create_dir_all(&dir)?;
    let mut rng = Numbers(31);
    for i in 0..n {
        let words: Vec<&str> = (0..12 + rng.next(30))
            .map(|_| VOCABULARY[rng.next(VOCABULARY.len())])
            .collect();
        let l = Lesson {
            id: format!("2026-{:02}-{:02}-{i:08x}", 1 + i % 12, 1 + i % 28),
            role: Stage::ALL[rng.next(Stage::ALL.len())],
            category: Category::ALL[rng.next(Category::ALL.len())],
            source: Source::Human,
            task: format!("task-{}", i % 500),
            stage: Stage::Po,
            date: "2026-11-24T00:00:00.000Z".into(),
            digest: None,
            retired: None,
            decided: None,
            words: format!("The {} was wrong: {}.", words[0], words.join(" ")),
        };
        std::fs::write(dir.join(format!("{}.md", l.id)), lessons::render(&l))?;
    }
    Ok(())
}

/// The PO prompt of `start` in `project`, `runs` times: latencies (ms), prompt bytes, and
/// the server's peak resident set (KiB).
fn starts(cfg: &Config, project: &Path, runs: usize) -> Res<(Vec<f64>, usize, u64)> {
    let mut server = driver::Server::spawn(cfg, project)?;
    server.handshake()?;
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..runs {
        let r = server.call(&json!({"action": "start", "objective": OBJECTIVE}))?;
        times.push(ms(r.time));
        bytes = r.structured["role_prompt"].as_str().map_or(0, str::len);
    }
    let peak = server.peak_rss_kib()?;
    server.close()?;
    Ok((times, bytes, peak))
}

/// The CPU time this thread has used (`/proc/thread-self/schedstat`): unlike wall time,
/// not stretched by other processes on a loaded machine.
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(f64::NAN, |ns| ns as f64 / 1e6)
}

/// Precision and recall of recall on the labelled set `tests/data/lesson-recall.json`,
/// and how many (task, lesson) pairs it labels.
fn labelled() -> Res<(f64, f64, usize)> {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../tests/data/lesson-recall.json"))?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    let stage = |v: &serde_json::Value| Stage::parse(v.as_str().unwrap_or_default());
    let mut all = Vec::new();
    for l in set["lessons"].as_array().ok_or("lessons")? {
        all.push(Lesson {
            id: text(&l["id"]),
            role: stage(&l["role"]).ok_or("role")?,
            category: Category::parse(l["category"].as_str().unwrap_or_default())
                .ok_or("category")?,
            source: Source::Human,
            task: text(&l["task"]),
            stage: stage(&l["role"]).ok_or("role")?,
            date: String::new(),
            digest: None,
            retired: None,
            decided: None,
            words: text(&l["words"]),
        });
    }
    let loaded = lessons::Loaded {
        lessons: all,
        damaged: Vec::new(),
    };
    let tasks = set["tasks"].as_array().ok_or("tasks")?;
    let (mut recalled, mut right, mut relevant) = (0usize, 0usize, 0usize);
    for t in tasks {
        let wanted: Vec<String> = t["relevant"]
            .as_array()
            .ok_or("relevant")?
            .iter()
            .map(text)
            .collect();
        let got = lessons::rank(
            &loaded,
            &text(&t["objective"]),
            stage(&t["role"]),
            Some(&text(&t["task"])),
            lessons::MAX_RECALLED,
        );
        recalled += got.len();
        right += got.iter().filter(|l| wanted.contains(&l.id)).count();
        relevant += wanted.len();
    }
    Ok((
        right as f64 / recalled.max(1) as f64,
        right as f64 / relevant.max(1) as f64,
        tasks.len() * loaded.lessons.len(),
    ))
}

fn main() -> Res<()> {
    if !common::benchmarking("lessons") {
        return Ok(());
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 3 } else { 9 };
    let cfg = Config {
        bin: common::server_binary()?,
        wrapper: Vec::new(),
    };
    let with = tempfile::tempdir()?;
    let without = tempfile::tempdir()?;
    for dir in [&with, &without] {
        std::fs::create_dir(dir.path().join(".git"))?;
    }
    let made = Instant::now();
    write_lessons(with.path(), LESSONS)?;
    println!(
        "lessons: {LESSONS} lesson files written in {:.1} s",
        made.elapsed().as_secs_f64()
    );

    let project = Project::open(
        Some(with.path().to_str().ok_or("path")?),
        &DefaultRoot::working_directory(),
    )?;
    let (mut load, mut rank, mut block_bytes, mut recalled) = (Vec::new(), Vec::new(), 0, 0);
    let (mut load_cpu, mut rank_cpu) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (t, c) = (Instant::now(), thread_cpu_ms());
        let loaded = lessons::load(&project)?;
        load.push(ms(t.elapsed()));
        load_cpu.push(thread_cpu_ms() - c);
        let (t, c) = (Instant::now(), thread_cpu_ms());
        let b = lessons::block(&loaded, OBJECTIVE, "", Stage::Po);
        rank.push(ms(t.elapsed()));
        rank_cpu.push(thread_cpu_ms() - c);
        block_bytes = b.text.len();
        recalled = b.ids.len();
    }
    let (base, base_bytes, base_peak) = starts(&cfg, without.path(), runs)?;
    let (full, full_bytes, full_peak) = starts(&cfg, with.path(), runs)?;

    let mut t = Table::default();
    t.stats(
        "read 10,000 lessons (in-process)",
        &load,
        "ms",
        Target::AtMost(250.0),
    );
    t.stats("  its CPU time", &load_cpu, "ms", Target::AtMost(150.0));
    t.stats(
        "rank them, BM25 (in-process)",
        &rank,
        "ms",
        Target::AtMost(100.0),
    );
    t.stats("  its CPU time", &rank_cpu, "ms", Target::AtMost(60.0));
    t.stats("start, no lessons", &base, "ms", Target::None);
    t.stats("start, 10,000 lessons", &full, "ms", Target::AtMost(400.0));
    let added = full_bytes.saturating_sub(base_bytes);
    t.single(
        "prompt bytes added",
        format!("{added} B ({recalled} lessons; block {block_bytes} B)"),
        &format!("≤ {BLOCK_BUDGET} B"),
        Some(added <= BLOCK_BUDGET),
    );
    t.single(
        "peak RSS, no lessons",
        format!("{:.2} MiB", kib_to_mib(base_peak)),
        "",
        None,
    );
    t.single(
        "peak RSS, 10,000 lessons",
        format!("{:.2} MiB", kib_to_mib(full_peak)),
        "≤ 32 MiB",
        Some(full_peak <= 32 * 1024),
    );
    let (precision, recall, pairs) = labelled()?;
    t.single(
        "recall on the labelled set: precision",
        format!("{precision:.2} ({pairs} pairs)"),
        "≥ 0.80",
        Some(precision >= 0.8),
    );
    t.single(
        "recall on the labelled set: recall",
        format!("{recall:.2}"),
        "",
        None,
    );
    t.print();
    Ok(())
}
