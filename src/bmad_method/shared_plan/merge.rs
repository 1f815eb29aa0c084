//! The three-way merge of the method's `sprint-status.yaml` that git runs as a merge
//! driver (`bmad-mcp merge-sprint-status`, installed by `bmad-mcp init`). Two clones that
//! moved different stories touch neighbouring lines and both rewrite `last_updated`, which
//! git's line merge calls a conflict. Here the `development_status` entries merge key by
//! key (a key changed on one side takes that side; changed on both, the higher status
//! wins; two statuses the method does not know are a conflict), `last_updated` takes the
//! later time, and every other line goes through git's own three-way line merge; what
//! still conflicts is left marked as git marks it.

use super::status_file::{entries, Entry};
use super::{higher, Kind};

/// The line that stands for the entries, and for `last_updated`, while the rest of the
/// file goes through git's line merge.
const ENTRIES: &str = "\u{1}bmad-mcp: development_status entries\u{1}\n";
const STAMP: &str = "\u{1}bmad-mcp: last_updated\u{1}\n";

/// One side of the merge, cut apart.
struct Side {
    /// The file with the entries and the `last_updated` line each replaced by a marker.
    rest: String,
    /// Each entry: its key, its status and its lines (the comments and blank lines
    /// before it, then its own).
    entries: Vec<(String, String, String)>,
    /// The `last_updated` line, whole.
    stamp: Option<String>,
}

fn cut(text: &str) -> Option<Side> {
    let found = entries(text);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let first = found.first()?.line;
    let last = found.last()?.line;
    let mut rest = String::new();
    let mut stamp = None;
    for (i, l) in lines.iter().enumerate() {
        if i == first {
            rest.push_str(ENTRIES);
        } else if (first..=last).contains(&i) {
            continue;
        } else if l.starts_with("last_updated:") && stamp.is_none() {
            stamp = Some(l.to_string());
            rest.push_str(STAMP);
        } else {
            rest.push_str(l);
        }
    }
    let mut out = Vec::new();
    let mut from = first;
    for Entry { line, key, status } in found {
        out.push((key, status, lines[from..=line].concat()));
        from = line + 1;
    }
    Some(Side {
        rest,
        entries: out,
        stamp,
    })
}

/// When a `last_updated` line says it was written, comparable (`None` when unreadable).
fn when(line: &str) -> Option<chrono::NaiveDateTime> {
    let v = line.split_once(':')?.1;
    let v = v.split(" #").next()?.trim().trim_matches(['"', '\'']);
    ["%m-%d-%Y %H:%M", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| chrono::NaiveDateTime::parse_from_str(v, f).ok())
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
}

/// The result of a merge: the text, and whether it holds conflicts.
pub type Merged = (String, bool);

/// Why a side cannot be merged key by key: it holds a line the merge itself stands in for
/// the entries or the stamp, which would come out as entries it never had. `None` when it
/// can.
pub fn refused(text: &str) -> Option<&'static str> {
    [ENTRIES, STAMP]
        .iter()
        .any(|m| text.contains(m.trim_end_matches('\n')))
        .then_some("it holds a line the merge driver uses as its own marker")
}

/// Merges `ours` and `theirs` from `base`; `None` when git cannot be run. A side that is
/// not a status file (no entries) is merged by git's line merge alone. The caller refuses
/// a side [`refused`] names first.
pub fn merge(base: &str, ours: &str, theirs: &str, marker_size: usize) -> Option<Merged> {
    let (Some(o), Some(t)) = (cut(ours), cut(theirs)) else {
        return crate::git::merge_text(ours, base, theirs, marker_size);
    };
    let b = cut(base);
    let base_rest = b.as_ref().map_or(base.to_string(), |b| b.rest.clone());
    let base_entries = b.map(|b| b.entries).unwrap_or_default();
    let (rest, mut conflicted) = crate::git::merge_text(&o.rest, &base_rest, &t.rest, marker_size)?;
    let (block, clash) = merge_entries(&base_entries, &o.entries, &t.entries, marker_size);
    conflicted |= clash;
    let stamp = match (&o.stamp, &t.stamp) {
        (Some(a), Some(b)) if when(b) > when(a) => b.clone(),
        (Some(a), _) => a.clone(),
        (None, b) => b.clone().unwrap_or_default(),
    };
    // Every marker is replaced: one inside a conflict of the other lines shows up on both
    // of its sides.
    let text = rest.replace(ENTRIES, &block).replace(STAMP, &stamp);
    Some((text, conflicted))
}

type Entries = [(String, String, String)];

