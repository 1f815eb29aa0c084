//! Reviewing on the dashboard as a person does, in headless Chromium: each earlier round
//! named by what it was and what answered it (the current submission is not one), the
//! words that answered it beside it, "what changed since you last read it" remembered by
//! the browser across a reload and a visit elsewhere, the keys to the next and previous
//! change, the audit naming who decided and on which draft, the printable record, a drift
//! notice when a saved document is edited, and a lesson retired and restored on the page
//! (recorded in its file with who decided, and no longer recalled meanwhile). The page is
//! also walked at a phone's width. Comments on lines and on the whole document come back
//! as threads against the next version. One page serves every worktree of the clone. And a
//! task walks from its PRD to QA with every decision taken on the page. Screenshots of the
//! main views go to `target/dashboard/` (`scripts/screenshots` copies them to docs/).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::dash::Dash;
use crate::support::webdriver::{Browser, CHROMEDRIVER, CHROMIUM};
use crate::support::{
    connect, document, git, last_entry, passing_architecture, read_json, scored, start_args, Era,
    PRD_SECTIONS, ROOT,
};

fn prd(version: &str) -> String {
    let doc =
        document("PRD", &PRD_SECTIONS).replace("What the Executive Summary section says.", version);
    scored("prd_draft", &doc, 95)
}

fn session(project: &Path, sid: &str) -> Value {
    read_json(&project.join(format!(".bmad-task/session-{sid}.json")))
}

/// Where the screenshot of a view is kept: `target/dashboard/<name>.png`.
fn shot(b: &Browser, name: &str) -> PathBuf {
    shot_at(b, name, "body")
}

/// [`shot`] with the element `css` selects scrolled to the top.
fn shot_at(b: &Browser, name: &str, css: &str) -> PathBuf {
    b.run(&format!(
        "window.scrollTo(0, 0); document.querySelector(\"{css}\").scrollIntoView(); return 0"
    ));
    let path = Path::new(ROOT).join(format!("target/dashboard/{name}.png"));
    b.screenshot(&path);
    assert!(
        std::fs::metadata(&path).unwrap().len() > 5_000,
        "a real picture: {}",
        path.display()
    );
    path
}

fn count(b: &Browser, css: &str) -> Value {
    b.run(&format!(
        "return document.querySelectorAll(\"{css}\").length"
    ))
}

