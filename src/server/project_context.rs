//! What a new window needs to know of the project (the resource `bmad://project`, and a
//! compact form in `status` replies): its stack, told by the build files at its root; the
//! checks the human approved (`.bmad/config.toml`); the recent decisions across its tasks;
//! its open tasks and who owns them (a session's `owner` and `branch`, where a session has
//! them); its BMAD method install; and its lessons by category (the failure museum).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use crate::code::clip;
use crate::files::Project;
use crate::lessons::{self, Category};
use crate::policy::approval::Policy;
use crate::prompts::bmad;
use crate::store::{SessionKey, Store};
use crate::workflow::State;

pub const PROJECT_URI: &str = "bmad://project";

/// Build files at a project's root, and the stack each tells.
const STACK_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", "Rust (Cargo.toml)"),
    ("package.json", "JavaScript/TypeScript (package.json)"),
    ("tsconfig.json", "TypeScript (tsconfig.json)"),
    ("pyproject.toml", "Python (pyproject.toml)"),
    ("requirements.txt", "Python (requirements.txt)"),
    ("setup.py", "Python (setup.py)"),
    ("go.mod", "Go (go.mod)"),
    ("pom.xml", "Java (pom.xml)"),
    ("build.gradle", "Java/Kotlin (build.gradle)"),
    ("build.gradle.kts", "Kotlin (build.gradle.kts)"),
    ("Gemfile", "Ruby (Gemfile)"),
    ("composer.json", "PHP (composer.json)"),
    ("mix.exs", "Elixir (mix.exs)"),
    ("CMakeLists.txt", "C/C++ (CMakeLists.txt)"),
    ("Package.swift", "Swift (Package.swift)"),
    ("Dockerfile", "Docker (Dockerfile)"),
];

/// Sessions read for decisions and owners (the newest).
const SESSIONS_READ: usize = 20;
/// Decisions named (the newest, across tasks).
const DECISIONS: usize = 10;
/// Lessons named per category (the newest active ones).
const PER_CATEGORY: usize = 3;

/// The project context, as the resource gives it.
#[derive(Debug, Serialize)]
pub struct ProjectContext {
    pub project: String,
    pub stack: Vec<String>,
    pub checks: Checks,
    pub open_tasks: Vec<OpenTask>,
    pub recent_decisions: Vec<String>,
    pub bmad_method: Vec<String>,
    pub lessons: Museum,
}

#[derive(Debug, Serialize, JsonSchema, Clone, PartialEq)]
pub struct Checks {
    /// The approved checks, `name: command`.
    pub approved: Vec<String>,
    /// `auto` or `human`.
    pub gates: String,
    /// Why the policy cannot be read, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Whether a changed `.bmad/config.toml` waits for the human's approval.
    pub waiting_for_approval: bool,
}

