//! The files each call of the workflow opens, and the git processes it starts (section
//! `opens`; skipped without `strace` or `git`): the example's workflow in a git repository
//! with the developer's work before `submit dev` (`git_calls.rs`), in a plain project and
//! with the BMAD method installed (`method.rs`), once each under `strace -f`. A call's
//! opens are the server's successful opens of the project's files and folders (reads,
//! writes, folders opened to list or to write in), not those of the git it starts; its git
//! processes are the `git` programs executed. It also counts the opens of the session's
//! file, of the policy (`.bmad/config.toml`, which the project has: the default gates,
//! `git_calls::repository`) and of the install's manifest: each read once a call at most.
//! `BENCH_BEFORE_BIN` measures another build the same way in the same run.
//!
//! The targets: with the method installed, the workflow's opens at most half of what the
//! server opened before the install, the policy and the session were read once a call
//! (main at 223f0a4, measured with this section: [`BEFORE_METHOD`]; without the method,
//! [`BEFORE_PLAIN`] is printed beside), one git process a call, and one read a call of the
//! session, the policy and the install.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::docs::Docs;
use crate::driver::Server;
use crate::git_calls::{before, calls, real_git, repository};
use crate::run::project_dir;
use crate::table::Table;
use crate::{Config, Res};

/// What main at 223f0a4 (the commit before the install was read once a call) opened over
/// the workflow, by this section: in a plain project, and with the method installed.
pub const BEFORE_PLAIN: u32 = 258;
pub const BEFORE_METHOD: u32 = 783;

/// One of a call's counts.
type Of = fn(&Call) -> u32;

/// One call as the trace shows it.
#[derive(Default, Clone)]
struct Call {
    opens: u32,
    git: u32,
    /// Opens of the session's file, the policy's (`.bmad/config.toml`) and the install's
    /// manifest: each read once a call at most.
    session: u32,
    policy: u32,
    manifest: u32,
}

impl Call {
    fn row(&self) -> [u32; 5] {
        [
            self.opens,
            self.git,
            self.session,
            self.policy,
            self.manifest,
        ]
    }
}

/// One line a call, with `before`'s figures beside when there are.
fn print_calls(labels: &[&str], now: &[Call], before: Option<&[Call]>, with: &str) {
    println!(
        "  {:<24} {:>5} {:>4} {:>7} {:>6} {:>8}{}{with}",
        "call",
        "opens",
        "git",
        "session",
        "policy",
        "manifest",
        if before.is_some() { "  (before)" } else { "" }
    );
    for (i, (label, c)) in labels.iter().zip(now).enumerate() {
        let was = before
            .and_then(|b| b.get(i))
            .map(|b| format!("  {:?}", b.row()))
            .unwrap_or_default();
        let [opens, git, session, policy, manifest] = c.row();
        println!("  {label:<24} {opens:>5} {git:>4} {session:>7} {policy:>6} {manifest:>8}{was}");
    }
}

pub fn bench(cfg: &Config, docs: &Docs, table: &mut Table) -> Res<()> {
    let Some(real) = real_git() else {
        println!("\n-- opens: no git on PATH; skipped");
        return Ok(());
    };
    if !crate::syscalls::strace_installed() {
        println!("\n-- opens: strace is not installed (Debian package strace); skipped");
        return Ok(());
    }
    println!("\n-- opens: files the server opens, and git processes, per call (under strace)");
    let installer = crate::method::installer();
    for method in [None, installer.as_deref()] {
        let with = if method.is_some() {
            ", the BMAD method installed"
        } else {
            ""
        };
        let (labels, now) = traced(&cfg.bin, docs, &real, method)?;
        let before = match cfg.before() {
            Some(b) => Some(traced(&b.bin, docs, &real, method)?.1),
            None => None,
        };
        print_calls(&labels, &now, before.as_deref(), with);
        let total: u32 = now.iter().map(|c| c.opens).sum();
        let measured = before
            .as_ref()
            .map(|b| b.iter().map(|c| c.opens).sum::<u32>());
        let mut value = total.to_string();
        if let Some(m) = measured {
            value.push_str(&format!(" (BENCH_BEFORE_BIN: {m})"));
        }
        // The install's readings were what the workflow opened again and again: the target
        // is the workflow with the method; without it, main's figure is beside.
        let (target, pass) = match method {
            Some(_) => (
                format!("≤ {} (half of main's {BEFORE_METHOD})", BEFORE_METHOD / 2),
                Some(total <= BEFORE_METHOD / 2),
            ),
            None => (format!("(main's {BEFORE_PLAIN})"), None),
        };
        table.single(
            &format!("files opened over the workflow{with}"),
            value,
            &target,
            pass,
        );
        let most = now.iter().map(|c| c.opens).max().unwrap_or(0);
        table.single(
            &format!("files opened, one call{with} (max)"),
            most.to_string(),
            "",
            None,
        );
        let git = now.iter().map(|c| c.git).max().unwrap_or(0);
        table.single(
            &format!("git processes, one call{with} (max; the `git` section lists them)"),
            git.to_string(),
            "≤ 1",
            Some(git <= 1),
        );
        let read: [(&str, Of); 3] = [
            ("the session", |c| c.session),
            ("the policy", |c| c.policy),
            ("the install's manifest", |c| c.manifest),
        ];
        for (what, of) in read {
            if what.contains("install") && method.is_none() {
                continue;
            }
            let most = now.iter().map(of).max().unwrap_or(0);
            table.single(
                &format!("opens of {what}, one call{with} (max)"),
                most.to_string(),
                "≤ 1",
                Some(most <= 1),
            );
        }
    }
    Ok(())
}

