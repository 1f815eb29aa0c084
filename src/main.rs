//! The `bmad-mcp` binary: with no arguments it serves MCP over stdio; `serve --http`
//! serves streamable HTTP.

use clap::{Parser, Subcommand};

use bmad_mcp::exit::Exit;
use bmad_mcp::http::ServeArgs;
use bmad_mcp::server::normal_logs;
use bmad_mcp::settings::{Given, Settings};

/// MCP server (stdio) that runs the BMAD agile workflow: Product Owner → Architect →
/// Scrum Master → Developer → Reviewer → QA. Register it in your AI host with
/// `bmad-mcp setup <host>` (claude-code, codex, gemini, opencode, copilot, cursor, vscode,
/// claude-desktop); the guide, the reference and troubleshooting are in the repository's
/// docs/ folder.
///
/// Every setting is a flag below and an environment variable (shown beside it); a value a
/// setting does not allow stops the binary at start (exit 2), naming the variable.
///
/// Exit status: 0 when stdin closes (before a client's first message too) or after
/// SIGTERM (requests received are finished and answered first; one waiting on the human's
/// dialog: still pending), 1 when the server cannot start, 3 when stdout is closed by the
/// client (no call is applied after that), or by the reader of a command's output
/// (`| head`).
///
/// `serve --http [ADDR]` serves several IDEs at once over streamable HTTP at
/// http://127.0.0.1:8765/mcp, locked down: loopback unless a token is set
/// (BMAD_MCP_TOKEN), no browser origin, the projects under `--root` only. It stops on
/// SIGTERM or SIGINT, after answering the requests in flight (exit 0); 2 when the options
/// are refused. BMAD_HTTP_REQUEST_SECS bounds how long a request may take to arrive
/// (default 60), BMAD_HTTP_HEADER_SECS its headers (30), BMAD_HTTP_MAX_CONNECTIONS the
/// connections open (256), BMAD_HTTP_BODIES_BYTES the bodies read at once (32 MiB).
///
/// With a command, it is the human's own channel, outside the model: `confirm`,
/// `approve`, `reject` and `answer` show what is being decided and ask on the terminal
/// (they refuse, exit 2, when stdin is not a terminal); `list` and `status` read;
/// `config show` and `config approve` are the project's checks and policy
/// (.bmad/config.toml), which the server acts on only as the human approved them; `init`
/// prepares the project for a team in git, `claims` lists the sprints claimed on the
/// team's remote and `claims release` frees one whose clone is gone (docs/team.md); `setup <host>` registers the
/// server in a host's configuration (docs/setup.md).
#[derive(Parser)]
#[command(name = "bmad-mcp", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// The project directory for a command or the stdio server, absolute or relative to
    /// the working directory (default: BMAD_PROJECT_ROOT, else CLAUDE_PROJECT_DIR, else
    /// the project the working directory is in; for `setup`, always the latter).
    #[arg(long, global = true)]
    project: Option<String>,
    #[command(flatten)]
    settings: Given,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (as with no command), or over streamable HTTP with `--http`.
    Serve(ServeArgs),
    /// The human's dashboard in their browser, on loopback: every task, the documents
    /// rendered, their earlier rounds with a diff, the audit, the checks, and the
    /// decisions (recorded `via: dashboard`). Prints an address that opens the page once,
    /// and a new one when Enter is pressed; stops on Ctrl-C.
    Dashboard {
        /// The address to listen on (loopback only); the default port is one the system
        /// picks.
        #[arg(long, value_name = "ADDR", default_value = bmad_mcp::dashboard::DEFAULT_ADDR)]
        addr: String,
    },
    /// Registers this binary as the stdio MCP server `bmad` in a host's configuration
    /// (`--scope user`, the default, or `project`), or takes it out (`--remove`), keeping
    /// the file's other entries and comments; prints what changed (docs/setup.md).
    Setup(bmad_mcp::setup::Args),
    /// The night shift: builds a task's approved sprints story by story, one fresh
    /// headless host session per step, each in the story's worktree; a story that needs
    /// your decision or crosses its budget parks while the others go on
    /// (docs/night-shift.md).
    Run(bmad_mcp::night::Args),
    #[command(flatten)]
    Human(bmad_mcp::terminal::Cli),
}

