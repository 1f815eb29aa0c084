//! Comment threads across rounds. A send-back from the dashboard carries the human's
//! comments in its words, each under a heading the server wrote (`On lines 3-4 of <path>:`,
//! `On the whole of <path>:`, the lines quoted after it); read back from the history, they
//! are the threads shown against the next version, each open or resolved. When the human
//! decides on that version, every thread goes with the decision, marked: the open ones
//! quoted again for the next role (`Still open from draft 1. On …`), the resolved ones said
//! to be (`Resolved since draft 1. On …`). The words parsed are the human's own through
//! this page; whatever they say is shown as text.

use serde_json::{json, Value};

use crate::workflow::session::HistoryEntry;
use crate::workflow::{Action, DecidedBy, Session, Stage, Via};

/// One comment of an earlier round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// "draft 1": the version it was written on.
    pub draft: String,
    /// "lines 3-4", "line 3", or "the whole".
    pub span: String,
    /// The lines it is about, as they read then (none for the whole document).
    pub quote: Vec<String>,
    pub text: String,
    /// Marked resolved by the decision that carried it.
    pub resolved: bool,
}

impl Thread {
    /// The thread as the next decision's words say it.
    pub fn carried(&self, path: &str, resolved: bool) -> String {
        let mark = if resolved {
            format!("Resolved since {}", self.draft)
        } else {
            format!("Still open from {}", self.draft)
        };
        let mut out = format!("{mark}. On {} of {path}:", self.span);
        for q in &self.quote {
            out.push_str(&format!("\n> {q}"));
        }
        out.push('\n');
        out.push_str(&self.text);
        out
    }

    pub fn view(&self) -> Value {
        json!({"draft": self.draft, "span": self.span, "quote": self.quote, "text": self.text, "resolved": self.resolved})
    }
}

/// The lines a span names: "line 3" 1, "lines 3-5" 3, "the whole" none.
fn quoted_lines(span: &str) -> Option<usize> {
    if span == "the whole" {
        return Some(0);
    }
    if let Some(n) = span.strip_prefix("line ") {
        return n.parse::<usize>().ok().map(|_| 1);
    }
    let (a, b) = span.strip_prefix("lines ")?.split_once('-')?;
    let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
    (b >= a).then(|| b - a + 1)
}

/// A heading's draft (from a carried thread's mark) and span, when `line` is one.
fn heading(line: &str, path: &str, draft: &str) -> Option<(String, String, bool)> {
    let head = line.strip_suffix(&format!(" of {path}:"))?;
    let on = head.rfind("On ")?;
    let (mark, span) = (&head[..on], &head[on + 3..]);
    quoted_lines(span)?;
    let (from, resolved) = if mark.is_empty() {
        (draft.to_string(), false)
    } else if let Some(d) = mark.strip_prefix("Still open from ") {
        (d.strip_suffix(". ")?.to_string(), false)
    } else if let Some(d) = mark.strip_prefix("Resolved since ") {
        (d.strip_suffix(". ")?.to_string(), true)
    } else {
        return None;
    };
    Some((from, span.to_string(), resolved))
}

/// The comments in `words` (a decision's words written by this page) on `path`, as
/// threads of `draft`.
pub fn parse(words: &str, path: &str, draft: &str) -> Vec<Thread> {
    let lines: Vec<&str> = words.lines().collect();
    let mut out: Vec<Thread> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((from, span, resolved)) = heading(lines[i], path, draft) else {
            if let Some(t) = out.last_mut() {
                t.text.push('\n');
                t.text.push_str(lines[i]);
            }
            i += 1;
            continue;
        };
        let n = quoted_lines(&span).unwrap_or(0);
        let quote: Vec<String> = lines[i + 1..]
            .iter()
            .take(n)
            .map(|l| l.strip_prefix("> ").unwrap_or(l).to_string())
            .collect();
        i += 1 + quote.len();
        out.push(Thread {
            draft: from,
            span,
            quote,
            text: String::new(),
            resolved,
        });
    }
    for t in &mut out {
        t.text = t.text.trim().to_string();
    }
    out
}

/// The threads shown against the version waiting on `stage`: the comments of the last
/// send-back of that stage made on this page, when a newer draft answered it.
pub fn of(s: &Session, stage: Stage, path: &str) -> Vec<Thread> {
    let entries: Vec<&HistoryEntry> = s.steps_at(stage);
    let Some(last) = entries.iter().rposition(|h| h.action == Action::Reject) else {
        return Vec::new();
    };
    let reject = entries[last];
    let answered = entries[last..].iter().any(|h| h.action == Action::Submit);
    let ours = reject.decided_by == Some(DecidedBy::Human) && reject.via == Some(Via::Dashboard);
    if !answered || !ours {
        return Vec::new();
    }
    let drafts = entries[..last]
        .iter()
        .filter(|h| h.action == Action::Submit)
        .count();
    let words = reject.feedback.as_deref().unwrap_or("");
    parse(words, path, &format!("draft {drafts}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_read_back_as_the_page_wrote_them() {
        let path = ".claude/specs/t/01-product-requirements.md";
        let words = format!(
            "Say who the users are.\n\n\
             On lines 3-4 of {path}:\n> ## Summary\n> First.\nToo thin.\n\nReally.\n\n\
             On the whole of {path}:\nShorter, please.\n\n\
             Still open from draft 1. On line 2 of {path}:\n> > quoted\nKeep it.\n\n\
             Resolved since draft 1. On line 9 of {path}:\n> x\nDone."
        );
        let t = parse(&words, path, "draft 2");
        assert_eq!(t.len(), 4, "{t:?}");
        assert_eq!(
            (t[0].draft.as_str(), t[0].span.as_str()),
            ("draft 2", "lines 3-4")
        );
        assert_eq!(t[0].quote, ["## Summary", "First."]);
        assert_eq!(t[0].text, "Too thin.\n\nReally.");
        assert_eq!((t[1].span.as_str(), t[1].quote.len()), ("the whole", 0));
        assert_eq!(t[1].text, "Shorter, please.");
        assert_eq!((t[2].draft.as_str(), t[2].resolved), ("draft 1", false));
        assert_eq!(t[2].quote, ["> quoted"]);
        assert!(t[3].resolved);
        // Carried again, it reads back the same.
        let again = t[2].carried(path, false);
        assert_eq!(parse(&again, path, "draft 3"), vec![t[2].clone()]);
        assert!(parse("On line 1 of another.md:\n> x\ny", path, "draft 1").is_empty());
    }
}
