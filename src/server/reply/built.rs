//! What the completed workflow built: the sprints of the approved scope, and those left
//! out of it with how to build them later (docs/spec.md §10.7).

use crate::error::clip;
use crate::workflow::rules::{failed_checks, failed_verdict, unwritten_sections};
use crate::workflow::session::Sprint;
use crate::workflow::stage::{Marker, Verdict};
use crate::workflow::{DecidedBy, Session, Stage};

/// The most sprints a list names; the plan has them all.
const MAX_NAMED: usize = 20;

fn named(sprints: &[&Sprint]) -> String {
    let mut out: Vec<String> = sprints
        .iter()
        .take(MAX_NAMED)
        .map(|s| format!("{} ({})", s.number, clip(&s.title, 60)))
        .collect();
    if sprints.len() > MAX_NAMED {
        out.push(format!("and {} more", sprints.len() - MAX_NAMED));
    }
    out.join(", ")
}

/// " Sprints built: …. Left out of scope: …; to build them later, …" for the completion
/// message: the sprint plan as approved, read from the session.
pub(super) fn scope_built(s: &Session) -> String {
    if let Some(link) = &s.story {
        return format!(
            " Sprint built: {} ({}), a story of task `{}`.",
            link.sprint,
            clip(&link.sprint_title, 60),
            link.parent_task
        );
    }
    if !s.track.contains(Stage::approval()) {
        return String::new();
    }
    let plan = s.record(Stage::approval());
    let path = s.artifact_path(Stage::approval());
    if plan.sprints.is_empty() {
        return format!(" Built: the whole plan ({path} names no sprints).");
    }
    let scope = plan.scope_sprints.clone().unwrap_or_default();
    let (built, left): (Vec<&Sprint>, Vec<&Sprint>) = plan
        .sprints
        .iter()
        .partition(|sp| scope.contains(&sp.number));
    if left.is_empty() {
        return format!(
            " Sprints built: all {} of the plan: {}.",
            built.len(),
            named(&built)
        );
    }
    let numbers: Vec<String> = left.iter().map(|sp| sp.number.to_string()).collect();
    let which = if left.len() == 1 { "sprint" } else { "sprints" };
    format!(
        " Sprints built: {}. Left out of scope: {}; to build them later, start a new BMAD task whose objective names them and the plan, e.g. “Build {which} {} of the plan in {path}”.",
        if built.is_empty() {
            "none".to_string()
        } else {
            named(&built)
        },
        named(&left),
        clip(&numbers.join(", "), 200)
    )
}

/// `completed`: the review's status, the QA score (each with the risk the human accepted,
/// when its verdict failed), and the list of documents.
pub(super) fn completed(s: &Session) -> String {
    let status = review_status(s).unwrap_or_else(|| "not stated".into());
    let qa = qa_score(s).unwrap_or_else(|| "not stated".into());
    let checks = checks_run(s).unwrap_or_default();
    // A short track has no QA; its end says which track it was.
    let (track, qa) = match s.track {
        crate::workflow::Track::Full => (String::new(), format!(" QA score: {qa}.")),
        t if t.contains(Stage::Qa) => (format!(" ({t} track)"), format!(" QA score: {qa}.")),
        t => (format!(" ({t} track)"), String::new()),
    };
    // The intent verdict (and the trace, where the PRD gives ids), read from the stage
    // that closes the track: QA, or review in a light track.
    let trace = format!(" {}", crate::workflow::trace::closing_line(s));
    // The documents by name, under the task's folder when they all lie in it.
    let dir = format!("{}/", s.specs_dir());
    let inside = !s.artifacts.is_empty() && s.artifacts.iter().all(|a| a.starts_with(&dir));
    let mut msg = format!(
        "The workflow is complete{track}. Review status: {status}.{qa}{checks}{}{}{trace} Documents{}:\n",
        other_risks(s),
        scope_built(s),
        if inside { format!(", in {dir}") } else { String::new() }
    );
    for a in &s.artifacts {
        let name = if inside { &a[dir.len()..] } else { a };
        msg.push_str(&format!("- {name}\n"));
    }
    msg.truncate(msg.trim_end().len());
    msg
}

