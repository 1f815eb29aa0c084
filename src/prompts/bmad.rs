//! An installed BMAD method's own files: the agent personas (and workflows) its installer
//! writes into the project, in the layouts of its public source:
//!
//! * v4: `.bmad-core/agents/<agent>.md`, `.bmad-core/workflows/<workflow>.yaml`;
//! * v6 (early): `_bmad/bmm/agents/<agent>.md`, `_bmad/bmm/workflows/<workflow>/…`;
//! * v6 for Claude Code: `.claude/skills/bmad-agent-<agent>/SKILL.md` (an agent) and
//!   `.claude/skills/bmad-<name>/SKILL.md` (a workflow).
//!
//! A stage's persona is the first file found for the agents that play its role (po: `po`,
//! then `pm`; review and qa: `qa`, then `tea`); it is added to the built-in prompt's role
//! section, which keeps what the server checks (sections, gate, output keys). Every file is
//! read through the project's confined, bounded reader; one that cannot be used is an
//! error naming it, as a project's own prompt file is.

use crate::error::{Error, Result};
use crate::files::{Project, ReadProblem};
use crate::workflow::Stage;

use super::MAX_PROMPT_BYTES;

/// The characters of a persona kept in a prompt (the file has the rest).
pub const PERSONA_CHARS: usize = 12_000;

/// The BMAD agents that play `stage`'s role, most fitting first.
pub fn agents(stage: Stage) -> &'static [&'static str] {
    match stage.id() {
        "po" => &["po", "pm"],
        "architect" => &["architect"],
        "sm" => &["sm"],
        "dev" => &["dev"],
        _ => &["qa", "tea"],
    }
}

/// Where each layout keeps `agent`'s persona.
fn agent_paths(agent: &str) -> [String; 3] {
    [
        format!(".bmad-core/agents/{agent}.md"),
        format!("_bmad/bmm/agents/{agent}.md"),
        format!(".claude/skills/bmad-agent-{agent}/SKILL.md"),
    ]
}

/// A persona as read.
#[derive(Debug, Clone)]
pub struct Persona {
    pub path: String,
    pub text: String,
}

fn invalid(path: &str, problem: String) -> Error {
    Error::InvalidPrompt {
        path: path.to_string(),
        problem,
    }
}

/// The persona of the project's BMAD install for `stage`, if it has one.
pub fn persona(project: &Project, stage: Stage) -> Result<Option<Persona>> {
    for agent in agents(stage) {
        for path in agent_paths(agent) {
            match project.read_at_most(&path, MAX_PROMPT_BYTES) {
                Ok(None) => {}
                // A folder on the way that is a file: no install there.
                Err(ReadProblem::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => {}
                Ok(Some(text)) if text.trim().is_empty() => {
                    return Err(invalid(&path, "is empty".into()))
                }
                Ok(Some(text)) => return Ok(Some(Persona { path, text })),
                // A path outside the install's areas (a link out) or a file that is not
                // text: named, never passed over for another.
                Err(ReadProblem::Unsafe(Error::UnsafePath { reason, .. })) => {
                    return Err(invalid(&path, reason))
                }
                Err(problem) => return Err(invalid(&path, problem.to_string())),
            }
        }
    }
    Ok(None)
}

/// `template` (a prompt file with sections) with the persona added at the end of its role
/// section.
pub fn with_persona(template: &str, p: &Persona) -> String {
    let text = strip_front_matter(&p.text);
    let mut shown = crate::code::clip(text.trim(), PERSONA_CHARS);
    if shown.len() < text.trim().len() {
        shown.push_str(&format!(" (the rest is in `{}`)", p.path));
    }
    let persona = format!(
        "\n## Your persona, from the project's BMAD method (`{}`)\n\nPlay this role as the project's BMAD install describes it. Where it names steps, scripts, menus or files of its own, keep to this prompt instead: the output and the sections above are what the server reads.\n\n{shown}\n\n",
        p.path
    );
    match template.find("<!-- section: first -->") {
        Some(i) => format!("{}{persona}{}", &template[..i], &template[i..]),
        None => format!("{template}{persona}"),
    }
}

/// A file's text without a leading `---` … `---` front matter.
fn strip_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + 5..],
        None => text,
    }
}

