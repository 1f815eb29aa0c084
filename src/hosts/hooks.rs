//! The hooks a host runs in the person's place when its dialog opens: Claude Code's
//! `Elicitation` hook answers a form before it is shown (its TUI never shows it, and
//! `claude -p` takes the hook's answer), and its `ElicitationResult` hook may change the
//! person's answer after it. A dialog's answer is the human's only where no such hook
//! stands between the form and the server, or the human approved the one that does.
//!
//! Where Claude Code 2.1.330 reads them (read from its binary, each checked on the pinned
//! CLI): the user's `settings.json` in `CLAUDE_CONFIG_DIR` (else `~/.claude`), the project's
//! `.claude/settings.json` and `.claude/settings.local.json`, the managed
//! `/etc/claude-code/managed-settings.json` and the files of `managed-settings.d/` beside
//! it, the file or JSON its command line names with `--settings`, and the plugins it
//! installed (a plugin's `plugin.json` or `hooks/hooks.json`, under the configuration
//! folder's `plugins/`). Every hook of those events is counted, whatever its matcher (the
//! name a host gives this server is the host's), and whether a plugin is enabled or hooks
//! are turned off: a hook that would not run only asks for an approval it does not need.
//!
//! A hook is known by its digest: the SHA-256 of its event, matcher and entry as written,
//! and of each file its command names by path (a script edited after its approval is
//! another hook).

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The events whose hooks run in the person's place around a dialog.
pub const EVENTS: [&str; 2] = ["Elicitation", "ElicitationResult"];

/// Where Claude Code keeps its managed settings on Linux.
pub const MANAGED_DIR: &str = "/etc/claude-code";

/// The most files of the plugins' folder looked at, and how deep.
const MAX_PLUGIN_FILES: usize = 4_000;
const MAX_PLUGIN_DEPTH: usize = 8;
/// The largest settings file read, and the largest file a command names that is digested.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;
const MAX_SCRIPT_BYTES: u64 = 512 * 1024 * 1024;

/// Where a host looks for its settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The user's configuration folder (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// The user's home, for a command's `~/`.
    pub home: Option<PathBuf>,
    /// The project folders it may load settings from (where the host was started, and
    /// the project the call names), each once.
    pub projects: Vec<PathBuf>,
    /// The folder of managed settings ([`MANAGED_DIR`]).
    pub managed: PathBuf,
    /// What its command line gave with `--settings`: a file's path or JSON.
    pub flag: Option<String>,
}

impl Places {
    /// The places of a person's Claude Code: `config_dir` as `CLAUDE_CONFIG_DIR` names it
    /// (else `.claude` in `home`), the managed folder, and `projects`.
    pub fn new(
        home: Option<PathBuf>,
        config_dir: Option<PathBuf>,
        projects: Vec<PathBuf>,
    ) -> Places {
        let config_dir = config_dir
            .filter(|d| d.is_absolute())
            .or_else(|| home.as_ref().map(|h| h.join(".claude")));
        let mut unique: Vec<PathBuf> = Vec::new();
        for p in projects {
            if !unique.contains(&p) {
                unique.push(p);
            }
        }
        Places {
            config_dir,
            home,
            projects: unique,
            managed: PathBuf::from(MANAGED_DIR),
            flag: None,
        }
    }
}

/// One hook on the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// `Elicitation` or `ElicitationResult`.
    pub event: String,
    /// Where it is written: a file's path, or `--settings` on the host's command line.
    pub source: String,
    /// What it runs, as written (`command` of a command hook, else its entry as JSON).
    pub runs: String,
    /// Its digest ([module](self) says of what).
    pub sha256: String,
}

