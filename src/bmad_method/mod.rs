//! The BMAD method as its installer (`bmad-method install`, v6) leaves it in a project,
//! read as facts: what is installed and where ([`manifest`], the installer's tool table in
//! [`tools`]), each agent's persona as the base, the team and the person made it
//! ([`persona`], by the method's customization merge in [`customize`]), the method's
//! settings ([`bmm_config`]), the confirmed documents placed where the method's own skills
//! look for them ([`findable`]), the documents its skills made, to begin a task from
//! ([`begin`]), the plan shared with the method: the approved sprints as its epics, their
//! statuses in its `sprint-status.yaml` ([`shared_plan`]), and its retrospective both ways:
//! its action items recalled in later role prompts, the lessons of a completed task offered
//! to it ([`retro`]), its code review's prompts and deferred-work ledger ([`review`]), and
//! the templates its planning skills write the PRD and the architecture spine in
//! ([`template`]), the skill that does each stage's work ([`stage_skill`]), and what its
//! skills need at run time that the server does not (`uv`, [`runtime`]).
//!
//! Everything here is read through the project's confined, bounded reader, and what it
//! says is the project's text: shown to a model only as facts, clipped and labelled, never
//! pasted whole. A damaged or partial install is said in [`Install::notices`], never an
//! error: the workflow runs on with the built-in prompts.

use std::collections::BTreeMap;

use crate::files::{Project, ReadProblem};

pub mod begin;
pub mod bmm_config;
pub mod customize;
pub mod findable;
pub mod manifest;
pub mod once;
pub mod persona;
pub mod retro;
pub mod review;
pub mod runtime;
pub mod shared_plan;
pub mod stage_skill;
pub mod template;
pub mod tools;

pub use bmm_config::MethodSettings;
pub use once::Method;
pub use persona::Agent;

/// The largest file of an install read (a manifest, a `customize.toml`, a config).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// The most skills an install is read with.
pub const MAX_SKILLS: usize = 500;

/// One installed skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name, the name of its folder (`bmad-agent-pm`, `bmad-prd`).
    pub name: String,
    /// What the manifest says it does (empty when found by scanning).
    pub description: String,
    /// The skills folder it was found in (`.claude/skills`); `None` when the manifest
    /// names it but no folder holds it.
    pub folder: Option<&'static str>,
}

impl Skill {
    /// Its folder, relative to the project.
    pub fn dir(&self) -> Option<String> {
        self.folder.map(|f| format!("{f}/{}", self.name))
    }
}

/// A v6 install of the method, as read now.
#[derive(Debug, Clone, Default)]
pub struct Install {
    pub version: Option<String>,
    /// The tools the manifest says it was installed for.
    pub tools: Vec<String>,
    pub skills: Vec<Skill>,
    pub settings: MethodSettings,
    /// What was damaged, missing or left out, for the reply's notices.
    pub notices: Vec<String>,
}

/// The text of the install's file `rel`; `None` when it is not there, and a notice when it
/// cannot be read.
pub(crate) fn read(project: &Project, rel: &str, notices: &mut Vec<String>) -> Option<String> {
    once::touched(rel);
    match project.read_at_most(rel, MAX_FILE_BYTES) {
        Ok(text) => text,
        Err(ReadProblem::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => None,
        Err(problem) => {
            notices.push(format!(
                "The BMAD method's {rel} could not be read ({}); it was left out.",
                crate::code::clip(&problem.to_string(), 200)
            ));
            None
        }
    }
}

/// [`read`] as a TOML table; one that is not TOML is a notice.
pub(crate) fn read_toml(
    project: &Project,
    rel: &str,
    notices: &mut Vec<String>,
) -> Option<toml::Table> {
    let text = read(project, rel, notices)?;
    match toml::from_str::<toml::Table>(&text) {
        Ok(t) => Some(t),
        Err(e) => {
            let why = e.to_string();
            let first = why.lines().next().unwrap_or("not TOML");
            notices.push(format!(
                "The BMAD method's {rel} is not TOML the server can read ({}); it was left out.",
                crate::code::clip(first, 200)
            ));
            None
        }
    }
}

/// Which skills folder holds each skill, the folders of `first` (the manifest's tools)
/// before the others the installer knows.
fn skill_folders(
    project: &Project,
    first: &[&'static str],
    top: &Top,
) -> BTreeMap<String, &'static str> {
    let mut order: Vec<&'static str> = first.to_vec();
    order.extend(tools::all_folders());
    let mut found = BTreeMap::new();
    let mut seen = Vec::new();
    for folder in order {
        if seen.contains(&folder) || !top.may_hold(folder) {
            continue;
        }
        seen.push(folder);
        once::touched(folder);
        if let Ok(Some(names)) = project.folder_names(folder, MAX_SKILLS) {
            for name in names.into_iter().filter(|n| !n.starts_with('.')) {
                found.entry(name).or_insert(folder);
            }
        }
    }
    found
}

/// The names at the top of the project, listed once: every prompt a call hands over looks
/// for an install, so the folders of the 48 tools and the manifests are probed only where
/// their first folder exists (each would otherwise cost a failed open, in every project).
struct Top(Option<Vec<String>>);

impl Top {
    fn of(project: &Project) -> Top {
        Top(project.top_names(10_000))
    }

    /// Whether `rel` may exist: its first folder is there, or the top could not be listed.
    fn may_hold(&self, rel: &str) -> bool {
        let first = rel.split('/').next().unwrap_or(rel);
        once::present(first);
        self.0
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == first))
    }
}

