//! The settings of this process: what the person who runs it chose through the global flags
//! and the environment, read once at start ([`Given`], as `main` parses the
//! command line) and handed down. Each layer takes the part it needs as plain values; none
//! reads the environment for a setting. (Not settings: the environment a project's checks
//! are given, which is theirs, and what `/proc` says of other processes.)
//!
//! docs/reference.md ("Environment") documents each variable.

use std::path::PathBuf;
use std::time::Duration;

use crate::files::{DefaultRoot, DEFAULT_LOCK_WAIT};
use crate::workflow::person::Person;

/// The project directory when a call gives no `cwd`.
pub const PROJECT_ROOT_ENV: &str = "BMAD_PROJECT_ROOT";
/// The flag that names the project, as a source of the default root.
pub const PROJECT_FLAG: &str = "--project";
/// Set by Claude Code for the servers it starts; the project after [`PROJECT_ROOT_ENV`].
pub const CLAUDE_PROJECT_ENV: &str = "CLAUDE_PROJECT_DIR";
/// Where Claude Code keeps the user's configuration (else `~/.claude`): the server reads the
/// hooks on its dialog there, as Claude Code does.
pub const CLAUDE_CONFIG_ENV: &str = "CLAUDE_CONFIG_DIR";
/// The human (`Name <email>`), over git's identity; `--owner` is over it.
pub const OWNER_ENV: &str = "BMAD_OWNER";
/// How long a change waits for the project lock, in seconds (fractions allowed).
pub const LOCK_WAIT_ENV: &str = "BMAD_LOCK_WAIT_SECS";
/// A project check's time limit when neither it nor the policy file names one, in seconds.
pub const CHECK_TIMEOUT_ENV: &str = "BMAD_CHECK_TIMEOUT_SECS";
/// The limit of each submitted result.
pub const MAX_RESULT_ENV: &str = "BMAD_MAX_RESULT_BYTES";
/// The limit of the objective.
pub const MAX_OBJECTIVE_ENV: &str = "BMAD_MAX_OBJECTIVE_BYTES";
/// The limit of every other text a call carries (feedback, answers, scope, `cwd`, …).
pub const MAX_TEXT_ENV: &str = "BMAD_MAX_TEXT_BYTES";
/// The limit of one JSON-RPC message: one line on stdin, one request body over HTTP.
pub const MAX_LINE_ENV: &str = "BMAD_MAX_LINE_BYTES";
/// How long a request's body may take to arrive over HTTP, in seconds. The answer has no
/// time limit: a call may wait for the human's dialog or run the project's checks.
pub const REQUEST_SECS_ENV: &str = "BMAD_HTTP_REQUEST_SECS";
/// How long a connection may take to send a request's headers, in seconds (past it, the
/// connection is closed).
pub const HEADER_SECS_ENV: &str = "BMAD_HTTP_HEADER_SECS";
/// The HTTP connections open at once.
pub const MAX_CONNECTIONS_ENV: &str = "BMAD_HTTP_MAX_CONNECTIONS";
/// The bytes of HTTP request bodies being read at once.
pub const BODIES_BYTES_ENV: &str = "BMAD_HTTP_BODIES_BYTES";
/// `local` keeps a story's sprint claim in this clone: no ref is pushed to the team's
/// remote (for a remote the team does not want the server to write to).
pub const CLAIMS_ENV: &str = "BMAD_CLAIMS";
/// Which logs are written (to stderr).
pub const LOG_ENV: &str = "RUST_LOG";
/// The user's configuration directory, which holds their prompt folder.
pub const CONFIG_HOME_ENV: &str = "XDG_CONFIG_HOME";
/// Test only: the place (one of [`crate::fault::PLACES`]) where the server fails its own
/// calls, so that a test can see a fault through the real binary.
pub const FAULT_INJECT_ENV: &str = "BMAD_FAULT_INJECT";

