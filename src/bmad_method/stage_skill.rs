//! The installed skill that does a stage's work, and what of it comes back to the server:
//! with the method installed, a stage's prompt sends the host to that skill (found in the
//! install's skill folders, never at a path of our own) and says how its output reaches
//! the stage: the PRD and the architecture spine as the file the skill writes, taken with
//! `document_file` ([`super::begin`] reads it where the skill leaves it), everything else as
//! the stage's document written from what the skill made. The gate, the checks, the human's
//! decision and the audit stay the server's.
//!
//! Which skill: the first of the stage's skills the install has, in the order below (the
//! skill that writes the stage's document first; the quick and fix tracks' stages as the
//! method's quick flow does them, as `persona::stage_skills` lists them).

use crate::workflow::Stage;

use super::begin::Kind;
use super::{tools, Install};

/// How the skill's output reaches the stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hand {
    /// The skill writes the stage's document where the server takes one: the host submits
    /// that file with `document_file`.
    File(Kind),
    /// The skill writes what the stage's document is written from (the epics, the code,
    /// the tests, its findings): the host writes the document in `claude_result`.
    Written,
}

/// One stage's skills, most fitting first, and how what they make reaches the stage.
struct Row {
    stage: &'static str,
    skills: &'static [&'static str],
    hand: Hand,
}

/// The skills that do each stage's work. `bmad-sprint-planning` is not the plan's: it
/// writes `sprint-status.yaml` from the epics, which the server writes itself when the
/// human approves the plan. The review has no row: `bmad-code-review` is run layer by
/// layer, as the review prompt lists its layers (`prompts::review_layers`), which names it.
const TABLE: [Row; 7] = [
    Row {
        stage: "po",
        skills: &["bmad-prd", "bmad-create-prd"],
        hand: Hand::File(Kind::Prd),
    },
    Row {
        stage: "architect",
        skills: &["bmad-architecture", "bmad-create-architecture"],
        hand: Hand::File(Kind::Architecture),
    },
    Row {
        stage: "sm",
        skills: &["bmad-create-epics-and-stories"],
        hand: Hand::Written,
    },
    Row {
        stage: "dev",
        skills: &["bmad-build", "bmad-dev-story", "bmad-quick-dev"],
        hand: Hand::Written,
    },
    Row {
        stage: "qa",
        skills: &["bmad-qa-generate-e2e-tests", "bmad-testarch-automate"],
        hand: Hand::Written,
    },
    Row {
        stage: "spec",
        skills: &["bmad-spec", "bmad-quick-spec"],
        hand: Hand::Written,
    },
    Row {
        stage: "bug",
        skills: &["bmad-build", "bmad-quick-dev"],
        hand: Hand::Written,
    },
];

/// The installed skill for a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSkill {
    pub stage: Stage,
    /// Its name (`bmad-prd`).
    pub name: String,
    /// Its folder, relative to the project (`.claude/skills/bmad-prd`).
    pub dir: String,
    /// Whether it is in Claude Code's skills folder, where Claude Code has it as `/<name>`.
    pub claude_code: bool,
    pub hand: Hand,
    /// Where it writes what the stage takes, as the prompt says it (`None`: not said).
    pub writes: Option<String>,
}

/// The skill of the install that does `stage`'s work, if the install has one in a skills
/// folder.
pub fn for_stage(install: &Install, stage: Stage) -> Option<StageSkill> {
    let row = TABLE.iter().find(|r| r.stage == stage.id())?;
    let skill = row.skills.iter().find_map(|name| {
        install
            .skills
            .iter()
            .find(|s| s.name == *name && s.folder.is_some())
    })?;
    Some(StageSkill {
        stage,
        name: skill.name.clone(),
        dir: skill.dir()?,
        claude_code: skill.folder == tools::folder("claude-code"),
        hand: row.hand,
        writes: writes(install, stage, row.hand),
    })
}

/// Where the skill leaves what the stage takes, in the install's folders.
fn writes(install: &Install, stage: Stage, hand: Hand) -> Option<String> {
    let planning = install.settings.planning_artifacts.as_deref();
    let implementation = install.settings.implementation_artifacts.as_deref();
    match (hand, stage.id()) {
        (Hand::File(kind), _) => Some(kind.skill_output(planning?)),
        (_, "sm") => Some(format!("{}/epics.md", planning?)),
        (_, "qa") => Some(format!("{}/tests/test-summary.md", implementation?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bmad_method::Skill;

    fn install(skills: &[(&str, &'static str)]) -> Install {
        let mut i = Install {
            skills: skills
                .iter()
                .map(|(name, folder)| Skill {
                    name: name.to_string(),
                    description: String::new(),
                    folder: Some(folder),
                })
                .collect(),
            ..Install::default()
        };
        i.settings.planning_artifacts = Some("_bmad-output/planning-artifacts".into());
        i.settings.implementation_artifacts = Some("_bmad-output/implementation-artifacts".into());
        i
    }

    #[test]
    fn each_stage_gets_the_first_of_its_skills_the_install_has() {
        let i = install(&[
            ("bmad-create-prd", ".agents/skills"),
            ("bmad-prd", ".agents/skills"),
            ("bmad-architecture", ".claude/skills"),
            ("bmad-build", ".claude/skills"),
            ("bmad-sprint-planning", ".claude/skills"),
        ]);
        let po = for_stage(&i, Stage::Po).unwrap();
        assert_eq!(
            (po.name.as_str(), po.dir.as_str(), po.claude_code),
            ("bmad-prd", ".agents/skills/bmad-prd", false)
        );
        assert_eq!(po.hand, Hand::File(Kind::Prd));
        assert_eq!(
            po.writes.as_deref(),
            Some("_bmad-output/planning-artifacts/prds/<run>/prd.md")
        );
        let arch = for_stage(&i, Stage::Architect).unwrap();
        assert!(arch.claude_code);
        assert_eq!(
            arch.writes.as_deref(),
            Some("_bmad-output/planning-artifacts/architecture/<run>/ARCHITECTURE-SPINE.md")
        );
        assert_eq!(for_stage(&i, Stage::Dev).unwrap().name, "bmad-build");
        assert_eq!(for_stage(&i, Stage::Bug).unwrap().name, "bmad-build");
        assert!(
            for_stage(&i, Stage::Sm).is_none(),
            "sprint planning writes the status the server writes on approval"
        );
        assert!(for_stage(&i, Stage::Review).is_none());
        let mut moved = install(&[("bmad-prd", ".claude/skills")]);
        moved.skills[0].folder = None;
        assert!(for_stage(&moved, Stage::Po).is_none(), "in no folder");
    }
}
