//! The settings of this process: what the person who runs it chose through the global flags
//! and the environment, read once at start ([`Settings::read`], as `main` parses the
//! command line) and handed down. Each layer takes the part it needs as plain values; none
//! reads the environment for a setting. (Not settings: the environment a project's checks
//! are given, which is theirs, and what `/proc` says of other processes.)
//!
//! docs/reference.md ("Environment") documents each variable.

use std::ffi::OsString;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use crate::files::{DefaultRoot, DEFAULT_LOCK_WAIT};
use crate::workflow::person::Person;

/// The project directory when a call gives no `cwd`.
pub const PROJECT_ROOT_ENV: &str = "BMAD_PROJECT_ROOT";
/// The flag that names the project, as a source of the default root.
pub const PROJECT_FLAG: &str = "--project";
/// Set by Claude Code for the servers it starts; the project after [`PROJECT_ROOT_ENV`].
pub const CLAUDE_PROJECT_ENV: &str = "CLAUDE_PROJECT_DIR";
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
    /// [`LOG_ENV`] when it is set and not blank: which logs to write (`main` reads it).
    pub log: Option<String>,
    /// [`FAULT_INJECT_ENV`] when it is set and not blank: the place a test makes the
    /// server fail at (`main` arms it for the servers).
    pub fault_inject: Option<String>,
}

/// What a change to a session is made with: the part of the settings a store holds.
#[derive(Debug, Clone)]
pub struct Acting {
    /// The user's folder of role prompts: `bmad-mcp/prompts` in [`CONFIG_HOME_ENV`] when it
    /// is an absolute path, else in the system's configuration directory; `None` without
    /// one.
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

impl Settings {
    /// The settings this process's environment gives, with `owner` (`--owner`) over
    /// [`OWNER_ENV`]. A number that is not one the variable allows leaves its default.
    pub fn read(owner: Option<&str>) -> Settings {
        Settings::from_vars(owner, |name| std::env::var_os(name))
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

    /// The settings the variables `var` names give.
    fn from_vars(owner: Option<&str>, var: impl Fn(&str) -> Option<OsString>) -> Settings {
        let vars = Vars(var);
        let default_root = [PROJECT_ROOT_ENV, CLAUDE_PROJECT_ENV]
            .into_iter()
            .find_map(|name| {
                let value = vars.text(name).filter(|v| !v.trim().is_empty())?;
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
                user_prompts: (vars.0)(CONFIG_HOME_ENV)
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(dirs::config_dir)
                    .map(|config| config.join("bmad-mcp").join("prompts")),
                owner: owner
                    .map(str::to_string)
                    .or_else(|| vars.text(OWNER_ENV))
                    .and_then(|v| Person::parse(&v)),
                lock_wait: vars
                    .text(LOCK_WAIT_ENV)
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && (0.0..=86_400.0).contains(s))
                    .map_or(DEFAULT_LOCK_WAIT, Duration::from_secs_f64),
                check_timeout: vars.seconds(CHECK_TIMEOUT_ENV, DEFAULT_CHECK_TIMEOUT),
                claims_on_remote: vars
                    .text(CLAIMS_ENV)
                    .is_none_or(|v| !v.trim().eq_ignore_ascii_case("local")),
            },
            limits: Limits {
                result_bytes: vars.positive(MAX_RESULT_ENV, limits.result_bytes),
                objective_bytes: vars.positive(MAX_OBJECTIVE_ENV, limits.objective_bytes),
                text_bytes: vars.positive(MAX_TEXT_ENV, limits.text_bytes),
            },
            max_line_bytes: vars.positive(MAX_LINE_ENV, DEFAULT_MAX_LINE_BYTES),
            http: Http {
                request_time: vars.seconds(REQUEST_SECS_ENV, http.request_time),
                header_time: vars.seconds(HEADER_SECS_ENV, http.header_time),
                max_connections: vars.positive(MAX_CONNECTIONS_ENV, http.max_connections),
                bodies_bytes: vars.positive(BODIES_BYTES_ENV, http.bodies_bytes),
            },
            log: vars.text(LOG_ENV).filter(|v| !v.trim().is_empty()),
            fault_inject: vars
                .text(FAULT_INJECT_ENV)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
        }
    }
}

/// The variables, read through a function (the process's environment, or a test's).
struct Vars<F>(F);

impl<F: Fn(&str) -> Option<OsString>> Vars<F> {
    /// The variable `name` when it is set and is Unicode.
    fn text(&self, name: &str) -> Option<String> {
        (self.0)(name).and_then(|v| v.into_string().ok())
    }

    /// The variable `name` when it is a positive whole number, else `default`.
    fn positive<T: FromStr + PartialEq + Default>(&self, name: &str, default: T) -> T {
        self.text(name)
            .and_then(|v| v.trim().parse::<T>().ok())
            .filter(|n| *n != T::default())
            .unwrap_or(default)
    }

