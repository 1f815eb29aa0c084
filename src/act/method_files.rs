//! The BMAD method's own files, kept in step with a change when the project has a v6 install and
//! the plan is shared with it (`[bmad-mcp] planning_copies`, on by default): a confirmed PRD or
//! architecture copied into `{planning_artifacts}`
//! ([`bmad_method::findable`](crate::bmad_method::findable)); an approved sprint plan written there
//! as the method's epics file, the task's epic numbered once, where no other epic is; and the
//! task's stories' statuses in `{implementation_artifacts}/sprint-status.yaml`, as each change
//! moves them ([`bmad_method::shared_plan`](crate::bmad_method::shared_plan)); and at a task's
//! completion its lessons offered to the method's retrospective
//! ([`bmad_method::retro`](crate::bmad_method::retro)). What to write is decided before the change
//! is written (the epic's number is kept in the session); the files are written after it and apart
//! from it: one that cannot be written is said in a notice, and the change stands. A file there
//! that the server did not write is never replaced.

use chrono::{DateTime, Utc};

use crate::bmad_method::shared_plan::{self, epics, spec_file, status_file, story_statuses};
use crate::bmad_method::{findable, Install, Method};
use crate::code::visible;
use crate::files::Project;
use crate::workflow::session::Session;
use crate::workflow::{Effects, Stage};

/// What a change writes for the method, after it is written, and what the reply says of it.
#[derive(Debug, Default)]
pub struct ForMethod {
    /// Each file, its text, and what the reply says once it is written.
    writes: Vec<(String, String, String)>,
    /// What the reply says of files not written.
    notices: Vec<String>,
    /// The sprint status among `writes`, and the statuses it gives, by key.
    status_file: Option<String>,
    statuses: Vec<(String, String)>,
}

/// The method's files for the change `did` that left the session `after` (`files`: what
/// the change writes; `did` is `None` for a story just started), decided under the lock
/// before the change is written; sets the session's epic at the plan's first approval.
/// `method`: the call's install, read here only when the change concerns the method's
/// files.
pub fn prepare(
    method: &Method,
    after: &mut Session,
    did: Option<&Effects>,
    files: &[(String, String)],
    now: DateTime<Utc>,
) -> ForMethod {
    let mut m = ForMethod::default();
    // Most changes concern none of the method's files: the install is not looked for then.
    let confirms = did.is_some_and(Effects::confirms);
    let approving = did.is_some_and(Effects::approves_plan);
    if !confirms && !approving && after.method_epic.is_none() {
        return m;
    }
    let project = method.project();
    let Some(install) = method.install() else {
        return m;
    };
    if !install.settings.planning_copies {
        return m;
    }
    let confirmed = did.filter(|d| d.confirms()).map(|d| d.from.stage);
    match confirmed.and_then(|stage| planning_copy(project, install, stage, after, files)) {
        Some((Some((path, text)), notice)) => m.writes.push((path, text, notice)),
        Some((None, notice)) => m.notices.push(notice),
        None => {}
    }
    if after.method_epic.is_none() && approving {
        after.method_epic = Some(next_epic(project, install));
    }
    let Some(epic) = after.method_epic else {
        return m;
    };
    if approving {
        epics_file(project, install, after, files, epic, &mut m);
    }
    let say = approving || did.is_none();
    let moves = story_statuses::moves(after, did);
    sprint_status(project, install, after, moves, now, say, &mut m);
    if after.story.is_some() {
        story_spec(method, install, after, did, files, &mut m);
    }
    m
}

impl ForMethod {
    /// The files it writes, relative to the project.
    pub fn paths(&self) -> Vec<String> {
        self.writes
            .iter()
            .map(|(path, _, _)| path.clone())
            .collect()
    }
}

/// Writes what [`prepare`] decided; each failure said in `notices`, with the notices of
/// what was written. Returns each file written, with its text, and the statuses given the
/// stories in the method's sprint status.
pub fn write(project: &Project, m: ForMethod, notices: &mut Vec<String>) -> Wrote {
    notices.extend(m.notices);
    let mut wrote = Wrote::default();
    for (path, text, said) in m.writes {
        match project.write_atomic(&path, text.as_bytes()) {
            Ok(()) => {
                if !said.is_empty() {
                    notices.push(said);
                }
                wrote.files.push((path, Some(text)));
            }
            Err(e) => notices.push(format!(
                "{}, a file for the BMAD method's skills, could not be written: {e}",
                visible(&path)
            )),
        }
    }
    if wrote
        .files
        .iter()
        .any(|(p, _)| Some(p) == m.status_file.as_ref())
    {
        wrote.statuses = m.statuses;
    }
    wrote
}

