//! Untrusted text made safe to show: every document, answer and check output was written
//! by a model or a process. Markdown is rendered by pulldown-cmark with its raw HTML turned
//! into text, links kept only for `http`, `https`, `mailto` and in-page anchors, and images
//! never loaded (their alternative text and address are shown instead). Diffs between
//! rounds come from `similar`'s line diff, every line escaped. The page's
//! Content-Security-Policy (`guard.rs`) is the second wall: even a mistake here could not
//! run a script.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change of a diff.
const DIFF_CONTEXT: usize = 3;

/// `text` with the five characters HTML gives a meaning escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a link's destination may stay a link: the web, mail, or a place in the page.
fn safe_link(dest: &str) -> bool {
    let d = dest.trim().to_ascii_lowercase();
    d.starts_with("http://")
        || d.starts_with("https://")
        || d.starts_with("mailto:")
        || (d.starts_with('#') && !d.contains(':'))
}

/// Markdown as HTML in which nothing can run, load or submit anything.
pub fn markdown(text: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut image_dest = Vec::new();
    let events = Parser::new_ext(text, options).map(|event| match event {
        // Raw HTML is shown as the text it is.
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            let dest_url = if safe_link(&dest_url) {
                dest_url
            } else {
                CowStr::Borrowed("#unsafe-link")
            };
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            })
        }
        // An image is never fetched: its text, then where it pointed, as text.
        Event::Start(Tag::Image { dest_url, .. }) => {
            image_dest.push(dest_url.to_string());
            Event::Text(CowStr::Borrowed("[image: "))
        }
        Event::End(TagEnd::Image) => {
            let dest = image_dest.pop().unwrap_or_default();
            Event::Text(CowStr::from(format!(" <{dest}>]")))
        }
        other => other,
    });
    let mut html = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// A unified diff of `old` against `new` as an HTML table: one row per line, the removed
/// and added lines marked, unchanged stretches cut to a few lines of context.
pub fn diff(old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut html = String::from("<table class=\"diff\">");
    let mut changed = false;
    for (i, group) in diff.grouped_ops(DIFF_CONTEXT).iter().enumerate() {
        if i > 0 {
            html.push_str("<tr class=\"gap\"><td colspan=\"3\">…</td></tr>");
        }
        for change in group.iter().flat_map(|op| diff.iter_changes(op)) {
            let (class, sign) = match change.tag() {
                ChangeTag::Delete => ("del", '-'),
                ChangeTag::Insert => ("ins", '+'),
                ChangeTag::Equal => ("same", ' '),
            };
            changed |= change.tag() != ChangeTag::Equal;
            // A removed line is numbered in the old text, every other in the new.
            let line = change
                .new_index()
                .or(change.old_index())
                .map_or(0, |n| n + 1);
            html.push_str(&format!(
                "<tr class=\"{class}\"><td class=\"n\">{line}</td><td class=\"s\">{sign}</td><td>{}</td></tr>",
                escape(change.value().trim_end_matches(['\n', '\r']))
            ));
        }
    }
    if !changed {
        html.push_str("<tr class=\"same\"><td colspan=\"3\">(no change)</td></tr>");
    }
    html.push_str("</table>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_shown_as_text_and_never_parsed() {
        let html = markdown("Hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn only_web_mail_and_anchor_links_stay_links() {
        let html = markdown(
            "[a](javascript:alert(1)) [b](data:text/html,x) [c](https://e.org) [d](#x) [e]( JaVaScRiPt:1)",
        );
        assert!(!html.to_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("href=\"https://e.org\""), "{html}");
        assert!(html.contains("href=\"#x\""), "{html}");
        assert_eq!(html.matches("#unsafe-link").count(), 3, "{html}");
    }

    #[test]
    fn images_are_never_loaded() {
        let html = markdown("![logo](https://evil.example/p.png) and ![x](/local.png)");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("[image: logo &lt;https://evil.example/p.png&gt;]"),
            "{html}"
        );
    }

    #[test]
    fn a_diff_marks_removed_and_added_lines_escaped() {
        let html = diff("a\nb\n<c>\n", "a\nB\n<c>\n");
        assert!(
            html.contains(
                "<tr class=\"del\"><td class=\"n\">2</td><td class=\"s\">-</td><td>b</td></tr>"
            ),
            "{html}"
        );
        assert!(html.contains("class=\"ins\""), "{html}");
        assert!(html.contains("&lt;c&gt;"), "{html}");
        assert!(diff("same\n", "same\n").contains("(no change)"));
    }
}
