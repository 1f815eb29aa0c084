//! The review in layers, in real projects of the pinned BMAD method (installed by its own
//! installer for Claude Code and Codex) and in one without it: the review prompt names each
//! layer (the install's review prompts where the installer put them, the built-in ones in
//! the task's folder) and how to run them in fresh contexts; with the install a review that
//! lacks a layer's section is refused with the reason and one with every layer is kept with
//! each layer's findings; a failing review whose risk the human accepts appends its
//! findings to the method's `deferred-work.md` in the method's format after what was there
//! (kept byte for byte), and a later task's first prompt shows them as the ledger's words.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::method::{install, installer};
use crate::support::{connect, document, read_json, scored, Client, Era, SPEC_SECTIONS};

const DEV: &str = "# Implementation Report\n\n## Summary\nAdded the flag.\n\n## Changes\n- `src/cli.rs`: `--verbose`.\n\n## Tests\n3 passed.\n";

/// The method's review prompts, as the installer places them under a tool's skills folder.
const INSTALLED: [&str; 2] = [
    "bmad-code-review/review-prompts/edge-case-hunter.md",
    "bmad-code-review/review-prompts/verification-gap.md",
];

/// The built-in layers' files in a task's folder, and their text in this repository.
const BUILT_IN: [(&str, &str); 4] = [
    ("edge-cases.md", "prompts/layers/edge-cases.md"),
    (
        "verification-gaps.md",
        "prompts/layers/verification-gaps.md",
    ),
    ("blind-pass.md", "prompts/layers/blind-pass.md"),
    ("intent-check.md", "prompts/layers/intent-check.md"),
];

/// A failing review with a section for each layer, the findings of two of them.
fn review_in_layers() -> String {
    "# Code Review\n\n## Summary\nThe flag is there; two gaps.\n\n## Findings\n- major, `src/cli.rs`: `--verbose` is not documented in `--help`.\n\n## Security\nNothing read from outside.\n\n## Performance\nUnchanged.\n\n## Recommendations\nDocument the flag.\n\n## Edge Cases\n- minor, `src/cli.rs:3`: when `--verbose` is given twice,\n  the second is an error; guard: accept repeats.\n\n## Verification Gaps\nNo findings.\n\n## Blind Pass\nNo findings.\n\n## Intent Check\nNo findings.\n\nReview Status: Fail\n".into()
}

async fn call(c: &Client, sid: &Value, mut args: Value) -> Value {
    args["session_id"] = sid.clone();
    c.ok(args).await
}

fn session(project: &Path, sid: &Value) -> Value {
    read_json(&project.join(format!(".bmad-task/session-{}.json", sid.as_str().unwrap())))
}