/// What the server wrote for the method after a change: each file with its whole text
/// (`None` where it added to a file it could not read whole), and the statuses it gave
/// the stories in the sprint status, by key.
#[derive(Debug, Default)]
pub struct Wrote {
    pub files: Vec<(String, Option<String>)>,
    pub statuses: Vec<(String, String)>,
}

impl Wrote {
    /// The files written, relative to the project.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|(path, _)| path.clone()).collect()
    }
}

/// The files a story's start writes for the method right after it ([`story_started`]):
/// its sprint status and its spec (the story of `sprint` of `parent`, as read before the
/// start), where the project has an install that shares the plan.
pub fn at_story_start(method: &Method, parent: Option<&Session>, sprint: u32) -> Vec<String> {
    let Some(install) = method.install().filter(|i| i.settings.planning_copies) else {
        return Vec::new();
    };
    let spec = parent.and_then(|p| {
        let epic = p.method_epic?;
        let story = epics::stories(p, epic)
            .into_iter()
            .find(|s| s.number == sprint)?;
        spec_path(install, &story.key)
    });
    status_path(install).into_iter().chain(spec).collect()
}

/// A story just started in `project`: its story in the method's sprint status follows it
/// (`in-progress`), under the project lock, and the server's record of its own files with
/// it. `method`: the call's install.
pub fn story_started(store: &crate::store::Store, method: &Method, s: &Session) -> Vec<String> {
    let project = method.project();
    let Ok(_lock) = store.lock(project) else {
        return vec!["The BMAD method's sprint status was not updated: the project is busy; the story's next change updates it.".into()];
    };
    let mut after = s.clone();
    let m = prepare(method, &mut after, None, &[], Utc::now());
    let mut notices = Vec::new();
    let wrote = write(project, m, &mut notices);
    crate::store::wrote(project, &wrote.paths());
    notices
}

/// A task just completed (as the change `did` says): the method's retrospective offered, with the
/// task's lessons written for it ([`bmad_method::retro::offer`](crate::bmad_method::retro::offer),
/// derived from the lessons just written); a file that cannot be written is said, and the change
/// stands. The file written, with its text, goes in `wrote`.
pub fn offer_retrospective(
    method: &Method,
    did: &Effects,
    after: &Session,
    wrote: &mut Wrote,
) -> Option<String> {
    let project = method.project();
    let offer = crate::bmad_method::retro::offer::at_completion(method, did, after)?;
    let failed = offer.file.as_ref().and_then(|(path, text)| {
        let Err(e) = project.write_atomic(path, text.as_bytes()) else {
            wrote.files.push((path.clone(), Some(text.clone())));
            return None;
        };
        Some(format!(
            "{} The task's lessons could not be written to {path}: {e}",
            offer.run
        ))
    });
    Some(failed.unwrap_or_else(|| offer.said()))
}

/// The next epic number free in the method's files: above every epic the sprint status
/// names and every `## Epic N` of the epics files in `{planning_artifacts}`.
fn next_epic(project: &Project, install: &Install) -> u32 {
    let mut top = 0;
    if let Some(path) = status_path(install) {
        if let Ok(Some(text)) = project.read(&path) {
            for e in status_file::entries(&text) {
                if let Some(k) = shared_plan::Kind::of(&e.key) {
                    top = top.max(k.epic());
                }
            }
        }
    }
    if let Some(folder) = install.settings.planning_artifacts.as_deref() {
        for name in epics_files(project, folder) {
            let rel = format!("{folder}/{name}");
            if let Ok(Some(text)) =
                project.read_in_project(&rel, crate::bmad_method::MAX_FILE_BYTES)
            {
                top = epics::epic_numbers(&text).into_iter().fold(top, u32::max);
            }
        }
    }
    top + 1
}

/// The names of the Markdown files in `folder` that name epics (`epics.md`, `epic-3.md`,
/// another task's `epics-<task>.md`): names only; each is read through the project.
fn epics_files(project: &Project, folder: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(project.path(folder)) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && n.ends_with(".md") && n.to_lowercase().contains("epic"))
        .take(200)
        .collect()
}

fn status_path(install: &Install) -> Option<String> {
    let folder = install.settings.implementation_artifacts.as_deref()?;
    Some(format!("{folder}/sprint-status.yaml"))
}

/// Where the method's `bmad-build` looks for the spec of the story `key`.
fn spec_path(install: &Install, key: &str) -> Option<String> {
    let folder = install.settings.implementation_artifacts.as_deref()?;
    Some(spec_file::path(folder, key))
}