/// Who accepted the risk of `st`'s failed verdict, as the decision was recorded; `None`
/// when no risk was accepted there.
fn risk_accepted(s: &Session, st: Stage) -> Option<&'static str> {
    Some(match s.risk_accepted_by(st)? {
        Some(DecidedBy::Human) => "risk accepted by the human",
        Some(DecidedBy::Host) => "risk accepted, as the host asserted",
        None => "risk accepted",
    })
}

/// The review's status as stated, with the risk accepted when it failed; for a parent
/// whose sprints were reviewed as stories, as their reviews stated it.
fn review_status(s: &Session) -> Option<String> {
    let st = Stage::ALL
        .into_iter()
        .find(|st| st.has_marker(Marker::ReviewStatus))?;
    let Some(status) = s.record(st).review_status.clone() else {
        return stories_review(s);
    };
    let failed = failed_verdict(st, s.record(st)).is_some();
    Some(match risk_accepted(s, st) {
        Some(risk) if failed => format!("{status} ({risk})"),
        _ => status,
    })
}

/// What the stories' reviews stated: one status when every story stated the same ("Pass,
/// in each story: sprints 1, 2"), else each sprint's; `None` when none stated one.
fn stories_review(s: &Session) -> Option<String> {
    let said = |o: &crate::workflow::story::StoryState| {
        o.review_status
            .as_deref()
            .map_or_else(|| "not stated".to_string(), |r| clip(r, 80))
    };
    let first = s.stories.iter().find_map(|o| o.review_status.as_deref())?;
    let numbers: Vec<String> = s.stories.iter().map(|o| o.sprint.to_string()).collect();
    if s.stories
        .iter()
        .all(|o| o.review_status.as_deref() == Some(first))
    {
        let which = if numbers.len() == 1 {
            "sprint"
        } else {
            "sprints"
        };
        return Some(format!(
            "{}, in each story's review ({which} {})",
            clip(first, 80),
            numbers.join(", ")
        ));
    }
    let each: Vec<String> = s
        .stories
        .iter()
        .map(|o| format!("sprint {} {}", o.sprint, said(o)))
        .collect();
    Some(format!("by story: {}", each.join("; ")))
}

/// The QA score, with the gate and the risk accepted when it stayed below it.
fn qa_score(s: &Session) -> Option<String> {
    let st = Stage::ALL
        .into_iter()
        .rev()
        .find(|st| st.has_marker(Marker::QualityScore))?;
    let n = s.record(st).score?;
    let failed = failed_verdict(st, s.record(st)).is_some();
    Some(match st.verdict() {
        Some(Verdict::QualityScore(gate)) if failed => {
            let risk = risk_accepted(s, st)
                .map(|r| format!(", {r}"))
                .unwrap_or_default();
            format!("{n}/100 (below the gate of {gate}{risk})")
        }
        _ => format!("{n}/100"),
    })
}

/// The risks accepted that the review's status, the QA score and the last checks do not
/// say: a report without the sections its track requires (the fix track's failing test),
/// checks that failed at an earlier stage than the last to run them.
fn other_risks(s: &Session) -> String {
    let last_checks = last_checked(s);
    s.track
        .stages()
        .iter()
        .filter_map(|&st| {
            let risk = risk_accepted(s, st)?;
            let rec = s.record(st);
            let checks = failed_checks(st, rec).filter(|_| Some(st) != last_checks);
            let what: Vec<String> = [unwritten_sections(st, rec), checks]
                .into_iter()
                .flatten()
                .collect();
            (!what.is_empty()).then(|| {
                format!(
                    " At the {} ({st}): {} ({risk}).",
                    st.role(),
                    what.join("; ")
                )
            })
        })
        .collect()
}

/// The last stage whose checks ran, which [`checks_run`] reports.
fn last_checked(s: &Session) -> Option<Stage> {
    Stage::ALL
        .into_iter()
        .rev()
        .find(|st| st.runs_checks() && s.record(*st).checks.is_some())
}

/// The checks the server ran before QA completed, when the project names any.
fn checks_run(s: &Session) -> Option<String> {
    let st = last_checked(s)?;
    let run = s.record(st).checks.as_ref()?;
    Some(match run.failure() {
        None => format!(" Checks: all {} passed.", run.checks.len()),
        Some(f) => format!(
            " Checks: {f} ({}).",
            risk_accepted(s, st).unwrap_or("risk accepted")
        ),
    })
}