/// The project's v6 install, if it has one: from its manifests, else (no manifest, or a
/// damaged one) from the skill folders the installer writes; `None` when there is neither.
/// Read through [`Method`], once a call.
fn find_install(project: &Project) -> Option<Install> {
    let top = Top::of(project);
    if !top.may_hold("_bmad") && !tools::all_folders().iter().any(|f| top.may_hold(f)) {
        return None;
    }
    let mut notices = Vec::new();
    let manifest = read(project, manifest::MANIFEST, &mut notices).and_then(|text| {
        manifest::parse_manifest(&text)
            .map_err(|e| {
                notices.push(format!(
                    "The BMAD method's {} is not YAML the server can read ({}); the skill folders were scanned instead.",
                    manifest::MANIFEST,
                    crate::code::clip(&e, 200)
                ))
            })
            .ok()
    });
    let tools_named = manifest
        .as_ref()
        .map(|m| m.ides.clone())
        .unwrap_or_default();
    let mut first = Vec::new();
    for tool in &tools_named {
        match tools::folder(tool) {
            Some(f) => first.push(f),
            None => notices.push(format!(
                "The BMAD method was installed for `{}`, a tool whose skills folder the server does not know; the known folders were searched.",
                crate::code::clip(tool, 60)
            )),
        }
    }
    let found = skill_folders(project, &first, &top);
    let listed = read(project, manifest::SKILL_MANIFEST, &mut notices).and_then(|text| {
        manifest::parse_skills(&text, MAX_SKILLS)
            .map_err(|e| {
                notices.push(format!(
                    "The BMAD method's {} could not be read as CSV ({}); the skill folders were scanned instead.",
                    manifest::SKILL_MANIFEST,
                    crate::code::clip(&e, 200)
                ))
            })
            .ok()
    });
    let skills = match listed {
        Some(rows) => from_manifest(rows, &found, &mut notices),
        None => scanned(&found),
    };
    if manifest.is_none() && skills.is_empty() {
        return None;
    }
    // Skills without a manifest beside a `_bmad/` folder: an install that lost its record.
    let partial = || {
        once::touched("_bmad");
        matches!(project.folder_names("_bmad", 1), Ok(Some(_)))
    };
    if manifest.is_none() && notices.is_empty() && partial() {
        notices.push(format!(
            "The BMAD method's {} is missing: its skills were found by scanning the known skill folders.",
            manifest::MANIFEST
        ));
    }
    let settings = bmm_config::read(project, &mut notices);
    Some(Install {
        version: manifest.and_then(|m| m.installation.version),
        tools: tools_named,
        skills,
        settings,
        notices,
    })
}

/// The manifest's skills, each where it was found; those found nowhere are said once.
fn from_manifest(
    rows: Vec<manifest::Row>,
    found: &BTreeMap<String, &'static str>,
    notices: &mut Vec<String>,
) -> Vec<Skill> {
    let skills: Vec<Skill> = rows
        .into_iter()
        .map(|r| Skill {
            folder: found.get(&r.name).copied(),
            name: r.name,
            description: r.description,
        })
        .collect();
    let missing: Vec<&str> = skills
        .iter()
        .filter(|s| s.folder.is_none())
        .map(|s| s.name.as_str())
        .collect();
    if !missing.is_empty() {
        notices.push(format!(
            "{} of the {} skills in the BMAD method's {} are in none of the skills folders (the install is partial or was moved): {}.",
            missing.len(),
            skills.len(),
            manifest::SKILL_MANIFEST,
            crate::code::clip(&missing.join(", "), 300)
        ));
    }
    skills
}

/// Without a skill manifest: the method's skills (named `bmad-…`) in the skills folders.
fn scanned(found: &BTreeMap<String, &'static str>) -> Vec<Skill> {
    found
        .iter()
        .filter(|(name, _)| name.starts_with("bmad-"))
        .map(|(name, folder)| Skill {
            name: name.clone(),
            description: String::new(),
            folder: Some(folder),
        })
        .collect()
}

/// A value from the install's files on one line, at most `max` characters, `None` when
/// empty: every run of white space or control characters becomes one space, and what
/// cannot be seen (format and bidi characters) is shown escaped, since a model reads it.
pub fn one_line(v: &str, max: usize) -> Option<String> {
    let v: String = v
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
    (!v.is_empty()).then(|| crate::code::visible(&crate::code::clip(&v, max)))
}

/// Which files of the install were opened on this thread, and how often (tests only): a
/// call opens none twice. A folder listed counts under its name.
#[cfg(test)]
pub(crate) mod opened {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    thread_local! {
        static COUNTS: RefCell<BTreeMap<String, usize>> = RefCell::default();
    }

    pub fn note(rel: &str) {
        COUNTS.with(|c| *c.borrow_mut().entry(rel.to_string()).or_default() += 1);
    }

    pub fn clear() {
        COUNTS.with(|c| c.borrow_mut().clear());
    }

    pub fn counts() -> BTreeMap<String, usize> {
        COUNTS.with(|c| c.borrow().clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the folders whose first part is at the top of the project are probed; a top
    /// that cannot be listed rules nothing out.
    #[test]
    fn only_folders_present_at_the_top_are_looked_in() {
        let (dir, project) = crate::files::project::tests::project();
        assert!(find_install(&project).is_none());
        std::fs::create_dir_all(dir.path().join(".claude/skills/bmad-agent-pm")).unwrap();
        let top = Top::of(&project);
        assert!(top.may_hold(".claude/skills") && !top.may_hold(".agents/skills"));
        assert!(!top.may_hold("_bmad/_config/manifest.yaml"));
        let found = skill_folders(&project, &[], &top);
        assert_eq!(found.get("bmad-agent-pm"), Some(&".claude/skills"));
        assert!(Top(None).may_hold(".agents/skills"));
        let install = find_install(&project).expect("a partial install, from its skills folder");
        assert_eq!(install.skills.len(), 1);
    }
}
