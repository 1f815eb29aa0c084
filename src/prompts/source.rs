//! Where each role prompt comes from. The rule of the BMAD servers: the project's file over
//! the user's over the built-in one.
//!
//! 1. `.bmad/prompts/<role>.md` in the project (committed, shared by the team);
//! 2. the project's installed BMAD method: the persona of the agent that plays the role,
//!    added to the built-in prompt ([`bmad.rs`](crate::prompts::bmad));
//! 3. `<config>/bmad-mcp/prompts/<role>.md`, where `<config>` is `$XDG_CONFIG_HOME` when it
//!    is set, else the platform's configuration directory (`~/.config` on Linux,
//!    `~/Library/Application Support` on macOS, `%APPDATA%` on Windows);
//! 4. the prompt built into the binary (`prompts/<role>.md` of this repository).
//!
//! `<role>` is the stage id: `po`, `architect`, `sm`, `dev`, `review`, `qa`. A file that is
//! there but cannot be used (not a regular file, not UTF-8, empty, too large) is an error
//! naming it: a team's prompt must never be replaced by another without a word.
//!
//! Whichever file it is, a v6 install's settings (the language of documents and of the
//! conversation, the human's name) are added to its role section, the open action items of the
//! method's retrospectives that concern the role are recalled beside it
//! ([`bmad_method::retro`](crate::bmad_method::retro)), and what of the install was damaged is said
//! in the template's notices.
//!
//! What a prompt can change is what the host's model is told. It cannot change what the
//! server enforces: the gates, the sections each stage's check requires, the states.

use std::borrow::Cow;
use std::path::Path;

use super::MAX_PROMPT_BYTES;
use crate::bmad_method::Method;
use crate::error::{Error, Result};
use crate::files::{read_text, Project, ReadProblem};
use crate::lessons::{self, Recalled};
use crate::workflow::{Session, Stage};

/// The project's prompt folder, relative to the project.
pub const PROJECT_PROMPTS: &str = ".bmad/prompts";

/// Where a prompt in effect comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Project,
    /// The built-in prompt with the persona of the project's installed BMAD method.
    Bmad,
    User,
    BuiltIn,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Project => "project",
            Origin::Bmad => "bmad-method",
            Origin::User => "user",
            Origin::BuiltIn => "built-in",
        }
    }
}

/// One role's prompt file, as read.
#[derive(Debug, Clone)]
pub struct Template {
    pub stage: Stage,
    pub text: Cow<'static, str>,
    pub origin: Origin,
    /// The file it was read from (relative to the project for the project's own); `None`
    /// for the built-in prompt.
    pub path: Option<String>,
    /// The lessons from earlier tasks recalled for this prompt ([`recall`]); none until
    /// recalled.
    pub lessons: Recalled,
    /// The BMAD method's agent that plays the role and the files its persona was made
    /// from (v6; empty otherwise).
    pub agent: Option<String>,
    pub made_of: Vec<String>,
    /// The team's retrospective: the open action items of the BMAD method's
    /// retrospectives that concern the role (v6; empty otherwise).
    pub retro: crate::bmad_method::retro::recall::Recalled,
    /// What of the project's BMAD install was damaged or left out.
    pub notices: Vec<String>,
    /// The review's layers ([`super::review_layers`]; empty for another stage).
    pub layers: Vec<super::review_layers::Layer>,
    /// The installed method's deferred-work ledger and its items, for the stage that
    /// states the task and development ([`super::deferred`]).
    pub deferred: Option<(String, Vec<String>)>,
    /// The installed skill that does the stage's work ([`crate::bmad_method::stage_skill`]).
    pub skill: Option<crate::bmad_method::stage_skill::StageSkill>,
}

impl Template {
    pub fn built_in(stage: Stage) -> Template {
        Template {
            stage,
            text: Cow::Borrowed(stage.prompt_source()),
            origin: Origin::BuiltIn,
            path: None,
            lessons: Recalled::default(),
            agent: None,
            made_of: Vec::new(),
            retro: Default::default(),
            notices: Vec::new(),
            layers: Vec::new(),
            deferred: None,
            skill: None,
        }
    }

    /// A prompt read from the file at `path`.
    fn from_file(stage: Stage, text: String, origin: Origin, path: String) -> Template {
        Template {
            stage,
            text: Cow::Owned(text),
            origin,
            path: Some(path),
            lessons: Recalled::default(),
            agent: None,
            made_of: Vec::new(),
            retro: Default::default(),
            notices: Vec::new(),
            layers: Vec::new(),
            deferred: None,
            skill: None,
        }
    }

    /// "project file .bmad/prompts/po.md", "bmad-method file .bmad-core/agents/po.md",
    /// "user file /home/…/po.md", "built-in".
    pub fn describe(&self) -> String {
        match &self.path {
            Some(p) => format!("{} file {p}", self.origin.name()),
            None => self.origin.name().to_string(),
        }
    }
}

fn file_name(stage: Stage) -> String {
    format!("{}.md", stage.id())
}