/// The workflow with `bin` under strace in a fresh repository (with the method when
/// `method` names its installer): each call's label and counts.
fn traced(
    bin: &Path,
    docs: &Docs,
    real: &Path,
    method: Option<&Path>,
) -> Res<(Vec<&'static str>, Vec<Call>)> {
    let dir = project_dir()?;
    let work = dir.path().join("project");
    repository(real, &work, method)?;
    let trace = dir.path().join("strace.out");
    let line = crate::syscalls::under_strace("open,openat,openat2,execve", &trace, bin);
    let mut server = Server::spawn_line(&line, &work, true)?;
    server.handshake()?;
    let mut labels = Vec::new();
    let mut starts = Vec::new();
    let mut session_id = Value::Null;
    for (label, mut args) in calls(docs, &work, method.is_some()) {
        if !session_id.is_null() {
            args["session_id"] = session_id.clone();
        }
        before(label, &work)?;
        let reply = server.call(&args)?;
        if label == "start" {
            session_id = reply.structured["session_id"].clone();
        }
        labels.push(label);
        starts.push(seconds(reply.sent)?);
    }
    server.close()?;
    let root = work.canonicalize()?;
    let counts = count(&std::fs::read_to_string(&trace)?, &starts, &root);
    Ok((labels, counts))
}

fn seconds(t: SystemTime) -> Res<f64> {
    Ok(t.duration_since(UNIX_EPOCH)?.as_secs_f64())
}

/// Splits the trace (`strace -f -ttt -y`) at the times the requests were sent. An open
/// counts when it succeeded on a path in `root` (`-y` names it beside the descriptor it
/// returned) in a process that has not executed another program since the first call (a
/// `git` the server started).
fn count(trace: &str, starts: &[f64], root: &Path) -> Vec<Call> {
    let root = root.display().to_string();
    let mut counts = vec![Call::default(); starts.len()];
    // The program each pid is executing, once it asked for one after the first call.
    let mut executing: BTreeMap<&str, &str> = BTreeMap::new();
    for line in trace.lines() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((time, call)) = rest.trim_start().split_once(' ') else {
            continue;
        };
        let Ok(time) = time.parse::<f64>() else {
            continue;
        };
        let Some(i) = starts.iter().rposition(|s| *s <= time) else {
            continue;
        };
        if let Some(program) = call.strip_prefix("execve(\"") {
            let program = program.split('"').next().unwrap_or("");
            executing.insert(pid, program);
        }
        let resumed = call.starts_with("<... execve resumed>");
        if (call.starts_with("execve(") || resumed) && call.trim_end().ends_with("= 0") {
            let program = executing.get(pid).copied().unwrap_or("");
            if Path::new(program).file_name().is_some_and(|n| n == "git") {
                counts[i].git += 1;
            }
            continue;
        }
        if executing.contains_key(pid) || !is_open(call) {
            continue;
        }
        // `= 7</path/opened>`: a descriptor, and what it is.
        let opened = call
            .rsplit_once("= ")
            .and_then(|(_, r)| r.split_once('<'))
            .map(|(_, p)| p.trim_end().trim_end_matches('>'));
        let inside = |p: &&str| *p == root || p.starts_with(&format!("{root}/"));
        let Some(opened) = opened.filter(inside) else {
            continue;
        };
        let c = &mut counts[i];
        c.opens += 1;
        let rel = &opened[root.len()..];
        let reads = !call.contains("O_CREAT");
        if reads && rel.starts_with("/.bmad-task/session-") && rel.ends_with(".json") {
            c.session += 1;
        }
        c.policy += u32::from(rel == "/.bmad/config.toml");
        c.manifest += u32::from(rel == "/_bmad/_config/manifest.yaml");
    }
    counts
}

/// A line of an open, or of one resumed.
fn is_open(call: &str) -> bool {
    ["open(", "openat(", "openat2("]
        .iter()
        .any(|o| call.starts_with(o))
        || [
            "<... open resumed>",
            "<... openat resumed>",
            "<... openat2 resumed>",
        ]
        .iter()
        .any(|o| call.starts_with(o))
}
