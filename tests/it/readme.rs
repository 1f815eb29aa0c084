//! The documentation stays true: every `jq` recipe of `docs/jq.md` runs against the
//! committed sample `.bmad-task.example/` and prints exactly the output the page shows
//! under it; the environment variables `docs/reference.md` documents are the ones the code
//! reads; every error code has a row in `docs/troubleshooting.md`; the README opens with
//! the commands CI runs and stays short; every relative link in the README and in `docs/`
//! leads to a file (and a heading) that exists.
//!
//! The recipes are read from the page itself (a ```sh block followed by a ```text block
//! in its section "Recipes"), so the two cannot drift apart. They need `jq` on PATH
//! (`.ci/run` installs it when missing).

use std::path::Path;
use std::process::Command;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn readme() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap()
}

/// A page of `docs/`, by file name.
fn doc(name: &str) -> String {
    let path = Path::new(ROOT).join("docs").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of the `## <title>` section, up to the next `## ` heading outside a fence.
fn section(text: &str, title: &str) -> Result<String, String> {
    let heading = format!("## {title}");
    let mut lines = text.lines().skip_while(|l| *l != heading);
    if lines.next().is_none() {
        return Err(format!("no section `{heading}`"));
    }
    let mut out = String::new();
    let mut in_fence = false;
    for line in lines {
        if line.starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with("## ") {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// The fenced blocks of `text`, as (info string, content).
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut content = String::new();
            for l in lines.by_ref() {
                if l == "```" {
                    break;
                }
                content.push_str(l);
                content.push('\n');
            }
            blocks.push((info.trim().to_string(), content));
        }
    }
    blocks
}

#[derive(Debug, PartialEq)]
struct Recipe {
    command: String,
    expected: String,
}

/// The recipes of a page's "Recipes" section: each ```sh block and the ```text block
/// after it.
fn recipes_in(page: &str) -> Result<Vec<Recipe>, String> {
    let blocks = fenced_blocks(&section(page, "Recipes")?);
    let mut out = Vec::new();
    let mut blocks = blocks.into_iter();
    while let Some((info, command)) = blocks.next() {
        if info != "sh" {
            return Err(format!("a ```{info} block where a ```sh recipe should be"));
        }
        match blocks.next() {
            Some((info, expected)) if info == "text" => out.push(Recipe { command, expected }),
            _ => {
                return Err(format!(
                    "the recipe `{}` is not followed by its ```text output",
                    command.trim()
                ))
            }
        }
    }
    Ok(out)
}

fn jq_available() {
    let ok = Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "jq is not on PATH: the recipes of docs/jq.md need it (`apt-get install jq`, `brew install jq`)"
    );
}

/// The sample's tasks, and the `task` docs/jq.md tells a reader to set there.
const SAMPLE_TASKS: [&str; 2] = [
    "build-a-service-that-publishes-a-weekly-team",
    "weekly-team-changelog-drafted-by-claude-and-codex",
];
const SAMPLE_TASK_PREFIX: &str = "weekly-team";

