//! One change to a session, top to bottom, whichever channel asks for it (the tool's calls,
//! the terminal, the dashboard, the client's dialog):
//!
//! 1. find the session (its id names its file; a task name goes through the mapping);
//! 2. ask git once: who decides, on which branch;
//! 3. take the project lock and read the session;
//! 4. refuse what the policy keeps for the human;
//! 5. run the checks a submission needs: with the lock dropped (minutes of checks must not
//!    make every other call `busy`), then the lock taken and the session read again, which
//!    must not have moved meanwhile (the checks may not be about the work otherwise);
//! 6. let the machine decide (`machine::apply_observed`): the next state, the documents,
//!    the facts for the reply;
//! 7. resolve the role prompt the reply hands over, before anything is written (a broken
//!    override refuses the call and changes nothing), and the lessons the change taught;
//! 8. write the documents, the lessons and the policy's records, then the session;
//! 9. then, apart from the change, what follows it: the BMAD method's own files
//!    ([`method_files`]), the review's ([`review_layers`]), and the record of every file
//!    the server wrote as its own.
//!
//! A human's decision comes here through [`human`], its one path. ARCHITECTURE.md walks
//! these steps in this order (a test in `tests/it/readme.rs` holds it to the code).

pub mod human;
mod ledger;
mod method_files;
mod review_layers;
mod start;

pub use start::{start, Start, Started};

use chrono::Utc;

use crate::bmad_method::Method;
use crate::error::{Error, Result};
use crate::files::Project;
use crate::lessons::Lesson;
use crate::policy::{self, Admitted, Watched};
use crate::prompts::{self, Template};
use crate::store::{
    faults, not_before_last_entry, GitNow, Located, RefusedWith, Seen, SessionKey, Store,
};
use crate::workflow::machine::{self, Documents};
use crate::workflow::session::Session;
use crate::workflow::{Action, Command, Decision, Effects, Evidence, Facts};

/// Whether the change hands the host the next role prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handover {
    /// The tool's calls: the reply carries the prompt, and the history the lessons it
    /// carried.
    Prompt,
    /// A decision in the terminal or on the dashboard: no host reads the reply there; the
    /// host's next call asks for the prompt.
    Nothing,
}

/// A change a channel asks for.
pub struct Change {
    pub command: Command,
    pub decision: Decision,
    pub handover: Handover,
}

/// A change made: the session as written, what the change did, and what the reply needs.
pub struct Done {
    pub project: Project,
    pub session: Session,
    /// What the change did: the machine's record, with every file the server wrote for it.
    pub effects: Effects,
    pub facts: Facts,
    /// The role prompt the reply hands over (with [`Handover::Prompt`], when the new
    /// state asks for one).
    pub prompt: Option<Template>,
    /// What a reply asking the human needs, when the new state asks them.
    pub human: Option<ForHuman>,
    /// What git said of the project's files during the change, for the reply's drift.
    pub seen: Option<Seen>,
}

/// What a reply that asks the human to decide needs of the project, read with the change
/// (or the read that gives the state) so that the reply reads nothing again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForHuman {
    /// The gates policy, cited, when it keeps the decision for the human.
    pub gates: Option<String>,
    /// The dashboard's page for the task, while a dashboard serves the project.
    pub dashboard: Option<String>,
}

/// [`ForHuman`] for `session` in `project` when its state asks the human to decide.
/// `gates`: the policy's answer when the change already read it (see
/// [`Admitted::human_gates`]); `cannot_ask`: who cannot ask the human.
pub fn for_human(
    project: &Project,
    session: &Session,
    gates: Option<Option<String>>,
    cannot_ask: Option<&str>,
) -> Option<ForHuman> {
    let asks =
        !crate::store::human_decisions(session.current_stage, session.current_state).is_empty();
    asks.then(|| ForHuman {
        gates: gates.unwrap_or_else(|| policy::human_gates(project, cannot_ask)),
        dashboard: crate::store::task_link(project, &session.session_id),
    })
}

/// Makes `change` to the session `key` names. On error, the session when it was read, for
/// a reply that names its state.
pub fn act(
    store: &Store,
    cwd: Option<&str>,
    key: &SessionKey,
    change: Change,
    watched: &Watched,
) -> std::result::Result<Done, RefusedWith> {
    let at = store.locate(cwd, key).map_err(|e| (e, None))?;
    act_at(store, &at, key, change, watched)
}

