//! The tokens a host session used, read from the host's own output (the hosts table says
//! which form it prints: `hosts::Usage`): Claude Code's closing JSON object, Codex's
//! `turn.completed` events. The figures are the model backend's, passed on by the host;
//! nothing is estimated.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::hosts::Usage;

/// Tokens of one step, or of a story's steps together.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// Input read from, and written to, the backend's prompt cache.
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    /// What the host says it cost, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    pub fn add(&mut self, t: &Tokens) {
        self.input += t.input;
        self.output += t.output;
        self.cache_read += t.cache_read;
        self.cache_write += t.cache_write;
        self.cost_usd = match (self.cost_usd, t.cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The tokens `out` (the host's whole standard output) reports, read as `usage` says the
/// host prints them; `None` when it reports none (a session that crashed, a host whose
/// output the run does not read).
pub fn read(usage: Usage, out: &str) -> Option<Tokens> {
    match usage {
        Usage::ResultObject => result_object(out),
        Usage::TurnEvents => turn_events(out),
        Usage::Unknown => None,
    }
}

/// The last line that is a JSON object of `"type": "result"`: its `usage` and
/// `total_cost_usd`.
fn result_object(out: &str) -> Option<Tokens> {
    let result = out
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(|v| v.get("type").and_then(Value::as_str) == Some("result"))?;
    let u = result.get("usage")?;
    Some(Tokens {
        input: count(u, "input_tokens"),
        output: count(u, "output_tokens"),
        cache_read: count(u, "cache_read_input_tokens"),
        cache_write: count(u, "cache_creation_input_tokens"),
        cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
    })
}

/// Every `turn.completed` event's `usage`, summed (`cached_input_tokens` is a part of
/// `input_tokens`, so it is not added again).
fn turn_events(out: &str) -> Option<Tokens> {
    let mut found = None::<Tokens>;
    for v in out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    {
        if v.get("type").and_then(Value::as_str) != Some("turn.completed") {
            continue;
        }
        let Some(u) = v.get("usage") else { continue };
        let t = found.get_or_insert_with(Tokens::default);
        let cached = count(u, "cached_input_tokens");
        t.input += count(u, "input_tokens").saturating_sub(cached);
        t.cache_read += cached;
        t.output += count(u, "output_tokens");
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_s_result_object_gives_its_usage_and_cost() {
        let out = "{\"type\":\"system\"}\n{\"type\":\"result\",\"subtype\":\"success\",\"usage\":{\"input_tokens\":30,\"output_tokens\":15,\"cache_read_input_tokens\":2,\"cache_creation_input_tokens\":1},\"total_cost_usd\":0.25}\n";
        let t = read(Usage::ResultObject, out).unwrap();
        assert_eq!(
            (t.input, t.output, t.cache_read, t.cache_write),
            (30, 15, 2, 1)
        );
        assert_eq!((t.total(), t.cost_usd), (48, Some(0.25)));
        assert_eq!(read(Usage::ResultObject, "crashed\n"), None);
    }

    #[test]
    fn codex_s_turns_are_summed_its_cached_input_counted_once() {
        let out = "{\"type\":\"thread.started\"}\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":4,\"output_tokens\":5}}\nnot json\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,\"output_tokens\":5}}\n";
        let t = read(Usage::TurnEvents, out).unwrap();
        assert_eq!(
            (t.input, t.cache_read, t.output, t.total()),
            (16, 4, 10, 30)
        );
        assert_eq!(read(Usage::TurnEvents, "{\"type\":\"turn.failed\"}"), None);
        assert_eq!(read(Usage::Unknown, out), None);
    }
}
