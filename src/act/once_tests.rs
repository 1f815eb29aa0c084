//! A call reads the BMAD install and its session once: a full task on a project with the
//! method installed, from `start` to QA, each call's opens of the install's files counted
//! (`bmad_method::opened`); none is opened twice in a call, and every call that hands over
//! a role prompt or writes the method's files reads the install (its manifest once; the
//! manifest is written again before each call, so that no reading kept from an earlier
//! call stands for it); each change reads its session file once (`store::SESSION_READS`),
//! development too, where the parent's stories are looked for.

use std::path::Path;

use crate::bmad_method::manifest::MANIFEST;
use crate::bmad_method::opened;
use crate::files::DefaultRoot;
use crate::policy::Watched;
use crate::settings::Acting;
use crate::store::{SessionKey, Store};
use crate::workflow::{Action, Command, Decision, Stage, Track};

use super::{act, start, Change, Handover, Start};

const MANIFEST_TEXT: &str = "installation:\n  version: 6.12.0\nides:\n  - claude-code\n";

/// A v6 install as its installer leaves it, in the parts the server reads: the manifests,
/// three agents, the skills their menus name (the code review with its review prompts, the
/// retrospective), the method's settings with its folders, and the team's switches.
fn install(root: &Path) {
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(MANIFEST, MANIFEST_TEXT);
    let skills = [
        ("bmad-agent-pm", Some(("John", "bmad-prd"))),
        (
            "bmad-agent-architect",
            Some(("Winston", "bmad-architecture")),
        ),
        ("bmad-agent-dev", Some(("Amelia", "bmad-build"))),
        ("bmad-prd", None),
        ("bmad-code-review", None),
        ("bmad-retrospective", None),
    ];
    let mut csv = String::from("canonicalId,name,description,module,path\n");
    for (name, agent) in skills {
        csv.push_str(&format!(
            "\"{name}\",\"{name}\",\"Does {name}.\",\"bmm\",\"x\"\n"
        ));
        let toml = match agent {
            Some((who, skill)) => format!(
                "[agent]\nname = \"{who}\"\n[[agent.menu]]\ncode = \"A\"\nskill = \"{skill}\"\n"
            ),
            None => "[workflow]\nname = \"w\"\n".to_string(),
        };
        write(&format!(".claude/skills/{name}/customize.toml"), &toml);
    }
    write("_bmad/_config/skill-manifest.csv", &csv);
    for prompt in ["edge-case-hunter.md", "verification-gap.md"] {
        write(
            &format!(".claude/skills/bmad-code-review/review-prompts/{prompt}"),
            "Look.\n",
        );
    }
    write(
        "_bmad/bmm/config.yaml",
        "user_name: Ada\nplanning_artifacts: '{project-root}/_bmad-output/planning-artifacts'\noutput_folder: '{project-root}/_bmad-output'\n",
    );
    write(
        "_bmad/custom/config.toml",
        "[bmad-mcp]\nplanning_copies = true\n",
    );
}

/// A scored stage's document with every section it requires, above the gate.
fn passing(stage: Stage) -> String {
    let doc = crate::workflow::sections::filled(stage.role(), stage.sections());
    serde_json::json!({stage.document_fields()[0]: doc, "quality_score": 93}).to_string()
}

fn submit(text: &str) -> Command {
    Command::Submit {
        stage: None,
        claude_result: Some(text.to_string()),
        codex_result: None,
        document_file: None,
    }
}

fn confirm() -> Command {
    Command::Confirm {
        action: Action::Confirm,
        note: None,
        answers: Default::default(),
    }
}

/// The install's files `what` opened: none twice, and the manifest once when `reads`; the
/// session files read: one.
fn read_once(what: &str, reads: bool) {
    let sessions = crate::store::SESSION_READS.with(|n| n.replace(0));
    assert!(sessions <= 1, "{what} read the session {sessions} times");
    let counts = opened::counts();
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "{what} opened again: {twice:?}");
    let manifest = counts.get(MANIFEST).copied().unwrap_or(0);
    assert_eq!(manifest, usize::from(reads), "{what}: {counts:?}");
    opened::clear();
}

/// The calls of the task after `start`, each with whether it needs the install (a role
/// prompt, the method's files).
fn calls() -> Vec<(&'static str, Command, bool)> {
    let review = "# Review\n\n## Edge Cases\nNo findings.\n\n## Verification Gaps\nNo findings.\n\n## Blind Pass\nNo findings.\n\n## Acceptance Audit\nNo findings.\n\nReview Status: Pass\n";
    let plan = "# Plan\n## Sprint 1: Core\n- a\n## Sprint 2: UI\n- b\n";
    let approve = Command::Approve {
        scope: None,
        note: None,
    };
    vec![
        // A PRD and an architecture are checked for the sections of the install's templates.
        ("submit po", submit(&passing(Stage::Po)), true),
        ("confirm po", confirm(), true),
        ("submit architect", submit(&passing(Stage::Architect)), true),
        ("confirm architect", confirm(), true),
        ("submit sm", submit(plan), false),
        ("approve", approve, true),
        ("submit dev", submit("# Report\nDone.\n"), true),
        ("submit review", submit(review), true),
        (
            "submit qa",
            submit("# QA\nIntent: met\nQuality Score: 90/100\n"),
            true,
        ),
    ]
}

#[test]
fn every_call_of_a_task_reads_the_install_and_its_session_once() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path());
    let store = Store::new(
        DefaultRoot {
            source_name: "test",
            value: dir.path().display().to_string(),
        },
        Acting::default(),
    );
    opened::clear();
    crate::store::SESSION_READS.with(|n| n.set(0));
    let task = Start {
        objective: "Build a todo app",
        engines: None,
        track: Track::Full,
        story: None,
    };
    let started = start(&store, None, task).unwrap();
    assert!(started.prompt.agent.is_some(), "the PM's persona");
    read_once("start", true);
    let key = SessionKey::Id(started.session.session_id.clone());
    for (what, command, reads) in calls() {
        // Written again, so that no reading an earlier call kept (`bmad_method::once`)
        // stands for this call's: each call that needs the install reads it.
        std::fs::write(dir.path().join(MANIFEST), MANIFEST_TEXT).unwrap();
        let change = Change {
            command,
            decision: Decision::by_host(None),
            handover: Handover::Prompt,
        };
        let done = act(&store, None, &key, change, &Watched::none())
            .unwrap_or_else(|(e, _)| panic!("{what}: {e}"));
        let sessions = crate::store::SESSION_READS.with(|n| n.get());
        assert_eq!(sessions, 1, "{what} reads its session");
        read_once(what, reads);
        if what == "approve" {
            let status = "_bmad-output/implementation-artifacts/sprint-status.yaml";
            assert!(dir.path().join(status).is_file(), "the method's files");
        }
        if what == "submit qa" {
            assert_eq!(done.session.current_state.id(), "completed");
        }
    }
}
