//! What the server saw when it ran the project's own checks: per check the command, how it
//! ended, how long it took, the digest of everything it printed and where the kept part of
//! that output is. The core records it on the stage and decides with it; running the checks
//! is the shell's job (the evidence layer above the store).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::content::ContentRef;

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// Exit status 0.
    Passed,
    /// Exited with another status, or was ended by a signal it did not get from us.
    Failed,
    /// Ran past its time limit; its process group was killed.
    TimedOut,
    /// The host cancelled the call; its process group was killed.
    Cancelled,
    /// It could not be started (no `sh`, the project directory is gone, …).
    NotStarted,
}

impl CheckOutcome {
    pub fn id(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "failed",
            CheckOutcome::TimedOut => "timed_out",
            CheckOutcome::Cancelled => "cancelled",
            CheckOutcome::NotStarted => "not_started",
        }
    }
}

/// One check as it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// The check's name in `.bmad/config.toml` (`test`, `lint`, …).
    pub name: String,
    /// The command, as the human approved it, run with `sh -c` in the project.
    pub command: String,
    pub outcome: CheckOutcome,
    /// The exit status, when the process exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub duration_ms: u64,
    /// Everything it printed (stdout and stderr, interleaved), in bytes …
    pub output_bytes: u64,
    /// … and the SHA-256 of all of it, even of what was not kept.
    pub output_sha256: String,
    /// The kept output (all of it, or its first and last 512 KiB), as a content reference
    /// (its file relative to the project); absent when the check printed nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ContentRef>,
    /// The last lines of the output (at most 2 KB), for the reply.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tail: String,
}

impl CheckResult {
    /// "`test` failed (exit 1)", "`lint` timed out after 600 s", for messages.
    pub fn describe(&self) -> String {
        let how = match self.outcome {
            CheckOutcome::Passed => "passed".to_string(),
            CheckOutcome::Failed => match (self.exit_code, self.signal) {
                (Some(code), _) => format!("failed (exit {code})"),
                (None, Some(sig)) => format!("failed (killed by signal {sig})"),
                (None, None) => "failed".to_string(),
            },
            CheckOutcome::TimedOut => {
                format!("timed out after {:.1} s", self.duration_ms as f64 / 1000.0)
            }
            CheckOutcome::Cancelled => "was cancelled".to_string(),
            CheckOutcome::NotStarted => "could not be started".to_string(),
        };
        format!("check `{}` {how}", self.name)
    }
}

/// The project's state when the checks ran, when it is a git repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GitState {
    /// `git rev-parse HEAD` (absent in a repository without commits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Whether `git status --porcelain` listed anything: the checks ran on uncommitted work.
    pub dirty: bool,
}

/// One run of every check, for one submission of a stage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRun {
    /// When the run started (RFC 3339).
    pub at: String,
    /// The SHA-256 of the approved `.bmad/config.toml` whose checks ran.
    pub config_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitState>,
    pub checks: Vec<CheckResult>,
}

impl CheckRun {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.checks
            .iter()
            .all(|c| c.outcome == CheckOutcome::Passed)
    }

    /// What does not pass, said for the human: `None` when every check passed.
    pub fn failure(&self) -> Option<String> {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.outcome != CheckOutcome::Passed)
            .map(CheckResult::describe)
            .collect();
        (!failed.is_empty()).then(|| failed.join(", "))
    }
}

/// What the server observed for a submission, beside the submission itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Evidence {
    /// No checks ran: the stage runs none, or the project names (or has approved) none.
    #[default]
    None,
    /// The checks ran; `outputs[i]` is the kept output of `run.checks[i]`, to be stored
    /// as a file beside the session's other texts.
    Ran { run: CheckRun, outputs: Vec<String> },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, outcome: CheckOutcome, exit_code: Option<i32>) -> CheckResult {
        CheckResult {
            name: name.into(),
            command: "true".into(),
            outcome,
            exit_code,
            signal: None,
            duration_ms: 1500,
            output_bytes: 0,
            output_sha256: String::new(),
            output: None,
            tail: String::new(),
        }
    }

    #[test]
    fn a_run_passes_only_when_every_check_passed_and_names_each_that_did_not() {
        let mut run = CheckRun {
            at: "t".into(),
            config_sha256: "c".into(),
            git: None,
            checks: vec![result("test", CheckOutcome::Passed, Some(0))],
        };
        assert!(run.passed());
        assert_eq!(run.failure(), None);
        run.checks
            .push(result("lint", CheckOutcome::Failed, Some(101)));
        run.checks.push(result("e2e", CheckOutcome::TimedOut, None));
        assert!(!run.passed());
        assert_eq!(
            run.failure().unwrap(),
            "check `lint` failed (exit 101), check `e2e` timed out after 1.5 s"
        );
    }
}