#[test]
fn every_jq_recipe_prints_what_the_docs_show_on_the_sample() {
    assert!(
        doc("jq.md").contains(&format!("task={SAMPLE_TASK_PREFIX}\n")),
        "docs/jq.md says which `task` to set in the sample"
    );
    jq_available();
    let recipes = recipes_in(&doc("jq.md")).unwrap();
    assert!(
        recipes.len() >= 10,
        "expected the recipes of docs/jq.md, found {}",
        recipes.len()
    );
    let sample = Path::new(ROOT).join(".bmad-task.example");
    let mut failures = Vec::new();
    for r in &recipes {
        assert!(r.command.contains("jq "), "not a jq recipe: {}", r.command);
        assert!(
            !r.expected.trim().is_empty(),
            "docs/jq.md shows no output for `{}`",
            r.command.trim()
        );
        // A recipe works on any project: the task it is about is the reader's `task`,
        // never one of the sample's names written into it.
        for name in SAMPLE_TASKS {
            assert!(
                !r.command.contains(name),
                "a recipe names the sample's task `{name}`: {}",
                r.command.trim()
            );
        }
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("set -e\n{}", r.command))
            .env("task", SAMPLE_TASK_PREFIX)
            .current_dir(&sample)
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || stdout.trim_end() != r.expected.trim_end() {
            failures.push(format!(
                "`{}`\n  exit: {}\n  printed:\n{}\n  docs/jq.md shows:\n{}\n  stderr: {}",
                r.command.trim(),
                out.status,
                stdout,
                r.expected,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} recipes of docs/jq.md disagree with the sample (if the sample was refreshed \
         on purpose, update the outputs in docs/jq.md):\n\n{}",
        failures.len(),
        recipes.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_recipe_reader_pairs_commands_with_outputs_and_refuses_a_missing_output() {
    let good = "## Recipes\n\nState:\n\n```sh\njq . a\n```\n```text\n1\n```\n\n## Next\n\n```sh\nnot a recipe\n```\n";
    assert_eq!(
        recipes_in(good).unwrap(),
        [Recipe {
            command: "jq . a\n".into(),
            expected: "1\n".into()
        }]
    );
    let no_output = "## Recipes\n\n```sh\njq . a\n```\nprose\n";
    assert!(recipes_in(no_output).unwrap_err().contains("jq . a"));
    let wrong_order = "## Recipes\n\n```text\n1\n```\n";
    let heading_in_output = "## Recipes\n```sh\nhead a.md\n```\n```text\n## Not a heading\n```\n";
    assert_eq!(
        recipes_in(heading_in_output).unwrap()[0].expected,
        "## Not a heading\n"
    );
    assert!(recipes_in(wrong_order).is_err());
    assert!(recipes_in("# no such section\n").is_err());
}

/// Every variable named like ours in `dir`'s sources (string literals `"BMAD_…"` and
/// `"CLAUDE_PROJECT_DIR"`).
fn variables_in(dir: &Path, out: &mut std::collections::BTreeSet<String>) {
    let re = regex::Regex::new(r#""(BMAD_[A-Z_]+|CLAUDE_PROJECT_DIR|RUST_LOG)""#).unwrap();
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        out.extend(re.captures_iter(&text).map(|c| c[1].to_string()));
    }
}

#[test]
fn the_reference_documents_every_environment_variable_the_server_reads() {
    let mut server = std::collections::BTreeSet::new();
    variables_in(&Path::new(ROOT).join("src"), &mut server);
    // RUST_LOG is read by tracing's EnvFilter, not by name in our code.
    server.insert("RUST_LOG".to_string());
    assert!(
        server.contains("BMAD_PROJECT_ROOT") && server.len() >= 6,
        "{server:?}"
    );
    let env = section(&doc("reference.md"), "Environment").unwrap();
    for var in &server {
        assert!(
            env.contains(&format!("\n* `{var}` — ")),
            "the Environment list of docs/reference.md lacks {var}"
        );
    }
    // And the variables of the examples, benchmarks and tests are named there too.
    let mut others = std::collections::BTreeSet::new();
    for dir in ["examples", "benches", "tests"] {
        let dir = Path::new(ROOT).join(dir);
        if dir.is_dir() {
            variables_in(&dir, &mut others);
        }
    }
    for var in others.difference(&server) {
        assert!(
            env.contains(&format!("`{var}`")),
            "the Environment section of docs/reference.md does not mention {var}"
        );
    }
}

#[test]
fn the_readme_commands_are_what_ci_runs() {
    let text = readme();
    let first = fenced_blocks(&text)
        .into_iter()
        .next()
        .expect("a first code block");
    let commands: Vec<&str> = first
        .1
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release --example full_workflow",
            "./scripts/test"
        ],
        "the README opens with the main job and the test command"
    );
    let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap();
    let ci_lines: Vec<&str> = ci.lines().map(str::trim).collect();
    assert!(
        ci_lines.contains(&"./scripts/test"),
        ".ci/run runs the README's test command"
    );
    assert!(
        ci_lines
            .iter()
            .any(|l| l.starts_with("cargo run") && l.ends_with("--example full_workflow")),
        ".ci/run runs the main job"
    );
}

/// Every error code the tool can return has an entry in the "Error codes" list of
/// docs/troubleshooting.md (`* <code> — <what to do>`) that names it in backquotes and says
/// what to do (more than a few words).
#[test]
fn every_error_code_has_a_troubleshooting_row_with_a_next_step() {
    let text = section(&doc("troubleshooting.md"), "Error codes").unwrap();
    let rows: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("* ")?;
            let (first, rest) = l.split_once(" — ")?;
            Some((first, rest.trim()))
        })
        .collect();
    for code in bmad_mcp::error::ErrorCode::ALL {
        let quoted = format!("`{code}`");
        let row = rows.iter().find(|(first, _)| {
            first
                .split(", ")
                .any(|c| c.split_whitespace().next() == Some(quoted.as_str()))
        });
        let Some((_, what_to_do)) = row else {
            panic!("the Error codes list of docs/troubleshooting.md has no entry for {quoted}");
        };
        assert!(
            what_to_do.split_whitespace().count() >= 8,
            "{quoted}: `{what_to_do}` does not say what to do"
        );
    }
}

