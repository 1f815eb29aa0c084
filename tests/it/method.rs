//! The BMAD method as its users install it: the pinned `bmad-method` package (installed by
//! `./scripts/test` into `target/npm/bmad-method`) runs its own installer, offline and
//! non-interactively, into throw-away projects for Claude Code, Codex and Cursor; the
//! server must then give each stage the persona of the right agent (facts, never the
//! skill's activation steps), layer the team's and the person's customizations in the
//! method's order, honour the method's languages, place a confirmed PRD where the method's
//! own skills look for it, and list the installed skills as MCP prompts. A damaged install
//! is said in notices, never a failed call.
//!
//! Without the package (`target/npm/bmad-method.skipped` says why) each test prints that
//! reason and reports itself skipped; a bare `cargo test` ignores them.

use std::path::Path;
use std::process::Command;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use rmcp::ClientHandler;
use serde_json::{json, Value};

use crate::support::method::{install, installer, PINNED};
use crate::support::{bin, command, connect, handshake, passing_prd, start_args, Client, Era};

/// What never belongs in a role prompt: the steps of a skill's activation script.
const ACTIVATION: [&str; 5] = [
    "uv run",
    "Stop and wait",
    "{agent.menu}",
    "resolve_customization",
    "On Activation",
];

/// A value of an agent's installed `customize.toml`, read here with a TOML parser.
fn customized(project: &Path, folder: &str, agent: &str, key: &str) -> String {
    let path = project.join(format!("{folder}/{agent}/customize.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    table["agent"][key].as_str().unwrap().to_string()
}

fn prompt_of(v: &Value) -> &str {
    v["role_prompt"].as_str().expect("a role prompt")
}

fn notices(v: &Value) -> String {
    v["notices"].to_string()
}

fn assert_no_activation(prompt: &str, what: &str) {
    for step in ACTIVATION {
        assert!(!prompt.contains(step), "{what}: `{step}` in\n{prompt}");
    }
}

/// `bmad-mcp prompts` in `project`.
fn prompts_listing(project: &Path) -> String {
    let out = bin(project).arg("prompts").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn each_tools_install_gives_each_stage_its_agents_persona_and_no_activation_step() {
    let Some(installer) = installer() else { return };
    for (tool, folder) in [
        ("claude-code", ".claude/skills"),
        ("codex", ".agents/skills"),
        ("cursor", ".agents/skills"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        install(&installer, &project, tool);
        let c = connect(Era::Legacy, &project).await;

        let v = c.ok(start_args(&project, "Build a todo app")).await;
        let pm = format!("{folder}/bmad-agent-pm/customize.toml");
        assert_eq!(
            v["role_prompt_source"],
            format!("bmad-method file {pm}"),
            "{tool}"
        );
        let p = prompt_of(&v);
        assert!(
            p.starts_with("# Role: Product Owner"),
            "{tool}: the contract stays: {p}"
        );
        assert!(p.contains("`prd_draft`"), "{tool}: the output keys stay");
        assert!(p.contains("📋 John, Product Manager"), "{tool}: {p}");
        for key in ["role", "identity", "communication_style"] {
            let value = customized(&project, folder, "bmad-agent-pm", key);
            assert!(p.contains(&value), "{tool}: {key} `{value}` in {p}");
        }
        assert!(p.contains("User value first; technical feasibility is a constraint."));
        assert_no_activation(p, tool);
        // The method's settings: the document's language and the human's.
        assert!(
            p.contains("Write the document in French (the method's `document_output_language`)"),
            "{tool}: {p}"
        );
        assert!(p.contains("Speak to Ada in French"), "{tool}: {p}");
        assert!(
            p.len() < 16 * 1024,
            "{tool}: the prompt stays small ({} bytes)",
            p.len()
        );

        let sid = v["session_id"].clone();
        let task = v["task_name"].as_str().unwrap().to_string();
        c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
            .await;
        let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
        let architect = format!("{folder}/bmad-agent-architect/customize.toml");
        assert_eq!(
            v["role_prompt_source"],
            format!("bmad-method file {architect}")
        );
        let p = prompt_of(&v);
        assert!(p.contains("Winston, System Architect"), "{tool}: {p}");
        let role = customized(&project, folder, "bmad-agent-architect", "role");
        assert!(p.contains(&role), "{tool}: {p}");
        assert_no_activation(p, tool);
        confirmed_prd_is_findable(&project, &task, &v);

        // The other stages, as the terminal lists them: the developer plays them in 6.12.
        let listing = prompts_listing(&project);
        let header = format!("The BMAD method {PINNED} is installed here for {tool} (29 skills).");
        assert!(listing.contains(&header), "{listing}");
        let dev = format!("{folder}/bmad-agent-dev/customize.toml");
        for stage in ["sm", "dev", "review", "qa"] {
            let line = listing
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{stage} ")))
                .unwrap_or_else(|| panic!("{stage} in {listing}"));
            assert!(line.contains(&dev), "{tool}: {line}");
        }
        assert!(
            listing.contains("played by bmad-agent-dev, 💻 Amelia"),
            "{listing}"
        );
        c.close().await;
    }
}

/// The confirmed PRD is where the method's epics-and-stories skill looks for it:
/// `{planning_artifacts}/*prd*.md`, the folder read from the install's own config.
fn confirmed_prd_is_findable(project: &Path, task: &str, confirm_reply: &Value) {
    let config = std::fs::read_to_string(project.join("_bmad/bmm/config.yaml")).unwrap();
    let folder = config
        .lines()
        .find_map(|l| l.strip_prefix("planning_artifacts: "))
        .expect("planning_artifacts in the install's config")
        .trim_matches('"')
        .replace("{project-root}/", "");
    let found: Vec<String> = std::fs::read_dir(project.join(&folder))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("prd") && n.ends_with(".md"))
        .collect();
    assert_eq!(found, [format!("prd-{task}.md")], "in {folder}");
    let copy = std::fs::read_to_string(project.join(&folder).join(&found[0])).unwrap();
    let source = copy
        .strip_prefix("<!-- A copy of ")
        .and_then(|r| r.split(',').next())
        .expect("the copy names its original");
    let original = std::fs::read_to_string(project.join(source)).unwrap();
    assert!(original.contains("## "), "the stage's document: {source}");
    assert!(copy.ends_with(&original), "the confirmed document whole");
    let said = notices(confirm_reply);
    assert!(
        said.contains(&format!("{folder}/prd-{task}.md")) && said.contains("BMAD method"),
        "the confirm reply says where: {said}"
    );
}

/// A client that says it is Claude Code, which has `.claude/skills` as slash commands.
#[derive(Clone, Default)]
struct ClaudeCode;

impl ClientHandler for ClaudeCode {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("claude-code", "2.1.0"),
        )
    }
}

async fn prompt_names(c: &rmcp::Peer<rmcp::RoleClient>) -> Vec<(String, String)> {
    c.list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| (p.name, p.description.unwrap_or_default()))
        .collect()
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn the_installed_skills_are_prompts_with_the_manifests_words_but_not_twice_in_claude_code() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    for tool in ["codex", "claude-code"] {
        let project = dir.path().join(tool);
        install(&installer, &project, tool);
        let manifest = csv::Reader::from_path(project.join("_bmad/_config/skill-manifest.csv"))
            .unwrap()
            .records()
            .map(|r| r.unwrap())
            .map(|r| (r[1].to_string(), r[2].to_string()))
            .collect::<Vec<_>>();
        let c = connect(Era::Legacy, &project).await;
        let listed = prompt_names(c.peer()).await;
        for skill in [
            "bmad-prd",
            "bmad-agent-pm",
            "bmad-sprint-planning",
            "bmad-retrospective",
        ] {
            let (_, about) = listed
                .iter()
                .find(|(n, _)| n == skill)
                .unwrap_or_else(|| panic!("{tool}: {skill} in {listed:?}"));
            let (_, description) = manifest.iter().find(|(n, _)| n == skill).unwrap();
            let head: String = description.chars().take(150).collect();
            assert!(about.starts_with(&head), "{tool}: {about} / {description}");
        }
        let got = c
            .peer()
            .get_prompt(rmcp::model::GetPromptRequestParams::new("bmad-prd"))
            .await
            .unwrap();
        let text = &got.messages[0].content.as_text().unwrap().text;
        assert!(text.contains("Follow this skill"), "{text}");
        c.close().await;

        // Claude Code has `.claude/skills` as its own slash commands: not listed again.
        let (transport, _) = TokioChildProcess::builder(command(&project))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let cc = handshake(ClaudeCode, Era::Legacy, transport).await;
        let names = prompt_names(cc.peer()).await;
        let has_prd = names.iter().any(|(n, _)| n == "bmad-prd");
        assert_eq!(has_prd, tool != "claude-code", "{tool}: {names:?}");
        assert!(
            names.iter().any(|(n, _)| n == "start"),
            "the server's own stay"
        );
        let _ = cc.cancel().await;
    }
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn the_teams_then_the_persons_customizations_make_the_persona() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    install(&installer, &project, "claude-code");
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::write(
        project.join("docs/standards.md"),
        "Every screen works offline.\n",
    )
    .unwrap();
    let custom = project.join("_bmad/custom");
    std::fs::write(
        custom.join("bmad-agent-pm.toml"),
        "[agent]\ncommunication_style = \"Team style: terse.\"\nprinciples = [\"Team principle: ship weekly.\"]\npersistent_facts = [\"Our org is AWS-only.\", \"file:{project-root}/docs/standards.md\"]\n",
    )
    .unwrap();
    std::fs::write(
        custom.join("bmad-agent-pm.user.toml"),
        "[agent]\ncommunication_style = \"Personal style: warm.\"\n",
    )
    .unwrap();
    let c = connect(Era::Legacy, &project).await;
    let p = prompt_of(&c.ok(start_args(&project, "Build a todo app")).await).to_string();
    assert!(
        p.contains("Communication style: Personal style: warm."),
        "{p}"
    );
    assert!(!p.contains("Team style"), "the person's wins: {p}");
    let base = p
        .find("User value first")
        .expect("the base principles stay");
    let team = p.find("Team principle: ship weekly.").expect("appended");
    assert!(base < team, "appended after the base's");
    assert!(p.contains("Our org is AWS-only."), "{p}");
    assert!(
        p.contains("From `docs/standards.md`:\n    Every screen works offline."),
        "a file: fact, read: {p}"
    );
    assert_no_activation(&p, "customized");
    let listing = prompts_listing(&project);
    assert!(
        listing.contains("persona from .claude/skills/bmad-agent-pm/customize.toml, then _bmad/custom/bmad-agent-pm.toml, then _bmad/custom/bmad-agent-pm.user.toml"),
        "{listing}"
    );

    std::fs::remove_file(custom.join("bmad-agent-pm.user.toml")).unwrap();
    let p = prompt_of(&c.ok(start_args(&project, "Build a chat app")).await).to_string();
    assert!(p.contains("Communication style: Team style: terse."), "{p}");

    // The team's menu decides who plays a stage: give the analyst the PRD, ahead of the PM
    // in the manifest's order.
    std::fs::write(
        custom.join("bmad-agent-analyst.toml"),
        "[[agent.menu]]\ncode = \"PRD\"\ndescription = \"Write the PRD\"\nskill = \"bmad-prd\"\n",
    )
    .unwrap();
    let v = c.ok(start_args(&project, "Build a wiki")).await;
    assert_eq!(
        v["role_prompt_source"],
        "bmad-method file .claude/skills/bmad-agent-analyst/customize.toml"
    );
    assert!(prompt_of(&v).contains("Mary, Business Analyst"));
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn a_damaged_install_is_said_in_notices_and_the_workflow_runs_on() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    install(&installer, &project, "codex");
    std::fs::write(
        project.join("_bmad/_config/manifest.yaml"),
        "ides: [codex\n",
    )
    .unwrap();
    std::fs::write(project.join("_bmad/custom/bmad-agent-pm.toml"), "[agent\n").unwrap();
    std::fs::remove_dir_all(project.join(".agents/skills/bmad-agent-architect")).unwrap();
    let c = connect(Era::Legacy, &project).await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let said = notices(&v);
    assert!(
        said.contains("_bmad/_config/manifest.yaml is not YAML"),
        "{said}"
    );
    assert!(
        said.contains("_bmad/custom/bmad-agent-pm.toml is not TOML"),
        "{said}"
    );
    assert!(
        said.contains("bmad-agent-architect"),
        "the missing skill named: {said}"
    );
    // Found by the folders all the same, without the broken override.
    assert!(prompt_of(&v).contains("John, Product Manager"));
    let sid = v["session_id"].clone();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(
        v["role_prompt_source"], "built-in",
        "no agent offers the architecture now"
    );
    c.close().await;
}

