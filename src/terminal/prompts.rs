//! `bmad-mcp prompts`: which file each role prompt comes from (and, with the BMAD method
//! installed, which of its agents plays each role and which files made its persona);
//! `bmad-mcp prompts export DIR`: the built-in prompts written out, as a starting point for
//! overrides.

use std::path::Path;

use clap::Subcommand;

use super::{Exit, Outcome};
use crate::code::visible;
use crate::files::Project;
use crate::prompts::{resolve, PROJECT_PROMPTS};
use crate::workflow::Stage;

#[derive(Subcommand, Debug)]
pub enum PromptsCommand {
    /// Write the built-in role prompts to DIR as <role>.md, to start overrides from.
    Export {
        /// The folder to write them into (created if needed), such as `.bmad/prompts`.
        dir: std::path::PathBuf,
        /// Replace files that are already there.
        #[arg(long)]
        force: bool,
    },
}

/// Lists, per role, the prompt in effect in `project`, with `user` as the user's folder;
/// fails when one cannot be used.
pub fn list(project: &Project, user: Option<&Path>) -> Outcome {
    println!(
        "Role prompts for {} (project {}/, then the BMAD method install, then user {}, then built-in):",
        project.display(),
        PROJECT_PROMPTS,
        user.map(|d| d.display().to_string())
            .unwrap_or_else(|| "(no configuration directory)".into())
    );
    // One reading of the install for the whole listing.
    let method = crate::bmad_method::Method::of(project);
    if let Some(i) = method.install() {
        let tools = match i.tools.join(", ") {
            t if t.is_empty() => "tools it does not record".to_string(),
            t => t,
        };
        println!(
            "The BMAD method {} is installed here for {} ({} skills).",
            visible(i.version.as_deref().unwrap_or("(version unknown)")),
            visible(&tools),
            i.skills.len()
        );
        if let Some(uv) = crate::bmad_method::runtime::uv_notice(&method) {
            println!("Note: {}", visible(&uv));
        }
    }
    let mut failed = false;
    let mut notices: Vec<String> = Vec::new();
    for stage in Stage::ALL {
        match resolve(&method, user, stage) {
            Ok(t) => {
                println!(
                    "  {:<10} {:<9} {}",
                    stage.id(),
                    t.origin.name(),
                    visible(t.path.as_deref().unwrap_or("(embedded)"))
                );
                if let Some(agent) = &t.agent {
                    println!("  {:<20} played by {}", "", visible(agent));
                    println!(
                        "  {:<20} persona from {}",
                        "",
                        visible(&t.made_of.join(", then "))
                    );
                }
                if let Some(skill) = &t.skill {
                    println!("  {:<20} its work done with {}/", "", visible(&skill.dir));
                }
                for n in t.notices {
                    if !notices.contains(&n) {
                        notices.push(n);
                    }
                }
            }
            Err(e) => {
                failed = true;
                let why = match e {
                    crate::error::Error::InvalidPrompt { path, problem } => {
                        format!("{path} {problem}")
                    }
                    other => other.to_string(),
                };
                println!("  {:<10} {:<9} {}", stage.id(), "error", visible(&why));
            }
        }
    }
    for n in notices {
        println!("Note: {}", visible(&n));
    }
    Ok(if failed { Exit::Failed } else { Exit::Done })
}

/// Writes the built-in prompts into `dir` (created if needed); refuses to replace a file
/// unless `force`, and then writes none. `user` is the user's folder, named as where they
/// may go.
pub fn export(dir: &Path, force: bool, user: Option<&Path>) -> Outcome {
    let files: Vec<_> = Stage::ALL
        .into_iter()
        .map(|s| (dir.join(format!("{}.md", s.id())), s.prompt_source()))
        .collect();
    let there: Vec<String> = files
        .iter()
        .filter(|(p, _)| p.symlink_metadata().is_ok())
        .map(|(p, _)| p.display().to_string())
        .collect();
    if !there.is_empty() && !force {
        return Err(format!(
            "{} already exist(s); nothing was written. Pass --force to replace them",
            there.join(", ")
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (path, text) in &files {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    println!(
        "Edit them and place them in {PROJECT_PROMPTS}/ of a project (for the team) or in {} (for you); keep the `<!-- section: … -->` markers to have different text for a first draft and a revision.",
        user.map(|d| d.display().to_string())
            .unwrap_or_else(|| "your configuration directory's bmad-mcp/prompts/".into())
    );
    Ok(Exit::Done)
}
