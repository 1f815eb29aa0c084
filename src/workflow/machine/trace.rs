//! Reading a stage's document for the requirement ids it defines, names or verifies, and
//! what the reply and the human are told of them (docs/traceability.md). The ids are read
//! whenever the document is taken (submitted, confirmed or approved as it is on disk), so
//! the matrix always follows the saved documents.

use super::super::stage::Stage;
use super::super::trace::matrix::{self, Matrix, Part};
use super::super::trace::{documents, few, matrix_path, Intent, Met, Open};
use super::Step;

impl Step<'_> {
    /// [`Step::trace`] of a document the human decides on as it is on disk now, without
    /// repeating what its submission already said; the closing report's verdict stays the
    /// one its submission stated.
    pub(super) fn retrace(&mut self, stage: Stage, document: &str) {
        if self.part(stage) != Part::Verifies {
            let said = self.facts.notices.len();
            self.trace(stage, document);
            self.facts.notices.truncate(said);
        }
    }

    /// What `stage`'s document says of the trace in this session: the table's part, except
    /// that the last stage of a light track (review) closes it with the intent check.
    fn part(&self, stage: Stage) -> Part {
        super::super::trace::part_in(&self.session, stage)
    }

    /// Reads `document` of `stage` for its ids into the stage's record, and says what
    /// needs attention in the reply's notices.
    pub(super) fn trace(&mut self, stage: Stage, document: &str) {
        let part = self.part(stage);
        let rec = &mut self.session.record_mut(stage).trace;
        match part {
            Part::Defines => {
                let (defined, problems) = documents::prd(document);
                rec.defined = defined;
                rec.problems = problems;
                if !rec.problems.is_empty() {
                    let list = rec.problems.join("; ");
                    self.facts.notices.push(format!("Requirement ids: {list}. Give each functional requirement an `FR-n` id, each non-functional one `NFR-n` and each acceptance criterion `AC-n`, at the start of its line: the later stages name them, and the closing report gives a result per id."));
                }
            }
            Part::Designs | Part::Implements => rec.covers = documents::covers(document),
            Part::Plans => {
                rec.sprints = documents::plan(document);
                // The headings (a sprint's, or a story's within it) that name each id.
                rec.covers = documents::covers(document);
            }
            Part::Verifies => {
                rec.results = documents::results(document);
                rec.intent = documents::intent(document);
                rec.resolves = documents::resolved_lessons(document);
                rec.open.clear();
                rec.accepted.clear();
            }
            Part::None => return,
        }
        let Some(m) = Matrix::of(&self.session) else {
            return self.close_without_ids(part, stage);
        };
        let mine: Vec<String> = m
            .unknown
            .iter()
            .filter(|(st, _)| *st == stage)
            .map(|(_, id)| id.clone())
            .collect();
        let mut notes = Vec::new();
        if !mine.is_empty() {
            notes.push(format!(
                "names ids the PRD does not define: {}",
                few(&mine, 10)
            ));
        }
        match part {
            Part::Designs if m.designed_any => {
                let none = m.undesigned();
                if !none.is_empty() {
                    notes.push(format!("names no component for {}", few(&none, 10)));
                }
            }
            Part::Designs | Part::Implements
                if mine.is_empty() && self.session.record(stage).trace.covers.is_empty() =>
            {
                notes
                    .push("names no requirement id on a `Covers:` (or `Implemented:`) line".into());
            }
            Part::Plans => {
                let none = m.unplanned();
                if !m.planned_any {
                    notes.push("names no requirement id on a `Covers:` line under its sprints, so every requirement counts as in scope".into());
                } else if !none.is_empty() {
                    notes.push(format!("plans {} in no sprint", few(&none, 10)));
                }
            }
            _ => {}
        }
        let verdict = (part == Part::Verifies).then(|| m.open());
        if !notes.is_empty() {
            self.facts.notices.push(format!(
                "Traceability: the {} document {}.",
                stage.role(),
                notes.join("; ")
            ));
        }
        if let Some(open) = verdict {
            self.close(stage, open);
        }
    }

    /// No ids to give results for (a light track, a PRD without ids): the closing report's
    /// intent verdict alone closes the task, and leaving it out stops as a failing one.
    fn close_without_ids(&mut self, part: Part, stage: Stage) {
        if part == Part::Verifies {
            self.close(stage, Vec::new());
        }
    }

    /// The closing report: the in-scope ids without a passing result stop at the human,
    /// and so does an intent verdict other than met, or none.
    fn close(&mut self, stage: Stage, open: Vec<Open>) {
        let rec = &mut self.session.record_mut(stage).trace;
        rec.open = open;
        rec.accepted.clear();
        if rec.intent.is_none() {
            rec.intent = Some(Intent {
                verdict: Met::NotStated,
                unmet: String::new(),
            });
        }
        self.write_matrix();
    }

    /// Writes the whole matrix, one row per id, beside the stage documents.
    fn write_matrix(&mut self) {
        let path = matrix_path(&self.session);
        if let Some(m) = Matrix::of(&self.session) {
            let table = matrix::markdown(&m, &m.summary(Some(path.clone())));
            self.write(path, table);
        }
    }

    /// After the approval: the requirements the approved scope leaves out, and those no
    /// sprint plans, shown (they do not stop anything).
    pub(super) fn note_scope(&mut self) {
        let Some(m) = Matrix::of(&self.session) else {
            return;
        };
        let (left, none) = (m.left_out(), m.unplanned());
        if !left.is_empty() {
            self.facts.notices.push(format!(
                "Left out of the approved scope: {}.",
                few(&left, 10)
            ));
        }
        if !none.is_empty() {
            self.facts
                .notices
                .push(format!("Planned in no sprint: {}.", few(&none, 10)));
        }
    }

    /// The human accepts the closing report as it is: each open id is recorded as an
    /// accepted risk, one by one.
    pub(super) fn accept_open(&mut self, stage: Stage) {
        if self.part(stage) != Part::Verifies {
            return;
        }
        let rec = &mut self.session.record_mut(stage).trace;
        if rec.open.is_empty() {
            return;
        }
        rec.accepted = rec.open.clone();
        let named: Vec<String> = rec
            .accepted
            .iter()
            .map(|o| format!("{} ({})", o.id, o.why))
            .collect();
        self.facts.notices.push(format!(
            "Accepted as a risk, requirement by requirement: {}.",
            few(&named, 10)
        ));
        // The matrix file says so too.
        self.write_matrix();
    }

    /// The PRD's ids, recorded with the decision that confirms it.
    pub(super) fn note_confirmed_ids(&mut self, stage: Stage) {
        if matrix::part(stage) != Part::Defines {
            return;
        }
        let ids: Vec<&str> = self
            .session
            .record(stage)
            .trace
            .defined
            .iter()
            .map(|r| r.id.as_str())
            .collect();
        if !ids.is_empty() {
            self.facts.notices.push(format!(
                "The confirmed PRD defines {}: {}.",
                super::super::trace::count(ids.len(), "id", "ids"),
                few(&ids, 10)
            ));
        }
    }
}