/// Each key of `side` and where it is first, for lookups in constant time: a file of a
/// hundred thousand stories merges in linear time.
fn index(side: &Entries) -> std::collections::HashMap<&str, usize> {
    let mut at = std::collections::HashMap::with_capacity(side.len());
    for (i, (k, ..)) in side.iter().enumerate() {
        at.entry(k.as_str()).or_insert(i);
    }
    at
}

/// The keys in our order, with each key only theirs has right after the key it follows
/// there (it is theirs' previous key, already placed), or first.
fn order<'a>(ours: &'a Entries, theirs: &'a Entries) -> Vec<&'a str> {
    use std::collections::{HashMap, HashSet};
    let mut placed: HashSet<&str> = ours.iter().map(|e| e.0.as_str()).collect();
    // The keys that follow each placed key ("" for the front), in the order they come.
    let mut after: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut previous = "";
    for (k, ..) in theirs {
        if placed.insert(k.as_str()) {
            after.entry(previous).or_default().push(k.as_str());
        }
        previous = k.as_str();
    }
    let mut out = Vec::with_capacity(placed.len());
    // Each placed key, then what follows it, depth first; a stack, not recursion: theirs
    // may add a long run of keys.
    let mut stack: Vec<&str> = ours.iter().rev().map(|e| e.0.as_str()).collect();
    stack.extend(after.remove("").unwrap_or_default().into_iter().rev());
    let mut seen = HashSet::with_capacity(placed.len());
    while let Some(k) = stack.pop() {
        if !seen.insert(k) {
            continue;
        }
        out.push(k);
        if let Some(next) = after.remove(k) {
            stack.extend(next.into_iter().rev());
        }
    }
    out
}

/// The entries merged key by key, in our order with theirs' new keys after the key they
/// follow there; and whether one conflicts.
fn merge_entries(
    base: &Entries,
    ours: &Entries,
    theirs: &Entries,
    marker_size: usize,
) -> (String, bool) {
    let (at_base, at_ours, at_theirs) = (index(base), index(ours), index(theirs));
    let mut out = String::new();
    let mut conflicted = false;
    for k in order(ours, theirs) {
        let b = at_base.get(k).map(|i| &base[*i]);
        let (o, t) = (
            at_ours.get(k).map(|i| &ours[*i]),
            at_theirs.get(k).map(|i| &theirs[*i]),
        );
        let same_as_base = |e: &(String, String, String)| b.is_some_and(|b| b.1 == e.1);
        match (o, t) {
            (Some(o), Some(t)) => match pick(k, b.map(|b| b.1.as_str()), o, t) {
                Some(e) => out.push_str(&e.2),
                None => {
                    conflicted = true;
                    let m = |c: char| c.to_string().repeat(marker_size.clamp(7, 64));
                    out.push_str(&format!(
                        "{} ours\n{}{}\n{}{} theirs\n",
                        m('<'),
                        o.2,
                        m('='),
                        t.2,
                        m('>')
                    ));
                }
            },
            // Gone on one side: gone, unless the other side changed it since the base.
            (Some(e), None) | (None, Some(e)) if b.is_none() || !same_as_base(e) => {
                out.push_str(&e.2)
            }
            _ => {}
        }
    }
    (out, conflicted)
}

