//! Words that must not be dropped (docs/spec.md §3.9): a note given while accepting
//! ("looks good, but add X"), answers to open questions given with a `confirm`, and the
//! cause of a send-back as the stages that run again read it, each kept in the session and
//! shown to the roles it concerns; and a report's JSON `review_status`, which the server
//! does not read and so refuses when it says something else than the document (§5.5).

use std::collections::BTreeMap;

use super::super::authorship::Author;
use super::super::decision::DecidedBy;
use super::super::session::{ContentRef, StageRecord};
use super::super::stage::{Marker, QualityGate, Stage};
use super::super::submission;
use super::super::trace::at_most;
use super::{Step, WorkflowError};
use crate::code::clip;
use crate::workflow::patterns::Pattern;

/// A question's id where the human's feedback answers it: `q3: web only`, `q3 = …`,
/// `q3) …`; the answer runs to the next such id.
pub(in crate::workflow) static ANSWER_ID: Pattern = Pattern::new(
    "machine::kept_words::ANSWER_ID",
    r"(?i)(?-u:\b)(q[0-9]{1,3})[ \t]*[:=)][ \t]*",
);

/// Where the next point of the feedback begins, which ends an answer before it: a
/// numbered point (`2)` or `(2)` anywhere, `2.` at a line's start), a bullet at a line's
/// start, or a blank line. "1) q4: yes. 2) Add a requirement" answers q4 with "yes.".
pub(in crate::workflow) static NEXT_POINT: Pattern = Pattern::new(
    "machine::kept_words::NEXT_POINT",
    r"(?m)(?:^[ \t]*(?:[-*+]|[0-9]{1,2}[.)])[ \t]|[ \t]\(?[0-9]{1,2}\)[ \t]|\n[ \t]*\n)",
);

/// A draft's line that states the author's assumption for an unanswered question:
/// `Assumed q3: UTC everywhere` (also `Assumption (q3): …`, in a list or bold).
pub(in crate::workflow) static ASSUMED: Pattern = Pattern::new(
    "machine::kept_words::ASSUMED",
    r"(?im)^[ \t>*_-]*assum(?:ed|ption)[ \t*_]*\(?[ \t]*(q[0-9]{1,3})[ \t]*\)?[ \t*_]*[:=-][ \t]*(.+?)[ \t]*$",
);

/// The answers `feedback` gives by question id, for the questions of `rec` the human has
/// not answered: the reply invites answering them while sending a draft back.
pub(super) fn answers_in(feedback: &str, rec: &StageRecord) -> BTreeMap<String, String> {
    let found: Vec<(String, usize, usize)> = ANSWER_ID
        .captures_iter(feedback)
        .filter_map(|c| Some((c[1].to_lowercase(), c.get(0)?.start(), c.get(0)?.end())))
        .collect();
    let mut answers = BTreeMap::new();
    for (i, (id, _, from)) in found.iter().enumerate() {
        let to = found.get(i + 1).map_or(feedback.len(), |next| next.1);
        let to = NEXT_POINT
            .find_at(&feedback[..to], *from)
            .map_or(to, |point| point.start());
        let text = feedback[*from..to]
            .trim()
            .trim_end_matches([';', ','])
            .trim();
        let open = rec.questions.iter().any(|q| q.id == *id) && !rec.answers.contains_key(id);
        if open && !text.is_empty() {
            answers.insert(id.clone(), text.to_string());
        }
    }
    answers
}

/// Refuses answers that name no question of the stage, or that are blank.
pub(super) fn check_answers(
    rec: &StageRecord,
    answers: &BTreeMap<String, String>,
) -> Result<(), WorkflowError> {
    let open_ids = || rec.open_questions().into_iter().map(|q| q.id).collect();
    if answers.is_empty() {
        return Err(WorkflowError::NoAnswers { known: open_ids() });
    }
    let unknown: Vec<&String> = answers
        .keys()
        .filter(|k| !rec.questions.iter().any(|q| &q.id == *k))
        .collect();
    if !unknown.is_empty() {
        // Ids are the caller's text: a few, each cut short, and how many there were.
        let named: Vec<String> = unknown.iter().map(|k| clip(k, 40)).collect();
        return Err(WorkflowError::UnknownQuestions {
            unknown: at_most(&named, 5),
            known: open_ids(),
        });
    }
    if let Some((id, _)) = answers.iter().find(|(_, a)| a.trim().is_empty()) {
        return Err(WorkflowError::EmptyAnswer { id: clip(id, 40) });
    }
    Ok(())
}

