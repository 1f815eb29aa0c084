//! What a stage document was written against, in a git repository: the commit checked out
//! when it was saved, and the files of the project that differed from that commit then
//! (uncommitted work the stage saw). A later reply compares the project with it and names
//! the files changed since (docs/spec.md, "Drift").

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
