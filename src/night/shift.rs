//! The run's loop: on each turn it reads where every story stands (`plan`), starts the
//! stories not started, parks those that wait for the human or crossed their budget,
//! starts host sessions for the steps that can move (up to `--parallel`), and collects the
//! sessions that ended, one line each. It waits for the human's decisions while stories
//! are parked (reading the sessions every second), unless told not to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::Utc;

use super::journal::{Entry, Journal, Ledger, StoryLedger};
use super::plan::{self, Item, Next};
use super::step::{self, End, Launch, Running};
use super::usage;
use super::{bypass, prompt, worktree, Args};
use crate::exit::Exit;
use crate::hosts::{Headless, HOSTS};
use crate::settings::Settings;
use crate::store::{SessionKey, Store};
use crate::workflow::{Stage, Track};

/// A host session's time limit when neither the command nor the policy names one.
const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(1800);
/// How often the sessions are read while nothing runs and stories wait for the human.
const POLL_IDLE: Duration = Duration::from_secs(1);
/// How often running sessions are looked at.
const POLL_RUNNING: Duration = Duration::from_millis(200);
/// Attempts of one step that make no progress before the story parks.
const ATTEMPTS: u32 = 2;

/// A step's host session in flight.
struct Flight {
    step: String,
    label: String,
    story: String,
    stage: Stage,
    /// The session's (stage, state, last change) when the step began.
    before: (Stage, String, String),
    dir: PathBuf,
    running: Running,
    log: PathBuf,
}

pub struct Shift {
    args: Args,
    store: Store,
    key: SessionKey,
    project: PathBuf,
    host: &'static str,
    headless: Headless,
    program: PathBuf,
    server: PathBuf,
    journal: Journal,
    budget: Option<u64>,
    limit: Duration,
    notify: Option<String>,
    worktrees: PathBuf,
    flights: Vec<Flight>,
    /// What was said of each parked or held item, so that it is said once.
    said: BTreeMap<String, String>,
    /// Items this run cannot start (a refusal it printed).
    refused: BTreeMap<u32, String>,
    /// Held for the whole run: a second run of the same task in this clone is refused.
    _lock: std::fs::File,
}