#[test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
fn the_servers_tool_table_is_the_installers() {
    let Some(installer) = installer() else { return };
    let out = Command::new(&installer)
        .args(["install", "--list-tools"])
        .env("npm_config_offline", "true")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let listed: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let folder = cols.last()?;
            folder.ends_with("/skills").then(|| {
                (
                    cols[0].trim_start_matches('*').to_string(),
                    folder.to_string(),
                )
            })
        })
        .collect();
    let ours: Vec<(String, String)> = bmad_mcp::bmad_method::tools::TOOLS
        .iter()
        .map(|(t, f)| (t.to_string(), f.to_string()))
        .collect();
    assert_eq!(listed, ours);
}

#[tokio::test]
async fn a_v4_install_keeps_its_persona() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    std::fs::create_dir_all(project.join(".bmad-core/agents")).unwrap();
    std::fs::write(
        project.join(".bmad-core/agents/po.md"),
        "# Sarah\n\nYou are Sarah, a meticulous Product Owner.\n",
    )
    .unwrap();
    let c: Client = connect(Era::Legacy, project).await;
    let v = c.ok(start_args(project, "Build a todo app")).await;
    assert_eq!(
        v["role_prompt_source"],
        "bmad-method file .bmad-core/agents/po.md"
    );
    assert!(prompt_of(&v).contains("You are Sarah, a meticulous Product Owner."));
    assert!(v["notices"].is_null(), "{v:#}");
    c.close().await;
}

