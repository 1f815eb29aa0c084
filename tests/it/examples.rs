//! The examples, run as users run them (the same scripts, against the built binary), and
//! the committed sample `.bmad-task.example/`, which must stay what the examples produce.
//!
//! The sample is compared after normalising what changes from run to run: session ids
//! (named after their task instead), times, the timestamps in temp-file names (numbered
//! in order instead), and the project path. Everything else (file names, fields, values,
//! documents, sizes, hashes) must match. To refresh the committed copy after an intended
//! format change: `BMAD_UPDATE_SAMPLE=1 cargo test --test it examples::the_committed_sample`.

// Each example includes `examples/common/mod.rs` as its own `common` module, so this crate,
// which includes both examples, holds two copies of it; that is intended.
#![allow(clippy::duplicate_mod)]

#[allow(dead_code)]
#[path = "../../examples/full_workflow.rs"]
mod full_workflow;

#[allow(dead_code)]
#[path = "../../examples/dual_engine.rs"]
mod dual_engine;

#[allow(dead_code)]
#[path = "../../examples/tracks_and_stories.rs"]
mod tracks_and_stories;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bmad_mcp::workflow::Track;
use regex::Regex;
use serde_json::{json, Value};

use crate::support::{read_json, server_path};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../.bmad-task.example");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/fixtures");

/// Who ran, what it printed, what it left: one example's run.
struct Run {
    lines: Vec<String>,
    steps: Vec<(String, Value)>,
    files: Vec<String>,
}

/// Runs one example's script (the module included above) in `project`.
macro_rules! run_example {
    ($example:ident, $project:expr) => {{
        let mut demo = $example::common::Demo::connect(Path::new(server_path()), $project)
            .await
            .unwrap();
        $example::run(&mut demo).await.unwrap();
        let report = demo.finish().await.unwrap();
        Run {
            lines: report.lines,
            steps: report.steps,
            files: report.files,
        }
    }};
}

/// The document a JSON fixture carries in `field`.
/// A fixture's document as the server must store it: byte for byte.
fn fixture_doc(name: &str, field: &str) -> String {
    read_json(&Path::new(FIXTURES).join(name))[field]
        .as_str()
        .unwrap()
        .to_string()
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap()
}

fn session_of(project: &Path, task: &str) -> Value {
    let dir = project.join(".bmad-task");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("session-")
        })
        .map(|p| read_json(&p))
        .find(|s| s["task_name"] == task)
        .unwrap_or_else(|| panic!("no session of task {task}"))
}

