//! What each call of the workflow asks of the disk, counted under `strace` (section
//! `fsyncs`; skipped when strace is not installed): the fsyncs, the files created (a
//! temporary file each), the files put in place (a rename each), the second names given to
//! replaced files (a link each, removed in the same call), the threads started, and the
//! opens of the session file. Counts, not times: the same on any machine, which is why
//! they have targets of their own.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::docs::Docs;
use crate::run::{drive, project_dir, workflow_calls};
use crate::table::Table;
use crate::{Config, Res};

/// What one call did, as the trace shows it.
#[derive(Default, Clone)]
struct Counts {
    fsyncs: u32,
    /// Files created (`O_CREAT | O_EXCL`): the temporary file of each file written.
    creates: u32,
    renames: u32,
    /// Second names made for replaced files (`linkat`).
    links: u32,
    /// Threads (or processes) started: `clone`, `clone3`.
    threads: u32,
    session_opens: u32,
    /// The folders files were renamed into, and the folders made.
    folders: Vec<String>,
    made: u32,
}

impl Counts {
    /// The fsyncs the write protocol needs: one per file placed, one per folder a file
    /// was placed in, one per folder made (its parent's new entry).
    fn needed(&self) -> u32 {
        self.renames + self.folders.len() as u32 + self.made
    }
}