/// The default of [`CHECK_TIMEOUT_ENV`].
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(600);
/// The default of [`MAX_LINE_ENV`]: 16 MiB, as rmcp's.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// The default of [`REQUEST_SECS_ENV`]: a 16 MiB message arrives over loopback in well
/// under a second; a minute leaves room for a slow link.
pub const DEFAULT_REQUEST_SECS: u64 = 60;
/// The default of [`HEADER_SECS_ENV`], hyper's own: an idle keep-alive connection is
/// closed after it too, so clients that keep connections longer than that reconnect.
pub const DEFAULT_HEADER_SECS: u64 = 30;
/// The default of [`MAX_CONNECTIONS_ENV`].
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// The default of [`BODIES_BYTES_ENV`]: two messages of the largest size.
pub const DEFAULT_BODIES_BYTES: usize = 32 * 1024 * 1024;

/// Everything this process was told by whoever started it, besides the command itself.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The project when a call or a command names none: `--project`, else
    /// [`PROJECT_ROOT_ENV`], else [`CLAUDE_PROJECT_ENV`], else the project the working
    /// directory is in.
    pub default_root: DefaultRoot,
    /// Who changes sessions here, how long a change may wait and its checks run, and the
    /// user's role prompts it may hand over.
    pub acting: Acting,
    /// The size limits of a call's inputs.
    pub limits: Limits,
    /// [`MAX_LINE_ENV`], else [`DEFAULT_MAX_LINE_BYTES`].
    pub max_line_bytes: usize,
    /// The bounds of `serve --http`.
    pub http: Http,
    /// [`LOG_ENV`] when it is set and not blank: which logs to write (`main` sets the logs
    /// up with it).
    pub log: Option<String>,
    /// [`FAULT_INJECT_ENV`] when it is set and not blank: the place a test makes the
    /// server fail at (`main` arms it for the servers).
    pub fault_inject: Option<String>,
}

/// What a change to a session is made with: the part of the settings a store holds.
#[derive(Debug, Clone)]
pub struct Acting {
    /// The user's folder of role prompts: `bmad-mcp/prompts` in the user's configuration
    /// directory ([`CONFIG_HOME_ENV`] when it is an absolute path, else `~/.config`);
    /// `None` without one.
    pub user_prompts: Option<PathBuf>,
    /// The person recorded as a session's owner and a decision's `decider`, and whom
    /// `list --mine` means: `--owner`, else [`OWNER_ENV`]; `None` leaves it to git's
    /// identity.
    pub owner: Option<Person>,
    /// How long a change waits for the project lock: [`LOCK_WAIT_ENV`], else
    /// [`DEFAULT_LOCK_WAIT`].
    pub lock_wait: Duration,
    /// A project check's time limit when neither it nor the policy file names one:
    /// [`CHECK_TIMEOUT_ENV`], else [`DEFAULT_CHECK_TIMEOUT`].
    pub check_timeout: Duration,
    /// Whether a story's sprint is claimed on the team's remote (a pushed ref), as it is
    /// unless [`CLAIMS_ENV`] is `local`.
    pub claims_on_remote: bool,
    /// The user's home and Claude Code's configuration folder ([`CLAUDE_CONFIG_ENV`]),
    /// where the hooks on its dialog are read when the host's own process does not say.
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
}

impl Default for Acting {
    /// No user prompt folder, nobody named over git's identity, and the default waits.
    fn default() -> Self {
        Acting {
            user_prompts: None,
            owner: None,
            lock_wait: DEFAULT_LOCK_WAIT,
            check_timeout: DEFAULT_CHECK_TIMEOUT,
            claims_on_remote: true,
            home: None,
            claude_config_dir: None,
        }
    }
}

/// Size limits of a call's inputs (docs/spec.md §12.2).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// [`MAX_RESULT_ENV`]: each submitted result.
    pub result_bytes: usize,
    /// [`MAX_OBJECTIVE_ENV`]: the objective.
    pub objective_bytes: usize,
    /// [`MAX_TEXT_ENV`]: feedback, answers, scope and the other texts.
    pub text_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            result_bytes: 4 * 1024 * 1024,
            objective_bytes: 4 * 1024,
            text_bytes: 64 * 1024,
        }
    }
}

