//! How many `git` processes each call starts (section `git`): the example's workflow in a
//! project that is a git repository with a commit, and `status` in a project outside any
//! repository. The server finds `git` on its `PATH`; the first `git` there is a script that
//! writes a line to a log and runs the real one, so every start is counted, whatever the
//! server asks. Nothing in the repository changes between the calls (no commit, no
//! branch): each call's count is what asking git costs when git has nothing new to say.
//! Only the developer's work, a new file in the work tree before `submit dev`, is there
//! for the server to see: a report claiming changes that no file shows is refused. The
//! workflow runs twice: in a plain project, and with the BMAD method installed
//! (`method.rs`), whose files the server writes beside the documents.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::docs::Docs;
use crate::driver::Server;
use crate::run::{project_dir, workflow_calls};
use crate::table::Table;
use crate::{Config, Res, OBJECTIVE};

/// The wrapper's folder (put first on the server's `PATH`) and its log.
struct Counter {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    log: PathBuf,
}

impl Counter {
    /// A `git` script in a fresh folder that logs its arguments and execs `real`.
    fn new(real: &Path) -> Res<Counter> {
        let dir = tempfile::Builder::new()
            .prefix("bmad-bench-git-")
            .tempdir()?;
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin)?;
        let log = dir.path().join("git.log");
        let (real_s, log_s) = (real.display().to_string(), log.display().to_string());
        if [&real_s, &log_s].iter().any(|p| p.contains('\'')) {
            return Err("a path with a quote cannot go into the git wrapper".into());
        }
        let script =
            format!("#!/bin/sh\nprintf '%s\\n' \"git $*\" >> '{log_s}'\nexec '{real_s}' \"$@\"\n");
        let path = bin.join("git");
        std::fs::write(&path, script)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        std::fs::write(&log, "")?;
        Ok(Counter {
            _dir: dir,
            bin,
            log,
        })
    }

    /// The server's `PATH`: the wrapper first, then the bench's own.
    fn path(&self) -> Res<std::ffi::OsString> {
        let rest = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(self.bin.clone()).chain(std::env::split_paths(&rest));
        Ok(std::env::join_paths(dirs)?)
    }

    /// Every start logged so far, one line each: the git command without the options
    /// that precede it (`-C <project>`, `-c <setting>`), which every start repeats.
    fn starts(&self) -> Res<Vec<String>> {
        Ok(std::fs::read_to_string(&self.log)?
            .lines()
            .map(command)
            .collect())
    }

    fn spawn(&self, cfg: &Config, project: &Path) -> Res<Server> {
        let line = [cfg.bin.display().to_string()];
        let mut server = Server::spawn_line_with(&line, project, false, &[("PATH", self.path()?)])?;
        server.handshake()?;
        Ok(server)
    }

    /// Makes the call and returns the git commands it started.
    fn call(&self, server: &mut Server, args: &Value) -> Res<(Value, Vec<String>)> {
        let before = self.starts()?.len();
        let reply = server.call(args)?;
        Ok((reply.structured, self.starts()?.split_off(before)))
    }
}

/// A logged start (`git -C <dir> -c <k=v> rev-parse …`) as `rev-parse …`.
fn command(line: &str) -> String {
    let mut words = line.split(' ').skip(1);
    let mut kept = Vec::new();
    while let Some(word) = words.next() {
        if kept.is_empty() && (word == "-C" || word == "-c") {
            words.next();
        } else {
            kept.push(word);
        }
    }
    kept.join(" ")
}

/// The first `git` on the bench's `PATH`.
pub fn real_git() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
}

pub fn bench(cfg: &Config, docs: &Docs, table: &mut Table) -> Res<()> {
    let Some(real) = real_git() else {
        println!("\n-- git: no git on PATH; skipped");
        return Ok(());
    };
    println!("\n-- git: processes started per call (a git first on the server's PATH counts them)");
    let counter = Counter::new(&real)?;
    let installer = crate::method::installer();
    for method in [None, installer.as_deref()] {
        let with = if method.is_some() {
            ", the BMAD method installed"
        } else {
            ""
        };
        let in_repo = in_repository(cfg, docs, &counter, &real, method)?;
        println!("  {:<24} {:>4}  commands{with}", "call", "git");
        for (label, started) in &in_repo {
            println!("  {label:<24} {:>4}  {}", started.len(), started.join("; "));
        }
        let most = |kind: &str| {
            in_repo
                .iter()
                .filter(|(label, _)| label.starts_with(kind))
                .map(|(_, s)| s.len())
                .max()
        };
        let kinds = [
            ("start", "start"),
            ("submit", "a submit"),
            ("answer", "an answer"),
            ("confirm", "a confirm"),
            ("approve", "approve"),
            ("status", "status"),
        ];
        for (kind, name) in kinds {
            if let Some(n) = most(kind) {
                table.single(
                    &format!("git processes: {name}, in a repository{with} (max)"),
                    n.to_string(),
                    "≤ 1",
                    Some(n <= 1),
                );
            }
        }
    }
    let outside = status_outside(cfg, &counter)?;
    println!(
        "  {:<24} {:>4}  {}",
        "status, no repository",
        outside.len(),
        outside.join("; ")
    );
    table.single(
        "git processes: status outside a repository",
        outside.len().to_string(),
        "0",
        Some(outside.is_empty()),
    );
    Ok(())
}

