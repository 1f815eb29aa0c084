//! Lessons: what went wrong in earlier work, kept for the team in `.bmad/lessons/` (one plain-text
//! file per lesson, [`format.rs`](crate::lessons::format)), recorded where a decision shows a
//! mistake ([`learn.rs`](crate::lessons::learn): a rejection's feedback, a failed review or check,
//! an accepted risk, an answer that corrected an assumption, or a lesson the host remembers), and
//! recalled into the role prompts that may repeat it ([`recall.rs`](crate::lessons::recall), ranked
//! with BM25). docs/lessons.md describes the format, the ranking and the commands.
//!
//! Reading goes through the project's confined, bounded reader; a damaged file is reported and
//! skipped, never fatal ([`disk.rs`](crate::lessons::disk)). Lessons are read only when a prompt is
//! rendered or a lesson is asked for: the server keeps none in memory.

mod disk;
mod format;
mod learn;
mod recall;

pub use disk::{load, write_files, Loaded, LESSONS_DIR, MAX_LESSON_BYTES, MAX_LESSON_FILES};
pub use format::{parse, render, words_digest};
pub use learn::{learned, remembered, report_may_retire, resolved};
pub use recall::{block, rank, Recalled, BLOCK_BUDGET, MAX_RECALLED};

use crate::workflow::Stage;

/// The failure museum's categories (the BMAD design's), in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// The completion contract failed: a project check failed (or was accepted failing).
    CcFail,
    /// A document assumed what the human then corrected.
    WrongAssumption,
    /// Something said earlier was lost on the way (a draft resubmitted unchanged).
    ContextLoss,
    /// A document claimed what is not so.
    Hallucination,
    /// A design the human sent back.
    ArchMistake,
    /// A step the work skipped, caught by a later stage (a failed review, a QA send-back).
    ProcessSkip,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::CcFail,
        Category::WrongAssumption,
        Category::ContextLoss,
        Category::Hallucination,
        Category::ArchMistake,
        Category::ProcessSkip,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::CcFail => "CC-FAIL",
            Category::WrongAssumption => "WRONG-ASSUMPTION",
            Category::ContextLoss => "CONTEXT-LOSS",
            Category::Hallucination => "HALLUCINATION",
            Category::ArchMistake => "ARCH-MISTAKE",
            Category::ProcessSkip => "PROCESS-SKIP",
        }
    }

    /// A category by its name, in any case (`cc-fail`).
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whose words a lesson holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The human's, through a channel the model cannot answer for them (the terminal, the
    /// client's dialog).
    Human,
    /// Written by the host (its model): a decision it asserted, or a lesson it remembered.
    Host,
    /// A stage's report (a review or QA verdict).
    Report,
    /// The server's own observation (the project's checks).
    Server,
    /// Nobody's word that the server recorded: a file written into the folder by hand (by
    /// anyone: the assistant can write it too), or one that claims to be the human's where
    /// no decision of theirs records it. The least trusted source, and the default.
    File,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Human => "human",
            Source::Host => "host",
            Source::Report => "report",
            Source::Server => "server",
            Source::File => "file",
        }
    }

    pub fn parse(name: &str) -> Option<Source> {
        [
            Source::Human,
            Source::Host,
            Source::Report,
            Source::Server,
            Source::File,
        ]
        .into_iter()
        .find(|s| s.name() == name.trim())
    }

    /// How a prompt introduces the words: the human's stay the human's, the host's are
    /// marked as the assistant's.
    pub fn said_by(self) -> &'static str {
        match self {
            Source::Human => "the user said",
            Source::Host => "written by the assistant",
            Source::Report => "a stage's report said",
            Source::Server => "the server's checks showed",
            Source::File => "a hand-written lesson file says",
        }
    }
}

/// One lesson as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    /// The file's name without `.md` (`2026-11-24-3fa9c2d1`).
    pub id: String,
    /// The role that made the mistake (the stage whose work it was about).
    pub role: Stage,
    pub category: Category,
    pub source: Source,
    /// The task it came from (`(none)` for a lesson remembered outside a task).
    pub task: String,
    /// The stage at which it was recorded (a failed review is recorded at `review`, its
    /// role is `dev`).
    pub stage: Stage,
    /// When it was recorded (RFC 3339).
    pub date: String,
    /// The SHA-256 of the document it was about, when there was one.
    pub digest: Option<String>,
    /// When the human retired it: kept in the museum, no longer recalled.
    pub retired: Option<String>,
    /// The latest retire or restore, as recorded: what, by whom (the person and the
    /// channel), when.
    pub decided: Option<String>,
    /// The words.
    pub words: String,
}

impl Lesson {
    /// Its path relative to the project.
    pub fn rel_path(&self) -> String {
        format!("{LESSONS_DIR}/{}.md", self.id)
    }

    pub fn is_active(&self) -> bool {
        self.retired.is_none()
    }

    /// The SHA-256 of what a person is shown of the lesson before deciding on it (its
    /// role, category, whose words, task and the words), to which a decision is bound: a
    /// file whose words were swapped since reads as another lesson.
    pub fn shown_sha256(&self) -> String {
        crate::workflow::machine::sha256_hex(&format!(
            "{}\n{}\n{}\n{}\n{}",
            self.role.role(),
            self.category.name(),
            self.source.name(),
            self.task,
            self.words
        ))
    }
}

/// A lesson file's name for a lesson recorded on `date` (`2026-11-24…`) from `seed`: the
/// day, then 8 hex digits of the SHA-256 of the seed (which holds the session id, unique
/// to one clone), so two clones never name two lessons alike and the files merge in git.
pub fn id_for(date: &str, seed: &str) -> String {
    let day: String = date.chars().take(10).collect();
    let hash = crate::workflow::machine::sha256_hex(seed);
    format!("{day}-{}", &hash[..8])
}