/// The bounds of `serve --http` on what clients send.
#[derive(Debug, Clone, Copy)]
pub struct Http {
    /// [`REQUEST_SECS_ENV`]: how long a request's body may take to arrive.
    pub request_time: Duration,
    /// [`HEADER_SECS_ENV`]: how long a connection may take to send a request's headers.
    pub header_time: Duration,
    /// [`MAX_CONNECTIONS_ENV`]: the connections open at once.
    pub max_connections: usize,
    /// [`BODIES_BYTES_ENV`]: the bytes of request bodies read at once.
    pub bodies_bytes: usize,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            request_time: Duration::from_secs(DEFAULT_REQUEST_SECS),
            header_time: Duration::from_secs(DEFAULT_HEADER_SECS),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            bodies_bytes: DEFAULT_BODIES_BYTES,
        }
    }
}

/// The settings as the person gave them: each a flag of every command and an environment
/// variable (the flag wins), read and checked by clap when `main` parses the command line,
/// so that a value the setting does not allow stops the binary at start (exit 2) with a
/// message naming the variable, and `--help` lists them all. Unset, each has its default.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Settings (a flag, or the environment variable shown)")]
pub struct Given {
    /// The project directory when a call gives no `cwd`; wins over CLAUDE_PROJECT_DIR
    /// (`--project` wins over both).
    #[arg(long, global = true, value_name = "DIR", env = PROJECT_ROOT_ENV)]
    pub project_root: Option<String>,
    /// Set by Claude Code for the servers it starts: the project directory when nothing
    /// above names one (then: the project the working directory is in).
    #[arg(long, global = true, value_name = "DIR", env = CLAUDE_PROJECT_ENV)]
    pub claude_project_dir: Option<String>,
    /// The person recorded as a session's owner and a decision's `decider`, and whom
    /// `list --mine` means, as `Name <email>` (blank: nobody; default: git's user.name and
    /// user.email).
    #[arg(long, global = true, value_name = "PERSON", env = OWNER_ENV)]
    pub owner: Option<String>,
    /// How long a change waits for the project lock, in seconds (fractions allowed, 0 to
    /// 86400) [default: 10].
    #[arg(long, global = true, value_name = "SECS", env = LOCK_WAIT_ENV, value_parser = lock_wait)]
    pub lock_wait_secs: Option<Duration>,
    /// A project check's time limit when neither it nor the policy file names one, in
    /// seconds [default: 600].
    #[arg(long, global = true, value_name = "SECS", env = CHECK_TIMEOUT_ENV, value_parser = |v: &str| seconds(CHECK_TIMEOUT_ENV, v, DEFAULT_CHECK_TIMEOUT))]
    pub check_timeout_secs: Option<Duration>,
    /// The limit of each submitted result, in bytes [default: 4194304].
    #[arg(long, global = true, value_name = "BYTES", env = MAX_RESULT_ENV, value_parser = |v: &str| positive(MAX_RESULT_ENV, v, Limits::default().result_bytes))]
    pub max_result_bytes: Option<usize>,
    /// The limit of the objective, in bytes [default: 4096].
    #[arg(long, global = true, value_name = "BYTES", env = MAX_OBJECTIVE_ENV, value_parser = |v: &str| positive(MAX_OBJECTIVE_ENV, v, Limits::default().objective_bytes))]
    pub max_objective_bytes: Option<usize>,
    /// The limit of feedback, scope, cursor, cwd and each answer, in bytes [default: 65536].
    #[arg(long, global = true, value_name = "BYTES", env = MAX_TEXT_ENV, value_parser = |v: &str| positive(MAX_TEXT_ENV, v, Limits::default().text_bytes))]
    pub max_text_bytes: Option<usize>,
    /// The limit of one JSON-RPC message (a line on stdin, a request body over HTTP), in
    /// bytes [default: 16777216].
    #[arg(long, global = true, value_name = "BYTES", env = MAX_LINE_ENV, value_parser = |v: &str| positive(MAX_LINE_ENV, v, DEFAULT_MAX_LINE_BYTES))]
    pub max_line_bytes: Option<usize>,
    /// `serve --http`: how long a request's body may take to arrive, in seconds
    /// [default: 60].
    #[arg(long, global = true, value_name = "SECS", env = REQUEST_SECS_ENV, value_parser = |v: &str| seconds(REQUEST_SECS_ENV, v, Http::default().request_time))]
    pub http_request_secs: Option<Duration>,
    /// `serve --http`: how long a connection may take to send a request's headers, in
    /// seconds [default: 30].
    #[arg(long, global = true, value_name = "SECS", env = HEADER_SECS_ENV, value_parser = |v: &str| seconds(HEADER_SECS_ENV, v, Http::default().header_time))]
    pub http_header_secs: Option<Duration>,
    /// `serve --http`: the connections open at once [default: 256].
    #[arg(long, global = true, value_name = "N", env = MAX_CONNECTIONS_ENV, value_parser = |v: &str| positive(MAX_CONNECTIONS_ENV, v, DEFAULT_MAX_CONNECTIONS))]
    pub http_max_connections: Option<usize>,
    /// `serve --http`: the bytes of request bodies read at once [default: 33554432].
    #[arg(long, global = true, value_name = "BYTES", env = BODIES_BYTES_ENV, value_parser = |v: &str| positive(BODIES_BYTES_ENV, v, DEFAULT_BODIES_BYTES))]
    pub http_bodies_bytes: Option<usize>,
    /// `local` keeps a story's sprint claim in this clone; `remote` (the default) pushes it
    /// to the team's remote as a ref.
    #[arg(long, global = true, value_name = "WHERE", env = CLAIMS_ENV, value_parser = claims)]
    pub claims: Option<bool>,
    /// Which logs are written to stderr: a default level and `target=level` pairs
    /// (`bmad_mcp=debug,warn`) [default: warn].
    #[arg(long, global = true, value_name = "FILTER", env = LOG_ENV)]
    pub log: Option<String>,
    /// Where Claude Code keeps the user's configuration (default: `~/.claude`): the hooks on
    /// its dialog are read there.
    #[arg(long, global = true, value_name = "DIR", env = CLAUDE_CONFIG_ENV)]
    pub claude_config_dir: Option<String>,
    /// For tests only: the place where the server fails its own calls.
    #[arg(long, global = true, hide = true, env = FAULT_INJECT_ENV)]
    pub fault_inject: Option<String>,
}