/// A quick task in `project` up to its review's prompt: the session id, the task's name
/// and the reply that hands the review prompt over.
async fn at_review(c: &Client, project: &Path, objective: &str) -> (Value, String, Value) {
    let v = c
        .ok(json!({"action": "start", "objective": objective, "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let spec = scored(
        "technical_spec",
        &document("Technical Spec", &SPEC_SECTIONS),
        92,
    );
    call(c, &sid, json!({"action": "submit", "claude_result": spec})).await;
    call(c, &sid, json!({"action": "confirm"})).await;
    let v = call(c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("review"), Some("generating")),
        "{v:#}"
    );
    (sid, task, v)
}

/// The built-in layers' files in `project` for `task`: each named in `prompt`, each on
/// disk as the server's copy of its text in this repository.
fn built_in_layers_written(project: &Path, task: &str, prompt: &str, which: &[&str]) {
    for (file, source) in BUILT_IN.iter().filter(|(f, _)| which.contains(f)) {
        let rel = format!(".claude/specs/{task}/review-layers/{file}");
        let folder = format!("(ours in `.claude/specs/{task}/review-layers/`)");
        assert!(prompt.contains(&folder), "{folder} in\n{prompt}");
        assert!(
            prompt.contains(&format!(": `{file}`\n")),
            "{file} in\n{prompt}"
        );
        let written = std::fs::read_to_string(project.join(&rel)).unwrap();
        let ours = std::fs::read_to_string(Path::new(crate::support::ROOT).join(source)).unwrap();
        assert!(
            written.starts_with("<!-- bmad-mcp: a review layer"),
            "{written}"
        );
        assert!(written.ends_with(&ours), "{rel} holds the built-in text");
    }
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn each_tools_install_gives_the_review_its_own_prompts_and_ours_beside_them() {
    let Some(installer) = installer() else { return };
    for (tool, folder) in [
        ("claude-code", ".claude/skills"),
        ("codex", ".agents/skills"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        install(&installer, &project, tool);
        let c = connect(Era::Legacy, &project).await;
        let (_, task, v) = at_review(&c, &project, "Add a --verbose flag").await;
        let prompt = v["role_prompt"].as_str().unwrap();
        assert!(prompt.contains("## Review in layers"), "{tool}: {prompt}");
        assert!(
            prompt.contains("Claude Code: a subagent; elsewhere a new session"),
            "{prompt}"
        );
        assert!(prompt.contains("elsewhere a new session"), "{prompt}");
        for (name, installed) in ["Edge Cases", "Verification Gaps"]
            .into_iter()
            .zip(INSTALLED)
        {
            let path = format!("{folder}/{installed}");
            assert!(project.join(&path).is_file(), "{tool}: {path}");
            assert!(
                prompt.contains(&format!("- {name}: `{path}`")),
                "{tool}: {path} in\n{prompt}"
            );
        }
        built_in_layers_written(
            &project,
            &task,
            prompt,
            &["blind-pass.md", "intent-check.md"],
        );
        assert!(
            !project
                .join(format!(".claude/specs/{task}/review-layers/edge-cases.md"))
                .exists(),
            "{tool}: the method's own text is read where it is installed, not copied"
        );
        c.close().await;
    }
}

#[tokio::test]
async fn without_an_install_the_review_names_the_built_in_layers() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let c = connect(Era::Modern, &project).await;
    let (sid, task, v) = at_review(&c, &project, "Add a --verbose flag").await;
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("## Review in layers"), "{prompt}");
    // Each built-in layer by its brief, the line its text in this repository gives.
    for ((_, source), name) in BUILT_IN.iter().zip([
        "Edge Cases",
        "Verification Gaps",
        "Blind Pass",
        "Intent Check",
    ]) {
        let ours = std::fs::read_to_string(Path::new(crate::support::ROOT).join(source)).unwrap();
        let brief = ours
            .lines()
            .find_map(|l| l.strip_prefix("In brief: "))
            .unwrap();
        assert!(
            prompt.contains(&format!("- {name}: {brief}\n")),
            "{name} in\n{prompt}"
        );
    }
    // Without the method only the round's diff is written for the layers; outside git it
    // says there is none.
    let folder = project.join(format!(".claude/specs/{task}/review-layers"));
    let names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["changes.diff"], "no layer file without the method");
    let diff = std::fs::read_to_string(folder.join("changes.diff")).unwrap();
    assert!(
        diff.starts_with("# No diff: the project is not in a git repository"),
        "{diff}"
    );
    // Without the method the layers are asked for, not enforced: a review in one pass is
    // taken as before.
    let plain = "# Code Review\n\n## Findings\n- none\n\nIntent: met\n\nReview Status: Pass\n";
    let v = call(
        &c,
        &sid,
        json!({"action": "submit", "claude_result": plain}),
    )
    .await;
    assert_eq!(v["state"], "completed", "{v:#}");
    c.close().await;
}

/// The method's own entry in the ledger, written before (bmad-build's format).
const LEDGER_BEFORE: &str = "# Deferred Work\n\n- source_spec: `spec-login.md`\n  summary: Rate-limit the login form.\n  evidence: five tries a second pass today.\n";

/// A review lacking the Verification Gaps layer's section is refused, naming only that
/// section, and nothing is recorded.
async fn a_review_lacking_a_layer_is_refused(c: &Client, project: &Path, sid: &Value, whole: &str) {
    let lacking = whole.replace("## Verification Gaps\nNo findings.\n\n", "");
    let kept = session(project, sid);
    let e = c
        .refused(
            json!({"action": "submit", "session_id": sid, "claude_result": lacking}),
            "invalid_argument",
        )
        .await;
    let said = e["error"]["message"].as_str().unwrap();
    assert!(
        said.contains("`## Verification Gaps`") && said.contains("nothing was recorded"),
        "{said}"
    );
    assert!(
        !said.contains("`## Blind Pass`"),
        "only what lacks is named: {said}"
    );
    assert_eq!(session(project, sid), kept, "nothing recorded");
}

/// The review with every layer's section is taken to the human, and the saved review
/// keeps each layer's findings.
async fn a_review_with_every_layer_is_kept(c: &Client, project: &Path, sid: &Value, whole: String) {
    let v = call(c, sid, json!({"action": "submit", "claude_result": whole})).await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("review"), Some("awaiting_confirmation")),
        "{v:#}"
    );
    let saved = session(project, sid)["stages"]["review"]["artifact"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let text = std::fs::read_to_string(project.join(&saved)).unwrap();
    for section in [
        "## Edge Cases\n- minor, `src/cli.rs:3`",
        "## Verification Gaps\nNo findings.",
        "## Blind Pass\nNo findings.",
        "## Intent Check\nNo findings.",
    ] {
        assert!(text.contains(section), "{section} in {saved}:\n{text}");
    }
}

