//! The MCP adapter: one tool, `bmad-task`, served by rmcp. It parses arguments into a
//! [`args::Call`], runs it against the [`Store`] on a blocking thread (file locks and
//! fsync block), and renders the [`reply::Reply`] as structured content.
//!
//! The tool is declared by hand ([`tool`], [`ServerHandler::call_tool`]) rather than with
//! rmcp's `#[tool]` macros, for three reasons: the arguments are one loosely typed object
//! validated per action, so that every refusal names the field and the action (the macro's
//! typed `Parameters<T>` answers a bad field with a generic "failed to deserialize
//! parameters"); the input schema is generated with inlined subschemas, so that hosts and
//! models see the action names without resolving `$ref`s; and each call runs on a blocking
//! thread. The macros would add a crate feature and do none of these.

pub mod args;
mod ask;
mod dialog;
pub mod limits;
pub mod reply;
pub mod schema;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chrono::Utc;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::error::Error;
use crate::store::{DefaultRoot, Roots, SessionKey, Store};
use crate::workflow::{Command, DecidedBy, Decision, Via};
use args::{BmadTaskArgs, Call, Limits};
use reply::Reply;

pub const TOOL_NAME: &str = "bmad-task";

const TOOL_DESCRIPTION: &str = "Runs the BMAD agile workflow (Product Owner → Architect → Scrum Master → Developer → Reviewer → QA) as an enforced state machine with durable sessions. `start` with an objective returns the Product Owner's role prompt; generate the document it asks for and `submit` it; the server scores it and may ask the human questions (`answer`), waits for the human to `confirm` a document that passed the gate (or `reject` it with feedback), and for the sprint plan to be `approve`d, then hands over the next role. Never answer, confirm, approve or reject on the human's behalf: follow `next_step` (where the client can show a dialog, the decision call opens it and the human decides there; otherwise show `user_message` and wait for their decision). `status` and `list` are read only. Documents are saved under .claude/specs/<task_name>/ and sessions under .bmad-task/.";

const INSTRUCTIONS: &str = "bmad-mcp keeps the state of BMAD workflows. Call the `bmad-task` tool; when a reply has `requires_user_confirmation: true`, show its `user_message` to the user and act only on their answer.";

struct Inner {
    store: Store,
    limits: Limits,
    tool: Tool,
    /// Set once the text patterns are being built off the call path (see `call_tool`).
    matchers: std::sync::Once,
    /// Set when stdout breaks: from then on no call is applied, since the client could
    /// never learn what it did.
    output_closed: Arc<AtomicBool>,
    /// Seals the question a 2026-07-28 client carries back with the human's answer.
    codec: rmcp::model::RequestStateCodec,
}

#[derive(Clone)]
pub struct BmadServer {
    inner: Arc<Inner>,
}

fn schema_object(value: serde_json::Value) -> Arc<JsonObject> {
    match value {
        serde_json::Value::Object(o) => Arc::new(o),
        _ => unreachable!("schemas of structs are objects"),
    }
}

/// The tool definition: input schema from [`BmadTaskArgs`], output schema from [`Reply`],
/// both standard JSON Schema 2020-12 ([`schema`]).
pub fn tool() -> Tool {
    let input = schema::input::<BmadTaskArgs>();
    let output = schema::output::<Reply>();
    Tool::new(TOOL_NAME, TOOL_DESCRIPTION, schema_object(input))
        .with_raw_output_schema(schema_object(output))
        .with_title("BMAD workflow")
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )
}

impl BmadServer {
    pub fn new(default_root: DefaultRoot, limits: Limits) -> BmadServer {
        BmadServer::with_output_closed(default_root, limits, Arc::default())
    }

    /// A server that applies no call once `output_closed` is set (the stdio transport sets
    /// it when stdout breaks).
    pub fn with_output_closed(
        default_root: DefaultRoot,
        limits: Limits,
        output_closed: Arc<AtomicBool>,
    ) -> BmadServer {
        let store = Store::new(default_root, limits.lock_wait);
        BmadServer::from_store(store, limits, output_closed)
    }

    /// A server for HTTP clients: every call's project must lie inside one of `roots`.
    pub fn within(roots: Roots, limits: Limits) -> BmadServer {
        let store = Store::within(roots, limits.lock_wait);
        BmadServer::from_store(store, limits, Arc::default())
    }

    fn from_store(store: Store, limits: Limits, output_closed: Arc<AtomicBool>) -> BmadServer {
        BmadServer {
            inner: Arc::new(Inner {
                store,
                limits,
                tool: tool(),
                matchers: std::sync::Once::new(),
                output_closed,
                codec: dialog::new_codec(),
            }),
        }
    }

    /// Handles one tool call to completion (blocking: file locks and fsync), the host's
    /// word standing for any decision. A reply with `error` set is a tool error.
    pub fn handle(&self, arguments: Option<JsonObject>) -> Reply {
        match args::parse(arguments, &self.inner.limits) {
            Ok(call) => self.run(call),
            Err(e) => reply::for_error(&e, None),
        }
    }

