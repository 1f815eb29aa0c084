//! The per-stage records of a session, and what each holds (its scores, documents,
//! questions, decisions' words, checks): one per stage of the stage table, whatever the
//! track, stored as a JSON object keyed by stage id in the table's order. Reading refuses
//! a missing, unknown or repeated stage (a short track's stage a file written before it
//! existed lacks reads as pending), so no lookup by stage can miss.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::content::ContentRef;
use super::evidence::CheckRun;
use super::requirement_record::Traced;
use super::stage::{Engine, Stage};
use super::track::Track;
use super::written_against::Basis;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScoreSource {
    /// The document stated its own score.
    Reported,
    /// No score was stated; the server estimated one from the document's content.
    Estimated,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Question {
    pub id: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The clarification round (1, 2, …) in which the question was asked.
    pub round: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Sprint {
    pub number: u32,
    pub title: String,
}

/// A stage document as written to `.claude/specs/<task_name>/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Artifact {
    pub path: String,
    pub sha256: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct StageRecord {
    pub status: StageStatus,
    /// Submissions accepted in this stage.
    pub iteration: u32,
    /// Scored submissions of this stage that stayed below the gate: what the round cap
    /// counts (a passing draft the human sent back is not one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below_gate: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u32>,
    /// The score of each engine's candidate in the latest submission.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scores: BTreeMap<Engine, u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_source: Option<ScoreSource>,
    /// A score the latest submission stated that is not a number from 0 to 100 (`high`),
    /// as written (clipped): named as unreadable, never as "no score stated".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_unreadable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_passed: Option<bool>,
    /// Sections the stage requires that the server's own check did not find in the
    /// latest scored submission (a score alone does not pass the gate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_sections: Vec<String>,
    /// … and those it found with nothing under their heading.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty_sections: Vec<String>,
    /// … and those there and filled that do not show what they must (the fix track's
    /// failing test, by name, failing before the fix), each with what it lacks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub short_sections: Vec<String>,
    /// The engine whose candidate was kept in the latest submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_engine: Option<Engine>,
    /// The file the latest submission's document was taken from (`document_file`), when
    /// the model did not write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_file: Option<super::authorship::FromFile>,
    /// The file an earlier submission of this stage took as its draft, when a document the
    /// model wrote has replaced it since: the file itself is left as it is, and the human
    /// is told that what they decide on is not it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // Boxed: every session holds a record of each stage inline, on the stack too.
    pub rewrites: Option<Box<super::authorship::FromFile>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude_result_ref: Option<ContentRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_result_ref: Option<ContentRef>,
    /// The stage document as saved in `.claude/specs/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_result_ref: Option<ContentRef>,
    /// The latest document that did not (yet) become the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_ref: Option<ContentRef>,
    #[serde(default)]
    pub questions: Vec<Question>,
    #[serde(default)]
    pub answers: BTreeMap<String, String>,
    /// Who gave each answer (the human in a channel, or the host), by question id; an
    /// answer kept before authors were recorded has none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answered_by: BTreeMap<String, super::authorship::Author>,
    /// What the author assumed for a question nobody answered (`Assumed q3: …` in a later
    /// draft), by id: shown to the human to confirm or correct, no longer as open.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub assumed: BTreeMap<String, String>,
    #[serde(default)]
    pub gaps: Vec<String>,
    /// Every rejection's feedback, oldest first, each with who wrote it: the decider's
    /// words, and for a report that sent the work back, the server's pointer to it.
    #[serde(default)]
    pub feedback: Vec<super::authorship::Said>,
    /// The human's words from decisions on other stages that this stage's role prompt
    /// shows, oldest first: a note given while accepting an earlier stage, the cause of
    /// a send-back that made this stage run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each report of this stage that sent the work back, kept per round in a file of its
    /// own (`<report>.round-<n>.md`), which the send-back's feedback names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_reports: Vec<ContentRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<bool>,
    /// The approval scope as the human gave it (`all`, `sprint 1`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The sprint numbers the approved scope names, all of them sprints of the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_sprints: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sprints: Vec<Sprint>,
    /// `Pass`, `Pass with Risk` or `Fail`, as the review stated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_status: Option<String>,
    /// The human confirmed a document whose own verdict failed (`Review Status: Fail`, a
    /// QA score below the gate): the risk is theirs, and the workflow went on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accepted_risk: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// The requirement ids this stage's document defines, names or verifies, as the server
    /// read them (docs/traceability.md).
    #[serde(default, skip_serializing_if = "Traced::is_empty")]
    pub trace: Traced,
    /// The project's checks as the server ran them on the latest submission (dev, QA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<CheckRun>,
    /// In a git repository: the commit the stage document was written against, when it was
    /// saved (what the drift warning compares with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_against: Option<Basis>,
    /// In a git repository, at `dev`: the project's files the round of development is
    /// measured from (when the session first turned to the developer, else at the latest
    /// accepted submission there), which a report claiming changes must have moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_began: Option<super::written_against::WorkTree>,
}

/// One record per stage, every stage present. Stored as a JSON object keyed by stage id in
/// the table's order (`.stages.po.score` for jq); reading refuses a file that lacks a
/// stage of the full track, names an unknown one or names one twice.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageRecords([StageRecord; Stage::ALL.len()]);

impl StageRecords {
    pub fn get(&self, stage: Stage) -> &StageRecord {
        &self.0[stage.index()]
    }

    pub fn get_mut(&mut self, stage: Stage) -> &mut StageRecord {
        &mut self.0[stage.index()]
    }

    pub fn iter(&self) -> impl Iterator<Item = (Stage, &StageRecord)> {
        Stage::ALL.into_iter().zip(self.0.iter())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut StageRecord> {
        self.0.iter_mut()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl StageRecord {
    /// Questions of this stage that have no answer yet, nor an assumption of the author.
    pub fn open_questions(&self) -> Vec<Question> {
        self.questions
            .iter()
            .filter(|q| !self.answers.contains_key(&q.id) && !self.assumed.contains_key(&q.id))
            .cloned()
            .collect()
    }

    /// Questions the author answered with an assumption and the human has not answered:
    /// each with what was assumed, for the human to confirm or correct.
    pub fn assumed_questions(&self) -> Vec<(Question, String)> {
        self.questions
            .iter()
            .filter(|q| !self.answers.contains_key(&q.id))
            .filter_map(|q| Some((q.clone(), self.assumed.get(&q.id)?.clone())))
            .collect()
    }

    pub fn rounds(&self) -> u32 {
        self.questions.iter().map(|q| q.round).max().unwrap_or(0)
    }
}

impl Serialize for StageRecords {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (stage, rec) in self.iter() {
            map.serialize_entry(&stage, rec)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StageRecords {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = StageRecords;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "an object with one record per stage (spec, bug, po, architect, sm, dev, review, qa)",
                )
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<StageRecords, A::Error> {
                use serde::de::Error;
                let mut slots: [Option<StageRecord>; Stage::ALL.len()] = Default::default();
                while let Some(key) = map.next_key::<String>()? {
                    let stage = Stage::parse(&key).ok_or_else(|| {
                        let known: Vec<&str> = Stage::ALL.iter().map(|s| s.id()).collect();
                        A::Error::custom(format!(
                            "unknown stage `{key}`, expected one of {}",
                            known.join(", ")
                        ))
                    })?;
                    let slot = &mut slots[stage.index()];
                    if slot.is_some() {
                        return Err(A::Error::custom(format!("stage `{stage}` is given twice")));
                    }
                    *slot = Some(map.next_value()?);
                }
                let mut out = StageRecords::default();
                for (stage, slot) in Stage::ALL.into_iter().zip(slots) {
                    *out.get_mut(stage) = match slot {
                        Some(rec) => rec,
                        // Files written before the short tracks' stages existed.
                        None if !Track::Full.contains(stage) => StageRecord::default(),
                        None => {
                            return Err(A::Error::custom(format!("stage `{stage}` is missing")))
                        }
                    };
                }
                Ok(out)
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}
