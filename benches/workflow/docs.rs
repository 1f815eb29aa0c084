//! The documents the workflow submits: the example's fixtures, and the same grown to a
//! given size with varied prose (deterministic, so every run submits the same bytes).

use std::path::Path;

use serde_json::Value;

use crate::{Res, FIXTURES};

/// The eight documents the workflow submits.
#[derive(Clone)]
pub struct Docs {
    pub po_draft: String,
    pub po_final: String,
    pub architect_draft: String,
    pub architect_final: String,
    pub sprint_plan: String,
    pub dev: String,
    pub review: String,
    pub qa: String,
}

/// JSON fields that hold the document text in the fixtures.
const DOCUMENT_FIELDS: [&str; 4] = [
    "prd_draft",
    "prd_updated",
    "architecture_draft",
    "architecture_updated",
];

impl Docs {
    pub fn fixtures() -> Res<Docs> {
        let read = |name: &str| std::fs::read_to_string(Path::new(FIXTURES).join(name));
        Ok(Docs {
            po_draft: read("po-draft.json")?,
            po_final: read("po-final.json")?,
            architect_draft: read("architect-draft.json")?,
            architect_final: read("architect-final.json")?,
            sprint_plan: read("sprint-plan.md")?,
            dev: read("dev-report.md")?,
            review: read("review.md")?,
            qa: read("qa-report.md")?,
        })
    }

    /// Every document grown to about `bytes` with varied prose sections; scores,
    /// questions, sprint headings and the review status are kept.
    pub fn padded(&self, bytes: usize) -> Res<Docs> {
        let mut seed = 0;
        let mut grow = |text: &str| {
            seed += 1;
            pad(text, bytes, seed)
        };
        Ok(Docs {
            po_draft: grow(&self.po_draft)?,
            po_final: grow(&self.po_final)?,
            architect_draft: grow(&self.architect_draft)?,
            architect_final: grow(&self.architect_final)?,
            sprint_plan: grow(&self.sprint_plan)?,
            dev: grow(&self.dev)?,
            review: grow(&self.review)?,
            qa: grow(&self.qa)?,
        })
    }

    pub fn largest(&self) -> usize {
        [
            &self.po_draft,
            &self.po_final,
            &self.architect_draft,
            &self.architect_final,
            &self.sprint_plan,
            &self.dev,
            &self.review,
            &self.qa,
        ]
        .iter()
        .map(|d| d.len())
        .max()
        .unwrap_or(0)
    }
}

/// Grows a fixture to about `bytes`: inside its document field for JSON fixtures, before
/// the closing `Quality Score:`/`Review Status:` line for markdown ones.
fn pad(text: &str, bytes: usize, seed: u64) -> Res<String> {
    let missing = bytes.saturating_sub(text.len());
    let mut prose = Prose::new(seed);
    if let Ok(Value::Object(mut obj)) = serde_json::from_str::<Value>(text) {
        let field = DOCUMENT_FIELDS
            .iter()
            .find(|f| obj.get(**f).is_some_and(Value::is_string))
            .ok_or("a JSON fixture without a document field")?;
        let doc = obj[*field].as_str().unwrap_or_default().to_string();
        // JSON escapes newlines, so aim a little lower.
        let extra = prose.text(missing * 97 / 100);
        obj.insert(field.to_string(), Value::String(format!("{doc}\n{extra}")));
        return Ok(serde_json::to_string_pretty(&obj)?);
    }
    let extra = prose.text(missing);
    let closing = text
        .rfind("\nQuality Score:")
        .or_else(|| text.rfind("\nReview Status:"));
    Ok(match closing {
        Some(i) => format!("{}\n{extra}{}", &text[..i], &text[i..]),
        None => format!("{text}\n{extra}"),
    })
}

/// Deterministic, varied filler prose: sections of paragraphs and lists.
struct Prose {
    state: u64,
    section: usize,
    words: Vec<&'static str>,
}

/// The filler vocabulary, split on whitespace.
const WORDS: &str = "service changelog release maintainer repository label draft editor publisher \
    subscriber digest schedule weekly team entry merge request author reviewer approval \
    preview template section summary highlight deadline backlog storage database \
    migration index query cache latency throughput retry backoff timeout failure alert \
    metric dashboard trace log audit token permission scope secret rotation deployment \
    cluster container image pipeline build test fixture contract interface endpoint \
    payload schema version compatibility rollout rollback feature flag experiment user \
    reader email webhook queue worker batch window quota limit budget estimate risk \
    mitigation dependency owner handover runbook incident recovery backup snapshot \
    archive retention privacy consent locale timezone calendar format markdown heading \
    link anchor attachment reliable simple explicit stale fresh partial complete \
    optional required shared private public internal external manual automatic nightly \
    daily quarterly first second final early late small large quiet busy collects groups \
    publishes stores sends checks validates rejects accepts retries records reports \
    measures limits schedules renders archives notifies describes covers keeps drops the \
    a each every no one two several with without before after during for from into and \
    or but so when while if because unless";

impl Prose {
    fn new(seed: u64) -> Prose {
        Prose {
            state: 0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D),
            section: 0,
            words: WORDS.split_whitespace().collect(),
        }
    }

    fn next(&mut self, below: usize) -> usize {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % below
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| {
                let i = self.next(self.words.len());
                self.words[i]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn sentence(&mut self) -> String {
        let n = 8 + self.next(13);
        let mut s = self.words(n);
        if let Some(first) = s.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        if self.next(6) == 0 {
            s.push_str(&format!(", within {} ms", 50 + self.next(950)));
        }
        s.push('.');
        s
    }

    fn section_text(&mut self) -> String {
        self.section += 1;
        let n = 2 + self.next(4);
        let title = self.words(n);
        let mut out = format!("## Appendix {}: {}\n\n", self.section, title);
        for _ in 0..2 + self.next(3) {
            let para: Vec<String> = (0..3 + self.next(4)).map(|_| self.sentence()).collect();
            out.push_str(&para.join(" "));
            out.push_str("\n\n");
        }
        if self.next(2) == 0 {
            for _ in 0..3 + self.next(4) {
                let n = 4 + self.next(8);
                out.push_str(&format!("- {}\n", self.words(n)));
            }
            out.push('\n');
        }
        out
    }

    /// About `bytes` of prose (whole sections, so a little more).
    fn text(&mut self, bytes: usize) -> String {
        let mut out = String::with_capacity(bytes + 2048);
        while out.len() < bytes {
            out.push_str(&self.section_text());
        }
        out
    }
}