/// Checks that the run took exactly the `expected` (action, stage, state) steps and printed
/// one line for each, naming its action, stage, state and score; returns those lines.
fn assert_steps<'a>(run: &'a Run, expected: &[(&str, &str, &str)]) -> Vec<&'a String> {
    let walked: Vec<(&str, &str, &str)> = run
        .steps
        .iter()
        .map(|(a, v)| {
            (
                a.as_str(),
                v["stage"].as_str().unwrap_or("-"),
                v["state"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(walked, expected);
    let lines: Vec<&String> = run
        .lines
        .iter()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(lines.len(), expected.len(), "{:#?}", run.lines);
    for (line, (action, v)) in lines.iter().zip(&run.steps) {
        for part in [
            action,
            v["stage"].as_str().unwrap(),
            v["state"].as_str().unwrap(),
        ] {
            assert!(line.contains(part), "{line} lacks {part}");
        }
        if let Some(score) = v["score"].as_u64() {
            assert!(line.contains(&score.to_string()), "{line} lacks its score");
        }
    }
    lines
}

/// The scripted run of a track and of parallel stories: the fix track to its end in the
/// first window; the full task's two sprints as stories in two windows at once; the
/// parent's final QA; and every session in `list` with its track.
#[tokio::test]
async fn tracks_and_stories_runs_a_fix_a_quick_change_and_two_stories_at_once_to_the_final_qa() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let run = run_example!(tracks_and_stories, &project);
    let fix: Vec<(&str, &str, &str)> = run
        .steps
        .iter()
        .take(12)
        .map(|(a, v)| {
            (
                a.as_str(),
                v["stage"].as_str().unwrap(),
                v["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fix,
        [
            ("start", "bug", "generating"),
            ("submit", "bug", "awaiting_confirmation"),
            ("confirm", "dev", "generating"),
            // "None, fixed directly" stops at the human, who sends it back.
            ("submit", "dev", "awaiting_confirmation"),
            ("reject", "dev", "generating"),
            ("submit", "review", "generating"),
            ("submit", "review", "completed"),
            ("start", "spec", "generating"),
            ("submit", "spec", "awaiting_confirmation"),
            ("confirm", "dev", "generating"),
            ("submit", "review", "generating"),
            ("submit", "review", "completed"),
        ]
    );
    let (_, list) = run.steps.last().unwrap();
    let mut tracks: Vec<(String, String, String)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["track"].as_str().unwrap().to_string(),
                s["current_stage"].as_str().unwrap().to_string(),
                s["current_state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    tracks.sort();
    let done = |track: &str, stage: &str| (track.into(), stage.into(), "completed".into());
    assert_eq!(
        tracks,
        [
            done("fix", "review"),
            done("full", "qa"),
            done("quick", "review"),
            done("story", "qa"),
            done("story", "qa")
        ]
    );
    let parent = run
        .files
        .iter()
        .filter(|f| f.starts_with(".bmad-task/session-"))
        .map(|f| read_json(&project.join(f)))
        .find(|s| s["track"] == "full")
        .unwrap();
    assert_eq!(parent["stories"].as_array().unwrap().len(), 2, "{parent:#}");
    assert!(parent["stories"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["state"] == "completed"));
}

#[tokio::test]
async fn full_workflow_prints_a_line_per_step_and_lists_what_it_produced() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let run = run_example!(full_workflow, &project);
    let step_lines = assert_steps(
        &run,
        &[
            ("start", "po", "generating"),
            ("submit", "po", "clarifying"),
            ("answer", "po", "refining"),
            ("submit", "po", "awaiting_confirmation"),
            ("confirm", "architect", "generating"),
            ("submit", "architect", "clarifying"),
            ("answer", "architect", "refining"),
            ("submit", "architect", "awaiting_confirmation"),
            ("confirm", "sm", "generating"),
            ("submit", "sm", "awaiting_approval"),
            ("approve", "dev", "generating"),
            ("submit", "review", "generating"),
            ("submit", "qa", "generating"),
            ("submit", "qa", "completed"),
            ("status", "qa", "completed"),
        ],
    );
    assert!(step_lines[1].contains("68 reported"), "{}", step_lines[1]);
    assert!(
        step_lines[1].contains("human: answer q1, q2, q3"),
        "{}",
        step_lines[1]
    );
    assert!(step_lines[3].contains("93 reported"));
    assert!(step_lines[3].contains("human: confirm or reject .claude/specs/"));
    assert!(step_lines[9].contains("approve a scope of 2 sprint(s)"));
    assert!(step_lines[13].contains("the workflow is complete"));

    // It ends by listing every file it produced, which are the server's files only.
    let heading = run
        .lines
        .iter()
        .position(|l| l.starts_with("files in "))
        .expect("a file listing");
    let listed: Vec<&String> = run.lines[heading + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(listed.len(), run.files.len(), "{:#?}", run.lines);
    for (line, f) in listed.into_iter().zip(&run.files) {
        assert!(
            line.contains(f.as_str()) && line.ends_with(" bytes)"),
            "{line}"
        );
    }
    let task = "build-a-service-that-publishes-a-weekly-team";
    let specs: Vec<&str> = run
        .files
        .iter()
        .filter_map(|f| f.strip_prefix(&format!(".claude/specs/{task}/")))
        .filter(|f| *f != ".bmad-session")
        .collect();
    let owner =
        std::fs::read_to_string(project.join(format!(".claude/specs/{task}/.bmad-session")))
            .expect("the task folder names its session");
    assert!(uuid_like(owner.trim()), "{owner:?}");
    let mut every_stage: Vec<&str> = Track::Full
        .stages()
        .iter()
        .map(|s| s.artifact_file())
        .collect();
    // The traceability matrix, written with the QA report (the fixtures carry ids).
    every_stage.push("traceability.md");
    // The diff the review's layers read, written at the review (outside git it says so).
    every_stage.push("review-layers/changes.diff");
    every_stage.sort();
    assert_eq!(
        specs, every_stage,
        "a document for every stage, the matrix and the review's diff"
    );
    let doc = |name: &str| {
        std::fs::read_to_string(project.join(format!(".claude/specs/{task}/{name}"))).unwrap()
    };
    assert_eq!(
        doc("01-product-requirements.md"),
        fixture_doc("po-final.json", "prd_updated")
    );
    assert_eq!(
        doc("02-system-architecture.md"),
        fixture_doc("architect-final.json", "architecture_updated")
    );
    assert_eq!(doc("05-qa-report.md"), fixture_text("qa-report.md"));
    let s = session_of(&project, task);
    assert_eq!(s["current_state"], "completed");
    assert_eq!(s["stages"]["sm"]["scope"], "all");
    assert_eq!(s["stages"]["review"]["review_status"], "Pass with Risk");
    assert_eq!(s["history"].as_array().unwrap().len(), 14);

    // Then it names its folder and the commands to look at it, which work there.
    the_printed_commands_work_in_the_printed_folder(&run.lines, &project, task);
}

/// The README's first screen, as a user walks it: the main job's last lines name the
/// folder it made and the commands to look at it; each runs, pasted into a shell, and
/// shows the run's task (`list`, `status`), or its page (`dashboard`: the printed address
/// opens).
fn the_printed_commands_work_in_the_printed_folder(lines: &[String], project: &Path, task: &str) {
    let at = lines
        .iter()
        .position(|l| l.starts_with("Look at what it left"))
        .unwrap_or_else(|| panic!("no closing commands: {lines:#?}"));
    assert!(
        lines[at - 1].contains(&project.display().to_string()),
        "the folder is named: {lines:#?}"
    );
    let commands: Vec<&str> = lines[at + 1..].iter().map(|l| l.trim()).collect();
    let cd = commands[0];
    assert_eq!(cd, format!("cd {}", project.display()), "{lines:#?}");
    let rest: Vec<&str> = commands[1..].to_vec();
    assert_eq!(rest.len(), 3, "list, status, dashboard: {lines:#?}");
    let shell = |line: &str| {
        let mut cmd = std::process::Command::new("sh");
        crate::support::isolate(&mut cmd)
            .arg("-c")
            .arg(format!("{cd}\nexec {line}"))
            // Not in the folder: the printed `cd` takes the user there.
            .current_dir(std::env::temp_dir());
        cmd
    };
    for (line, shows) in [
        (rest[0], "1 session(s)"),
        (rest[1], "stage qa, state completed"),
    ] {
        let out = shell(line).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(task) && text.contains(shows),
            "`{line}`: {out:?}"
        );
    }
    assert!(rest[2].contains(" dashboard"), "{lines:#?}");
    let mut dash = crate::support::dash::Dash::run(shell(rest[2]));
    let opened = dash.exchange();
    assert_eq!(opened.status, 303, "the printed address opens: {opened:?}");
    let tasks = dash.get("/dashboard/api/tasks");
    assert!(tasks.body.contains(task), "{tasks:?}");
    let _ = dash.stop();
}

#[test]
fn a_fresh_folder_is_named_with_how_to_remove_it() {
    let said = full_workflow::common::look_at_it(
        Path::new("/tmp/bmad-example-x y"),
        Path::new("/opt/bmad-mcp"),
        Some("a-task"),
        true,
    );
    let said = said.join("\n");
    assert!(
        said.contains("kept in '/tmp/bmad-example-x y', a new temporary folder")
            && said.contains("rm -r '/tmp/bmad-example-x y'")
            && said.contains("  /opt/bmad-mcp status a-task"),
        "{said}"
    );
}

#[tokio::test]
async fn dual_engine_keeps_the_better_result_then_a_rejection_and_a_resubmission() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let run = run_example!(dual_engine, &project);
    let step_lines = assert_steps(
        &run,
        &[
            ("start", "po", "generating"),
            ("submit", "po", "clarifying"),
            ("answer", "po", "refining"),
            ("submit", "po", "awaiting_confirmation"),
            ("reject", "po", "refining"),
            ("submit", "po", "awaiting_confirmation"),
            ("confirm", "architect", "generating"),
            ("submit", "architect", "awaiting_confirmation"),
            ("confirm", "sm", "generating"),
            ("submit", "sm", "awaiting_approval"),
        ],
    );
    let reply = |i: usize| &run.steps[i].1;
    assert_eq!(reply(0)["engines"], json!(["claude", "codex"]));
    // Both drafts scored; codex's is kept, and only its questions and gaps are asked:
    // claude's were about a draft that was set aside.
    assert_eq!(reply(1)["scores"], json!({"claude": 68, "codex": 71}));
    assert_eq!(reply(1)["score"], 71);
    let questions: Vec<&str> = reply(1)["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["question"].as_str().unwrap())
        .collect();
    assert_eq!(
        questions,
        [
            "Which repository host must be supported first?",
            "Must private repositories be included?"
        ]
    );
    assert_eq!(
        reply(1)["gaps"],
        json!([
            "Repository visibility is not stated",
            "No measurable success metrics"
        ])
    );
    assert!(reply(2)["notices"][0]
        .as_str()
        .unwrap()
        .contains("Unanswered: q2"));
    assert_eq!(reply(3)["scores"], json!({"claude": 93, "codex": 88}));
    assert_eq!(reply(3)["gate_passed"], true);
    // The rejection's feedback reaches the role prompt of both engines' revision, once:
    // `context` only points at files.
    assert!(reply(4)["context"].get("feedback").is_none());
    assert!(reply(4)["role_prompt"]
        .as_str()
        .unwrap()
        .contains(dual_engine::FEEDBACK));
    assert_eq!(reply(4)["engines"], json!(["claude", "codex"]));
    assert_eq!(reply(5)["scores"], json!({"claude": 91, "codex": 95}));
    assert_eq!(reply(5)["score"], 95);
    assert!(
        reply(7).get("scores").is_none(),
        "one engine: `score` says it"
    );
    assert_eq!(reply(7)["score"], 92);

    assert!(step_lines[1].contains("71 codex (vs claude 68)"));
    assert!(step_lines[1].contains("human: answer q1, q2"));
    assert!(step_lines[3].contains("93 claude (vs codex 88)"));
    assert!(step_lines[5].contains("95 codex (vs claude 91)"));

    let task = "weekly-team-changelog-drafted-by-claude-and-codex";
    assert!(
        run.lines
            .iter()
            .any(|l| l.contains(&format!("\"task_name\": \"{task}\""))),
        "it says how to resume"
    );
    let prd = std::fs::read_to_string(
        project.join(format!(".claude/specs/{task}/01-product-requirements.md")),
    )
    .unwrap();
    assert_eq!(
        prd,
        fixture_text("dual-po-codex-revised.md"),
        "the resubmission's better document replaced the rejected one"
    );
    let s = session_of(&project, task);
    let po = &s["stages"]["po"];
    assert_eq!(po["chosen_engine"], "codex");
    assert_eq!(po["iteration"], 3);
    assert_eq!(
        po["feedback"],
        json!([{"by": "host", "via": "tool", "text": dual_engine::FEEDBACK}])
    );
    assert_eq!(po["answers"].as_object().unwrap().len(), 1);
    let rejects: Vec<&Value> = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["action"] == "reject")
        .collect();
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0]["from"], "awaiting_confirmation");
    assert_eq!(rejects[0]["to"], "refining");
    assert_eq!(s["current_state"], "awaiting_approval");
    // Codex's first draft was fenced JSON whose document holds a fence of its own: the
    // draft kept is the whole document.
    let draft = run
        .files
        .iter()
        .find(|f| f.contains("/po_draft_"))
        .expect("the first round's draft");
    let draft = std::fs::read_to_string(project.join(draft)).unwrap();
    assert!(draft.contains("```markdown\n### Fixes"), "{draft}");
    assert!(draft.trim_end().ends_with("without edits."), "{draft}");
}

#[test]
fn the_examples_use_the_given_directory_or_a_fresh_one() {
    let parent = tempfile::tempdir().unwrap();
    let wanted = parent.path().join("new/project");
    let (dir, fresh) = full_workflow::common::project_dir(Some(wanted.clone().into())).unwrap();
    assert!(!fresh);
    assert_eq!(dir, wanted.canonicalize().unwrap());
    let (dir, fresh) = full_workflow::common::project_dir(None).unwrap();
    assert!(fresh);
    assert!(dir.is_dir() && dir.is_absolute());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "it is empty");
    std::fs::remove_dir(&dir).unwrap();
}

// ---- the committed sample ----

/// Maps what varies between runs to stable names.
struct Normaliser {
    replacements: Vec<(String, String)>,
    uuid: Regex,
    time: Regex,
}

impl Normaliser {
    /// Learns the project path, the session ids and the temp-file timestamps of the
    /// project at `root`.
    fn for_project(root: &Path, files: &[String]) -> Normaliser {
        let mut replacements = Vec::new();
        let mapping = read_json(&root.join(".bmad-task/task-mapping.json"));
        for (id, entry) in mapping.as_object().expect("the mapping is an object") {
            let task = entry["task_name"].as_str().unwrap();
            let session = read_json(&root.join(format!(".bmad-task/session-{id}.json")));
            let cwd = session["cwd"].as_str().unwrap().to_string();
            if !replacements.iter().any(|(from, _)| *from == cwd) {
                replacements.push((cwd, "<project>".to_string()));
            }
            replacements.push((id.clone(), format!("<session of {task}>")));
        }
        // `20261121T134719600637Z` in temp-file names: numbered in time order, so files
        // written by one action keep sharing a number.
        let stamp = Regex::new(r"\d{8}T\d{12}Z").unwrap();
        let stamps: BTreeSet<&str> = files
            .iter()
            .flat_map(|f| stamp.find_iter(f).map(|m| m.as_str()))
            .collect();
        for (i, s) in stamps.into_iter().enumerate() {
            replacements.push((s.to_string(), format!("<stamp {}>", i + 1)));
        }
        Normaliser {
            replacements,
            uuid: Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                .unwrap(),
            // The server's one time format: RFC 3339, UTC, milliseconds. Another format is
            // left as it is, and so fails the comparison.
            time: Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").unwrap(),
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (from, to) in &self.replacements {
            out = out.replace(from.as_str(), to);
        }
        let out = self.uuid.replace_all(&out, "<uuid>");
        self.time.replace_all(&out, "<time>").into_owned()
    }
}

/// JSON with every object's keys sorted, so that a map keyed by session id compares
/// independently of which ids a run drew.
fn sorted_keys(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let sorted: BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted_keys(v))).collect();
            Value::Object(sorted.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted_keys).collect()),
        other => other,
    }
}

