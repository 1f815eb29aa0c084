//! How a reply says where a score came from: the author's, or the server's estimate, and
//! why (no score stated, or one that is not a number from 0 to 100).

use crate::workflow::session::{ScoreSource, StageRecord};

pub(super) fn source_word(rec: &StageRecord) -> String {
    match (rec.score_source, &rec.score_unreadable) {
        (Some(ScoreSource::Reported), _) => "reported by the author".into(),
        (Some(ScoreSource::Estimated), Some(v)) => {
            format!(
                "estimated by the server: the stated score \"{v}\" is not a number from 0 to 100"
            )
        }
        (Some(ScoreSource::Estimated), None) => {
            "estimated by the server: no score was stated".into()
        }
        (None, _) => "unscored".into(),
    }
}
