//! The sections of the bench but `sessions`: what one durable write costs on this disk, a
//! cold start, the example's workflow (on disk and on tmpfs), the bytes of the replies
//! with ~30 KB documents, and 1 MiB documents at every stage.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::anchor;
use crate::docs::Docs;
use crate::driver::Server;
use crate::run::{print_breakdown, project_dir, run_workflow, workflow_calls, WorkflowRun};
use crate::table::{kib_to_mib, ms, Stats, Table, Target};
use crate::{Config, Res};

/// What one durable write costs on this disk, with no server involved: a 2 KB file
/// written, fsynced, renamed over the old one, and its directory fsynced. The server's
/// figures for writing calls are bounded below by this.
pub fn disk(cfg: &Config, table: &mut Table) -> Res<()> {
    let reps = cfg.runs(40, 15);
    println!("\n-- disk: one atomic durable 2 KB write, as the server does it ({reps} runs)");
    let dir = project_dir()?;
    let content = vec![b'x'; 2048];
    let mut file_sync = Vec::new();
    let mut whole = Vec::new();
    for i in 0..reps {
        let tmp = dir.path().join(format!(".tmp-{i}"));
        let start = Instant::now();
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&content)?;
        let before_sync = Instant::now();
        f.sync_all()?;
        file_sync.push(ms(before_sync.elapsed()));
        drop(f);
        std::fs::rename(&tmp, dir.path().join("file.json"))?;
        std::fs::File::open(dir.path())?.sync_all()?;
        whole.push(ms(start.elapsed()));
    }
    table.stats(
        "disk: fsync of a new 2 KB file",
        &file_sync,
        "ms",
        Target::None,
    );
    table.stats(
        "disk: atomic write (fsync, rename, dir fsync)",
        &whole,
        "ms",
        Target::None,
    );
    Ok(())
}

pub fn cold_start(cfg: &Config, table: &mut Table) -> Res<()> {
    let runs = cfg.runs(50, 20);
    println!("\n-- cold start: spawn → initialize → tools/list answered ({runs} runs)");
    let project = project_dir()?;
    let mut to_list = Vec::new();
    let mut rss = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let mut server = Server::spawn(cfg, project.path())?;
        server.handshake()?;
        to_list.push(ms(start.elapsed()));
        rss.push(kib_to_mib(server.peak_rss_kib()?));
        server.close()?;
    }
    table.stats(
        "cold start to tools/list",
        &to_list,
        "ms",
        Target::AtMost(5.0),
    );
    table.stats("peak RSS after handshake", &rss, "MiB", Target::None);
    Ok(())
}