/// `value` as a positive whole number, the error naming `variable`; blank, `default` (as
/// unset: `BMAD_MAX_TEXT_BYTES= bmad-mcp` clears a value the environment carried).
fn positive(variable: &str, value: &str, default: usize) -> Result<usize, String> {
    match value.trim() {
        "" => Ok(default),
        v => match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{variable} must be a positive whole number")),
        },
    }
}

/// `value` as a positive whole number of seconds, the error naming `variable`; blank,
/// `default`.
fn seconds(variable: &str, value: &str, default: Duration) -> Result<Duration, String> {
    let default = usize::try_from(default.as_secs()).unwrap_or(usize::MAX);
    positive(variable, value, default)
        .map(|n| Duration::from_secs(n as u64))
        .map_err(|_| format!("{variable} must be a positive whole number of seconds"))
}

/// The lock's wait: seconds from 0 to a day, fractions allowed; blank, the default.
fn lock_wait(value: &str) -> Result<Duration, String> {
    if value.trim().is_empty() {
        return Ok(DEFAULT_LOCK_WAIT);
    }
    match value.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "{LOCK_WAIT_ENV} must be a number of seconds from 0 to 86400"
        )),
    }
}

/// Whether claims go to the remote: `remote` (or blank) yes, `local` no.
fn claims(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "remote" => Ok(true),
        "local" => Ok(false),
        _ => Err(format!("{CLAIMS_ENV} must be `local` or `remote`")),
    }
}

