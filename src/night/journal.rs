//! The run's journal: one JSON line per event (a step started, a step ended with its
//! tokens and outcome, a step abandoned by a run that was killed, a story parked), appended
//! and synced before the run acts on it. It is the clone's own (in the git common
//! directory, beside the stories' entries, never in git, so nothing of it merges): where
//! each story stands is read from the sessions themselves; the journal adds only what they
//! do not hold (the tokens each step used, the steps in flight when a run was killed, the
//! attempts that made no progress, a budget's park), and every figure shown is derived from
//! it again on each read.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::usage::Tokens;

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    /// A host session was started for a step: its process (and process group) id and log.
    Started {
        step: String,
        at: String,
        story: String,
        sprint: Option<u32>,
        stage: String,
        host: String,
        pid: u32,
        log: String,
        /// Its command line's arguments, the prompt among them: what it was started with.
        #[serde(default)]
        args: Vec<String>,
    },
    /// The step's session ended (or was stopped at its time limit): its tokens, when the
    /// host said, and what followed in the session.
    Ended {
        step: String,
        at: String,
        story: String,
        secs: f64,
        #[serde(default)]
        tokens: Option<Tokens>,
        outcome: String,
        /// Whether the session moved (a submission landed): a step that did not is
        /// counted as a failed attempt.
        progress: bool,
    },
    /// A step in flight when the run was killed; a later run stopped what was left of it
    /// and runs the step again from its start.
    Abandoned { step: String, at: String },
    /// The story waits for the human, for `reason`.
    Parked {
        at: String,
        story: String,
        sprint: Option<u32>,
        reason: String,
    },
}

/// The journal of one parent's runs.
pub struct Journal {
    pub dir: PathBuf,
    file: PathBuf,
}

/// Where the journal of the parent `parent_id` is: under the git common directory's
/// `bmad-mcp/` (shared by the clone's worktrees), else the project's `.bmad-task/`.
pub fn dir_of(project_root: &Path, parent_id: &str) -> PathBuf {
    let base = match crate::store::stories::identity::git_dirs(project_root) {
        Some(d) => d.common_dir.join("bmad-mcp"),
        None => project_root.to_path_buf(),
    };
    base.join(".bmad-task/runs").join(parent_id)
}

impl Journal {
    /// The journal of `parent_id`'s runs, its folder made.
    pub fn open(project_root: &Path, parent_id: &str) -> std::io::Result<Journal> {
        let dir = dir_of(project_root, parent_id);
        std::fs::create_dir_all(dir.join("logs"))?;
        Ok(Journal {
            file: dir.join("journal.jsonl"),
            dir,
        })
    }

    /// Reads the journal of `parent_id` without creating anything; empty when there is none.
    pub fn read_of(project_root: &Path, parent_id: &str) -> Vec<Entry> {
        read_file(&dir_of(project_root, parent_id).join("journal.jsonl"))
    }

    /// Appends `e` and syncs it: the run acts on an event only once it is on disk.
    pub fn append(&self, e: &Entry) -> std::io::Result<()> {
        let mut line = serde_json::to_string(e).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.file)?;
        f.write_all(line.as_bytes())?;
        f.sync_data()
    }

    pub fn read(&self) -> Vec<Entry> {
        read_file(&self.file)
    }
}

/// Every line that parses: a line cut short by a crash is passed over.
fn read_file(path: &Path) -> Vec<Entry> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What the journal says, derived on each read.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Per story (session id): its tokens, all steps together, and its steps ended.
    pub stories: BTreeMap<String, StoryLedger>,
    /// Steps started and neither ended nor abandoned: (step id, pid, story).
    pub in_flight: Vec<(String, u32, String)>,
}

#[derive(Debug, Default, Clone)]
pub struct StoryLedger {
    pub tokens: Tokens,
    /// Steps ended whose host reported no tokens.
    pub unknown: u32,
    pub steps: u32,
    /// Attempts in a row, up to now, that made no progress (a time limit, nothing
    /// submitted); a step that moved the session starts the count again.
    pub failed_in_a_row: u32,
    /// The last failed attempt's log.
    pub last_log: Option<String>,
    /// Why it is parked, when its last event is a park.
    pub parked: Option<String>,
}