#[derive(Debug, Serialize)]
pub struct OpenTask {
    pub task_name: String,
    pub stage: String,
    pub state: String,
    pub updated_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

/// The failure museum: lessons by category.
#[derive(Debug, Serialize)]
pub struct Museum {
    pub active: usize,
    pub retired: usize,
    pub by_category: BTreeMap<String, usize>,
    /// The newest active lessons of each category, one line each.
    pub recent: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<String>,
}

/// The compact form in a `status` reply.
#[derive(Debug, Serialize, JsonSchema, Clone, PartialEq)]
pub struct ProjectSummary {
    pub stack: Vec<String>,
    pub checks: Checks,
    /// Files in `.bmad/lessons/` (read `bmad://project` for them by category).
    pub lesson_files: usize,
    /// The resource with the whole context.
    pub resource: String,
}

fn stack(project: &Project) -> Vec<String> {
    STACK_FILES
        .iter()
        .filter(|(file, _)| project.path(file).is_file())
        .map(|(_, what)| what.to_string())
        .collect()
}

/// The checks as `policy` (as read, or why it cannot be) gives them.
fn checks(policy: Result<&Policy, &crate::error::Error>) -> Checks {
    match policy {
        Ok(p) => Checks {
            approved: p
                .effective
                .checks
                .iter()
                .map(|(name, spec)| format!("{name}: {}", clip(&spec.command, 200)))
                .collect(),
            gates: p.effective.gates.name().to_string(),
            problem: None,
            waiting_for_approval: p.waiting.is_some(),
        },
        Err(e) => Checks {
            approved: Vec::new(),
            gates: "unknown".into(),
            problem: Some(e.to_string()),
            waiting_for_approval: false,
        },
    }
}

/// The compact context for a `status` reply: no session or lesson is read; the policy is
/// the one the reply read.
pub fn summary(project: &Project, policy: Result<&Policy, &crate::error::Error>) -> ProjectSummary {
    ProjectSummary {
        stack: stack(project),
        checks: checks(policy),
        lesson_files: project
            .folder_names(lessons::LESSONS_DIR, lessons::MAX_LESSON_FILES)
            .ok()
            .flatten()
            .map_or(0, |n| n.iter().filter(|f| f.ends_with(".md")).count()),
        resource: PROJECT_URI.into(),
    }
}

/// The whole context of the server's default project.
pub fn build(store: &Store) -> crate::error::Result<ProjectContext> {
    let project = store.project(None)?;
    let page = store.list(None, None)?;
    let mut open_tasks = Vec::new();
    let mut decisions: Vec<(String, String)> = Vec::new();
    for entry in page.sessions.iter().take(SESSIONS_READ) {
        // Each session read once: its owner and branch are typed fields (docs/team.md).
        let Ok((_, s)) = store.load(None, &SessionKey::Id(entry.session_id.clone())) else {
            continue;
        };
        if entry.current_state != State::Completed {
            open_tasks.push(OpenTask {
                task_name: entry.task_name.clone(),
                stage: entry.current_stage.id().into(),
                state: entry.current_state.id().into(),
                updated_at: entry.updated_at.clone(),
                owner: s.owner.as_ref().map(|o| clip(&o.to_string(), 120)),
                branch: s.branch.as_deref().map(|b| clip(b, 120)),
            });
        }
        for h in s.decisions() {
            let words = h
                .feedback
                .as_deref()
                .map(|f| format!(": \"{}\"", clip(f, 160)))
                .unwrap_or_default();
            let by = match h.decided_by {
                Some(crate::workflow::DecidedBy::Human) => "the human",
                _ => "the host",
            };
            decisions.push((
                h.at.clone(),
                format!(
                    "{} {} {} {} by {by}{words}",
                    h.at,
                    s.task_name,
                    h.stage.id(),
                    h.action
                ),
            ));
        }
    }
    decisions.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(ProjectContext {
        project: project.display(),
        stack: stack(&project),
        checks: checks(Policy::read(&project).as_ref()),
        open_tasks,
        recent_decisions: decisions.into_iter().take(DECISIONS).map(|d| d.1).collect(),
        bmad_method: bmad::installed(&crate::bmad_method::Method::of(&project))
            .into_iter()
            .map(|i| format!("{} {} ({})", i.kind, i.name, i.path))
            .collect(),
        lessons: museum(&project),
    })
}

/// The project's lessons as the context shows them: how many are active and retired, by
/// category with the latest few, and the files that could not be read.
fn museum(project: &Project) -> Museum {
    let loaded = lessons::load(project).unwrap_or_else(|e| lessons::Loaded {
        damaged: vec![(lessons::LESSONS_DIR.into(), e.to_string())],
        ..lessons::Loaded::default()
    });
    let mut museum = Museum {
        active: loaded.active().count(),
        retired: loaded.lessons.len() - loaded.active().count(),
        by_category: BTreeMap::new(),
        recent: BTreeMap::new(),
        damaged: loaded
            .damaged
            .iter()
            .map(|(p, why)| format!("{p}: {why}"))
            .collect(),
    };
    for c in Category::ALL {
        let of: Vec<&lessons::Lesson> = loaded.active().filter(|l| l.category == c).collect();
        if of.is_empty() {
            continue;
        }
        museum.by_category.insert(c.name().into(), of.len());
        let recent = of
            .iter()
            .rev()
            .take(PER_CATEGORY)
            .map(|l| {
                format!(
                    "{} ({} role, task {}, {}): {}",
                    l.id,
                    l.role.id(),
                    l.task,
                    l.source.said_by(),
                    clip(
                        &l.words.split_whitespace().collect::<Vec<_>>().join(" "),
                        200
                    )
                )
            })
            .collect();
        museum.recent.insert(c.name().into(), recent);
    }
    museum
}