const ANA: &str = "Ana Lima <ana@example.org> (the user, on the dashboard)";
const HOST: &str = "the assistant, for Ana Lima <ana@example.org> (not confirmed by them)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn rounds_are_named_and_the_page_remembers_what_the_reviewer_read() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    git(&project, &["config", "user.name", "Ana Lima"]);
    git(&project, &["config", "user.email", "ana@example.org"]);
    let c = connect(Era::Legacy, &project).await;
    let sid = c.ok(start_args(&project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("First version.")}))
        .await;
    let d = Dash::start(&project);
    let b = Browser::start();
    // A laptop's screen, as the screenshots show it.
    b.resize(1280, 800);
    b.goto(&d.url);
    b.click("a.task-link");
    b.find("#decision-doc h1");
    // The current submission is the document shown, not an earlier round.
    assert_eq!(count(&b, "details.round"), json!(0));
    assert_eq!(
        count(&b, "#since-decision"),
        json!(0),
        "nothing read before"
    );

    // Sent back on the page with a line comment; the next draft arrives while it is open.
    b.click("#comment-box summary");
    b.click(".line[data-n='3']");
    b.type_into("#comment-text", "This summary is too thin.");
    b.click("#add-comment");
    b.type_into("#feedback", "Say who the users are.");
    b.click("#reject");
    b.find("body[data-decided='reject']");
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("Second version, for teams of five.")}))
        .await;
    b.find("#round-po-0");
    let label = b.text("#round-po-0 summary");
    assert!(
        label.starts_with(&format!("draft 1, sent back by {ANA}: '"))
            && label.contains("Say who the users are."),
        "{label}"
    );
    assert_eq!(count(&b, "details.round"), json!(1), "draft 2 is shown");
    // The words that answered it, beside it, as written.
    b.click("#round-po-0 summary");
    let words = b.text("#round-po-0 .answered pre.words");
    assert!(
        words.contains("This summary is too thin.") && words.contains("Say who the users are."),
        "{words}"
    );
    // Draft 1 was on screen when draft 2 came: what changed since, open by itself.
    assert!(b.text("#since-decision summary").contains("(draft 1)"));
    assert_eq!(
        b.text("#since-decision tr.del td:nth-child(3)"),
        "First version."
    );
    assert_eq!(
        b.text("#since-decision tr.ins td:nth-child(3)"),
        "Second version, for teams of five."
    );
    shot_at(&b, "rounds", "#decision");
    // How long the page's read of the task takes with its rounds, as the browser sees it.
    let ms = b.run(&format!(
        "const t = performance.now(); return fetch('/dashboard/api/task?project=0&id={sid}').then(r => r.json()).then(() => performance.now() - t)"
    ));
    eprintln!("the task with two drafts read in {ms} ms");

    // n and p walk the changes of the diffs open on the page.
    let key = |k: &str| {
        b.run(&format!(
            "document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{k}'}})); return document.body.dataset.change"
        ))
    };
    let open_changes =
        b.run("return document.querySelectorAll('details[open] table.diff tr.del').length");
    assert!(open_changes.as_u64().unwrap() >= 2, "{open_changes}");
    let first = key("n");
    assert!(first.as_str().unwrap().starts_with("1/"), "{first}");
    assert!(key("n").as_str().unwrap().starts_with("2/"));
    assert!(key("p").as_str().unwrap().starts_with("1/"));
    assert_eq!(count(&b, "tr.current-change"), json!(1));

    // Reloaded, draft 2 is what was read: nothing to show since.
    b.run("location.reload()");
    b.find("#decision-doc h1");
    b.find("#round-po-0");
    assert_eq!(count(&b, "#since-decision"), json!(0));
    // The human reads other things; meanwhile the assistant sends draft 2 back and
    // draft 3 comes. Opened again, the page offers the diff from draft 2.
    b.click("#home");
    b.find("#tasks");
    c.ok(json!({"action": "reject", "session_id": sid, "feedback": "Name the platforms."}))
        .await;
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("Third version, on phones.")}))
        .await;
    b.click("a.task-link");
    assert!(b.text("#since-decision summary").contains("(draft 2)"));
    assert_eq!(
        b.text("#since-decision tr.del td:nth-child(3)"),
        "Second version, for teams of five."
    );
    let label = b.text("#round-po-0 summary");
    assert!(
        label.starts_with(&format!(
            "draft 2, sent back by {HOST}: 'Name the platforms.'"
        )),
        "{label}"
    );
    assert!(b
        .text("#round-po-1 summary")
        .starts_with("draft 1, sent back by Ana Lima"));

    // Confirmed on the page: the audit names who decided, through which channel, on which
    // draft.
    b.type_into("#note", "Good.");
    b.click("#confirm");
    b.find("body[data-decided='confirm']");
    let entry = last_entry(&session(&project, &sid));
    assert_eq!(entry["decider"]["name"], "Ana Lima", "{entry:#}");
    let digest = entry["digest"].as_str().unwrap();
    b.find("#audit");
    let row = "#audit tr:last-child";
    assert_eq!(b.text(&format!("{row} td.who")), ANA);
    assert_eq!(
        b.text(&format!("{row} td.version")),
        format!("draft 3 · sha256 {}", &digest[..12])
    );
    let sent_back = "#audit tr:nth-last-child(3) td.who";
    assert_eq!(b.text(sent_back), HOST);
    shot_at(&b, "audit", "#audit");

    // The printable record of the decided PRD.
    b.click("#print-link");
    b.find("#printed-po");
    assert_eq!(b.text("#printed-po .doc h1"), "PRD");
    let record = b.text("#printed-po table.record");
    assert!(
        record.contains("confirm") && record.contains(ANA) && record.contains("draft 3"),
        "{record}"
    );
    assert_eq!(
        count(&b, "#printed-po .doc h2 + p"),
        json!(PRD_SECTIONS.len())
    );
    shot(&b, "print");
    b.run("history.back()");
    b.find("#audit");

    drift_and_lessons(&b, &c, &project, &sid).await;

    // At a phone's width nothing runs off the side of the page.
    b.resize(390, 844);
    b.run("location.reload()");
    b.find("#lessons");
    let wide = b.run("return document.documentElement.scrollWidth");
    assert!(wide.as_u64().unwrap() <= 400, "the page is {wide} px wide");
    shot(&b, "phone");
    drop(b);
    c.close().await;
    d.stop();
}

