//! The JSON-RPC lines a transport vets before rmcp sees them, shared by stdio and HTTP:
//! what to do with one message (`classify`: hand it to rmcp, answer it here with an error
//! that says what is wrong, or skip it), a look at the top level of a message serde_json
//! refused or that is too long to parse (`scan`), and the repair of lone UTF-16 surrogate
//! escapes (`surrogates`).

pub mod classify;
pub mod scan;
pub mod surrogates;

use classify::Verdict;

/// The JSON-RPC error a message (one line's bytes, or one POST body) gets from the
/// transport itself, when it is no request rmcp can serve (see `classify`); `None` when it
/// is for rmcp, or is answered by nobody.
pub fn answer_for(message: &[u8]) -> Option<Vec<u8>> {
    match classify::line(message) {
        Verdict::Answer(line) => Some(line),
        Verdict::Forward(_) | Verdict::Skip(_) => None,
    }
}
