//! Property checks shared by the fuzz targets. Each `check_*` function panics (which
//! libFuzzer reports as a crash) when the code under test breaks a rule it promises;
//! returning normally means every property held for that input.

pub mod args;
pub mod machine;
pub mod submission;
