//! How the `bmad-mcp` binary is linked, for a smaller resident set (issue 26 item 5,
//! BENCHMARKS.md "The server's resident set"). On Linux:
//!
//! * The binary stays position-independent: `-no-pie` kept 0.3–0.45 MiB less resident (no
//!   relocations read and no read-only pointers fixed up at start), but fixed the address
//!   of the binary's own code for a server a network peer can reach; not taken
//!   (BENCHMARKS.md, "The server's resident set").
//! * With rustc's own LLD (the default for x86_64-unknown-linux-gnu since Rust 1.90, when
//!   no other linker is configured): the functions listed in `link/hot-symbols.txt` (those
//!   a workflow runs; `scripts/hot-symbols` regenerates it) are laid out together. The
//!   kernel maps code 64 KiB around every page touched, so used and unused code
//!   interleaved kept nearly the whole binary resident. A name not found (another
//!   toolchain, a dependency's other version or features) is skipped: the layout is then
//!   the linker's default.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=link/hot-symbols.txt");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let list = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link")
        .join("hot-symbols.txt");
    let list = list.display().to_string();
    if links_with_rust_lld() && list.is_ascii() && !list.contains([',', ' ']) {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={list}");
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the binary is linked by rustc's own LLD: the target's default since Rust 1.90,
/// unless a linker or linker flavour is configured.
fn links_with_rust_lld() -> bool {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    if env("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("RUSTC_LINKER").is_some()
        || env("CARGO_ENCODED_RUSTFLAGS").contains("link")
    {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // "rustc 1.95.0 (…)": the minor version.
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