impl Shift {
    /// Everything checked before anything starts: the human at the keyboard, the task and
    /// its approved plan, the host and its permission settings, the policy's limits, the
    /// lock; then what a killed run left in flight is stopped.
    pub fn begin(args: Args, settings: &Settings) -> Result<Shift, String> {
        if let Some(why) = crate::process_origin::behind_me() {
            return Err(format!(
                "refusing to start a run: this command runs under an assistant's shell ({why}); a run starts host sessions in your name and takes its budget from you, so start it in your own terminal"
            ));
        }
        let store = Store::new(settings.default_root.clone(), settings.acting.clone());
        let key = SessionKey::from_task(&args.task);
        let (project, parent) = store.load(None, &key).map_err(|e| e.to_string())?;
        if parent.track != Track::Full {
            return Err(format!(
                "task `{}` is a {} task: a run builds the approved sprints of a full-track task",
                parent.task_name, parent.track
            ));
        }
        let (host, headless) = host_of(&args.host)?;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(why) = bypass::found(
            &headless.bypass,
            &args.host_args,
            &project.root,
            home.as_deref(),
        ) {
            return Err(format!("refusing to run {host}: {why}"));
        }
        let policy = crate::policy::approval::Policy::read(&project).map_err(|e| e.to_string())?;
        let run = policy.effective.run;
        let journal = Journal::open(&project.root, &parent.session_id)
            .map_err(|e| format!("cannot open the run's journal: {e}"))?;
        let lock = lock(&journal.dir)?;
        let program = args
            .host_bin
            .clone()
            .unwrap_or_else(|| headless.program.into());
        let server =
            std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
        let worktrees = args
            .worktrees
            .clone()
            .unwrap_or_else(|| worktree::default_base(&project.root));
        let shift = Shift {
            budget: args.budget.or(run.budget_tokens),
            limit: args
                .step_timeout
                .or(run.step_timeout_secs)
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_STEP_TIMEOUT),
            notify: run.notify,
            key: SessionKey::Id(parent.session_id.clone()),
            project: project.root.clone(),
            args,
            store,
            host,
            headless,
            program,
            server,
            journal,
            worktrees,
            flights: Vec::new(),
            said: BTreeMap::new(),
            refused: BTreeMap::new(),
            _lock: lock,
        };
        shift.stop_left_in_flight();
        Ok(shift)
    }

    /// The steps a killed run left in flight: what is left of their sessions stopped, each
    /// marked abandoned, to be run again from its start.
    fn stop_left_in_flight(&self) {
        let program = self.program.display().to_string();
        for (step, pid, story) in Ledger::of(&self.journal.read()).in_flight {
            let stopped = step::stop_left(pid, &program);
            println!(
                "a step of session {story} was in flight when the last run ended{}: it runs again from its start",
                if stopped { " (its host session, still running, was stopped)" } else { "" }
            );
            let _ = self.journal.append(&Entry::Abandoned { step, at: now() });
        }
    }

    /// The loop, to the end of the plan (or, with `--no-wait`, until nothing can move
    /// without the human).
    pub fn work(&mut self) -> Exit {
        println!(
            "night shift: {} with {}, {} at once{}",
            self.args.task,
            self.host,
            self.args.parallel,
            self.budget
                .map(|b| format!(", budget {b} tokens a story"))
                .unwrap_or_default()
        );
        loop {
            let (parent, items) = match plan::read(&self.store, &self.key) {
                Ok(read) => read,
                Err(why) => {
                    self.stop_all();
                    eprintln!("bmad-mcp run: {why}");
                    return Exit::Failed;
                }
            };
            self.refresh_budget();
            let ledger = Ledger::of(&self.journal.read());
            let ready = self.sort(&items, &ledger);
            self.launch(ready, &parent.task_name);
            let ended = self.collect();
            if self.flights.is_empty() && ended == 0 && !self.anything_started(&items, &ledger) {
                if items.iter().all(|i| i.next == Next::Done)
                    && items.iter().any(|i| i.sprint.is_none())
                {
                    self.report(&items);
                    println!("night shift: the plan is built and its final QA completed");
                    return Exit::Done;
                }
                if self.args.no_wait {
                    self.report(&items);
                    println!("night shift: nothing more can move without you; run it again once you decided");
                    return Exit::Done;
                }
                std::thread::sleep(POLL_IDLE);
            } else if ended == 0 {
                // A slot a step freed is filled at once; else the sessions are looked at
                // again shortly.
                std::thread::sleep(POLL_RUNNING);
            }
        }
    }

    /// Without `--budget`, the budget the human approved last: raising it there (and
    /// approving it) moves a story parked for its budget while the run waits.
    fn refresh_budget(&mut self) {
        if self.args.budget.is_some() {
            return;
        }
        let Ok(project) = self
            .store
            .project(Some(&self.project.display().to_string()))
        else {
            return;
        };
        if let Ok(policy) = crate::policy::approval::Policy::read(&project) {
            self.budget = policy.effective.run.budget_tokens;
        }
    }

    /// Whether an item can move now (a step to run, a story to start): the loop then turns
    /// again at once rather than wait.
    fn anything_started(&self, items: &[Item], ledger: &Ledger) -> bool {
        items
            .iter()
            .any(|i| matches!(self.ready(i, ledger), Some(Ok(()))))
    }

    /// The items that can move now; each parked or held one said once.
    fn sort(&mut self, items: &[Item], ledger: &Ledger) -> Vec<Item> {
        let mut ready = Vec::new();
        // An item in flight is said when its step lands, not before.
        let flying = |i: &Item| self.flights.iter().any(|f| f.label == i.label());
        let idle: Vec<&Item> = items.iter().filter(|i| !flying(i)).collect();
        for item in idle {
            match self.ready(item, ledger) {
                Some(Ok(())) => {
                    self.said.remove(&item.label());
                    ready.push(item.clone());
                }
                Some(Err(reason)) => self.park(item, &reason, true),
                None => match &item.next {
                    Next::Waits(reason) => self.park(item, reason, false),
                    Next::Elsewhere(holder) => {
                        self.say_once(item, &format!("held elsewhere: {holder}"))
                    }
                    _ => {}
                },
            }
        }
        ready
    }

    /// `Some(Ok)`: the item can move now; `Some(Err)`: it would, but parks (its budget
    /// crossed, its attempts spent); `None`: nothing to do for it now.
    fn ready(&self, item: &Item, ledger: &Ledger) -> Option<Result<(), String>> {
        if self.flights.iter().any(|f| f.label == item.label()) {
            return None;
        }
        match &item.next {
            Next::Start => (!self.refused.contains_key(&item.sprint?)).then_some(Ok(())),
            Next::Step(_) => {
                let l = ledger.story(item.id()?);
                Some(self.may_step(&l))
            }
            _ => None,
        }
    }

    /// Whether a story may take another step: within its budget, its attempts not spent.
    fn may_step(&self, l: &StoryLedger) -> Result<(), String> {
        if let Some(budget) = self.budget.filter(|b| l.tokens.total() >= *b) {
            return Err(format!(
                "budget crossed: {} tokens used of {budget}; the human continues it (a higher `--budget`, or `budget_tokens` in .bmad/config.toml, approved), splits or stops it",
                l.tokens.total()
            ));
        }
        if l.failed_in_a_row >= ATTEMPTS {
            return Err(format!(
                "{} attempts made no progress (the last one's log: {}); run it again once you looked",
                l.failed_in_a_row,
                l.last_log.as_deref().unwrap_or("none")
            ));
        }
        Ok(())
    }

    /// Parks `item` for `reason`: a line on the run's output and the notification, once;
    /// in the journal when the session itself does not say it (`record`).
    fn park(&mut self, item: &Item, reason: &str, record: bool) {
        if self.said.get(&item.label()).map(String::as_str) == Some(reason) {
            return;
        }
        let line = format!(
            "{:<9} parked: {}",
            item.label(),
            crate::code::visible(reason)
        );
        self.said.insert(item.label(), reason.to_string());
        println!("{line}");
        if record {
            if let Some(id) = item.id() {
                let _ = self.journal.append(&Entry::Parked {
                    at: now(),
                    story: id.to_string(),
                    sprint: item.sprint,
                    reason: reason.to_string(),
                });
            }
        }
        self.tell(&line);
    }

    fn say_once(&mut self, item: &Item, what: &str) {
        if self.said.get(&item.label()).map(String::as_str) != Some(what) {
            println!("{:<9} {}", item.label(), crate::code::visible(what));
            self.said.insert(item.label(), what.to_string());
        }
    }

    /// Runs the human's notification command, if they set one, with `line` as its last
    /// argument; not waited for.
    fn tell(&self, line: &str) {
        let Some(command) = &self.notify else { return };
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else { return };
        let child = std::process::Command::new(program)
            .args(words)
            .arg(line)
            .current_dir(&self.project)
            .stdin(std::process::Stdio::null())
            .spawn();
        match child {
            Ok(mut c) => {
                std::thread::spawn(move || c.wait());
            }
            Err(e) => eprintln!("bmad-mcp run: the notification command failed: {e}"),
        }
    }

    /// Starts what is ready, up to `--parallel` sessions at once.
    fn launch(&mut self, ready: Vec<Item>, task: &str) {
        for item in ready {
            if self.flights.len() >= usize::from(self.args.parallel) {
                return;
            }
            match &item.next {
                Next::Start => self.start_story(&item, task),
                Next::Step(stage) => {
                    if let Err(e) = self.fly(&item, *stage) {
                        self.park(
                            &item,
                            &format!("its host session could not start: {e}"),
                            true,
                        );
                    }
                }
                _ => {}
            }
        }
    }

    /// Makes the sprint's worktree and starts its story there (a refusal, such as the
    /// sprint claimed by another clone meanwhile, is said and the sprint left).
    fn start_story(&mut self, item: &Item, task: &str) {
        let Some(n) = item.sprint else { return };
        let dir = self.worktrees.join(format!("sprint-{n}"));
        let started =
            worktree::ensure(&self.project, &dir, &worktree::branch(task, n)).and_then(|dir| {
                let start = crate::act::Start {
                    objective: "",
                    engines: None,
                    track: Track::Story,
                    story: Some((task, n)),
                };
                crate::act::start(&self.store, Some(&dir.display().to_string()), start)
                    .map_err(|e| e.to_string())
            });
        match started {
            Ok(s) => println!(
                "{:<9} started: story {} in {}",
                item.label(),
                s.session.task_name,
                dir.display()
            ),
            Err(why) => {
                println!(
                    "{:<9} not started: {}",
                    item.label(),
                    crate::code::visible(&why)
                );
                self.refused.insert(n, why);
            }
        }
    }

    /// Starts the host session of `item`'s step at `stage`, recorded in the journal first.
    fn fly(&mut self, item: &Item, stage: Stage) -> Result<(), String> {
        let s = item.session.as_ref().ok_or("no session")?;
        let dir = item.dir.clone().unwrap_or_else(|| self.project.clone());
        let step_id = uuid::Uuid::new_v4().to_string();
        let log = self.journal.dir.join("logs").join(format!(
            "{}-{stage}-{}.log",
            item.label().replace(' ', "-"),
            &step_id[..8]
        ));
        let text = prompt::of(&s.task_name, &s.session_id, item.sprint, stage, &dir);
        let launch = Launch {
            headless: &self.headless,
            program: &self.program,
            prompt: &text,
            dir: &dir,
            server: &self.server,
            extra: &self.args.host_args,
            log: &log,
        };
        let running =
            step::spawn(&launch).map_err(|e| format!("{}: {e}", self.program.display()))?;
        self.journal
            .append(&Entry::Started {
                step: step_id.clone(),
                at: now(),
                story: s.session_id.clone(),
                sprint: item.sprint,
                stage: stage.to_string(),
                host: self.args.host.clone(),
                pid: running.pid,
                log: log.display().to_string(),
                args: step::args(&launch),
            })
            .map_err(|e| format!("the journal: {e}"))?;
        self.flights.push(Flight {
            step: step_id,
            label: item.label(),
            story: s.session_id.clone(),
            stage,
            before: (
                s.current_stage,
                s.current_state.to_string(),
                s.updated_at.clone(),
            ),
            dir,
            running,
            log,
        });
        Ok(())
    }

    /// The sessions that ended since the last turn, each recorded and said in one line.
    fn collect(&mut self) -> usize {
        let mut ended = 0;
        let mut i = 0;
        while i < self.flights.len() {
            let Some(end) = self.flights[i].running.poll(self.limit) else {
                i += 1;
                continue;
            };
            let f = self.flights.remove(i);
            self.land(f, end);
            ended += 1;
        }
        ended
    }

    /// Records an ended step: its tokens from the host's output, whether the session
    /// moved, the line.
    fn land(&mut self, f: Flight, end: End) {
        let out = std::fs::read_to_string(&f.log).unwrap_or_default();
        let tokens = usage::read(self.headless.usage, &out);
        let after = self
            .store
            .load(
                Some(&f.dir.display().to_string()),
                &SessionKey::Id(f.story.clone()),
            )
            .ok()
            .map(|(_, s)| s);
        let now_at = after.as_ref().map(|s| {
            (
                s.current_stage,
                s.current_state.to_string(),
                s.updated_at.clone(),
            )
        });
        let progress = now_at.as_ref().is_some_and(|n| *n != f.before);
        let outcome = match (&after, end) {
            (_, End::TimedOut) => {
                format!("stopped after {} s, its time limit", self.limit.as_secs())
            }
            (Some(s), _) if progress => moved_to(s),
            (_, End::Exited(code)) => format!(
                "no progress: nothing submitted (exit {}; log {})",
                code.map(|c| c.to_string())
                    .unwrap_or_else(|| "by a signal".into()),
                f.log.display()
            ),
        };
        let secs = f.running.secs();
        let _ = self.journal.append(&Entry::Ended {
            step: f.step,
            at: now(),
            story: f.story,
            secs,
            tokens: tokens.clone(),
            outcome: outcome.clone(),
            progress,
        });
        println!(
            "{:<9} {:<7} {:<12} {:>6.1}s {:>9} tokens  {}",
            f.label,
            f.stage.to_string(),
            self.args.host,
            secs,
            tokens
                .as_ref()
                .map(|t| t.total().to_string())
                .unwrap_or_else(|| "?".into()),
            crate::code::visible(&outcome)
        );
    }

    /// Stops every session in flight (the run is ending on an error).
    fn stop_all(&mut self) {
        for mut f in self.flights.drain(..) {
            f.running.stop();
        }
    }

    /// The run's closing table: each item, where it stands, its tokens.
    fn report(&self, items: &[Item]) {
        let ledger = Ledger::of(&self.journal.read());
        for item in items {
            let l = item.id().map(|id| ledger.story(id)).unwrap_or_default();
            let state = match &item.next {
                Next::Done => "done".to_string(),
                Next::Waits(_) => "parked".to_string(),
                Next::Step(stage) if l.parked.is_some() => format!("parked at {stage}"),
                Next::Step(stage) => format!("at {stage}"),
                Next::Start => "not started".into(),
                Next::Elsewhere(_) => "held elsewhere".into(),
            };
            println!("{:<9} {state:<16} {}", item.label(), story_line(&l));
        }
    }
}