/// The human confirms the failing review: its two findings are appended to the `ledger`
/// in the method's format, after what was there, kept byte for byte.
async fn the_findings_are_deferred(c: &Client, sid: &Value, ledger: &Path, task: &str) {
    let v = call(c, sid, json!({"action": "confirm"})).await;
    // The confirm ends the quick task: what the notices would say is in `user_message`.
    assert_eq!(v["state"], "completed", "{v:#}");
    let said = v["user_message"].to_string();
    assert!(said.contains("Deferred 2 finding(s)"), "{said}");
    let after = std::fs::read_to_string(ledger).unwrap();
    assert!(
        after.starts_with(LEDGER_BEFORE),
        "what was there stays:\n{after}"
    );
    let added = &after[LEDGER_BEFORE.len()..];
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let why = "deferred: the human accepted the failing review's risk in bmad-mcp";
    assert_eq!(
        added,
        format!("\n## Deferred from: code review of {task} ({today})\n\n- major, `src/cli.rs`: `--verbose` is not documented in `--help`. — {why}\n- minor, `src/cli.rs:3`: when `--verbose` is given twice, the second is an error; guard: accept repeats. — {why}\n"),
    );
}

/// A later task's first prompt shows the ledger's open items, the method's entry and the
/// deferred findings, as the ledger's words.
async fn a_later_task_is_shown_the_ledger(c: &Client, project: &Path) {
    let v = c
        .ok(json!({"action": "start", "objective": "Tidy the command line", "cwd": project.to_str().unwrap()}))
        .await;
    let prompt = v["role_prompt"].as_str().unwrap();
    assert!(prompt.contains("## Deferred work"), "{prompt}");
    assert!(
        prompt.contains(
            "`_bmad-output/implementation-artifacts/deferred-work.md` holds 3 open item(s)"
        ),
        "{prompt}"
    );
    assert!(prompt.contains("its text, not the server's"), "{prompt}");
    assert!(
        prompt.contains("` major, `src/cli.rs`: `--verbose` is not documented in `--help`."),
        "{prompt}"
    );
    assert!(
        prompt.contains("summary: Rate-limit the login form."),
        "{prompt}"
    );
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_review_is_kept_only_with_every_layer_and_a_deferred_finding_reaches_the_ledger_and_a_later_task(
) {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    install(&installer, &project, "claude-code");
    // The method's own entry, written before (bmad-build's format): kept byte for byte.
    let ledger = project.join("_bmad-output/implementation-artifacts/deferred-work.md");
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    std::fs::write(&ledger, LEDGER_BEFORE).unwrap();

    let c = connect(Era::Legacy, &project).await;
    let (sid, task, _) = at_review(&c, &project, "Add a --verbose flag").await;
    let whole = review_in_layers();
    a_review_lacking_a_layer_is_refused(&c, &project, &sid, &whole).await;
    a_review_with_every_layer_is_kept(&c, &project, &sid, whole).await;

    // The human accepts the failing review's risk: its findings are deferred.
    the_findings_are_deferred(&c, &sid, &ledger, &task).await;

    // A later task's first stage is shown the ledger's open items, as its words.
    a_later_task_is_shown_the_ledger(&c, &project).await;
    c.close().await;
}

/// Every layer reads one diff the server wrote for the round, named in the review prompt:
/// from the commit the work was planned at to the work tree, a changed file and a new one
/// (never added to git) both in it, the method's and the server's own files not.
#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn each_layers_prompt_names_a_diff_of_every_changed_file_new_ones_included() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = crate::method_round::project_with_the_method(&installer, dir.path());
    let c = connect(Era::Modern, &project).await;
    let v = c
        .ok(json!({"action": "start", "objective": "Add a verbose flag", "track": "quick", "cwd": project.to_str().unwrap()}))
        .await;
    let sid = v["session_id"].clone();
    let task = v["task_name"].as_str().unwrap().to_string();
    let spec = scored(
        "technical_spec",
        &document("Technical Spec", &SPEC_SECTIONS),
        92,
    );
    call(&c, &sid, json!({"action": "submit", "claude_result": spec})).await;
    call(&c, &sid, json!({"action": "confirm"})).await;
    std::fs::write(project.join("src/lib.rs"), "pub mod todo;\npub mod cli;\n").unwrap();
    std::fs::write(
        project.join("src/cli.rs"),
        "pub const VERBOSE: &str = \"--verbose\";\n",
    )
    .unwrap();
    let v = call(&c, &sid, json!({"action": "submit", "claude_result": DEV})).await;
    assert_eq!(v["stage"], "review", "{v:#}");
    let prompt = v["role_prompt"].as_str().unwrap();
    let rel = format!(".claude/specs/{task}/review-layers/changes.diff");
    assert!(prompt.contains(&format!("the diff `{rel}`")), "{prompt}");
    let diff = std::fs::read_to_string(project.join(&rel)).unwrap();
    for shown in [
        "+++ b/src/lib.rs\n",
        "+pub mod cli;\n",
        "+++ b/src/cli.rs\n",
        "+pub const VERBOSE",
    ] {
        assert!(diff.contains(shown), "{shown:?} in\n{diff}");
    }
    assert!(diff.contains(": 2 file(s)."), "{diff}");
    assert!(
        !diff.contains("sprint-status") && !diff.contains("_bmad"),
        "{diff}"
    );
    c.close().await;
}
