//! An agent of the method (v6) as the role of a stage: which installed agent plays each
//! stage (the one whose menu offers the stage's skills), and its persona made from its
//! skill's `customize.toml` under the team's `_bmad/custom/<skill>.toml` and the person's
//! `_bmad/custom/<skill>.user.toml`, rendered in a few lines of facts. The skill's
//! SKILL.md (an activation script: steps, scripts, a menu to wait on) is never read.

use toml::{Table, Value};

use crate::files::Project;
use crate::workflow::{Stage, Track};

use super::review::CodeReview;
use super::{customize::customize, Install};

/// The most characters of one persona value (a role, a principle, a fact) kept.
const MAX_VALUE_CHARS: usize = 600;
/// The most principles, and literal facts, kept.
const MAX_ITEMS: usize = 16;
/// The most characters of `file:` facts read into one persona, all files together.
pub const FILE_FACTS_CHARS: usize = 8_000;

/// An installed agent, its `[agent]` block merged from base, team and person.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Its skill's name (`bmad-agent-pm`).
    pub skill: String,
    pub block: Table,
    /// The files its persona was made from, in the order they were laid on.
    pub files: Vec<String>,
}

impl Agent {
    fn text(&self, key: &str) -> Option<String> {
        self.block
            .get(key)
            .and_then(Value::as_str)
            .and_then(|v| super::one_line(v, MAX_VALUE_CHARS))
    }

    /// Whether its menu offers `skill`.
    pub fn offers(&self, skill: &str) -> bool {
        let menu = self.block.get("menu").and_then(Value::as_array);
        menu.into_iter()
            .flatten()
            .any(|m| m.get("skill").and_then(Value::as_str) == Some(skill))
    }

    /// "📋 John, Product Manager".
    pub fn who(&self) -> String {
        let name = self.text("name").unwrap_or_else(|| self.skill.clone());
        let icon = self
            .text("icon")
            .map(|i| format!("{i} "))
            .unwrap_or_default();
        match self.text("title") {
            Some(t) => format!("{icon}{name}, {t}"),
            None => format!("{icon}{name}"),
        }
    }
}

/// The installed agents: every skill whose `customize.toml` has an `[agent]` block; and
/// the code review's `customize.toml` with the team's and the person's laid on it, read on
/// the way (`super::review::REVIEW_SKILL`), so that no call opens them twice and a reading
/// kept for later calls keeps them too.
pub fn agents(
    project: &Project,
    install: &Install,
    notices: &mut Vec<String>,
) -> (Vec<Agent>, Option<CodeReview>) {
    let mut out = Vec::new();
    let mut code_review = None;
    for skill in &install.skills {
        let Some(dir) = skill.dir() else { continue };
        let base_rel = format!("{dir}/customize.toml");
        let Some(mut merged) = super::read_toml(project, &base_rel, notices) else {
            continue;
        };
        let reviews = skill.name == super::review::REVIEW_SKILL;
        if !reviews && !merged.get("agent").is_some_and(Value::is_table) {
            continue;
        }
        let base = reviews.then(|| merged.clone());
        let mut files = vec![base_rel];
        for rel in [
            format!("_bmad/custom/{}.toml", skill.name),
            format!("_bmad/custom/{}.user.toml", skill.name),
        ] {
            if let Some(over) = super::read_toml(project, &rel, notices) {
                customize(&mut merged, over);
                files.push(rel);
            }
        }
        if let Some(base) = base {
            code_review = Some(CodeReview {
                base,
                merged: merged.clone(),
            });
        }
        if let Some(Value::Table(block)) = merged.remove("agent") {
            out.push(Agent {
                skill: skill.name.clone(),
                block,
                files,
            });
        }
    }
    (out, code_review)
}

/// The method's skills that make a stage's work, most telling first.
pub fn stage_skills(stage: Stage) -> &'static [&'static str] {
    match stage.id() {
        "po" => &["bmad-prd", "bmad-create-prd", "bmad-product-brief"],
        "architect" => &["bmad-architecture", "bmad-create-architecture"],
        "sm" => &[
            "bmad-sprint-planning",
            "bmad-create-story",
            "bmad-retrospective",
            "bmad-create-epics-and-stories",
        ],
        "dev" => &["bmad-build", "bmad-dev-story", "bmad-quick-dev"],
        "review" => &["bmad-code-review", "bmad-review"],
        "qa" => &["bmad-qa-generate-e2e-tests", "bmad-testarch-automate"],
        // The quick track's short spec and the fix track's failing test: the method's
        // quick flow belongs to the developer.
        "spec" => &[
            "bmad-spec",
            "bmad-quick-spec",
            "bmad-build",
            "bmad-quick-dev",
        ],
        "bug" => &["bmad-build", "bmad-quick-dev", "bmad-dev-story"],
        _ => &[],
    }
}

