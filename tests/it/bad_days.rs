//! A team's bad days, with real git: a bare remote and three clones, each with its own
//! identity and its own server (Lea leads the parent task; Ben and Cy take sprints as
//! stories). Ben's clone dies holding sprint 1 before it pushed anything: Cy is refused
//! naming the command that frees it, `bmad-mcp claims` lists who holds what since when
//! and from where, and Ben, from a new clone, takes his own claim over. Lea's `status`
//! (the model's, from the clone's last fetch refreshed in the background; hers at the
//! terminal, fetched) and `list` name both holders before anything is merged. Cy's clone dies too: Lea releases his
//! sprint at her terminal (refused from a pipe), the release is recorded with her name,
//! and the sprint can be claimed again. Then Lea and Ben send one PRD back on both clones:
//! the merge conflicts, the refusal names `bmad-mcp resolve`, and after Ben keeps Lea's
//! version the lesson of his discarded send-back is retired, not recalled.

use std::path::Path;

use serde_json::json;

use crate::support::terminal::run_in_terminal;
use crate::support::{bin, git, passing_architecture, passing_prd, to_approved_plan};
use crate::team_git::{clone_as, commit_all, git_may_fail, server};

const THREE_SPRINTS: &str = "# Sprint Plan\n\n## Sprint 1: Login\n- the form\n\n## Sprint 2: Logout\n- the button\n\n## Sprint 3: Profile\n- the page\n";

/// A command of the binary in `dir`, as a person types it with stdout piped: its exit
/// code and what it printed.
fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = bin(dir)
        .env_remove("BMAD_OWNER")
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The claims on the bare remote, by ref name.
fn remote_claims(origin: &Path) -> String {
    git(
        origin,
        &[
            "for-each-ref",
            "--format=%(refname) %(contents:subject)",
            "refs/bmad/claims/",
        ],
    )
}

