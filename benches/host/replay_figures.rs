//! The figures of the replayed workload (`cronlite-full`): per call, what Claude Code's
//! model reads (text bytes, repeated and non-blank lines) beside the recording; the total,
//! the largest reply and the repeated share against their targets; and the same replay as
//! each other host's model reads it (the hosts table's rule), with its ratio to Claude
//! Code's. `BENCH_BEFORE_BIN` replays an older build too, for a before/after in one run.

use std::path::{Path, PathBuf};

use bmad_mcp::hosts::{Shows, HOSTS};

use super::figures::Run;
use super::others::shown;
use super::replay::{replay, LayersRead, Workload};
use crate::row;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The targets: all the text over the calls, any one reply, the share of non-blank lines
/// that came earlier in the task, and how far another host's total may be from Claude
/// Code's.
const TOTAL: usize = 40_000;
const ONE_REPLY: usize = 6_000;
const REPEATED: f64 = 0.20;
const HOST_SPREAD: f64 = 0.10;

/// Replays the workload as the host `client` that shows its model results so; the run's
/// figures and the text its model read of each call. A replay that drifts from the
/// recording is an error.
fn run_as(server: &Path, w: &Workload, host: &str) -> Res<(Run, Vec<String>, LayersRead)> {
    let c = HOSTS
        .iter()
        .find(|h| h.name == host)
        .and_then(|h| h.client)
        .ok_or("no such host")?;
    let replayed = replay(server, w, c.names[0])?;
    if !replayed.drift.is_empty() {
        return Err(format!(
            "the replay as {host} drifted from the recording:\n{}",
            replayed.drift.join("\n")
        )
        .into());
    }
    let texts: Vec<String> = replayed.results.iter().map(|r| shown(r, c.shows)).collect();
    Ok((Run::of(&w.labels(), &texts), texts, replayed.layers_read))
}

/// Writes what Claude Code's model read of each call to `BMAD_HOST_BENCH_DUMP`, when set
/// (`replay-01.txt` …), to read where the bytes are.
fn dump(texts: &[String]) -> Res<()> {
    let Some(dir) = std::env::var_os("BMAD_HOST_BENCH_DUMP").map(PathBuf::from) else {
        return Ok(());
    };
    std::fs::create_dir_all(&dir)?;
    for (i, t) in texts.iter().enumerate() {
        std::fs::write(dir.join(format!("replay-{:02}.txt", i + 1)), t)?;
    }
    Ok(())
}

/// Per call, the replay beside the recording.
fn per_call(w: &Workload, run: &Run) {
    println!(
        "  {:>3}  {:<48} {:>7} {:>9}   {:>9} {:>9}",
        "#", "call", "text B", "rep/lines", "recorded", "rep/lines"
    );
    for (call, c) in w.calls.iter().zip(&run.calls) {
        let rec = &call["recorded"];
        println!(
            "  {:>3}  {:<48} {:>7} {:>9}   {:>9} {:>9}",
            call["i"],
            c.action,
            c.bytes,
            format!("{}/{}", c.repeated_lines, c.lines),
            rec["text_b"],
            format!("{}/{}", rec["repeated"], rec["lines"])
        );
    }
    let lines: usize = run.calls.iter().map(|c| c.lines).sum();
    let repeated: usize = run.calls.iter().map(|c| c.repeated_lines).sum();
    let r = &w.meta["recorded"];
    println!(
        "  all  {:<48} {:>7} {:>9}   {:>9} {:>9}",
        "",
        run.total(),
        format!("{repeated}/{lines}"),
        r["total_b"],
        format!("{}/{}", r["repeated_lines"], r["lines"])
    );
}

/// Prints the replay's figures on `server` (and on `BENCH_BEFORE_BIN`, when set).
pub fn print(server: &Path) -> Res<()> {
    let w = Workload::load()?;
    println!(
        "\nReplay of the recorded run cronlite-full ({} calls, benches/workloads/cronlite-full), as Claude Code's model reads it:",
        w.calls.len()
    );
    let (claude, texts, layers_read) = run_as(server, &w, "Claude Code")?;
    dump(&texts)?;
    per_call(&w, &claude);
    // Read in the layers' own fresh contexts, not by the implementing session: a figure of
    // its own, beside the session's, never added to it.
    let per_review: Vec<String> = layers_read
        .iter()
        .map(|(i, b)| format!("#{i}: {b} B"))
        .collect();
    println!(
        "  review layers, read in their fresh contexts (instructions + diff, the intent check also the PRD and plan): {} B ({}), beside the implementing session's {} B",
        layers_read.iter().map(|(_, b)| b).sum::<usize>(),
        if per_review.is_empty() { "no review in layers".to_string() } else { per_review.join(", ") },
        claude.total()
    );
    let (largest, at) = claude.largest();
    row(
        "replay, all text the model reads",
        format!("{} B", claude.total()),
        "<= 40000 B",
        claude.total() <= TOTAL,
    );
    row(
        &format!("replay, largest reply (#{at})"),
        format!("{largest} B"),
        "<= 6000 B",
        largest <= ONE_REPLY,
    );
    row(
        "replay, share of non-blank lines repeated",
        format!("{:.1} %", 100.0 * claude.repeated_line_share()),
        "<= 20 %",
        claude.repeated_line_share() <= REPEATED,
    );
    // Every host with a model but Claude Code (the inspector prints for a person).
    let others = HOSTS
        .iter()
        .filter(|h| h.client.is_some_and(|c| c.shows != Shows::Printed))
        .filter(|h| h.name != "Claude Code");
    for host in others {
        let (run, _, _) = run_as(server, &w, host.name)?;
        let ratio = run.total() as f64 / claude.total().max(1) as f64;
        row(
            &format!("replay as {}, all text (x Claude Code)", host.name),
            format!("{} B {ratio:.2}x", run.total()),
            "0.90-1.10x",
            (ratio - 1.0).abs() <= HOST_SPREAD,
        );
    }
    if let Some(before) = std::env::var_os("BENCH_BEFORE_BIN").map(PathBuf::from) {
        let (old, _, _) = run_as(&before, &w, "Claude Code")?;
        println!(
            "  (before, {}: {} B in all, largest {} B, {:.1} % of lines repeated; after/before {:.2}x)",
            before.display(),
            old.total(),
            old.largest().0,
            100.0 * old.repeated_line_share(),
            claude.total() as f64 / old.total().max(1) as f64
        );
    }
    Ok(())
}
