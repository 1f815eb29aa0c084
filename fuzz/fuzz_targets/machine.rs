//! A fuzzed sequence of commands and file edits applied to one in-memory session.
#![no_main]

use bmad_mcp_fuzz::machine::MachineInput;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: MachineInput| {
    bmad_mcp_fuzz::machine::run(&input);
});
