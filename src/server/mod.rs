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
pub mod bounded_errors;
mod calls;
mod client_roots;
mod dialog;
mod fault;
mod lessons;
pub mod mcp_prompts;
pub mod normal_logs;
pub mod per_host;
mod progress;
pub mod project_context;
pub mod reply;
pub mod resources;
pub mod result;
pub mod schema;
mod unused_arguments;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::files::{DefaultRoot, Roots};
use crate::settings::{Acting, Settings};
use crate::store::Store;
use args::{BmadTaskArgs, Call, Limits};
use reply::Reply;
use result::{to_result, Readers};

pub const TOOL_NAME: &str = "bmad-task";

const TOOL_DESCRIPTION: &str = "The BMAD agile workflow: Product Owner, Architect, Scrum Master, Developer, Reviewer, QA. `start` a task, then follow each reply's `next_step`; never decide for the human.";

const INSTRUCTIONS: &str = "bmad-mcp keeps the state of BMAD workflows. Call the `bmad-task` tool and follow each reply's `next_step`: where the user decides, show them `user_message` and act only on their answer. If you lost track of a task, the `resume` prompt (or `status`) tells you where it stands.";

struct Inner {
    store: Store,
    limits: Limits,
    tool: Tool,
    /// Set when stdout breaks: from then on no call is applied, since the client could
    /// never learn what it did.
    output_closed: Arc<AtomicBool>,
    /// Seals the question a 2026-07-28 client carries back with the human's answer.
    codec: rmcp::model::RequestStateCodec,
    /// Rings when the resources may have changed (a session started, a document
    /// submitted), for the 2026-07-28 clients' `subscriptions/listen`.
    resources_changed: tokio::sync::broadcast::Sender<()>,
    /// Cancelled when the server is told to stop (SIGTERM): every call waiting on the
    /// human's dialog then answers that the decision is still pending (`dialog`).
    stopping: tokio_util::sync::CancellationToken,
    /// The decisions made elsewhere this server has said with only what changed, by
    /// (session id, length of its history): a `status` after one gives it all
    /// (`elsewhere`).
    briefed: std::sync::Mutex<std::collections::HashSet<(String, usize)>>,
}

#[derive(Clone)]
pub struct BmadServer {
    inner: Arc<Inner>,
}

/// The tool definition: the input schema from [`BmadTaskArgs`], standard JSON Schema
/// 2020-12 ([`schema`]). No output schema: see [`result`].
pub fn tool() -> Tool {
    let serde_json::Value::Object(input) = schema::input::<BmadTaskArgs>() else {
        unreachable!("schemas of structs are objects")
    };
    Tool::new(TOOL_NAME, TOOL_DESCRIPTION, Arc::new(input))
        .with_title("BMAD workflow")
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        )
}

/// The JSON Schema (2020-12) of `structuredContent`, the [`Reply`]: not declared on the
/// tool ([`result`] says why), published in docs/reference.md for programs.
pub fn reply_schema() -> serde_json::Value {
    schema::output::<Reply>()
}

/// Whether a call may change the resource list: a session may come, or a stage document
/// appear.
fn changes_lists(call: &Call) -> bool {
    match call {
        Call::Start { .. } => true,
        Call::Act { command, .. } => command.action() == crate::workflow::Action::Submit,
        Call::List { .. } | Call::Status { .. } | Call::Lessons(_) => false,
    }
}

/// Fits a reply to how this client reaches its human: the dialog when the client can ask
/// them (`can_ask`), else the host; `assistants` names the assistant whose shell the
/// connection runs under, which kept the dialog shut.
fn for_this_client(reply: &mut Reply, can_ask: bool, assistants: Option<String>) {
    // Where the policy refused the host's word, the error says why.
    if let Some(why) = assistants.filter(|_| reply.error.is_none()) {
        reply.notices.get_or_insert_with(Vec::new).push(format!(
            "The client's dialog was not opened: {why}, so an answer there would not be the human's. The decision is the host's."
        ));
    }
    if reply.error.is_none() && can_ask {
        let failing = reply.failing;
        if let Some(step) = reply
            .state
            .and_then(|state| reply::dialog_next_step(state, failing))
        {
            reply.next_step = Some(step.to_string());
        }
    }
    reply::human_channel(reply, can_ask);
    reply::name_notices(reply);
}

impl BmadServer {
    /// A server whose calls that name no project act in `default_root`, with `limits` and
    /// nothing else set: nobody named over git's identity, the default waits, no user
    /// prompt folder. (The binary starts one from its settings.)
    pub fn new(default_root: DefaultRoot, limits: Limits) -> BmadServer {
        let store = Store::new(default_root, Acting::default());
        BmadServer::from_store(store, limits, Arc::default())
    }