/// The saved PRD edited by hand: a drift notice, on the page and on the PRD's section. A
/// lesson retired and restored on the page, each recorded with who decided.
async fn drift_and_lessons(b: &Browser, c: &crate::support::Client, project: &Path, sid: &str) {
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": passing_architecture()}))
        .await;
    b.find("#stage-architect");
    let prd_path = session(project, sid)["stages"]["po"]["artifact"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let file = project.join(&prd_path);
    let edited = std::fs::read_to_string(&file).unwrap() + "\nAn edit by hand.\n";
    std::fs::write(&file, edited).unwrap();
    b.find("#drift");
    let drift = b.text("#drift");
    assert!(
        drift.contains(&prd_path) && drift.contains("changed after a later stage relied on it"),
        "{drift}"
    );
    b.find("#stage-po .drifted");

    let v = c
        .ok(
            json!({"action": "remember", "session_id": sid, "category": "hallucination",
            "lesson": "The PRD named no platform; name the phones it runs on."}),
        )
        .await;
    let id = v["lessons"][0].as_str().unwrap().to_string();
    let row = format!("#lessons tr[data-lesson='{id}']");
    b.find(&row);
    assert_eq!(
        b.text(&format!("{row} td.source")),
        "written by the assistant (host)"
    );
    assert_eq!(b.text(&format!("{row} td.state")), "active");
    let recall = json!({"action": "recall", "cwd": project, "query": "which phone platform"});
    let recalled = |v: Value| v["lessons"].as_array().unwrap().contains(&json!(id));
    assert!(recalled(c.ok(recall.clone()).await));
    // Without the page's token, the decision is refused and nothing changes.
    let refused = b.run(&format!(
        "return fetch('/dashboard/api/lesson', {{method: 'POST', headers: {{'content-type': 'application/json'}}, body: JSON.stringify({{id: '{id}', change: 'retire'}})}}).then(r => r.status)"
    ));
    assert_eq!(refused, json!(403));
    let lesson_file = project.join(format!(".bmad/lessons/{id}.md"));
    assert!(!std::fs::read_to_string(&lesson_file)
        .unwrap()
        .contains("retired:"));

    b.click(&format!("{row} button.lesson-change"));
    b.find("body[data-decided='lesson-retire']");
    let text = std::fs::read_to_string(&lesson_file).unwrap();
    assert!(
        text.contains("\nretired: ") && text.contains(&format!("\ndecided: retired by {ANA} at ")),
        "{text}"
    );
    assert!(!recalled(c.ok(recall.clone()).await), "no longer recalled");
    b.find(&format!("{row}.retired"));
    assert!(b
        .text(&format!("{row} .decided"))
        .starts_with(&format!("retired by {ANA}")));
    shot_at(b, "lessons", "#lessons-card");
    b.click(&format!("{row} button.lesson-change"));
    b.find("body[data-decided='lesson-restore']");
    let text = std::fs::read_to_string(&lesson_file).unwrap();
    assert!(
        !text.contains("\nretired: ")
            && text.contains(&format!("\ndecided: restored by {ANA} at ")),
        "{text}"
    );
    assert!(recalled(c.ok(recall).await), "recalled again");
}

/// Comments on lines and on the whole document go back with a send-back, reach the next
/// role's prompt, and come back as threads against the next version: one marked resolved
/// there, "request changes" sends the one still open (quoted again) with no new word, and
/// the version after shows the resolved one as resolved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn comment_threads_carry_into_the_next_round_and_are_resolved_there() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let c = connect(Era::Legacy, &project).await;
    let sid = c.ok(start_args(&project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("First version.")}))
        .await;
    let d = Dash::start(&project);
    let b = Browser::start();
    b.resize(1280, 800);
    b.goto(&d.url);
    b.click("a.task-link");
    b.click("#comment-box summary");
    b.click(".line[data-n='3']");
    b.type_into("#comment-text", "Too thin.");
    b.click("#add-comment");
    b.type_into("#doc-comment-text", "Shorter overall.");
    b.click("#add-doc-comment");
    assert_eq!(
        b.text("#comments"),
        "Lines 3-3: Too thin.\nWhole document: Shorter overall."
    );
    assert_eq!(b.text("#open-count"), "(2 open comments)");
    let doc =
        b.run("return document.querySelector('#decision > p.muted').textContent.split(' · ')[0]");
    let doc = doc.as_str().unwrap().to_string();
    b.type_into("#feedback", "Say who the users are.");
    b.click("#reject");
    b.find("body[data-decided='reject']");
    let words = last_entry(&session(&project, &sid))["feedback"].clone();
    let words = words.as_str().unwrap();
    assert!(
        words.contains(&format!(
            "On line 3 of {doc}:\n> ## Executive Summary\nToo thin."
        )) && words.contains(&format!("On the whole of {doc}:\nShorter overall.")),
        "{words}"
    );
    let prompt = c.ok(json!({"action": "status", "session_id": sid})).await["role_prompt"].clone();
    assert!(
        prompt.as_str().unwrap().contains("Shorter overall."),
        "{prompt}"
    );

    // Draft 2: both comments are threads against it; one is resolved there.
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("Second version.")}))
        .await;
    b.find("#threads");
    assert_eq!(count(&b, "#threads .thread"), json!(2));
    assert_eq!(
        b.text("#threads [data-thread='0'] pre.quote"),
        "## Executive Summary"
    );
    assert_eq!(
        b.text("#threads [data-thread='0'] .thread-text"),
        "Too thin."
    );
    assert!(b
        .text("#threads [data-thread='1']")
        .contains("draft 1 · the whole document"));
    assert_eq!(b.text("#open-count"), "(2 open comments)");
    b.click("#threads [data-thread='1'] input.thread-resolved");
    assert_eq!(b.text("#open-count"), "(1 open comment)");
    // The mark outlives a refresh, as what is typed does.
    b.run("location.reload()");
    b.find("#threads");
    assert_eq!(
        b.run("return [...document.querySelectorAll('#threads input.thread-resolved')].map(c => c.checked)"),
        json!([false, true])
    );
    assert_eq!(b.text("#open-count"), "(1 open comment)");
    shot_at(&b, "threads", "#threads");
    // Request changes: the open thread goes back, quoted again, with no new word.
    b.run("delete document.body.dataset.decided");
    b.click("#reject");
    b.find("body[data-decided='reject']");
    let words = last_entry(&session(&project, &sid))["feedback"].clone();
    let words = words.as_str().unwrap();
    assert!(
        words.contains(&format!(
            "Still open from draft 1. On line 3 of {doc}:\n> ## Executive Summary\nToo thin."
        )) && words.contains(&format!(
            "Resolved since draft 1. On the whole of {doc}:\nShorter overall."
        )),
        "{words}"
    );
    let prompt = c.ok(json!({"action": "status", "session_id": sid})).await["role_prompt"].clone();
    assert!(
        prompt
            .as_str()
            .unwrap()
            .contains("Still open from draft 1. On line 3"),
        "{prompt}"
    );

    // Draft 3 shows them again: the resolved one as resolved.
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": prd("Third version.")}))
        .await;
    b.find("#threads .thread.resolved");
    assert_eq!(
        b.run("return [...document.querySelectorAll('#threads input.thread-resolved')].map(c => c.checked)"),
        json!([false, true])
    );
    b.click("#threads [data-thread='0'] input.thread-resolved");
    b.click("#confirm");
    b.find("body[data-decided='confirm']");
    let words = last_entry(&session(&project, &sid))["feedback"].clone();
    assert!(
        words
            .as_str()
            .unwrap()
            .contains("Resolved since draft 1. On line 3 of"),
        "{words}"
    );
    drop(b);
    c.close().await;
    d.stop();
}

