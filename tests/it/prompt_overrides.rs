//! Role prompt overrides through the binary: the project's `.bmad/prompts/<role>.md` beats
//! the user's `$XDG_CONFIG_HOME/bmad-mcp/prompts/<role>.md`, which beats the built-in
//! prompt; the reply says which is in effect; a file that cannot be used refuses the call
//! with nothing changed, naming the file; `bmad-mcp prompts` lists and exports them.

use std::path::Path;

use serde_json::json;

use crate::support::{bin, command, connect_with, passing_prd, start_args, tree_digest, Era};

const PO_OVERRIDE: &str = "# Role: the team's Product Owner\n\nWrite a PRD for {{objective}} ({{task_name}}), in our house style.\n";

fn server(project: &Path, config: &Path) -> tokio::process::Command {
    let mut cmd = command(project);
    cmd.env("XDG_CONFIG_HOME", config);
    cmd
}

#[tokio::test]
async fn the_project_beats_the_user_who_beats_the_built_in_and_the_reply_says_which() {
    for era in [Era::Legacy, Era::Modern] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let config = dir.path().join("config");
        std::fs::create_dir_all(&project).unwrap();
        let user_prompts = config.join("bmad-mcp/prompts");
        std::fs::create_dir_all(&user_prompts).unwrap();
        let c = connect_with(era, server(&project, &config), &project).await;

        let v = c.ok(start_args(&project, "Build a todo app")).await;
        assert_eq!(v["role_prompt_source"], "built-in", "{era:?}");
        assert!(v["role_prompt"]
            .as_str()
            .unwrap()
            .contains("# Role: Product Owner"));

        std::fs::write(
            user_prompts.join("po.md"),
            PO_OVERRIDE.replace("team's", "user's"),
        )
        .unwrap();
        let v = c.ok(start_args(&project, "Build a chat app")).await;
        let user_file = user_prompts.join("po.md");
        assert_eq!(
            v["role_prompt_source"],
            format!("user file {}", user_file.display())
        );
        let prompt = v["role_prompt"].as_str().unwrap();
        assert!(
            prompt.starts_with("# Role: the user's Product Owner"),
            "{prompt}"
        );
        assert!(
            prompt.contains("Write a PRD for Build a chat app (build-a-chat-app)"),
            "placeholders are filled in an override too: {prompt}"
        );

        std::fs::create_dir_all(project.join(".bmad/prompts")).unwrap();
        std::fs::write(project.join(".bmad/prompts/po.md"), PO_OVERRIDE).unwrap();
        let v = c.ok(start_args(&project, "Build a wiki")).await;
        assert_eq!(v["role_prompt_source"], "project file .bmad/prompts/po.md");
        assert!(v["role_prompt"]
            .as_str()
            .unwrap()
            .starts_with("# Role: the team's Product Owner"));
        let sid = v["session_id"].clone();

        // Per role: the architect's prompt is still the built-in one, and `status` in a
        // writing state gives the prompt with its source.
        c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
            .await;
        let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
        assert_eq!(
            (&v["stage"], &v["role_prompt_source"]),
            (&json!("architect"), &json!("built-in"))
        );
        std::fs::write(user_prompts.join("architect.md"), "# Role: our architect\n").unwrap();
        let v = c.ok(json!({"action": "status", "session_id": sid})).await;
        assert_eq!(
            v["role_prompt_source"],
            format!("user file {}", user_prompts.join("architect.md").display())
        );
        assert_eq!(
            v["role_prompt"], "# Role: our architect\n",
            "no markers: the whole file"
        );
        c.close().await;
    }
}

#[tokio::test]
async fn an_override_that_cannot_be_used_refuses_the_call_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let config = dir.path().join("config");
    std::fs::create_dir_all(project.join(".bmad/prompts")).unwrap();
    let c = connect_with(Era::Modern, server(&project, &config), &project).await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let sid = v["session_id"].clone();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_prd()}))
        .await;

    // Not UTF-8 in the project's folder: `confirm` would hand over the architect.
    let bad = project.join(".bmad/prompts/architect.md");
    std::fs::write(&bad, b"# Role: caf\xe9\n").unwrap();
    let before = tree_digest(&project);
    let v = c
        .refused(
            json!({"action": "confirm", "session_id": sid}),
            "invalid_prompt",
        )
        .await;
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(".bmad/prompts/architect.md is not UTF-8 text"),
        "{message}"
    );
    assert!(message.contains("Nothing was changed"), "{message}");
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "the reply names the state"
    );
    assert_eq!(tree_digest(&project), before, "nothing was written");

    // A directory in the user's folder, for a new session: no session is created.
    std::fs::remove_file(&bad).unwrap();
    let user_po = config.join("bmad-mcp/prompts/po.md");
    std::fs::create_dir_all(&user_po).unwrap();
    let before = tree_digest(&project);
    let v = c
        .refused(start_args(&project, "Build a wiki"), "invalid_prompt")
        .await;
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("{} is a directory", user_po.display())),
        "{message}"
    );
    assert_eq!(tree_digest(&project), before, "no session was started");

    // Fixed: the call goes through.
    std::fs::remove_dir(&user_po).unwrap();
    let v = c.ok(json!({"action": "confirm", "session_id": sid})).await;
    assert_eq!(v["stage"], "architect");
    c.close().await;
}

