//! The integration tests: one binary, `it`, with a module per concern. Every module drives
//! the `bmad-mcp` binary (or reads the repository) as a user or a host would: the binary
//! `BMAD_MCP_BIN` names, which `./scripts/test` builds as the README installs it, else the
//! server built alone (tests/harness.rs). They belong to the package `tests/`
//! (`bmad-mcp-harness`), so that their dependencies never reach the server's build.
//!
//!     ./scripts/test                        # all of them, the pinned clients installed first
//!     ./scripts/test dialog::               # one module
//!     cargo test -p bmad-mcp-harness --test it ::http   # the HTTP variant of each two-transport scenario
//!
//! The tests that need a pinned external client (the Python SDK, the Claude Code CLI, the
//! MCP conformance suite on Node 22) are `#[ignore]`d with the reason, so a bare
//! `cargo test` on a fresh clone passes and lists them as ignored; `./scripts/test`
//! installs the clients into `target/` and runs everything (`--include-ignored`). Tests
//! that need only `jq`, git or a pseudo-terminal are not ignored.
//!
//! Data the tests read stays beside this folder: `tests/python/` (the Python SDK clients)
//! and `tests/conformance/` (the conformance suite's expected failures).

// The helpers: the binary over stdio (rmcp's client, raw JSON-RPC lines), `serve --http`,
// a scenario run over either transport, the human in a dialog and in a terminal, the
// Claude Code CLI.
mod support;

// The workflow through the tool.
mod bad_input; // malformed calls, each refused with its code, the sandbox untouched
mod checks; // the project's checks (`.bmad/config.toml`): run, recorded, bounded, cancelled
mod empty_diff; // a development report claiming changes git does not show, refused
mod engines; // the `engines` of `start`, codex results and the replies that name them
mod gates; // gates a score cannot pass; failing reviews and QA stop at the human
mod host_gates; // who passes a gate on each host: the human's channels where it cannot ask
mod host_text; // what the model reads in Claude Code: text alone, said once, followed to the end
#[cfg(unix)]
mod hosts; // Gemini CLI, opencode, Codex and Copilot CLI end to end, a fake model on loopback
mod human_work; // the documents humans edit are read as written; failed calls leave nothing
mod labels; // every word reaches prompts and pages under its author's label, in every channel
mod messages; // messages match the rules: keys, sections, slugs, words for people, paths
mod night; // `bmad-mcp run`: an approved 8-story plan built by Claude Code sessions, three parked, one resumed, a SIGKILL survived
mod notices; // the no-checks notice in the project's language, once; who each field is for
#[cfg(unix)]
mod races; // confinement while folders are swapped for links; a hard-linked lock file
mod replies; // replies stay bounded whatever comes in
mod resources; // the MCP prompts and the `bmad://sessions…` resources
mod stories; // two sprints as stories from two git worktrees at once, then the parent's final QA
mod strict_policy; // under `gates = "human"` replies name the human's channel
mod trace; // requirements traced from the PRD to the QA verdict; the intent check
mod tracks; // the quick and fix tracks to completion; a quick task promoted by the human
mod words; // the human's words kept, loops keep their cause, the end says what was built
mod workflow_e2e; // a whole PO → QA run in both eras, every reply and every file

// The human's channels.
mod cli; // the terminal commands, through a pseudo-terminal
mod dashboard; // `bmad-mcp dashboard` over HTTP: the secret, Host, Origin, CSP, decisions, rounds, live updates
mod dashboard_browser; // the dashboard in headless Chromium over WebDriver: read, compare, decide
mod dashboard_loop; // a decision on the dashboard completes the assistant's wait; replies link to the page
mod dashboard_review; // the dashboard in Chromium: rounds named, what changed since read, drift, lessons, print
mod dashboard_team; // the dashboard's team view in Chromium: owner, branch, stories, the matrix
mod dialog; // the human decides in the client's dialog, both eras, stdio and HTTP
mod dialog_origin; // a dialog decision records who is behind the connection; under an assistant, the host's
mod hook; // `bmad-mcp hook pre-tool-use`, as the plugin runs it
mod shown; // what a human is shown is what runs: escapes visible, commands whole
mod terminal_origin; // a terminal decision records where it came from; under an assistant, refused

// The server process: where it works, what it writes, how it ends.
mod bad_days; // a team's bad days in three clones: dead clones' claims, who holds what, a worktree joining the dashboard, a conflict
mod bad_days_remote; // three clones where the local and the remote picture disagree: claims counted, released, kept offline, a hanging remote
mod concurrency; // several clients on one project: processes (stdio), one server (HTTP)
mod crash; // SIGKILL during writes: every file whole
mod faults; // a panic in a call: said as the server's own, recorded, never retried; status names it
mod lessons; // lessons recorded, recalled, retired, merged; the BMAD install; the project context
mod method; // the real BMAD method installer's projects: personas, customizations, languages, skills
mod method_begin; // a task begun from the PRD and architecture the BMAD method made: offered, taken, gated, refused
mod method_both_ways; // one project worked both ways, the method's own status after each step as bmad-users.md shows it
mod method_documents; // the method's PRD and spine, written in its installed templates, judged by them; accepted as they are by the human
mod method_handoff; // a story handed over both ways with the method's bmad-build: its spec written and read, a story the method holds shown and refused
mod method_plan; // the plan shared with the BMAD method: its epics, its sprint status followed and merged
mod method_retro; // the method's retrospective both ways: its action items in later prompts, a task's lessons offered to it
mod method_review; // the review in layers with a real BMAD install and without; the deferred-work ledger
mod method_round; // the BMAD method's files the server writes are no one's change: the round, drift
mod method_skills; // the method's skill per stage: each stage's prompt sends the host to the installed skill
mod method_voice; // the method's voice and files: epics from its PRD, one PRD per glob, the ledger closed, no retrospective without an epic, uv
mod project_root; // finding the project from the working directory, as git does
mod prompt_overrides; // role prompts from the project and the user's config
mod protocol; // the JSON-RPC wire: one answer per request, limits, a closed stdout
mod restart; // sessions survive the process
mod schema; // the tool's schemas are valid JSON Schema 2020-12
mod shipped; // the suite tests what users install: no test-only feature reaches the server
mod shutdown; // ended mid-session (stdin closed, SIGTERM): calls answered, exit 0
mod stdout; // stdout carries only JSON-RPC, even at trace level; --version, --help
mod team_git; // a team in real git: two clones merge their tasks; one task advanced on both is reported

// `serve --http`.
mod check_env; // a check runs without the server's secrets
mod http; // a call over HTTP in both eras, roots, the lock-down (token, Host, Origin, sizes)
mod http_admission; // nothing is spent before authentication: checks before the body, header time, connection cap
mod http_long_calls; // a call may take as long as the human or the checks take
mod http_quiet; // a health check (connect, then close) logs no ERROR line

// Real clients and the repository's own promises.
mod conformance; // the official MCP conformance suite against `serve --http`
mod examples; // the examples run as users run them; the committed sample stays theirs
mod http_claude; // the pinned Claude Code CLI registers `serve --http` and connects
mod inspector; // the MCP Inspector's CLI lists the tool and starts a task
mod machine_model; // the fuzz crate's model of the state machine, on its corpus
mod plugin; // the Claude Code plugin as the pinned Claude Code CLI validates it
mod python_sdk; // the official MCP Python SDK drives workflows, gates, resources, HTTP
mod readme;
mod setup; // `bmad-mcp setup <host>` for every host; each installed host's `mcp list` reads it // the README's jq recipes, environment table and commands stay true
