//! What a stage's work was measured against, in a git repository: for a document, the
//! commit checked out when it was saved and the files of the project that differed from
//! that commit then (uncommitted work the stage saw, new files among it), which a later
//! reply compares the project with to name the files changed since (docs/spec.md,
//! "Drift"); for a round of development, the project's files it is measured from, summed up
//! ([`WorkTree`], read by `round`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Basis {
    /// The commit checked out (`git rev-parse HEAD`).
    pub commit: String,
    /// Files that differed from `commit` when the document was saved, each with git's
    /// blob id of its content then (`null`: deleted). Empty for a clean tree.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub uncommitted: BTreeMap<String, Option<String>>,
    /// More files differed than are kept: a drift report may name files that changed
    /// before the document was saved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// The project's files against a commit, in a git repository: the files that differ from
/// it (changed, deleted, or new and not ignored by git), summed up in one digest so that a
/// session stays small however much was uncommitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkTree {
    /// The commit the files are compared with (the one checked out when they were read).
    pub commit: String,
    /// How many of the project's files differed from it (the server's own files left out).
    pub files: usize,
    /// SHA-256 over each such file's path (its bytes) and content id (git's blob id; for a
    /// file too large to hash, its size and time; a deleted file: none), in the order of
    /// their paths.
    pub digest: String,
}