/// JSON with the processes a decision's `provenance` names (the run's own: the test
/// runner and whatever started it, with their pids) replaced by `<processes>`.
fn processes_named(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("provenance", Value::Object(mut p)) => {
                        for key in ["parents", "process"] {
                            if let Some(named) = p.get_mut(key) {
                                *named = Value::String("<processes>".into());
                            }
                        }
                        (k, Value::Object(p))
                    }
                    (_, v) => (k, processes_named(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(processes_named).collect()),
        other => other,
    }
}

/// The project's files (all but the sample's own README, and the team's lessons in
/// `.bmad/lessons/`, which are named by a hash of the session id and tested in
/// `lessons.rs`), normalised: path → content.
fn normalised(root: &Path) -> BTreeMap<String, String> {
    let files: Vec<String> = full_workflow::common::files_under(root)
        .into_iter()
        .filter(|f| f != "README.md" && !f.starts_with(".bmad/"))
        .collect();
    let n = Normaliser::for_project(root, &files);
    let mut out = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        let mut content = n.apply(&text);
        if f == ".bmad-task/.lock" {
            // The pid of the last process that held the lock.
            content = if content.trim().parse::<u32>().is_ok() {
                "<pid>\n".into()
            } else {
                content
            };
        }
        if f.ends_with(".json") {
            let value: Value =
                serde_json::from_str(&content).unwrap_or_else(|e| panic!("{f} is not JSON: {e}"));
            content = serde_json::to_string_pretty(&sorted_keys(processes_named(value))).unwrap();
        }
        let path = n.apply(f);
        assert!(
            out.insert(path.clone(), content).is_none(),
            "two files normalise to {path}"
        );
    }
    out
}