/// The story `after`'s spec for the method's `bmad-build`
/// ([`spec_file`]), its status as the change
/// left the story: written over nothing or over the spec as the server wrote it; one the
/// method's steps or a person changed is left as it is, and said when the story begins or
/// moves to another stage. Findings a change deferred by accepting the review's risk join
/// the spec's `deferred` list.
fn story_spec(
    method: &Method,
    install: &Install,
    after: &Session,
    did: Option<&Effects>,
    files: &[(String, String)],
    m: &mut ForMethod,
) {
    let project = method.project();
    let (Some(epic), Some(link)) = (after.method_epic, after.story.as_ref()) else {
        return;
    };
    let Some(story) = epics::stories(after, epic)
        .into_iter()
        .find(|s| s.number == link.sprint)
    else {
        return;
    };
    let Some(path) = spec_path(install, &story.key) else {
        return;
    };
    if !crate::files::project::is_planning_copy(&path) {
        return;
    }
    let say = did.is_none_or(Effects::moved_stage);
    let mut deferred = Vec::new();
    let there = match project.read_at_most(&path, crate::bmad_method::MAX_FILE_BYTES) {
        Ok(None) => None,
        Ok(Some(text)) if spec_file::is_ours(&text) => {
            deferred = spec_file::read(&text)
                .map(|s| s.deferred)
                .unwrap_or_default();
            Some(text)
        }
        Ok(Some(text)) => {
            if say {
                let status = spec_file::read(&text).and_then(|s| s.status);
                m.notices.push(format!(
                    "{} is not as bmad-mcp wrote it (the BMAD method's /bmad-build or a person changed it; its status: `{}`), so it was left as it is; the story is at `{}` here.",
                    visible(&path),
                    visible(&crate::code::clip(status.as_deref().unwrap_or("none the method knows"), 40)),
                    after.current_stage
                ));
            }
            return;
        }
        Err(problem) => {
            if say {
                m.notices.push(format!("{} could not be read ({problem}); the story's spec for the BMAD method was not written.", visible(&path)));
            }
            return;
        }
    };
    deferred.extend(deferred_now(method, after, did, files));
    let text = spec_of(project, after, &deferred);
    if there.as_deref() == Some(text.as_str()) {
        return;
    }
    let said = if there.is_none() {
        format!("{} is the story's spec for the BMAD method's /bmad-build (its status follows the story: `in-progress`, `in-review`, `done`); bmad-mcp rewrites it only while it is as bmad-mcp wrote it.", visible(&path))
    } else {
        String::new()
    };
    m.writes.push((path, text, said));
}

/// The spec of the story `after` as the server writes it, with the findings `deferred`
/// so far.
fn spec_of(project: &Project, after: &Session, deferred: &[(String, String)]) -> String {
    let plan_path = (after.record(Stage::approval()).artifact.as_ref())
        .map(|a| a.path.clone())
        .unwrap_or_default();
    let plan = project.read(&plan_path).ok().flatten().unwrap_or_default();
    // The documents the story keeps from its parent: the PRD, the architecture, the plan.
    let context: Vec<String> = (crate::workflow::Track::Full.stages().iter())
        .filter(|s| !after.track.contains(**s))
        .filter_map(|s| after.record(*s).artifact.as_ref().map(|a| a.path.clone()))
        .collect();
    spec_file::render(&spec_file::Of {
        story: after,
        plan: &plan,
        plan_path: &plan_path,
        created: after.created_at.get(..10).unwrap_or(&after.created_at),
        context: &context,
        deferred,
    })
}

/// The findings the change `did` deferred by accepting the review's risk, as Build Auto's
/// `deferred` list keeps them: each finding, and why.
fn deferred_now(
    method: &Method,
    after: &Session,
    did: Option<&Effects>,
    files: &[(String, String)],
) -> Vec<(String, String)> {
    let layers = || crate::prompts::review_layers::sections(method, after);
    let Some((source, findings)) = did.and_then(|d| {
        crate::bmad_method::review::deferred_by(method.project(), d, after, files, &layers)
    }) else {
        return Vec::new();
    };
    let why = format!("the human accepted the failing review's risk in bmad-mcp ({source})");
    findings.into_iter().map(|f| (f, why.clone())).collect()
}

/// Whether `path` may be written by the server: nothing there, or a file it wrote (opening
/// with `mark`). `Err`: why not.
fn ours(project: &Project, path: &str, mark: &str, what: &str) -> Result<(), String> {
    match project.read(path) {
        Ok(None) => Ok(()),
        Ok(Some(there)) if findable::marked(&there, mark) => Ok(()),
        Ok(Some(_)) => Err(format!("is not {what} the server wrote")),
        Err(problem) => Err(format!("could not be read ({problem})")),
    }
}