#[test]
fn the_prompts_command_lists_the_file_in_effect_and_exports_the_built_in_ones() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("bmad-mcp/prompts")).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let run = |args: &[&str]| {
        let out = bin(&project)
            .args(args)
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (code, out, _) = run(&["prompts", "export", ".bmad/prompts"]);
    assert_eq!(code, Some(0), "{out}");
    for role in ["po", "architect", "sm", "dev", "review", "qa"] {
        let written =
            std::fs::read_to_string(project.join(format!(".bmad/prompts/{role}.md"))).unwrap();
        assert!(written.contains("<!-- section: role -->"), "{role}");
    }
    // Exported files are the built-in text: the project's copies now take effect.
    let (code, out, _) = run(&["prompts"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("  po         project   .bmad/prompts/po.md"),
        "{out}"
    );
    // Nothing is replaced without --force.
    let (code, _, err) = run(&["prompts", "export", ".bmad/prompts"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("already exist") && err.contains("--force"),
        "{err}"
    );
    let (code, _, _) = run(&["prompts", "export", ".bmad/prompts", "--force"]);
    assert_eq!(code, Some(0));

    std::fs::remove_file(project.join(".bmad/prompts/qa.md")).unwrap();
    std::fs::write(config.join("bmad-mcp/prompts/qa.md"), "# Role: QA\n").unwrap();
    std::fs::write(project.join(".bmad/prompts/dev.md"), "").unwrap();
    let (code, out, _) = run(&["prompts"]);
    assert_eq!(
        code,
        Some(1),
        "an unusable override fails the listing: {out}"
    );
    let user_qa = config.join("bmad-mcp/prompts/qa.md");
    assert!(
        out.contains(&format!("  qa         user      {}", user_qa.display())),
        "{out}"
    );
    assert!(
        out.contains("  dev        error     .bmad/prompts/dev.md is empty"),
        "{out}"
    );
    assert!(
        out.contains("  sm         project   .bmad/prompts/sm.md"),
        "{out}"
    );
}

/// A read-only call is never refused for an optional file it merely consults. With the
/// user's config folder unusable (a file where the folder should be) and then the project's
/// override a FIFO, `status` still answers the session's state, naming the problem in a
/// notice, and `list` answers as ever.
#[tokio::test]
async fn status_and_list_answer_despite_an_override_that_cannot_be_used() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let config = dir.path().join("config");
    std::fs::create_dir_all(&project).unwrap();
    let c = connect_with(Era::Modern, server(&project, &config), &project).await;
    let v = c.ok(start_args(&project, "Build a todo app")).await;
    let sid = v["session_id"].clone();

    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("bmad-mcp"), "not a folder").unwrap();
    let v = c.ok(json!({"action": "status", "session_id": sid})).await;
    assert_eq!(v["session"]["current_stage"], "po", "{v:#}");
    assert_eq!(v["state"], "generating", "{v:#}");
    assert!(v.get("error").is_none(), "{v:#}");
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("no role prompt") && notices.contains("bmad-mcp/prompts/po.md"),
        "{v:#}"
    );
    let v = c.ok(json!({"action": "list"})).await;
    assert_eq!(v["total"], 1, "{v:#}");

    #[cfg(unix)]
    {
        std::fs::remove_file(config.join("bmad-mcp")).unwrap();
        std::fs::create_dir_all(project.join(".bmad/prompts")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(project.join(".bmad/prompts/po.md"))
            .status()
            .unwrap();
        assert!(made.success());
        let v = c.ok(json!({"action": "status", "session_id": sid})).await;
        assert_eq!(v["state"], "generating", "{v:#}");
        assert!(
            v["notices"]
                .to_string()
                .contains(".bmad/prompts/po.md is a FIFO"),
            "{v:#}"
        );
    }
    c.close().await;
}
