//! Benchmarks of the `bmad-mcp` binary: cold start, the example's workflow, peak memory,
//! the `git` processes and session reads per call, the bytes the model reads, 1 MiB
//! documents, and how `start`, `status` and `list` grow with the number of sessions in a
//! project. It prints a table with each target beside its figure; it never fails because of
//! a figure.
//!
//!     cargo bench --bench workflow                          # the full run, 10–30 s
//!     cargo bench --bench workflow -- --quick               # fewer runs
//!     cargo bench --bench workflow -- --only cold,sessions
//!
//! Sections for `--only`: `disk`, `cold`, `workflow`, `git`, `opens`, `fsyncs`, `replies`,
//! `mib`, `sessions`, `claims`, `merge`. `BMAD_ANCHOR_CMD` adds the anchor to `workflow` (see `workflow/anchor.rs`).
//!
//! The server is driven over its stdin and stdout with raw JSON-RPC lines (the legacy
//! handshake: `initialize`, `notifications/initialized`, `tools/list`), so the client
//! adds as little as possible to what is timed: a request line is serialised before the
//! clock starts and the clock stops when the answering line has been read.
//! Projects live in fresh directories under the system temp directory (on this machine
//! ext4, so every fsync the server does reaches the disk); the workflow is also run with
//! its projects in `/dev/shm` (tmpfs, where fsync returns at once) when there is one.
//!
//! `BMAD_MCP_BIN` overrides the server binary (by default the one `cargo bench` builds
//! beside the bench); `BENCH_BEFORE_BIN` names another build (an older commit's) that
//! `workflow` runs on disk in the same turns, for a before/after in one run.
//! `BENCH_SERVER_WRAPPER` runs the server under another program, e.g. `valgrind
//! --tool=callgrind` (figures are then meaningless but the profile is not).
//!
//! The parts, in `benches/workflow/`: `driver` (the raw JSON-RPC client), `docs` (the
//! fixtures, grown to a size), `run` (the example's calls, one run of them), `sections`
//! (disk, cold start, workflow, replies, 1 MiB), `git_calls` (git processes per call),
//! `opens` (files opened and git processes per call, under strace), `method` (the BMAD
//! method installed in a project), `syscalls` (fsyncs and session reads per call, under
//! strace), `sessions` (projects of 10,000 sessions), `table` (statistics and the summary
//! table).

#[path = "workflow/anchor.rs"]
mod anchor;
#[path = "workflow/claims.rs"]
mod claims;
mod common;
#[path = "workflow/docs.rs"]
mod docs;
#[path = "workflow/driver.rs"]
mod driver;
#[path = "workflow/git_calls.rs"]
mod git_calls;
#[path = "workflow/merge.rs"]
mod merge;
#[path = "workflow/method.rs"]
mod method;
#[path = "workflow/opens.rs"]
mod opens;
#[path = "workflow/run.rs"]
mod run;
#[path = "workflow/sections.rs"]
mod sections;
#[path = "workflow/sessions.rs"]
mod sessions;
#[path = "workflow/syscalls.rs"]
mod syscalls;
#[path = "workflow/table.rs"]
mod table;

use std::path::PathBuf;

use docs::Docs;
use table::{Table, MIB};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/fixtures");
const OBJECTIVE: &str = "Build a service that publishes a weekly team changelog";

type Failure = Box<dyn std::error::Error>;
type Res<T> = Result<T, Failure>;

// ───────────────────────────── configuration ─────────────────────────────

/// What the command line and the environment asked for.
pub struct Config {
    pub bin: PathBuf,
    pub wrapper: Vec<String>,
    quick: bool,
    only: Option<Vec<String>>,
    /// `BENCH_BEFORE_BIN`: another build of the server, run in turns with this one.
    before: Option<PathBuf>,
}

impl Config {
    /// The same settings for the binary named by `BENCH_BEFORE_BIN`, when there is one.
    pub fn before(&self) -> Option<Config> {
        Some(Config {
            bin: self.before.clone()?,
            wrapper: self.wrapper.clone(),
            quick: self.quick,
            only: self.only.clone(),
            before: None,
        })
    }

    fn wants(&self, section: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|s| s == section))
    }

    /// How many runs: `full`, or `quick` with `--quick`.
    pub fn runs(&self, full: usize, quick: usize) -> usize {
        if self.quick {
            quick
        } else {
            full
        }
    }
}

fn main() -> Res<()> {
    if !common::benchmarking("workflow") {
        return Ok(());
    }
    let mut quick = false;
    let mut only = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--only" => {
                let list = args.next().ok_or("--only needs a list of sections")?;
                only = Some(list.split(',').map(str::to_string).collect());
            }
            // `cargo bench` adds it to every bench's arguments.
            "--bench" => {}
            "-h" | "--help" => {
                println!(
                    "usage: cargo bench --bench workflow -- [--quick] \
                     [--only disk,cold,workflow,git,opens,fsyncs,replies,mib,sessions,claims,merge]"
                );
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}` (try --help)").into()),
        }
    }
    let cfg = Config {
        bin: common::server_binary()?,
        wrapper: std::env::var("BENCH_SERVER_WRAPPER")
            .map(|w| w.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        quick,
        only,
        before: std::env::var_os("BENCH_BEFORE_BIN").map(PathBuf::from),
    };
    print_machine(&cfg)?;

    let mut table = Table::default();
    let size = std::fs::metadata(&cfg.bin)?.len();
    table.single(
        "server binary size (release-lto unless BMAD_MCP_BIN)",
        format!("{:.2} MiB", size as f64 / MIB),
        "",
        None,
    );
    let fixtures = Docs::fixtures()?;
    if cfg.wants("disk") {
        sections::disk(&cfg, &mut table)?;
    }
    if cfg.wants("cold") {
        sections::cold_start(&cfg, &mut table)?;
    }
    if cfg.wants("workflow") {
        sections::workflow(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("git") {
        git_calls::bench(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("opens") {
        opens::bench(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("replies") {
        sections::replies(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("mib") {
        sections::mib(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("fsyncs") {
        syscalls::bench(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("sessions") {
        sessions::bench(&cfg, &fixtures, &mut table)?;
    }
    if cfg.wants("claims") {
        claims::bench(&cfg, &mut table)?;
    }
    if cfg.wants("merge") {
        merge::bench(&cfg, &mut table)?;
    }
    println!(
        "\n== summary ({}) ==",
        if cfg.quick { "quick" } else { "full" }
    );
    table.print();
    println!("{}", table::LEGEND);
    Ok(())
}

fn print_machine(cfg: &Config) -> Res<()> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("server:  {}", cfg.bin.display());
    if std::env::var_os("BMAD_MCP_BIN").is_none() {
        // benches/common/mod.rs: the dev-dependencies' features are in this binary.
        println!(
            "note:    the binary `cargo bench` built (the dev-dependencies' features in it): \
             for the installed binary's peak RSS, `cargo build --release`, copy \
             target/release/bmad-mcp, and pass the copy as BMAD_MCP_BIN"
        );
    }
    if !cfg.wrapper.is_empty() {
        println!(
            "wrapper: {} (figures are not meaningful)",
            cfg.wrapper.join(" ")
        );
    }
    println!(
        "machine: {cores} cores, {cpu}, Linux {}, temp dir {}",
        kernel.trim(),
        std::env::temp_dir().display()
    );
    if cfg!(debug_assertions) {
        println!("warning: a debug build of the bench; `cargo bench` builds the release one");
    }
    Ok(())
}