/// The approved plan as the method's epics file, `epics-<task>.md` (beside a file of that
/// name the server did not write: `epics-<task>-bmad-mcp.md`; each named by
/// [`findable::file_name`]).
fn epics_file(
    project: &Project,
    install: &Install,
    after: &Session,
    files: &[(String, String)],
    epic: u32,
    m: &mut ForMethod,
) {
    let Some(folder) = install.settings.planning_artifacts.as_deref() else {
        return m.notices.push("The BMAD method's settings name no `planning_artifacts`: the approved plan was not written as its epics.".into());
    };
    let Some(source) = after
        .record(Stage::approval())
        .artifact
        .as_ref()
        .map(|a| a.path.clone())
    else {
        return;
    };
    let plan = match files.iter().find(|(p, _)| *p == source) {
        Some((_, text)) => text.clone(),
        None => project.read(&source).ok().flatten().unwrap_or_default(),
    };
    let task = &after.task_name;
    let first = format!("{folder}/{}", findable::file_name("epics", task));
    if !crate::files::project::is_planning_copy(&first) {
        return m.notices.push(format!(
            "The approved plan was not written as the BMAD method's epics: {} (its `planning_artifacts`) is a hidden folder, inside the install, or too deep.",
            crate::code::visible(&crate::code::clip(folder, 200))
        ));
    }
    let beside = format!(
        "{folder}/{}",
        findable::file_name("epics", &format!("{task}-bmad-mcp"))
    );
    let (path, left) = match ours(project, &first, epics::MARK, "an epics file") {
        Ok(()) => (first, None),
        Err(why) => match ours(project, &beside, epics::MARK, "an epics file") {
            Ok(()) => (
                beside,
                Some(format!(
                    "{} {why}, so it was left as it is. ",
                    visible(&first)
                )),
            ),
            Err(why2) => {
                return m.notices.push(format!("The approved plan was not written as the BMAD method's epics: {} {why} and {} {why2}.", visible(&first), visible(&beside)));
            }
        },
    };
    let project_name = install
        .settings
        .project_name
        .clone()
        .unwrap_or_else(|| "the project".into());
    let (prd, prd_path, architecture_path) = planning_documents(project, after);
    let text = epics::render(&epics::Of {
        session: after,
        epic,
        project: &project_name,
        plan: &plan,
        plan_path: &source,
        prd: &prd,
        prd_path: prd_path.as_deref(),
        architecture_path: architecture_path.as_deref(),
    });
    let said = format!(
        "{}The approved plan is the BMAD method's epic {epic} in {}, each sprint a story, rewritten at each approval of the plan (`[bmad-mcp] planning_copies = false` in _bmad/custom/config.toml turns the shared plan off).",
        left.unwrap_or_default(),
        visible(&path)
    );
    m.writes.push((path, text, said));
}

/// The confirmed PRD the epics' requirements come from (its text and path) and the
/// architecture's path, as the session keeps them.
fn planning_documents(
    project: &Project,
    after: &Session,
) -> (String, Option<String>, Option<String>) {
    let path_of = |stage: Stage| {
        after
            .record(stage)
            .artifact
            .as_ref()
            .map(|a| a.path.clone())
    };
    let prd_path = path_of(Stage::FIRST);
    let prd = (prd_path.as_deref())
        .and_then(|p| project.read(p).ok().flatten())
        .unwrap_or_default();
    let architecture_path = (after.track.stages().iter())
        .find(|s| s.id() == "architect")
        .and_then(|s| path_of(*s));
    (prd, prd_path, architecture_path)
}

