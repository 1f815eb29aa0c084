//! Every reply stays under [`MAX_REPLY_BYTES`], whatever came in: hosts cap what a tool
//! may return (Claude Code warns at ~10k tokens and cuts at 25k), and a reply cut by the
//! host loses its end, where the instructions are. Long lists are capped with a count;
//! when the texts a host and a human sent (answers, feedback) still make the reply too
//! large, they are cut here and the reply says where they are in full.

use crate::error::clip;

use super::Reply;

/// The most bytes of JSON one reply may have.
pub const MAX_REPLY_BYTES: usize = 64 * 1024;
/// The most items of a list (questions, gaps, guidance, notices) a reply carries.
pub const MAX_ITEMS: usize = 20;
/// The most history entries a `status` reply shows (the session file has them all).
pub const MAX_HISTORY: usize = 50;

fn size(r: &Reply) -> usize {
    serde_json::to_vec(r).map_or(usize::MAX, |v| v.len())
}

fn cap<T>(list: &mut Option<Vec<T>>, what: &str, cut: &mut Vec<String>) {
    if let Some(items) = list {
        if items.len() > MAX_ITEMS {
            cut.push(format!("{what}: the first {MAX_ITEMS} of {}", items.len()));
            items.truncate(MAX_ITEMS);
        }
    }
}

/// `r` made to fit in [`MAX_REPLY_BYTES`]; what was cut is named in a notice. Each step
/// cuts more, and runs only while the reply is still too large.
pub fn bound(mut r: Reply) -> Reply {
    let mut cut = cap_lists(&mut r);
    let where_in_full = r
        .session_id
        .as_deref()
        .map_or_else(|| "the session file".into(), crate::store::session_rel);
    if size(&r) > MAX_REPLY_BYTES {
        cut.extend(cut_session_texts(&mut r, &where_in_full));
    }
    let over = size(&r).saturating_sub(MAX_REPLY_BYTES);
    if over > 0 {
        cut.extend(cut_role_prompt(&mut r, over, &where_in_full));
    }
    if size(&r) > MAX_REPLY_BYTES {
        cut.push(cut_list_texts(&mut r));
    }
    if let Some(e) = r.error.as_mut() {
        e.message = clip(&e.message, 2000);
    }
    if size(&r) > MAX_REPLY_BYTES {
        cut.push(leave_out(&mut r, &where_in_full));
    }
    if !cut.is_empty() {
        let notices = r.notices.get_or_insert_with(Vec::new);
        notices.truncate(MAX_ITEMS - 1);
        notices.push(format!(
            "This reply was shortened to stay under 64 KiB: {}.",
            cut.join("; ")
        ));
    } else {
        cap(&mut r.notices, "notices", &mut cut);
    }
    r
}

/// The lists capped at [`MAX_ITEMS`], and a session's history at [`MAX_HISTORY`]: what was
/// cut.
fn cap_lists(r: &mut Reply) -> Vec<String> {
    let mut cut: Vec<String> = Vec::new();
    cap(&mut r.questions, "questions", &mut cut);
    cap(&mut r.gaps, "gaps", &mut cut);
    cap(&mut r.guidance, "guidance", &mut cut);
    cap(&mut r.sprints, "sprints", &mut cut);
    if let Some(s) = r.session.as_mut() {
        let n = s.keep_last_steps(MAX_HISTORY);
        if n > MAX_HISTORY {
            cut.push(format!(
                "session.history: the last {MAX_HISTORY} of {n} entries"
            ));
        }
    }
    cut
}

/// The answers, feedback and notes of a session in the reply, cut short.
fn cut_session_texts(r: &mut Reply, where_in_full: &str) -> Option<String> {
    let s = r.session.as_mut()?;
    for rec in s.stages.iter_mut() {
        for a in rec.answers.values_mut() {
            *a = clip(a, 500);
        }
        for f in rec
            .feedback
            .iter_mut()
            .map(|f| &mut f.text)
            .chain(rec.notes.iter_mut())
        {
            *f = clip(f, 1000);
        }
    }
    for f in s.step_words_mut() {
        *f = clip(f, 1000);
    }
    Some(format!(
        "session: answers and feedback cut short (in full in {where_in_full})"
    ))
}

