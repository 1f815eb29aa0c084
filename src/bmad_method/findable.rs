//! The confirmed planning documents placed where the method's own skills look for them:
//! its epics-and-stories, sprint-planning, correct-course and retrospective skills search
//! `{planning_artifacts}/*prd*.md` and `{planning_artifacts}/*architecture*`. A copy is
//! written there with each confirmation of the PRD or the architecture (so it stays in step
//! with the confirmed document), on by default when the method is installed; the team or
//! the person turns it off with `[bmad-mcp] planning_copies = false`.

use crate::workflow::Stage;

use super::Install;

/// The copy of a confirmed document: where it goes and what it holds, and the sentence
/// that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    pub path: String,
    pub content: String,
    pub notice: String,
}

/// The name a stage's document is found by in `planning_artifacts`: `None` for a stage
/// whose document the method's skills do not look for there.
fn kind(stage: Stage) -> Option<&'static str> {
    match stage.id() {
        "po" => Some("prd"),
        "architect" => Some("architecture"),
        _ => None,
    }
}

/// How every copy begins: a file there that does not is someone's own, never replaced.
pub const COPY_MARK: &str = "<!-- A copy of ";

/// The copy of `document` (the confirmed document of `stage` in task `task`, kept at
/// `source`), when the install wants one; `Err` with the notice that says why none is made
/// where the install's `planning_artifacts` is no place for it (a hidden folder, the
/// install's own, too deep).
pub fn copy(
    install: &Install,
    stage: Stage,
    task: &str,
    source: &str,
    document: &str,
) -> Option<Result<Copy, String>> {
    let kind = kind(stage)?;
    let folder = install.settings.planning_artifacts.as_deref()?;
    if !install.settings.planning_copies {
        return None;
    }
    let path = format!("{folder}/{kind}-{task}.md");
    if !crate::files::project::is_planning_copy(&path) {
        return Some(Err(format!(
            "No copy of the confirmed document for the BMAD method's skills: {} (the method's `planning_artifacts`) is a hidden folder, inside the install, or too deep, where the server writes nothing.",
            crate::code::visible(&crate::code::clip(folder, 200))
        )));
    }
    let content = format!(
        "{COPY_MARK}{source}, the {kind} confirmed in bmad-mcp task `{task}`, for the BMAD method's skills; it is rewritten at each confirmation: edit the original. -->\n\n{document}"
    );
    Some(Ok(Copy {
        notice: format!(
            "The confirmed {} is also at {path}, where the BMAD method's own skills (epics and stories, sprint planning, retrospective) look for it; it is rewritten at each confirmation (`[bmad-mcp] planning_copies = false` in _bmad/custom/config.toml turns this off).",
            if kind == "prd" { "PRD" } else { "architecture" }
        ),
        path,
        content,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prd_is_copied_where_the_method_looks_unless_turned_off() {
        let mut install = Install::default();
        install.settings.planning_artifacts = Some("_bmad-output/planning-artifacts".into());
        install.settings.planning_copies = true;
        let c = copy(
            &install,
            Stage::Po,
            "todo",
            ".bmad/specs/todo/prd.md",
            "# PRD\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.path, "_bmad-output/planning-artifacts/prd-todo.md");
        assert!(c.content.ends_with("# PRD\n"));
        assert!(
            copy(&install, Stage::Sm, "todo", "x", "y").is_none(),
            "not looked for"
        );
        install.settings.planning_artifacts = Some("_bmad/plans".into());
        let refused = copy(&install, Stage::Po, "todo", "x", "y").unwrap();
        assert!(refused.unwrap_err().contains("`planning_artifacts`"));
        install.settings.planning_copies = false;
        assert!(copy(&install, Stage::Po, "todo", "x", "y").is_none());
    }
}