/// Every hook on the dialog the host would run from `places`, each once (the same entry
/// in two files is two hooks: each is run).
pub fn found(places: &Places) -> Vec<Hook> {
    let mut files: Vec<PathBuf> = Vec::new();
    files.extend(places.config_dir.iter().map(|d| d.join("settings.json")));
    for p in &places.projects {
        files.push(p.join(".claude/settings.json"));
        files.push(p.join(".claude/settings.local.json"));
    }
    files.push(places.managed.join("managed-settings.json"));
    files.extend(json_files_in(&places.managed.join("managed-settings.d")));
    if let Some(dir) = &places.config_dir {
        files.extend(plugin_files(&dir.join("plugins")));
    }
    let mut out = Vec::new();
    for file in &files {
        let Some(mut value) = read_json(file) else {
            continue;
        };
        // A plugin's manifest may name its hooks' file instead of holding them.
        if let Some(named) = value.get("hooks").and_then(Value::as_str) {
            let root = file
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("/"));
            match read_json(&root.join(named)) {
                Some(v) => value = v,
                None => continue,
            }
        }
        out.extend(in_settings(&value, &file.display().to_string(), places));
    }
    if let Some(flag) = &places.flag {
        let value = serde_json::from_str::<Value>(flag).ok().or_else(|| {
            let path = Path::new(flag);
            let path = match places.projects.first() {
                Some(base) if path.is_relative() => base.join(path),
                _ => path.to_path_buf(),
            };
            read_json(&path)
        });
        if let Some(value) = value {
            out.extend(in_settings(
                &value,
                "--settings on the host's command line",
                places,
            ));
        }
    }
    out
}

/// A JSON file's value, when it is one of reasonable size.
fn read_json(path: &Path) -> Option<Value> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SETTINGS_BYTES {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// The `*.json` files of a folder, in name order, hidden ones left out (as Claude Code
/// reads `managed-settings.d/`).
fn json_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.starts_with('.')
        })
        .collect();
    names.sort();
    names
}

