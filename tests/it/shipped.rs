//! What the suite tests is what users run: no dependency of the server is built with a
//! feature in its tests that the shipped binary lacks (cargo unifies a package's
//! dev-dependencies into its own build for tests), and the server binary the suite starts
//! is the one `BMAD_MCP_BIN` names when it is set.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each package of the server's dependency tree (`cargo tree -p bmad-mcp`) with the
/// features cargo resolves for it, following the `edges` given.
fn features(edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        // This machine's target: the crates of others are not downloaded by a build.
        .args(["tree", "--locked", "--offline", "-p", "bmad-mcp"])
        .args(["-e", edges, "--prefix", "none", "-f", "{p}|{f}"])
        .current_dir(harness::root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -e {edges}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((package, list)) = line.split_once('|') else {
            continue;
        };
        let set = packages.entry(package.trim().to_string()).or_default();
        set.extend(
            list.split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_string),
        );
    }
    packages
}

/// The added features, by package, of `with` over `without`, for the packages of
/// `without`.
fn added(
    without: &BTreeMap<String, BTreeSet<String>>,
    with: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<String> {
    without
        .iter()
        .filter_map(|(package, shipped)| {
            let tested = with.get(package)?;
            let extra: Vec<&String> = tested.difference(shipped).collect();
            (!extra.is_empty()).then(|| format!("{package}: {extra:?}"))
        })
        .collect()
}

#[test]
fn no_dev_dependency_adds_a_feature_to_a_dependency_of_the_server() {
    let shipped = features("normal,build");
    let tested = features("normal,build,dev");
    assert!(
        shipped.keys().any(|p| p.starts_with("regex ")),
        "the server's tree was read: {:?}",
        shipped.keys().collect::<Vec<_>>()
    );
    let added = added(&shipped, &tested);
    assert!(
        added.is_empty(),
        "the server's unit tests would build with features its binary lacks (move the dev-dependency to tests/Cargo.toml):\n{}",
        added.join("\n")
    );
}

#[test]
fn a_feature_added_for_tests_is_found() {
    // The comparison above, on a made-up pair: the check can fail.
    let shipped = BTreeMap::from([("regex v1".to_string(), BTreeSet::from(["std".to_string()]))]);
    let mut tested = shipped.clone();
    tested
        .get_mut("regex v1")
        .unwrap()
        .insert("unicode-perl".to_string());
    assert_eq!(added(&shipped, &tested), ["regex v1: [\"unicode-perl\"]"]);
}

#[test]
fn the_server_started_is_the_one_bmad_mcp_bin_names() {
    let started = std::path::Path::new(crate::support::server_path());
    match std::env::var_os(harness::BIN_VARIABLE) {
        Some(named) => assert_eq!(started, std::fs::canonicalize(named).unwrap()),
        // Built by the harness: the server package alone, beside this test's profile.
        None => assert_eq!(started.file_name().unwrap(), "bmad-mcp"),
    }
    let version = Command::new(started).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("bmad-mcp "),
        "{version:?}"
    );
}
