//! The quality score a document states in its own text (`Quality Score: N/100`): the
//! score a submission reports when its JSON gives none, and a line that is no section's
//! content.

use crate::workflow::patterns::Pattern;

/// A score stated in the text, in every form the guidance and the prompts suggest:
/// `Quality Score: N/100` (any case, Markdown bold allowed), or a line of its own that
/// reads `"quality_score": N` or `quality_score: N` (as a model writes it after a
/// Markdown document when told to "end with `"quality_score": N`").
pub(in crate::workflow) static SCORE_LINE: Pattern = Pattern::new(
    "score::SCORE_LINE",
    r#"(?im)quality[ \t]*score[ \t*_]*[:：][ \t*_]*([0-9]{1,3}(?:\.[0-9]+)?)[ \t*_]*/[ \t]*100|^[ \t>*`]*"?quality_score"?[ \t]*[:=][ \t]*([0-9]{1,3}(?:\.[0-9]+)?)[ \t]*,?[ \t`*]*\r?$"#,
);

/// The last `Quality Score: N/100` in the text (N in ASCII digits); case, markdown bold and
/// spaces are tolerated.
pub fn last_text_score(text: &str) -> Option<u32> {
    SCORE_LINE
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .filter_map(|m| m.as_str().parse::<f64>().ok())
        .filter(|n| (0.0..=100.0).contains(n))
        .map(|n| n.round() as u32)
        .last()
}