/// A project for the workflow in `work`: a git repository with one commit of a README, the
/// policy file with the default gates and, when `method` names its installer, the BMAD
/// method installed (committed with them, as a team shares it).
pub fn repository(real: &Path, work: &Path, method: Option<&Path>) -> Res<()> {
    std::fs::create_dir(work)?;
    std::fs::write(work.join("README.md"), "A project.\n")?;
    // The policy the project has without a file, in a file: read as a team's would be.
    std::fs::create_dir(work.join(".bmad"))?;
    std::fs::write(work.join(".bmad/config.toml"), "gates = \"auto\"\n")?;
    if let Some(installer) = method {
        crate::method::install(installer, work)?;
    }
    let git = |args: &[&str]| -> Res<()> {
        let out = Command::new(real).args(args).current_dir(work).output()?;
        if !out.status.success() {
            return Err(format!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(())
    };
    git(&["init", "-q"])?;
    git(&["config", "user.name", "Bench"])?;
    git(&["config", "user.email", "bench@example.org"])?;
    git(&["add", "-A"])?;
    git(&["commit", "-q", "-m", "A first commit"])?;
    Ok(())
}

/// The example's calls in such a project (with the method, the review in its layers).
pub fn calls(docs: &Docs, work: &Path, method: bool) -> Vec<(&'static str, Value)> {
    let mut calls = workflow_calls(docs, work);
    if method {
        for (label, args) in &mut calls {
            if *label == "submit review" {
                args["claude_result"] = Value::String(crate::method::in_layers(&docs.review));
            }
        }
    }
    calls
}

/// What the developer does before the call `label`: before `submit dev`, a new file.
pub fn before(label: &str, work: &Path) -> Res<()> {
    if label == "submit dev" {
        std::fs::write(work.join("scheduler.py"), "def run():\n    return []\n")?;
    }
    Ok(())
}

/// The example's calls in a repository with one commit (and the method, when `method`
/// names its installer): each call's git commands.
fn in_repository(
    cfg: &Config,
    docs: &Docs,
    counter: &Counter,
    real: &Path,
    method: Option<&Path>,
) -> Res<Vec<(&'static str, Vec<String>)>> {
    let project = project_dir()?;
    let work = project.path().join("project");
    repository(real, &work, method)?;

    let earlier = counter.starts()?.len();
    let mut server = counter.spawn(cfg, &work)?;
    let mut counted = vec![("handshake", counter.starts()?.split_off(earlier))];
    let mut session_id = Value::Null;
    for (label, mut args) in calls(docs, &work, method.is_some()) {
        if !session_id.is_null() {
            args["session_id"] = session_id.clone();
        }
        before(label, &work)?;
        let (reply, started) = counter.call(&mut server, &args)?;
        if label == "start" {
            session_id = reply["session_id"].clone();
        }
        counted.push((label, started));
    }
    let before = counter.starts()?.len();
    server.close()?;
    counted.push(("after the last reply", counter.starts()?.split_off(before)));
    Ok(counted)
}

/// `status` of a task in a project that no repository holds: its git commands.
fn status_outside(cfg: &Config, counter: &Counter) -> Res<Vec<String>> {
    let project = project_dir()?;
    let mut server = counter.spawn(cfg, project.path())?;
    let start = json!({"action": "start", "cwd": project.path(), "objective": OBJECTIVE});
    let (started, _) = counter.call(&mut server, &start)?;
    let status = json!({"action": "status", "session_id": started["session_id"]});
    let (_, commands) = counter.call(&mut server, &status)?;
    server.close()?;
    Ok(commands)
}
