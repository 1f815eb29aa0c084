//! What each host's model reads of the standard workflow: the same calls made over stdio
//! as each host declares itself (its `clientInfo.name`, with a dialog that accepts what
//! the form pre-fills), each result turned into what that host shows its model by the
//! host's own rule (`bmad_mcp::hosts`, each rule measured with the host:
//! docs/hosts.md), and the same as an unknown client gets them (the JSON beside the text),
//! for the figure before replies were shaped per host. The bytes are the result's own, not
//! the host's wrapper around it (Gemini CLI's `<untrusted_context>`, Codex's `Output:`).

use std::path::Path;

use bmad_mcp::hosts::{Shows, HOSTS};
use serde_json::Value;

use super::script::SESSION;
use super::stdio::{Conn, Dialog};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Makes the calls of `script` as `client`; each raw tool result, in order.
fn results_as(server: &Path, script: &[Value], client: &str) -> Res<Vec<Value>> {
    let dir = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let cwd = dir.path().display().to_string();
    let mut conn = Conn::open(server, dir.path(), home.path(), client, Dialog::Accept)?;
    let mut session = String::new();
    let mut results = Vec::new();
    for call in script {
        let mut args = call.clone();
        if args["action"] == "start" {
            args["cwd"] = cwd.clone().into();
        }
        if args["session_id"] == SESSION {
            args["session_id"] = session.clone().into();
        }
        let result = conn.call(&args)?;
        if let Some(text) = result["content"][0]["text"].as_str() {
            if let Some(at) = text.find("session_id: ").filter(|_| session.is_empty()) {
                session = text[at + 12..at + 48].to_string();
            }
        }
        results.push(result);
    }
    Ok(results)
}

/// What a host that `shows` so puts before its model of one raw tool result.
pub fn shown(result: &Value, shows: Shows) -> String {
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let json = result.get("structuredContent").map(Value::to_string);
    match (shows, json) {
        (Shows::Text, _) | (_, None) => text,
        (Shows::JsonInstead, Some(json)) => json,
        (Shows::TextThenJson | Shows::Printed, Some(json)) => format!("{text}\n\n{json}"),
        (Shows::TextErrorsAsJson, Some(_)) if result["isError"] == true => result.to_string(),
        (Shows::TextErrorsAsJson, Some(_)) => text,
    }
}

/// Prints, per host, the bytes its model reads of the standard workflow, now and as an
/// unknown client gets the replies.
pub fn print(server: &Path, script: &[Value]) -> Res<()> {
    println!(
        "\nWhat each host's model reads of the standard workflow ({} calls), by its own rule:",
        script.len()
    );
    println!(
        "  {:<22} {:>12} {:>22}",
        "host", "now", "as an unknown client"
    );
    let unknown = results_as(server, script, "bench")?;
    for (name, c) in HOSTS.iter().filter_map(|h| Some((h.name, h.client?))) {
        let results = results_as(server, script, c.names[0])?;
        let now: usize = results.iter().map(|r| shown(r, c.shows).len()).sum();
        let before: usize = unknown.iter().map(|r| shown(r, c.shows).len()).sum();
        println!("  {:<22} {:>10} B {:>20} B", name, now, before);
    }
    Ok(())
}