impl Ledger {
    pub fn of(entries: &[Entry]) -> Ledger {
        let mut l = Ledger::default();
        let mut logs: BTreeMap<String, String> = BTreeMap::new();
        for e in entries {
            match e {
                Entry::Started {
                    step,
                    story,
                    pid,
                    log,
                    ..
                } => {
                    l.in_flight.push((step.clone(), *pid, story.clone()));
                    logs.insert(step.clone(), log.clone());
                    l.stories.entry(story.clone()).or_default().parked = None;
                }
                Entry::Ended {
                    step,
                    story,
                    tokens,
                    progress,
                    ..
                } => {
                    l.in_flight.retain(|(s, _, _)| s != step);
                    let s = l.stories.entry(story.clone()).or_default();
                    s.steps += 1;
                    match tokens {
                        Some(t) => s.tokens.add(t),
                        None => s.unknown += 1,
                    }
                    if *progress {
                        s.failed_in_a_row = 0;
                    } else {
                        s.failed_in_a_row += 1;
                        s.last_log = logs.get(step).cloned();
                    }
                }
                Entry::Abandoned { step, .. } => l.in_flight.retain(|(s, _, _)| s != step),
                Entry::Parked { story, reason, .. } => {
                    l.stories.entry(story.clone()).or_default().parked = Some(reason.clone());
                }
            }
        }
        l
    }

    pub fn story(&self, id: &str) -> StoryLedger {
        self.stories.get(id).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(step: &str, story: &str) -> Entry {
        Entry::Started {
            step: step.into(),
            at: "t".into(),
            story: story.into(),
            sprint: Some(1),
            stage: "dev".into(),
            host: "claude-code".into(),
            pid: 7,
            log: format!("{step}.log"),
            args: Vec::new(),
        }
    }

    fn ended(step: &str, story: &str, total: u64, progress: bool) -> Entry {
        Entry::Ended {
            step: step.into(),
            at: "t".into(),
            story: story.into(),
            secs: 1.0,
            tokens: Some(Tokens {
                input: total,
                ..Tokens::default()
            }),
            outcome: "x".into(),
            progress,
        }
    }

    #[test]
    fn the_ledger_sums_tokens_counts_failures_in_a_row_and_finds_steps_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path(), "p").unwrap();
        for e in [
            started("a", "s1"),
            ended("a", "s1", 10, false),
            started("b", "s1"),
            ended("b", "s1", 5, true),
            started("c", "s1"),
            ended("c", "s1", 1, false),
            started("d", "s2"),
            started("e", "s2"),
            Entry::Abandoned {
                step: "d".into(),
                at: "t".into(),
            },
        ] {
            j.append(&e).unwrap();
        }
        // A line cut short by a crash is passed over.
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(".bmad-task/runs/p/journal.jsonl"))
            .unwrap()
            .write_all(b"{\"event\": \"ended\", \"st")
            .unwrap();
        let l = Ledger::of(&Journal::read_of(dir.path(), "p"));
        let s1 = l.story("s1");
        assert_eq!(
            (s1.tokens.total(), s1.steps, s1.failed_in_a_row),
            (16, 3, 1)
        );
        assert_eq!(s1.last_log.as_deref(), Some("c.log"));
        assert_eq!(l.in_flight, vec![("e".to_string(), 7, "s2".to_string())]);
    }

    #[test]
    fn a_park_holds_until_the_story_s_next_step_starts() {
        let park = Entry::Parked {
            at: "t".into(),
            story: "s1".into(),
            sprint: Some(1),
            reason: "budget".into(),
        };
        let l = Ledger::of(std::slice::from_ref(&park));
        assert_eq!(l.story("s1").parked.as_deref(), Some("budget"));
        let l = Ledger::of(&[park, started("a", "s1")]);
        assert_eq!(l.story("s1").parked, None);
    }
}
