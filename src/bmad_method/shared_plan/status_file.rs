//! The method's `sprint-status.yaml`, edited as text: a status is raised in place on its
//! own line, a missing key is added beside its epic's, and `last_updated` is set; every
//! other line (other epics, comments, `action_items`, keys the server does not know) stays
//! as it was, byte for byte. A file that is not there is begun in the method's format (the
//! fields its `sprint_plan.py validate` requires). A file the server cannot read as the
//! method's mapping is left alone, and said.

use super::{higher, Kind};

/// The top-level key whose entries are the statuses.
const BLOCK: &str = "development_status";

/// One `key: status` line of `development_status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its line, counted from 0.
    pub line: usize,
    pub key: String,
    pub status: String,
}

/// The lines of a file, each with its line ending.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A line without its ending.
fn bare(line: &str) -> &str {
    line.trim_end_matches('\n').trim_end_matches('\r')
}

/// `text` without a trailing YAML comment (a `#` after a space, outside quotes).
fn uncommented(text: &str) -> &str {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &text[..i],
            _ => {}
        }
        prev = c;
    }
    text
}

fn unquoted(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// The key and the value's byte span of a `key: value` line (indented or not).
fn key_value(line: &str) -> Option<(String, std::ops::Range<usize>)> {
    let body = uncommented(bare(line));
    let trimmed = body.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
        return None;
    }
    let colon = trimmed
        .find(": ")
        .or_else(|| trimmed.strip_suffix(':').map(|t| t.len()))?;
    let key = unquoted(&trimmed[..colon]).to_string();
    let start_of_value = body.len() - trimmed.len() + colon + 1;
    let value = &body[start_of_value..];
    let lead = value.len() - value.trim_start().len();
    let span = start_of_value + lead..start_of_value + value.trim_end().len();
    Some((key, span))
}

/// The lines of the `development_status` block: the line of its key, and the end (one past
/// its last indented line).
fn block(ls: &[&str]) -> Option<(usize, usize)> {
    let head = ls.iter().position(|l| {
        !l.starts_with([' ', '\t'])
            && key_value(l).is_some_and(|(k, span)| k == BLOCK && span.is_empty())
    })?;
    let mut end = head + 1;
    for (i, l) in ls.iter().enumerate().skip(head + 1) {
        let b = bare(l);
        if b.trim().is_empty() || b.trim_start().starts_with('#') {
            continue;
        }
        if !b.starts_with([' ', '\t']) {
            break;
        }
        end = i + 1;
    }
    Some((head, end))
}

/// The entries of `development_status`, in the file's order.
pub fn entries(text: &str) -> Vec<Entry> {
    let ls = lines(text);
    let Some((head, end)) = block(&ls) else {
        return Vec::new();
    };
    (head + 1..end)
        .filter_map(|i| {
            let (key, span) = key_value(ls[i])?;
            let status = unquoted(&bare(ls[i])[span]).to_string();
            Some(Entry {
                line: i,
                key,
                status,
            })
        })
        .collect()
}

/// Why `text` is not a file the server edits: not YAML, not a mapping, or a
/// `development_status` that is not a block of `key: status` lines.
fn unusable(text: &str) -> Option<String> {
    let value: serde_norway::Value = match serde_norway::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Some(format!(
                "it is not YAML ({})",
                crate::code::clip(&e.to_string(), 160)
            ))
        }
    };
    let Some(map) = value.as_mapping() else {
        return Some("it is not a mapping".into());
    };
    match map.get(BLOCK) {
        Some(serde_norway::Value::Mapping(_)) if block(&lines(text)).is_none() => {
            Some(format!("its `{BLOCK}` is not written one key a line"))
        }
        Some(serde_norway::Value::Mapping(_)) | None => None,
        Some(_) => Some(format!("its `{BLOCK}` is not a mapping")),
    }
}

/// What a new file begins with: the fields the method's script requires.
pub struct Header<'a> {
    pub project: &'a str,
    /// The folder of the method's story files (`implementation_artifacts`).
    pub story_location: &'a str,
    /// Why the server began the file, on a comment line.
    pub begun_by: &'a str,
}