#[tokio::test]
async fn a_dead_clone_s_sprint_is_listed_taken_over_by_its_owner_and_released_by_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let origin = root.join("origin.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
    let lea = root.join("lea");
    clone_as(&origin, &lea, "Lea Stone", "lea@example.org");
    git(&lea, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    std::fs::write(lea.join("README.md"), "the app\n").unwrap();
    assert_eq!(run(&lea, &["init"]).0, 0);
    commit_all(&lea, "first");
    git(&lea, &["push", "-q", "-u", "origin", "main"]);
    let l = server(&lea).await;
    let start = json!({"action": "start", "objective": "Add login, logout and a profile"});
    let documents = [
        passing_prd(),
        passing_architecture(),
        THREE_SPRINTS.to_string(),
    ];
    let (parent, task) = to_approved_plan(&l, start, &documents).await;
    commit_all(&lea, "Lea: the plan");
    git(&lea, &["push", "-q"]);
    let story = |sprint: u32| json!({"action": "start", "parent": task, "sprint": sprint});

    // Ben claims sprint 1, then his clone dies before it pushed anything.
    let ben = root.join("ben");
    clone_as(&origin, &ben, "Ben Okafor", "ben@example.org");
    let b = server(&ben).await;
    b.ok(story(1)).await;
    b.close().await;
    std::fs::remove_dir_all(&ben).unwrap();

    // Cy is refused, told who holds it and the command that frees it.
    let cy = root.join("cy");
    clone_as(&origin, &cy, "Cy Park", "cy@example.org");
    let c = server(&cy).await;
    let refused = c.refused(story(1), "sprint_taken").await;
    let m = refused["error"]["message"].as_str().unwrap();
    assert!(m.contains("by Ben Okafor <ben@example.org>"), "{m}");
    assert!(
        m.contains(&format!("`bmad-mcp claims release {task} 1`")),
        "{m}"
    );

    // The lead lists the claims: who, which sprint of which task, since when, from where.
    let (code, out) = run(&lea, &["claims"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 claim(s) on the remote `origin`, read now"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{task} sprint 1: Ben Okafor <ben@example.org> on branch `main` in {}, since ",
            ben.display()
        )),
        "{out}"
    );
    assert!(
        out.contains(" UTC, just now") || out.contains(" min ago"),
        "{out}"
    );

    // Ben, from a new clone with the same identity, takes his own claim over.
    let ben2 = root.join("ben-again");
    clone_as(&origin, &ben2, "Ben Okafor", "ben@example.org");
    let b = server(&ben2).await;
    let v = b.ok(story(1)).await;
    assert!(v["notices"].to_string().contains("taken over"), "{v:#}");
    let claims = remote_claims(&origin);
    assert!(
        claims.contains(&ben2.display().to_string()),
        "{claims}\n{:#}",
        v["notices"]
    );

    // Cy takes sprint 2. The model's status does not wait on the network: it gives this
    // clone's last fetch (the lead's `claims` above), says how old, and fetches again in the
    // background, so a status moments later names both holders before anything merged.
    c.ok(story(2)).await;
    let status = json!({"action": "status", "session_id": parent});
    let v = l.ok(status.clone()).await;
    let said = v["notices"].to_string();
    assert!(said.contains("sprint 1 (Login) by Ben Okafor"), "{v:#}");
    assert!(
        said.contains("Claimed on the remote `origin` (as of ")
            && said.contains(" ago, this clone's last fetch)"),
        "{v:#}"
    );
    let mut said = String::new();
    for _ in 0..100 {
        said = l.ok(status.clone()).await["notices"].to_string();
        if said.contains("sprint 2 (Logout) by Cy Park") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(said.contains("sprint 2 (Logout) by Cy Park"), "{said}");
    assert!(said.contains("sprint 1 (Login) by Ben Okafor"), "{said}");
    // The commands a person types fetch: `status` and the parent's row in `list`.
    let (_, out) = run(&lea, &["status", &task]);
    assert!(
        out.contains("Claimed on the remote `origin` (read now)"),
        "{out}"
    );
    assert!(out.contains("sprint 2 (Logout) by Cy Park"), "{out}");
    let (code, out) = run(&lea, &["list"]);
    assert_eq!(code, 0, "{out}");
    let row = out.lines().skip_while(|l| !l.contains(&task)).nth(1);
    let row = row.unwrap_or_default();
    assert!(
        row.contains("Claimed on the remote `origin` (read now)")
            && row.contains("sprint 1 (Login) by Ben Okafor")
            && row.contains("sprint 2 (Logout) by Cy Park"),
        "{out}"
    );

    // Cy's clone dies too: the lead releases his sprint at her own terminal, not from a
    // pipe; the release names her, and the sprint is free for anyone.
    c.close().await;
    std::fs::remove_dir_all(&cy).unwrap();
    let (code, _) = run(&lea, &["claims", "release", &task, "2"]);
    assert_eq!(code, 2, "refused without a terminal");
    assert!(remote_claims(&origin).contains("/sprint-2"));
    let mut cmd = bin(&lea);
    cmd.env_remove("BMAD_OWNER")
        .args(["claims", "release", &task, "2"]);
    let (code, out) = run_in_terminal(cmd, "Release it? [y/N] ", "y\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("by Cy Park <cy@example.org>"),
        "it shows whose: {out}"
    );
    assert!(out.contains("Released sprint 2"), "{out}");
    assert!(!remote_claims(&origin).contains("/sprint-2"));
    let (_, out) = run(&lea, &["claims"]);
    assert!(
        out.contains(&format!(
            "{task} sprint 2: released by Lea Stone <lea@example.org>"
        )),
        "{out}"
    );
    b.ok(story(2)).await;

    // Lea and Ben send the same PRD back on both clones, each with their own words: the
    // merge conflicts on the task, and the refusal names `resolve`, not a file checkout.
    let v = l
        .ok(json!({"action": "start", "objective": "Add a settings page"}))
        .await;
    let (sid, other) = (v["session_id"].clone(), v["task_name"].clone());
    let other = other.as_str().unwrap();
    let on = |sid: &serde_json::Value, mut args: serde_json::Value| {
        args["session_id"] = sid.clone();
        args
    };
    let prd = json!({"action": "submit", "claude_result": passing_prd()});
    l.ok(on(&sid, prd)).await;
    commit_all(&lea, "Lea: a settings page");
    git(&lea, &["push", "-q"]);
    commit_all(&ben2, "Ben: sprints 1 and 2");
    git(&ben2, &["pull", "-q", "--no-edit"]);
    let words = [
        (&l, &lea, "Name the users first."),
        (&b, &ben2, "Say which browsers the settings page supports."),
    ];
    for (c, dir, said) in words {
        c.ok(on(&sid, json!({"action": "reject", "feedback": said})))
            .await;
        commit_all(dir, said);
    }
    git(&lea, &["push", "-q"]);
    assert!(
        !git_may_fail(&ben2, &["pull", "-q", "--no-edit"]),
        "the task conflicts"
    );
    let v = b
        .refused(on(&sid, json!({"action": "status"})), "session_conflicted")
        .await;
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains(&format!("`bmad-mcp resolve {other} --theirs`")),
        "{m}"
    );
    assert!(!m.contains("git checkout --ours"), "{m}");

    // Ben keeps Lea's version: the lesson his discarded send-back taught is retired with
    // it, and only Lea's is recalled.
    let (code, out) = run(&ben2, &["resolve", other, "--theirs"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("Retired 1 lesson(s) learnt on the other version"),
        "{out}"
    );
    git(&ben2, &["commit", "-q", "--no-edit"]);
    let (_, active) = run(&ben2, &["lessons", "list"]);
    assert!(active.starts_with("1 lesson(s)"), "{active}");
    assert!(active.contains("Name the users first"), "{active}");
    assert!(!active.contains("browsers"), "{active}");
    let (_, all) = run(&ben2, &["lessons", "list", "--all"]);
    assert!(
        all.contains("browsers") && all.contains("(retired)"),
        "{all}"
    );
    b.close().await;
    l.close().await;
}
