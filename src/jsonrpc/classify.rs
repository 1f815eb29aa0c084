//! What to do with one line from stdin: hand a message to rmcp, answer it here with a
//! JSON-RPC error that says what is wrong, or skip it.
//!
//! The rules, so that every request gets exactly one answer and nothing else does:
//! * A message rmcp reads is handed on, except a request to a method this server serves
//!   whose params rmcp cannot read (it would answer those `-32601` naming the method, as if
//!   the method did not exist): those get `-32602` naming the field.
//! * A line with a lone UTF-16 surrogate escape is repaired (see `surrogates`) and read again.
//! * Anything else is answered `-32600` (JSON, but not a request: including nesting deeper
//!   than serde_json reads) or `-32700` (not JSON) with the request's `id` when it can be
//!   read from the line, else with `id: null`, except that notifications and responses
//!   are never answered, and a line that is not JSON is answered only when it has a
//!   readable id: with none, nobody could match the answer, and answering garbage with
//!   garbage is how two peers start an error storm (the MCP SDKs skip such lines too).

use std::collections::HashMap;

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ErrorCode, GetPromptRequestParams,
    InitializeRequestParams, JsonRpcMessage, ReadResourceRequestParams,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scan::{scan, Top, MAX_DEPTH};
use super::surrogates;
use crate::server::TOOL_NAME;
use crate::settings::MAX_LINE_ENV;

#[derive(Debug)]
pub enum Verdict {
    /// For rmcp.
    Forward(Box<ClientJsonRpcMessage>),
    /// A JSON-RPC error line to write, newline included.
    Answer(Vec<u8>),
    /// Nothing to do; why, for the debug log.
    Skip(&'static str),
}

/// Methods this server serves. A request to one of them whose params rmcp cannot read
/// reaches rmcp as an unknown method; any other method is unknown indeed.
const SERVED: [&str; 11] = [
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "subscriptions/listen",
];

/// Decides about one line (without its newline).
pub fn line(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return Verdict::Skip("an empty line");
    }
    read(line, true)
}

fn read(line: &[u8], may_repair: bool) -> Verdict {
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => check(message, line),
        Err(e) => {
            if may_repair && e.is_syntax() {
                if let Some(r) = surrogates::repair(line) {
                    tracing::warn!(
                        count = r.count,
                        first = %r.first,
                        at_byte = r.first_at,
                        "the message has lone UTF-16 surrogate escapes (text cut inside a character); each is read as U+FFFD"
                    );
                    return read(&r.line, false);
                }
            }
            refused(line, &e)
        }
    }
}

/// A line over the limit, which was not read: answered when its id could be read.
pub fn too_long(len: usize, limit: usize, top: &Top) -> Verdict {
    tracing::warn!(len, limit, "a line over the size limit was dropped");
    if top.is_response() || top.is_notification() {
        return Verdict::Skip("an over-limit response or notification");
    }
    match top.id() {
        Some(id) => answer(
            Some(id),
            ErrorCode::INVALID_REQUEST,
            format!(
                "the message is {len} bytes, over the limit of {} for one line, and was not read; send less, or raise the limit with the environment variable {MAX_LINE_ENV} (now {limit})",
                size(limit)
            ),
        ),
        None => Verdict::Skip("an over-limit line without a readable id"),
    }
}