/// A story's steps and tokens, and why it is parked, as one line.
pub fn story_line(l: &StoryLedger) -> String {
    let unknown = if l.unknown > 0 {
        format!(" ({} step(s) whose host said none)", l.unknown)
    } else {
        String::new()
    };
    let cost = l
        .tokens
        .cost_usd
        .map(|c| format!(", ${c:.4}"))
        .unwrap_or_default();
    let parked = l
        .parked
        .as_deref()
        .map(|p| format!("; parked: {}", crate::code::visible(p)))
        .unwrap_or_default();
    format!(
        "night shift: {} step(s), {} tokens{cost}{unknown}{parked}",
        l.steps,
        l.tokens.total()
    )
}

/// Where a step left its session, for its line.
fn moved_to(s: &crate::workflow::Session) -> String {
    match plan::next_of(s) {
        Next::Step(stage) => format!("→ {stage}"),
        Next::Waits(_) => "waits for the human (below)".into(),
        Next::Done => "done".into(),
        _ => String::new(),
    }
}

/// The host `name` (its setup name: `claude-code`, `codex`, …) and its headless mode.
fn host_of(name: &str) -> Result<(&'static str, Headless), String> {
    let found = HOSTS
        .iter()
        .find(|h| h.config.is_some_and(|c| c.setup_name == name));
    match found.and_then(|h| Some((h.config?.setup_name, h.headless?))) {
        Some(found) => Ok(found),
        None => {
            let known: Vec<&str> = HOSTS
                .iter()
                .filter(|h| h.headless.is_some())
                .filter_map(|h| Some(h.config?.setup_name))
                .collect();
            Err(format!(
                "`{name}` is not a host a run can start headless; one of: {}",
                known.join(", ")
            ))
        }
    }
}

/// The run's lock in its journal folder: one run of a task at a time in a clone.
fn lock(dir: &Path) -> Result<std::fs::File, String> {
    let path = dir.join("run.lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(|_| {
        format!(
            "another run of this task is going in this clone (it holds {}); stop it first",
            path.display()
        )
    })?;
    Ok(f)
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