/// [`act`] on a session already found.
pub fn act_at(
    store: &Store,
    at: &Located,
    key: &SessionKey,
    change: Change,
    watched: &Watched,
) -> std::result::Result<Done, RefusedWith> {
    let Change {
        command,
        mut decision,
        handover,
    } = change;
    let git = store.git_now(&at.project, command.action().decides());
    if decision.decider.is_none() {
        decision.decider.clone_from(&git.person);
    }
    let (lock, session) = store.lock_and_read(at, key)?;
    store
        .may_change(&at.project, &session)
        .map_err(|e| refused(e, &session))?;
    // The BMAD install, read at its first use in this change and once.
    let method = Method::of(&at.project);
    let submits = command.action() == Action::Submit;
    let read = ReadUnderLock::now(store, &method, &session, submits.then_some(&git));
    let now = not_before_last_entry(&read.before, Utc::now());
    let mut admitted = policy::admit(
        &at.project,
        &read.before,
        &read.documents,
        &command,
        &decision,
        now,
        store.check_timeout(),
    )
    .map_err(|e| refused(e, &session))?;
    let (_lock, session, read, observed) = match admitted.checks.take() {
        None => (lock, session, read, Evidence::default()),
        Some(run) => {
            drop(lock);
            let planned_at = run.steps;
            let observed = policy::watch::run_checks(run, watched);
            let (lock, session) = store.lock_and_read(at, key)?;
            unmoved(&session, planned_at).map_err(|e| refused(e, &session))?;
            let read = ReadUnderLock::now(store, &method, &session, submits.then_some(&git));
            (lock, session, read, observed)
        }
    };
    let step = Applying {
        store,
        project: &at.project,
        method: &method,
        git: &git,
        handover,
    };
    step.apply(read, command, &decision, observed, admitted)
        .map_err(|e| refused(e, &session))
}

/// What a step acts on, read under the lock: the session (a parent with its stories as
/// their shared entries say now, and the sprints other clones claimed on the team's remote
/// as this clone last fetched them) and the documents the machine may read for it (for a
/// submission, the project's files as the developer's round left them).
struct ReadUnderLock {
    before: Session,
    documents: Documents,
}

impl ReadUnderLock {
    /// `submits`: what git says now, for a submission; `method`: the call's install.
    fn now(
        store: &Store,
        method: &Method,
        session: &Session,
        submits: Option<&GitNow>,
    ) -> ReadUnderLock {
        let project = method.project();
        let before = store.with_stories(project, session, None);
        let mut documents = crate::store::documents(project, &before);
        if let Some(git) = submits {
            documents.work_tree = git.work_tree_now(&before);
            documents.review_layers = review_layers::required(method, &before);
            let stage = crate::workflow::story::prompt_stage(&before);
            documents.template = crate::bmad_method::template::sections(method, stage);
        }
        ReadUnderLock { before, documents }
    }
}

/// Said when a person decides on a task someone else owns: the team sees it in the reply
/// and the history records who decided.
fn others_task(before: &Session, decision: &Decision) -> Option<String> {
    let (owner, decider) = (before.owner.as_ref()?, decision.decider.as_ref()?);
    if owner.is(decider) {
        return None;
    }
    Some(format!(
        "{} decided on a task that {} owns; the history records who decided.",
        crate::code::clip(&decider.to_string(), 120),
        crate::code::clip(&owner.to_string(), 120)
    ))
}

/// The earlier lessons this change resolves (the closing report names them, the task recalled
/// them): those of the model's or the server's own words retired with why, to be written with the
/// change, each kept in the change's record; one that holds a person's words left active and
/// proposed to the human, who alone retires it
/// ([`lessons::report_may_retire`](crate::lessons::report_may_retire)). Each said in a notice. A
/// lesson that cannot be read now is passed over.
fn retire_resolved(project: &Project, outcome: &mut machine::Outcome) -> Vec<Lesson> {
    let ids = crate::lessons::resolved(&outcome.effects, &outcome.session);
    if ids.is_empty() {
        return Vec::new();
    }
    let Ok(loaded) = crate::lessons::load(project) else {
        return Vec::new();
    };
    let task = &outcome.session.task_name;
    let mut retired = Vec::new();
    for id in ids {
        let Some(mut l) = loaded.find(&id).filter(|l| l.is_active()).cloned() else {
            continue;
        };
        if !crate::lessons::report_may_retire(l.source) {
            outcome.facts.notices.push(format!(
                "The closing report says task `{task}` resolved the cause of lesson {} ({}), which holds {}: it stays active until the human retires it (`bmad-mcp lessons retire {}` in their terminal, or on the dashboard); a report does not retire a person's lesson.",
                l.id,
                l.rel_path(),
                match l.source {
                    crate::lessons::Source::Human => "the user's words",
                    _ => "words written into the folder by hand, perhaps a person's",
                },
                l.id
            ));
            continue;
        }
        l.retired = Some(format!(
            "{} (resolved by task `{task}`)",
            outcome.session.updated_at
        ));
        outcome.facts.notices.push(format!(
            "Retired lesson {}: the closing report says task `{task}` resolved its cause ({}).",
            l.id,
            l.rel_path()
        ));
        outcome.effects.lessons.retired.push(l.id.clone());
        retired.push(l);
    }
    retired
}

