//! What the page shows of a stage's checks: the run (when, on which approved config and
//! commit) and each check exactly as the server ran it, with its result in words, its time,
//! and its kept output with the lines that say what failed picked out to be read first.

use serde_json::{json, Value};

use crate::files::Project;
use crate::workflow::evidence::{CheckOutcome, CheckResult, CheckRun};

/// The most lines picked out of an output as the failing ones.
const MAX_FAILING_LINES: usize = 60;
/// The lines taken from the end of an output in which no line looks like a failure.
const TAIL_LINES: usize = 20;
/// Words that mark a line of a test or build tool's output as saying what failed.
const FAILURE_WORDS: [&str; 10] = [
    "fail",
    "error",
    "panic",
    "assert",
    "fatal",
    "exception",
    "traceback",
    "not ok",
    "missing",
    "✗",
];

/// The run of `checks` as the page shows it, each check's kept output read with `read`.
pub fn view(
    project: &Project,
    run: &CheckRun,
    read: impl Fn(&Project, &str) -> Option<String>,
) -> Value {
    let checks: Vec<Value> = run
        .checks
        .iter()
        .map(|c| {
            let output = c.output.as_ref().and_then(|o| read(project, &o.file_path));
            check(c, output)
        })
        .collect();
    json!({
        "at": run.at,
        "config_sha256": run.config_sha256,
        "git": run.git,
        "checks": checks,
    })
}

fn check(c: &CheckResult, output: Option<String>) -> Value {
    let failing = match (&output, c.outcome) {
        (Some(text), outcome) if outcome != CheckOutcome::Passed => failing_lines(text),
        _ => Vec::new(),
    };
    json!({
        "name": c.name,
        "command": c.command,
        "outcome": c.outcome.id(),
        "result": result(c),
        "exit_code": c.exit_code,
        "signal": c.signal,
        "duration_ms": c.duration_ms,
        "output_bytes": c.output_bytes,
        "output_sha256": c.output_sha256,
        "output_kept_bytes": c.output.as_ref().map(|o| o.size),
        "output_path": c.output.as_ref().map(|o| o.file_path.clone()),
        "failing_lines": failing,
        "output": output,
    })
}

/// How the check ended, in the words every channel uses ("failed (exit 3)").
fn result(c: &CheckResult) -> String {
    let said = c.describe();
    let name = format!("check `{}` ", c.name);
    said.strip_prefix(&name).unwrap_or(&said).to_string()
}

/// The lines of a failing check's output that say what failed: those holding a failure
/// word, each with its line number, at most [`MAX_FAILING_LINES`]; when none does, the
/// last [`TAIL_LINES`] lines, where tools say why they stopped.
pub fn failing_lines(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let numbered = |(i, l): (usize, &&str)| format!("{:>5}  {l}", i + 1);
    let marked: Vec<String> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let low = l.to_lowercase();
            FAILURE_WORDS.iter().any(|w| low.contains(w))
        })
        .take(MAX_FAILING_LINES)
        .map(numbered)
        .collect();
    if !marked.is_empty() {
        return marked;
    }
    let from = lines.len().saturating_sub(TAIL_LINES);
    lines
        .iter()
        .enumerate()
        .skip(from)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(numbered)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_that_say_what_failed_come_with_their_numbers() {
        let out = "running 3 tests\ntest a ... ok\ntest b ... FAILED\nthread 'b' panicked at src/b.rs:4\nall done\n";
        assert_eq!(
            failing_lines(out),
            [
                "    3  test b ... FAILED",
                "    4  thread 'b' panicked at src/b.rs:4"
            ]
        );
    }

    #[test]
    fn an_output_without_a_failure_word_gives_its_last_lines() {
        let out: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let picked = failing_lines(&out);
        assert_eq!(picked.len(), TAIL_LINES);
        assert_eq!(picked[0], "   11  line 11");
        assert_eq!(picked[TAIL_LINES - 1], "   30  line 30");
        assert!(failing_lines("").is_empty());
    }

    #[test]
    fn a_failing_check_says_how_it_ended_and_a_passing_one_picks_nothing() {
        let mut c = CheckResult {
            name: "test".into(),
            command: "cargo test".into(),
            outcome: CheckOutcome::Failed,
            exit_code: Some(3),
            signal: None,
            duration_ms: 1200,
            output_bytes: 12,
            output_sha256: "ab".into(),
            output: None,
            tail: String::new(),
        };
        let v = check(&c, Some("error: boom\n".into()));
        assert_eq!(v["result"], "failed (exit 3)");
        assert_eq!(v["failing_lines"], json!(["    1  error: boom"]));
        c.outcome = CheckOutcome::Passed;
        let v = check(&c, Some("no errors\n".into()));
        assert_eq!(v["result"], "passed");
        assert_eq!(v["failing_lines"], json!([]));
    }
}