/// One dashboard for the clone: started in one work tree, it lists the tasks of every
/// work tree git lists, each with its project, and opens any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn one_dashboard_shows_every_worktree_of_the_clone() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let main = root.join("app");
    std::fs::create_dir(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["config", "user.name", "Ana Lima"]);
    git(&main, &["config", "user.email", "ana@example.org"]);
    git(&main, &["config", "commit.gpgsign", "false"]);
    std::fs::write(main.join("README"), "app\n").unwrap();
    git(&main, &["add", "README"]);
    git(&main, &["commit", "-q", "-m", "one"]);
    let side = root.join("app-side");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            side.to_str().unwrap(),
        ],
    );
    let mut names = Vec::new();
    for (dir, objective) in [(&main, "Build a todo app"), (&side, "Build a chat app")] {
        let c = connect(Era::Legacy, dir).await;
        let v = c.ok(start_args(dir, objective)).await;
        names.push(v["task_name"].as_str().unwrap().to_string());
        c.close().await;
    }
    let d = Dash::start(&main);
    let b = Browser::start();
    b.resize(1280, 800);
    b.goto(&d.url);
    b.find("#tasks");
    assert_eq!(count(&b, "#tasks tr[data-session]"), json!(2));
    let shown = b.run(
        "return [...document.querySelectorAll('#tasks tr[data-session]')].map(r => [r.querySelector('a.task-link').textContent, r.lastElementChild.textContent])",
    );
    let mut shown: Vec<(String, String)> = serde_json::from_value(shown).unwrap();
    shown.sort();
    let mut expected = vec![
        (names[0].clone(), main.display().to_string()),
        (names[1].clone(), side.display().to_string()),
    ];
    expected.sort();
    assert_eq!(shown, expected);
    shot(&b, "worktrees");
    // The other work tree's task opens from here, with its project and branch.
    b.run(&format!(
        "[...document.querySelectorAll('a.task-link')].find(a => a.textContent === '{}').click()",
        names[1]
    ));
    b.find("#task-owner");
    assert_eq!(b.text("#task-name"), names[1]);
    assert_eq!(b.text("#task-owner .branch"), "side");
    drop(b);
    d.stop();
}