fn refused(e: Error, session: &Session) -> (Error, Option<Box<Session>>) {
    (e, Some(Box::new(session.clone())))
}

/// Refuses a submission whose session moved on while its checks ran.
fn unmoved(session: &Session, planned_at: usize) -> Result<()> {
    if session.steps() == planned_at {
        return Ok(());
    }
    Err(Error::argument(
        crate::code::ErrorCode::InvalidState,
        format!(
            "the session moved on while the checks ran (it is now at stage `{}`, state `{}`): nothing was recorded; `status` says where it stands now",
            session.current_stage, session.current_state
        ),
    ))
}

/// Steps 6 to 8, under the lock.
struct Applying<'a> {
    store: &'a Store,
    project: &'a Project,
    /// The call's BMAD install, read once for every step that uses it.
    method: &'a Method,
    git: &'a GitNow,
    handover: Handover,
}

impl Applying<'_> {
    fn apply(
        &self,
        read: ReadUnderLock,
        command: Command,
        decision: &Decision,
        observed: Evidence,
        mut admitted: Admitted,
    ) -> Result<Done> {
        let project = self.project;
        let ReadUnderLock { before, documents } = read;
        let documents = with_file_draft(self.method, &before, &command, documents)?;
        let now = not_before_last_entry(&before, Utc::now());
        let mut outcome = {
            let _deciding = crate::fault::doing(
                "machine",
                format!("apply the `{}` to the session", command.action().name()),
            );
            machine::apply_observed(&before, command, decision, observed, &documents, now)?
        };
        self.git.record(&before, &mut outcome.session);
        if outcome.effects.moved_stage() {
            (outcome.facts.notices).extend(offer_to_begin(self.method, &outcome.session));
        }
        let prompt = self.prompt_for(&mut outcome)?;
        // What the change taught, written with it for the team.
        let lessons = self.taught(&before, &mut outcome);
        self.said_with(&before, decision, &admitted.said_once, &mut outcome);
        let retired = retire_resolved(project, &mut outcome);
        let mut files = std::mem::take(&mut admitted.files);
        files.extend(crate::lessons::write_files(&lessons));
        files.extend(crate::lessons::write_files(&retired));
        let writes = std::mem::take(&mut outcome.writes);
        files.extend(writes.into_iter().map(|w| (w.path, w.content)));
        let method = method_files::prepare(
            self.method,
            &mut outcome.session,
            Some(&outcome.effects),
            &files,
            now,
        );
        // The round is measured after the server's own writes for this change.
        self.git
            .round(&before, &mut outcome.session, &method.paths());
        let seen = self.git.seen();
        let also = {
            let _writing = crate::fault::doing("write", "write the change");
            self.store
                .write_change(project, &before, &outcome.session, &files)?
        };
        for (path, text) in files.iter().chain(&also) {
            let blob = self.git.blob_id(text.as_bytes());
            outcome.effects.wrote(path.clone(), Some(blob));
        }
        // After the change and apart from it: a file for the method that cannot be
        // written is said, and the change stands.
        self.for_the_method(&mut outcome, &files, method);
        // Said in the reply, not kept in the history: the policy's, not the step's.
        for notice in std::mem::take(&mut admitted.notices) {
            if !outcome.facts.notices.contains(&notice) {
                outcome.facts.notices.push(notice);
            }
        }
        let cannot_ask = decision.cannot_ask.as_deref();
        Ok(Done {
            human: for_human(project, &outcome.session, admitted.human_gates, cannot_ask),
            project: project.clone(),
            session: outcome.session,
            effects: outcome.effects,
            facts: outcome.facts,
            prompt,
            seen,
        })
    }

    /// What the change says beside its own facts: the policy's notices said once (kept as
    /// given), a decision on someone else's task, a session restored from an older
    /// version, news of the story's claim (released, or won by another clone).
    fn said_with(
        &self,
        before: &Session,
        decision: &Decision,
        said_once: &[String],
        outcome: &mut machine::Outcome,
    ) {
        for key in said_once {
            if !outcome.session.notices_given.contains(key) {
                outcome.session.notices_given.push(key.clone());
            }
        }
        let said = [
            others_task(before, decision),
            crate::store::went_back(self.project, before),
            self.store.claim_news_now(self.project, before),
        ];
        outcome.facts.notices.extend(said.into_iter().flatten());
    }

    /// The lessons the change teaches, each said in a notice and kept in its record. A
    /// risk accepted on work whose round saw a fault of the server's own on the task
    /// (newer than the step before the work's latest submission, even with a submission
    /// since) teaches none: the failure accepted may be the server's, not the work's; the
    /// decision is recorded all the same.
    fn taught(&self, before: &Session, outcome: &mut machine::Outcome) -> Vec<Lesson> {
        let fault = (outcome.effects.risk.as_ref())
            .and_then(|risk| faults::during_round(self.project, before, risk.stage));
        let lessons =
            crate::lessons::learned(before, &outcome.session, &outcome.effects, fault.is_some());
        for l in &lessons {
            // A lesson in the human's words is bound to them in the human's decision.
            let human = l.source == crate::lessons::Source::Human;
            let digest = human.then(|| crate::lessons::words_digest(&l.words));
            (outcome.effects).taught(&mut outcome.session, &l.id, digest);
        }
        if let Some(f) = fault {
            outcome.facts.notices.push(format!(
                "No lesson was recorded for the risk accepted: the server failed on this task at {} (it could not {}) while the work accepted was made, so the failure accepted may be the server's, not the work's. The fault's record is {}.",
                f.at,
                crate::code::clip(&f.doing, 200),
                faults::rel_path(f.session_id.as_deref())
            ));
        }
        for l in &lessons {
            outcome.facts.notices.push(format!(
                "Recorded a lesson for later tasks ({}, {} role): {}",
                l.category,
                l.role.id(),
                l.rel_path()
            ));
        }
        lessons
    }

    /// The role prompt the reply hands over, with the lessons it carries kept in the
    /// change's history entry, where the human can see them, and in its record.
    fn prompt_for(&self, outcome: &mut machine::Outcome) -> Result<Option<Template>> {
        if self.handover == Handover::Nothing {
            return Ok(None);
        }
        let _rendering = crate::fault::doing("prompt", "render the role prompt of the next step");
        let session = &mut outcome.session;
        let prompt = prompts::needed(self.method, self.store.user_prompts(), session)?;
        if let Some(t) = &prompt {
            outcome.effects.recall(session, &t.lessons.ids);
        }
        Ok(prompt)
    }

    /// The files the server writes for the BMAD method after a change, apart from it:
    /// the shared plan's (`method_files`), a completed task's lessons for its
    /// retrospective, the review's layer files and deferred findings (`review_layers`), the
    /// ledger's entries a completed task resolved checked off (`ledger`).
    /// Each failure is a notice; each file written goes in the change's record.
    fn for_the_method(
        &self,
        outcome: &mut machine::Outcome,
        files: &[(String, String)],
        method: method_files::ForMethod,
    ) {
        let (project, installed, after) = (self.project, self.method, &outcome.session);
        let (did, notices) = (&mut outcome.effects, &mut outcome.facts.notices);
        let mut wrote = method_files::write(project, method, notices);
        notices.extend(method_files::offer_retrospective(
            installed, did, after, &mut wrote,
        ));
        notices.extend(review_layers::defer_findings(
            installed, did, after, files, &mut wrote,
        ));
        notices.extend(ledger::close_resolved(
            installed, did, after, files, &mut wrote,
        ));
        notices.extend(review_layers::write_layer_files(
            installed, after, &mut wrote,
        ));
        // Each file written, and the change's own (`files`), go to the record of the
        // server's own files (`store::wrote`), so that none reads as anyone's change, nor
        // shows in the review's diff.
        let mut paths: Vec<String> = files.iter().map(|(path, _)| path.clone()).collect();
        paths.extend(wrote.paths());
        notices.extend(review_layers::write_diff(
            project, self.git, after, &paths, &mut wrote,
        ));
        let more: Vec<String> = (wrote.paths().into_iter())
            .filter(|p| !paths.contains(p))
            .collect();
        paths.extend(more);
        crate::store::wrote(project, &paths);
        for (path, text) in wrote.files {
            let blob = text.map(|t| self.git.blob_id(t.as_bytes()));
            did.wrote(path, blob);
        }
        did.statuses.extend(wrote.statuses);
    }
}