pub fn workflow(cfg: &Config, docs: &Docs, table: &mut Table) -> Res<()> {
    let n = cfg.runs(20, 5);
    let anchor = anchor::command();
    println!(
        "\n-- workflow: the example's {} calls with its fixtures ({n} runs{})",
        workflow_calls(docs, Path::new("/")).len(),
        if anchor.is_some() {
            ", in turns with the anchor"
        } else {
            "; BMAD_ANCHOR_CMD unset: no anchor"
        }
    );
    // The same workflow with the projects in memory (tmpfs), where fsync returns at once,
    // taken in turns with the disk runs: the difference is what the disk's commits cost.
    // The anchor (BMAD_ANCHOR_CMD), which never fsyncs, runs on the same disk in the same
    // turns, so a busy spell of the machine hits both.
    let tmpfs = Path::new("/dev/shm");
    let tmpfs = (tmpfs.is_dir() && tempfile::tempdir_in(tmpfs).is_ok()).then_some(tmpfs);
    let mut runs = Vec::new();
    let mut in_memory = Vec::new();
    let mut anchor_runs = Vec::new();
    let mut anchor_in_memory = Vec::new();
    let before = cfg.before();
    let mut before_runs = Vec::new();
    for _ in 0..n {
        let project = project_dir()?;
        runs.push(run_workflow(cfg, docs, project.path())?);
        if let Some(before) = &before {
            let project = project_dir()?;
            before_runs.push(run_workflow(before, docs, project.path())?);
        }
        if let Some(tmpfs) = tmpfs {
            let project = tempfile::Builder::new()
                .prefix("bmad-bench-")
                .tempdir_in(tmpfs)?;
            in_memory.push(run_workflow(cfg, docs, project.path())?);
        }
        if let Some(line) = &anchor {
            let project = project_dir()?;
            anchor_runs.push(anchor::run(line, docs, project.path())?);
            if let Some(tmpfs) = tmpfs {
                let project = tempfile::Builder::new()
                    .prefix("bmad-bench-")
                    .tempdir_in(tmpfs)?;
                anchor_in_memory.push(anchor::run(line, docs, project.path())?);
            }
        }
    }
    let totals =
        |runs: &[WorkflowRun]| -> Vec<f64> { runs.iter().map(|r| ms(r.total())).collect() };
    let per_call = |runs: &[WorkflowRun]| -> Vec<f64> {
        runs.iter()
            .flat_map(|r| r.steps.iter().map(|(_, s)| ms(s.time)))
            .collect()
    };
    let rss: Vec<f64> = runs.iter().map(|r| kib_to_mib(r.peak_rss_kib)).collect();
    print_breakdown("per call (fixtures, on disk)", &runs);
    if !in_memory.is_empty() {
        print_breakdown("per call (fixtures, on tmpfs)", &in_memory);
    }
    if !anchor_runs.is_empty() {
        print_breakdown("per call (fixtures, the anchor, on disk)", &anchor_runs);
    }
    let disk = Stats::of(&totals(&runs)).median;
    table.stats(
        "workflow, 15 calls, total",
        &totals(&runs),
        "ms",
        Target::AtMost(20.0),
    );
    if !in_memory.is_empty() {
        table.stats(
            "workflow on tmpfs (fsync free), total",
            &totals(&in_memory),
            "ms",
            Target::None,
        );
        let waiting = disk - Stats::of(&totals(&in_memory)).median;
        table.single(
            "workflow: waiting for the disk (difference)",
            format!("{waiting:.2} ms"),
            "",
            None,
        );
    }
    table.stats(
        "workflow, per call (disk)",
        &per_call(&runs),
        "ms",
        Target::None,
    );
    if !in_memory.is_empty() {
        let (on_disk, on_tmpfs) = (per_call(&runs), per_call(&in_memory));
        table.stats("workflow, per call (tmpfs)", &on_tmpfs, "ms", Target::None);
        let ratio = Stats::of(&on_disk).median / Stats::of(&on_tmpfs).median;
        table.single(
            "per call: disk / tmpfs (medians)",
            format!("{ratio:.2}×"),
            "",
            None,
        );
    }
    let cpu = |runs: &[WorkflowRun]| -> Vec<f64> { runs.iter().map(|r| ms(r.cpu)).collect() };
    if !in_memory.is_empty() {
        table.stats(
            "server CPU over the 15 calls (tmpfs)",
            &cpu(&in_memory),
            "ms",
            Target::None,
        );
    }
    if !anchor_runs.is_empty() {
        if !anchor_in_memory.is_empty() {
            table.stats(
                "anchor: CPU over the 15 calls (tmpfs)",
                &cpu(&anchor_in_memory),
                "ms",
                Target::None,
            );
        }
        table.stats(
            "anchor: workflow, 15 calls, total (disk)",
            &totals(&anchor_runs),
            "ms",
            Target::None,
        );
        table.stats(
            "anchor: per call (disk)",
            &per_call(&anchor_runs),
            "ms",
            Target::None,
        );
        let anchor_rss: Vec<f64> = anchor_runs
            .iter()
            .map(|r| kib_to_mib(r.peak_rss_kib))
            .collect();
        table.stats("anchor: peak RSS", &anchor_rss, "MiB", Target::None);
        let ratio = Stats::of(&totals(&anchor_runs)).median / disk;
        table.single(
            "anchor / ours, workflow medians (disk)",
            format!("{ratio:.2}×"),
            "≥ 1.2×",
            Some(ratio >= 1.2),
        );
        if !anchor_in_memory.is_empty() && !in_memory.is_empty() {
            // Neither waits for the disk there: the servers' own work.
            table.stats(
                "anchor: workflow on tmpfs, total",
                &totals(&anchor_in_memory),
                "ms",
                Target::None,
            );
            let ratio = Stats::of(&totals(&anchor_in_memory)).median
                / Stats::of(&totals(&in_memory)).median;
            table.single(
                "anchor / ours, workflow medians (tmpfs)",
                format!("{ratio:.2}×"),
                "",
                None,
            );
        }
    }
    before_rows(&runs, &before_runs, table);
    table.stats("workflow peak RSS", &rss, "MiB", Target::MaxAtMost(12.0));
    Ok(())
}

