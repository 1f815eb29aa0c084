//! The npm packages `./scripts/test` pins into `target/npm/<name>/` (the other agent
//! hosts, the MCP Inspector, the BMAD method's installer): where a test finds one, or why
//! it is skipped. A package that could not be installed has its reason in
//! `target/npm/<name>.skipped`; a test that needs it prints that reason and returns, and
//! `./scripts/test` lists every such file after the run and fails it unless skips are
//! allowed (`BMAD_ALLOW_SKIPPED=1`), so a skip never reads as a pass. A package neither
//! installed nor skipped is a failure: the run did not install what it pins.

use std::path::{Path, PathBuf};

use super::ROOT;

/// `target/npm/<package>/node_modules/.bin/<bin>`, or `None` after printing why the
/// package is skipped; `what` names what the caller would have checked with it.
pub fn package_bin(package: &str, bin: &str, what: &str) -> Option<PathBuf> {
    let npm = Path::new(ROOT).join("target/npm");
    if let Ok(reason) = std::fs::read_to_string(npm.join(format!("{package}.skipped"))) {
        let line = format!(
            "SKIPPED: {what}: {package} is not installed: {}",
            reason.trim()
        );
        println!("{line}");
        eprintln!("{line}");
        return None;
    }
    let path = npm.join(package).join("node_modules/.bin").join(bin);
    assert!(
        path.is_file(),
        "{} is missing: run ./scripts/test, which installs {package} (or writes {package}.skipped)",
        path.display()
    );
    Some(path)
}
