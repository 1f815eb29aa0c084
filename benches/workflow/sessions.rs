//! `start`, `status` and `list` in projects of 0, 1,000 and 10,000 sessions (and 10,000
//! sharing one objective): the projects are populated with copies of a session the server
//! wrote, then served side by side and called in turns.

use std::time::Duration;

use bmad_mcp::store::{Mapping, MappingEntry};
use bmad_mcp::workflow::session::timestamp;
use serde_json::{json, Value};

use crate::docs::Docs;
use crate::driver::{Reply, Server};
use crate::run::{project_dir, run_workflow};
use crate::table::{ms, Stats, Table, Target};
use crate::{Config, Res, OBJECTIVE};

/// A completed session written by the server, copied to populate big projects.
struct Template {
    text: String,
    session_id: String,
    task_name: String,
    updated_at: String,
    root: String,
}

fn template_session(cfg: &Config, fixtures: &Docs) -> Res<Template> {
    let project = project_dir()?;
    let run = run_workflow(cfg, fixtures, project.path())?;
    let root = project.path().canonicalize()?.display().to_string();
    let text = std::fs::read_to_string(
        project
            .path()
            .join(format!(".bmad-task/session-{}.json", run.session_id)),
    )?;
    let v: Value = serde_json::from_str(&text)?;
    let field = |k: &str| {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the session has no `{k}`"))
    };
    Ok(Template {
        session_id: run.session_id,
        task_name: field("task_name")?,
        updated_at: field("updated_at")?,
        root,
        text,
    })
}

/// A project with `n` sessions: copies of the template with new ids, task names, times
/// and project path, their reserved task directories, and the matching task mapping,
/// written as the server writes them (pretty JSON and a newline).
fn populated_project(template: &Template, n: usize, shared: bool) -> Res<tempfile::TempDir> {
    let dir = project_dir()?;
    if n == 0 {
        return Ok(dir);
    }
    let root = dir.path().canonicalize()?;
    let root_text = root.display().to_string();
    std::fs::create_dir_all(root.join(".bmad-task"))?;
    std::fs::create_dir_all(root.join(".claude/specs"))?;
    let base = chrono::DateTime::parse_from_rfc3339("2026-01-05T09:00:00Z")?.to_utc();
    let mut mapping = Mapping::new();
    for i in 0..n {
        let id = uuid::Uuid::new_v4().to_string();
        // With one objective shared by all, the names are that objective's slug with
        // every number up to n, as `start` makes them.
        let task_name = match (shared, i) {
            (true, 0) => SHARED_SLUG.to_string(),
            (true, i) => format!("{SHARED_SLUG}-{i}"),
            (false, i) => format!("bench-task-{i:05}"),
        };
        let stamp = timestamp(base + chrono::Duration::seconds(i as i64 * 37));
        let text = template
            .text
            .replace(&template.session_id, &id)
            .replace(&template.task_name, &task_name)
            .replace(&template.updated_at, &stamp)
            .replace(&template.root, &root_text);
        std::fs::write(root.join(format!(".bmad-task/session-{id}.json")), text)?;
        std::fs::create_dir(root.join(format!(".claude/specs/{task_name}")))?;
        mapping.insert(
            id,
            MappingEntry {
                task_name,
                objective: OBJECTIVE.to_string(),
                created_at: stamp,
            },
        );
    }
    let mut text = serde_json::to_string_pretty(&mapping)?;
    text.push('\n');
    std::fs::write(root.join(".bmad-task/task-mapping.json"), text)?;
    Ok(dir)
}

/// The objective every session of the "shared" population has, and its task name.
const SHARED_OBJECTIVE: &str = "Bench objective shared by all";
const SHARED_SLUG: &str = "bench-objective-shared-by-all";

/// Per-call samples of one kind of call: wall time and server CPU time, in ms.
#[derive(Default)]
struct Samples {
    wall: Vec<f64>,
    cpu: Vec<f64>,
}

impl Samples {
    fn push(&mut self, (reply, cpu): (Reply, Duration)) -> Reply {
        self.wall.push(ms(reply.time));
        self.cpu.push(ms(cpu));
        reply
    }
}

/// One project and the server that serves it, with what was measured there.
struct Population {
    sessions: usize,
    /// Every session (and every `start` here) has one objective.
    shared: bool,
    /// The first `list` this server answered (nothing cached yet).
    first_list: Option<f64>,
    project: tempfile::TempDir,
    server: Server,
    first: Option<(String, String)>,
    list: Samples,
    start: Samples,
    status: Samples,
    by_name: Samples,
}