/// The BMAD method's document a submission names (`document_file`), read through the
/// project's confined reader as the draft of the stage the session is at; refused with
/// the reason when it cannot be taken.
fn with_file_draft(
    method: &Method,
    before: &Session,
    command: &Command,
    mut documents: Documents,
) -> Result<Documents> {
    let Command::Submit {
        document_file: Some(path),
        ..
    } = command
    else {
        return Ok(documents);
    };
    // A submission the state does not allow is refused as such by the machine, whatever
    // the file.
    let (track, stage, state) = (before.track, before.current_stage, before.current_state);
    if !crate::workflow::is_legal(track, stage, state, Action::Submit) {
        return Ok(documents);
    }
    let stage = crate::workflow::story::prompt_stage(before);
    let draft = crate::bmad_method::begin::read_draft(method, stage, path)
        .map_err(|problem| crate::workflow::WorkflowError::DocumentFile { problem })?;
    let author = crate::bmad_method::begin::who_wrote(method.project(), &draft, &before.created_at);
    documents.file_draft = Some(machine::FileDraft {
        path: draft.path,
        text: draft.text,
        author: Some(author),
    });
    Ok(documents)
}

/// The offer to begin the stage `session` is at from the BMAD method's document of it,
/// while nothing was submitted there yet (for `status`, after a decision made in the
/// terminal or on the dashboard, whose reply no host read). `method`: the call's install.
pub fn offer_to_begin(method: &Method, session: &Session) -> Option<String> {
    (session.awaits_first_draft())
        .then(|| crate::bmad_method::begin::offer(method, session.current_stage))
        .flatten()
}

