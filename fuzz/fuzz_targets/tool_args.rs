//! Arbitrary bytes as the tool's JSON arguments.
#![no_main]

use bmad_mcp::server::args::Limits;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // Small limits, so the size checks are reached by short inputs; then the defaults.
    let small = Limits {
        result_bytes: 256,
        objective_bytes: 48,
        text_bytes: 96,
        ..Limits::default()
    };
    bmad_mcp_fuzz::args::check(&map, &small);
    bmad_mcp_fuzz::args::check(&map, &Limits::default());
});
