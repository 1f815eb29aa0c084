//! The install as one call reads it ([`Method`]): looked for at the first use the call
//! makes of it, never before (a call that needs none opens nothing of it), its agents and
//! its review prompts at theirs, each at most once. The call makes one value at its start
//! and hands it down to every part that uses the install (the role prompt, the method's
//! files after a change, the review's layers, the offers, the sprints done by hand), so no
//! file of the install is opened twice in a call, and every part sees the same install.
//!
//! What was read is kept for the process's later calls on the same project while every
//! file it was read from (each file read, each folder listed, each file looked for and not
//! there) keeps its stamp (`files::Stamp`: inode, size, times), and each folder whose
//! presence it went by is still there or still absent: a call then looks at those files
//! without opening one. A reading taken while one of them had just changed is not kept,
//! since a change within the file clock's tick may keep the stamp.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};

use crate::files::{Project, Stamp};

use super::review::{CodeReview, ReviewLayer};
use super::{persona, Agent, Install};

/// The project's BMAD method for one call.
pub struct Method {
    project: Project,
    /// When the call began (nanoseconds since the epoch): a reading of files changed less
    /// than `files::stamp::SETTLED` before is not kept.
    now: i128,
    install: OnceCell<Option<Install>>,
    agents: OnceCell<Agents>,
    /// Which kept reading the install came from, for its agents to join it.
    generation: Cell<Option<u64>>,
    /// The code review's files asked for so far, by path in its folder: where each is, when it is
    /// there with text, else why it cannot be read.
    review_prompts: RefCell<BTreeMap<String, Result<String, String>>>,
    /// The code review's layers as the install configures them, and what reading them said.
    review_layers: OnceCell<(Option<Vec<ReviewLayer>>, Vec<String>)>,
}

/// The install's agents, and what reading them said (a damaged `customize.toml`).
#[derive(Clone, Default)]
struct Agents {
    agents: Vec<Agent>,
    notices: Vec<String>,
    /// The code review's customization files, read with the agents' files.
    code_review: Option<CodeReview>,
}

impl Method {
    /// The method of `project` for a call that begins now; nothing is read yet.
    pub fn of(project: &Project) -> Method {
        Method::at(project, crate::files::now_nanos())
    }

    /// [`Method::of`] for a call that began at `now`.
    fn at(project: &Project, now: i128) -> Method {
        Method {
            project: project.clone(),
            now,
            install: OnceCell::new(),
            agents: OnceCell::new(),
            generation: Cell::new(None),
            review_prompts: RefCell::default(),
            review_layers: OnceCell::new(),
        }
    }

    /// A method whose install was read already (`None`: the project has none).
    #[cfg(test)]
    pub fn known(project: &Project, install: Option<Install>) -> Method {
        let method = Method::of(project);
        let _ = method.install.set(install);
        method
    }

    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The project's v6 install, read at the first call of this (see [`super::find_install`]),
    /// or as an earlier call read it when none of its files changed since.
    pub fn install(&self) -> Option<&Install> {
        self.install
            .get_or_init(|| {
                if let Some(kept) = kept(&self.project) {
                    self.generation.set(Some(kept.generation));
                    if let Some(agents) = kept.agents {
                        let _ = self.agents.set(agents);
                    }
                    return kept.install;
                }
                let (install, files) = logged(|| super::find_install(&self.project));
                let generation = keep(&self.project, self.now, files, install.clone());
                self.generation.set(generation);
                install
            })
            .as_ref()
    }

    /// The install's agents, read at the first call of this (none without an install), and
    /// what reading them said.
    pub fn agents(&self) -> (&[Agent], &[String]) {
        // First: a kept install may bring its agents.
        let install = self.install();
        let read = self.agents.get_or_init(|| {
            let Some(install) = install else {
                return Agents::default();
            };
            let (agents, files) = logged(|| {
                let mut notices = Vec::new();
                let (agents, code_review) = persona::agents(&self.project, install, &mut notices);
                Agents {
                    agents,
                    notices,
                    code_review,
                }
            });
            if let Some(generation) = self.generation.get() {
                keep_agents(&self.project, self.now, generation, files, &agents);
            }
            agents
        });
        (&read.agents, &read.notices)
    }

    /// The code review's layers as the install configures them (`None`: no install, or its
    /// code review lists none), read at the first call of this, and what reading them said.
    pub fn review_layers(&self) -> (Option<&[ReviewLayer]>, &[String]) {
        let (layers, notices) = self.review_layers.get_or_init(|| {
            let mut notices = Vec::new();
            // Its files were read with the agents'.
            self.agents();
            let review = self.agents.get().and_then(|a| a.code_review.as_ref());
            let layers = review.and_then(|r| super::review::layers(r, &mut notices));
            (layers, notices)
        });
        (layers.as_deref(), notices)
    }

