//! `submit`: reading and scoring the candidates, choosing one, and moving the stage on
//! as [`rules::after_scored`] and [`rules::after_plain`] say (docs/spec.md §4–§5); and what
//! the reply points out of a submission: results of engines the stage does not ask for,
//! JSON keys nothing reads, a document sent again as the human rejected it.

use std::collections::{BTreeMap, BTreeSet};

use super::super::action::Action;
use super::super::quality;
use super::super::rules::{self, AfterPlain, AfterScored, ScoredRound};
use super::super::sections;
use super::super::session::{Question, ScoreSource, Session, Sprint, StageRecord, State};
use super::super::stage::{Engine, Marker, QualityGate, Stage};
use super::super::submission::{self, Submission, SubmissionError};
use super::{kept_words, Step, WorkflowError};
use crate::code::clip;

/// Questions one submission may ask, and the characters of each.
pub const MAX_QUESTIONS: usize = 10;
pub const MAX_QUESTION_CHARS: usize = 1000;
/// Gaps one submission may list, and the characters of each.
pub const MAX_GAPS: usize = 20;
pub const MAX_GAP_CHARS: usize = 500;

/// Refuses a submission whose questions or gaps are more, or longer, than a human reads:
/// they are shown to the human and kept in the session, so junk must not get in.
fn check_lists(field: &'static str, s: &Submission) -> Result<(), WorkflowError> {
    let too_large = |problem: String| WorkflowError::SubmissionTooLarge { field, problem };
    if s.questions.len() > MAX_QUESTIONS {
        return Err(too_large(format!(
            "{} questions, more than the {MAX_QUESTIONS} one submission may ask; ask the ones whose answers change the document most",
            s.questions.len()
        )));
    }
    if s.gaps.len() > MAX_GAPS {
        return Err(too_large(format!(
            "{} gaps, more than the {MAX_GAPS} one submission may list; name the most important",
            s.gaps.len()
        )));
    }
    let long = |text: &str, max: usize| text.chars().nth(max).is_some();
    if let Some(i) = s.questions.iter().position(|q| {
        long(&q.question, MAX_QUESTION_CHARS)
            || q.context
                .as_deref()
                .is_some_and(|c| long(c, MAX_QUESTION_CHARS))
    }) {
        return Err(too_large(format!(
            "question {} (or its context) is longer than {MAX_QUESTION_CHARS} characters; ask it in a sentence or two",
            i + 1
        )));
    }
    if let Some(i) = s.gaps.iter().position(|g| long(g, MAX_GAP_CHARS)) {
        return Err(too_large(format!(
            "gap {} is longer than {MAX_GAP_CHARS} characters; name it in a sentence",
            i + 1
        )));
    }
    Ok(())
}

/// One engine's parsed submission with its score.
struct Candidate {
    engine: Engine,
    submission: Submission,
    score: u32,
    source: ScoreSource,
}

/// The results given, without the blank ones, in claude, codex order.
fn present(claude: Option<String>, codex: Option<String>) -> Vec<(Engine, String)> {
    [(Engine::Claude, claude), (Engine::Codex, codex)]
        .into_iter()
        .filter_map(|(e, t)| t.filter(|t| !t.trim().is_empty()).map(|t| (e, t)))
        .collect()
}

