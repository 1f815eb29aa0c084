//! A session file restored to an older version (`git checkout HEAD -- .` in the middle of
//! a task, a revert): its own drafts and answers, each named by the time it was written,
//! are newer than the session says it last changed. The rounds and decisions since are
//! not in it; git still has them. Said, never repaired by guess.

use crate::files::Project;
use crate::workflow::session::Session;

/// What a reply says when `session` is older than its own files under
/// `.bmad-task/temp/<id>/`: how many are newer, the newest, and how to get the lost
/// version back. `None` when none is newer (or they cannot be read).
pub fn went_back(project: &Project, session: &Session) -> Option<String> {
    let dir = project.path(&format!(".bmad-task/temp/{}", session.session_id));
    let stamp_of_session = stamp(&session.updated_at)?;
    let mut newer: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let at = name.rsplit_once('_')?.1.split('.').next()?;
            // To the millisecond, as the session's time: the files a step writes carry
            // that step's own time, which is the session's then.
            let ms = at.get(..18)?;
            (ms > stamp_of_session.as_str()).then(|| at.to_string())
        })
        .collect();
    if newer.is_empty() {
        return None;
    }
    newer.sort();
    let rel = super::session_rel(&session.session_id);
    Some(format!(
        "{rel} is older than {} of this task's own files in .bmad-task/temp/{}/ (the newest written {}; the session says it last changed {}): it was restored from an older version, and the rounds and decisions since are not in it. Find the newer version with `git log --oneline -- {rel}`, restore it with `git checkout <commit> -- {rel}`, then check `status`.",
        newer.len(),
        session.session_id,
        newer.last().map(String::as_str).unwrap_or(""),
        session.updated_at
    ))
}

/// An RFC 3339 time as the temp files' names write it (`20261126T080817903574Z`), to the
/// millisecond, for comparison.
fn stamp(rfc3339: &str) -> Option<String> {
    let t = chrono::DateTime::parse_from_rfc3339(rfc3339).ok()?;
    Some(
        t.with_timezone(&chrono::Utc)
            .format("%Y%m%dT%H%M%S%3f")
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_after_the_sessions_last_change_says_it_went_back() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::shared(dir.path()).unwrap();
        let mut s = Session::test().build();
        s.updated_at = "2026-11-26T08:00:00.000Z".into();
        let temp = dir.path().join(format!(".bmad-task/temp/{}", s.session_id));
        std::fs::create_dir_all(&temp).unwrap();
        std::fs::write(temp.join("po_draft_20261126T075959000000Z.md"), "").unwrap();
        std::fs::write(temp.join("po_answers_20261126T080000000999Z.json"), "").unwrap();
        assert_eq!(
            went_back(&project, &s),
            None,
            "older files, and the step's own, say nothing"
        );
        std::fs::write(temp.join("po_claude_result_20261126T080512345678Z.md"), "").unwrap();
        let said = went_back(&project, &s).unwrap();
        assert!(
            said.contains("older than 1 of this task's own files"),
            "{said}"
        );
        assert!(
            said.contains("the newest written 20261126T080512345678Z"),
            "{said}"
        );
        assert!(
            said.contains("git log --oneline -- .bmad-task/session-"),
            "{said}"
        );
    }
}