/// The files of the installed plugins that can hold hooks (`.claude-plugin/plugin.json`,
/// its `hooks` a table or a file's path, and `hooks/hooks.json`): each `installPath` that
/// `installed_plugins.json` names, and every such file under `plugins/cache/` (where Claude
/// Code installs them), searched a bounded depth without following links.
fn plugin_files(dir: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for list in ["installed_plugins.json", "installed_plugins_v2.json"] {
        if let Some(v) = read_json(&dir.join(list)) {
            install_paths(&v, &mut roots);
        }
    }
    let mut out: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| {
            [
                r.join(".claude-plugin/plugin.json"),
                r.join("hooks/hooks.json"),
            ]
        })
        .collect();
    let mut seen = 0;
    let mut stack = vec![(dir.join("cache"), 0)];
    while let Some((d, depth)) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            seen += 1;
            if seen > MAX_PLUGIN_FILES {
                stack.clear();
                break;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() && depth < MAX_PLUGIN_DEPTH {
                stack.push((entry.path(), depth + 1));
            } else if kind.is_file() && (name == "plugin.json" || name == "hooks.json") {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every `installPath` string in the installed plugins' list, whatever its version's shape.
fn install_paths(v: &Value, out: &mut Vec<PathBuf>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(p) if k == "installPath" => out.push(PathBuf::from(p)),
                    other => install_paths(other, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| install_paths(i, out)),
        _ => {}
    }
}

/// The dialog hooks a settings value names (its `hooks`, as settings and plugins write
/// them): `{"hooks": {"Elicitation": [{"matcher": …, "hooks": [{…}]}]}}`.
pub fn in_settings(value: &Value, source: &str, places: &Places) -> Vec<Hook> {
    let mut out = Vec::new();
    for event in EVENTS {
        let groups = value
            .get("hooks")
            .and_then(|h| h.get(event))
            .and_then(Value::as_array);
        for group in groups.into_iter().flatten() {
            let matcher = group.get("matcher").cloned().unwrap_or(Value::Null);
            let entries = group.get("hooks").and_then(Value::as_array);
            for entry in entries.into_iter().flatten() {
                out.push(hook(event, &matcher, entry, source, places));
            }
        }
    }
    out
}

fn hook(event: &str, matcher: &Value, entry: &Value, source: &str, places: &Places) -> Hook {
    let command = entry.get("command").and_then(Value::as_str);
    let mut h = Sha256::new();
    let written = serde_json::json!({"event": event, "matcher": matcher, "hook": entry});
    h.update(written.to_string().as_bytes());
    for file in command.map(|c| named_files(c, places)).unwrap_or_default() {
        h.update(b"\0file\0");
        h.update(file.display().to_string().as_bytes());
        h.update(b"\0");
        match digest_of(&file) {
            Some(d) => h.update(d),
            None => h.update(b"unreadable"),
        }
    }
    Hook {
        event: event.to_string(),
        source: source.to_string(),
        runs: command.map_or_else(|| entry.to_string(), str::to_string),
        sha256: h.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// The SHA-256 of a file's bytes, read in pieces; `None` when it cannot be read or is
/// larger than any script.
fn digest_of(path: &Path) -> Option<[u8; 32]> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    if f.metadata().ok()?.len() > MAX_SCRIPT_BYTES {
        return None;
    }
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Some(h.finalize().into())
}

/// The files a hook's command names by path: each word (quotes taken off, a leading
/// `NAME=` assignment dropped) that is an absolute path, starts with `~/` or
/// `$CLAUDE_PROJECT_DIR`, or holds a `/`, and is a regular file there.
fn named_files(command: &str, places: &Places) -> Vec<PathBuf> {
    let project = places.projects.first();
    let mut out = Vec::new();
    for word in command.split_whitespace() {
        let word = word.trim_matches(['"', '\'', ';', '&', '|', '(', ')']);
        let word = match word.split_once('=') {
            Some((name, value)) if !name.contains('/') => value.trim_matches(['"', '\'']),
            _ => word,
        };
        let path = if let Some(rest) = word
            .strip_prefix("$CLAUDE_PROJECT_DIR")
            .or_else(|| word.strip_prefix("${CLAUDE_PROJECT_DIR}"))
        {
            project.map(|p| p.join(rest.trim_start_matches('/')))
        } else if let Some(rest) = word.strip_prefix("~/") {
            places.home.as_ref().map(|h| h.join(rest))
        } else if word.starts_with('/') {
            Some(PathBuf::from(word))
        } else if word.contains('/') {
            project.map(|p| p.join(word))
        } else {
            None
        };
        if let Some(p) = path.filter(|p| p.is_file()) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(dir: &Path) -> Places {
        let home = dir.join("home");
        let project = dir.join("project");
        let mut p = Places::new(Some(home), None, vec![project.clone(), project]);
        p.managed = dir.join("etc");
        p
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const HOOK: &str = r#"{"hooks": {"Elicitation": [{"matcher": "", "hooks": [{"type": "command", "command": "python3 $CLAUDE_PROJECT_DIR/.claude/answer.py"}]}], "PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#;

    #[test]
    fn each_place_claude_code_reads_is_searched_and_its_dialog_hooks_found() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let p = places(d);
        assert_eq!(p.projects.len(), 1, "each project once");
        assert!(found(&p).is_empty());
        write(&d.join("project/.claude/answer.py"), "print('accept')\n");
        for file in [
            "home/.claude/settings.json",
            "project/.claude/settings.json",
            "project/.claude/settings.local.json",
            "etc/managed-settings.json",
            "etc/managed-settings.d/10-team.json",
            "home/.claude/plugins/cache/m/p/1.0/hooks/hooks.json",
            "elsewhere/p2/hooks/hooks.json",
        ] {
            write(&d.join(file), HOOK);
        }
        // Plugins installed where their list says, one manifest naming its hooks' file.
        write(
            &d.join("elsewhere/p3/.claude-plugin/plugin.json"),
            r#"{"name": "p3", "hooks": "./hooks/mine.json"}"#,
        );
        write(&d.join("elsewhere/p3/hooks/mine.json"), HOOK);
        let listed = serde_json::json!({"plugins": {"p2@m": [{"installPath": d.join("elsewhere/p2")}], "p3@m": [{"installPath": d.join("elsewhere/p3")}]}});
        write(
            &d.join("home/.claude/plugins/installed_plugins.json"),
            &listed.to_string(),
        );
        let hooks = found(&p);
        assert_eq!(hooks.len(), 8, "{hooks:#?}");
        assert!(hooks.iter().all(|h| h.event == "Elicitation"));
        // The same entry is the same hook wherever it is written, until its script changes.
        assert!(hooks.iter().all(|h| h.sha256 == hooks[0].sha256));
        write(&d.join("project/.claude/answer.py"), "print('decline')\n");
        assert_ne!(
            found(&p)[0].sha256,
            hooks[0].sha256,
            "the script is digested"
        );
        // A result hook counts too, and one given on the command line.
        let mut q = places(d);
        q.flag = Some(r#"{"hooks": {"ElicitationResult": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#.into());
        let hooks = found(&q);
        assert_eq!(hooks.last().unwrap().event, "ElicitationResult");
        assert_eq!(
            hooks.last().unwrap().source,
            "--settings on the host's command line"
        );
    }
}
