//! The per-stage records of a session: one per stage of the stage table, whatever the
//! track, stored as a JSON object keyed by stage id in the table's order. Reading refuses
//! a missing, unknown or repeated stage (a short track's stage a file written before it
//! existed lacks reads as pending), so no lookup by stage can miss.

use serde::{Deserialize, Serialize};

use super::session::{Question, StageRecord};
use super::stage::Stage;
use super::track::Track;

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
    /// Questions of this stage that have no answer yet.
    pub fn open_questions(&self) -> Vec<Question> {
        self.questions
            .iter()
            .filter(|q| !self.answers.contains_key(&q.id))
            .cloned()
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