#[cfg(test)]
mod once_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::person::Person;

    #[test]
    fn a_decision_on_someone_elses_task_is_said() {
        let mut s = Session::test()
            .task("add-login-ada-0000")
            .objective("Add login")
            .build();
        s.owner = Person::parse("Ada Lovelace <ada@example.org>");
        let mut decision = Decision::by_host(None);
        decision.decider = Person::parse("Bob Smith <bob@example.org>");
        let said = others_task(&s, &decision).unwrap();
        assert!(
            said.starts_with("Bob Smith <bob@example.org> decided on a task that Ada Lovelace"),
            "{said}"
        );
        decision.decider = Person::parse("Ada L. <ada@example.org>");
        assert_eq!(
            others_task(&s, &decision),
            None,
            "the same email is the same person"
        );
    }

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// A git repository with a BMAD method install whose plan the server shares: its
    /// planning documents in `plans/`, its sprint status in `impl/`.
    fn project_with_the_method() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["config", "user.name", "Ada Lovelace"]);
        git(p, &["config", "user.email", "ada@example.org"]);
        std::fs::create_dir_all(p.join("_bmad/bmm")).unwrap();
        std::fs::write(
            p.join("_bmad/bmm/config.yaml"),
            "planning_artifacts: \"{project-root}/plans\"\nimplementation_artifacts: \"{project-root}/impl\"\n",
        )
        .unwrap();
        std::fs::create_dir_all(p.join(".claude/skills/bmad-prd")).unwrap();
        std::fs::write(p.join("README.md"), "notes\n").unwrap();
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "start"]);
        dir
    }

    /// A task of the full track started in a project, changed on the host's word.
    struct Task {
        store: Store,
        key: SessionKey,
    }

    impl Task {
        fn start(p: &std::path::Path) -> Task {
            let store = store_at(p);
            let track = crate::workflow::Track::Full;
            let started = store.start(None, "Build notes", None, track, &Utc::now);
            let key = SessionKey::from_task(&started.unwrap().session.session_id);
            Task { store, key }
        }

        fn step(&self, command: Command) -> Done {
            let change = Change {
                command,
                decision: Decision::by_host(None),
                handover: Handover::Nothing,
            };
            act(&self.store, None, &self.key, change, &Watched::none())
                .unwrap_or_else(|(e, _)| panic!("{e}"))
        }
    }

    fn submitted(stage: crate::workflow::Stage, text: &str) -> Command {
        let field = stage.document_fields()[0];
        Command::Submit {
            stage: None,
            claude_result: Some(
                serde_json::json!({ field: text, "quality_score": 93 }).to_string(),
            ),
            codex_result: None,
            document_file: None,
        }
    }

    fn confirmed() -> Command {
        Command::Confirm {
            action: Action::Confirm,
            note: None,
            answers: Default::default(),
        }
    }

    fn store_at(p: &std::path::Path) -> Store {
        Store::new(
            crate::files::DefaultRoot {
                source_name: "test",
                value: p.display().to_string(),
            },
            crate::settings::Acting::default(),
        )
    }

    /// Each file in the change's record has the blob id git gives the file on disk.
    fn same_as_git(p: &std::path::Path, done: &Done) {
        assert!(!done.effects.written.is_empty());
        for w in &done.effects.written {
            let on_disk = git(p, &["hash-object", "--no-filters", &w.path]);
            assert_eq!(w.blob.as_deref(), Some(on_disk.as_str()), "{}", w.path);
        }
    }

    /// Every file a change wrote is in its record with the id git gives the file as it
    /// lies on disk, the method's copies, epics and sprint status included; the approval
    /// records the statuses it gave the stories.
    #[test]
    fn the_record_names_every_file_written_with_the_blob_git_gives_it() {
        use crate::workflow::Stage;
        let dir = project_with_the_method();
        let p = dir.path();
        let task = Task::start(p);
        let step = |command: Command| task.step(command);
        let same_as_git = |done: &Done| same_as_git(p, done);
        let filled = |stage: Stage| crate::workflow::sections::filled("Notes", stage.sections());
        let done = step(submitted(Stage::Po, &filled(Stage::Po)));
        same_as_git(&done);
        let prd = done.session.artifact_path(Stage::Po);
        let session_file = crate::workflow::session::Session::file_of(&done.session.session_id);
        let paths: Vec<&str> = done
            .effects
            .written
            .iter()
            .map(|w| w.path.as_str())
            .collect();
        assert!(
            paths.contains(&prd.as_str()) && paths.contains(&session_file.as_str()),
            "{paths:?}"
        );
        let done = step(confirmed());
        same_as_git(&done);
        assert_eq!(done.effects.completed, Some(Stage::Po));
        assert!(
            done.effects
                .written
                .iter()
                .any(|w| w.path.starts_with("plans/")),
            "the confirmed PRD's copy for the method: {:?}",
            done.effects.written
        );
        step(submitted(Stage::Architect, &filled(Stage::Architect)));
        step(confirmed());
        step(submitted(
            Stage::Sm,
            "# Plan\n## Sprint 1: Core\n- a\n## Sprint 2: UI\n- b\n",
        ));
        let done = step(Command::Approve {
            scope: None,
            note: None,
        });
        same_as_git(&done);
        assert!(done.effects.approves_plan());
        let wrote = |path: &str| done.effects.written.iter().any(|w| w.path == path);
        let task = &done.session.task_name;
        assert!(wrote("impl/sprint-status.yaml") && wrote(&format!("plans/epics-{task}.md")));
        assert!(
            done.effects
                .statuses
                .iter()
                .any(|(k, s)| k.ends_with("-core") && s == "in-progress"),
            "{:?}",
            done.effects.statuses
        );
    }

    /// A PRD sent back through `confirm` with `confirmed: false` is no confirmed PRD: the
    /// method's planning folder gets no copy of it, and the record says it was sent back.
    #[test]
    fn a_document_sent_back_through_confirm_false_is_not_copied_for_the_method() {
        use crate::workflow::Stage;
        let dir = project_with_the_method();
        let p = dir.path();
        let task = Task::start(p);
        let step = |command: Command| task.step(command);
        let prd = crate::workflow::sections::filled("Notes", Stage::Po.sections());
        step(submitted(Stage::Po, &prd));
        let done = step(Command::Reject {
            action: Action::Confirm,
            feedback: Some("Name the platforms".into()),
        });
        assert!(done.effects.rejected && !done.effects.confirms());
        let copies: Vec<String> = std::fs::read_dir(p.join("plans"))
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(copies, Vec::<String>::new(), "{:?}", done.facts.notices);
        assert!(!done
            .effects
            .written
            .iter()
            .any(|w| w.path.starts_with("plans/")));
    }
}