    /// Where the method's code review keeps its file `rel` (`review-prompts/edge-case-hunter.md`),
    /// relative to the project, when it is there with text, read through the confined reader
    /// (no link, at most `MAX_FILE_BYTES`) the first time this call asks for it; else why not.
    pub fn review_prompt(&self, rel: &str) -> Result<String, String> {
        if let Some(found) = self.review_prompts.borrow().get(rel) {
            return found.clone();
        }
        let skill = self.install().and_then(|i| {
            i.skills
                .iter()
                .find(|s| s.name == super::review::REVIEW_SKILL)
                .and_then(|s| s.dir())
        });
        let found = match skill {
            None => Err("the install has no code review skill folder".to_string()),
            Some(dir) => {
                let path = format!("{dir}/{rel}");
                touched(&path);
                match self.project.read_at_most(&path, super::MAX_FILE_BYTES) {
                    Ok(Some(text)) if !text.trim().is_empty() => Ok(path),
                    Ok(Some(_)) => Err(format!("{path} is empty")),
                    Ok(None) => Err(format!("{path} is not there")),
                    Err(problem) => Err(crate::code::clip(&problem.to_string(), 200)),
                }
            }
        };
        self.review_prompts
            .borrow_mut()
            .insert(rel.to_string(), found.clone());
        found
    }
}

/// What a reading went by: a file or folder whose content it read (a folder: its names),
/// or one whose presence alone it went by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Touch {
    Content(String),
    Presence(String),
}

thread_local! {
    /// What of the install the reading under way on this thread touched: read, listed,
    /// or looked for and not found.
    static TOUCHED: RefCell<Option<Vec<Touch>>> = const { RefCell::new(None) };
}

fn note(touch: Touch) {
    TOUCHED.with(|t| {
        if let Some(files) = t.borrow_mut().as_mut() {
            files.push(touch);
        }
    });
}

/// Notes that the reading under way read (or listed, or looked for) the install's file or
/// folder `rel`.
pub(super) fn touched(rel: &str) {
    #[cfg(test)]
    super::opened::note(rel);
    note(Touch::Content(rel.to_string()));
}

/// Notes that the reading under way went by whether `rel` is there, whatever it holds.
pub(super) fn present(rel: &str) {
    note(Touch::Presence(rel.to_string()));
}

/// What `read` gives, with what of the install it touched.
fn logged<T>(read: impl FnOnce() -> T) -> (T, Vec<Touch>) {
    let outer = TOUCHED.with(|t| t.borrow_mut().replace(Vec::new()));
    let value = read();
    let files = TOUCHED.with(|t| std::mem::replace(&mut *t.borrow_mut(), outer));
    let files = files.unwrap_or_default();
    TOUCHED.with(|t| {
        if let Some(outer) = t.borrow_mut().as_mut() {
            outer.extend(files.iter().cloned());
        }
    });
    (value, files)
}

/// A reading kept for later calls, and the stamps of the files it was read from.
struct Kept {
    generation: u64,
    files: Vec<(Touch, Stamp)>,
    install: Option<Install>,
    agents: Option<Agents>,
}

/// What a call takes from a kept reading.
struct Taken {
    generation: u64,
    install: Option<Install>,
    agents: Option<Agents>,
}

/// Per project (its folder): the reading kept. One per process, as git's answers are.
static KEPT: LazyLock<Mutex<HashMap<PathBuf, Kept>>> = LazyLock::new(Default::default);
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// The most projects a process keeps a reading for (an HTTP server serves several).
const MOST_KEPT: usize = 64;

/// The reading kept for `project`, while every file it was read from keeps its stamp.
fn kept(project: &Project) -> Option<Taken> {
    let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let k = kept.get(&project.root)?;
    let holds = k
        .files
        .iter()
        .all(|(t, then)| seen(project, t) == Some(*then));
    holds.then(|| Taken {
        generation: k.generation,
        install: k.install.clone(),
        agents: k.agents.clone(),
    })
}

/// What `touch` is now: the stamp of what was read; for a presence, only whether it is
/// there.
fn seen(project: &Project, touch: &Touch) -> Option<Stamp> {
    match touch {
        Touch::Content(rel) => project.stamp(rel),
        Touch::Presence(rel) => project.stamp(rel).map(Stamp::presence),
    }
}

