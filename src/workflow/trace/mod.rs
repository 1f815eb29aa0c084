//! Traceability (docs/traceability.md): the ids the PRD gives its requirements and
//! acceptance criteria, the ids each later document names (the architecture's components,
//! the plan's sprints, the developer's report, the closing report's result per id), and the
//! matrix built from them, which the closing gate reads. Pure: the documents come in as
//! text, the findings go out as values stored in each stage's record.

pub mod documents;
pub mod ids;
pub mod matrix;
mod summary;

pub use super::requirement_record::{Intent, Met, Open, Outcome, Requirement, TestResult, Traced};
pub use matrix::{Matrix, Row};
pub use summary::Summary;

/// The file the whole matrix is written to, beside the stage documents, when the closing
/// report is submitted.
pub fn matrix_path(s: &crate::workflow::Session) -> String {
    format!("{}/traceability.md", s.specs_dir())
}

/// The compact matrix of `s`, when its PRD defines ids; it names the matrix file once the
/// closing report wrote it.
pub fn summary(s: &crate::workflow::Session) -> Option<Summary> {
    let m = Matrix::of(s)?;
    let closing = s.track.last();
    let written = s.record(closing).iteration > 0;
    Some(m.summary(written.then(|| matrix_path(s))))
}

/// What the final message says of the trace: the compact matrix, or where the PRD has no
/// ids, the intent verdict alone.
pub fn closing_line(s: &crate::workflow::Session) -> String {
    if let Some(summary) = summary(s) {
        return summary.line();
    }
    let intent = s
        .record(s.track.last())
        .trace
        .intent
        .as_ref()
        .map(Intent::describe)
        .unwrap_or_else(|| "Intent: not stated".into());
    if light(s) {
        // A light track has no PRD: its review states the intent alone.
        return format!("{intent}.");
    }
    format!("{intent}. Trace: the PRD gives its requirements no ids.")
}

/// Whether `s` runs a light track (`quick`, `fix`), which ends in review without a PRD.
fn light(s: &crate::workflow::Session) -> bool {
    !s.track.contains(crate::workflow::Stage::Qa)
}

/// What `stage`'s document says of the trace in `s`: the stage table's part, except that
/// the last stage of a light track (its review) closes the track with the intent check.
pub fn part_in(s: &crate::workflow::Session, stage: crate::workflow::Stage) -> matrix::Part {
    if light(s) && s.track.is_last(stage) {
        matrix::Part::Verifies
    } else {
        matrix::part(stage)
    }
}

/// `1 requirement`, `3 requirements`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Up to `max` items joined with `, `, then `and N more`: every list of ids a message shows
/// stays short for a PRD of any size.
pub fn few<T: AsRef<str>>(items: &[T], max: usize) -> String {
    at_most(items, max).join(", ")
}

/// Up to `max` items, then one saying how many more there are.
pub fn at_most<T: AsRef<str>>(items: &[T], max: usize) -> Vec<String> {
    let mut out: Vec<String> = items.iter().take(max).map(|s| s.as_ref().into()).collect();
    if items.len() > max {
        out.push(format!("and {} more", items.len() - max));
    }
    out
}