/// The role prompt cut by `over` bytes and a margin: the role and its first instructions
/// are kept, and its last paragraph says where the rest is.
fn cut_role_prompt(r: &mut Reply, over: usize, where_in_full: &str) -> Option<String> {
    let p = r.role_prompt.as_mut()?;
    let keep = p.len().saturating_sub(over + 1024).max(4096);
    let at = (0..=keep.min(p.len()))
        .rev()
        .find(|i| p.is_char_boundary(*i))
        .unwrap_or(0);
    p.truncate(at);
    p.push_str(&format!(
        "\n\n[This prompt was cut to keep the reply under 64 KiB. The answers and feedback it quoted are in full in {where_in_full} (`stages.<stage>.answers`, `.feedback`): read them before you write.]\n"
    ));
    Some("role_prompt: cut (see its last paragraph)".into())
}

/// Long texts inside the lists (questions of a thousand wide characters, a sprint title of
/// thousands) cut each, and the message: the documents and the session file have them
/// whole.
fn cut_list_texts(r: &mut Reply) -> String {
    for q in r.questions.iter_mut().flatten() {
        q.question = clip(&q.question, 300);
        q.context = q.context.as_deref().map(|c| clip(c, 300));
    }
    for g in r.gaps.iter_mut().flatten() {
        *g = clip(g, 300);
    }
    for sp in r.sprints.iter_mut().flatten() {
        sp.title = clip(&sp.title, 200);
    }
    r.user_message = clip(&r.user_message, 8000);
    "questions, gaps, sprint titles and the message: cut short".into()
}

/// The last step, where nothing above sufficed (a reply this large has no precedent): the
/// message and the error stay, every other large field goes.
fn leave_out(r: &mut Reply, where_in_full: &str) -> String {
    r.user_message = clip(&r.user_message, 4000);
    r.context = None;
    r.session = None;
    r.questions = None;
    r.gaps = None;
    r.sprints = None;
    r.role_prompt = r.role_prompt.as_deref().map(|p| clip(p, 8000));
    format!(
        "context, session, questions, gaps and sprints: left out; `status` and {where_in_full} have them"
    )
}

#[cfg(test)]
mod tests {
    use super::super::Context;
    use super::*;

    fn context() -> Context {
        Context {
            specs_dir: ".claude/specs/t".into(),
            documents: Vec::new(),
            previous_draft: None,
            scope: None,
        }
    }

    #[test]
    fn wide_questions_and_sprint_titles_within_their_limits_still_fit() {
        use crate::workflow::session::{Question, Sprint};
        let wide = "😀".repeat(1000);
        let r = Reply {
            user_message: format!("Please answer: {}", wide.repeat(10)),
            questions: Some(
                (0..10)
                    .map(|i| Question {
                        id: format!("q{i}"),
                        question: wide.clone(),
                        context: Some(wide.clone()),
                        round: 1,
                    })
                    .collect(),
            ),
            sprints: Some(
                (1..=20)
                    .map(|number| Sprint {
                        number,
                        title: "é".repeat(5000),
                    })
                    .collect(),
            ),
            ..Reply::default()
        };
        assert!(size(&r) > 150_000);
        let b = bound(r);
        assert!(size(&b) <= MAX_REPLY_BYTES, "{}", size(&b));
        assert_eq!(
            b.questions.as_ref().map(Vec::len),
            Some(10),
            "cut, not dropped"
        );
    }

    #[test]
    fn a_small_reply_is_left_as_it_is() {
        let r = Reply {
            user_message: "hello".into(),
            role_prompt: Some("p".repeat(20_000)),
            context: Some(context()),
            ..Reply::default()
        };
        assert_eq!(bound(r.clone()), r);
    }

    #[test]
    fn the_largest_inputs_give_a_reply_under_the_cap_that_says_what_was_cut() {
        let r = Reply {
            session_id: Some("6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f".into()),
            user_message: "m".repeat(10_000),
            role_prompt: Some("p".repeat(900_000)),
            context: Some(context()),
            questions: Some(Vec::new()),
            gaps: Some((0..100).map(|i| format!("gap {i}")).collect()),
            notices: Some((0..30).map(|i| format!("notice {i}")).collect()),
            ..Reply::default()
        };
        assert!(size(&r) > 900_000);
        let b = bound(r);
        assert!(size(&b) <= MAX_REPLY_BYTES, "{}", size(&b));
        assert_eq!(b.gaps.as_ref().unwrap().len(), MAX_ITEMS);
        let notices = b.notices.unwrap();
        assert!(notices.len() <= MAX_ITEMS);
        let last = notices.last().unwrap();
        assert!(
            last.contains("shortened") && last.contains("gaps: the first 20 of 100"),
            "{last}"
        );
        let prompt = b.role_prompt.unwrap();
        assert!(
            prompt.contains("in full in .bmad-task/session-6f1c2d3e"),
            "the cut prompt says where the rest is"
        );
    }
}
