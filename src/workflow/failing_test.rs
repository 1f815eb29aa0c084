//! What the fix track's `Failing Test` section must show, read by the server: the test by
//! name (an id, a file or the command that runs it) and that it failed before the fix. A
//! heading with any text under it is not enough: "None, I fixed the code directly" is
//! the very thing the section exists to catch.

use crate::workflow::patterns::Pattern;

/// A test named as code: a span in backticks, a file of tests, an identifier of a test
/// (`test_empty_input`, `empty_input_test`, `TestParser`, `parser::tests::empty`), or a
/// command that runs tests.
pub(in crate::workflow) static NAMES_A_TEST: Pattern = Pattern::new(
    "failing_test::NAMES_A_TEST",
    concat!(
        r"`[^`\n]*[A-Za-z0-9][^`\n]*`",
        r"|[A-Za-z0-9_./-]*(?:test|spec)[A-Za-z0-9_-]*\.[A-Za-z]{1,5}(?-u:\b)",
        r"|(?-u:\b)(?:test_[A-Za-z0-9_]+|[A-Za-z0-9_]+_test(?:s)?|Test[A-Z][A-Za-z0-9_]*)(?-u:\b)",
        r"|(?-u:\b)[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*::tests?::[A-Za-z0-9_]+",
        r"|(?i)(?-u:\b)(?:cargo (?:test|nextest)|pytest|npm (?:run )?test|yarn test|pnpm test",
        r"|go test|mvn test|gradle test|jest|vitest|rspec|phpunit|dotnet test|ctest|make test",
        r"|python3? -m (?:pytest|unittest))(?-u:\b)",
    ),
);

/// The report says the test failed (before the fix).
pub(in crate::workflow) static SAYS_IT_FAILED: Pattern = Pattern::new(
    "failing_test::SAYS_IT_FAILED",
    r"(?i)(?-u:\b)(?:fail(?:s|ed|ing|ure)?|red|panick?(?:ed|s)?|assertion ?error|assert(?:ion)? failed|did not pass|exit(?:ed)? (?:code|status) [1-9])(?-u:\b)",
);

/// The report says no test failed first, in the words an author uses to skip the step.
pub(in crate::workflow) static DENIES_IT: Pattern = Pattern::new(
    "failing_test::DENIES_IT",
    concat!(
        // What may stand before the word: markup (`_` of emphasis too) and punctuation,
        // ASCII or the usual dashes, bullets and quotes (`\W` would need the Unicode
        // tables the server leaves out).
        // Outside `(?i)`: folding the case of that class would cost milliseconds to
        // compile.
        r"^(?:[^A-Za-z0-9\x{80}-\x{10FFFF}]|[–—•·«»“”‘’])*",
        r"(?i:none|n/?a|no(?-u:\b)|not applicable|skipped)",
        r"|(?i)no (?:failing )?test (?:failed|was written|first|needed)",
        r"|(?i)(?:did not|didn't|does not|doesn't|never) fail",
        r"|(?i)without (?:a |any )?(?:failing )?test",
        r"|(?i)no (?:failing|regression) test",
        r"|(?i)fixed (?:the code |it )?directly",
    ),
);

/// What the section's text lacks, said for the human; `None` when it names a test and
/// says it failed before the fix.
pub fn shortfall(body: &str) -> Option<&'static str> {
    if DENIES_IT.is_match(body.trim()) {
        return Some("says no test failed before the fix");
    }
    if !NAMES_A_TEST.is_match(body) {
        return Some("names no test (a test id, file or command)");
    }
    if !SAYS_IT_FAILED.is_match(body) {
        return Some("does not say the test failed before the fix");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::shortfall;

    #[test]
    fn a_named_test_that_failed_first_passes() {
        for body in [
            "`empty_input` failed before the fix.",
            "tests/test_parser.py::test_empty failed with an AssertionError before the fix.",
            "Added test_empty_input; it failed (exit code 1) before the change.",
            "`cargo test parser::tests::empty` was red before the fix, green after.",
            "TestParseEmpty panicked before the fix.",
            "Ran pytest -k empty: it failed before the fix.",
        ] {
            assert_eq!(shortfall(body), None, "{body}");
        }
    }

    /// A word in another script before "none" is text, not markup: the section is read
    /// on.
    #[test]
    fn only_markup_before_the_denial_counts() {
        assert_eq!(
            shortfall("Ésaï: `test_empty` failed before the fix; none of the others did."),
            None
        );
    }

    #[test]
    fn a_section_that_skips_the_test_or_hides_it_stops() {
        let cases = [
            (
                "None: I fixed the code directly, no test failed first.",
                "says no test",
            ),
            ("N/A", "says no test"),
            ("None, fixed directly.", "says no test"),
            ("**None** — fixed directly.", "says no test"),
            ("– n/a", "says no test"),
            ("> _Skipped_", "says no test"),
            (
                "The bug did not fail any test; fixed directly.",
                "says no test",
            ),
            (
                "I checked it by hand and it failed before.",
                "names no test",
            ),
            (
                "Wrote `test_empty_input` to cover the case.",
                "does not say",
            ),
        ];
        for (body, why) in cases {
            let said = shortfall(body).unwrap_or_else(|| panic!("{body}: passed"));
            assert!(said.contains(why), "{body}: {said}");
        }
    }
}
