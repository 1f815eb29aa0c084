//! The project's BMAD method files as MCP prompts (slash commands in Claude Code): each
//! installed agent as `bmad-agent-<name>` (adopt its persona), each workflow as
//! `bmad-workflow-<name>` (follow it). Listed and read from the server's default project
//! through the confined, bounded reader (`prompts::bmad`); a project without an install
//! lists none.

use rmcp::model::{GetPromptResult, Prompt};
use rmcp::ErrorData;

use crate::error::clip;
use crate::prompts::bmad::{self, Installed};
use crate::store::Store;

/// The names of these prompts begin with it.
pub const PREFIX: &str = "bmad-";

/// A prompt's name for an installed file: `bmad-<kind>-<name>`, in the characters a
/// client's command names allow.
fn prompt_name(i: &Installed) -> String {
    let name: String = i
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{PREFIX}{}-{name}", i.kind)
}

fn installed(store: &Store) -> Vec<Installed> {
    store
        .project(None)
        .map(|p| bmad::installed(&p))
        .unwrap_or_default()
}

pub fn list(store: &Store) -> Vec<Prompt> {
    let mut seen = std::collections::BTreeSet::new();
    installed(store)
        .into_iter()
        .filter(|i| seen.insert(prompt_name(i)))
        .map(|i| {
            Prompt::new(
                prompt_name(&i),
                Some(format!(
                    "The project's BMAD method {} `{}` ({}).",
                    i.kind, i.name, i.path
                )),
                None,
            )
            .with_title(format!("BMAD {} {}", i.kind, i.name))
        })
        .collect()
}

pub fn get(store: &Store, name: &str) -> Result<GetPromptResult, ErrorData> {
    let project = store
        .project(None)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let Some(found) = bmad::installed(&project)
        .into_iter()
        .find(|i| prompt_name(i) == name)
    else {
        return Err(ErrorData::invalid_params(
            format!(
                "no prompt `{}`: the project's BMAD method has no such agent or workflow",
                clip(name, 80)
            ),
            None,
        ));
    };
    let text = bmad::read_installed(&project, &found.path)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let ask = match found.kind {
        "agent" => "Adopt this persona of the project's BMAD method for what follows",
        _ => "Follow this workflow of the project's BMAD method",
    };
    Ok(super::slash::message(
        &format!("BMAD {} {}", found.kind, found.name),
        format!("{ask} (`{}`):\n\n{text}", found.path),
    ))
}