/// Clicks `css` (a decision's button) and waits until the page says the decision went
/// through.
fn decide_on_page(b: &Browser, css: &str, action: &str) {
    b.run("delete document.body.dataset.decided; return 0");
    b.click(css);
    b.find(&format!("body[data-decided='{action}']"));
}

/// A task from its PRD to QA under `gates = "human"`, every decision taken on the page (the
/// assistant only submits): the checks approved there; the PRD sent back with comments on a
/// line and on the whole, then confirmed with both threads resolved; the architecture
/// confirmed; one sprint of two approved; a failing check read and accepted with a note; a
/// passing review and QA, which ask nobody. Every decision in the history is the human's on
/// the dashboard (the assistant may take none under this policy), and the printable record
/// holds each stage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver): run ./scripts/test"]
async fn a_task_walks_from_prd_to_qa_deciding_only_on_the_page() {
    assert!(
        Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists(),
        "install chromium and chromium-driver"
    );
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(project.join(".bmad")).unwrap();
    let failing = "echo 'test store ... FAILED: fixed.txt is missing'; exit 3";
    std::fs::write(
        project.join(".bmad/config.toml"),
        format!("gates = \"human\"\n\n[checks]\ntest = \"{failing}\"\n"),
    )
    .unwrap();
    let c = connect(Era::Legacy, &project).await;
    let sid = c.ok(start_args(&project, "Build a todo app")).await["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let submit = |doc: String| {
        let c = &c;
        let sid = sid.clone();
        async move {
            c.ok(json!({"action": "submit", "session_id": sid, "claude_result": doc}))
                .await
        }
    };
    let d = Dash::start(&project);
    let b = Browser::start();
    b.resize(1280, 800);
    b.goto(&d.url);
    b.click("a.task-link");
    b.click("#approve-config");
    b.find("#banner:not([hidden])");

    submit(prd("First version.")).await;
    b.click("#comment-box summary");
    b.click(".line[data-n='4']");
    b.type_into("#comment-text", "Name the users.");
    b.click("#add-comment");
    b.type_into("#doc-comment-text", "Shorter.");
    b.click("#add-doc-comment");
    decide_on_page(&b, "#reject", "reject");
    submit(prd("Second version, for teams of five.")).await;
    b.find("#threads");
    b.click("#threads [data-thread='0'] input.thread-resolved");
    b.click("#threads [data-thread='1'] input.thread-resolved");
    b.type_into("#note", "Good.");
    decide_on_page(&b, "#confirm", "confirm");

    submit(passing_architecture()).await;
    b.find("#decision-doc h1");
    decide_on_page(&b, "#confirm", "confirm");
    submit(
        "# Sprint Plan\n\n## Sprint 1: Core\n- lists\n\n## Sprint 2: Sharing\n- invites\n".into(),
    )
    .await;
    b.type_into("#scope", "1");
    decide_on_page(&b, "#approve", "approve");

    submit("# Implementation Report\n\n## Summary\nBuilt sprint 1.\n".into()).await;
    b.find("#decision-checks-0");
    assert_eq!(
        b.text("#decision-checks-0 .check-result"),
        "failed (exit 3)"
    );
    b.click("#decision-checks-0-output summary");
    assert!(b
        .text("#decision-checks-0-output pre.failing")
        .contains("FAILED: fixed.txt is missing"));
    b.type_into("#note", "Accepted: fixed.txt comes in sprint 2.");
    decide_on_page(&b, "#confirm", "confirm");

    // A passing review asks nobody; the QA report waits for the human.
    let v = submit("# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\n".into()).await;
    assert_eq!(
        (v["stage"].as_str(), v["state"].as_str()),
        (Some("qa"), Some("generating"))
    );
    let v = submit(
        "# QA Report\n\n## Results\n12 passed, 0 failed.\n\nIntent: met\nQuality Score: 92/100\n"
            .into(),
    )
    .await;
    assert_eq!(
        v["state"], "awaiting_confirmation",
        "the failing check: {v:#}"
    );
    b.find("#decision-checks-0");
    let card = b.text("#decision");
    assert!(
        card.contains("It does not pass: check `test` failed (exit 3)"),
        "{card}"
    );
    assert!(
        !card.lines().any(|l| l.trim() == "null"),
        "nothing shown as null: {card}"
    );
    decide_on_page(&b, "#confirm", "confirm");
    let s = session(&project, &sid);
    assert_eq!(s["current_state"], "completed", "{s:#}");
    let decisions: Vec<&Value> = s["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h.get("decided_by").is_some())
        .collect();
    assert_eq!(decisions.len(), 6, "{decisions:#?}");
    for h in &decisions {
        assert_eq!(
            (h["decided_by"].as_str(), h["via"].as_str()),
            (Some("human"), Some("dashboard")),
            "{h:#}"
        );
    }
    let prd_confirm = decisions[1]["feedback"].as_str().unwrap();
    assert!(
        prd_confirm.contains("Resolved since draft 1. On line 4 of")
            && prd_confirm.contains("Resolved since draft 1. On the whole of"),
        "{prd_confirm}"
    );
    assert_eq!(s["stages"]["sm"]["scope_sprints"], json!([1]));
    assert_eq!(s["stages"]["dev"]["accepted_risk"], json!(true));
    b.click("#print-link");
    for stage in ["po", "architect", "sm", "dev", "review", "qa"] {
        b.find(&format!("#printed-{stage} table.record"));
    }
    assert!(b
        .text("#printed-dev table.record")
        .contains("Accepted: fixed.txt comes in sprint 2."));
    drop(b);
    c.close().await;
    d.stop();
}