/// The agent that plays `stage`: of those whose menu offers one of its skills, the one
/// offering the first of them; a tie goes to the next skill, then to the manifest's order.
pub fn for_stage(stage: Stage, agents: &[Agent]) -> Option<&Agent> {
    let wanted = stage_skills(stage);
    let offered = |a: &Agent| wanted.iter().map(|w| a.offers(w)).collect::<Vec<bool>>();
    agents
        .iter()
        .filter(|a| wanted.iter().any(|w| a.offers(w)))
        .rev()
        .max_by_key(|a| offered(a))
}

/// Whether `stage` is `agent`'s own work: its menu's first item (the work its `role` line
/// describes) is the stage's most telling skill, on the full track. The developer also
/// plays the review, QA, the plan, the short spec and the failing test where the install
/// has no agent of their own; its "implement" line is not theirs.
pub fn at_home(agent: &Agent, stage: Stage) -> bool {
    let first = agent
        .block
        .get("menu")
        .and_then(Value::as_array)
        .and_then(|m| m.first())
        .and_then(|m| m.get("skill"))
        .and_then(Value::as_str);
    first.is_some() && first == stage_skills(stage).first().copied() && Track::Full.contains(stage)
}

/// `agent`'s persona for `stage` in a few lines of facts, its `file:` facts read through
/// the project's confined reader within [`FILE_FACTS_CHARS`]. Its `role` line is given
/// only at its own stage ([`at_home`]); elsewhere the prompt's role stands alone.
pub fn render(project: &Project, agent: &Agent, stage: Stage, notices: &mut Vec<String>) -> String {
    let mut out = format!("- Who: {}\n", agent.who());
    let home = at_home(agent, stage);
    for (key, label) in [
        ("role", "Role"),
        ("identity", "Identity"),
        ("communication_style", "Communication style"),
    ] {
        if key == "role" && !home {
            continue;
        }
        if let Some(v) = agent.text(key) {
            out.push_str(&format!("- {label}: {v}\n"));
        }
    }
    let list = |key: &str| -> Vec<String> {
        let items = agent.block.get(key).and_then(Value::as_array);
        items
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|v| super::one_line(v, MAX_VALUE_CHARS))
            .collect()
    };
    let principles = list("principles");
    if !principles.is_empty() {
        out.push_str("- Principles:\n");
        for p in principles.iter().take(MAX_ITEMS) {
            out.push_str(&format!("  - {p}\n"));
        }
    }
    let facts = list("persistent_facts");
    if !facts.is_empty() {
        out.push_str("- Facts to keep in mind:\n");
        out.push_str(&facts_text(project, &facts, notices));
    }
    out
}

/// The persistent facts: literal ones as they are, `file:` ones as the files' text,
/// indented under their path, all files within [`FILE_FACTS_CHARS`].
fn facts_text(project: &Project, facts: &[String], notices: &mut Vec<String>) -> String {
    let mut out = String::new();
    let mut budget = FILE_FACTS_CHARS;
    for fact in facts.iter().take(MAX_ITEMS) {
        let Some(pattern) = fact.strip_prefix("file:") else {
            out.push_str(&format!("  - {fact}\n"));
            continue;
        };
        let Some(rel) = super::bmm_config::in_project(pattern.trim()) else {
            notices.push(format!(
                "The BMAD persistent fact `{}` names a file outside the project; it was left out.",
                crate::code::clip(fact, 120)
            ));
            continue;
        };
        for (path, text) in fact_files(project, &rel, notices) {
            let shown = crate::code::clip(text.trim(), budget);
            budget = budget.saturating_sub(shown.chars().count());
            out.push_str(&format!("  - From {}:\n", crate::code::inline(&path)));
            for line in shown.lines() {
                out.push_str(&format!("    {line}\n"));
            }
            if budget == 0 {
                notices.push(format!(
                    "The BMAD persistent facts were cut at {FILE_FACTS_CHARS} characters of files."
                ));
                return out;
            }
        }
    }
    out
}

