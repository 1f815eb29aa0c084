//! A run never turns a host's permission checks off, and refuses a host the person set up
//! to run with them off: a bypass flag among the arguments the person adds, or the
//! setting that does the same in the host's user or project settings (the hosts table
//! names both: `hosts::Bypass`). The gates stay the human's either way; this keeps the
//! model's other tools (its shell, its edits) under the person's own rules while nobody
//! watches.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::hosts::Bypass;

/// Why `extra` (the arguments the person adds to the host's command line) or the host's
/// settings turn its permission checks off, if they do.
pub fn found(b: &Bypass, extra: &[String], project: &Path, home: Option<&Path>) -> Option<String> {
    if let Some(flag) = flag_in(b, extra) {
        return Some(format!(
            "the arguments given to the host include `{flag}`, which turns its permission checks off; a run keeps them as you set them"
        ));
    }
    let key = b.key.join(".");
    for file in files(b, project, home) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if value_at(&file, &text, b.key).as_deref() == Some(b.value) {
            return Some(format!(
                "{} sets `{key}` to `{}`, which turns the host's permission checks off; a run starts no host so (set another mode there, or name a settings file without it)",
                file.display(),
                b.value
            ));
        }
    }
    None
}

/// The bypass flag among `extra`, as written (`--flag` or `--flag=value`, a value in the
/// next argument too).
fn flag_in(b: &Bypass, extra: &[String]) -> Option<String> {
    let joined: Vec<String> = extra
        .iter()
        .zip(extra.iter().skip(1).map(Some).chain([None]))
        .map(|(a, next)| match (a.contains('='), next) {
            (false, Some(n)) if a.starts_with("--") && !n.starts_with('-') => format!("{a}={n}"),
            _ => a.clone(),
        })
        .collect();
    b.flags
        .iter()
        .find(|f| {
            extra.iter().any(|a| a == *f)
                || joined
                    .iter()
                    .any(|a| a == *f || a.starts_with(&format!("{f}=")))
        })
        .map(|f| f.to_string())
}

/// The settings files to read: `./…` in the project, the others in the host's user folder.
fn files(b: &Bypass, project: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let user = b
        .user_var
        .and_then(std::env::var_os)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(b.user_dir)));
    b.files
        .iter()
        .filter_map(|f| match f.strip_prefix("./") {
            Some(rel) => Some(project.join(rel)),
            None => user.as_ref().map(|u| u.join(f)),
        })
        .collect()
}

/// The text value at `key` in a JSON or TOML file (by its extension).
fn value_at(file: &Path, text: &str, key: &[&str]) -> Option<String> {
    let v: Value = if file.extension().is_some_and(|e| e == "toml") {
        let t: toml::Table = toml::from_str(text).ok()?;
        serde_json::to_value(t).ok()?
    } else {
        serde_json::from_str(text).ok()?
    };
    key.iter()
        .try_fold(&v, |v, k| v.get(k))
        .and_then(Value::as_str)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude() -> Bypass {
        crate::hosts::HOSTS[0].headless.unwrap().bypass
    }

    fn codex() -> Bypass {
        crate::hosts::HOSTS[1].headless.unwrap().bypass
    }

    #[test]
    fn a_bypass_flag_is_refused_however_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for given in [
            &["--dangerously-skip-permissions"][..],
            &["--permission-mode", "bypassPermissions"],
            &["--permission-mode=bypassPermissions"],
        ] {
            let why = found(&claude(), &args(given), p, None).unwrap();
            assert!(why.contains("turns its permission checks off"), "{why}");
        }
        assert_eq!(
            found(&claude(), &args(&["--permission-mode", "default"]), p, None),
            None
        );
        assert!(found(
            &codex(),
            &args(&["--sandbox", "danger-full-access"]),
            p,
            None
        )
        .is_some());
        assert!(found(&codex(), &args(&["--yolo"]), p, None).is_some());
    }

    #[test]
    fn a_setting_that_turns_the_checks_off_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("p"), dir.path().join("h"));
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        let local = project.join(".claude/settings.local.json");
        std::fs::write(&local, r#"{"permissions": {"defaultMode": "acceptEdits"}}"#).unwrap();
        assert_eq!(found(&claude(), &[], &project, Some(&home)), None);
        std::fs::write(
            &local,
            r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
        )
        .unwrap();
        let why = found(&claude(), &[], &project, Some(&home)).unwrap();
        assert!(
            why.contains("settings.local.json") && why.contains("permissions.defaultMode"),
            "{why}"
        );
        let codex_file = home.join(".codex/config.toml");
        std::fs::write(
            &codex_file,
            "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n",
        )
        .unwrap();
        if std::env::var_os("CODEX_HOME").is_none() {
            assert_eq!(found(&codex(), &[], &project, Some(&home)), None);
            std::fs::write(&codex_file, "sandbox_mode = \"danger-full-access\"\n").unwrap();
            assert!(found(&codex(), &[], &project, Some(&home)).is_some());
        }
    }
}