fn size(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// A JSON-RPC error response, its members in the order people expect to read them.
#[derive(Serialize)]
struct ErrorLine {
    jsonrpc: &'static str,
    id: Value,
    error: ErrorBody,
}

#[derive(Serialize)]
struct ErrorBody {
    code: i32,
    message: String,
}

fn answer(id: Option<Value>, code: ErrorCode, message: String) -> Verdict {
    let reply = ErrorLine {
        jsonrpc: "2.0",
        id: id.unwrap_or(Value::Null),
        error: ErrorBody {
            code: code.0,
            message,
        },
    };
    let mut line = serde_json::to_vec(&reply).expect("strings and JSON values serialize");
    line.push(b'\n');
    Verdict::Answer(line)
}

/// A message rmcp can read: handed on, unless its params are wrong in a way rmcp would
/// misreport.
fn check(message: ClientJsonRpcMessage, line: &[u8]) -> Verdict {
    if let JsonRpcMessage::Request(r) = &message {
        let problem = match &r.request {
            ClientRequest::CustomRequest(c) if SERVED.contains(&c.method.as_str()) => {
                Some(params_problem(&c.method, c.params.as_ref()))
            }
            ClientRequest::CallToolRequest(call)
                if call.params.arguments.is_none() && arguments_given(line) =>
            {
                Some(format!(
                    "`params.arguments` must be an object holding the tool's arguments, got null; leave it out to call `{}` without arguments",
                    call.params.name
                ))
            }
            _ => None,
        };
        if let Some(message) = problem {
            let id = r.id.clone().into_json_value();
            return answer(Some(id), ErrorCode::INVALID_PARAMS, message);
        }
    }
    Verdict::Forward(Box::new(message))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why rmcp could not read the params of `method`, a method this server serves.
fn params_problem(method: &str, params: Option<&Value>) -> String {
    let shape = if method == "tools/call" {
        format!(r#"{{"name": "{TOOL_NAME}", "arguments": {{…}}}}"#)
    } else {
        "an object".to_string()
    };
    let Some(params) = params.filter(|p| !p.is_null()) else {
        return format!("`params` is missing or null; {method} takes {shape}");
    };
    if !params.is_object() {
        return format!("`params` must be an object, got {}", kind(params));
    }
    if method == "tools/call" {
        match params.get("name") {
            None => {
                return format!("`params.name` is missing: name the tool to call (`{TOOL_NAME}`)")
            }
            Some(n) if !n.is_string() => {
                return format!("`params.name` must be a string, got {}", kind(n))
            }
            _ => {}
        }
        if let Some(a) = params.get("arguments").filter(|a| !a.is_object()) {
            return format!(
                "`params.arguments` must be an object holding the tool's arguments, got {}",
                kind(a)
            );
        }
    }
    let detail = match method {
        "tools/call" => serde_json::from_value::<CallToolRequestParams>(params.clone()).err(),
        "initialize" => serde_json::from_value::<InitializeRequestParams>(params.clone()).err(),
        "prompts/get" => serde_json::from_value::<GetPromptRequestParams>(params.clone()).err(),
        "resources/read" => {
            serde_json::from_value::<ReadResourceRequestParams>(params.clone()).err()
        }
        _ => None,
    };
    match detail {
        Some(e) => format!("`params` of {method} do not match the MCP schema: {e}"),
        None => format!("`params` of {method} do not match the MCP schema"),
    }
}

/// Whether `params.arguments` is present in the line. rmcp reads `"arguments": null` as no
/// arguments, which would reach the tool as a call without an `action`.
fn arguments_given(line: &[u8]) -> bool {
    // The members of `params`, their values skipped unread.
    #[derive(Deserialize)]
    struct Probe {
        params: Option<HashMap<String, IgnoredAny>>,
    }
    serde_json::from_slice::<Probe>(line)
        .is_ok_and(|p| p.params.is_some_and(|p| p.contains_key("arguments")))
}

/// A line rmcp cannot read: what is wrong, answered when someone waits for the answer.
fn refused(line: &[u8], e: &serde_json::Error) -> Verdict {
    let top = scan(line);
    if top.is_response() {
        return Verdict::Skip("a malformed response");
    }
    if top.is_notification() {
        return Verdict::Skip("a malformed notification");
    }
    if let Some(at) = top.deep_at {
        return answer(
            top.id(),
            ErrorCode::INVALID_REQUEST,
            format!("arrays and objects nest deeper than {MAX_DEPTH} levels (from byte {at}); this server reads at most {MAX_DEPTH}"),
        );
    }
    if !e.is_data() {
        // Not JSON.
        return match top.id() {
            Some(id) => answer(
                Some(id),
                ErrorCode::PARSE_ERROR,
                format!("the line is not valid JSON: {e}"),
            ),
            None => Verdict::Skip("a line that is not JSON and has no readable id"),
        };
    }
    if let Some(message) = params_not_an_object(line, &top) {
        return answer(top.id(), ErrorCode::INVALID_PARAMS, message);
    }
    answer(top.id(), ErrorCode::INVALID_REQUEST, not_a_request(&top, e))
}

/// rmcp refuses a request whose `params` is a string, a number or an array outright, as no
/// JSON-RPC message; for a method this server serves, that is a fault of the params.
fn params_not_an_object(line: &[u8], top: &Top) -> Option<String> {
    #[derive(Deserialize)]
    struct Request {
        method: String,
        params: Value,
    }
    if top.id().is_none() || !top.jsonrpc_is_2_0() {
        return None;
    }
    let r: Request = serde_json::from_slice(line).ok()?;
    let served = SERVED.contains(&r.method.as_str());
    (served && !r.params.is_object()).then(|| params_problem(&r.method, Some(&r.params)))
}

/// Why a JSON value is no JSON-RPC request.
fn not_a_request(top: &Top, e: &serde_json::Error) -> String {
    match top.first {
        Some(b'{') => {}
        Some(b'[') => {
            return "JSON-RPC batches (arrays) are not supported; send one JSON-RPC object per line"
                .into()
        }
        Some(b'"') => return "a JSON-RPC message is an object, got a string".into(),
        Some(b't' | b'f') => return "a JSON-RPC message is an object, got a boolean".into(),
        Some(b'n') => return "a JSON-RPC message is an object, got null".into(),
        _ => return "a JSON-RPC message is an object, got a number".into(),
    }
    let mut problems = Vec::new();
    if top.has_id && top.id().is_none() {
        problems.push("`id` must be a string or an integer");
    }
    // Valid JSON-RPC, but past what an MCP id holds: answered with that id, saying so.
    let too_big = top.id().filter(|v| v.is_u64() && !v.is_i64());
    let too_big = too_big.map(|id| format!("`id` {id} is over the largest integer id this server reads (2^63 - 1); send a smaller integer or a string"));
    if let Some(message) = &too_big {
        problems.push(message);
    }
    if !top.jsonrpc_is_2_0() {
        problems.push(r#"`jsonrpc` must be "2.0""#);
    }
    if !top.has_method {
        problems.push("`method` is missing: a request names the method to call");
    } else if !top.method_is_string() {
        problems.push("`method` must be a string");
    }
    if top.has_method && (top.has_result || top.has_error) {
        problems.push("a request cannot have `result` or `error`");
    }
    if problems.is_empty() {
        format!("not a valid JSON-RPC request: {e}")
    } else {
        problems.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(line: &str) -> Value {
        match super::line(line.as_bytes()) {
            Verdict::Answer(bytes) => {
                assert_eq!(bytes.last(), Some(&b'\n'));
                serde_json::from_slice(&bytes).unwrap()
            }
            other => panic!("{line} → {other:?}, not an answer"),
        }
    }

    fn forwarded(line: &str) -> ClientJsonRpcMessage {
        match super::line(line.as_bytes()) {
            Verdict::Forward(m) => *m,
            other => panic!("{line} → {other:?}, not handed on"),
        }
    }

    fn skipped(line: &[u8]) {
        let verdict = super::line(line);
        assert!(
            matches!(verdict, Verdict::Skip(_)),
            "{} → {verdict:?}",
            String::from_utf8_lossy(line)
        );
    }

    fn call(arguments: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{{"name":"bmad-task","arguments":{arguments}}}}}"#
        )
    }

    #[test]
    fn arguments_that_are_not_an_object_are_invalid_params_naming_arguments() {
        for (arguments, got) in [
            (r#""start""#, "a string"),
            ("[1]", "an array"),
            ("5", "a number"),
            ("true", "a boolean"),
            ("null", "null"),
        ] {
            let r = reply(&call(arguments));
            assert_eq!(r["id"], "c-1", "{r}");
            assert_eq!(r["error"]["code"], -32602, "{r}");
            let message = r["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("`params.arguments` must be an object")
                    && message.contains(&format!("got {got}")),
                "{r}"
            );
        }
        assert!(matches!(
            forwarded(&call(r#"{"action":"list"}"#)),
            JsonRpcMessage::Request(_)
        ));
        let no_arguments =
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bmad-task"}}"#;
        forwarded(no_arguments);
    }

    #[test]
    fn missing_params_and_name_are_invalid_params() {
        for (params, needle) in [
            ("", "`params` is missing or null"),
            (r#","params":null"#, "`params` is missing or null"),
            (
                r#","params":"x""#,
                "`params` must be an object, got a string",
            ),
            (
                r#","params":[1]"#,
                "`params` must be an object, got an array",
            ),
            (r#","params":{"arguments":{}}"#, "`params.name` is missing"),
            (
                r#","params":{"name":7}"#,
                "`params.name` must be a string, got a number",
            ),
        ] {
            let r = reply(&format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call"{params}}}"#
            ));
            assert_eq!(
                (r["id"].clone(), r["error"]["code"].clone()),
                (json!(3), json!(-32602))
            );
            assert!(
                r["error"]["message"].as_str().unwrap().contains(needle),
                "{r}"
            );
        }
        let r = reply(r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}}"#);
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("protocolVersion"),
            "{r}"
        );
        // A method this server does not serve stays rmcp's to refuse (-32601).
        forwarded(r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":null}"#);
        // Served methods with a required param name it.
        let r = reply(r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{}}"#);
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("uri"),
            "{r}"
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":null}"#);
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    #[test]
    fn a_lone_surrogate_is_read_as_the_replacement_character() {
        let m = forwarded(&call(r#"{"action":"start","objective":"Ship it \ud83d"}"#));
        let JsonRpcMessage::Request(r) = m else {
            panic!("a request")
        };
        let ClientRequest::CallToolRequest(c) = r.request else {
            panic!("a tool call")
        };
        let arguments = c.params.arguments.unwrap();
        assert_eq!(arguments["objective"], "Ship it \u{fffd}");
        // Repaired, but still no request: answered about what else is wrong.
        let r =
            reply(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"\ud83d"}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(6), json!(-32700))
        );
    }

    #[test]
    fn nesting_deeper_than_serde_reads_is_an_invalid_request_with_the_id() {
        let deep = |n: usize, id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0",{id}"method":"tools/call","params":{{"name":"bmad-task","arguments":{{"x":{}{}}}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        let r = reply(&deep(10_000, r#""id":8,"#));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(8), json!(-32600))
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("deeper than 128"),
            "{r}"
        );
        // A notification is never answered, however deep.
        skipped(deep(10_000, "").as_bytes());
        // Within the limit (the message, params, arguments and 120 arrays): handed on.
        forwarded(&deep(120, r#""id":9,"#));
    }

    #[test]
    fn lines_that_are_not_json_are_answered_only_when_they_have_an_id() {
        let r = reply(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call""#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(1), json!(-32700))
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":"x","method":"ping"}}}"#);
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!("x"), json!(-32700))
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("trailing characters"),
            "{r}"
        );
        for line in [
            &b"this is not json"[..],
            b"\xff\xfe\x00garbage",
            b"",
            b"   ",
            b"\xEF\xBB\xBF\r",
            br#"{"jsonrpc":"2.0","id":1,"result":"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized""#,
        ] {
            skipped(line);
        }
    }

    #[test]
    fn json_that_is_no_request_is_an_invalid_request() {
        for (line, id, needle) in [
            ("[]", json!(null), "batches"),
            ("42", json!(null), "got a number"),
            (r#""hi""#, json!(null), "got a string"),
            (r#"{"hello":"world"}"#, json!(null), "`method` is missing"),
            (
                r#"{"jsonrpc":"2.0","id":9}"#,
                json!(9),
                "`method` is missing",
            ),
            (
                r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
                json!(9),
                r#"`jsonrpc` must be "2.0""#,
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                json!(null),
                "`id` must be",
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":7}"#,
                json!(2),
                "`method` must be a string",
            ),
        ] {
            let r = reply(line);
            assert_eq!(r["id"], id, "{line} → {r}");
            assert_eq!(r["error"]["code"], -32600, "{line} → {r}");
            assert!(
                r["error"]["message"].as_str().unwrap().contains(needle),
                "{line} → {r}"
            );
        }
        skipped(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#);
        skipped(br#"{"jsonrpc":"2.0","id":3,"error":"bad"}"#);
    }

    #[test]
    fn a_bom_and_a_carriage_return_are_ignored() {
        forwarded("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r");
    }

    #[test]
    fn an_over_limit_line_is_answered_naming_the_limit_and_the_variable() {
        let top = super::scan(br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":"#);
        let Verdict::Answer(bytes) = too_long(70_000, 65_536, &top) else {
            panic!("answered")
        };
        let r: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(77), json!(-32600))
        );
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("70000 bytes") && message.contains("64 KiB"),
            "{message}"
        );
        assert!(message.contains("BMAD_MAX_LINE_BYTES"), "{message}");
        let notification = super::scan(br#"{"jsonrpc":"2.0","method":"x","params":"#);
        assert!(matches!(
            too_long(70_000, 65_536, &notification),
            Verdict::Skip(_)
        ));
    }
}