/// The changelog is read by release: each wave its own section, and the newest one short
/// enough to read (the detail is in `git log`).
#[test]
fn the_changelogs_newest_section_stays_short() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("CHANGELOG.md")).unwrap();
    let start = text.find("\n## ").expect("a release section");
    let newest = &text[start + 1..];
    let end = newest[3..].find("\n## ").map_or(newest.len(), |e| e + 3);
    let section = &newest[..end];
    assert!(
        section.len() <= 12 * 1024,
        "CHANGELOG.md's newest section is {} bytes (at most 12 KiB): {}",
        section.len(),
        section.lines().next().unwrap_or_default()
    );
}

/// The README is what a newcomer reads in five minutes; the rest belongs in `docs/`.
#[test]
fn the_readme_stays_short() {
    let text = readme();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines, over 300: move the detail to a page of docs/"
    );
    assert!(
        text.len() <= 25_000,
        "README.md is {} bytes, over 25 KB: move the detail to a page of docs/",
        text.len()
    );
}

/// `text` without its fenced blocks and inline code, where a `[…](…)` is no link.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Inline code spans alternate with prose between backquotes.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of the Markdown links (`[text](target)`, images too) in `text`'s prose.
fn link_targets(text: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\]\(([^)\s]+)(?:\s+\x22[^\x22]*\x22)?\)").unwrap();
    re.captures_iter(&prose(text))
        .map(|c| c[1].to_string())
        .collect()
}

/// The anchors GitHub gives the headings of a Markdown page: lower case, punctuation
/// dropped, spaces as `-`, a repeated one numbered.
fn anchors(page: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_fence = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        if in_fence {
            continue;
        }
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = out
            .iter()
            .filter(|a| {
                **a == slug
                    || a.strip_prefix(&format!("{slug}-"))
                        .is_some_and(|d| d.parse::<u32>().is_ok())
            })
            .count();
        out.push(if n == 0 { slug } else { format!("{slug}-{n}") });
    }
    out
}

/// What is wrong with each relative link of the page at `path` (relative to the
/// repository): a file that does not exist, or an anchor its page does not have.
fn broken_links(path: &str) -> Vec<String> {
    let root = Path::new(ROOT);
    let text = std::fs::read_to_string(root.join(path)).unwrap();
    let dir = root.join(path).parent().unwrap().to_path_buf();
    let mut broken = Vec::new();
    for target in link_targets(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let resolved = if file.is_empty() {
            root.join(path)
        } else {
            dir.join(file)
        };
        if !resolved.exists() {
            broken.push(format!(
                "{path}: `{target}`: no file {}",
                resolved.display()
            ));
            continue;
        }
        if let Some(anchor) = anchor {
            let page = std::fs::read_to_string(&resolved).unwrap_or_default();
            if !anchors(&page).iter().any(|a| a == anchor) {
                broken.push(format!("{path}: `{target}`: no heading with that anchor"));
            }
        }
    }
    broken
}

/// The pages of `docs/`, as paths relative to the repository.
fn doc_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_relative_link_in_the_readme_and_docs_leads_somewhere() {
    let mut pages = vec!["README.md".to_string()];
    pages.extend(doc_pages());
    assert!(pages.len() >= 10, "{pages:?}");
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The headings of a Markdown page outside its fenced blocks, as written.
fn headings(page: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(line.trim_end().to_string());
        }
    }
    out
}

/// A heading said twice (on one line, as an edit once left four of them, or as two
/// headings of one page) makes a reader and a link's anchor stumble.
#[test]
fn no_heading_is_said_twice() {
    let mut pages = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    pages.extend(doc_pages());
    let mut doubled = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(Path::new(ROOT).join(page)).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for h in headings(&text) {
            let half = h.len() / 2;
            let twice = h.len() % 2 == 0 && h.is_char_boundary(half) && h[..half] == h[half..];
            if twice || !seen.insert(h.clone()) {
                doubled.push(format!("{page}: {h}"));
            }
        }
    }
    assert!(
        doubled.is_empty(),
        "headings said twice:\n{}",
        doubled.join("\n")
    );
    assert_eq!(
        headings("# A\n```\n# not one\n```\n## B## B\n"),
        ["# A", "## B## B"]
    );
}