/// What fails at the closing stage `rec` records: its in-scope ids without a passing result,
/// and an intent verdict other than met. `None` when nothing does.
pub fn failure(rec_trace: &Traced) -> Option<String> {
    let mut parts = Vec::new();
    if !rec_trace.open.is_empty() {
        let named: Vec<String> = rec_trace
            .open
            .iter()
            .map(|o| format!("{} ({})", o.id, o.why))
            .collect();
        parts.push(format!(
            "{} in scope without a passing result: {}",
            count(named.len(), "id", "ids"),
            few(&named, 10)
        ));
    }
    if let Some(i) = rec_trace.intent.as_ref().filter(|i| i.verdict != Met::Met) {
        parts.push(i.describe());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What a role prompt's `{{trace}}` says at `stage`: the PRD's ids to name (architecture,
/// plan, development); at the closing stage, the objective as the user first wrote it, the
/// confirmed PRD's acceptance criteria, the matrix now and the ids that need a result.
///
/// `said_before`: the model had the earlier stages' prompts (a later round, not `status`),
/// so the ids an earlier stage's prompt listed are named as listed before, and the closing
/// stage's acceptance criteria are counted, not quoted: the PRD the model wrote has them.
pub fn prompt_text(
    s: &crate::workflow::Session,
    stage: crate::workflow::Stage,
    said_before: bool,
) -> String {
    use matrix::Part;
    if light(s) {
        return light_prompt_text(s, stage);
    }
    let part = matrix::part(stage);
    if part == Part::None {
        return String::new();
    }
    let Some(m) = Matrix::of(s) else {
        return match part {
            Part::Verifies => format!(
                "The objective as the user first wrote it: \"{}\"\n(The PRD gives its requirements no ids: test against the acceptance criteria it states.)",
                s.objective
            ),
            _ => "(The PRD gives its requirements no ids.)".into(),
        };
    };
    let ids: Vec<&str> = m.rows.iter().map(|r| r.req.id.as_str()).collect();
    if part != Part::Verifies && said_before && ids_listed_before(s, stage) {
        return format!("The confirmed PRD's ids ({}): as listed before", ids.len());
    }
    if part != Part::Verifies {
        return format!(
            "The confirmed PRD's ids ({}): {}",
            ids.len(),
            few(&ids, 300)
        );
    }
    let mut out = format!(
        "The objective as the user first wrote it: \"{}\"\n\nThe confirmed PRD's acceptance criteria:\n",
        s.objective
    );
    let criteria: Vec<&Row> = m.rows.iter().filter(|r| r.is_criterion()).collect();
    if said_before && !criteria.is_empty() {
        // The model wrote them in the PRD, which this prompt has it read first.
        out.push_str(&format!(
            "- the {} in the PRD, their ids among those below\n",
            criteria.len()
        ));
    } else if criteria.is_empty() {
        out.push_str("(none carries an `AC-n` id: read them in the PRD)\n");
    }
    for r in criteria.iter().take(if said_before { 0 } else { 50 }) {
        out.push_str(&format!("- {}: {}\n", r.req.id, r.req.text));
    }
    if criteria.len() > 50 && !said_before {
        out.push_str(&format!("- and {} more, in the PRD\n", criteria.len() - 50));
    }
    let in_scope: Vec<&str> = m
        .rows
        .iter()
        .filter(|r| r.in_scope != Some(false))
        .map(|r| r.req.id.as_str())
        .collect();
    out.push_str(&format!(
        "\nThe matrix now: {}\n\nIds in the approved scope, each needing a result ({}): {}",
        m.summary(None).line(),
        in_scope.len(),
        few(&in_scope, 300)
    ));
    out
}

/// Whether a stage of the track before `stage` lists the PRD's ids in its prompt (it
/// designs, plans or implements).
fn ids_listed_before(s: &crate::workflow::Session, stage: crate::workflow::Stage) -> bool {
    use matrix::Part;
    crate::workflow::Stage::ALL.into_iter().any(|st| {
        st < stage
            && s.track.contains(st)
            && matches!(
                matrix::part(st),
                Part::Designs | Part::Plans | Part::Implements
            )
    })
}

/// `{{trace}}` in a light track: at its last stage (review), the intent check against the
/// objective and the confirmed first document's acceptance criteria or expected behaviour;
/// nothing elsewhere.
fn light_prompt_text(s: &crate::workflow::Session, stage: crate::workflow::Stage) -> String {
    if !s.track.is_last(stage) {
        return String::new();
    }
    let first = s.track.stages()[0];
    let doc = s
        .record(first)
        .artifact
        .as_ref()
        .map(|a| format!("`{}`", a.path))
        .unwrap_or_else(|| format!("the confirmed {} document", first.id()));
    format!(
        "## Intent check\n\nThe objective as the user first wrote it: \"{}\"\n\nThis review closes the task: judge whether the change does what was asked, against that objective and the acceptance criteria (or expected behaviour) of {doc}. Add one line `Intent: met`, `Intent: partly met — <what does not>` or `Intent: not met — <what does not>`; anything but met stops at the human.",
        s.objective
    )
}
