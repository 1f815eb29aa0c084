//! MCP resources, read only, of the server's default project:
//!
//! * `bmad://project`: the project context (stack, checks, open tasks, decisions, lessons
//!   by category: [`project_context.rs`](crate::server::project_context));
//! * `bmad://sessions`: the sessions, newest first, a page at a time (JSON; the page names
//!   the URI of the next one, `bmad://sessions?cursor=…`);
//! * `bmad://sessions/<session_id>`: the session file as stored (JSON);
//! * `bmad://sessions/<session_id>/<stage>`: that stage's document (Markdown): the saved
//!   file in `.claude/specs/<task_name>/` as it is now, else the latest draft.
//!
//! `resources/list` names each of them concretely (Claude Code offers only listed resources
//! for `@` mentions), a page of sessions at a time; the two templates are listed as well.

use rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use rmcp::ErrorData;
use serde::Serialize;

use crate::error::Error;
use crate::files::Project;
use crate::store::{session_rel, Damaged, ListEntry, SessionKey, Store};
use crate::workflow::{Session, Stage};

use super::project_context::PROJECT_URI;

pub const SESSIONS_URI: &str = "bmad://sessions";
const JSON: &str = "application/json";
const MARKDOWN: &str = "text/markdown";

/// What a URI names.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// The project context (`super::project_context`).
    Project,
    Sessions {
        cursor: Option<String>,
    },
    Session(String),
    Document(String, Stage),
}

fn session_uri(id: &str) -> String {
    format!("{SESSIONS_URI}/{id}")
}

fn document_uri(id: &str, stage: Stage) -> String {
    format!("{SESSIONS_URI}/{id}/{}", stage.id())
}

/// `list` cursors hold a `|`, which a URI may not: it travels as `%7C`.
fn sessions_page_uri(cursor: &str) -> String {
    format!(
        "{SESSIONS_URI}?cursor={}",
        cursor.replace('%', "%25").replace('|', "%7C")
    )
}

fn parse(uri: &str) -> Result<Target, ErrorData> {
    if uri == PROJECT_URI {
        return Ok(Target::Project);
    }
    let unknown = || {
        ErrorData::resource_not_found(
            format!(
                "no resource `{}`: this server has {PROJECT_URI}, {SESSIONS_URI}, {SESSIONS_URI}/<session_id> and {SESSIONS_URI}/<session_id>/<stage> (stages: {})",
                crate::error::clip(uri, 120),
                Stage::ALL.map(|s| s.id()).join(", ")
            ),
            None,
        )
    };
    let Some(rest) = uri.strip_prefix(SESSIONS_URI) else {
        return Err(unknown());
    };
    if rest.is_empty() {
        return Ok(Target::Sessions { cursor: None });
    }
    if let Some(query) = rest.strip_prefix("?cursor=") {
        let cursor = query
            .replace("%7C", "|")
            .replace("%7c", "|")
            .replace("%25", "%");
        return Ok(Target::Sessions {
            cursor: Some(cursor),
        });
    }
    let mut parts = rest.strip_prefix('/').ok_or_else(unknown)?.split('/');
    let id = parts.next().filter(|id| uuid::Uuid::parse_str(id).is_ok());
    let id = id.ok_or_else(unknown)?.to_string();
    match (parts.next(), parts.next()) {
        (None, _) => Ok(Target::Session(id)),
        (Some(stage), None) => Stage::parse(stage)
            .map(|s| Target::Document(id, s))
            .ok_or_else(unknown),
        _ => Err(unknown()),
    }
}

