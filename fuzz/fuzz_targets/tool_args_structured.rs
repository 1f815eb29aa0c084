//! Argument objects built from the tool's field names (structure-aware).
#![no_main]

use bmad_mcp_fuzz::args::ArgsInput;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ArgsInput| {
    let (map, limits) = input.build();
    bmad_mcp_fuzz::args::check(&map, &limits);
});
