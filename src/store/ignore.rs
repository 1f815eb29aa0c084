//! `bmad-mcp init`: the project's `.gitignore` gets the lines that keep this clone's own
//! files out of git (docs/team.md): the lock, the task mapping (an index rebuilt from the
//! session files), the human's approval of the checks (each human approves what their own
//! machine runs), the server's fault records (this machine's diagnostics), and interrupted
//! writes. Everything else the server writes is shared:
//! the sessions and their `temp/` texts, the documents, the human's `.bmad/`. The lines
//! sit between two marker lines; running it again rewrites only that block, and no other
//! line of the file changes. Its `.gitattributes` gets, the same way, the line that has git
//! merge the BMAD method's `sprint-status.yaml` with the server's merge driver. Each file
//! written is recorded as the server's ([`written.rs`](crate::store::written)).

use super::Project;
use crate::error::Result;

pub const GITIGNORE: &str = ".gitignore";
const BEGIN: &str = "# >>> bmad-mcp: files local to this clone (docs/team.md)";
const END: &str = "# <<< bmad-mcp";

/// The block's lines between the markers.
pub const LOCAL_FILES: [&str; 7] = [
    "/.bmad-task/.lock",
    "/.bmad-task/dashboard.json",
    "/.bmad-task/task-mapping.json",
    "/.bmad-task/task-mapping.json.*",
    "/.bmad-task/config-approved.json",
    "/.bmad-task/faults/",
    ".bmad-tmp-*",
];

/// What `init` did to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignored {
    Created,
    Added,
    Updated,
    AlreadyThere,
}

/// The name of the merge driver of the method's `sprint-status.yaml`, in `.gitattributes`
/// and in a clone's git config.
pub const MERGE_DRIVER: &str = "bmad-sprint-status";
pub const GITATTRIBUTES: &str = ".gitattributes";
const ATTRIBUTES_BEGIN: &str =
    "# >>> bmad-mcp: the BMAD method's sprint status merges key by key (docs/team.md)";
/// The block's lines in `.gitattributes`: the method's file, in whichever folder its
/// `implementation_artifacts` names.
pub const ATTRIBUTES: [&str; 1] = ["sprint-status.yaml merge=bmad-sprint-status"];

fn block_of(begin: &str, lines: &[&str]) -> String {
    let mut b = format!("{begin}\n");
    for line in lines {
        b.push_str(line);
        b.push('\n');
    }
    b.push_str(END);
    b.push('\n');
    b
}

/// `text` with `block` (opening with `begin`) in place of the one there, else appended.
fn in_place(text: &str, begin_line: &str, block: String) -> String {
    let begin = text
        .match_indices(begin_line)
        .map(|(i, _)| i)
        .find(|i| *i == 0 || text.as_bytes()[i - 1] == b'\n');
    if let Some(start) = begin {
        if let Some(len) = text[start..].find(&format!("\n{END}")) {
            let mut end = start + len + 1 + END.len();
            if text[end..].starts_with('\n') {
                end += 1;
            }
            return format!("{}{block}{}", &text[..start], &text[end..]);
        }
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    out
}

/// Writes the block into the project's `.gitignore` (atomically; not at all when it is
/// there as it should be).
pub fn write_gitignore(project: &Project) -> Result<Ignored> {
    write_block(project, GITIGNORE, BEGIN, &LOCAL_FILES)
}

/// Writes the merge driver's block into the project's `.gitattributes`, as
/// [`write_gitignore`] does its own.
pub fn write_gitattributes(project: &Project) -> Result<Ignored> {
    write_block(project, GITATTRIBUTES, ATTRIBUTES_BEGIN, &ATTRIBUTES)
}

fn write_block(project: &Project, file: &str, begin: &str, lines: &[&str]) -> Result<Ignored> {
    let before = project.read(file).map_err(|p| p.into_error(file))?;
    let after = in_place(
        before.as_deref().unwrap_or(""),
        begin,
        block_of(begin, lines),
    );
    let done = match &before {
        None => Ignored::Created,
        Some(b) if *b == after => return Ok(Ignored::AlreadyThere),
        Some(b) if b.contains(begin) => Ignored::Updated,
        Some(_) => Ignored::Added,
    };
    project.write_top_file(file, after.as_bytes())?;
    // The server's write, no one's change in a round or since a stage's document.
    super::written::wrote(project, &[file.to_string()]);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block() -> String {
        block_of(BEGIN, &LOCAL_FILES)
    }

    /// `text` with the `.gitignore` block in it.
    fn with_block(text: &str) -> String {
        in_place(text, BEGIN, block())
    }

    #[test]
    fn the_block_is_added_once_and_other_lines_are_kept() {
        let theirs = "target/\n# mine\n*.log";
        let once = with_block(theirs);
        assert!(once.starts_with("target/\n# mine\n*.log\n# >>> bmad-mcp"));
        assert_eq!(with_block(&once), once, "idempotent");
        for line in LOCAL_FILES {
            assert_eq!(once.lines().filter(|l| *l == line).count(), 1, "{line}");
        }
        assert_eq!(with_block(""), block());
        let attributes = in_place(
            "*.png binary\n",
            ATTRIBUTES_BEGIN,
            block_of(ATTRIBUTES_BEGIN, &ATTRIBUTES),
        );
        assert!(
            attributes.starts_with("*.png binary\n# >>> bmad-mcp: the BMAD"),
            "{attributes}"
        );
        assert!(
            attributes.contains("\nsprint-status.yaml merge=bmad-sprint-status\n# <<< bmad-mcp\n")
        );
    }

    #[test]
    fn an_older_block_is_replaced_in_place() {
        let old = format!("a\n{BEGIN}\n/.bmad-task/.lock\n{END}\nb\n");
        let new = with_block(&old);
        assert_eq!(new, format!("a\n{}b\n", block()));
        // A block whose end marker is gone is not cut into: a new one is appended.
        let torn = format!("a\n{BEGIN}\nx\n");
        assert_eq!(with_block(&torn), format!("{torn}{}", block()));
    }
}