/// The stamps of `files` now, unless one cannot be told or changed too recently to trust.
fn stamps(project: &Project, now: i128, mut files: Vec<Touch>) -> Option<Vec<(Touch, Stamp)>> {
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|t| {
            let stamp = seen(project, &t).filter(|s| !s.unsettled(now))?;
            Some((t, stamp))
        })
        .collect()
}

/// Keeps `install` as read from `files`, when their stamps can be trusted; its generation.
fn keep(project: &Project, now: i128, files: Vec<Touch>, install: Option<Install>) -> Option<u64> {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let Some(files) = stamps(project, now, files) else {
        kept.remove(&project.root);
        return None;
    };
    if kept.len() >= MOST_KEPT {
        kept.clear();
    }
    let generation = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    kept.insert(
        project.root.clone(),
        Kept {
            generation,
            files,
            install,
            agents: None,
        },
    );
    Some(generation)
}

/// Adds the agents, read from `files`, to the reading of generation `generation`.
fn keep_agents(project: &Project, now: i128, generation: u64, files: Vec<Touch>, agents: &Agents) {
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let Some(k) = kept
        .get_mut(&project.root)
        .filter(|k| k.generation == generation)
    else {
        return;
    };
    match stamps(project, now, files) {
        Some(files) => {
            k.files.extend(files);
            k.agents = Some(agents.clone());
        }
        None => {
            kept.remove(&project.root);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bmad_method::opened;

    fn installed() -> (tempfile::TempDir, Project) {
        let (dir, project) = crate::files::project::tests::project();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            super::super::manifest::MANIFEST,
            "installation:\n  version: 6.12.0\nides:\n  - claude-code\n",
        );
        write(
            ".claude/skills/bmad-agent-pm/customize.toml",
            "[agent]\nname = \"John\"\n[[agent.menu]]\ncode = \"PRD\"\nskill = \"bmad-prd\"\n",
        );
        write(
            ".claude/skills/bmad-code-review/review-prompts/edge-case-hunter.md",
            "Hunt.\n",
        );
        (dir, project)
    }

    /// Every use of one value reads each file of the install once; another value (another
    /// call) reads them again while they have just changed.
    #[test]
    fn one_value_reads_each_file_of_the_install_once() {
        let (_dir, project) = installed();
        opened::clear();
        let method = Method::of(&project);
        assert!(opened::counts().is_empty(), "nothing before use");
        for _ in 0..3 {
            assert_eq!(method.install().unwrap().skills.len(), 2);
            assert_eq!(method.agents().0.len(), 1);
            assert!(method
                .review_prompt("review-prompts/edge-case-hunter.md")
                .is_ok());
            assert!(method
                .review_prompt("review-prompts/verification-gap.md")
                .is_err());
            assert!(method.review_layers().0.is_none(), "no customize.toml");
        }
        let opened = opened::counts();
        assert_eq!(opened.get(super::super::manifest::MANIFEST), Some(&1));
        assert!(opened.values().all(|n| *n == 1), "{opened:?}");
        Method::of(&project).install();
        assert_eq!(
            opened::counts().get(super::super::manifest::MANIFEST),
            Some(&2),
            "files changed just now are read again by the next call"
        );
    }

    /// A reading of settled files is kept for the next call, which opens none of them,
    /// until one of them changes, is added or is removed.
    #[test]
    fn a_reading_is_kept_while_its_files_keep_their_stamps() {
        let (dir, project) = installed();
        let later = crate::files::now_nanos() + 10_000_000_000;
        let first = Method::at(&project, later);
        assert_eq!(first.agents().0.len(), 1);
        opened::clear();
        let second = Method::at(&project, later);
        assert_eq!(second.install().unwrap().skills.len(), 2);
        assert_eq!(second.agents().0[0].who(), "John");
        assert!(opened::counts().is_empty(), "{:?}", opened::counts());
        // A team's override of the agent, where none was: read again.
        let custom = dir.path().join("_bmad/custom");
        std::fs::create_dir_all(&custom).unwrap();
        std::fs::write(
            custom.join("bmad-agent-pm.toml"),
            "[agent]\nname = \"Jan\"\n",
        )
        .unwrap();
        let third = Method::at(&project, later);
        assert_eq!(third.agents().0[0].who(), "Jan");
        assert_eq!(
            opened::counts().get(super::super::manifest::MANIFEST),
            Some(&1)
        );
        // Edited in place, same size: the times say it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(
            custom.join("bmad-agent-pm.toml"),
            "[agent]\nname = \"Jon\"\n",
        )
        .unwrap();
        assert_eq!(Method::at(&project, later).agents().0[0].who(), "Jon");
    }
}