#[test]
fn the_readme_links_every_page_of_the_docs() {
    let targets = link_targets(&readme());
    for page in doc_pages() {
        assert!(
            targets
                .iter()
                .any(|t| t.split('#').next() == Some(page.as_str())),
            "README.md does not link {page}"
        );
    }
}

#[test]
fn the_link_checker_finds_links_and_anchors_and_skips_code() {
    let text = "See [the guide](docs/guide.md), ![x](a.png \"t\") and [web](https://x.y/z).\n\
                `[not](a link)` and\n```\n[nor](this)\n```\n[here](#who-decides)\n";
    assert_eq!(
        link_targets(text),
        ["docs/guide.md", "a.png", "https://x.y/z", "#who-decides"]
    );
    assert_eq!(
        anchors("# Who decides\n## Who decides\n```\n# not a heading\n```\n## `cwd`, and §7.1: the project!\n#no"),
        ["who-decides", "who-decides-1", "cwd-and-71-the-project"]
    );
}

/// The numbers `docs/spec.md §N` or `§N.M` cite in `text`.
fn spec_citations(text: &str) -> Vec<String> {
    text.match_indices("docs/spec.md §")
        .map(|(at, cite)| {
            let rest = &text[at + cite.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.').to_string()
        })
        .collect()
}

/// Every `docs/spec.md §N` a source file cites is a section (`## §N`) or a rule (`N.M.`)
/// of the spec: the code cites the contract one way, and never a rule that is gone.
#[test]
fn every_spec_citation_in_the_code_names_a_rule_that_exists() {
    let spec = doc("spec.md");
    let exists = |n: &str| {
        spec.lines()
            .any(|l| l.starts_with(&format!("## §{n} ")) || l.starts_with(&format!("{n}. ")))
    };
    let mut files = Vec::new();
    for dir in ["src", "tests/it", "examples", "benches"] {
        rust_files(&Path::new(ROOT).join(dir), &mut files);
    }
    let mut cited = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains(concat!("SPEC", " §")),
            "{}: cite the contract as `docs/spec.md §N`",
            file.display()
        );
        // `docs/spec.md §N`, the form itself, names no rule.
        for n in spec_citations(&text).into_iter().filter(|n| !n.is_empty()) {
            cited += 1;
            assert!(
                exists(&n),
                "{} cites docs/spec.md §{n}, which is not there",
                file.display()
            );
        }
    }
    assert!(cited > 30, "the citations were read: {cited}");
    assert_eq!(
        spec_citations("see docs/spec.md §3.9, and docs/spec.md §10."),
        ["3.9", "10"]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A script that posts to the dashboard can learn from the docs where the token is (the
/// page's meta tag: docs/dashboard.md, and its endpoints in docs/internals.md) and in which
/// header it goes, as the code names both.
#[test]
fn the_dashboard_doc_says_where_a_posts_token_is() {
    let page =
        std::fs::read_to_string(Path::new(ROOT).join("src/dashboard/assets/index.html")).unwrap();
    let meta = regex::Regex::new(r#"<meta name="([a-z-]+)" content="\{\{TOKEN\}\}">"#)
        .unwrap()
        .captures(&page)
        .expect("the page carries its token in a meta tag")[1]
        .to_string();
    let guard = std::fs::read_to_string(Path::new(ROOT).join("src/dashboard/guard.rs")).unwrap();
    let header = regex::Regex::new(r#"pub const SECRET_HEADER: &str = "([a-z-]+)";"#)
        .unwrap()
        .captures(&guard)
        .expect("the guard names its header")[1]
        .to_string();
    for page in ["dashboard.md", "internals.md"] {
        assert!(
            doc(page).contains(&format!("<meta name=\"{meta}\"")),
            "docs/{page} does not name the meta tag `{meta}`"
        );
    }
    assert!(
        doc("internals.md").contains(&format!("`{header}: <token>`")),
        "docs/internals.md does not show the header `{header}`"
    );
}

/// The pages a user reads to use the server, in the order they read them; how the parts
/// work inside is in docs/internals.md and the other contributor pages.
const USER_PATH: [&str; 8] = [
    "README.md",
    "docs/install.md",
    "docs/setup.md",
    "docs/guide.md",
    "docs/dashboard.md",
    "docs/team.md",
    "docs/checks.md",
    "docs/lessons.md",
];

/// The longest Markdown table row of `text`, in characters, with its line.
fn widest_table_row(text: &str) -> (usize, &str) {
    let mut in_fence = false;
    let mut widest = (0, "");
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('|') {
            let n = line.chars().count();
            if n > widest.0 {
                widest = (n, line);
            }
        }
    }
    widest
}

/// A user reads the user path in one sitting: at most 80 KB in all; and no table row in
/// the README or docs/ is wider than 300 characters (nobody reads a row that wraps over a
/// screen: such a table is a list).
#[test]
fn the_user_path_is_sized_for_a_user_and_no_table_row_is_too_wide() {
    let total: usize = USER_PATH
        .iter()
        .map(|p| std::fs::read(Path::new(ROOT).join(p)).unwrap().len())
        .sum();
    assert!(
        total <= 80_000,
        "the user path ({}) is {total} bytes, over 80 KB: move how it works inside to docs/internals.md",
        USER_PATH.join(", ")
    );
    let mut pages: Vec<String> = doc_pages();
    pages.push("README.md".into());
    for page in pages {
        let text = std::fs::read_to_string(Path::new(ROOT).join(&page)).unwrap();
        let (n, row) = widest_table_row(&text);
        assert!(n <= 300, "{page}: a table row of {n} characters: {row}");
    }
}

#[test]
fn the_row_measure_counts_characters_of_table_rows_only() {
    let text = format!(
        "| a | {} |\n```\n| {} |\n```\nplain {}\n",
        "é".repeat(10),
        "x".repeat(500),
        "y".repeat(500)
    );
    assert_eq!(widest_table_row(&text), (18, "| a | éééééééééé |"));
}

/// What a newcomer looks for is where they look: the test prerequisites name what
/// `./scripts/test` needs (Chromium too); setup.md says how Gemini CLI trusts a folder, where
/// it shows the server "Disabled"; the README names every `lessons` command the binary has;
/// where the checks' approval is kept is said on one page, the others link there.
#[test]
fn the_newcomers_questions_are_answered_where_they_look() {
    let script = std::fs::read_to_string(Path::new(ROOT).join("scripts/test")).unwrap();
    let install = section(&doc("install.md"), "Prerequisites").unwrap();
    for (used, named) in [
        ("chromium-driver", "chromium-driver"),
        ("python3 -m venv", "python3-venv"),
        ("npm install", "`npm`"),
    ] {
        assert!(script.contains(used), "scripts/test no longer runs {used}?");
        assert!(
            install.contains(named),
            "install.md's prerequisites lack {named}"
        );
    }
    let setup = doc("setup.md");
    assert!(setup.contains("\"Disabled\"") && setup.contains("`/permissions trust`"));

    let out = Command::new(crate::support::server_path())
        .args(["lessons", "-h"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .expect("lessons has commands")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.contains(&"restore"), "{help}");
    let named = format!("bmad-mcp lessons {}", commands.join("|"));
    assert!(
        readme().contains(&named),
        "the README does not say `{named}`"
    );

    let mut pages: Vec<String> = doc_pages();
    pages.push("README.md".into());
    let saying: Vec<String> = pages
        .into_iter()
        .filter(|p| !p.ends_with("spec.md"))
        .filter(|p| {
            std::fs::read_to_string(Path::new(ROOT).join(p))
                .unwrap()
                .contains("<git common dir>/bmad-mcp/.bmad-task/config-approved.json")
        })
        .collect();
    assert_eq!(
        saying,
        ["docs/checks.md"],
        "where the approval is kept, said once"
    );
}

/// A file name under `src/` names one concept: where it recurs (the same feature's side in
/// several layers), ARCHITECTURE.md's glossary says so, and every file the glossary points
/// at exists, so that a new file named like another, or a rename, shows here.
#[test]
fn every_recurring_file_name_is_in_the_glossary() {
    let architecture = std::fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md")).unwrap();
    let names = section(&architecture, "Names").unwrap();
    let mut files = Vec::new();
    rust_files(&Path::new(ROOT).join("src"), &mut files);
    let mut count = std::collections::BTreeMap::<String, usize>::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if !["mod.rs", "lib.rs", "main.rs"].contains(&name.as_str()) {
            *count.entry(name).or_default() += 1;
        }
    }
    let unlisted: Vec<&String> = count
        .iter()
        .filter(|(name, n)| **n > 1 && !names.contains(&format!("`{name}`")))
        .map(|(name, _)| name)
        .collect();
    assert!(
        unlisted.is_empty(),
        "file names used more than once under src/ that ARCHITECTURE.md's Names does not list: {unlisted:?}"
    );
    let missing: Vec<&str> = names
        .split('`')
        .filter(|s| s.starts_with("src/"))
        .filter(|s| !Path::new(ROOT).join(s).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "the glossary names files that do not exist: {missing:?}"
    );
}
