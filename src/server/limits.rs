//! The check of a call's input against its size limit (docs/spec.md §12.2), whose refusal
//! names the variable that raises it. The limits themselves are settings
//! ([`crate::settings::Limits`]).

use crate::error::{Error, Result};
pub use crate::settings::Limits;
use crate::settings::{MAX_OBJECTIVE_ENV, MAX_RESULT_ENV, MAX_TEXT_ENV};

/// Refuses `value` over `limit`, naming the environment variable that raises the limit.
pub(super) fn check_size(field: &str, value: &str, limit: usize) -> Result<()> {
    if value.len() > limit {
        let variable = match field {
            "claude_result" | "codex_result" => MAX_RESULT_ENV,
            "objective" => MAX_OBJECTIVE_ENV,
            _ => MAX_TEXT_ENV,
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
