//! Every reply is bounded, whatever comes in, through the real binary: no reply exceeds 64
//! KiB, no message quotes more than 200 characters of a caller's text, a submission's
//! questions and gaps have limits of their own, and `list` comes in pages, with damaged
//! session files reported beside the sessions.

use crate::support;

use crate::support::{connect, start_args, Client, Era, Sandbox};
use serde_json::{json, Value};

const CAP: usize = 64 * 1024;

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c)
        .map(|run| run.len())
        .max()
        .unwrap_or(0)
}

/// Calls and checks the reply's size; returns (is_error, reply).
async fn bounded(c: &Client, args: Value) -> (bool, Value) {
    let (is_error, v) = c.call(args.clone()).await;
    let size = v.to_string().len();
    assert!(
        size <= CAP,
        "a {size}-byte reply to {}",
        support::clipped(&args)
    );
    (is_error, v)
}

#[tokio::test]
async fn the_largest_inputs_give_replies_under_64_kib() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let (_, v) = bounded(&c, start_args(project, &"Build it ".repeat(455))).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let with = |mut a: Value| {
        a["session_id"] = json!(sid);
        a
    };
    let questions: Vec<String> = (0..10)
        .map(|i| format!("Q{i} {}", "w".repeat(990)))
        .collect();
    let gaps: Vec<String> = (0..20)
        .map(|i| format!("G{i} {}", "g".repeat(490)))
        .collect();
    let draft = json!({"prd_draft": format!("# PRD\n\n{}", "text ".repeat(200_000)), "quality_score": 70, "questions": questions, "gaps": gaps}).to_string();
    let (e, v) = bounded(
        &c,
        with(json!({"action": "submit", "claude_result": draft})),
    )
    .await;
    assert!(!e, "{v}");
    assert_eq!(v["state"], "clarifying");
    let answers: serde_json::Map<String, Value> = (1..=10)
        .map(|i| (format!("q{i}"), json!("a".repeat(65_000))))
        .collect();
    let (e, v) = bounded(&c, with(json!({"action": "answer", "answers": answers}))).await;
    assert!(!e, "{v}");
    assert_eq!(v["state"], "refining");
    let note = v["notices"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(note.contains("shortened to stay under 64 KiB"), "{note}");
    assert!(v["role_prompt"]
        .as_str()
        .unwrap()
        .contains("read them before you write"));
    let passing = support::passing_prd();
    for _ in 0..4 {
        let (e, v) = bounded(
            &c,
            with(json!({"action": "submit", "claude_result": passing})),
        )
        .await;
        assert!(!e, "{v}");
        let (e, _) = bounded(
            &c,
            with(json!({"action": "reject", "feedback": "f".repeat(65_000)})),
        )
        .await;
        assert!(!e);
    }
    let (e, v) = bounded(&c, with(json!({"action": "status"}))).await;
    assert!(!e);
    // The stored session keeps everything that was sent.
    let stored = support::read_json(&project.join(format!(".bmad-task/session-{sid}.json")));
    assert_eq!(
        stored["stages"]["po"]["feedback"].as_array().unwrap().len(),
        4
    );
    assert_eq!(
        stored["stages"]["po"]["answers"]["q1"]
            .as_str()
            .unwrap()
            .len(),
        65_000
    );
    assert_eq!(
        v["session"]["stages"]["po"]["feedback"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    c.close().await;
}

#[tokio::test]
async fn messages_quote_at_most_200_characters_of_what_the_caller_sent() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Legacy, project).await;
    let v = c.ok(start_args(project, "Quoted")).await;
    let sid = v["session_id"].as_str().unwrap().to_string();
    let z = |n: usize| "Z".repeat(n);
    let sub = |claude: Value| json!({"action": "submit", "session_id": sid, "claude_result": claude.to_string()});
    let cases: Vec<(Value, &str)> = vec![
        (json!({"action": z(100_000)}), "unknown_action"),
        (json!({"action": "list", z(10_000): 1}), "unknown_field"),
        (
            json!({"action": "status", "session_id": z(60_000)}),
            "invalid_session_id",
        ),
        (
            json!({"action": "status", "task_name": z(60_000)}),
            "invalid_task_name",
        ),
        (
            json!({"action": "list", "cwd": format!("/{}", z(60_000))}),
            "invalid_cwd",
        ),
        (
            json!({"action": "start", "objective": [z(60_000)]}),
            "invalid_argument",
        ),
        (
            json!({"action": "confirm", "session_id": sid, "confirmed": z(60_000)}),
            "invalid_argument",
        ),
        (
            json!({"action": "list", "cursor": z(60_000)}),
            "invalid_argument",
        ),
        (
            json!({"action": "status", "session_id": sid, "stage": z(60_000)}),
            "invalid_stage",
        ),
        (
            json!({"action": "answer", "session_id": sid, "answers": (0..100).map(|i| (format!("{i}{}", z(1000)), json!("x"))).collect::<serde_json::Map<String, Value>>()}),
            "invalid_state",
        ),
        (
            sub(
                json!({"prd_draft": "# PRD", "questions": (0..11).map(|i| format!("Q{i}?")).collect::<Vec<_>>()}),
            ),
            "too_large",
        ),
        (
            sub(json!({"prd_draft": "# PRD", "questions": [z(1001)]})),
            "too_large",
        ),
        (
            sub(
                json!({"prd_draft": "# PRD", "questions": [{"question": "Why?", "context": z(5000)}]}),
            ),
            "too_large",
        ),
        (
            sub(
                json!({"prd_draft": "# PRD", "gaps": (0..21).map(|i| format!("G{i}")).collect::<Vec<_>>()}),
            ),
            "too_large",
        ),
        (
            sub(json!({"prd_draft": "# PRD", "gaps": [z(501)]})),
            "too_large",
        ),
    ];
    let before = std::fs::read(project.join(format!(".bmad-task/session-{sid}.json"))).unwrap();
    for (args, code) in cases {
        let (is_error, v) = bounded(&c, args.clone()).await;
        assert!(is_error, "{}: {v}", support::clipped(&args));
        assert_eq!(v["error"]["code"], code, "{}: {v}", support::clipped(&args));
        let text = v.to_string();
        let run = longest_run(&text, 'Z');
        assert!(
            run <= 200,
            "{} quotes {run} characters: {}",
            support::clipped(&args),
            support::clipped(&v)
        );
    }
    // A refusal over a configurable limit names the variable that raises it.
    for (args, variable) in [
        (
            json!({"action": "start", "objective": "o".repeat(5000)}),
            "BMAD_MAX_OBJECTIVE_BYTES",
        ),
        (
            json!({"action": "reject", "session_id": sid, "feedback": "f".repeat(70_000)}),
            "BMAD_MAX_TEXT_BYTES",
        ),
        (
            json!({"action": "submit", "session_id": sid, "codex_result": "c".repeat(4 * 1024 * 1024 + 1)}),
            "BMAD_MAX_RESULT_BYTES",
        ),
    ] {
        let e = c.refused(args, "too_large").await;
        let msg = e["error"]["message"].as_str().unwrap();
        assert!(msg.contains(variable), "{msg}");
    }
    // Refused submissions left nothing in the session.
    assert_eq!(
        std::fs::read(project.join(format!(".bmad-task/session-{sid}.json"))).unwrap(),
        before
    );
    // Unknown answer ids, with the session in `clarifying`: a few, cut, and a count.
    let q = json!({"prd_draft": "# PRD", "quality_score": 60, "questions": ["Which?"]}).to_string();
    c.ok(json!({"action": "submit", "session_id": sid, "claude_result": q}))
        .await;
    let answers: serde_json::Map<String, Value> = (0..100)
        .map(|i| (format!("{i}{}", z(1000)), json!("x")))
        .collect();
    let (_, v) = bounded(
        &c,
        json!({"action": "answer", "session_id": sid, "answers": answers}),
    )
    .await;
    assert_eq!(v["error"]["code"], "unknown_question");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("and 95 more") && longest_run(msg, 'Z') <= 40,
        "{msg}"
    );
    c.close().await;
}

