//! What the installed method's skills need at run time that bmad-mcp does not: they run
//! their scripts with `uv run` (6.12's `bmad-build` renders itself with `uv run …
//! render_skill.py` and halts without `uv`; its scripts ask for Python 3.11). Where a project
//! has the install and no `uv` is on `PATH`, that is said where the install is (a task's
//! start, `bmad-mcp init`, `bmad-mcp prompts`); the server itself needs neither. The
//! skills' own `SKILL.md` is read only when `uv` is missing, so that a machine with it opens
//! nothing more.

use std::ffi::OsStr;
use std::path::Path;

use super::{Install, Method, MAX_FILE_BYTES};

/// The program the skills run their scripts with.
const UV: &str = "uv";
/// The skill looked at first: the one that builds a story, which halts without `uv`.
const FIRST: &str = "bmad-build";
/// The most `SKILL.md` files read to find one that runs `uv`.
const MOST_READ: usize = 8;

/// The notice that the install's skills need `uv` and it is not on `PATH`; `None` with no
/// install, with `uv` found, or where no skill read runs it.
pub fn uv_notice(method: &Method) -> Option<String> {
    let install = method.install()?;
    if on_path(std::env::var_os("PATH").as_deref(), UV) {
        return None;
    }
    let skill = runs_uv(method, install)?;
    Some(format!(
        "The BMAD method's skills run their scripts with `uv` (`{skill}` begins with `uv run`; 6.12's `bmad-build` renders itself so and needs Python 3.11), and no `uv` is on PATH: install uv for the method's skills to run (bmad-mcp itself does not need it)."
    ))
}

/// The first installed skill, `bmad-build` first, whose `SKILL.md` runs `uv`.
fn runs_uv(method: &Method, install: &Install) -> Option<String> {
    let mut skills: Vec<_> = install
        .skills
        .iter()
        .filter(|s| s.folder.is_some())
        .collect();
    skills.sort_by_key(|s| s.name != FIRST);
    skills.into_iter().take(MOST_READ).find_map(|s| {
        let rel = format!("{}/SKILL.md", s.dir()?);
        let text = method.project().read_at_most(&rel, MAX_FILE_BYTES).ok()??;
        text.contains("uv run").then(|| s.name.clone())
    })
}

/// Whether a program `name` is in one of the folders of `path` (a `PATH` value): a file,
/// executable where the system marks it so (`name.exe` on Windows).
fn on_path(path: Option<&OsStr>, name: &str) -> bool {
    let Some(path) = path else {
        return false;
    };
    let file = if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    };
    std::env::split_paths(path).any(|dir| runnable(&dir.join(&file)))
}

fn runnable(file: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(file) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_only_where_path_has_it_runnable() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let path = std::env::join_paths([dir.path().join("none"), bin.clone()]).unwrap();
        assert!(!on_path(Some(&path), "uv"));
        assert!(!on_path(None, "uv"));
        let uv = bin.join(if cfg!(windows) { "uv.exe" } else { "uv" });
        std::fs::write(&uv, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert!(!on_path(Some(&path), "uv"), "not executable");
            std::fs::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        assert!(on_path(Some(&path), "uv"));
    }

    #[test]
    fn the_skill_that_runs_uv_is_named_and_none_without_one() {
        let (dir, project) = crate::files::project::tests::project();
        let skill = |name: &str| super::super::Skill {
            name: name.into(),
            description: String::new(),
            folder: Some(".claude/skills"),
        };
        let install = Install {
            skills: vec![skill("bmad-prd"), skill(FIRST)],
            ..Install::default()
        };
        let write = |name: &str, text: &str| {
            let d = dir.path().join(".claude/skills").join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("SKILL.md"), text).unwrap();
        };
        write("bmad-prd", "---\nname: bmad-prd\n---\nCoach the user.\n");
        let method = Method::known(&project, Some(install.clone()));
        assert_eq!(runs_uv(&method, &install), None);
        write(FIRST, "Run:\n\n```bash\nuv run --no-cache x.py\n```\n");
        let method = Method::known(&project, Some(install.clone()));
        assert_eq!(runs_uv(&method, &install).as_deref(), Some(FIRST));
        assert_eq!(uv_notice(&Method::known(&project, None)), None);
    }
}