impl Step<'_> {
    /// A submission at `stage` (`given`: the stage the caller named): its results, or the
    /// file `document_file` names as its document, read by the stage's gate.
    pub(super) fn submit(
        &mut self,
        stage: Stage,
        given: Option<Stage>,
        claude: Option<String>,
        codex: Option<String>,
        document_file: Option<String>,
    ) -> Result<(), WorkflowError> {
        // A parent whose stories built every sprint: this is the final QA.
        let stage = self.stories_done(stage, given)?;
        if let Some(given) = given.filter(|g| *g != stage) {
            return Err(WorkflowError::StageMismatch {
                given,
                current: stage,
            });
        }
        let claude = match document_file {
            Some(path) => Some(self.file_draft(stage, &path, claude, &codex)?),
            None => claude,
        };
        match stage.gate() {
            QualityGate::Score(gate) => self.submit_scored(stage, gate, claude, codex)?,
            QualityGate::Approval | QualityGate::Verdict { .. } | QualityGate::None => {
                self.submit_plain(stage, claude, codex)?
            }
        }
        // Every submission says where its document came from: one the model writes after
        // a file's draft is the model's again, and the file it replaces is named.
        let drafted = self.drafted.take();
        let rec = self.session.record_mut(stage);
        rec.rewrites = match drafted {
            Some(_) => None,
            None => rec.from_file.take().map(Box::new).or(rec.rewrites.take()),
        };
        rec.from_file = drafted;
        if let Some(file) = &rec.rewrites {
            let said = rewritten(file);
            self.facts.notices.push(said);
        }
        Ok(())
    }

    /// Reads and scores one result; an empty document is refused.
    fn candidate(stage: Stage, engine: Engine, text: &str) -> Result<Candidate, WorkflowError> {
        let _reading = crate::fault::doing(
            "read",
            format!(
                "read and score the submission (`{}`)",
                engine.result_field()
            ),
        );
        let submission = submission::read(stage, text).map_err(|e| match e {
            SubmissionError::Empty => WorkflowError::EmptyDocument {
                field: engine.result_field(),
            },
            // Name the keys this stage reads, and the ones the author used instead.
            SubmissionError::NoDocumentField { keys } => WorkflowError::NoDocumentField {
                field: engine.result_field(),
                stage,
                accepted: submission::document_fields(stage)
                    .map(String::from)
                    .collect(),
                seen: keys.iter().take(5).map(|k| clip(k, 40)).collect(),
            },
        })?;
        check_lists(engine.result_field(), &submission)?;
        let (score, source) = match submission.reported_score {
            Some(s) => (s, ScoreSource::Reported),
            None => (
                quality::estimate(stage, &submission.document),
                ScoreSource::Estimated,
            ),
        };
        Ok(Candidate {
            engine,
            submission,
            score,
            source,
        })
    }

    fn store_raw(&mut self, stage: Stage, engine: Engine, text: String) {
        let r = self.write_temp(stage, engine.result_field(), text);
        let rec = self.session.record_mut(stage);
        match engine {
            Engine::Claude => rec.claude_result_ref = Some(r),
            Engine::Codex => rec.codex_result_ref = Some(r),
        }
    }

    /// What the server's check finds of the sections of `stage`'s `document`: the stage's
    /// own, or, where the BMAD method installed a template for the stage's document, that
    /// template's, whichever the document is nearer.
    fn sections_found(&self, stage: Stage, document: &str) -> sections::Found {
        let own = sections::check(stage.sections(), document);
        let template = (self.documents.template.as_deref())
            .filter(|t| !t.is_empty())
            .map(|t| sections::check_shaped(t, document));
        sections::nearer(own, template)
    }

    pub(super) fn submit_scored(
        &mut self,
        stage: Stage,
        gate: u32,
        claude: Option<String>,
        codex: Option<String>,
    ) -> Result<(), WorkflowError> {
        let given = present(claude, codex);
        if given.is_empty() {
            return Err(self.missing_scored_result(stage));
        }
        let mut candidates = self.take_candidates(stage, given)?;
        // The server's own check of each document: a score passes the gate only when
        // every section the stage requires is there, with content.
        let found: Vec<sections::Found> = candidates
            .iter()
            .map(|c| self.sections_found(stage, &c.submission.document))
            .collect();
        let chosen_at = choose(&candidates, &found, gate);
        let rec = self.session.record(stage);
        let new_questions = new_questions(rec, &candidates[chosen_at].submission);
        let answered_before = !rec.answers.is_empty();
        let chosen = &mut candidates[chosen_at];
        let gaps = distinct(&chosen.submission.gaps);
        let (score, source, engine) = (chosen.score, chosen.source, chosen.engine);
        // Documents can be megabytes: the chosen one is moved, not copied.
        let document = std::mem::take(&mut chosen.submission.document);
        let unreadable = chosen.submission.unreadable_score.take();
        self.trace(stage, &document);
        self.take_assumptions(stage, &document);
        if let Some(v) = &unreadable {
            self.facts.notices.push(format!(
                "The stated quality score \"{v}\" is not a number from 0 to 100, so the server estimated the score instead."
            ));
        }
        self.notice_unchanged(stage, &document);

        let found = found.into_iter().nth(chosen_at).unwrap_or_default();
        let complete = found.complete();
        let passed = score >= gate && complete;
        let rec = self.session.record_mut(stage);
        rec.iteration = rec.iteration.saturating_add(1);
        if !passed {
            rec.below_gate = rec.below_gate.saturating_add(1);
        }
        rec.score = Some(score);
        rec.scores = candidates.iter().map(|c| (c.engine, c.score)).collect();
        rec.score_source = Some(source);
        rec.score_unreadable = unreadable;
        rec.chosen_engine = Some(engine);
        rec.gate_passed = Some(passed);
        rec.missing_sections = found.missing.clone();
        rec.empty_sections = found.empty.clone();
        rec.gaps = gaps;
        let next = rules::after_scored(ScoredRound {
            score,
            gate,
            complete,
            below_gate: rec.below_gate,
            answered_before,
            new_questions: !new_questions.is_empty(),
            from_file: self.drafted.is_some(),
        });
        self.move_on_scored(stage, gate, next, (source, &found), document)?;
        // Asked questions are kept whatever comes next: answered in `clarifying`, or shown
        // to the human beside the decision (past the round cap, or beside a passing score
        // once the round cap is reached).
        self.session
            .record_mut(stage)
            .questions
            .extend(new_questions);
        self.session.current_state = next.state();
        Ok(())
    }

    /// The refusal of a scored submission without a result. Every result given is scored
    /// (docs/spec.md §4.1), so either field will do; the session's own engines are named
    /// first.
    fn missing_scored_result(&self, stage: Stage) -> WorkflowError {
        let mut engines = self.session.engines_for(stage);
        for e in [Engine::Claude, Engine::Codex] {
            if !engines.contains(&e) {
                engines.push(e);
            }
        }
        WorkflowError::MissingResult {
            stage,
            fields: engines.into_iter().map(Engine::result_field).collect(),
        }
    }

    /// Reads every result given (all of them before anything is queued for writing), says
    /// what does not fit, and keeps each raw result; a result kept from an earlier round
    /// of an engine that did not submit now would read as part of this round, so its
    /// reference goes.
    fn take_candidates(
        &mut self,
        stage: Stage,
        given: Vec<(Engine, String)>,
    ) -> Result<Vec<Candidate>, WorkflowError> {
        let engines: Vec<Engine> = given.iter().map(|(e, _)| *e).collect();
        self.notice_engines(stage, &engines);
        let candidates = given
            .iter()
            .map(|(engine, text)| Self::candidate(stage, *engine, text))
            .collect::<Result<Vec<_>, _>>()?;
        for c in &candidates {
            self.notice_unread(c);
        }
        let rec = self.session.record_mut(stage);
        if !engines.contains(&Engine::Claude) {
            rec.claude_result_ref = None;
        }
        if !engines.contains(&Engine::Codex) {
            rec.codex_result_ref = None;
        }
        for (engine, text) in given {
            self.store_raw(stage, engine, text);
        }
        Ok(candidates)
    }

    /// Where the scored round leads: the document saved as the stage's artifact when the
    /// human confirms it next, else kept as the draft; guidance for a revision, a notice
    /// at the round cap.
    fn move_on_scored(
        &mut self,
        stage: Stage,
        gate: u32,
        next: AfterScored,
        (source, found): (ScoreSource, &sections::Found),
        document: String,
    ) -> Result<(), WorkflowError> {
        let reported = source == ScoreSource::Reported;
        match next {
            AfterScored::DecideAtCap if self.drafted.is_some() => {
                self.facts.guidance = quality::guidance_for(stage, found, &document, reported);
                self.facts.notices.push(format!(
                    "The file's draft stays below the gate of {gate}: the human decides whether to accept it as it is (`confirm`, an accepted risk) or to send it back with feedback for a rewrite, which never replaces the file."
                ))
            }
            AfterScored::DecideAtCap => self.facts.notices.push(format!(
                "{} submissions at this stage have stayed below the gate of {gate}: the human decides now whether to confirm this draft anyway or reject it with feedback.",
                self.session.record(stage).below_gate
            )),
            AfterScored::Refine => {
                self.facts.guidance = quality::guidance_for(stage, found, &document, reported)
            }
            AfterScored::Clarify | AfterScored::Confirm => {}
        }
        if next == AfterScored::Confirm {
            self.write_artifact(stage, document)?;
            self.session.record_mut(stage).draft_ref = None;
        } else {
            let r = self.write_temp(stage, "draft", document);
            self.facts.review_path = Some(r.file_path.clone());
            self.session.record_mut(stage).draft_ref = Some(r);
        }
        Ok(())
    }

    /// A stage without a score gate takes one result: its own engine's, else the other's.
    pub(super) fn submit_plain(
        &mut self,
        stage: Stage,
        claude: Option<String>,
        codex: Option<String>,
    ) -> Result<(), WorkflowError> {
        let (engine, text) = self.plain_result(stage, claude, codex)?;
        self.notice_engines(stage, &[engine]);
        let candidate = Self::candidate(stage, engine, &text)?;
        if stage == Stage::Dev {
            crate::workflow::dev_round::check(
                self.session.record(stage).round_began.as_ref(),
                self.documents.work_tree.as_ref(),
                &candidate.submission.document,
            )?;
        }
        if stage == Stage::Review && !self.documents.review_layers.is_empty() {
            kept_words::check_layers(
                engine.result_field(),
                &self.documents.review_layers,
                &candidate.submission.document,
            )?;
        }
        self.notice_unread(&candidate);
        kept_words::check_stated_verdict(
            stage,
            engine.result_field(),
            &text,
            &candidate.submission.document,
        )?;
        self.store_raw(stage, engine, text);

        let rec = self.session.record_mut(stage);
        rec.iteration = rec.iteration.saturating_add(1);
        rec.chosen_engine = Some(engine);
        keep_stated_score(rec, stage, &candidate);
        rec.score_unreadable = candidate.submission.unreadable_score.clone();
        let document = candidate.submission.document;
        self.read_markers(stage, &document);
        self.trace(stage, &document);
        self.record_checks(stage);
        // What the track asks of this stage's document beyond the stage's own (the fix
        // track's failing test): a document without it stops at the human.
        let required = self.session.track.required_sections(stage);
        let found = sections::check(required, &document);
        let rec = self.session.record_mut(stage);
        rec.missing_sections = found.missing;
        rec.empty_sections = found.empty;
        rec.short_sections = found.short;
        // A report whose own verdict fails (`Review Status: Fail`, a QA score below the
        // gate) or states none, or a check the server ran that fails, stops at the human.
        let failure = rules::failed_verdict(stage, rec);
        rec.accepted_risk = false;
        let judged = stage.verdict().is_some() || rec.checks.is_some() || !required.is_empty();
        rec.gate_passed = judged.then_some(failure.is_none());
        self.notice_unchanged(stage, &document);
        self.write_artifact(stage, document)?;

        match rules::after_plain(stage, failure.is_some()) {
            AfterPlain::AwaitApproval => {
                self.list_artifact(stage);
                self.session.current_state = State::AwaitingApproval
            }
            AfterPlain::AwaitDecision => self.session.current_state = State::AwaitingConfirmation,
            AfterPlain::Complete => {
                self.list_artifact(stage);
                self.complete_stage(stage)
            }
        }
        Ok(())
    }

    /// The one result a stage without a score gate takes: its own engine's, else the
    /// other's (the other, given as well, is ignored, and the reply says so).
    fn plain_result(
        &mut self,
        stage: Stage,
        claude: Option<String>,
        codex: Option<String>,
    ) -> Result<(Engine, String), WorkflowError> {
        let own = self.session.engines_for(stage)[0];
        let mut given = present(claude, codex);
        // The stage's own engine first.
        given.sort_by_key(|(e, _)| *e != own);
        let mut given = given.into_iter();
        let Some(taken) = given.next() else {
            return Err(WorkflowError::MissingResult {
                stage,
                fields: vec![own.result_field(), own.other().result_field()],
            });
        };
        if given.next().is_some() {
            self.facts.notices.push(format!(
                "`{}` was ignored: stage `{stage}` is generated by {}, and `{}` was given.",
                own.other().result_field(),
                own.id(),
                own.result_field()
            ));
        }
        Ok(taken)
    }

    /// What the stage's markers say to read from its document: the plan's sprints, the
    /// review's status.
    fn read_markers(&mut self, stage: Stage, document: &str) {
        let rec = self.session.record_mut(stage);
        if stage.has_marker(Marker::Sprints) {
            rec.sprints = submission::sprints(document)
                .into_iter()
                .map(|(number, title)| Sprint { number, title })
                .collect();
            if rec.sprints.is_empty() {
                self.facts.notices.push(
                    "No sprint headings were found; the plan should use `## Sprint N: Title` headings so the human can choose a scope.".into(),
                );
            }
        }
        let rec = self.session.record_mut(stage);
        if stage.has_marker(Marker::ReviewStatus) {
            rec.review_status = submission::review_status(document);
        }
    }
}