    fn run(&self, call: Call) -> Reply {
        let store = &self.inner.store;
        let done = match call {
            Call::Start {
                cwd,
                objective,
                engines,
            } => store
                .start(cwd.as_deref(), &objective, engines.as_deref(), &Utc::now)
                .map(|started| {
                    reply::for_start(&started.session, started.notices, engines.is_some())
                }),
            Call::List { cwd, cursor } => store.project(cwd.as_deref()).and_then(|project| {
                let page = store.list(cwd.as_deref(), cursor.as_deref())?;
                Ok(reply::for_list(page, &project.display()))
            }),
            Call::Status { cwd, key } => store
                .load(cwd.as_deref(), &key)
                .map(|(_, s)| reply::for_status(&s)),
            Call::Act {
                cwd,
                key,
                command,
                decision,
            } => return self.act(cwd, key, command, decision).unwrap_or_else(|r| *r),
        };
        done.unwrap_or_else(|e| reply::for_error(&e, None))
    }

    /// Applies a session action (blocking). The error reply names the state and what is
    /// legal now, when the session exists.
    fn act(
        &self,
        cwd: Option<String>,
        key: SessionKey,
        command: Command,
        decision: Decision,
    ) -> Result<Reply, Box<Reply>> {
        let store = &self.inner.store;
        let action = command.action();
        let mut notices = Vec::new();
        if decision.decided_by == DecidedBy::Human {
            notices.push(format!(
                "The human decided this through {}.",
                match decision.via {
                    Via::Elicitation => "the dialog",
                    Via::Cli => "the terminal",
                    Via::Tool => "the host",
                }
            ));
        }
        store
            .act(cwd.as_deref(), &key, command, &decision, &Utc::now)
            .map(|(s, mut facts)| {
                facts.notices.extend(notices);
                reply::for_session(&s, &facts, action)
            })
            .map_err(|e| {
                let session = match &e {
                    Error::SessionNotFound { .. }
                    | Error::InvalidProject { .. }
                    | Error::ForbiddenProject { .. } => None,
                    _ => store.load(cwd.as_deref(), &key).ok().map(|(_, s)| s),
                };
                Box::new(reply::for_error(&e, session.as_ref()))
            })
    }
}

/// What the text copy holds in place of the role prompt, which follows it as Markdown.
pub const PROMPT_IN_NEXT_BLOCK: &str =
    "(the role prompt follows as Markdown, in the next content block)";

/// The reply as a tool result: `structuredContent`, and the same JSON as text for clients
/// that read only text. The role prompt, when there is one, reaches those clients as
/// readable Markdown in a block of its own rather than escaped inside the JSON string (a
/// host that shows the model `structuredContent`, as Claude Code does, gets it there).
fn to_result(reply: Reply) -> CallToolResult {
    let reply = reply::bound(reply);
    let is_error = reply.error.is_some();
    let value = serde_json::to_value(&reply).expect("replies serialize");
    let mut result = if is_error {
        CallToolResult::structured_error(value.clone())
    } else {
        CallToolResult::structured(value.clone())
    };
    if let Some(prompt) = reply.role_prompt {
        let mut text = value;
        text["role_prompt"] = PROMPT_IN_NEXT_BLOCK.into();
        result.content = vec![
            rmcp::model::ContentBlock::text(text.to_string()),
            rmcp::model::ContentBlock::text(prompt),
        ];
    }
    result
}

impl ServerHandler for BmadServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("bmad-mcp", env!("CARGO_PKG_VERSION"))
                    .with_title("BMAD workflow server"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self
            .inner
            .tool
            .clone()]))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; this server has one tool, `{TOOL_NAME}`",
                    request.name
                ),
                None,
            ));
        }
        if self.inner.output_closed.load(Ordering::SeqCst) {
            return Err(ErrorData::internal_error(
                "stdout is closed; the call was not applied",
                None,
            ));
        }
        // Build the workflow's text patterns (a few milliseconds of CPU) on their own
        // thread while the model writes its first document, rather than inside the first
        // submission that needs them. If the thread cannot start, they are built on use.
        self.inner.matchers.call_once(|| {
            let spawned = std::thread::Builder::new()
                .name("bmad-matchers".into())
                .spawn(crate::workflow::build_matchers);
            if let Err(e) = spawned {
                tracing::debug!(error = %e, "text patterns will be built at first use");
            }
        });
        tracing::debug!("tool call received");
        // Taken, not copied: a submission's arguments may be megabytes. A dialog's retry
        // needs only the request's other fields.
        let call = match args::parse(request.arguments.take(), &self.inner.limits) {
            Ok(call) => call,
            Err(e) => return Ok(to_result(reply::for_error(&e, None)).into()),
        };
        if let Call::Act {
            cwd,
            key,
            command,
            decision,
        } = &call
        {
            // A decision the host asserts goes to the human when the client can ask them.
            if command.action().decides()
                && decision.decided_by == DecidedBy::Host
                && dialog::can_ask(&context)
            {
                let gate = dialog::Gate {
                    cwd: cwd.clone(),
                    key: key.clone(),
                    command: command.clone(),
                };
                return Ok(self.decide_in_dialog(gate, &request, &context).await);
            }
        }
        let server = self.clone();
        let mut reply = tokio::task::spawn_blocking(move || server.run(call))
            .await
            .unwrap_or_else(|join_error| {
                tracing::error!(error = %join_error, "tool call failed unexpectedly");
                reply::for_error(&Error::Internal, None)
            });
        if reply.error.is_none() && dialog::can_ask(&context) {
            if let Some(step) = reply.state.and_then(reply::dialog_next_step) {
                reply.next_step = Some(step.to_string());
            }
        }
        Ok(to_result(reply).into())
    }
}
