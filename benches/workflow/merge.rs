//! How long git's merge of the BMAD method's `sprint-status.yaml` takes through the driver
//! `bmad-mcp init` installs (section `merge`): the binary's `merge-sprint-status` on a
//! status of 100,000 stories, each clone having moved a third of them and one adding a
//! key after every tenth, as git runs it (`%O %A %B %L`).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::table::{ms, Table, Target};
use crate::{Config, Res};

/// Stories in the file.
const KEYS: usize = 100_000;
/// The target: a merge git waits for stays under a second.
const TARGET_MS: f64 = 1000.0;

/// A side: the stories `i % 3 == moved` at `status`, the others in the backlog, and a key
/// `added` after every tenth when it is not empty.
fn side(moved: usize, status: &str, added: &str) -> String {
    let mut s = String::from("generated: 11-27-2026 10:00\nlast_updated: 11-27-2026 10:00\nproject: bench\n\ndevelopment_status:\n");
    for i in 0..KEYS {
        let st = if i % 3 == moved { status } else { "backlog" };
        s.push_str(&format!("  1-{i}-story-{i}: {st}\n"));
        if !added.is_empty() && i % 10 == 0 {
            s.push_str(&format!("  1-{i}-{added}: backlog\n"));
        }
    }
    s
}

fn write(dir: &Path, name: &str, text: &str) -> Res<std::path::PathBuf> {
    let p = dir.join(name);
    std::fs::write(&p, text)?;
    Ok(p)
}

pub fn bench(cfg: &Config, table: &mut Table) -> Res<()> {
    let dir = tempfile::tempdir()?;
    let (base, ours, theirs) = (side(9, "", ""), side(0, "done", ""), side(1, "review", "x"));
    let b = write(dir.path(), "O", &base)?;
    let t = write(dir.path(), "B", &theirs)?;
    let mut took = Vec::new();
    for _ in 0..cfg.runs(5, 2) {
        // Git hands the driver a fresh `%A` each time and reads the result from it.
        let a = write(dir.path(), "A", &ours)?;
        let started = Instant::now();
        let status = Command::new(&cfg.bin)
            .arg("merge-sprint-status")
            .args([&b, &a, &t])
            .arg("7")
            .status()?;
        took.push(ms(started.elapsed()));
        if !status.success() {
            return Err(format!("merge-sprint-status exited {status}").into());
        }
        let merged = std::fs::read_to_string(&a)?;
        if merged.lines().count() != 5 + KEYS + KEYS / 10 {
            return Err("the merge lost or repeated a key".into());
        }
    }
    table.stats(
        "merge of sprint-status.yaml, 100,000 stories, by the driver",
        &took,
        "ms",
        Target::AtMost(TARGET_MS),
    );
    Ok(())
}