/// A new file holding `wanted` (in order), stamped `stamp`.
pub fn fresh(header: &Header, wanted: &[(String, &str)], stamp: &str) -> String {
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let mut out = format!(
        "# The BMAD method's sprint status: {}\ngenerated: {stamp}\nlast_updated: {stamp}\nproject: {}\nproject_key: NOKEY\ntracking_system: file-system\nstory_location: {}\n\n{BLOCK}:\n",
        header.begun_by.replace('\n', " "),
        quoted(header.project),
        quoted(header.story_location),
    );
    for (key, status) in wanted {
        out.push_str(&format!("  {key}: {status}\n"));
    }
    out
}

/// `text` with each of `wanted` at least at its status (a key the file lacks added beside
/// its epic's; one already higher left as it is), and `last_updated` set to `stamp` when
/// anything changed. `Ok(None)`: nothing to change. `Err`: why the file is left alone.
pub fn raise(text: &str, wanted: &[(String, &str)], stamp: &str) -> Result<Option<String>, String> {
    moved(text, wanted, stamp, false)
}

/// [`raise`], where a send-back (`sent_back`) also lowers a story the file has in `review`
/// to the `in-progress` wanted of it, as the method's own code review does when it sends
/// work back.
fn moved(
    text: &str,
    wanted: &[(String, &str)],
    stamp: &str,
    sent_back: bool,
) -> Result<Option<String>, String> {
    if let Some(why) = unusable(text) {
        return Err(why);
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut ls: Vec<String> = lines(text).into_iter().map(str::to_string).collect();
    if ls.last().is_some_and(|l| !l.ends_with('\n')) {
        ls.last_mut().unwrap().push_str(newline);
    }
    let mut changed = false;
    for (key, status) in wanted {
        let Some(kind) = Kind::of(key) else { continue };
        let refs: Vec<&str> = ls.iter().map(String::as_str).collect();
        let found = entries(&refs.concat()).into_iter().find(|e| e.key == *key);
        match found {
            Some(e) => {
                let lowered = sent_back && e.status == "review" && *status == "in-progress";
                let to = if lowered {
                    status
                } else {
                    higher(kind, &e.status, status)
                };
                if to != e.status {
                    let (_, span) = key_value(&ls[e.line]).expect("an entry's line");
                    ls[e.line].replace_range(span, to);
                    changed = true;
                }
            }
            None => {
                let at = insert_at(&mut ls, kind);
                let indent = indent_of(&ls);
                ls.insert(at, format!("{indent}{key}: {status}{newline}"));
                changed = true;
            }
        }
    }
    if !changed {
        return Ok(None);
    }
    set_last_updated(&mut ls, stamp, newline);
    Ok(Some(ls.concat()))
}

/// The indentation of the block's entries (two spaces when it has none yet).
fn indent_of(ls: &[String]) -> String {
    let refs: Vec<&str> = ls.iter().map(String::as_str).collect();
    entries(&refs.concat())
        .first()
        .map(|e| {
            let l = &ls[e.line];
            l[..l.len() - l.trim_start().len()].to_string()
        })
        .unwrap_or_else(|| "  ".into())
}

/// Where a new key of `kind` goes: an epic before its first story; a story before its
/// epic's retrospective, else after its epic's last line; a retrospective after its
/// epic's last line; a key of an epic the file lacks at the block's end. A file without
/// the block gets one at its end.
fn insert_at(ls: &mut Vec<String>, kind: Kind) -> usize {
    let refs: Vec<&str> = ls.iter().map(String::as_str).collect();
    let text = refs.concat();
    let Some((_, end)) = block(&refs) else {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        ls.push(format!("{newline}{BLOCK}:{newline}"));
        return ls.len();
    };
    let same: Vec<Entry> = entries(&text)
        .into_iter()
        .filter(|e| Kind::of(&e.key).is_some_and(|k| k.epic() == kind.epic()))
        .collect();
    let retro = same
        .iter()
        .find(|e| matches!(Kind::of(&e.key), Some(Kind::Retrospective(_))));
    match (kind, same.first(), same.last(), retro) {
        (Kind::Epic(_), Some(first), _, _) => first.line,
        (Kind::Story(_), _, _, Some(r)) => r.line,
        (_, _, Some(last), _) => last.line + 1,
        _ => end,
    }
}

/// Sets the top-level `last_updated` to `stamp` (added before `development_status` when
/// the file has none).
fn set_last_updated(ls: &mut Vec<String>, stamp: &str, newline: &str) {
    let top = |l: &String| !l.starts_with([' ', '\t']);
    for l in ls.iter_mut().filter(|l| top(l)) {
        if let Some((key, span)) = key_value(l) {
            if key == "last_updated" {
                if span.is_empty() {
                    let at = bare(l).len();
                    l.insert_str(at, &format!(" {stamp}"));
                } else {
                    l.replace_range(span, stamp);
                }
                return;
            }
        }
    }
    let refs: Vec<&str> = ls.iter().map(String::as_str).collect();
    let at = block(&refs).map_or(0, |(head, _)| head);
    ls.insert(at, format!("last_updated: {stamp}{newline}"));
}

/// The file after a change asking for `wanted` in epic `epic`: begun with `header` when
/// there is none (`text` is `None`), else raised in place (a story sent back lowered:
/// `moves`); then the epic follows its stories, `done` only with the change that closes it.
/// `Ok(None)`: nothing to change; `Err`: why the file is left alone.
pub fn update(
    text: Option<&str>,
    header: &Header,
    wanted: &[(String, &str)],
    (epic, moves): (u32, Moves),
    stamp: &str,
) -> Result<Option<String>, String> {
    let raised = match text {
        None => Some(fresh(header, wanted, stamp)),
        Some(t) => moved(t, wanted, stamp, moves.sent_back)?,
    };
    let now = raised.as_deref().or(text).unwrap_or_default();
    let follows = epic_follows(&entries(now), epic)
        .map(|s| match s {
            "done" if !moves.closes_epic => "in-progress",
            s => s,
        })
        .map(|s| raise(now, &[(super::epic_key(epic), s)], stamp))
        .transpose()?
        .flatten();
    Ok(follows.or(raised))
}

/// What a change does beyond raising its stories: sends work back (a story in `review`
/// goes back to `in-progress`), and whether it closes the epic (the task completed, its
/// final QA passed): before that an epic whose stories are all `done` stays `in-progress`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moves {
    pub sent_back: bool,
    pub closes_epic: bool,
}

