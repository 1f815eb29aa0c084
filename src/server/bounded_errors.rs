//! Every error reply stays bounded, whoever wrote it and in either protocol era. rmcp
//! quotes what the client sent in some of its errors (an unknown method's name, a
//! `_meta` protocol version it does not support, a header that does not match the body):
//! a 1 MB value came back whole. The transports pass each error through [`bound`], which
//! cuts the message and every text in `data` as the server's own messages quote text
//! (`clip`); and the server answers an unknown method naming it clipped
//! ([`method_not_found`]).

use rmcp::model::ErrorCode;
use rmcp::ErrorData;
use serde_json::Value;

use crate::code::{clip, QUOTE_CHARS};

/// The most characters of an error's message (the server's own are far shorter).
const MESSAGE_CHARS: usize = 2000;

/// The most items an array in an error's `data` keeps.
const DATA_ITEMS: usize = 20;

/// `error` (a JSON-RPC error object: `code`, `message`, `data`) cut to size; whether
/// anything was cut.
pub fn bound(error: &mut Value) -> bool {
    let mut cut = false;
    if let Some(Value::String(m)) = error.get_mut("message") {
        cut |= shorten(m, MESSAGE_CHARS);
    }
    if let Some(data) = error.get_mut("data") {
        cut |= bound_data(data, 0);
    }
    cut
}

/// The JSON-RPC message `message` with its error, if it has one, cut to size; whether
/// anything was cut.
pub fn bound_message(message: &mut Value) -> bool {
    message.get_mut("error").is_some_and(bound)
}

fn shorten(text: &mut String, max: usize) -> bool {
    let clipped = clip(text, max);
    let cut = clipped.len() != text.len();
    *text = clipped;
    cut
}

fn bound_data(v: &mut Value, depth: usize) -> bool {
    match v {
        Value::String(s) => shorten(s, QUOTE_CHARS),
        Value::Array(items) => {
            let cut = items.len() > DATA_ITEMS;
            items.truncate(DATA_ITEMS);
            items
                .iter_mut()
                .fold(cut, |c, i| bound_data(i, depth + 1) | c)
        }
        Value::Object(map) if depth < 8 => map
            .values_mut()
            .fold(false, |c, i| bound_data(i, depth + 1) | c),
        Value::Object(map) => {
            map.clear();
            true
        }
        _ => false,
    }
}

/// The answer to a request for a method this server does not have, naming it clipped.
pub fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, clip(method, QUOTE_CHARS), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_and_data_are_cut_and_small_errors_left_alone() {
        let big = "y".repeat(1_000_000);
        let mut e = json!({"code": -32022, "message": big,
            "data": {"requested": big, "supported": (0..100).collect::<Vec<_>>()}});
        assert!(bound(&mut e));
        assert!(e.to_string().len() < 3000, "{}", e.to_string().len());
        assert!(e["data"]["requested"].as_str().unwrap().ends_with('…'));
        let mut small = json!({"code": -32601, "message": "nosuch/method"});
        let before = small.clone();
        assert!(!bound(&mut small));
        assert_eq!(small, before);
        assert_eq!(
            method_not_found(&big).message.chars().count(),
            QUOTE_CHARS + 1
        );
    }
}