/// Refuses a report whose JSON `review_status` is not the verdict its document states
/// (none, or another): the document's `Review Status:` line is the only one the server
/// reads, and a field it would otherwise pass over must not say something else unseen.
pub(super) fn check_stated_verdict(
    stage: Stage,
    field: &'static str,
    text: &str,
    document: &str,
) -> Result<(), WorkflowError> {
    if !stage.has_marker(Marker::ReviewStatus) {
        return Ok(());
    }
    let Some(value) = submission::json_field(stage, text, "review_status") else {
        return Ok(());
    };
    let given = match &value {
        serde_json::Value::String(s) => submission::review_status(&format!("Review Status: {s}")),
        _ => None,
    };
    let stated = submission::review_status(document);
    if given.is_some() && given == stated {
        return Ok(());
    }
    let shown = match (&value, given) {
        (serde_json::Value::String(s), Some(v)) if v.eq_ignore_ascii_case(s.trim()) => {
            format!("`{v}`")
        }
        (serde_json::Value::String(s), Some(v)) => format!("`{}` (read as {v})", clip(s, 40)),
        (v, _) => format!(
            "`{}`, which is none of Pass, Pass with Risk, Fail",
            clip(&v.to_string(), 40)
        ),
    };
    Err(WorkflowError::ContradictoryVerdict {
        field,
        json: shown,
        stated: match stated {
            Some(v) => format!("`Review Status: {v}`"),
            None => "missing (the document has no `Review Status:` line)".into(),
        },
    })
}

/// Refuses a review in layers that lacks a layer's section, or leaves one empty: each
/// layer's findings are the review's record of it (`No findings.` says there are none).
pub(super) fn check_layers(
    field: &'static str,
    layers: &[String],
    document: &str,
) -> Result<(), WorkflowError> {
    let found = crate::workflow::sections::check_named(layers, document);
    let lacking: Vec<String> = found
        .missing
        .iter()
        .chain(&found.empty)
        .map(|s| format!("`## {s}`"))
        .collect();
    if lacking.is_empty() {
        return Ok(());
    }
    Err(WorkflowError::LayersUnreported {
        field,
        lacking: lacking.join(", "),
    })
}

/// A text the human gave, trimmed; `None` when there is nothing in it.
pub(super) fn words(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
}

