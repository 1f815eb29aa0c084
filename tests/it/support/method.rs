//! The pinned BMAD method as its users install it: the `bmad-method` package that
//! `./scripts/test` installs into `target/npm/bmad-method`, run as its installer into a
//! throw-away project, offline and non-interactively. Shared by every test of the method.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const PINNED: &str = "6.12.0";

/// The installer's binary, or `None` (with the reason printed) when `./scripts/test` could
/// not install the package.
pub fn installer() -> Option<PathBuf> {
    let bin = crate::support::npm::package_bin(
        "bmad-method",
        "bmad-method",
        "the BMAD method's install",
    )?;
    let stamp = bin
        .ancestors()
        .nth(3)
        .unwrap()
        .join(format!("installed-{PINNED}"));
    assert!(
        stamp.exists(),
        "{} is missing: run ./scripts/test, which installs bmad-method {PINNED}",
        stamp.display()
    );
    Some(bin)
}

/// Runs the method's installer into `project` for `tool`, as a user would with
/// `npx bmad-method install … --yes`: offline (npm's update check answered from an empty
/// cache) and in a throw-away home.
pub fn install(installer: &Path, project: &Path, tool: &str) {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project).unwrap();
    let out = Command::new(installer)
        .args(["install", "--directory"])
        .arg(project)
        .args(["--modules", "bmm", "--tools", tool, "--yes"])
        .args(["--user-name", "Ada", "--communication-language", "French"])
        .args(["--document-output-language", "French"])
        .env("HOME", home.path())
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("the installer runs");
    assert!(
        out.status.success(),
        "bmad-method install --tools {tool}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The installed template of the method's skill `skill` (`bmad-prd`, `bmad-architecture`)
/// in `project`'s skills folder `skills`: the file its `customize.toml` names under
/// `key`.
pub fn template(project: &Path, skills: &str, skill: &str, key: &str) -> String {
    let dir = project.join(skills).join(skill);
    let custom = std::fs::read_to_string(dir.join("customize.toml")).unwrap();
    let file = custom
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("{key} in {skill}'s customize.toml"))
        .trim_matches('"');
    std::fs::read_to_string(dir.join(file)).unwrap()
}

/// A document written in an installed `template` as the method's skill leaves one: the
/// template's own shape (its fenced `markdown` block, where it surrounds one with notes),
/// every heading as the template words it, each guide comment acted on (`words` in its
/// place) and each placeholder (`{…}`, `[…]`) filled with `words`.
pub fn written_in(template: &str, words: &str) -> String {
    let shape = match template.find("```markdown\n") {
        Some(at) => {
            let inner = &template[at + "```markdown\n".len()..];
            &inner[..inner.find("\n```\n").expect("the fenced shape ends")]
        }
        None => template,
    };
    let comment = regex::Regex::new(r"(?s)<!--.*?-->").unwrap();
    let placeholder = regex::Regex::new(r"\{[^{}\n]*\}|\[[^\[\]\n]+\]").unwrap();
    let text = comment.replace_all(shape, regex::NoExpand(words));
    let filled = placeholder.replace_all(&text, regex::NoExpand(words));
    format!("{}\n", filled.trim_end())
}
