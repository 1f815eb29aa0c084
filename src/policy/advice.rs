//! How to add checks, for a project that names none, with examples in the project's own
//! language, told by the files at its root.

use crate::files::Project;

/// The build files that tell a project's language, and the checks to suggest for it
/// (`[checks]` lines of `.bmad/config.toml`).
const BY_FILE: &[(&[&str], &str, &str)] = &[
    (
        &["Cargo.toml"],
        "Rust (Cargo.toml)",
        "test = \"cargo test --locked\"\nlint = { command = \"cargo clippy -- -D warnings\", timeout_secs = 300 }",
    ),
    (
        &["pyproject.toml", "setup.py", "setup.cfg"],
        "Python",
        "test = \"python -m pytest -q\"\nlint = \"ruff check .\"",
    ),
    (
        &["package.json"],
        "JavaScript (package.json)",
        "test = \"npm test\"\nlint = \"npm run lint\"",
    ),
    (
        &["go.mod"],
        "Go (go.mod)",
        "test = \"go test ./...\"\nvet = \"go vet ./...\"",
    ),
];

/// Checks for a project whose language none of [`BY_FILE`] tells.
const NEUTRAL: &str = "test = \"<the command that runs your tests>\"\nlint = { command = \"<your linter>\", timeout_secs = 300 }";

/// The notice that no checks are configured, with examples for the project's language.
pub fn how_to_add_checks(project: &Project) -> String {
    let found = BY_FILE
        .iter()
        .find(|(files, _, _)| files.iter().any(|f| project.path(f).is_file()));
    let (language, examples) = match found {
        Some((_, language, examples)) => (format!(" For this {language} project, e.g."), *examples),
        None => (
            " For example (your project's own commands):".to_string(),
            NEUTRAL,
        ),
    };
    format!(
        "No checks are configured, so nothing was run to show that the code builds and its tests pass. To have the server run them after `dev` and before QA completes, name them in .bmad/config.toml.{language}\n[checks]\n{examples}\nthen approve the file in a terminal: `bmad-mcp config approve`. (Said once per session.)"
    )
}