#[tokio::test]
#[ignore = "needs the pinned bmad-method package: run ./scripts/test"]
async fn the_copy_for_the_methods_skills_can_be_turned_off_and_never_replaces_a_humans_file() {
    let Some(installer) = installer() else { return };
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    install(&installer, &project, "cursor");
    let planning = project.join("_bmad-output/planning-artifacts");
    let team = project.join("_bmad/custom/config.toml");
    let mut config = std::fs::read_to_string(&team).unwrap();
    config.push_str("\n[bmad-mcp]\nplanning_copies = false\n");
    std::fs::write(&team, config).unwrap();
    let c = connect(Era::Legacy, &project).await;
    let confirm = |objective: &'static str| {
        let c = &c;
        let project = &project;
        async move {
            let v = c.ok(start_args(project, objective)).await;
            let sid = v["session_id"].clone();
            c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
                .await;
            let task = v["task_name"].as_str().unwrap().to_string();
            (
                task,
                c.ok(json!({"action": "confirm", "session_id": sid})).await,
            )
        }
    };
    let (task, v) = confirm("Build a todo app").await;
    assert!(
        !planning.join(format!("prd-{task}.md")).exists(),
        "turned off"
    );
    assert!(!notices(&v).contains("planning-artifacts"), "{v:#}");

    // The person turns it back on; a file of the copy's name that a human wrote stays.
    std::fs::write(
        project.join("_bmad/custom/config.user.toml"),
        "[bmad-mcp]\nplanning_copies = true\n",
    )
    .unwrap();
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(planning.join("prd-build-a-chat-app.md"), "# Our own PRD\n").unwrap();
    let (task, v) = confirm("Build a chat app").await;
    assert_eq!(task, "build-a-chat-app");
    let kept = std::fs::read_to_string(planning.join("prd-build-a-chat-app.md")).unwrap();
    assert_eq!(kept, "# Our own PRD\n");
    assert!(
        notices(&v).contains("is not a copy the server wrote"),
        "{v:#}"
    );
    // Nor one the server cannot read: a UTF-16 file from another editor, a link.
    let utf16 = [0xff, 0xfe, b'#', 0, b' ', 0, b'P', 0];
    std::fs::write(planning.join("prd-build-a-blog.md"), utf16).unwrap();
    std::fs::write(dir.path().join("elsewhere.md"), "# Linked\n").unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("elsewhere.md"),
        planning.join("prd-build-a-shop.md"),
    )
    .unwrap();
    for (objective, name) in [
        ("Build a blog", "prd-build-a-blog.md"),
        ("Build a shop", "prd-build-a-shop.md"),
    ] {
        let (_, v) = confirm(objective).await;
        assert!(notices(&v).contains("could not be read"), "{v:#}");
        assert!(notices(&v).contains("left as it is"), "{v:#}");
        let path = planning.join(name);
        assert!(
            name.ends_with("shop.md") == path.symlink_metadata().unwrap().is_symlink(),
            "{name} kept as it was"
        );
    }
    assert_eq!(
        std::fs::read(planning.join("prd-build-a-blog.md")).unwrap(),
        utf16
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("elsewhere.md")).unwrap(),
        "# Linked\n"
    );
    c.close().await;
}