/// The side an entry on both sides takes: the one that changed it from the base, else the
/// higher status; `None` when neither status is one the method knows and they differ.
fn pick<'a>(
    key: &str,
    base: Option<&str>,
    o: &'a (String, String, String),
    t: &'a (String, String, String),
) -> Option<&'a (String, String, String)> {
    if o.1 == t.1 || base == Some(t.1.as_str()) {
        return Some(o);
    }
    if base == Some(o.1.as_str()) {
        return Some(t);
    }
    let kind = Kind::of(key)?;
    if kind.rank(&o.1).is_none() && kind.rank(&t.1).is_none() {
        return None;
    }
    Some(if higher(kind, &o.1, &t.1) == o.1 {
        o
    } else {
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "# kept\ngenerated: 11-27-2026 10:00\nlast_updated: 11-27-2026 10:00\nproject: shop\n\ndevelopment_status:\n  epic-1: backlog\n  1-1-api: backlog\n  1-2-web: backlog\n  epic-1-retrospective: optional\n\naction_items:\n  - epic: 0\n    action: keep this\n    status: open\n";

    #[test]
    fn two_clones_moving_different_stories_merge_without_conflict() {
        let ours = BASE
            .replace(
                "last_updated: 11-27-2026 10:00",
                "last_updated: 11-27-2026 12:00",
            )
            .replace("epic-1: backlog", "epic-1: in-progress")
            .replace("1-1-api: backlog", "1-1-api: done");
        let theirs = BASE
            .replace(
                "last_updated: 11-27-2026 10:00",
                "last_updated: 11-27-2026 11:30",
            )
            .replace("epic-1: backlog", "epic-1: in-progress")
            .replace("1-2-web: backlog", "1-2-web: review")
            .replace(
                "    status: open\n",
                "    status: open\n  - epic: 1\n    action: new one\n    status: open\n",
            );
        let (text, conflicted) = merge(BASE, &ours, &theirs, 7).unwrap();
        assert!(!conflicted, "{text}");
        for line in [
            "last_updated: 11-27-2026 12:00\n",
            "  epic-1: in-progress\n",
            "  1-1-api: done\n",
            "  1-2-web: review\n",
            "    action: keep this\n",
            "    action: new one\n",
            "# kept\n",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        // The later time wins whichever side it is on.
        let (text, _) = merge(BASE, &theirs, &ours, 7).unwrap();
        assert!(text.contains("last_updated: 11-27-2026 12:00\n"), "{text}");
    }

    #[test]
    fn both_sides_moving_one_story_keep_the_higher_and_new_keys_are_kept() {
        let ours = BASE.replace("1-1-api: backlog", "1-1-api: review");
        let theirs = BASE
            .replace("1-1-api: backlog", "1-1-api: in-progress")
            .replace(
                "  epic-1-retrospective: optional\n",
                "  epic-1-retrospective: optional\n  epic-2: backlog\n  2-1-x: backlog\n",
            );
        let (text, conflicted) = merge(BASE, &ours, &theirs, 7).unwrap();
        assert!(!conflicted, "{text}");
        assert!(text.contains("  1-1-api: review\n  1-2-web"), "{text}");
        assert!(
            text.contains("optional\n  epic-2: backlog\n  2-1-x: backlog\n"),
            "{text}"
        );
        // A deliberate repair on one side (lower than the base) is that side's change.
        let fixed = BASE.replace("1-2-web: backlog", "1-2-web: done");
        let repaired = fixed.replace("1-2-web: done", "1-2-web: review");
        let (text, _) = merge(&fixed, &repaired, &fixed, 7).unwrap();
        assert!(text.contains("1-2-web: review"), "{text}");
    }

    #[test]
    fn what_truly_conflicts_is_left_marked() {
        let ours = BASE
            .replace("1-1-api: backlog", "1-1-api: odd")
            .replace("project: shop", "project: ours");
        let theirs = BASE
            .replace("1-1-api: backlog", "1-1-api: strange")
            .replace("project: shop", "project: theirs");
        let (text, conflicted) = merge(BASE, &ours, &theirs, 7).unwrap();
        assert!(conflicted);
        assert!(
            text.contains(
                "<<<<<<< ours\n  1-1-api: odd\n=======\n  1-1-api: strange\n>>>>>>> theirs\n"
            ),
            "{text}"
        );
        assert!(text.contains("<<<<<<< ours\nproject: ours\n"), "{text}");
    }

    /// A status of 100,000 stories, two clones each moving a third of them and adding keys
    /// of their own: merged key by key in linear time (the figure is printed; the bound is
    /// generous for a debug build on a loaded machine, a quadratic merge takes minutes).
    #[test]
    fn a_hundred_thousand_keys_merge_in_linear_time() {
        const KEYS: usize = 100_000;
        let side = |moved: usize, status: &str, added: &str| {
            let mut s = String::from("generated: 11-27-2026 10:00\nlast_updated: 11-27-2026 10:00\nproject: p\n\ndevelopment_status:\n");
            for i in 0..KEYS {
                let st = if i % 3 == moved { status } else { "backlog" };
                s.push_str(&format!("  1-{i}-story-{i}: {st}\n"));
                if !added.is_empty() && i % 10 == 0 {
                    s.push_str(&format!("  1-{i}-{added}: backlog\n"));
                }
            }
            s
        };
        let base = side(9, "", "");
        let ours = side(0, "done", "");
        let theirs = side(1, "review", "x");
        let started = std::time::Instant::now();
        let (text, conflicted) = merge(&base, &ours, &theirs, 7).unwrap();
        let took = started.elapsed();
        println!("merge of {KEYS} keys (and {} added): {took:?}", KEYS / 10);
        assert!(!conflicted);
        assert_eq!(text.lines().count(), 5 + KEYS + KEYS / 10, "every key once");
        assert!(text.contains("  1-3-story-3: done\n  1-4-story-4: review\n"));
        assert!(text.contains("  1-30-story-30: done\n  1-30-x: backlog\n"));
        assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    }
}