fn store_error(e: Error) -> ErrorData {
    match e {
        Error::SessionNotFound { .. } => ErrorData::resource_not_found(e.to_string(), None),
        Error::Argument { .. } => ErrorData::invalid_params(e.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// A stage's document: the saved file, else the latest draft. `None` when it has neither.
fn document_of(s: &Session, stage: Stage) -> Option<(String, &'static str)> {
    let rec = s.record(stage);
    if let Some(a) = &rec.artifact {
        return Some((a.path.clone(), "saved"));
    }
    rec.draft_ref
        .as_ref()
        .or(rec.final_result_ref.as_ref())
        .map(|d| (d.file_path.clone(), "latest draft, not yet confirmed"))
}

/// The resources of one page of sessions (the list itself first on the first page), and
/// the cursor of the next page.
pub fn list(
    store: &Store,
    cursor: Option<&str>,
) -> Result<(Vec<Resource>, Option<String>), ErrorData> {
    let page = store.list(None, cursor).map_err(store_error)?;
    let mut out = Vec::new();
    if cursor.is_none() {
        out.push(
            Resource::new(SESSIONS_URI, "sessions")
                .with_title("BMAD sessions")
                .with_description(format!(
                    "The project's {} BMAD session(s), newest first: task, stage, state.",
                    page.total
                ))
                .with_mime_type(JSON),
        );
        out.push(
            Resource::new(PROJECT_URI, "project")
                .with_title("BMAD project context")
                .with_description("What this project is: its stack, approved checks, open tasks and owners, recent decisions, BMAD method install, and its lessons by category (the failure museum).")
                .with_mime_type(JSON),
        );
    }
    for entry in &page.sessions {
        let loaded = store.load(None, &SessionKey::Id(entry.session_id.clone()));
        // The compact matrix, where the session's PRD gives its requirements ids.
        let trace = loaded
            .as_ref()
            .ok()
            .and_then(|(_, s)| crate::workflow::trace::summary(s))
            .map(|t| format!(" {}", t.line()))
            .unwrap_or_default();
        out.push(
            Resource::new(session_uri(&entry.session_id), entry.task_name.clone())
                .with_title(format!("BMAD session {}", entry.task_name))
                .with_description(format!(
                    "The session as stored: {} track, stage {}, {}, updated {}.{trace}",
                    entry.track,
                    entry.current_stage.id(),
                    entry.current_state.id(),
                    entry.updated_at
                ))
                .with_mime_type(JSON),
        );
        // A session that cannot be read now is listed without its documents.
        let Ok((_, s)) = loaded else {
            continue;
        };
        for stage in Stage::ALL {
            if let Some((path, what)) = document_of(&s, stage) {
                out.push(
                    Resource::new(
                        document_uri(&s.session_id, stage),
                        format!("{}/{}", s.task_name, stage.id()),
                    )
                    .with_title(format!("{}: {} document", s.task_name, stage.role()))
                    .with_description(format!("{path} ({what})"))
                    .with_mime_type(MARKDOWN),
                );
            }
        }
    }
    Ok((out, page.next_cursor))
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SESSIONS_URI}/{{session_id}}"), "session")
            .with_title("A BMAD session")
            .with_description("The session file as stored, by session id.")
            .with_mime_type(JSON),
        ResourceTemplate::new(
            format!("{SESSIONS_URI}/{{session_id}}/{{stage}}"),
            "stage-document",
        )
        .with_title("A stage's document")
        .with_description(format!(
            "The document of one stage ({}): the saved file, else the latest draft.",
            Stage::ALL.map(|s| s.id()).join(", ")
        ))
        .with_mime_type(MARKDOWN),
    ]
}

#[derive(Serialize)]
struct SessionsPage {
    project: String,
    total: usize,
    sessions: Vec<ListEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    damaged: Vec<Damaged>,
}

/// The contents of one resource.
pub fn read(store: &Store, uri: &str) -> Result<ResourceContents, ErrorData> {
    let text = |text: String, mime: &str| ResourceContents::text(text, uri).with_mime_type(mime);
    match parse(uri)? {
        Target::Project => {
            let context = super::project_context::build(store).map_err(store_error)?;
            let json = serde_json::to_string_pretty(&context).expect("the context serializes");
            Ok(text(json, JSON))
        }
        Target::Sessions { cursor } => {
            let project = store.project(None).map_err(store_error)?;
            let page = store.list(None, cursor.as_deref()).map_err(store_error)?;
            let value = SessionsPage {
                project: project.display(),
                total: page.total,
                sessions: page.sessions,
                next: page.next_cursor.as_deref().map(sessions_page_uri),
                damaged: page.damaged,
            };
            let json = serde_json::to_string_pretty(&value).expect("pages serialize");
            Ok(text(json, JSON))
        }
        Target::Session(id) => {
            // Found as `status` finds it, then read as stored, byte for byte.
            let (project, s) = store
                .load(None, &SessionKey::Id(id.clone()))
                .map_err(store_error)?;
            let gone = format!("session `{id}` was removed while being read");
            let json = read_file(&project, &session_rel(&s.session_id), gone)?;
            Ok(text(json, JSON))
        }
        Target::Document(id, stage) => {
            let (project, s) = store.load(None, &SessionKey::Id(id)).map_err(store_error)?;
            let Some((path, _)) = document_of(&s, stage) else {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "task `{}` has no {} document yet: it is at stage {}, {}",
                        s.task_name,
                        stage.id(),
                        s.current_stage.id(),
                        s.current_state.id()
                    ),
                    None,
                ));
            };
            let gone = format!("{path} does not exist (deleted since it was written)");
            Ok(text(read_file(&project, &path, gone)?, MARKDOWN))
        }
    }
}

/// The text of the project's file `rel`; `gone` says it is missing.
fn read_file(project: &Project, rel: &str, gone: String) -> Result<String, ErrorData> {
    match project.read(rel) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(ErrorData::resource_not_found(gone, None)),
        Err(problem) => Err(ErrorData::internal_error(format!("{rel} {problem}"), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_the_list_a_session_or_a_stage_and_nothing_else() {
        let id = "0b6f2a34-5c8e-4f5e-9a55-2d3b3c4d5e6f";
        assert_eq!(
            parse("bmad://sessions").unwrap(),
            Target::Sessions { cursor: None }
        );
        let cursor = "2026-11-23T12:00:00.000Z|x";
        assert_eq!(
            parse(&sessions_page_uri(cursor)).unwrap(),
            Target::Sessions {
                cursor: Some(cursor.into())
            }
        );
        assert_eq!(parse(&session_uri(id)).unwrap(), Target::Session(id.into()));
        assert_eq!(
            parse(&document_uri(id, Stage::Architect)).unwrap(),
            Target::Document(id.into(), Stage::Architect)
        );
        for bad in [
            "bmad://session",
            "file:///etc/passwd",
            "bmad://sessions/../../etc",
            "bmad://sessions/not-a-uuid",
            &format!("bmad://sessions/{id}/nope"),
            &format!("bmad://sessions/{id}/po/extra"),
            &format!("bmad://sessions/{id}/"),
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{bad}");
            assert!(e.message.contains("bmad://sessions/<session_id>"), "{bad}");
        }
    }
}
