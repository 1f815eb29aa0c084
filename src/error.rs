//! The one error type the tool reports. Every variant has a stable `code` and a message
//! that names the field or file concerned; the adapter renders it as a tool error.

use crate::workflow::WorkflowError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
    /// A field is missing, of the wrong type, or has a value outside what it accepts.
    #[error("{message}")]
    Argument { code: &'static str, message: String },
    #[error("field `{field}` is {size} bytes, over its limit of {limit} bytes")]
    TooLarge {
        field: String,
        size: usize,
        limit: usize,
    },
    #[error("no session {what} in project {project}; `list` shows the sessions of a project")]
    SessionNotFound { what: String, project: String },
    #[error("{source_name} `{value}` is not usable as the project directory: {reason}")]
    InvalidProject {
        source_name: &'static str,
        value: String,
        reason: String,
    },
    #[error("refusing to touch {path}: {reason}")]
    UnsafePath { path: String, reason: String },
    #[error("{path} is not a valid session file: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("could not {op} {path}: {reason}")]
    Storage {
        op: &'static str,
        path: String,
        reason: String,
    },
}

impl Error {
    pub fn code(&self) -> &'static str {
        match self {
            Error::Workflow(e) => e.code(),
            Error::Argument { code, .. } => code,
            Error::TooLarge { .. } => "too_large",
            Error::SessionNotFound { .. } => "session_not_found",
            Error::InvalidProject { .. } => "invalid_cwd",
            Error::UnsafePath { .. } => "unsafe_path",
            Error::Corrupt { .. } => "session_corrupt",
            Error::Storage { .. } => "storage_error",
        }
    }

    pub fn argument(code: &'static str, message: impl Into<String>) -> Error {
        Error::Argument {
            code,
            message: message.into(),
        }
    }

    pub fn storage(op: &'static str, path: &std::path::Path, err: &std::io::Error) -> Error {
        Error::Storage {
            op,
            path: path.display().to_string(),
            reason: io_reason(err),
        }
    }
}

/// The OS reason without Rust's debug decoration ("Permission denied", "No space left").
fn io_reason(err: &std::io::Error) -> String {
    let s = err.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