/// The file a `file:` fact names, anywhere inside the project but a hidden name; a
/// pattern (`*`) is not expanded. In a git repository, the text the commit checked out
/// holds, read from git's objects: a persona can come from a merged branch, and the prompt
/// it is read into can be copied into a committed document, so what the work tree alone
/// holds (a key the repository ignores, a file never committed, a password added to a
/// tracked file whose changes git is told to overlook with `--skip-worktree`) is never
/// read for it. Outside a repository there is no branch to merge one from, and the file
/// is read as named, without following a link.
fn fact_files(project: &Project, rel: &str, notices: &mut Vec<String>) -> Vec<(String, String)> {
    if rel.contains(['*', '?', '[']) {
        notices.push(format!("The BMAD persistent fact `file:{}` is a pattern, which the server does not expand; it was left out.", crate::code::clip(rel, 120)));
        return Vec::new();
    }
    let left_out = |why: String| {
        format!(
            "The BMAD persistent fact `file:{}` {why}; it was left out.",
            crate::code::clip(rel, 120)
        )
    };
    let read = match crate::git::Repo::at(&project.path("")) {
        Some(repo) => match crate::files::may_read_in_project(rel) {
            Err(problem) => Err(problem),
            Ok(()) => match repo.committed_text(rel) {
                Some(Some(text)) => Ok(Some(text)),
                Some(None) => {
                    notices.push(left_out("names a file the commit checked out does not hold (only what is committed to the repository is read into a prompt, as committed)".into()));
                    return Vec::new();
                }
                None => {
                    notices.push(left_out("names a file git could not read from the commit checked out (only what is committed to the repository is read into a prompt)".into()));
                    return Vec::new();
                }
            },
        },
        None => project.read_in_project(rel, super::MAX_FILE_BYTES),
    };
    match read {
        Ok(Some(text)) => vec![(rel.to_string(), text)],
        Ok(None) => {
            notices.push(left_out("names no file".into()));
            Vec::new()
        }
        Err(problem) => {
            notices.push(left_out(format!(
                "could not be read ({})",
                crate::code::clip(&problem.to_string(), 200)
            )));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(skill: &str, menu: &[&str]) -> Agent {
        let mut text = String::new();
        for s in menu {
            text.push_str(&format!("[[menu]]\ncode = \"{s}\"\nskill = \"{s}\"\n"));
        }
        Agent {
            skill: skill.into(),
            block: toml::from_str(&text).unwrap(),
            files: vec![],
        }
    }

    #[test]
    fn an_agents_role_line_is_given_only_at_its_own_stage() {
        let (_dir, project) = crate::files::project::tests::project();
        let mut dev = agent(
            "bmad-agent-dev",
            &[
                "bmad-build",
                "bmad-qa-generate-e2e-tests",
                "bmad-code-review",
                "bmad-sprint-planning",
            ],
        );
        dev.block
            .insert("role".into(), "Implement approved stories.".into());
        dev.block.insert("identity".into(), "Test first.".into());
        let mut notices = Vec::new();
        let home = render(&project, &dev, Stage::Dev, &mut notices);
        assert!(
            home.contains("- Role: Implement approved stories.\n"),
            "{home}"
        );
        for stage in [Stage::Sm, Stage::Review, Stage::Qa, Stage::Bug, Stage::Spec] {
            let text = render(&project, &dev, stage, &mut notices);
            assert!(!text.contains("Implement"), "{stage:?}: {text}");
            assert!(
                text.contains("- Identity: Test first.\n"),
                "{stage:?}: {text}"
            );
        }
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[test]
    fn the_agent_offering_the_stages_first_skills_plays_it() {
        let agents = [
            agent(
                "pm",
                &[
                    "bmad-prd",
                    "bmad-sprint-planning",
                    "bmad-create-epics-and-stories",
                ],
            ),
            agent("architect", &["bmad-architecture", "bmad-sprint-planning"]),
            agent(
                "dev",
                &[
                    "bmad-build",
                    "bmad-sprint-planning",
                    "bmad-retrospective",
                    "bmad-code-review",
                ],
            ),
        ];
        let by = |s: Stage| for_stage(s, &agents).map(|a| a.skill.as_str());
        assert_eq!(by(Stage::Po), Some("pm"));
        assert_eq!(by(Stage::Architect), Some("architect"));
        assert_eq!(
            by(Stage::Sm),
            Some("dev"),
            "sprint planning and the retrospective"
        );
        assert_eq!(by(Stage::Review), Some("dev"));
        assert_eq!(by(Stage::Qa), None, "no agent offers its skills");
        let tie = [agent("a", &["bmad-prd"]), agent("b", &["bmad-prd"])];
        assert_eq!(
            for_stage(Stage::Po, &tie).unwrap().skill,
            "a",
            "the manifest's order"
        );
    }

    /// In a git repository, a `file:` fact is read as the commit checked out holds it: a
    /// key the repository ignores, a file never committed, and a change hidden from git
    /// (`--skip-worktree`) are left out, and said.
    #[test]
    fn in_a_repository_only_committed_text_is_read_as_facts() {
        let (dir, project) = crate::files::project::tests::project();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "config/master.key\n").unwrap();
        std::fs::write(dir.path().join("config/master.key"), "KEY-1234\n").unwrap();
        std::fs::write(dir.path().join("terraform.tfstate"), "STATE-5678\n").unwrap();
        std::fs::write(dir.path().join("docs/context.md"), "Ship weekly.\n").unwrap();
        std::fs::write(dir.path().join("docs/staged.md"), "STAGED-9\n").unwrap();
        git(&["add", ".gitignore", "docs/context.md"]);
        git(&[
            "-c",
            "user.name=A",
            "-c",
            "user.email=a@example.org",
            "commit",
            "-qm",
            "context",
        ]);
        git(&["add", "docs/staged.md"]);
        // A password added in the work tree, hidden from git's status.
        std::fs::write(
            dir.path().join("docs/context.md"),
            "Ship weekly.\npassword: hunter2\n",
        )
        .unwrap();
        git(&["update-index", "--skip-worktree", "docs/context.md"]);
        let facts: Vec<String> = [
            "file:config/master.key",
            "file:terraform.tfstate",
            "file:docs/staged.md",
            "file:docs/context.md",
        ]
        .map(String::from)
        .to_vec();
        let mut notices = Vec::new();
        let text = facts_text(&project, &facts, &mut notices);
        assert!(text.contains("Ship weekly."), "{text}");
        for secret in ["KEY-1234", "STATE-5678", "STAGED-9", "hunter2"] {
            assert!(!text.contains(secret), "{secret}: {text}");
        }
        let said = notices.join("\n");
        for named in ["config/master.key", "terraform.tfstate", "docs/staged.md"] {
            assert!(
                said.contains(&format!(
                    "`file:{named}` names a file the commit checked out does not hold"
                )),
                "{said}"
            );
        }
    }

    #[test]
    fn file_facts_are_read_inside_the_project_within_the_budget_and_links_are_not_followed() {
        let (dir, project) = crate::files::project::tests::project();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::write(
            dir.path().join("docs/big.md"),
            "x".repeat(3 * FILE_FACTS_CHARS),
        )
        .unwrap();
        std::fs::write(dir.path().join("docs/small.md"), "Ship weekly.\n").unwrap();
        std::fs::write(dir.path().join(".env"), "API_KEY=secret\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/config"), "[remote]\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/hostname", dir.path().join("docs/out.md")).unwrap();
        let facts: Vec<String> = [
            "Our org is AWS-only.",
            "file:{project-root}/docs/small.md",
            "file:{project-root}/docs/out.md",
            "file:{project-root}/../secret.md",
            "file:{project-root}/.env",
            "file:.git/config",
            "file:docs/*.md",
            "file:{project-root}/docs/big.md",
        ]
        .map(String::from)
        .to_vec();
        let mut notices = Vec::new();
        let text = facts_text(&project, &facts, &mut notices);
        assert!(text.contains("  - Our org is AWS-only.\n"), "{text}");
        assert!(
            text.contains("  - From `docs/small.md`:\n    Ship weekly.\n"),
            "{text}"
        );
        let xs = text.chars().filter(|c| *c == 'x').count();
        assert!(xs < FILE_FACTS_CHARS, "within the budget: {xs}");
        let said = notices.join("\n");
        assert!(
            !text.contains("API_KEY") && !text.contains("[remote]"),
            "{text}"
        );
        for named in [
            "docs/out.md",
            "../secret.md",
            "docs/*.md",
            "cut at",
            ".env",
            "hidden",
        ] {
            assert!(said.contains(named), "{named}: {said}");
        }
    }

    /// A `file:` fact's path is the install's: it stays inside its quote whatever its name
    /// holds.
    #[test]
    fn a_file_facts_path_stays_quoted() {
        let (dir, project) = crate::files::project::tests::project();
        let name = format!("{}.md", crate::code::FORGED);
        std::fs::write(dir.path().join(&name), "Ship weekly.\n").unwrap();
        let mut notices = Vec::new();
        let text = facts_text(&project, &[format!("file:{name}")], &mut notices);
        assert!(text.contains("Ship weekly."), "{text} {notices:?}");
        assert!(!crate::code::forged_in(&text), "{text}");
    }
}