/// The text of a prompt file, or why it cannot be used; `None` when there is none.
fn usable(
    read: std::result::Result<Option<String>, ReadProblem>,
    path: &str,
) -> Result<Option<String>> {
    let invalid = |problem: String| Error::InvalidPrompt {
        path: path.to_string(),
        problem,
    };
    match read {
        Ok(None) => Ok(None),
        Ok(Some(text)) if text.trim().is_empty() => Err(invalid("is empty".into())),
        Ok(Some(text)) => Ok(Some(text)),
        Err(ReadProblem::Unsafe(e)) => Err(invalid(e.to_string())),
        Err(problem) => Err(invalid(problem.to_string())),
    }
}

/// The prompt in effect for `stage` in the project of `method` (the call's install), with
/// `user` as the user's folder.
pub fn resolve(method: &Method, user: Option<&Path>, stage: Stage) -> Result<Template> {
    let project = method.project();
    let rel = format!("{PROJECT_PROMPTS}/{}", file_name(stage));
    // Through the project's confined reader, beneath its handle: a link is refused.
    let unsafe_path = |e: Error| Error::InvalidPrompt {
        problem: match e {
            // "<path> is a symbolic link that leads outside …": said once.
            Error::UnsafePath { reason, .. } => reason
                .strip_prefix(&rel)
                .map(|r| r.trim_start().to_string())
                .unwrap_or(reason),
            other => other.to_string(),
        },
        path: rel.clone(),
    };
    let read = match project.read_at_most(&rel, MAX_PROMPT_BYTES) {
        Err(ReadProblem::Unsafe(e)) => return Err(unsafe_path(e)),
        other => other,
    };
    if let Some(text) = usable(read, &rel)? {
        let mut t = Template::from_file(stage, text, Origin::Project, rel);
        t.skill = stage_skill(method, stage);
        let (settings, notices) = method
            .install()
            .map(|i| (Some(i.settings.clone()), i.notices.clone()))
            .unwrap_or_default();
        return Ok(with_method(project, t, settings, notices));
    }
    let for_call = method;
    let method = super::bmad::for_stage(method, stage)?;
    let t = match method.persona {
        Some(p) => {
            let text = super::bmad::with_persona(stage.prompt_source(), &p);
            let mut t = Template::from_file(stage, text, Origin::Bmad, p.path);
            t.agent = p.agent;
            t.made_of = p.files;
            t
        }
        None => user_or_built_in(user, stage)?,
    };
    let mut t = with_method(project, t, method.settings, method.notices);
    t.skill = stage_skill(for_call, stage);
    Ok(t)
}

/// The installed skill that does `stage`'s work, where the call's install has one.
fn stage_skill(
    method: &Method,
    stage: Stage,
) -> Option<crate::bmad_method::stage_skill::StageSkill> {
    let install = method.install()?;
    crate::bmad_method::stage_skill::for_stage(install, stage)
}

/// The user's prompt for `stage` in `user`, else the built-in one.
fn user_or_built_in(user: Option<&Path>, stage: Stage) -> Result<Template> {
    if let Some(dir) = user {
        let abs = dir.join(file_name(stage));
        let shown = abs.display().to_string();
        if let Some(text) = usable(read_text(&abs, MAX_PROMPT_BYTES), &shown)? {
            return Ok(Template::from_file(stage, text, Origin::User, shown));
        }
    }
    Ok(Template::built_in(stage))
}

/// `t` with the method's settings in its role section, the team's retrospective for its
/// role, and the install's notices.
fn with_method(
    project: &Project,
    mut t: Template,
    settings: Option<crate::bmad_method::MethodSettings>,
    mut notices: Vec<String>,
) -> Template {
    if let Some(s) = settings {
        let text = super::bmad::with_settings(&t.text, &s);
        if text != t.text {
            t.text = Cow::Owned(text);
        }
        t.retro = crate::bmad_method::retro::recall::block(project, &s, t.stage);
        notices.append(&mut t.retro.notices);
    }
    t.notices = notices;
    t
}

/// The role prompt a reply about `s` hands the host: the current stage's, in a state in
/// which the host writes (two files looked for: the project's, the user's in `user`);
/// `None` in every other state, and for a parent waiting on its stories, where no prompt
/// is read. `method`: the call's install.
pub fn needed(method: &Method, user: Option<&Path>, s: &Session) -> Result<Option<Template>> {
    // A parent waiting on its stories writes nothing: each story has its own prompts.
    if !s.current_state.host_writes() || crate::workflow::story::waits_on_stories(s) {
        return Ok(None);
    }
    let project = method.project();
    let stage = crate::workflow::story::prompt_stage(s);
    let mut template = resolve(method, user, stage)?;
    template.lessons = recall(project, &s.objective, Some(&s.task_name), stage);
    if stage == Stage::Review {
        let (layers, notices) = super::review_layers::for_review(method, s);
        template.layers = layers;
        template.notices.extend(notices);
    }
    template.deferred = super::deferred::for_session(project, method.install(), s, stage);
    Ok(Some(template))
}

