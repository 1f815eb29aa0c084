//! A run of the project's checks as the model reads it (docs/spec.md §10.8): a line per
//! outcome, and for a check that did not pass, where its whole output is and the end of it.
//! What a program wants beside that (commands, durations, digests, the commit checked) is
//! in `structuredContent` and the session. The end of a second failing check's output is
//! given only in the lines the reply has not shown yet: two checks that run the same tests
//! fail alike, and the model need not read the same traceback twice.

use std::collections::HashSet;

use serde_json::Value;

/// The most of an output's end the text gives, in bytes (whole lines): where a failure is
/// said; the file has it all.
const END_BYTES: usize = 1_200;

/// The last lines of `text` within `most` bytes (the last line whole, however long).
fn last_lines(text: &str, most: usize) -> &str {
    let text = text.trim_end();
    if text.len() <= most {
        return text;
    }
    let mut start = text.len();
    for (i, _) in text.match_indices('\n').rev() {
        if text.len() - i - 1 > most {
            break;
        }
        start = i + 1;
    }
    if start == text.len() {
        return &text[text.rfind('\n').map_or(0, |i| i + 1)..];
    }
    &text[start..]
}

/// `checks:` and its lines, for the run `v` (the reply's `checks` field).
pub(super) fn render(out: &mut String, v: &Value) {
    let checks: Vec<&Value> = v["checks"].as_array().into_iter().flatten().collect();
    if checks.is_empty() {
        return;
    }
    let passed: Vec<&str> = checks
        .iter()
        .filter(|c| c["outcome"] == "passed")
        .filter_map(|c| c["name"].as_str())
        .collect();
    // Every check passed: one line, with the key.
    if passed.len() == checks.len() {
        out.push_str(&format!("checks: passed: {}\n", passed.join(", ")));
        return;
    }
    out.push_str("checks:\n");
    if !passed.is_empty() {
        out.push_str(&format!("  - passed: {}\n", passed.join(", ")));
    }
    let mut shown: HashSet<String> = HashSet::new();
    for c in checks.iter().filter(|c| c["outcome"] != "passed") {
        one(out, c, &mut shown);
    }
}

/// A check that did not pass: its outcome, its output's file, the end of the output.
fn one(out: &mut String, c: &Value, shown: &mut HashSet<String>) {
    let name = c["name"].as_str().unwrap_or("?");
    let outcome = c["outcome"].as_str().unwrap_or("?");
    let exit = c["exit_code"]
        .as_i64()
        .map(|e| format!(" (exit {e})"))
        .unwrap_or_default();
    out.push_str(&format!("  - {name}: {outcome}{exit}"));
    if let Some(path) = c["output"]["file_path"].as_str() {
        out.push_str(&format!("; whole output: {path}"));
    }
    out.push('\n');
    // The end says why a check failed; a short output is all end.
    let end = c["tail"]
        .as_str()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| c["output"]["summary"].as_str());
    let Some(end) = end.filter(|t| !t.trim().is_empty()) else {
        return;
    };
    let end = last_lines(end, END_BYTES);
    // Only what an earlier check showed is left out: an output's own repeated lines (the
    // frames of two tracebacks) are kept, so that it reads as it was written.
    let mut left_out = 0;
    let mut lines = String::new();
    let mut this = Vec::new();
    for line in end.trim_end().lines() {
        let key = line.trim();
        if !key.is_empty() && shown.contains(key) {
            left_out += 1;
            continue;
        }
        this.push(key.to_string());
        lines.push_str(&format!("      {line}\n"));
    }
    shown.extend(this);
    match left_out {
        0 => out.push_str("    its output ends:\n"),
        n => out.push_str(&format!(
            "    its output ends (leaving out {n} lines said above in this reply):\n"
        )),
    }
    out.push_str(&lines);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(name: &str, outcome: &str, tail: &str) -> Value {
        json!({"name": name, "outcome": outcome, "exit_code": 1, "command": "make test",
            "duration_ms": 10, "output_sha256": "ab".repeat(32),
            "output": {"file_path": format!("{name}.log"), "summary": "head"}, "tail": tail})
    }

    #[test]
    fn passing_checks_take_one_line_and_a_failure_its_file_and_end() {
        let run = json!({"checks": [check("compile", "passed", ""), check("lint", "passed", ""),
            check("test", "failed", "Traceback\nAssertionError: 1 != 2\nFAILED (failures=1)\n")],
            "config_sha256": "cd".repeat(32), "git": {"commit": "f".repeat(40)}});
        let mut out = String::new();
        render(&mut out, &run);
        assert!(
            out.contains("checks:\n  - passed: compile, lint\n"),
            "{out}"
        );
        assert!(
            out.contains("  - test: failed (exit 1); whole output: test.log\n"),
            "{out}"
        );
        assert!(out.contains("      AssertionError: 1 != 2\n"), "{out}");
        for gone in ["make test", "abab", "cdcd", "ffff", "duration", "head"] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
    }

    #[test]
    fn a_run_that_passed_is_one_line() {
        let run = json!({"checks": [check("compile", "passed", ""), check("test", "passed", "")]});
        let mut out = String::new();
        render(&mut out, &run);
        assert_eq!(out, "checks: passed: compile, test\n");
    }

    #[test]
    fn a_long_end_is_cut_to_its_last_lines() {
        let long: String = (0..200).map(|i| format!("frame {i}\n")).collect();
        let run =
            json!({"checks": [check("test", "failed", &format!("{long}FAILED (errors=31)\n"))]});
        let mut out = String::new();
        render(&mut out, &run);
        assert!(
            out.contains("FAILED (errors=31)") && out.contains("frame 199"),
            "{out}"
        );
        // Indented six spaces a line: the end itself is within the limit.
        assert!(
            !out.contains("frame 1\n") && out.len() < 2 * END_BYTES,
            "{out}"
        );
    }

    #[test]
    fn a_second_failures_end_leaves_out_the_lines_the_first_said() {
        let same = "Traceback\n  File \"x.py\", line 3\nAttributeError: immutable\n";
        let run = json!({"checks": [check("test", "failed", &format!("{same}Ran 37 tests in 2.5s\n")),
            check("test39", "failed", &format!("{same}Ran 37 tests in 2.2s\n"))]});
        let mut out = String::new();
        render(&mut out, &run);
        assert_eq!(out.matches("AttributeError: immutable").count(), 1, "{out}");
        assert!(out.contains("Ran 37 tests in 2.2s"), "{out}");
        assert!(out.contains("leaving out 3 lines said above"), "{out}");
    }
}
