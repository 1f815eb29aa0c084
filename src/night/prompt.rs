//! The prompt a step's host session is given: which session and stage it is, where it
//! runs, to read the stage's role prompt from `status`, do the work and submit, and that
//! the decisions are the human's. The role prompt itself comes from the server, as in any
//! session: the run does not repeat it.

use std::path::Path;

use crate::workflow::Stage;

/// The step's prompt: `task` and `id` name the session, `sprint` its sprint (none for
/// the parent's final QA), `stage` the step.
pub fn of(task: &str, id: &str, sprint: Option<u32>, stage: Stage, dir: &Path) -> String {
    let which = match sprint {
        Some(n) => format!("the story of sprint {n}"),
        None => "the final QA of the whole task, once its stories completed".into(),
    };
    let submit_stage = match sprint {
        Some(_) => String::new(),
        None => format!(", \"stage\": \"{stage}\""),
    };
    format!(
        "You run one step of a BMAD task, unattended (bmad-mcp's night shift): {which}, stage: {stage}.\n\
         Task: {task}\nsession_id: {id}\nDirectory: {dir}\n\n\
         1. Call the bmad-task tool with {{\"action\": \"status\", \"session_id\": \"{id}\"}} and read the role prompt it returns.\n\
         2. Do the work of the {stage} stage in this directory, as that role prompt says.\n\
         3. Submit your document with {{\"action\": \"submit\", \"session_id\": \"{id}\"{submit_stage}, \"claude_result\": \"<the document>\"}}.\n\n\
         Stop once the submission is answered. Decisions (confirm, approve, reject, answer) are the human's, made at their terminal or on the dashboard: never make them, and never run bmad-mcp from a shell.",
        dir = dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_the_session_and_stage_and_leaves_decisions_to_the_human() {
        let p = of(
            "t",
            "0000",
            Some(3),
            Stage::parse("review").unwrap(),
            Path::new("/w"),
        );
        for said in [
            "sprint 3",
            "stage: review",
            "session_id: 0000",
            "Directory: /w",
            "are the human's",
        ] {
            assert!(p.contains(said), "{said}: {p}");
        }
        assert!(!p.contains("\"stage\": "), "{p}");
        let p = of(
            "t",
            "0000",
            None,
            Stage::parse("qa").unwrap(),
            Path::new("/w"),
        );
        assert!(
            p.contains("\"stage\": \"qa\"") && p.contains("final QA"),
            "{p}"
        );
    }
}