/// The status the method gives epic `epic` from its stories in `entries`: `done` when
/// every story is, `in-progress` once one started; `None` while none has.
pub fn epic_follows(entries: &[Entry], epic: u32) -> Option<&'static str> {
    let stories: Vec<&Entry> = entries
        .iter()
        .filter(|e| Kind::of(&e.key) == Some(Kind::Story(epic)))
        .collect();
    let rank = |e: &&Entry| Kind::Story(epic).rank(&e.status).unwrap_or(0);
    if !stories.is_empty() && stories.iter().all(|e| rank(e) == 4) {
        Some("done")
    } else if stories.iter().any(|e| rank(e) >= 2) {
        Some("in-progress")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THEIRS: &str = "# STATUS DEFINITIONS: kept\ngenerated: 01-02-2026 10:00\nlast_updated: 01-02-2026 10:00 # touched by every write\nproject: shop\nmy_own_key: kept\n\ndevelopment_status:\n  epic-1: in-progress\n  1-1-cart: done   # shipped\n  epic-1-retrospective: optional\n\n# Action items committed during retrospectives\naction_items:\n  - epic: 1\n    action: add tests\n    status: open\n";

    fn want(pairs: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        pairs.iter().map(|(k, s)| (k.to_string(), *s)).collect()
    }

    #[test]
    fn a_new_epic_is_added_and_every_other_line_stays() {
        let w = want(&[
            ("epic-2", "backlog"),
            ("2-1-api", "backlog"),
            ("2-2-web-ui", "backlog"),
            ("epic-2-retrospective", "optional"),
        ]);
        let after = raise(THEIRS, &w, "11-27-2026 23:00").unwrap().unwrap();
        assert!(
            after.contains("last_updated: 11-27-2026 23:00 # touched by every write\n"),
            "{after}"
        );
        let kept: Vec<&str> = THEIRS
            .lines()
            .filter(|l| !l.starts_with("last_updated"))
            .collect();
        for line in kept {
            assert!(after.contains(line), "lost {line:?} in\n{after}");
        }
        let keys: Vec<String> = entries(&after).into_iter().map(|e| e.key).collect();
        assert_eq!(
            keys,
            [
                "epic-1",
                "1-1-cart",
                "epic-1-retrospective",
                "epic-2",
                "2-1-api",
                "2-2-web-ui",
                "epic-2-retrospective"
            ]
        );
        assert!(after.ends_with("    status: open\n"), "{after}");
        // Nothing more to do: the file is not touched again.
        assert_eq!(raise(&after, &w, "11-28-2026 09:00").unwrap(), None);
    }

    #[test]
    fn a_status_is_raised_in_place_never_lowered() {
        let after = raise(
            THEIRS,
            &want(&[("1-1-cart", "review"), ("epic-1", "done")]),
            "x",
        )
        .unwrap()
        .unwrap();
        assert!(
            after.contains("  1-1-cart: done   # shipped\n"),
            "never lowered: {after}"
        );
        assert!(after.contains("  epic-1: done\n"), "{after}");
        let story = raise(THEIRS, &want(&[("1-2-pay", "in-progress")]), "x")
            .unwrap()
            .unwrap();
        let keys: Vec<String> = entries(&story).into_iter().map(|e| e.key).collect();
        assert_eq!(
            keys,
            ["epic-1", "1-1-cart", "1-2-pay", "epic-1-retrospective"]
        );
    }

    #[test]
    fn a_file_that_is_not_the_methods_mapping_is_left_alone() {
        for bad in [
            "- a\n- b\n",
            "development_status: [1, 2]\n",
            "a: [\n",
            "development_status: {epic-1: done}\n",
        ] {
            assert!(
                raise(bad, &want(&[("epic-1", "done")]), "x").is_err(),
                "{bad}"
            );
        }
        let fresh = fresh(
            &Header {
                project: "shop \"x\"",
                story_location: "_bmad-output/implementation-artifacts",
                begun_by: "begun",
            },
            &want(&[("epic-1", "backlog"), ("1-1-a", "backlog")]),
            "11-27-2026 23:00",
        );
        assert!(unusable(&fresh).is_none(), "{fresh}");
        assert_eq!(entries(&fresh).len(), 2);
        let v: serde_norway::Value = serde_norway::from_str(&fresh).unwrap();
        assert_eq!(v["project"].as_str(), Some("shop \"x\""));
        assert_eq!(v["last_updated"].as_str(), Some("11-27-2026 23:00"));
    }

    #[test]
    fn a_send_back_lowers_review_and_only_the_tasks_completion_closes_the_epic() {
        let text = "development_status:\n  epic-1: in-progress\n  1-1-a: review\n  1-2-b: done\n";
        let back = want(&[("1-1-a", "in-progress"), ("1-2-b", "in-progress")]);
        let raised = raise(text, &back, "s").unwrap();
        assert_eq!(raised, None, "without a send-back nothing is lowered");
        let sent = Moves {
            sent_back: true,
            closes_epic: false,
        };
        let header = Header {
            project: "p",
            story_location: "l",
            begun_by: "b",
        };
        let after = update(Some(text), &header, &back, (1, sent), "s")
            .unwrap()
            .unwrap();
        assert!(after.contains("  1-1-a: in-progress\n"), "{after}");
        assert!(
            after.contains("  1-2-b: done\n"),
            "done is never lowered: {after}"
        );
        // Every story done: the epic waits for the change that closes it.
        let all_done = want(&[("1-1-a", "done"), ("1-2-b", "done")]);
        let after = update(Some(text), &header, &all_done, (1, Moves::default()), "s")
            .unwrap()
            .unwrap();
        assert!(after.contains("  epic-1: in-progress\n"), "{after}");
        let closing = Moves {
            sent_back: false,
            closes_epic: true,
        };
        let after = update(Some(text), &header, &all_done, (1, closing), "s")
            .unwrap()
            .unwrap();
        assert!(after.contains("  epic-1: done\n"), "{after}");
    }

    #[test]
    fn the_epic_follows_its_stories() {
        let e = |k: &str, s: &str| Entry {
            line: 0,
            key: k.into(),
            status: s.into(),
        };
        assert_eq!(
            epic_follows(&[e("1-1-a", "backlog"), e("1-2-b", "ready-for-dev")], 1),
            None
        );
        assert_eq!(
            epic_follows(&[e("1-1-a", "review"), e("1-2-b", "backlog")], 1),
            Some("in-progress")
        );
        assert_eq!(
            epic_follows(
                &[
                    e("1-1-a", "done"),
                    e("1-2-b", "done"),
                    e("2-1-c", "backlog")
                ],
                1
            ),
            Some("done")
        );
        assert_eq!(epic_follows(&[e("epic-3", "backlog")], 3), None);
    }
}