    /// The server `settings` describe, which applies no call once `output_closed` is set
    /// (the stdio transport sets it when stdout breaks).
    pub fn with_output_closed(settings: &Settings, output_closed: Arc<AtomicBool>) -> BmadServer {
        let store = Store::new(settings.default_root.clone(), settings.acting.clone());
        BmadServer::from_store(store, settings.limits, output_closed)
    }

    /// A server for HTTP clients: every call's project must lie inside one of `roots`.
    pub fn within(roots: Roots, settings: &Settings) -> BmadServer {
        let store = Store::within(roots, settings.acting.clone());
        BmadServer::from_store(store, settings.limits, Arc::default())
    }

    fn from_store(store: Store, limits: Limits, output_closed: Arc<AtomicBool>) -> BmadServer {
        BmadServer {
            inner: Arc::new(Inner {
                store,
                limits,
                tool: tool(),
                output_closed,
                codec: dialog::new_codec(),
                resources_changed: tokio::sync::broadcast::channel(8).0,
                stopping: tokio_util::sync::CancellationToken::new(),
                briefed: std::sync::Mutex::default(),
            }),
        }
    }
}

impl ServerHandler for BmadServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_tools()
                .build(),
        )
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
                    crate::code::clip(&request.name, crate::code::QUOTE_CHARS)
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
        tracing::debug!("tool call received");
        // Taken, not copied: a submission's arguments may be megabytes. A dialog's retry
        // needs only the request's other fields.
        let readers = Readers::of(&context, request.arguments.as_ref());
        let mut call = match args::parse(request.arguments.take(), &self.inner.limits) {
            Ok(call) => call,
            Err(e) => return Ok(to_result(reply::for_error(&e, None), &readers).into()),
        };
        client_roots::fill_cwd(&mut call, &self.inner.store, &context).await;
        let can_ask = dialog::can_ask(&context);
        let (cannot_ask, dialog_shut) =
            match dialog::decides(&mut call, &context, can_ask, &readers, &self.inner.store) {
                dialog::Decides::Dialog(asked) => {
                    return Ok(self.decide_in_dialog(*asked, &request, &context).await)
                }
                dialog::Decides::Word {
                    cannot_ask,
                    dialog_shut,
                } => (cannot_ask, dialog_shut),
            };
        let lists_change = changes_lists(&call);
        let (watched, _watchers) = progress::watch(&context);
        let scene = fault::Scene::of(&call);
        let mut reply = match self
            .blocking(move |server| server.run_watched(call, &watched, cannot_ask.as_deref()))
            .await
        {
            Ok(reply) => reply,
            Err(failed) => self.fault_reply(scene, failed).await,
        };
        let can_ask = can_ask && dialog_shut.is_none();
        for_this_client(&mut reply, can_ask, dialog_shut);
        if lists_change && reply.error.is_none() {
            self.resources_changed(&context);
        }
        Ok(to_result(reply, &readers).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        // The project's BMAD method files after the server's own prompts; Claude Code has
        // the skills of `.claude/skills` as slash commands of its own.
        let claude_code = context
            .client_info()
            .is_some_and(|i| i.name == "claude-code");
        let installed = self
            .read("prompts/list", move |store| {
                Ok(mcp_prompts::list_installed(store, claude_code))
            })
            .await?;
        let client = context.client_info().map(|i| i.name);
        let mut prompts = mcp_prompts::list(per_host::own_commands(client.as_deref()));
        prompts.extend(installed);
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.read("prompts/get", move |store| {
            mcp_prompts::get(store, &request.name, request.arguments.as_ref())
        })
        .await
        .map(GetPromptResponse::Complete)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let (resources, next) = self
            .read("resources/list", move |store| {
                resources::list(store, cursor.as_deref())
            })
            .await?;
        // Sessions change with every action: never fresh for a cache (SEP-2549).
        let mut result = ListResourcesResult::with_all_items(resources).with_ttl_ms(0);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read("resources/read", move |store| {
            resources::read(store, &request.uri)
        })
        .await
        .map(|c| ReadResourceResponse::Complete(ReadResourceResult::new(vec![c]).with_ttl_ms(0)))
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        Err(bounded_errors::method_not_found(&request.method))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changed = self.inner.resources_changed.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                rung = changed.recv() => {
                    if let Err(tokio::sync::broadcast::error::RecvError::Closed) = rung {
                        return Ok(());
                    }
                    // Lagged: several changes read as one, which is what the client needs.
                    if context.sink().notify_resource_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