impl Step<'_> {
    /// Records answers given with a `confirm` (none: nothing to do). The document is
    /// accepted as it is, so the roles after this stage read the answers beside it.
    pub(super) fn accept_answers(
        &mut self,
        stage: Stage,
        answers: BTreeMap<String, String>,
    ) -> Result<(), WorkflowError> {
        if answers.is_empty() {
            return Ok(());
        }
        check_answers(self.session.record(stage), &answers)?;
        let author = Author::of(self.decision);
        let rec = self.session.record_mut(stage);
        for (id, a) in &answers {
            rec.answered_by.insert(id.clone(), author);
            rec.answers.insert(id.clone(), a.trim().to_string());
        }
        let lines: Vec<String> = rec
            .questions
            .iter()
            .filter(|q| answers.contains_key(&q.id))
            .map(|q| format!("{} {} Answer: {}", q.id, q.question, rec.answers[&q.id]))
            .collect();
        let ids: Vec<&str> = answers.keys().map(String::as_str).collect();
        self.facts.notices.push(format!(
            "Answers recorded with the acceptance: {}; the roles after the {} read them.",
            ids.join(", "),
            stage.role()
        ));
        let note = format!(
            "{} the {}'s open questions while accepting its document: {}",
            match self.decision.decided_by {
                DecidedBy::Human => "The user answered",
                DecidedBy::Host => "The assistant answered, for the user (the user did not confirm it in a dialog or terminal),",
            },
            stage.role(),
            lines.join(" | ")
        );
        self.note_for_later(stage, note);
        Ok(())
    }

    /// Keeps the human's note on a `confirm` or `approve` of `stage`: in the decision's
    /// history entry, and in the notes of every stage after it, whose role prompt shows it.
    pub(super) fn keep_note(&mut self, stage: Stage, note: Option<String>) {
        let Some(note) = words(note.as_deref()) else {
            return;
        };
        // The document by its name: the prompts that show the note list it under the
        // task's folder.
        let path = self.session.artifact_path(stage);
        let path = format!("`{}`", path.rsplit('/').next().unwrap_or(&path));
        // Words the host gives are the assistant's report of the user's, and marked so.
        let said = match self.decision.decided_by {
            DecidedBy::Human => "the user said",
            DecidedBy::Host => "the assistant gave as the user's words (not confirmed by the user in a dialog or terminal)",
        };
        let decided = if stage.gate() == QualityGate::Approval {
            let scope = self.session.record(stage).scope.clone();
            format!(
                "On approving {path} (scope: {}), {said}: {note}",
                scope.as_deref().unwrap_or("all")
            )
        } else {
            format!(
                "On accepting the {}'s document {path}, {said}: {note}",
                stage.role()
            )
        };
        self.note_for_later(stage, decided);
        self.facts.notices.push(match self.session.track.next(stage) {
            Some(_) => format!(
                "The note on this decision is kept in the session's history and shown to the roles after the {}.",
                stage.role()
            ),
            None => "The note on this decision is kept in the session's history.".into(),
        });
        self.words = Some(note);
    }

    fn note_for_later(&mut self, stage: Stage, note: String) {
        let track = self.session.track;
        for later in track.between(stage, track.last()) {
            self.session.record_mut(later).notes.push(note.clone());
        }
    }

    /// The report that sends the work back, kept in a file of its own for this round
    /// (`<report>.round-<n>.md` beside it), so that the next round's report does not
    /// replace what the feedback points at. Its path, or the report's own path when it
    /// cannot be read (the feedback then points there).
    /// Keeps what a draft states it assumed for the stage's questions nobody answered.
    pub(super) fn take_assumptions(&mut self, stage: Stage, document: &str) {
        let rec = self.session.record_mut(stage);
        for c in ASSUMED.captures_iter(document) {
            let id = c[1].to_lowercase();
            if rec.questions.iter().any(|q| q.id == id) && !rec.answers.contains_key(&id) {
                rec.assumed.insert(id, clip(&c[2], 500));
            }
        }
    }

    /// Takes the answers the human gave by id in the feedback of a rejection.
    pub(super) fn take_answers_from(&mut self, stage: Stage, feedback: &str) {
        let rec = self.session.record_mut(stage);
        let answers = answers_in(feedback, rec);
        if answers.is_empty() {
            return;
        }
        let ids: Vec<&str> = answers.keys().map(String::as_str).collect();
        self.facts.notices.push(format!(
            "The feedback answers {}: kept as the human's answers.",
            ids.join(", ")
        ));
        let author = Author::of(self.decision);
        let rec = self.session.record_mut(stage);
        for id in answers.keys() {
            rec.answered_by.insert(id.clone(), author);
        }
        rec.answers.extend(answers);
    }

    pub(super) fn keep_round_report(&mut self, stage: Stage, report: &str) -> String {
        let Ok(Some(text)) = self.documents.read(report) else {
            return report.to_string();
        };
        let round = self.session.record(stage).iteration.max(1);
        let file = stage.artifact_file();
        let stem = file.strip_suffix(".md").unwrap_or(file);
        let path = format!("{}/{stem}.round-{round}.md", self.session.specs_dir());
        let kept: ContentRef = self.write(path.clone(), text);
        let rec = self.session.record_mut(stage);
        rec.round_reports.retain(|r| r.file_path != path);
        rec.round_reports.push(kept);
        path
    }

    /// Tells every stage that runs again after a send-back (those after `to`, up to and
    /// including `stage`) why: the report and the human's words, which `to` itself has
    /// as its feedback.
    pub(super) fn note_send_back(&mut self, stage: Stage, to: Stage, cause: &str) {
        for again in self.session.track.between(to, stage) {
            self.session.record_mut(again).notes.push(format!(
                "This stage runs again because the work was sent back to the {} ({to}). {cause}",
                to.role()
            ));
        }
    }
}