/// Whether `strace` is there to run.
pub fn strace_installed() -> bool {
    std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The command line that runs `bin` under `strace -f` with times (`-ttt`) and the paths of
/// descriptors (`-y`), tracing `calls` into `trace`.
pub fn under_strace(calls: &str, trace: &Path, bin: &Path) -> Vec<String> {
    let mut line: Vec<String> = ["strace", "-f", "-qq", "-ttt", "-y", "-e"]
        .map(String::from)
        .to_vec();
    line.push(format!("trace={calls}"));
    line.push("-o".into());
    line.push(trace.display().to_string());
    line.push(bin.display().to_string());
    line
}

pub fn bench(cfg: &Config, docs: &Docs, table: &mut Table) -> Res<()> {
    if !strace_installed() {
        println!("\n-- fsyncs: strace is not installed (Debian package strace); skipped");
        return Ok(());
    }
    println!("\n-- fsyncs: the workflow once under strace, system calls per call");
    let project = project_dir()?;
    let trace = project.path().join("strace.out");
    let line = under_strace(
        "openat,openat2,fsync,fdatasync,rename,renameat,renameat2,mkdir,mkdirat,link,linkat,clone,clone3",
        &trace,
        &cfg.bin,
    );
    let work = project.path().join("project");
    std::fs::create_dir(&work)?;
    let calls = workflow_calls(docs, &work)
        .into_iter()
        .map(|(label, args)| (label, args, None))
        .collect();
    let run = drive(&line, calls, &work, false)?;
    let starts: Vec<f64> = run
        .steps
        .iter()
        .map(|(_, r)| seconds(r.sent))
        .collect::<Res<_>>()?;
    let counts = count(&std::fs::read_to_string(&trace)?, &starts);

    print_counts(&run.steps, &counts);
    fsync_rows(&counts, table);
    let labels: Vec<&str> = run.steps.iter().map(|(label, _)| *label).collect();
    session_rows(&labels, &counts, table);
    Ok(())
}

/// One line a call.
fn print_counts(steps: &[(&str, crate::driver::Reply)], counts: &[Counts]) {
    println!(
        "  {:<24} {:>6} {:>7} {:>7} {:>5} {:>7} {:>7} {:>5} {:>13}",
        "call",
        "fsyncs",
        "creates",
        "renames",
        "links",
        "threads",
        "folders",
        "made",
        "session opens"
    );
    for ((label, _), c) in steps.iter().zip(counts) {
        println!(
            "  {:<24} {:>6} {:>7} {:>7} {:>5} {:>7} {:>7} {:>5} {:>13}",
            label,
            c.fsyncs,
            c.creates,
            c.renames,
            c.links,
            c.threads,
            c.folders.len(),
            c.made,
            c.session_opens
        );
    }
}

/// The fsyncs of the writing calls against the write protocol's bound.
fn fsync_rows(counts: &[Counts], table: &mut Table) {
    let writing: Vec<&Counts> = counts.iter().filter(|c| c.renames > 0).collect();
    let one_file = writing.iter().filter(|c| c.renames == 1).map(|c| c.fsyncs);
    let several = writing.iter().filter(|c| c.renames > 1);
    if let Some(max) = one_file.max() {
        table.single(
            "fsyncs: a call that changes one file (max)",
            max.to_string(),
            "≤ 2",
            Some(max <= 2),
        );
    }
    if let Some(c) = several.clone().max_by_key(|c| c.fsyncs) {
        table.single(
            "fsyncs: a call that writes documents and the session (max)",
            format!(
                "{} ({} files in {} folders)",
                c.fsyncs,
                c.renames,
                c.folders.len()
            ),
            "",
            None,
        );
    }
    // The bound: a file's content, its folder's entry, a new folder's entry; no more.
    let over = several.map(|c| c.fsyncs.saturating_sub(c.needed())).max();
    if let Some(over) = over {
        table.single(
            "fsyncs over files + their folders + folders made (max)",
            over.to_string(),
            "0",
            Some(over == 0),
        );
    }
    let mean = |what: fn(&Counts) -> u32| {
        let total: u32 = writing.iter().map(|c| what(c)).sum();
        format!(
            "{:.2} ({total} in {} calls)",
            f64::from(total) / writing.len().max(1) as f64,
            writing.len()
        )
    };
    table.single(
        "fsyncs per writing call (mean)",
        mean(|c| c.fsyncs),
        "",
        None,
    );
    table.single(
        "creates per writing call (mean)",
        mean(|c| c.creates),
        "",
        None,
    );
    table.single(
        "renames per writing call (mean)",
        mean(|c| c.renames),
        "",
        None,
    );
    table.single("links per writing call (mean)", mean(|c| c.links), "", None);
    // The first writing call may start the write's workers (and tokio its blocking
    // threads); after it, a step starts none.
    let later: u32 = writing.iter().skip(1).map(|c| c.threads).sum();
    table.single(
        "threads started by the writing calls after the first",
        later.to_string(),
        "0",
        Some(later == 0),
    );
}

/// The opens of the session file for reading: one call's most, and a submit's and a
/// status's.
fn session_rows(labels: &[&str], counts: &[Counts], table: &mut Table) {
    let opens = counts.iter().map(|c| c.session_opens).max().unwrap_or(0);
    table.single(
        "session file opens, one call (max)",
        opens.to_string(),
        "≤ 1",
        Some(opens <= 1),
    );
    // No checks run in this workflow (no policy): a submit reads the session once.
    for (kind, name) in [("submit", "a submit"), ("status", "status")] {
        let reads = labels
            .iter()
            .zip(counts)
            .filter(|(label, _)| label.starts_with(kind))
            .map(|(_, c)| c.session_opens)
            .max();
        if let Some(reads) = reads {
            table.single(
                &format!("session reads: {name} (max)"),
                reads.to_string(),
                "≤ 1",
                Some(reads <= 1),
            );
        }
    }
}

fn seconds(t: SystemTime) -> Res<f64> {
    Ok(t.duration_since(UNIX_EPOCH)?.as_secs_f64())
}

/// Splits the trace (`strace -f -ttt`: pid, time, call) at the times the requests were
/// sent: what the server did between one request and the next belongs to the first.
fn count(trace: &str, starts: &[f64]) -> Vec<Counts> {
    let mut counts = vec![Counts::default(); starts.len()];
    for line in trace.lines() {
        // strace pads the pid to a width: one space or more after it.
        let Some((_pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let Some((time, call)) = rest.trim_start().split_once(' ') else {
            continue;
        };
        let (Ok(time), false) = (time.parse::<f64>(), call.starts_with("<...")) else {
            continue;
        };
        let Some(i) = starts.iter().rposition(|s| *s <= time) else {
            continue;
        };
        let c = &mut counts[i];
        let name = call.split('(').next().unwrap_or("");
        let failed = call.contains("= -1");
        match name {
            "fsync" | "fdatasync" => c.fsyncs += 1,
            "openat" | "openat2" if !failed && call.contains("O_CREAT|O_EXCL") => c.creates += 1,
            "link" | "linkat" if !failed => c.links += 1,
            "clone" | "clone3" if !failed => c.threads += 1,
            "rename" | "renameat" | "renameat2" if !failed => {
                c.renames += 1;
                // `-y`: the folder of the new name is the last `<path>` on the line.
                let folder = call
                    .rsplit_once('<')
                    .map(|(_, p)| p.split('>').next().unwrap_or(p));
                if let Some(folder) = folder.filter(|f| !c.folders.iter().any(|g| g == f)) {
                    c.folders.push(folder.to_string());
                }
            }
            "mkdir" | "mkdirat" if !failed && !call.contains("unfinished") => c.made += 1,
            "openat" | "openat2" if is_session_read(call) => c.session_opens += 1,
            _ => {}
        }
    }
    counts
}

/// An open of a session file for reading (`.bmad-task/session-<id>.json`).
fn is_session_read(call: &str) -> bool {
    let Some(at) = call.find("session-") else {
        return false;
    };
    let name = &call[at..];
    let name = &name[..name.find('"').unwrap_or(name.len())];
    Path::new(name).extension().is_some_and(|e| e == "json")
        && call.contains(".bmad-task/")
        && call.contains("O_RDONLY")
        && !call.contains("O_CREAT")
}