/// The binary named by `BENCH_BEFORE_BIN`, run on disk in the same turns as ours: its
/// total, and its total over ours.
fn before_rows(runs: &[WorkflowRun], before_runs: &[WorkflowRun], table: &mut Table) {
    if before_runs.is_empty() {
        return;
    }
    let totals =
        |runs: &[WorkflowRun]| -> Vec<f64> { runs.iter().map(|r| ms(r.total())).collect() };
    table.stats(
        "before (BENCH_BEFORE_BIN): workflow, 15 calls, total (disk)",
        &totals(before_runs),
        "ms",
        Target::None,
    );
    let ratio = Stats::of(&totals(before_runs)).median / Stats::of(&totals(runs)).median;
    table.single(
        "before / ours, workflow medians (disk)",
        format!("{ratio:.2}×"),
        "",
        None,
    );
}

pub fn replies(cfg: &Config, fixtures: &Docs, table: &mut Table) -> Res<()> {
    let docs = fixtures.padded(30 * 1024)?;
    println!(
        "\n-- replies: structuredContent bytes over a workflow with ~30 KB documents (largest {} B)",
        docs.largest()
    );
    let project = project_dir()?;
    let run = run_workflow(cfg, &docs, project.path())?;
    print_breakdown("per call (~30 KB documents)", std::slice::from_ref(&run));
    let total: usize = run.steps.iter().map(|(_, r)| r.structured_bytes).sum();
    let (label, largest) = run
        .steps
        .iter()
        .map(|(l, r)| (*l, r.structured_bytes))
        .max_by_key(|(_, b)| *b)
        .ok_or("no replies")?;
    table.single(
        "30 KB docs: reply bytes, total",
        format!("{:.1} KB", total as f64 / 1024.0),
        "",
        None,
    );
    table.single(
        &format!("30 KB docs: largest ({label})"),
        format!("{:.1} KB", largest as f64 / 1024.0),
        "≤ 40 KB",
        Some(largest <= 40 * 1024),
    );
    Ok(())
}

pub fn mib(cfg: &Config, fixtures: &Docs, table: &mut Table) -> Res<()> {
    let docs = fixtures.padded(1024 * 1024)?;
    let n = cfg.runs(5, 2);
    println!(
        "\n-- 1 MiB documents at every stage ({n} runs; largest document {} B)",
        docs.largest()
    );
    let mut runs = Vec::new();
    for _ in 0..n {
        let project = project_dir()?;
        runs.push(run_workflow(cfg, &docs, project.path())?);
    }
    print_breakdown("per call (1 MiB documents)", &runs);
    let per_call: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.steps.iter().map(|(_, s)| ms(s.time)))
        .collect();
    let slowest: Vec<f64> = runs
        .iter()
        .map(|r| r.steps.iter().map(|(_, s)| ms(s.time)).fold(0.0, f64::max))
        .collect();
    let rss: Vec<f64> = runs.iter().map(|r| kib_to_mib(r.peak_rss_kib)).collect();
    table.stats("1 MiB docs: per call", &per_call, "ms", Target::None);
    table.stats(
        "1 MiB docs: slowest call of a run",
        &slowest,
        "ms",
        Target::AtMost(60.0),
    );
    table.stats("1 MiB docs: peak RSS", &rss, "MiB", Target::MaxAtMost(24.0));
    Ok(())
}