impl Step<'_> {
    /// The result a submission naming `document_file` is read from: the file's text (as
    /// the caller read it) as the stage's document, beside the score, questions and gaps
    /// the JSON of `claude_result` gives, if any; the file is recorded as the draft's
    /// source, and said.
    pub(super) fn file_draft(
        &mut self,
        stage: Stage,
        path: &str,
        meta: Option<String>,
        codex: &Option<String>,
    ) -> Result<String, WorkflowError> {
        let refused = |problem: String| WorkflowError::DocumentFile { problem };
        let draft = self
            .documents
            .file_draft
            .as_ref()
            .filter(|d| d.path == path)
            .ok_or_else(|| refused(format!("`{}` was not read for this step", clip(path, 80))))?;
        if codex.as_deref().is_some_and(|c| !c.trim().is_empty()) {
            return Err(refused(
                "the draft is the file: leave out `codex_result` (a second model reviews it at the gate as the human does)".into(),
            ));
        }
        let text =
            submission::with_document(stage, meta.as_deref(), &draft.text).map_err(refused)?;
        let from = crate::workflow::authorship::FromFile {
            path: draft.path.clone(),
            sha256: super::sha256_hex(&draft.text),
            author: draft.author.clone(),
        };
        self.facts.notices.push(format!(
            "The draft is {}: the server read it and scored it by the same gate as any draft.",
            from.label()
        ));
        self.drafted = Some(from);
        Ok(text)
    }

    /// Says so when `document` is the one the human last sent back at `stage`.
    fn notice_unchanged(&mut self, stage: Stage, document: &str) {
        let sha = super::sha256_hex(document);
        if let Some(n) = since_rejection(&self.session, stage, &sha) {
            self.facts.notices.push(n);
        }
    }

    /// Says which keys of a result's JSON nothing reads: they are not kept.
    fn notice_unread(&mut self, c: &Candidate) {
        if c.submission.unread.is_empty() {
            return;
        }
        let keys: Vec<String> = c
            .submission
            .unread
            .iter()
            .map(|k| format!("`{k}`"))
            .collect();
        self.facts.notices.push(format!(
            "`{}` held JSON fields the server does not read, so they were not kept: {}. Put what they say in the document itself.",
            c.engine.result_field(),
            keys.join(", ")
        ));
    }

    /// Points out a submission whose engines are not the ones this stage asks for: a
    /// result of an engine the session does not run, a stage of two engines with one
    /// result, a stage of one engine done by the other.
    fn notice_engines(&mut self, stage: Stage, given: &[Engine]) {
        // A file's draft is no engine's result: there is no second one to ask for.
        if self.drafted.is_some() {
            return;
        }
        let asked = self.session.engines_for(stage);
        let runs = self.session.engines.clone();
        let list = |engines: &[Engine]| {
            engines
                .iter()
                .map(|e| e.id())
                .collect::<Vec<_>>()
                .join(" and ")
        };
        let notices = &mut self.facts.notices;
        for engine in given.iter().filter(|e| !runs.contains(e)) {
            notices.push(format!(
                "`{}` was used, though this session runs {} alone: send it only for the independent result of {}.",
                engine.result_field(),
                list(&runs),
                engine.what()
            ));
        }
        let from = |e: &Engine| given.contains(e);
        if asked.len() > 1 {
            if let [only] = given {
                let missing: Vec<Engine> = asked.iter().copied().filter(|e| !from(e)).collect();
                let fields: Vec<&str> = missing.iter().map(|e| e.result_field()).collect();
                notices.push(format!(
                    "Only `{}` was given: this session runs {} at stage `{stage}`, and no `{}` was scored. If no second model is at hand, start sessions with `engines: [\"{}\"]`; never write its result yourself.",
                    only.result_field(),
                    list(&asked),
                    fields.join("`, `"),
                    Engine::HOST
                ));
            }
        } else if let ([own], [other]) = (asked.as_slice(), given) {
            if other != own && runs.contains(other) {
                notices.push(format!(
                    "`{}` was taken in place of `{}`: this session gives stage `{stage}` to {}.",
                    other.result_field(),
                    own.result_field(),
                    own.id()
                ));
            }
        }
    }
}