#[tokio::test]
async fn list_comes_in_pages_and_reports_damaged_files_apart() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let mut ids = Vec::new();
    for i in 0..122 {
        let v = c.ok(start_args(project, &format!("Task number {i}"))).await;
        ids.push(v["session_id"].as_str().unwrap().to_string());
    }
    for id in &ids[..2] {
        std::fs::write(
            project.join(format!(".bmad-task/session-{id}.json")),
            "{ torn",
        )
        .unwrap();
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let mut args = json!({"action": "list"});
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let v = c.ok(args).await;
        let size = v.to_string().len();
        assert!(size <= 32 * 1024, "a page of {size} bytes");
        assert_eq!(v["total"], 120);
        let page: Vec<Value> = v["sessions"].as_array().unwrap().clone();
        if cursor.is_none() {
            let damaged = v["damaged"].as_array().expect("damaged files are reported");
            let mut named: Vec<&str> = damaged
                .iter()
                .map(|d| d["session_id"].as_str().unwrap())
                .collect();
            named.sort_unstable();
            let mut want: Vec<&str> = ids[..2].iter().map(String::as_str).collect();
            want.sort_unstable();
            assert_eq!(named, want);
            assert!(damaged[0]["reason"]
                .as_str()
                .unwrap()
                .contains("not a valid session file"));
            assert!(v["user_message"]
                .as_str()
                .unwrap()
                .contains("2 session file(s) cannot be read"));
        } else {
            assert!(v.get("damaged").is_none());
        }
        pages.push(page.len());
        seen.extend(page);
        cursor = v["next_cursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, [50, 50, 20]);
    let times: Vec<&str> = seen
        .iter()
        .map(|s| s["updated_at"].as_str().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "newest first across pages"
    );
    let mut listed: Vec<&str> = seen
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    listed.sort_unstable();
    listed.dedup();
    assert_eq!(listed.len(), 120, "every readable session once");
    let e = c
        .refused(
            json!({"action": "list", "cursor": "not a cursor"}),
            "invalid_argument",
        )
        .await;
    assert!(e["error"]["message"].as_str().unwrap().contains("`cursor`"));
    c.close().await;
}

/// A session file with one bad byte (not UTF-8), or torn after its first fields, stays
/// visible in `list`: among the damaged files, with what can still be read of it.
#[tokio::test]
async fn a_session_file_with_one_bad_byte_stays_visible_with_what_can_be_read() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let mut files = Vec::new();
    for objective in ["Notes app", "Torn tale"] {
        let v = c.ok(start_args(project, objective)).await;
        let sid = v["session_id"].as_str().unwrap().to_string();
        files.push((
            sid.clone(),
            project.join(format!(".bmad-task/session-{sid}.json")),
        ));
    }
    let mut bytes = std::fs::read(&files[0].1).unwrap();
    let at = bytes.windows(4).position(|w| w == b"app\"").unwrap();
    bytes[at] = 0xff;
    std::fs::write(&files[0].1, &bytes).unwrap();
    let text = std::fs::read_to_string(&files[1].1).unwrap();
    let cut = text.find("\"stages\"").unwrap();
    std::fs::write(&files[1].1, &text[..cut]).unwrap();

    let v = c.ok(json!({"action": "list"})).await;
    assert_eq!(v["total"], 0, "{v:#}");
    let damaged = v["damaged"].as_array().unwrap();
    assert_eq!(damaged.len(), 2, "{v:#}");
    for (sid, _) in &files {
        let d = damaged
            .iter()
            .find(|d| d["session_id"] == sid.as_str())
            .unwrap_or_else(|| panic!("{sid} is listed: {v:#}"));
        assert_eq!(d["current_stage"], "po", "{d:#}");
        assert_eq!(d["current_state"], "generating", "{d:#}");
        assert!(d["task_name"].is_string(), "{d:#}");
        assert!(d["reason"]
            .as_str()
            .unwrap()
            .contains("not a valid session file"));
    }
    let names: Vec<&str> = damaged
        .iter()
        .map(|d| d["task_name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"torn-tale"), "{names:?}");
    // The session is still refused whole where a call needs it.
    c.refused(
        json!({"action": "status", "session_id": files[0].0}),
        "session_corrupt",
    )
    .await;
    c.close().await;
}

/// A session file whose objective holds one byte that is not UTF-8 is still listed by
/// the tool, marked damaged, with every field that can be read (as the terminal's `list`).
#[tokio::test]
async fn a_session_with_a_byte_that_is_not_utf8_is_listed_as_damaged_with_what_reads() {
    let sb = Sandbox::new();
    let project = sb.project.as_path();
    let c = connect(Era::Modern, project).await;
    let v = c.ok(start_args(project, "Build a caf\u{e9} tool")).await;
    let id = v["session_id"].as_str().unwrap();
    let file = project.join(format!(".bmad-task/session-{id}.json"));
    let bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(2).position(|w| w == "é".as_bytes()).unwrap();
    let mut damaged = bytes[..at].to_vec();
    damaged.push(0xE9);
    damaged.extend_from_slice(&bytes[at + 2..]);
    std::fs::write(&file, damaged).unwrap();

    let listed = c.ok(json!({"action": "list"})).await;
    let entry = &listed["damaged"][0];
    assert_eq!(entry["session_id"], id, "{listed}");
    assert_eq!(entry["task_name"], v["task_name"]);
    assert_eq!(entry["current_stage"], "po");
    assert_eq!(entry["current_state"], "generating");
    assert!(entry["updated_at"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(entry["reason"].as_str().unwrap().contains("not UTF-8"));
    assert!(listed["user_message"]
        .as_str()
        .unwrap()
        .contains("1 session file(s) cannot be read"));
    c.close().await;
}
