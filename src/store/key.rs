//! The key a call names its session by.

/// How a call names its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionKey {
    Id(String),
    TaskName(String),
    /// Both given: they must name the same session.
    Both {
        id: String,
        task_name: String,
    },
}

impl SessionKey {
    /// A task as a person names it on a command line or in a slash command: a session id
    /// when it reads as one, else a task name.
    pub fn from_task(task: &str) -> SessionKey {
        if uuid::Uuid::parse_str(task).is_ok() {
            SessionKey::Id(task.to_string())
        } else {
            SessionKey::TaskName(task.to_string())
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            SessionKey::Id(id) | SessionKey::Both { id, .. } => {
                format!("with session_id `{id}`")
            }
            SessionKey::TaskName(t) => format!("with task_name `{t}`"),
        }
    }
}