/// A short account of how two texts differ: the first differing lines.
fn describe_difference(path: &str, committed: &str, now: &str) -> String {
    let a: Vec<&str> = committed.lines().collect();
    let b: Vec<&str> = now.lines().collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let show = |lines: &[&str]| {
        lines
            .iter()
            .skip(first)
            .take(4)
            .map(|l| format!("      {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "  {path}: from line {}\n    committed:\n{}\n    produced now:\n{}",
        first + 1,
        show(&a),
        show(&b)
    )
}

/// Copies the produced project into the sample, a decision's processes (the run's own,
/// whatever started the tests) replaced by one placeholder shell: they are compared as
/// `<processes>` ([`processes_named`]), and the tester's machine is not the sample's.
fn copy_project(from: &Path, to: &Path) {
    for dir in [".bmad-task", ".claude"] {
        let _ = std::fs::remove_dir_all(to.join(dir));
    }
    let parents = Regex::new(r#"(?s)("parents": \[\n\s+)"[^\]]*?(\n\s+\])"#).unwrap();
    for f in full_workflow::common::files_under(from) {
        let dest = to.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), &dest).unwrap();
        if f.starts_with(".bmad-task/session-") {
            let text = std::fs::read_to_string(&dest).unwrap();
            let text = parents.replace_all(&text, r#"${1}"bash (pid 4242)"${2}"#);
            std::fs::write(&dest, text.as_bytes()).unwrap();
        }
    }
}

/// Both examples, one after the other, in one project: the sample's recipe.
async fn produce_sample(project: &Path) {
    run_example!(full_workflow, project);
    run_example!(dual_engine, project);
}

#[tokio::test]
async fn the_committed_sample_matches_what_the_examples_produce_now() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    produce_sample(&project).await;
    let sample = PathBuf::from(SAMPLE);
    if std::env::var_os("BMAD_UPDATE_SAMPLE").is_some() {
        copy_project(&project, &sample);
    }
    let now = normalised(&project);
    let committed = normalised(&sample);

    let mut problems = Vec::new();
    let now_paths: BTreeSet<&String> = now.keys().collect();
    let committed_paths: BTreeSet<&String> = committed.keys().collect();
    for p in committed_paths.difference(&now_paths) {
        problems.push(format!("  {p}: committed, no longer produced"));
    }
    for p in now_paths.difference(&committed_paths) {
        problems.push(format!("  {p}: produced now, not in the committed sample"));
    }
    for (path, text) in &committed {
        if let Some(produced) = now.get(path) {
            if produced != text {
                problems.push(describe_difference(path, text, produced));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "the committed .bmad-task.example/ no longer matches what the server writes \
         (ids, times and the project path ignored):\n{}\n\nIf the change is intended, refresh \
         it with `BMAD_UPDATE_SAMPLE=1 cargo test --test it examples::the_committed_sample`, \
         update .bmad-task.example/README.md and the jq outputs in docs/jq.md, and commit.",
        problems.join("\n")
    );
    // The sample is what users and the recipes in docs/jq.md read: it has both sessions.
    assert_eq!(
        committed
            .keys()
            .filter(|p| p.starts_with(".bmad-task/session-"))
            .count(),
        2
    );
}

#[test]
fn the_sample_readme_explains_every_kind_of_file_in_the_sample() {
    let sample = Path::new(SAMPLE);
    let readme = std::fs::read_to_string(sample.join("README.md")).unwrap();
    let files = full_workflow::common::files_under(sample);
    assert!(files.len() > 20, "{files:?}");
    let stamped = Regex::new(r"^([a-z]+)_([a-z_]+)_\d{8}T\d{12}Z\.(md|json)$").unwrap();
    for f in files.iter().filter(|f| *f != "README.md") {
        let name = f.rsplit('/').next().unwrap();
        // The name as the README writes it: with `<id>` for the session id, or the kind
        // of a temp file (`claude_result`, `draft`, `answers`, …).
        let needle = if let Some(c) = stamped.captures(name) {
            format!("_{}_", &c[2])
        } else if name.starts_with("session-") {
            "session-<id>.json".to_string()
        } else if f.starts_with(".bmad/lessons/") {
            "<date>-<hex>.md".to_string()
        } else {
            name.to_string()
        };
        assert!(
            readme.contains(&needle),
            ".bmad-task.example/README.md does not explain {f} (looked for `{needle}`)"
        );
    }
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}
