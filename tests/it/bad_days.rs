//! A team's bad days, with real git: a bare remote and three clones, each with its own
//! identity and its own server (Lea leads the parent task; Ben and Cy take sprints as
//! stories). Ben's clone dies holding sprint 1 before it pushed anything: Cy is refused
//! naming the command that frees it, `bmad-mcp claims` lists who holds what since when
//! and from where, and Ben, from a new clone, takes his own claim over. Lea's `status`
//! names both holders before anything is merged. Cy's clone dies too: Lea releases his
//! sprint at her terminal (refused from a pipe), the release is recorded with her name,
//! and the sprint can be claimed again.

use std::path::Path;

use serde_json::json;

use crate::support::terminal::run_in_terminal;
use crate::support::{bin, git, passing_architecture, passing_prd, to_approved_plan};
use crate::team_git::{clone_as, commit_all, server};

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

    // Cy takes sprint 2; the lead's status names both holders before anything merged.
    c.ok(story(2)).await;
    let v = l
        .ok(json!({"action": "status", "session_id": parent}))
        .await;
    let said = v["notices"].to_string();
    assert!(said.contains("sprint 1 (Login) by Ben Okafor"), "{v:#}");
    assert!(said.contains("sprint 2 (Logout) by Cy Park"), "{v:#}");
    let (_, out) = run(&lea, &["status", &task]);
    assert!(
        out.contains("Claimed on the remote `origin` (read now)"),
        "{out}"
    );
    assert!(out.contains("sprint 2 (Logout) by Cy Park"), "{out}");

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
    b.close().await;
    l.close().await;
}