/// A text setting, unless blank.
fn not_blank(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

impl Settings {
    /// The settings `given` names, the defaults for the rest.
    pub fn from_given(given: Given) -> Settings {
        let default_root = [
            (PROJECT_ROOT_ENV, given.project_root),
            (CLAUDE_PROJECT_ENV, given.claude_project_dir),
        ]
        .into_iter()
        .find_map(|(name, value)| {
            let value = value.filter(|v| !v.trim().is_empty())?;
            Some(DefaultRoot {
                source_name: name,
                value,
            })
        })
        .unwrap_or_else(DefaultRoot::working_directory);
        let (limits, http) = (Limits::default(), Http::default());
        Settings {
            default_root,
            acting: Acting {
                // The XDG rule (an absolute XDG_CONFIG_HOME, else ~/.config), as `dirs`
                // keeps it: the user's folder of role prompts is theirs, not a setting.
                user_prompts: dirs::config_dir().map(|c| c.join("bmad-mcp").join("prompts")),
                owner: given.owner.as_deref().and_then(Person::parse),
                lock_wait: given.lock_wait_secs.unwrap_or(DEFAULT_LOCK_WAIT),
                check_timeout: given.check_timeout_secs.unwrap_or(DEFAULT_CHECK_TIMEOUT),
                claims_on_remote: given.claims.unwrap_or(true),
                // The home is the user's, as `dirs` finds it; not a setting.
                home: dirs::home_dir(),
                claude_config_dir: not_blank(given.claude_config_dir).map(PathBuf::from),
            },
            limits: Limits {
                result_bytes: given.max_result_bytes.unwrap_or(limits.result_bytes),
                objective_bytes: given.max_objective_bytes.unwrap_or(limits.objective_bytes),
                text_bytes: given.max_text_bytes.unwrap_or(limits.text_bytes),
            },
            max_line_bytes: given.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
            http: Http {
                request_time: given.http_request_secs.unwrap_or(http.request_time),
                header_time: given.http_header_secs.unwrap_or(http.header_time),
                max_connections: given.http_max_connections.unwrap_or(http.max_connections),
                bodies_bytes: given.http_bodies_bytes.unwrap_or(http.bodies_bytes),
            },
            log: not_blank(given.log),
            fault_inject: not_blank(given.fault_inject),
        }
    }

    /// The settings with `--project` (when given) as the default root: a relative path is
    /// taken from the working directory, as every command line tool does.
    pub fn with_project(mut self, project: Option<&str>) -> Settings {
        if let Some(value) = project {
            let path = std::path::absolute(value).unwrap_or_else(|_| PathBuf::from(value));
            self.default_root = DefaultRoot {
                source_name: PROJECT_FLAG,
                value: path.display().to_string(),
            };
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::path::Path;

    /// The settings as a command line gives them (the same parsers read the environment).
    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        given: Given,
    }

    fn parse(args: &[&str]) -> Result<Settings, clap::Error> {
        let line = Line::try_parse_from(std::iter::once("bmad-mcp").chain(args.iter().copied()))?;
        Ok(Settings::from_given(line.given))
    }

    fn settings(args: &[&str]) -> Settings {
        parse(args).unwrap()
    }

    #[test]
    fn nothing_given_leaves_every_default() {
        let s = Settings::from_given(Given::default());
        assert_eq!(
            s.default_root.source_name,
            crate::files::project::WORKING_DIRECTORY
        );
        assert!(s.acting.owner.is_none());
        assert_eq!(s.acting.lock_wait, DEFAULT_LOCK_WAIT);
        assert_eq!(s.acting.check_timeout, DEFAULT_CHECK_TIMEOUT);
        assert_eq!(s.limits.result_bytes, Limits::default().result_bytes);
        assert_eq!(s.limits.objective_bytes, 4096);
        assert_eq!(s.limits.text_bytes, 65536);
        assert_eq!(s.max_line_bytes, DEFAULT_MAX_LINE_BYTES);
        assert_eq!(s.http.request_time, Duration::from_secs(60));
        assert_eq!(s.http.header_time, Duration::from_secs(30));
        assert_eq!(s.http.max_connections, 256);
        assert_eq!(s.http.bodies_bytes, DEFAULT_BODIES_BYTES);
        assert!(s.log.is_none());
        assert!(s.acting.claims_on_remote);
    }

    #[test]
    fn claims_are_local_or_remote_and_nothing_else() {
        for (value, on_remote) in [("local", false), (" LOCAL ", false), ("remote", true)] {
            let s = settings(&["--claims", value]);
            assert_eq!(s.acting.claims_on_remote, on_remote, "{value:?}");
        }
        let e = parse(&["--claims", "nowhere"]).unwrap_err().to_string();
        assert!(e.contains(CLAIMS_ENV), "{e}");
    }

    #[test]
    fn the_project_flag_wins_and_a_relative_one_is_taken_from_the_working_directory() {
        let s = settings(&["--project-root", "/a"]).with_project(Some("."));
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(s.default_root.source_name, PROJECT_FLAG);
        assert_eq!(Path::new(&s.default_root.value), cwd);
        let s = settings(&[]).with_project(Some("sub/dir"));
        assert_eq!(Path::new(&s.default_root.value), cwd.join("sub/dir"));
        let s = settings(&["--project-root", "/a"]).with_project(None);
        assert_eq!(s.default_root.value, "/a");
    }

    #[test]
    fn the_project_root_comes_from_the_first_one_not_blank() {
        let s = settings(&["--project-root", "/a", "--claude-project-dir", "/b"]);
        assert_eq!(
            (s.default_root.source_name, s.default_root.value.as_str()),
            (PROJECT_ROOT_ENV, "/a")
        );
        let s = settings(&["--project-root", "  ", "--claude-project-dir", "/b"]);
        assert_eq!(
            (s.default_root.source_name, s.default_root.value.as_str()),
            (CLAUDE_PROJECT_ENV, "/b")
        );
    }

    #[test]
    fn an_owner_is_a_person_and_a_blank_one_names_nobody() {
        let owner = settings(&["--owner", "Flag <flag@example.com>"])
            .acting
            .owner;
        assert_eq!(owner.unwrap().email.as_deref(), Some("flag@example.com"));
        // As when `--owner ""` replaced the variable: nobody named, git's identity applies.
        assert!(settings(&["--owner", " "]).acting.owner.is_none());
    }

    #[test]
    fn numbers_in_range_are_taken() {
        let s = settings(&[
            "--lock-wait-secs=0.25",
            "--max-text-bytes=12",
            "--http-request-secs= 5 ",
        ]);
        assert_eq!(s.acting.lock_wait, Duration::from_millis(250));
        assert_eq!(s.limits.text_bytes, 12);
        assert_eq!(s.http.request_time, Duration::from_secs(5));
        let s = settings(&["--lock-wait-secs", "0"]);
        assert_eq!(s.acting.lock_wait, Duration::ZERO);
        // Blank, as unset.
        let s = settings(&[
            "--lock-wait-secs=",
            "--max-text-bytes= ",
            "--http-header-secs=",
        ]);
        assert_eq!(s.acting.lock_wait, DEFAULT_LOCK_WAIT);
        assert_eq!(s.limits.text_bytes, Limits::default().text_bytes);
        assert_eq!(s.http.header_time, Http::default().header_time);
    }

    /// A value the setting does not allow stops the binary at start, naming the variable,
    /// instead of quietly taking the default.
    #[test]
    fn a_number_out_of_range_is_refused_naming_its_variable() {
        for (flag, value, variable) in [
            ("--check-timeout-secs", "0", CHECK_TIMEOUT_ENV),
            ("--max-result-bytes", "-3", MAX_RESULT_ENV),
            ("--max-line-bytes", "many", MAX_LINE_ENV),
            ("--http-max-connections", "0", MAX_CONNECTIONS_ENV),
            ("--lock-wait-secs", "ten", LOCK_WAIT_ENV),
            ("--lock-wait-secs", "-1", LOCK_WAIT_ENV),
            ("--lock-wait-secs", "86401", LOCK_WAIT_ENV),
            ("--lock-wait-secs", "NaN", LOCK_WAIT_ENV),
            ("--lock-wait-secs", "inf", LOCK_WAIT_ENV),
        ] {
            let e = parse(&[&format!("{flag}={value}")]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
            let said = e.to_string();
            assert!(said.contains(variable), "{flag} {value}: {said}");
        }
    }

    #[test]
    fn a_blank_log_filter_is_none() {
        assert!(settings(&["--log", " "]).log.is_none());
        let s = settings(&["--log", "bmad_mcp=debug"]);
        assert_eq!(s.log.as_deref(), Some("bmad_mcp=debug"));
    }
}
