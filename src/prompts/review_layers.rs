//! The review in layers: which layers the review stage's prompt names and where each
//! layer's instructions are read, and the few lines that ask the host to run them. With a
//! v6 install, the edge cases and the verification gaps are the method's own review prompts
//! (read where the installer put them, so their text is the method's), and the blind pass
//! and the intent check are built in (`prompts/layers/`), written by the server under the
//! task's specs folder for the fresh contexts to read (a subagent reads a file; it cannot
//! ask for an MCP prompt) and rewritten at each review from the binary, so they are derived,
//! never edited. Without an install the server writes nothing for the layers: the prompt
//! gives each its one-line brief from the same files.

use crate::bmad_method::{Install, Method};
use crate::workflow::sections::LAYERS;
use crate::workflow::Session;

/// How every built-in layer's file begins: a file there that does not is someone's own,
/// never replaced.
pub const LAYER_MARK: &str = "<!-- bmad-mcp: a review layer";

/// One layer of the review: its name (the section the review reports it in), the file of
/// its instructions relative to the project (`None` without an install: its brief is in
/// the prompt), and the built-in text the server writes there (`None` for an installed
/// file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub name: &'static str,
    pub file: Option<String>,
    pub built_in: Option<&'static str>,
}

/// The `In brief:` line of a built-in layer's text.
fn brief(text: &str) -> &str {
    text.lines()
        .find_map(|l| l.strip_prefix("In brief: "))
        .unwrap_or_default()
}

/// Each layer in `LAYERS`'s order: the built-in text's file name, its text, and the
/// installed review prompt that stands for it (if the method has one).
const BUILT_IN: [(&str, &str, Option<&str>); 4] = [
    (
        "edge-cases.md",
        include_str!("../../prompts/layers/edge-cases.md"),
        Some("edge-case-hunter.md"),
    ),
    (
        "verification-gaps.md",
        include_str!("../../prompts/layers/verification-gaps.md"),
        Some("verification-gap.md"),
    ),
    (
        "blind-pass.md",
        include_str!("../../prompts/layers/blind-pass.md"),
        None,
    ),
    (
        "intent-check.md",
        include_str!("../../prompts/layers/intent-check.md"),
        None,
    ),
];

/// The folder of the task's built-in layer files.
pub fn folder(session: &Session) -> String {
    format!("{}/review-layers", session.specs_dir())
}

/// The round's diff every layer reads, written by the server when the review begins: the
/// project's files from the round's base commit to the work tree, new files included.
pub fn diff_path(session: &Session) -> String {
    format!("{}/changes.diff", folder(session))
}

/// The layers of `session`'s review in the project of `method` (with its install, when it
/// has one).
pub fn for_review(method: &Method, session: &Session) -> Vec<Layer> {
    let install = method.install();
    LAYERS
        .iter()
        .zip(BUILT_IN)
        .map(|(section, (file, text, installed))| {
            let found = installed
                .filter(|_| install.is_some())
                .and_then(|name| method.review_prompt(name));
            Layer {
                name: section.name,
                built_in: found.is_none().then_some(text),
                file: match found {
                    Some(path) => Some(path),
                    None => install.map(|_| format!("{}/{file}", folder(session))),
                },
            }
        })
        .collect()
}

/// Whether the review must report every layer: a v6 install is present and neither the
/// team nor the person turned `review_layers` off.
pub fn required(install: Option<&Install>) -> bool {
    install.is_some_and(|i| i.settings.review_layers)
}

/// The content of a built-in layer's file.
pub fn file_text(text: &str) -> String {
    format!("{LAYER_MARK}, written by the server at each review from its own text; edits are replaced. -->\n\n{text}")
}

/// The lines the review prompt gains in a stage's first round: each layer with its file
/// (a built-in one by its name in the task's folder, which the prompt names) or its brief,
/// and how to run them. A later round (`again`) gains nothing: the host had them with the
/// stage's rules, and a review without them is refused with the reason.
pub fn block(layers: &[Layer], (folder, diff): (&str, &str), again: bool) -> String {
    if layers.is_empty() || again {
        return String::new();
    }
    let built_in = layers
        .iter()
        .any(|l| l.built_in.is_some() && l.file.is_some());
    let place = if built_in {
        format!(" (ours in `{folder}/`)")
    } else {
        String::new()
    };
    let each: Vec<String> = layers
        .iter()
        .map(|l| {
            let shown = match (&l.file, l.built_in) {
                (Some(f), Some(_)) => crate::code::inline(f.rsplit('/').next().unwrap_or(f)),
                (Some(f), None) => crate::code::inline(f),
                (None, text) => brief(text.unwrap_or_default()).to_string(),
            };
            format!("- {}: {shown}", l.name)
        })
        .collect();
    format!(
        "\n## Review in layers\n\nRun each in a fresh context (Claude Code: a subagent; elsewhere a new session) with its file{place} and the diff {} (every file the round changed, new ones included, written by the server when the review began); a `## <layer>` section each (its findings, or `No findings.`):\n{}\n",
        crate::code::inline(diff),
        each.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_install_each_layer_is_given_its_brief_and_no_file() {
        let (_dir, project) = crate::files::project::tests::project();
        let s = Session::test()
            .task("add-login-ada-0000")
            .objective("Add login")
            .build();
        let layers = for_review(&Method::known(&project, None), &s);
        let names: Vec<&str> = layers.iter().map(|l| l.name).collect();
        assert_eq!(
            names,
            [
                "Edge Cases",
                "Verification Gaps",
                "Blind Pass",
                "Intent Check"
            ]
        );
        assert!(layers
            .iter()
            .all(|l| l.built_in.is_some() && l.file.is_none()));
        assert!(!required(None));
        let first = block(&layers, (&folder(&s), &diff_path(&s)), false);
        assert!(
            first.contains("- Blind Pass: the diff alone (no documents, no report): what is wrong or missing.\n"),
            "{first}"
        );
        for (_, text, _) in BUILT_IN {
            assert!(!brief(text).is_empty(), "every layer has its brief");
        }
        assert!(!first.contains("ours in"), "no file of ours: {first}");
        assert_eq!(
            block(&layers, (&folder(&s), &diff_path(&s)), true),
            "",
            "said in the first round"
        );
        assert!(file_text("x").starts_with(LAYER_MARK));
    }

    #[test]
    fn an_installed_layers_path_stays_quoted() {
        let layers = [Layer {
            name: "Blind Hunter",
            file: Some(format!("{}/review.md", crate::code::FORGED)),
            built_in: None,
        }];
        let b = block(&layers, ("x", "x/changes.diff"), false);
        assert!(!crate::code::forged_in(&b), "{b}");
    }
}
