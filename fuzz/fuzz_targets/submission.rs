//! Arbitrary bytes as a submission text: reading it, and the markers read from it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    bmad_mcp_fuzz::submission::check(&text);
});
