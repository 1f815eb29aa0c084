//! The confined-file layer: a project directory and everything that touches its files.
//! Every path is relative to the project and checked before use (no `..`, no link out of
//! the project, no special files); writes are atomic (temporary file, fsync, rename); reads
//! are bounded; one lock file serialises the project's changes across processes; over
//! HTTP, the roots a call may name. Nothing here knows sessions or the workflow.

mod append;
mod beneath;
mod entries;
mod lock;
mod look;
pub(crate) mod project;
mod read;
mod roots;
mod shown;
mod staged;
mod stamp;
mod sync;
mod write;

pub use lock::{Held, DEFAULT_LOCK_WAIT, LOCK_FILE};
pub use look::{Look, Tree};
pub use project::{find_project, DefaultRoot, Project};
pub use read::{may_read_in_project, read_text, FolderTexts, ReadProblem, MAX_READ_BYTES};
pub use roots::Roots;
pub use stamp::{now_nanos, Stamp};