/// The lessons from earlier tasks for `stage`'s prompt in a task about `objective`
/// (`task`, whose own lessons are left out, once it exists): read from `.bmad/lessons/`
/// now, never kept. A folder that cannot be read is reported, not fatal.
pub fn recall(project: &Project, objective: &str, task: Option<&str>, stage: Stage) -> Recalled {
    match lessons::load(project) {
        Ok(loaded) => lessons::block(&loaded, objective, task.unwrap_or(""), stage),
        Err(e) => Recalled {
            damaged: vec![(lessons::LESSONS_DIR.to_string(), e.to_string())],
            ..Recalled::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stage's prompt carries the installed skill for its work, whichever file the
    /// prompt is (the project's own too); without an install, none.
    #[test]
    fn a_stages_prompt_carries_its_installed_skill_only_with_an_install() {
        use crate::bmad_method::{Install, Skill};
        let (dir, project) = crate::files::project::tests::project();
        for stage in Stage::ALL {
            let t = resolve(&Method::known(&project, None), None, stage).unwrap();
            assert!(t.skill.is_none(), "{stage:?}");
        }
        let install = Install {
            skills: ["bmad-prd", "bmad-build"]
                .map(|name| Skill {
                    name: name.into(),
                    description: String::new(),
                    folder: Some(".claude/skills"),
                })
                .to_vec(),
            ..Install::default()
        };
        let method = Method::known(&project, Some(install));
        let skill = |stage| resolve(&method, None, stage).unwrap().skill.map(|s| s.name);
        assert_eq!(skill(Stage::Po).as_deref(), Some("bmad-prd"));
        assert_eq!(skill(Stage::Dev).as_deref(), Some("bmad-build"));
        assert_eq!(skill(Stage::Architect), None, "not installed");
        std::fs::create_dir_all(dir.path().join(PROJECT_PROMPTS)).unwrap();
        std::fs::write(dir.path().join(".bmad/prompts/po.md"), "# Role: team PO\n").unwrap();
        let po = resolve(&method, None, Stage::Po).unwrap();
        assert_eq!(po.origin, Origin::Project);
        assert_eq!(po.skill.map(|s| s.name).as_deref(), Some("bmad-prd"));
    }

    #[test]
    fn the_project_beats_the_user_who_beats_the_built_in_and_a_bad_file_is_named() {
        let (dir, project) = crate::files::project::tests::project();
        let user = tempfile::tempdir().unwrap();
        let at = |s: Stage| resolve(&Method::of(&project), Some(user.path()), s).unwrap();
        assert_eq!(at(Stage::Po).origin, Origin::BuiltIn);
        std::fs::write(user.path().join("po.md"), "# Role: our PO\n").unwrap();
        let po = at(Stage::Po);
        assert_eq!(
            (po.origin, po.text.as_ref()),
            (Origin::User, "# Role: our PO\n")
        );
        std::fs::create_dir_all(dir.path().join(PROJECT_PROMPTS)).unwrap();
        std::fs::write(dir.path().join(".bmad/prompts/po.md"), "# Role: team PO\n").unwrap();
        let po = at(Stage::Po);
        assert_eq!(po.origin, Origin::Project);
        assert_eq!(po.describe(), "project file .bmad/prompts/po.md");
        assert_eq!(at(Stage::Qa).origin, Origin::BuiltIn, "per role");

        for (bytes, problem) in [(&b"  \n"[..], "is empty"), (&b"caf\xe9"[..], "not UTF-8")] {
            std::fs::write(user.path().join("qa.md"), bytes).unwrap();
            let e = resolve(&Method::of(&project), Some(user.path()), Stage::Qa).unwrap_err();
            assert_eq!(e.code(), crate::error::ErrorCode::InvalidPrompt);
            let m = e.to_string();
            assert!(m.contains("qa.md") && m.contains(problem), "{m}");
        }
        std::fs::remove_file(user.path().join("qa.md")).unwrap();
        std::fs::create_dir(dir.path().join(".bmad/prompts/dev.md")).unwrap();
        let e = resolve(&Method::of(&project), Some(user.path()), Stage::Dev).unwrap_err();
        assert!(
            e.to_string()
                .contains(".bmad/prompts/dev.md is a directory"),
            "{e}"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", dir.path().join(".bmad/prompts/review.md"))
                .unwrap();
            let e = resolve(&Method::of(&project), Some(user.path()), Stage::Review).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(".bmad/prompts/review.md is a symbolic link that leads outside"),
                "{e}"
            );
        }
        let big = std::fs::File::create(user.path().join("sm.md")).unwrap();
        big.set_len(MAX_PROMPT_BYTES + 1).unwrap();
        let e = resolve(&Method::of(&project), Some(user.path()), Stage::Sm).unwrap_err();
        assert!(e.to_string().contains("over the"), "{e}");
    }
}
