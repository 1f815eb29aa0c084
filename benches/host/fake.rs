//! A fake Anthropic Messages API on loopback that plays a scripted model, as Claude Code
//! speaks to it: `POST /v1/messages` (streamed as server-sent events when the request asks
//! for a stream, as Claude Code does), `POST /v1/messages/count_tokens`. A request that
//! offers the bmad tool is the agent's turn: the fake answers with the script's next tool
//! call, or with a closing text once the script is done; any other request (a title, a
//! side question) gets a one-word text. Before a call the script pairs with something the
//! human does elsewhere (a decision in a terminal), the fake does it first, as the human
//! would while the model waits. It records what Claude Code sent: the tool's definition
//! and every `tool_result`, by the id of the call it answers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use super::script::SESSION;

/// The tool's name as Claude Code gives it to the model.
pub const TOOL: &str = "mcp__bmad__bmad-task";

/// What the fake saw.
#[derive(Default)]
pub struct Recorded {
    /// The tool's definition as sent to the model (name, description, input schema, …).
    pub definition: Option<Value>,
    /// The tool results, in call order: (call number, the text the model received).
    pub results: BTreeMap<usize, String>,
    /// The agent's requests.
    pub agent_requests: usize,
    /// Requests the fake did not know, by path.
    pub unknown: Vec<String>,
    /// Whether the script ran to its end (the closing text was sent).
    pub finished: bool,
    /// What went wrong with what the human did elsewhere.
    pub failed: String,
}

/// What the human does elsewhere before a call: given the session id, it returns an
/// error to record when it did not work.
pub type Elsewhere = Box<dyn FnOnce(&str) -> Result<(), String> + Send>;

pub struct Model {
    script: Vec<Value>,
    session: Mutex<Option<String>>,
    /// By the number of the call it comes before.
    elsewhere: Mutex<BTreeMap<usize, Elsewhere>>,
    pub recorded: Mutex<Recorded>,
}

impl Model {
    pub fn new(script: Vec<Value>) -> Arc<Model> {
        Model::with_elsewhere(script, BTreeMap::new())
    }

    pub fn with_elsewhere(script: Vec<Value>, elsewhere: BTreeMap<usize, Elsewhere>) -> Arc<Model> {
        Arc::new(Model {
            script,
            session: Mutex::new(None),
            elsewhere: Mutex::new(elsewhere),
            recorded: Mutex::new(Recorded::default()),
        })
    }

    /// Does what the human does before call `n`, once (a request Claude Code repeats
    /// finds it done).
    fn before(&self, n: usize) {
        let Some(act) = self.elsewhere.lock().unwrap().remove(&n) else {
            return;
        };
        let id = self.session.lock().unwrap().clone().unwrap_or_default();
        if let Err(e) = act(&id) {
            let _ = writeln!(self.recorded.lock().unwrap().failed, "before call {n}: {e}");
        }
    }
}

/// Serves the fake on a loopback port; returns its base URL.
pub async fn serve(model: Arc<Model>) -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = axum::Router::new().fallback(move |uri: Uri, body: Bytes| {
        let model = model.clone();
        async move { handle(&model, &uri, &body) }
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}

fn handle(model: &Model, uri: &Uri, body: &[u8]) -> Response {
    let path = uri.path();
    let request: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if path.ends_with("/count_tokens") {
        return json_response(StatusCode::OK, &json!({"input_tokens": 1000}));
    }
    if !path.ends_with("/v1/messages") {
        model
            .recorded
            .lock()
            .unwrap()
            .unknown
            .push(path.to_string());
        let error = json!({"type": "error",
            "error": {"type": "not_found_error", "message": "not in the fake"}});
        return json_response(StatusCode::NOT_FOUND, &error);
    }
    let stream = request["stream"] == true;
    let ours = request["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == TOOL));
    let Some(definition) = ours else {
        return message(stream, Content::Text("OK."));
    };
    let calls_made = record(model, &request, definition);
    match model.script.get(calls_made) {
        Some(args) => {
            model.before(calls_made);
            let mut args = args.clone();
            if args.get("session_id").and_then(Value::as_str) == Some(SESSION) {
                let id = model.session.lock().unwrap().clone().unwrap_or_default();
                args["session_id"] = id.into();
            }
            message(stream, Content::Tool(calls_made, &args))
        }
        None => {
            model.recorded.lock().unwrap().finished = true;
            message(stream, Content::Text("The workflow is done."))
        }
    }
}

/// Records the definition and the tool results of an agent's request; returns how many
/// tool calls the conversation holds so far.
fn record(model: &Model, request: &Value, definition: &Value) -> usize {
    let mut rec = model.recorded.lock().unwrap();
    rec.agent_requests += 1;
    rec.definition = Some(definition.clone());
    let mut calls = 0;
    for msg in request["messages"].as_array().into_iter().flatten() {
        for block in msg["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("tool_use") if block["name"] == TOOL => calls += 1,
                Some("tool_result") => {
                    let Some(n) = block["tool_use_id"]
                        .as_str()
                        .and_then(|id| id.strip_prefix("toolu_bench_"))
                        .and_then(|n| n.parse::<usize>().ok())
                    else {
                        continue;
                    };
                    let text = result_text(&block["content"]);
                    if n == 0 {
                        let mut session = model.session.lock().unwrap();
                        if session.is_none() {
                            *session = find_uuid(&text);
                        }
                    }
                    rec.results.insert(n, text);
                }
                _ => {}
            }
        }
    }
    calls
}

/// A tool result's content as the model reads it: its text, block after block, without the
/// `<system-reminder>` Claude Code appends (not the server's bytes).
fn result_text(content: &Value) -> String {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("<system-reminder>") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find("</system-reminder>")
            .map_or(rest.len(), |e| start + e + "</system-reminder>".len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.truncate(out.trim_end().len());
    out
}

/// The first UUID in a text (the session id in `start`'s result, whatever its shape).
fn find_uuid(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(35)).find_map(|i| {
        let cand = text.get(i..i + 36)?;
        let ok = cand.char_indices().all(|(j, c)| match j {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit() && !c.is_ascii_uppercase(),
        });
        ok.then(|| cand.to_string())
    })
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

enum Content<'a> {
    Text(&'a str),
    Tool(usize, &'a Value),
}

/// One assistant message, as JSON or as the events of a stream.
fn message(stream: bool, content: Content) -> Response {
    let (block, stop) = match &content {
        Content::Text(t) => (json!({"type": "text", "text": t}), "end_turn"),
        Content::Tool(n, args) => (
            json!({"type": "tool_use", "id": format!("toolu_bench_{n}"), "name": TOOL, "input": args}),
            "tool_use",
        ),
    };
    let usage = json!({"input_tokens": 10, "output_tokens": 10,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let head = json!({"id": "msg_bench", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "stop_sequence": null});
    if !stream {
        let mut m = head;
        m["content"] = json!([block]);
        m["stop_reason"] = stop.into();
        m["usage"] = usage;
        return json_response(StatusCode::OK, &m);
    }
    let mut start = head;
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"] = usage.clone();
    let (open, delta) = match &content {
        Content::Text(t) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": t}),
        ),
        Content::Tool(..) => {
            let mut open = block.clone();
            open["input"] = json!({});
            (
                open,
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        }
    };
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": start}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": open}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 10}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}