    /// The variable `name` as a positive whole number of seconds, else `default`.
    fn seconds(&self, name: &str, default: Duration) -> Duration {
        Duration::from_secs(self.positive(name, default.as_secs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn settings(owner: Option<&str>, vars: &[(&str, &str)]) -> Settings {
        let vars: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Settings::from_vars(owner, |name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_leaves_every_default() {
        let s = settings(None, &[]);
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
    fn only_local_keeps_claims_off_the_remote() {
        for (value, on_remote) in [
            ("local", false),
            (" LOCAL ", false),
            ("remote", true),
            ("", true),
        ] {
            let s = settings(None, &[(CLAIMS_ENV, value)]);
            assert_eq!(s.acting.claims_on_remote, on_remote, "{value:?}");
        }
    }

    #[test]
    fn the_project_flag_wins_and_a_relative_one_is_taken_from_the_working_directory() {
        let s = settings(None, &[(PROJECT_ROOT_ENV, "/a")]).with_project(Some("."));
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(s.default_root.source_name, PROJECT_FLAG);
        assert_eq!(Path::new(&s.default_root.value), cwd);
        let s = settings(None, &[]).with_project(Some("sub/dir"));
        assert_eq!(Path::new(&s.default_root.value), cwd.join("sub/dir"));
        let s = settings(None, &[(PROJECT_ROOT_ENV, "/a")]).with_project(None);
        assert_eq!(s.default_root.value, "/a");
    }

    #[test]
    fn the_project_root_comes_from_the_first_variable_not_blank() {
        let both = [(PROJECT_ROOT_ENV, "/a"), (CLAUDE_PROJECT_ENV, "/b")];
        let s = settings(None, &both);
        assert_eq!(
            (s.default_root.source_name, s.default_root.value.as_str()),
            (PROJECT_ROOT_ENV, "/a")
        );
        let s = settings(
            None,
            &[(PROJECT_ROOT_ENV, "  "), (CLAUDE_PROJECT_ENV, "/b")],
        );
        assert_eq!(
            (s.default_root.source_name, s.default_root.value.as_str()),
            (CLAUDE_PROJECT_ENV, "/b")
        );
    }

    #[test]
    fn the_owner_flag_wins_over_the_variable_and_a_blank_one_names_nobody() {
        let env = [(OWNER_ENV, "Env Person <env@example.com>")];
        let from_env = settings(None, &env).acting.owner.unwrap();
        assert_eq!(from_env.email.as_deref(), Some("env@example.com"));
        let flagged = settings(Some("Flag <flag@example.com>"), &env)
            .acting
            .owner
            .unwrap();
        assert_eq!(flagged.email.as_deref(), Some("flag@example.com"));
        // As when `--owner ""` replaced the variable: nobody named, git's identity applies.
        assert!(settings(Some(" "), &env).acting.owner.is_none());
    }

    #[test]
    fn numbers_out_of_range_leave_the_default() {
        let s = settings(
            None,
            &[
                (LOCK_WAIT_ENV, "0.25"),
                (CHECK_TIMEOUT_ENV, "0"),
                (MAX_TEXT_ENV, "12"),
                (MAX_RESULT_ENV, "-3"),
                (MAX_LINE_ENV, "many"),
                (REQUEST_SECS_ENV, " 5 "),
                (MAX_CONNECTIONS_ENV, "0"),
            ],
        );
        assert_eq!(s.acting.lock_wait, Duration::from_millis(250));
        assert_eq!(s.acting.check_timeout, DEFAULT_CHECK_TIMEOUT);
        assert_eq!(s.limits.text_bytes, 12);
        assert_eq!(s.limits.result_bytes, Limits::default().result_bytes);
        assert_eq!(s.max_line_bytes, DEFAULT_MAX_LINE_BYTES);
        assert_eq!(s.http.request_time, Duration::from_secs(5));
        assert_eq!(s.http.max_connections, DEFAULT_MAX_CONNECTIONS);
        for wait in ["-1", "86401", "NaN", "inf"] {
            let s = settings(None, &[(LOCK_WAIT_ENV, wait)]);
            assert_eq!(s.acting.lock_wait, DEFAULT_LOCK_WAIT, "{wait}");
        }
        let s = settings(None, &[(LOCK_WAIT_ENV, "0")]);
        assert_eq!(s.acting.lock_wait, Duration::ZERO);
    }

    #[test]
    fn the_user_prompts_are_under_an_absolute_config_home_only() {
        let s = settings(None, &[(CONFIG_HOME_ENV, "/cfg")]);
        assert_eq!(
            s.acting.user_prompts,
            Some(PathBuf::from("/cfg/bmad-mcp/prompts"))
        );
        let relative = settings(None, &[(CONFIG_HOME_ENV, "cfg")]);
        assert_ne!(
            relative.acting.user_prompts,
            Some(PathBuf::from("cfg/bmad-mcp/prompts"))
        );
    }

    #[test]
    fn a_blank_log_filter_is_none() {
        assert!(settings(None, &[(LOG_ENV, " ")]).log.is_none());
        let s = settings(None, &[(LOG_ENV, "bmad_mcp=debug")]);
        assert_eq!(s.log.as_deref(), Some("bmad_mcp=debug"));
    }
}