/// One file of the install, listed as an MCP prompt.
#[derive(Debug, Clone)]
pub struct Installed {
    /// `agent` or `workflow`.
    pub kind: &'static str,
    /// The agent's or workflow's name (`pm`, `create-prd`).
    pub name: String,
    pub path: String,
}

/// The most files of an install listed.
const MAX_LISTED: usize = 200;

/// The agents and workflows of the project's BMAD install, by layout. Folders that are
/// not there, or cannot be read, list nothing.
pub fn installed(project: &Project) -> Vec<Installed> {
    let mut out = Vec::new();
    let names = |dir: &str| {
        project
            .folder_names(dir, MAX_LISTED)
            .ok()
            .flatten()
            .unwrap_or_default()
    };
    let mut add = |kind, name: &str, path: String| {
        if !name.is_empty() && out.len() < MAX_LISTED {
            out.push(Installed {
                kind,
                name: name.to_string(),
                path,
            });
        }
    };
    for (dir, kind) in [
        (".bmad-core/agents", "agent"),
        ("_bmad/bmm/agents", "agent"),
        (".bmad-core/workflows", "workflow"),
    ] {
        for file in names(dir) {
            let stem = file
                .strip_suffix(".md")
                .or_else(|| file.strip_suffix(".yaml"))
                .or_else(|| file.strip_suffix(".yml"));
            if let Some(stem) = stem.filter(|_| !file.starts_with('.')) {
                add(kind, stem, format!("{dir}/{file}"));
            }
        }
    }
    for skill in names(".claude/skills") {
        let Some(rest) = skill.strip_prefix("bmad-") else {
            continue;
        };
        let path = format!(".claude/skills/{skill}/SKILL.md");
        match rest.strip_prefix("agent-") {
            Some(agent) => add("agent", agent, path),
            None => add("workflow", rest, path),
        }
    }
    out
}

/// The text of an installed file, for an MCP prompt.
pub fn read_installed(project: &Project, path: &str) -> Result<String> {
    match project.read_at_most(path, MAX_PROMPT_BYTES) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(invalid(path, "no longer exists".into())),
        Err(problem) => Err(invalid(path, problem.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_layout_gives_its_persona_and_a_po_falls_back_to_the_pm() {
        let (dir, project) = crate::files::project::tests::project();
        assert!(persona(&project, Stage::Po).unwrap().is_none());
        let skill = dir.path().join(".claude/skills/bmad-agent-pm");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: pm\n---\n# John, PM\nAsk why.\n",
        )
        .unwrap();
        let p = persona(&project, Stage::Po).unwrap().unwrap();
        assert_eq!(p.path, ".claude/skills/bmad-agent-pm/SKILL.md");
        let text = with_persona(Stage::Po.prompt_source(), &p);
        let role = text.find("# Role: Product Owner").unwrap();
        let shown = text.find("# John, PM\nAsk why.").unwrap();
        let first = text.find("<!-- section: first -->").unwrap();
        assert!(role < shown && shown < first, "in the role section");
        assert!(!text.contains("name: pm"), "front matter left out");

        std::fs::create_dir_all(dir.path().join(".bmad-core/agents")).unwrap();
        std::fs::write(dir.path().join(".bmad-core/agents/po.md"), "# Sarah, PO\n").unwrap();
        assert_eq!(
            persona(&project, Stage::Po).unwrap().unwrap().path,
            ".bmad-core/agents/po.md"
        );
        std::fs::write(dir.path().join(".bmad-core/agents/qa.md"), b"\xff").unwrap();
        let e = persona(&project, Stage::Review).unwrap_err().to_string();
        assert!(
            e.contains(".bmad-core/agents/qa.md") && e.contains("not UTF-8"),
            "{e}"
        );

        let listed: Vec<(String, &str)> = installed(&project)
            .into_iter()
            .map(|i| (i.name, i.kind))
            .collect();
        assert!(listed.contains(&("po".into(), "agent")), "{listed:?}");
        assert!(listed.contains(&("pm".into(), "agent")), "{listed:?}");
        assert!(
            project
                .write_atomic(".bmad-core/agents/po.md", b"x")
                .is_err(),
            "read only"
        );
    }
}