/// The candidate kept: at or above the gate beats below it; then the higher score; a tie
/// keeps claude (candidates are in claude, codex order and only a strictly better one
/// replaces).
fn choose(candidates: &[Candidate], found: &[sections::Found], gate: u32) -> usize {
    let key = |i: usize| {
        let c = &candidates[i];
        (c.score >= gate && found[i].complete(), c.score)
    };
    (1..candidates.len()).fold(0, |best, i| if key(i) > key(best) { i } else { best })
}

/// The chosen candidate's questions, each text once and none asked in an earlier round,
/// numbered on from the stage's: the discarded candidate's would describe a document that
/// is not the one kept.
fn new_questions(rec: &StageRecord, chosen: &Submission) -> Vec<Question> {
    let mut seen: BTreeSet<String> = rec.questions.iter().map(|q| norm(&q.question)).collect();
    let round = rec.rounds().saturating_add(1);
    let mut next_id = rec.questions.len() + 1;
    let mut new_questions = Vec::new();
    for q in &chosen.questions {
        if seen.insert(norm(&q.question)) {
            new_questions.push(Question {
                id: format!("q{next_id}"),
                question: q.question.clone(),
                context: q.context.clone(),
                round,
            });
            next_id += 1;
        }
    }
    new_questions
}

/// The score of a stage without a score gate: none, unless its document states one that
/// means something (the QA report's); an estimate would be a number that gates nothing
/// and that readers take for a verdict.
fn keep_stated_score(rec: &mut StageRecord, stage: Stage, candidate: &Candidate) {
    let meaningful =
        stage.has_marker(Marker::QualityScore) && candidate.source == ScoreSource::Reported;
    if meaningful {
        rec.score = Some(candidate.score);
        rec.scores = BTreeMap::from([(candidate.engine, candidate.score)]);
        rec.score_source = Some(candidate.source);
    } else {
        rec.score = None;
        rec.scores.clear();
        rec.score_source = None;
    }
}

