//! The README stays true: every `jq` recipe in it runs against the committed sample
//! `.bmad-task.example/` and prints exactly the output the README shows under it; the
//! environment variables it documents are the ones the code reads; its test command is
//! the one CI runs.
//!
//! The recipes are read from the README itself (a ```sh block followed by a ```text block
//! in the section "Inspecting sessions with jq"), so the two cannot drift apart. They need
//! `jq` on PATH (`.ci/run` installs it when missing).

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn readme() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap()
}

/// The text of the `## <title>` section, up to the next `## ` heading outside a fence.
fn section(text: &str, title: &str) -> Result<String, String> {
    let heading = format!("## {title}");
    let mut lines = text.lines().skip_while(|l| *l != heading);
    if lines.next().is_none() {
        return Err(format!("README has no section `{heading}`"));
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

/// The recipes of the jq section: each ```sh block and the ```text block after it.
fn recipes_in(readme: &str) -> Result<Vec<Recipe>, String> {
    let blocks = fenced_blocks(&section(readme, "Inspecting sessions with jq")?);
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
        "jq is not on PATH: the README's recipes need it (`apt-get install jq`, `brew install jq`)"
    );
}

#[test]
fn every_jq_recipe_prints_what_the_readme_shows_on_the_sample() {
    jq_available();
    let recipes = recipes_in(&readme()).unwrap();
    assert!(
        recipes.len() >= 10,
        "expected the README's recipes, found {}",
        recipes.len()
    );
    let sample = Path::new(ROOT).join(".bmad-task.example");
    let mut failures = Vec::new();
    for r in &recipes {
        assert!(r.command.contains("jq "), "not a jq recipe: {}", r.command);
        assert!(
            !r.expected.trim().is_empty(),
            "the README shows no output for `{}`",
            r.command.trim()
        );
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("set -e\n{}", r.command))
            .current_dir(&sample)
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || stdout.trim_end() != r.expected.trim_end() {
            failures.push(format!(
                "`{}`\n  exit: {}\n  printed:\n{}\n  README shows:\n{}\n  stderr: {}",
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
        "{} of {} README recipes disagree with the sample (if the sample was refreshed on \
         purpose, update the outputs in README.md):\n\n{}",
        failures.len(),
        recipes.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_recipe_reader_pairs_commands_with_outputs_and_refuses_a_missing_output() {
    let good = "## Inspecting sessions with jq\n\nState:\n\n```sh\njq . a\n```\n```text\n1\n```\n\n## Next\n\n```sh\nnot a recipe\n```\n";
    assert_eq!(
        recipes_in(good).unwrap(),
        [Recipe {
            command: "jq . a\n".into(),
            expected: "1\n".into()
        }]
    );
    let no_output = "## Inspecting sessions with jq\n\n```sh\njq . a\n```\nprose\n";
    assert!(recipes_in(no_output).unwrap_err().contains("jq . a"));
    let wrong_order = "## Inspecting sessions with jq\n\n```text\n1\n```\n";
    let heading_in_output =
        "## Inspecting sessions with jq\n```sh\nhead a.md\n```\n```text\n## Not a heading\n```\n";
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
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            variables_in(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            out.extend(re.captures_iter(&text).map(|c| c[1].to_string()));
        }
    }
}

#[test]
fn the_readme_documents_every_environment_variable_the_server_reads() {
    let mut server = std::collections::BTreeSet::new();
    variables_in(&Path::new(ROOT).join("src"), &mut server);
    // RUST_LOG is read by tracing's EnvFilter, not by name in our code.
    server.insert("RUST_LOG".to_string());
    assert!(
        server.contains("BMAD_PROJECT_ROOT") && server.len() >= 6,
        "{server:?}"
    );
    let env = section(&readme(), "Environment").unwrap();
    for var in &server {
        assert!(
            env.contains(&format!("| `{var}` |")),
            "README's Environment table lacks {var}"
        );
    }
    // And the variables of the examples and tests are named there too.
    let mut others = std::collections::BTreeSet::new();
    variables_in(&Path::new(ROOT).join("examples"), &mut others);
    variables_in(&Path::new(ROOT).join("tests"), &mut others);
    for var in others.difference(&server) {
        assert!(
            env.contains(&format!("`{var}`")),
            "README's Environment section does not mention {var}"
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

/// Every error code the tool can return has a row in the troubleshooting table that names
/// it in backquotes and says what to do (more than a few words).
#[test]
fn every_error_code_has_a_troubleshooting_row_with_a_next_step() {
    let text = section(&readme(), "Troubleshooting").unwrap();
    let rows: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("| ")?;
            let (first, rest) = l.split_once(" | ")?;
            Some((first, rest.trim_end_matches(" |").trim()))
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
            panic!("README's troubleshooting table has no row for {quoted}");
        };
        assert!(
            what_to_do.split_whitespace().count() >= 8,
            "{quoted}: `{what_to_do}` does not say what to do"
        );
    }
}
