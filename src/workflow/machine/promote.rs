//! `promote`: the human decides a task outgrew its track (`quick` → `full`). The session
//! keeps every record and document written; it starts the new track at its first stage,
//! whose role reads what was written as an earlier document (docs/spec.md §18.1).

use super::super::session::{StageStatus, State};
use super::super::stage::Stage;
use super::Step;

impl Step<'_> {
    pub(super) fn promote(&mut self, stage: Stage, note: Option<String>) {
        let from = self.session.track;
        // Legal only on a track that promotes (the rules).
        let Some(to) = from.promotes_to() else {
            return;
        };
        let written: Vec<String> = from
            .stages()
            .iter()
            .filter_map(|s| {
                let rec = self.session.record(*s);
                rec.final_result_ref
                    .as_ref()
                    .or(rec.draft_ref.as_ref())
                    .map(|r| format!("{} ({})", r.file_path, s.role()))
            })
            .collect();
        let first = to.first();
        let kept = if written.is_empty() {
            "nothing was written yet".to_string()
        } else {
            format!("what was written is kept: {}", written.join(", "))
        };
        let why = note
            .as_deref()
            .map(|n| format!(" The user's reason: {n}"))
            .unwrap_or_default();
        let said = format!(
            "The user promoted this task from the {from} track to the {to} track at the {stage} stage; {kept}. Build on it rather than starting over.{why}"
        );
        self.session.record_mut(first).notes.push(said.clone());
        if self.session.record(stage).status == StageStatus::InProgress && stage != first {
            self.session.record_mut(stage).status = StageStatus::Pending;
        }
        self.session.track = to;
        self.session.current_stage = first;
        self.session.current_state = State::Generating;
        self.session.record_mut(first).status = StageStatus::InProgress;
        self.facts.notices.push(said);
        self.words = note;
    }
}