/// The task's stories in the method's `sprint-status.yaml`, as the change moved them.
fn sprint_status(
    project: &Project,
    install: &Install,
    after: &Session,
    moves: status_file::Moves,
    now: DateTime<Utc>,
    say: bool,
    m: &mut ForMethod,
) {
    let (Some(epic), Some(path)) = (after.method_epic, status_path(install)) else {
        return;
    };
    if !crate::files::project::is_planning_copy(&path) {
        if say {
            m.notices.push(format!("The stories' statuses were not written for the BMAD method: {} (its `implementation_artifacts`) is a hidden folder, inside the install, or too deep.", visible(&path)));
        }
        return;
    }
    let wanted = story_statuses::wanted(after);
    if wanted.is_empty() {
        return;
    }
    let text = match project.read(&path) {
        Ok(t) => t,
        Err(problem) => {
            return m.notices.push(format!(
                "{} could not be read ({problem}); the stories' statuses were not written there.",
                visible(&path)
            ))
        }
    };
    let (project_name, location, begun_by) = header_parts(install, &after.task_name);
    let header = status_file::Header {
        project: &project_name,
        story_location: &location,
        begun_by: &begun_by,
    };
    let stamp = shared_plan::stamp(now);
    match status_file::update(text.as_deref(), &header, &wanted, (epic, moves), &stamp) {
        Ok(Some(new)) => {
            let said = if say {
                format!("{} holds the task's stories under epic-{epic}; each follows the work (development `in-progress`, review and QA `review`, sent back `in-progress`, completed `done`; the epic `done` once the task's final QA passed).", visible(&path))
            } else {
                String::new()
            };
            m.statuses = wanted
                .iter()
                .map(|(k, s)| (k.clone(), s.to_string()))
                .collect();
            m.status_file = Some(path.clone());
            m.writes.push((path, new, said));
        }
        Ok(None) => {}
        Err(why) => m.notices.push(format!(
            "{} was left as it is: {why}; the stories' statuses were not written there.",
            visible(&path)
        )),
    }
}

/// What a sprint status the server begins says of itself, for `task`: the project's name,
/// where the stories are, and who began it.
fn header_parts(install: &Install, task: &str) -> (String, String, String) {
    let location = (install.settings.implementation_artifacts.clone()).unwrap_or_default();
    let project_name =
        (install.settings.project_name.clone()).unwrap_or_else(|| "the project".into());
    let begun_by = format!(
        "begun by bmad-mcp for task `{task}`; the method's skills and bmad-mcp both keep it"
    );
    (project_name, location, begun_by)
}

/// The story `key` of the epic of `parent`, which the method built and the human accepted:
/// `done` in the method's sprint status (its epic waits for the parent's final QA). The file
/// written, or why not.
pub(super) fn story_accepted(
    method: &Method,
    parent: &Session,
    key: &str,
) -> Result<Option<String>, String> {
    let project = method.project();
    let install = method.install().ok_or("the BMAD method is not installed")?;
    let (Some(epic), Some(path)) = (parent.method_epic, status_path(install)) else {
        return Ok(None);
    };
    let text = project
        .read(&path)
        .map_err(|p| format!("{} could not be read ({p})", visible(&path)))?;
    let (project_name, location, begun_by) = header_parts(install, &parent.task_name);
    let header = status_file::Header {
        project: &project_name,
        story_location: &location,
        begun_by: &begun_by,
    };
    let wanted = [(key.to_string(), "done")];
    let moves = status_file::Moves::default();
    let stamp = shared_plan::stamp(Utc::now());
    match status_file::update(text.as_deref(), &header, &wanted, (epic, moves), &stamp) {
        Ok(Some(new)) => project
            .write_atomic(&path, new.as_bytes())
            .map(|()| Some(path.clone()))
            .map_err(|e| format!("{} could not be written: {e}", visible(&path))),
        Ok(None) => Ok(None),
        Err(why) => Err(format!("{} was left as it is: {why}", visible(&path))),
    }
}

/// The document of `stage`, just confirmed (a PRD, an architecture), copied where the project's
/// BMAD method looks for it ([`bmad_method::findable`](crate::bmad_method::findable)), with the
/// notice that says so; a file of that name the server did not write is left alone, and said.
fn planning_copy(
    project: &Project,
    install: &Install,
    stage: Stage,
    after: &Session,
    files: &[(String, String)],
) -> Option<(Option<(String, String)>, String)> {
    let source = after.record(stage).artifact.as_ref()?.path.clone();
    let written = files.iter().find(|(p, _)| *p == source);
    let document = match written {
        Some((_, text)) => text.clone(),
        None => project.read(&source).ok()??,
    };
    // The method's file the document was taken from, while the document is its text.
    let rec = after.record(stage);
    let taken = rec
        .from_file
        .as_ref()
        .filter(|f| f.sha256 == crate::workflow::machine::sha256_hex(&document));
    let copy = match findable::copy(
        install,
        stage,
        (&after.task_name, &source),
        &document,
        taken.map(|f| f.path.as_str()),
    )? {
        Ok(copy) => copy,
        Err(notice) => return Some((None, notice)),
    };
    // Written only over nothing or over a copy of ours: a file that cannot be read (too
    // large, not UTF-8, a link) may be a person's, and is left as it is.
    match ours(project, &copy.path, findable::COPY_MARK, "a copy") {
        Ok(()) => Some((Some((copy.path, copy.content)), copy.notice)),
        Err(why) => Some((
            None,
            format!(
                "{} {why}, so it was left as it is; the confirmed document is {source}.",
                copy.path
            ),
        )),
    }
}
