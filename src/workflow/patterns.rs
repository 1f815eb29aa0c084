//! A regular expression the server matches with, as a [`Pattern`]: declared beside the
//! code that uses it, listed in `workflow::PATTERNS`, and compiled by
//! `workflow::check_patterns` when the binary starts. A pattern that needs a regex
//! feature the shipped build leaves out (the server's `Cargo.toml` turns Unicode classes
//! off) then stops the server at start with its name, instead of failing the one call
//! whose input reaches it, months later, in a user's project.

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

    /// The compiled pattern. `workflow::check_patterns` has compiled every one at start, so this cannot
    /// fail in a binary that started; a test calling the code directly compiles it here.
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
    /// Compiles the pattern now, keeping it for its first use; the error names it.
    pub fn check(&self) -> Result<(), String> {
        self.compile().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    /// The server's unit tests build with exactly its shipped features (it has no
    /// dev-dependencies), so this is the check the binary makes at start.
    #[test]
    fn every_pattern_compiles_with_the_shipped_features() {
        crate::workflow::check_patterns().unwrap();
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_named() {
        static BAD: Pattern = Pattern::new("tests::BAD", r"(");
        let e = BAD.compile().unwrap_err();
        assert!(e.starts_with("pattern tests::BAD: "), "{e}");
    }
}
