//! The project's documents a step may read, read by the caller before the step and
//! handed to the machine as a value: the machine does no I/O, and nothing it calls
//! reaches back into the layers that do.

use std::collections::BTreeMap;

use crate::workflow::dev_round::WorkTree;
use crate::workflow::session::Session;
use crate::workflow::story;

/// A file as the caller found it: `Ok(None)` when absent, `Err(why)` when it exists but
/// cannot be used as text (a directory, not UTF-8, unreadable, a link out of the area).
pub type FileText = Result<Option<String>, String>;

/// The documents of one step, by path relative to the project directory, and for a
/// submission at `dev` the project's files as git shows them now (and at `review`, whether
/// it is reviewed in layers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Documents {
    files: BTreeMap<String, FileText>,
    /// The project's files against the commit the round of development began from
    /// (`None`: not read for this step, or git could not say).
    pub work_tree: Option<WorkTree>,
    /// The file a submission named as its document (`document_file`), as the caller read
    /// it, checked to be a document the stage may take.
    pub file_draft: Option<FileDraft>,
    /// For a submission at `review`: the sections the review must give, one per layer of
    /// the review as a BMAD method install configures it (its switch on); none otherwise.
    pub review_layers: Vec<String>,
    /// For a submission at a stage whose document an installed BMAD method writes in a
    /// template of its own (the PRD, the architecture spine): that template's sections,
    /// which a document written in it is checked for instead of the stage's own.
    pub template: Option<Vec<crate::workflow::sections::Shaped>>,
}

/// A file read as a submission's document: its path, its text, and who last changed it as
/// git and the work tree show it (the caller asks them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDraft {
    pub path: String,
    pub text: String,
    pub author: Option<String>,
}

impl Documents {
    /// Every file a step on `session` may read: for the stage it is at (and the final QA
    /// a parent whose stories are built turns to), the stage document, the pending draft
    /// and the raw results the document was taken from. The caller reads each and
    /// [`Documents::insert`]s what it found.
    pub fn wanted(session: &Session) -> Vec<String> {
        let mut paths = Vec::new();
        let mut stages = vec![session.current_stage];
        stages.push(story::prompt_stage(session));
        stages.dedup();
        for stage in stages {
            paths.push(session.artifact_path(stage));
            let rec = session.record(stage);
            let refs = [
                &rec.draft_ref,
                &rec.claude_result_ref,
                &rec.codex_result_ref,
            ];
            paths.extend(refs.into_iter().flatten().map(|r| r.file_path.clone()));
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// The method's file the current stage's draft was taken from (`document_file`), outside
    /// the server's folders: the caller reads it as the submission did, and the human is told
    /// whether it is still the text taken ([`Documents::taken`]).
    pub fn taken_from(session: &Session) -> Option<String> {
        let rec = session.record(session.current_stage);
        rec.from_file.as_ref().map(|f| f.path.clone())
    }

    /// The file [`Documents::taken_from`] names as it was read; `None` when it was not read.
    pub fn taken(&self, path: &str) -> Option<&FileText> {
        self.files.get(path)
    }

    pub fn insert(&mut self, path: String, read: FileText) {
        self.files.insert(path, read);
    }

    /// The file at `path` as it was read. A path [`Documents::wanted`] did not name is a
    /// bug in this module, reported as unreadable rather than guessed at.
    pub fn read(&self, path: &str) -> FileText {
        match self.files.get(path) {
            Some(read) => read.clone(),
            None => {
                debug_assert!(false, "{path} was read by a step but not wanted for it");
                Err("was not read for this step".into())
            }
        }
    }
}
