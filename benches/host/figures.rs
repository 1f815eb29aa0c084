//! The figures of a run: bytes per tool result and in all, an estimate of tokens, and the
//! share of lines the model had already received earlier in the run.
//!
//! Lines: a result that is JSON (what Claude Code shows when a result has
//! `structuredContent`) is read as its values, each string value split at its line breaks
//! and each other value as `key: value`, so that a JSON string with escaped line breaks
//! and the same text as Markdown count alike; any other result is split at its line
//! breaks. Lines are trimmed and empty ones dropped. A line counts as repeated when the
//! same line came earlier in the run (in an earlier result, or higher up in the same one);
//! the share is by bytes, and by count for a recorded workload (as its recording counted).

use std::collections::HashSet;

use serde_json::Value;

/// Tokens are estimated as bytes / 4 (English prose and JSON average about 4 bytes a token).
pub const BYTES_PER_TOKEN: usize = 4;

pub struct Call {
    pub action: String,
    pub bytes: usize,
    pub repeated: usize,
    pub line_bytes: usize,
    /// Its non-blank lines, and how many of them came before.
    pub lines: usize,
    pub repeated_lines: usize,
}

pub struct Run {
    pub calls: Vec<Call>,
}

impl Run {
    pub fn of(actions: &[String], results: &[String]) -> Run {
        let mut seen = HashSet::new();
        let calls = actions
            .iter()
            .zip(results)
            .map(|(action, text)| {
                let (mut repeated, mut line_bytes, mut repeated_lines) = (0, 0, 0);
                let all = lines(text);
                for line in &all {
                    line_bytes += line.len();
                    if !seen.insert(line.clone()) {
                        repeated += line.len();
                        repeated_lines += 1;
                    }
                }
                Call {
                    action: action.clone(),
                    bytes: text.len(),
                    repeated,
                    line_bytes,
                    lines: all.len(),
                    repeated_lines,
                }
            })
            .collect();
        Run { calls }
    }

    pub fn total(&self) -> usize {
        self.calls.iter().map(|c| c.bytes).sum()
    }

    pub fn repeated_share(&self) -> f64 {
        let lines: usize = self.calls.iter().map(|c| c.line_bytes).sum();
        let repeated: usize = self.calls.iter().map(|c| c.repeated).sum();
        if lines == 0 {
            0.0
        } else {
            repeated as f64 / lines as f64
        }
    }

    /// The share of non-blank lines that came before, by count (the recording's measure).
    pub fn repeated_line_share(&self) -> f64 {
        let lines: usize = self.calls.iter().map(|c| c.lines).sum();
        let repeated: usize = self.calls.iter().map(|c| c.repeated_lines).sum();
        repeated as f64 / lines.max(1) as f64
    }

    /// The largest result that is not a `status`, with its call number.
    pub fn largest_not_status(&self) -> (usize, usize) {
        self.calls
            .iter()
            .enumerate()
            .filter(|(_, c)| c.action != "status")
            .map(|(i, c)| (c.bytes, i + 1))
            .max()
            .unwrap_or((0, 0))
    }

    /// The largest result, with its call number.
    pub fn largest(&self) -> (usize, usize) {
        self.calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.bytes, i + 1))
            .max()
            .unwrap_or((0, 0))
    }

    /// The bytes of call `n` (from 1); 0 when there is none.
    pub fn bytes_at(&self, n: usize) -> usize {
        self.calls.get(n.wrapping_sub(1)).map_or(0, |c| c.bytes)
    }

    /// The share of call `n`'s lines (from 1) sent before, by bytes.
    pub fn repeated_at(&self, n: usize) -> f64 {
        match self.calls.get(n.wrapping_sub(1)) {
            Some(c) if c.line_bytes > 0 => c.repeated as f64 / c.line_bytes as f64,
            _ => 0.0,
        }
    }

    pub fn print(&self, title: &str) {
        println!("\n{title}");
        println!(
            "  {:>3}  {:<8} {:>8} {:>8} {:>9}",
            "#", "action", "bytes", "~tokens", "repeated"
        );
        for (i, c) in self.calls.iter().enumerate() {
            let share = if c.line_bytes == 0 {
                0.0
            } else {
                100.0 * c.repeated as f64 / c.line_bytes as f64
            };
            println!(
                "  {:>3}  {:<8} {:>8} {:>8} {:>8.0}%",
                i + 1,
                c.action,
                c.bytes,
                c.bytes / BYTES_PER_TOKEN,
                share
            );
        }
        println!(
            "  all  {:<8} {:>8} {:>8} {:>8.0}%",
            "",
            self.total(),
            self.total() / BYTES_PER_TOKEN,
            100.0 * self.repeated_share()
        );
    }
}

/// The lines of a result, as the module's comment says.
pub fn lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => leaves("", &v, &mut out),
        _ => split(text, &mut out),
    }
    out
}

fn split(text: &str, out: &mut Vec<String>) {
    out.extend(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from),
    );
}

fn leaves(key: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => o.iter().for_each(|(k, c)| leaves(k, c, out)),
        Value::Array(a) => a.iter().for_each(|c| leaves(key, c, out)),
        Value::String(s) if s.contains('\n') => split(s, out),
        Value::String(s) => out.push(format!("{key}: {s}")),
        other => out.push(format!("{key}: {other}")),
    }
}

/// A target's verdict.
pub fn verdict(ok: bool) -> &'static str {
    if ok {
        "pass"
    } else {
        "MISS"
    }
}
