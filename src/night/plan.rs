//! Where each of a parent's sprints stands, read afresh from the sessions on every turn of
//! the run (disk is the only truth: a decision made at the terminal or on the dashboard is
//! seen at the next read), and what the run does with it: start its story, run the step
//! its stage is at, wait for the human (naming why and the decision), or leave it to the
//! clone that holds it. The parent's final QA is one more item once every story completed.

use std::path::PathBuf;

use crate::store::{human_decisions, terminal_command, SessionKey, Store};
use crate::workflow::session::Session;
use crate::workflow::{rules, story, Stage};

/// One thing the run drives: a sprint's story, or the parent's final QA (`sprint: None`).
#[derive(Debug, Clone)]
pub struct Item {
    pub sprint: Option<u32>,
    /// Its session, once there is one.
    pub session: Option<Session>,
    /// Where its host sessions run: the story's worktree, the project for the parent.
    pub dir: Option<PathBuf>,
    pub next: Next,
}

/// What the run does with an item now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Its story is to be started (its worktree made first when it has none).
    Start,
    /// A host session for this stage's step.
    Step(Stage),
    /// It waits for the human: why, and what to run.
    Waits(String),
    /// Another clone holds the sprint.
    Elsewhere(String),
    Done,
}

impl Item {
    /// The story's (or the parent's) session id, once there is a session.
    pub fn id(&self) -> Option<&str> {
        self.session.as_ref().map(|s| s.session_id.as_str())
    }

    /// "sprint 3", or "final QA".
    pub fn label(&self) -> String {
        match self.sprint {
            Some(n) => format!("sprint {n}"),
            None => "final QA".into(),
        }
    }
}

/// What a session's state asks of the run.
pub fn next_of(s: &Session) -> Next {
    let (stage, state) = (s.current_stage, s.current_state);
    if state.host_writes() {
        // A parent whose stories all completed: its final QA, whatever stage it shows.
        return Next::Step(story::prompt_stage(s));
    }
    let decisions = human_decisions(stage, state);
    let Some(first) = decisions.first() else {
        return Next::Done;
    };
    let what = rules::failed_verdict(stage, s.current())
        .map(|f| format!("{stage} fails: {f}"))
        .unwrap_or_else(|| format!("{stage} is {state}"));
    let names: Vec<String> = decisions.iter().map(|a| a.to_string()).collect();
    Next::Waits(format!(
        "{what}; the human decides ({}): `{}`",
        names.join(", "),
        terminal_command(*first, &s.task_name)
    ))
}

/// The parent `parent_key` names, with its stories as they stand, and an item per sprint
/// of its approved scope (then its final QA when due or done).
pub fn read(store: &Store, parent_key: &SessionKey) -> Result<(Session, Vec<Item>), String> {
    let (_, parent, _) = store
        .load_fresh(None, parent_key, false)
        .map_err(|e| e.to_string())?;
    let sprints = story::in_scope(&parent);
    if sprints.is_empty() {
        return Err(format!(
            "task `{}` has no approved sprint plan yet (it is at {}/{}): a run builds an approved plan",
            parent.task_name, parent.current_stage, parent.current_state
        ));
    }
    let mut items: Vec<Item> = sprints
        .iter()
        .map(|n| sprint_item(store, &parent, *n))
        .collect();
    let built = story::final_qa_due(&parent) || !story::takes_stories(&parent);
    if built && items.iter().all(|i| i.next == Next::Done) {
        items.push(Item {
            sprint: None,
            dir: None,
            next: next_of(&parent),
            session: Some(parent.clone()),
        });
    }
    Ok((parent, items))
}

fn sprint_item(store: &Store, parent: &Session, n: u32) -> Item {
    let entry = parent.stories.iter().find(|s| s.sprint == n);
    let Some(entry) = entry else {
        let next = match parent.claimed.iter().find(|c| c.sprint == n) {
            Some(c) => Next::Elsewhere(c.holder()),
            None => Next::Start,
        };
        return Item {
            sprint: Some(n),
            session: None,
            dir: None,
            next,
        };
    };
    let dir = PathBuf::from(&entry.worktree);
    let key = SessionKey::Id(entry.session_id.clone());
    let cwd = entry.worktree.clone();
    match store.load(Some(&cwd), &key) {
        Ok((_, s)) => Item {
            sprint: Some(n),
            next: next_of(&s),
            session: Some(s),
            dir: Some(dir),
        },
        // A story finished in another clone and merged here, or one whose worktree is
        // gone: the entry says where it stands.
        Err(_) if entry.completed() => Item {
            sprint: Some(n),
            session: None,
            dir: Some(dir),
            next: Next::Done,
        },
        Err(e) => Item {
            sprint: Some(n),
            session: None,
            dir: Some(dir),
            next: Next::Elsewhere(format!("{} ({e})", entry.holder())),
        },
    }
}