/// The `sessions` section.
pub fn bench(cfg: &Config, fixtures: &Docs, table: &mut Table) -> Res<()> {
    let template = template_session(cfg, fixtures)?;
    let reps = cfg.runs(30, 8);
    println!(
        "\n-- start, status, list with 0, 1,000 and 10,000 sessions ({reps} of each call; session file {} B)",
        template.text.len()
    );
    // One server per project, all running at once, and the calls taken in turns, so
    // that a change in the machine's load (the disk above all) hits every population
    // alike and the ratios between them stay fair.
    let mut pops = Vec::new();
    for (sessions, shared) in [
        (0usize, false),
        (1000, false),
        (10_000, false),
        (10_000, true),
    ] {
        let project = populated_project(&template, sessions, shared)?;
        let mut server = Server::spawn(cfg, project.path())?;
        server.handshake()?;
        pops.push(Population {
            sessions,
            shared,
            first_list: None,
            project,
            server,
            first: None,
            list: Samples::default(),
            start: Samples::default(),
            status: Samples::default(),
            by_name: Samples::default(),
        });
    }
    for _ in 0..reps {
        for p in pops.iter_mut() {
            let r = p.list.push(p.server.call_cpu(&json!({"action": "list"}))?);
            p.first_list.get_or_insert(ms(r.time));
        }
    }
    for k in 0..reps {
        for p in pops.iter_mut() {
            let objective = if p.shared {
                SHARED_OBJECTIVE.to_string()
            } else {
                format!("Bench objective {k} for a growing project")
            };
            let r = p.start.push(p.server.call_cpu(&json!({
                "action": "start",
                "cwd": p.project.path(),
                "objective": objective,
            }))?);
            if p.first.is_none() {
                let field = |f: &str| r.structured[f].as_str().unwrap_or("").to_string();
                p.first = Some((field("session_id"), field("task_name")));
            }
        }
    }
    for _ in 0..reps {
        for p in pops.iter_mut() {
            let (id, name) = p.first.clone().ok_or("no session was started")?;
            p.status.push(
                p.server
                    .call_cpu(&json!({"action": "status", "session_id": id}))?,
            );
            p.by_name.push(
                p.server
                    .call_cpu(&json!({"action": "status", "task_name": name}))?,
            );
        }
    }
    println!(
        "  {:>6}  {:>22}  {:>10} {:>10} {:>10} {:>10}",
        "", "", "start", "status", "by name", "list"
    );
    let median = |v: &Vec<f64>| Stats::of(v).median;
    for p in &pops {
        let cpu = [&p.start.cpu, &p.status.cpu, &p.by_name.cpu, &p.list.cpu].map(median);
        println!(
            "  {:>6}  {:>22}  {:>7.2} ms {:>7.2} ms {:>7.2} ms {:>7.2} ms",
            p.sessions,
            if p.shared {
                "one objective: CPU¹"
            } else {
                "sessions: server CPU¹"
            },
            cpu[0],
            cpu[1],
            cpu[2],
            cpu[3]
        );
    }
    println!(
        "  ¹ user and kernel time of the server's threads, per call (median); on this virtual\n    \
         machine the kernel side of an fsync is CPU time too, so it is not only the server's work"
    );
    for p in pops.iter() {
        let label = |what: &str| {
            let shared = if p.shared { ", one objective" } else { "" };
            format!("{what}, {} sessions{shared}", p.sessions)
        };
        // The targets hold at 10,000 sessions; at 1,000 the earlier, looser one applies.
        let at_10k = |limit: f64| {
            if p.sessions == 10_000 {
                Target::AtMost(limit)
            } else {
                Target::None
            }
        };
        table.stats(&label("start"), &p.start.wall, "ms", at_10k(2.0));
        if p.shared {
            continue;
        }
        table.stats(&label("status by id"), &p.status.wall, "ms", Target::None);
        table.stats(
            &label("status by task_name"),
            &p.by_name.wall,
            "ms",
            at_10k(2.0),
        );
        let list_target = match p.sessions {
            1000 => Target::AtMost(100.0),
            10_000 => Target::AtMost(30.0),
            _ => Target::None,
        };
        table.stats(&label("list, first page"), &p.list.wall, "ms", list_target);
        if let Some(first) = p.first_list {
            table.single(
                &label("list, first call (cold)"),
                format!("{first:.2} ms"),
                "",
                None,
            );
        }
    }
    let empty = &pops[0];
    for p in pops[1..].iter().filter(|p| !p.shared) {
        let target = p.sessions == 1000;
        for (what, v, base) in [
            ("start", &p.start.wall, &empty.start.wall),
            ("status", &p.status.wall, &empty.status.wall),
        ] {
            let ratio = median(v) / median(base);
            table.single(
                &format!("{what}: {} sessions / empty", p.sessions),
                format!("{ratio:.2}×"),
                if target { "≤ 1.5×" } else { "" },
                target.then_some(ratio <= 1.5),
            );
        }
    }
    for p in pops {
        p.server.close()?;
    }
    Ok(())
}
