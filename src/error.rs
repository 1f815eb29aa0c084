//! The one error type the tool reports. Every variant has a stable [`ErrorCode`] (the list
//! is the leaf [`crate::code`]) and a message that names the field or file concerned; the
//! adapter renders it as a tool error.

pub use crate::code::{clip, ErrorCode, QUOTE_CHARS};
use crate::workflow::WorkflowError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
    /// A field is missing, of the wrong type, or has a value outside what it accepts.
    #[error("{message}")]
    Argument { code: ErrorCode, message: String },
    #[error("field `{field}` is {size} bytes, over its limit of {limit} bytes; the limit is raised with {variable} in the server's environment")]
    TooLarge {
        field: String,
        size: usize,
        limit: usize,
        variable: &'static str,
    },
    #[error("no session {what} in project {project}; `list` shows the sessions of a project")]
    SessionNotFound { what: String, project: String },
    #[error("{source_name} `{value}` is not usable as the project directory: {reason}")]
    InvalidProject {
        source_name: &'static str,
        value: String,
        reason: String,
    },
    #[error("field `cwd` `{cwd}` is not inside a root this server was started with ({roots}); a project elsewhere needs the server started with another `--root`")]
    ForbiddenProject { cwd: String, roots: String },
    #[error("refusing to touch {path}: {reason}")]
    UnsafePath { path: String, reason: String },
    #[error("{path} is not a valid session file: {detail}")]
    Corrupt { path: String, detail: String },
    #[error("could not {op} {path}: {reason}; {}", storage_hint(.reason))]
    Storage {
        op: &'static str,
        path: String,
        reason: String,
    },
    #[error("another process{} has held the project lock {lock_file} for {:.1} s; nothing was changed. If no other bmad-mcp is working on this project, end the process that holds the file, or raise BMAD_LOCK_WAIT_SECS", holder.map(|p| format!(" (pid {p})")).unwrap_or_default(), waited.as_secs_f64())]
    Busy {
        lock_file: String,
        holder: Option<u32>,
        waited: std::time::Duration,
    },
    #[error("session_id `{id}` names the session of task `{its_task}`, but task_name `{task_name}` names {named}")]
    ConflictingIds {
        id: String,
        its_task: String,
        task_name: String,
        named: String,
    },
    #[error("the folder {folder}/ belongs to session {owner} (its .bmad-session file says so), not to this session ({session_id}), which has the same task name: two branches that each started a task of that name were merged. Nothing was written. Keep one: move this session's documents to a new folder under .claude/specs/ and set its `task_name` in .bmad-task/session-{session_id}.json to that folder's name")]
    SpecsFolderTaken {
        folder: String,
        owner: String,
        session_id: String,
    },
    #[error("{path} holds two versions of this session, left by a merge of two branches that each advanced it: {versions}. Neither is used, and nothing is written until one is kept: {keep}")]
    SessionConflicted {
        path: String,
        versions: String,
        keep: String,
    },
    #[error("{path}: {problem}; the file is the human's project policy (see docs/guide.md, \"Who decides\", and docs/checks.md): fix it, or remove it for the defaults. Nothing was changed")]
    InvalidConfig { path: String, problem: String },
    #[error("this project's policy in force ({policy}) takes `{action}` only from the human, and this client has no dialog in which the human could decide. Nothing was changed. The human decides in a terminal in the project, {commands}, or on their dashboard (`bmad-mcp dashboard`)")]
    HumanRequired {
        action: String,
        /// The policy in force, as [`crate::policy::approval::Policy::cite_gates`] says it.
        policy: String,
        /// The terminal commands legal now, quoted and joined.
        commands: String,
        /// The dashboard's page for the task, while one serves the project: the reply
        /// links it (not part of the message).
        dashboard: Option<String>,
    },
    #[error("{path} {problem}; it is a role prompt override (see docs/guide.md, \"Role prompts\"): fix it, or remove it to use the next in line (`bmad-mcp prompts` shows which file each role uses). Nothing was changed")]
    InvalidPrompt { path: String, problem: String },

    #[error("the project's checks do not pass ({failure}): accepting that is the human's decision, through the client's dialog, the terminal or the dashboard, never the host's word alone. Nothing was changed. The human accepts the failure in a terminal in the project (`{command}`) or on their dashboard (`bmad-mcp dashboard`), or sends the work back with their feedback")]
    ChecksFailed {
        failure: String,
        command: String,
        /// As for `HumanRequired`.
        dashboard: Option<String>,
    },
    /// A defect of the server's own (a panic, or an error it cannot explain to the
    /// caller): what it could not do, whose fault it is not, and where it is recorded.
    #[error("the server could not {failed}: a defect in bmad-mcp, not in {yours} ({cause}). Nothing of this call was saved. {record} The same call would fail the same way")]
    Internal {
        /// What was being done, as "could not …" goes on.
        failed: String,
        /// What the caller sent: "your submission", "your call".
        yours: &'static str,
        /// What went wrong: the panic's message and where it was raised.
        cause: String,
        /// Where the fault is recorded (or why it could not be), a sentence.
        record: String,
    },
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Workflow(e) => e.code(),
            Error::Argument { code, .. } => *code,
            Error::TooLarge { .. } => ErrorCode::TooLarge,
            Error::SessionNotFound { .. } => ErrorCode::SessionNotFound,
            Error::InvalidProject { .. } => ErrorCode::InvalidCwd,
            Error::ForbiddenProject { .. } => ErrorCode::ForbiddenProject,
            Error::UnsafePath { .. } => ErrorCode::UnsafePath,
            Error::Corrupt { .. } => ErrorCode::SessionCorrupt,
            Error::Storage { .. } => ErrorCode::StorageError,
            Error::Busy { .. } => ErrorCode::Busy,
            Error::ConflictingIds { .. } => ErrorCode::ConflictingIds,
            Error::SpecsFolderTaken { .. } => ErrorCode::SpecsFolderTaken,
            Error::SessionConflicted { .. } => ErrorCode::SessionConflicted,
            Error::InvalidConfig { .. } => ErrorCode::InvalidConfig,
            Error::HumanRequired { .. } | Error::ChecksFailed { .. } => ErrorCode::HumanRequired,
            Error::InvalidPrompt { .. } => ErrorCode::InvalidPrompt,
            Error::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// What the caller (the host's model) does about it, said in the reply's `next_step`
    /// and never in the message, which the person reads too; `None` where the message
    /// says all (a refusal the policy keeps for the human gets its own, `reply::strict`).
    pub fn next_step(&self) -> Option<String> {
        match self {
            Error::Workflow(e) => e.next_step(),
            Error::TooLarge { field, variable, .. } => Some(format!(
                "Send less in `{field}`; only the human can raise {variable}, in the server's environment."
            )),
            Error::ForbiddenProject { .. } => {
                Some("Name a project inside one of the roots as `cwd`.".into())
            }
            Error::Busy { .. } => Some("Retry the call in a moment.".into()),
            Error::ConflictingIds { .. } => {
                Some("Give only one of them: `session_id` or `task_name`.".into())
            }
            _ => None,
        }
    }

    pub fn argument(code: ErrorCode, message: impl Into<String>) -> Error {
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

/// What to check after a failed read or write, from the OS's reason.
fn storage_hint(reason: &str) -> &'static str {
    let r = reason.to_ascii_lowercase();
    if r.contains("no space") || r.contains("quota") {
        "free some disk space (`df -h .`) and retry; nothing was half-written"
    } else if r.contains("permission") || r.contains("read-only") || r.contains("not permitted") {
        "check that this user may write there (`ls -ld .bmad-task .claude/specs`) and that the file system is not read-only"
    } else if r.contains("not a directory")
        || r.contains("is a directory")
        || r.contains("file exists")
    {
        "something else is in the way at that path (a file where a folder belongs, or the reverse): move it aside and retry"
    } else {
        "check free disk space and the permissions of .bmad-task/ and .claude/specs/, then retry"
    }
}

/// The OS reason without Rust's debug decoration ("Permission denied", "No space left").
pub(crate) fn io_reason(err: &std::io::Error) -> String {
    let s = err.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
