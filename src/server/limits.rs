//! The input limits (docs/spec.md §12.2) and the lock wait, from the environment, and the check of
//! a value against its limit, whose refusal names the variable that raises it.

use crate::error::{Error, Result};

/// Size limits of the inputs (docs/spec.md §12.2) and the wait for the project lock, adjustable
/// through the environment.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub result_bytes: usize,
    pub objective_bytes: usize,
    pub text_bytes: usize,
    pub lock_wait: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            result_bytes: 4 * 1024 * 1024,
            objective_bytes: 4 * 1024,
            text_bytes: 64 * 1024,
            lock_wait: crate::files::DEFAULT_LOCK_WAIT,
        }
    }
}

impl Limits {
    /// Defaults, overridden by `BMAD_MAX_RESULT_BYTES`, `BMAD_MAX_OBJECTIVE_BYTES` and
    /// `BMAD_MAX_TEXT_BYTES` (feedback, answers, scope) when set to a number.
    pub fn from_env() -> Limits {
        let d = Limits::default();
        let get = |var: &str, default: usize| {
            std::env::var(var)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        Limits {
            result_bytes: get("BMAD_MAX_RESULT_BYTES", d.result_bytes),
            objective_bytes: get("BMAD_MAX_OBJECTIVE_BYTES", d.objective_bytes),
            text_bytes: get("BMAD_MAX_TEXT_BYTES", d.text_bytes),
            lock_wait: crate::files::lock_wait_from_env(),
        }
    }
}

/// Refuses `value` over `limit`, naming the environment variable that raises the limit.
pub(super) fn check_size(field: &str, value: &str, limit: usize) -> Result<()> {
    if value.len() > limit {
        let variable = match field {
            "claude_result" | "codex_result" => "BMAD_MAX_RESULT_BYTES",
            "objective" => "BMAD_MAX_OBJECTIVE_BYTES",
            _ => "BMAD_MAX_TEXT_BYTES",
        };
        return Err(Error::TooLarge {
            field: field.to_string(),
            size: value.len(),
            limit,
            variable,
        });
    }
    Ok(())
}