/// `items` without repeats, in their order.
fn distinct(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in items {
        if !out.contains(g) {
            out.push(g.clone());
        }
    }
    out
}

fn norm(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The notice for `sha256`, the digest of `stage`'s document, when it is the digest of the
/// document the human last rejected at that stage (docs/spec.md §3.7): the feedback was
/// not acted on, and the human is told so, in the reply's notices and beside the decision;
/// `None` otherwise.
pub(super) fn since_rejection(session: &Session, stage: Stage, sha256: &str) -> Option<String> {
    let rejected = session
        .history
        .iter()
        .rev()
        .find(|h| h.action == Action::Reject && h.stage == stage)?
        .digest
        .as_deref()?;
    (rejected == sha256).then(|| {
        format!(
            "Unchanged: the {}'s document is the same one that was sent back (SHA-256 {}…); the feedback given then was not acted on.",
            stage.role(),
            &sha256[..12.min(sha256.len())]
        )
    })
}

/// Said of a document the model wrote in place of the file `file` an earlier submission
/// took as its draft: what the human decides on is the model's document, and the file is
/// not touched.
pub(super) fn rewritten(file: &crate::workflow::authorship::FromFile) -> String {
    format!(
        "This document is the assistant's rewrite, not {}: that file is left as it is, and a decision here is on the rewrite.",
        file.origin()
    )
}