fn main() -> Exit {
    share_one_heap();
    // A panic in a call is answered as the server's own fault, saying where it was raised;
    // its line still reaches stderr.
    bmad_mcp::fault::install_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap's message: the usage on stderr, or `--help` and `--version` on stdout.
            let _ = e.print();
            return if !e.use_stderr() || hook_refused_a_setting(&e) {
                Exit::Done
            } else {
                Exit::Refused
            };
        }
    };
    let settings = Settings::from_given(cli.settings).with_project(cli.project.as_deref());
    // The plugin's hook runs before every tool use of the host and matches no pattern.
    let hook = matches!(
        cli.command,
        Some(Command::Human(bmad_mcp::terminal::Cli::Hook { .. }))
    );
    if !hook && check_patterns().is_err() {
        return Exit::Failed;
    }
    match cli.command {
        Some(Command::Human(command)) => {
            bmad_mcp::exit::quiet_when_stdout_closes();
            bmad_mcp::terminal::run(command, &settings)
        }
        Some(Command::Setup(args)) => {
            bmad_mcp::exit::quiet_when_stdout_closes();
            // The project a person runs setup for is where they stand, or the one they name:
            // not a variable the environment (a host's shell, a profile) may carry.
            let project = match cli.project {
                Some(_) => settings.default_root,
                None => bmad_mcp::files::DefaultRoot::working_directory(),
            };
            bmad_mcp::setup::run(&args, std::path::Path::new(&project.value))
        }
        Some(Command::Run(args)) => bmad_mcp::night::run(args, &settings),
        Some(Command::Dashboard { addr }) => {
            normal_logs::init(settings.log.as_deref());
            bmad_mcp::dashboard::run(&addr, &settings)
        }
        Some(Command::Serve(options)) => serve(&options, cli.project.is_some(), &settings),
        None => serve(&ServeArgs::default(), false, &settings),
    }
}

/// Serves MCP: over HTTP when `options` say so, else over stdio.
fn serve(options: &ServeArgs, project_named: bool, settings: &Settings) -> Exit {
    normal_logs::init(settings.log.as_deref());
    if let Some(place) = &settings.fault_inject {
        tracing::warn!(place = %place, "BMAD_FAULT_INJECT is set: calls fail at that place (for tests only)");
        bmad_mcp::fault::arm(place);
    }
    match &options.http {
        // Over HTTP each call names its project among the `--root`s; a default project
        // would be ignored, so saying one is refused rather than silently dropped.
        Some(_) if project_named => {
            eprintln!("bmad-mcp: `--project` does not apply to `serve --http`: calls name their project (`cwd`) among the directories `--root` allows");
            Exit::Refused
        }
        Some(addr) => serve_http(options, addr, settings),
        None => bmad_mcp::stdio::run(settings),
    }
}

/// Whether clap refused a setting's value for the plugin's hook, which Claude Code runs before
/// every tool use: the hook exits 0 whatever it is given
/// ([`bmad_mcp::terminal::hook`]), since a hook's exit 2 would block every call of the
/// host; the server itself, started with the same environment, refuses the value and says so.
fn hook_refused_a_setting(e: &clap::Error) -> bool {
    e.kind() == clap::error::ErrorKind::ValueValidation
        && std::env::args().nth(1).as_deref() == Some("hook")
}

/// Makes every thread allocate from one heap. glibc gives each thread that allocates a
/// heap of its own (an arena), and a thread kept for the process (the fsync workers, the
/// runtime's and the blocking pool's threads) keeps its arena resident: about half a MiB
/// each over a workflow, against a target of 12 MiB in all. The server runs one call at a
/// time per client, and glibc's per-thread caches serve small allocations without the
/// heap's lock, so one heap costs no measurable time (the workflow bench compares).
/// Called first, before any thread exists, which is when glibc allows it.
fn share_one_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; nothing else runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Reads every pattern the server matches with, in this build: one that needs a regex
/// feature the build left out would otherwise fail only the call whose input reaches it,
/// as a defect of ours that looks like one of the user's.
fn check_patterns() -> Result<(), ()> {
    bmad_mcp::workflow::check_patterns().map_err(|e| {
        eprintln!("bmad-mcp: cannot start: {e}. This is a defect in bmad-mcp (a pattern this build cannot read), not in your project; report it with the output of `bmad-mcp --version`");
    })
}

/// Serves MCP over HTTP, with the human's dashboard beside it (made once the address is
/// bound), until SIGTERM or SIGINT.
fn serve_http(options: &ServeArgs, addr: &str, settings: &Settings) -> Exit {
    use bmad_mcp::{dashboard, http};
    let plan = match http::plan(options, addr) {
        Ok(plan) => plan,
        Err(exit) => return exit,
    };
    // Dropping the runtime (on return) waits for calls still running on blocking threads.
    http::run_to_end(&mut tokio::runtime::Builder::new_multi_thread(), async {
        let at = http::listen(plan).await?;
        let beside = dashboard::beside_http(&at, &settings.acting);
        http::serve(at, settings, beside).await
    })
}
