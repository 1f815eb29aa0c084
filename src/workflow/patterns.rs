//! A regular expression the server matches with, as a [`Pattern`]: declared beside the code that
//! uses it, listed in [`workflow::PATTERNS`](crate::workflow::PATTERNS), read by
//! [`workflow::check_patterns`](crate::workflow::check_patterns) when the binary starts, and
//! compiled on its first use. A pattern that needs a regex feature the shipped build leaves out
//! (the server's `Cargo.toml` turns Unicode classes off) then stops the binary at start with its
//! name, instead of failing the one call whose input reaches it, months later, in a user's project;
//! the server's unit tests, built with exactly the shipped features, compile every one.

use std::ops::Deref;
use std::sync::OnceLock;

use regex::Regex;

/// A pattern's source and, once compiled, the pattern.
pub struct Pattern {
    name: &'static str,
    source: &'static str,
    compiled: OnceLock<Regex>,
}

impl Pattern {
    pub const fn new(name: &'static str, source: &'static str) -> Pattern {
        Pattern {
            name,
            source,
            compiled: OnceLock::new(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    fn compile(&self) -> Result<&Regex, String> {
        if let Some(re) = self.compiled.get() {
            return Ok(re);
        }
        let re = Regex::new(self.source).map_err(|e| format!("pattern {}: {e}", self.name))?;
        Ok(self.compiled.get_or_init(|| re))
    }
}

impl Deref for Pattern {
    type Target = Regex;

    /// The compiled pattern, compiled on first use.
    /// [`workflow::check_patterns`](crate::workflow::check_patterns) has read every one at start,
    /// and a unit test compiles each with the shipped features, so this does not fail in a binary
    /// that started.
    fn deref(&self) -> &Regex {
        match self.compile() {
            Ok(re) => re,
            Err(e) => panic!(
                "{e}: a defect in bmad-mcp, which `workflow::check_patterns` reports at start"
            ),
        }
    }
}

impl Pattern {
    /// Reads the pattern with the regex crate's own parser, as compiling it would (the
    /// same syntax and the same features): an error names it. Nothing is compiled or
    /// kept, so a check at start costs microseconds and no memory.
    pub fn check(&self) -> Result<(), String> {
        regex_syntax::Parser::new()
            .parse(self.source)
            .map(|_| ())
            .map_err(|e| format!("pattern {}: {e}", self.name))
    }
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    /// The server's unit tests build with exactly its shipped features (it has no
    /// dev-dependencies, `tests/it/shipped.rs`): every pattern is read as at start, and
    /// compiled as on its first use.
    #[test]
    fn every_pattern_compiles_with_the_shipped_features() {
        crate::workflow::check_patterns().unwrap();
        for p in crate::workflow::PATTERNS {
            p.compile().unwrap();
        }
    }

    /// The check at start sees what the build lacks: `\W` needs the Unicode tables the
    /// server leaves out (the fix track's defect, once). The build is asked whether it has
    /// them, by compiling: a bare `cargo test` at the workspace's root builds this crate
    /// with the features of every package it tests (the harness's regex has the tables),
    /// and there the check must pass what compiles; `./scripts/test` builds it alone, as it
    /// ships (`tests/it/shipped.rs`), where the check must refuse.
    #[test]
    fn the_check_at_start_refuses_a_class_the_build_lacks() {
        static UNICODE_WORD: Pattern = Pattern::new("tests::UNICODE_WORD", r"^\W*none");
        match regex::Regex::new(UNICODE_WORD.source) {
            Err(_) => {
                let e = UNICODE_WORD.check().unwrap_err();
                assert!(e.starts_with("pattern tests::UNICODE_WORD: "), "{e}");
            }
            Ok(_) => {
                UNICODE_WORD.check().unwrap();
                eprintln!(
                    "this build has regex's Unicode tables (features unified by a bare `cargo test`): the refusal is checked by `./scripts/test`"
                );
            }
        }
        static ASCII_WORD: Pattern = Pattern::new("tests::ASCII_WORD", r"^[^A-Za-z0-9_]*none");
        ASCII_WORD.check().unwrap();
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_named() {
        static BAD: Pattern = Pattern::new("tests::BAD", r"(");
        let e = BAD.compile().unwrap_err();
        assert!(e.starts_with("pattern tests::BAD: "), "{e}");
    }
}
