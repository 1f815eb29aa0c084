//! A story's spec as the method's `bmad-build` keeps it: `{implementation_artifacts}/spec-<key>.md`
//! (the key the sprint status gives the story), in the shape of the installed
//! `spec-template.md` (front matter `title`, `type`, `created`, `status`, `route`,
//! `review_loop_iteration`, `context`, and Build Auto's `deferred` list; the intent inside
//! `<frozen-after-approval>`, the code map, the tasks and their Given/When/Then criteria), its
//! `status` following the story's stage as the method's steps move it (`in-progress` while it
//! is built, `in-review` through review and QA, `done` once complete). `bmad-build` lists such a
//! spec among the active ones and resumes it at the step its status names.
//!
//! The server writes the spec only while it is as the server wrote it: the last line of its
//! front matter is a YAML comment holding the SHA-256 of the rest of the file. A spec whose
//! digest does not match (the method's steps moved it, a person edited its intent, a merge
//! touched it) is the method's and the people's, never written over; it is read instead
//! ([`read`]), as the project's text.

use sha2::Digest as _;

use crate::workflow::session::Session;
use crate::workflow::stage::Stage;

use super::epics::{criteria, line_of, parts};

/// The statuses of a spec the method's `bmad-build` recognises, in its order.
pub const STATUSES: [&str; 5] = ["draft", "ready-for-dev", "in-progress", "in-review", "done"];

/// How the comment line carrying the server's digest begins.
const MARK: &str = "# bmad-mcp: sha256 ";

/// The most criteria, tasks and code-map lines read from a spec, and the characters kept
/// of each.
const MOST_ITEMS: usize = 12;
const ITEM_CHARS: usize = 300;

/// The spec of story `key` where the install keeps implementation artifacts.
pub fn path(folder: &str, key: &str) -> String {
    format!("{folder}/spec-{key}.md")
}

/// The spec status the method's steps give work at the stage of the story `s`: its
/// story's status in the sprint status, in the spec's words.
pub fn status_now(s: &Session) -> &'static str {
    match super::story_statuses::status_now(s) {
        "done" => "done",
        "review" => "in-review",
        "in-progress" => "in-progress",
        _ => "ready-for-dev",
    }
}

/// What the spec of a story says.
pub struct Of<'a> {
    /// The story's session.
    pub story: &'a Session,
    /// Its sprint's part of the approved plan, and where the plan is kept.
    pub plan: &'a str,
    pub plan_path: &'a str,
    /// The day the story began, `YYYY-MM-DD`.
    pub created: &'a str,
    /// The project's documents the work stands on (the confirmed PRD and architecture).
    pub context: &'a [String],
    /// Findings deferred so far, as Build Auto's front matter keeps them: summary and
    /// evidence.
    pub deferred: &'a [(String, String)],
}

/// A YAML single-quoted scalar.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A YAML block scalar of one line of text, indented by `indent` spaces.
fn folded(s: &str, indent: usize) -> String {
    format!(">-\n{}{}", " ".repeat(indent), line_of(s, 2_000))
}

/// The spec of the story `of`, in the installed template's shape, closed with the
/// server's digest.
pub fn render(of: &Of) -> String {
    let s = of.story;
    let sprint = s.story.as_ref().map_or(0, |l| l.sprint);
    let title = s.story.as_ref().map_or(s.task_name.clone(), |l| {
        super::heading_title(&l.sprint_title)
    });
    let loops = s.loopbacks();
    let context: Vec<String> = (of.context.iter())
        .map(|p| quoted(&format!("{{project-root}}/{p}")))
        .collect();
    let mut front = format!(
        "---\ntitle: {}\ntype: 'feature'\ncreated: {}\nstatus: '{}'\nroute: 'dispatch'\nreview_loop_iteration: {loops}\ncontext: [{}]\n",
        quoted(&line_of(&title, 200)),
        quoted(of.created),
        status_now(s),
        context.join(", ")
    );
    if of.deferred.is_empty() {
        front.push_str("deferred: []\n");
    } else {
        front.push_str("deferred:\n");
        for (summary, evidence) in of.deferred {
            front.push_str(&format!(
                "  - summary: {}\n    evidence: {}\n",
                folded(summary, 6),
                folded(evidence, 6)
            ));
        }
    }
    let body = body(of, sprint);
    let digest = digest(&front, &body);
    format!("{front}{MARK}{digest}: written for bmad-mcp's story `{}`; rewritten by it only while the file is as written here\n---\n{body}", s.task_name)
}

/// The digest of a spec's text without its mark line.
fn digest(front: &str, body: &str) -> String {
    let mut h = sha2::Sha256::new();
    h.update(front.as_bytes());
    h.update(body.as_bytes());
    format!("{:x}", h.finalize())
}

/// The body: the intent, the code map, the tasks and criteria, and the sections the
/// method's steps append to.
fn body(of: &Of, sprint: u32) -> String {
    let s = of.story;
    let parent = s.story.as_ref().map_or("", |l| l.parent_task.as_str());
    let part = parts(of.plan).remove(&sprint).unwrap_or_default();
    let done = matches!(status_now(s), "in-review" | "done");
    let mut tasks = String::new();
    for t in &part.tasks {
        tasks.push_str(&format!("- [{}] {t}\n", if done { "x" } else { " " }));
    }
    if tasks.is_empty() {
        tasks = format!(
            "- [{}] `{}` -- build sprint {sprint} as the approved plan gives it -- the plan is the story's source\n",
            if done { "x" } else { " " },
            of.plan_path
        );
    }
    let defined = &s.record(Stage::FIRST).trace.defined;
    let mut criteria_lines = String::new();
    for r in criteria(defined, &part.covers) {
        criteria_lines.push_str(&format!(
            "- Given sprint {sprint} is built, when {} is checked, then {}\n",
            r.id,
            line_of(&r.text, ITEM_CHARS)
        ));
    }
    for d in &part.done_when {
        criteria_lines.push_str(&format!(
            "- Given sprint {sprint} is built, when its definition of done is checked, then {d}\n"
        ));
    }
    if criteria_lines.is_empty() {
        criteria_lines = format!("- Given sprint {sprint} is built, when it is reviewed, then every task the plan gives it is done\n");
    }
    let docs = format!(".claude/specs/{}/", s.task_name);
    format!(
        "\n<frozen-after-approval reason=\"human-owned intent — do not modify unless human renegotiates\">\n\n## Intent\n\n**Problem:** {}\n\n**Approach:** Sprint {sprint} of the sprint plan the human approved for task `{}` in bmad-mcp, built as its story `{}` through bmad-mcp's gates (development, review, QA).\n\n</frozen-after-approval>\n\n## Code Map\n\n- `{}` -- the approved sprint plan, the story's source\n- `{docs}` -- the story's development report, review and QA, as bmad-mcp keeps them\n\n## Tasks & Acceptance\n\n**Execution:**\n{tasks}\n**Acceptance Criteria:**\n{criteria_lines}\n## Implementation Notes\n\nbmad-mcp keeps this story's state; `bmad-task status` shows it.\n\n## Spec Change Log\n\n## Review Triage Log\n",
        line_of(&s.objective, 600),
        line_of(parent, 100),
        s.task_name,
        of.plan_path,
    )
}

/// Whether `text` is a spec as the server wrote it: its digest line matches the rest.
pub fn is_ours(text: &str) -> bool {
    let Some(at) = text.find(&format!("\n{MARK}")) else {
        return false;
    };
    let front = &text[..=at];
    let rest = &text[at + 1..];
    let Some((mark, after)) = rest.split_once('\n') else {
        return false;
    };
    let Some(body) = after.strip_prefix("---\n") else {
        return false;
    };
    let Some(hex) = mark[MARK.len()..].split(':').next() else {
        return false;
    };
    hex == digest(front, body)
}

/// The name of a spec in `names` (a folder's, in name order) for the story `key`: the
/// method's `spec-<key>.md`, else the first whose slug leads with the same epic and story
/// numbers, as the method's story-key resolution matches them (`1-1` never `1-10`).
pub fn spec_name<'a>(names: &'a [String], key: &str) -> Option<&'a str> {
    let exact = format!("spec-{key}.md");
    if let Some(n) = names.iter().find(|n| **n == exact) {
        return Some(n);
    }
    let mut parts = key.splitn(3, '-');
    let lead = format!("spec-{}-{}-", parts.next()?, parts.next()?);
    names
        .iter()
        .find(|n| n.starts_with(&lead) && n.ends_with(".md"))
        .map(String::as_str)
}

/// The spec of the story `key` in the install's `folder` (`names`: the folder's names), read
/// through the project's confined reader, as the method's story-key resolution finds it
/// ([`spec_name`]): its path and text; `Err` says why it could not be read (a
/// link, a FIFO, over [`crate::bmad_method::MAX_FILE_BYTES`]).
pub fn find(
    project: &crate::files::Project,
    folder: &str,
    names: &[String],
    key: &str,
) -> Result<Option<(String, String)>, String> {
    let Some(name) = spec_name(names, key) else {
        return Ok(None);
    };
    let path = format!("{folder}/{name}");
    match project.read_in_project(&path, crate::bmad_method::MAX_FILE_BYTES) {
        Ok(text) => Ok(text.map(|t| (path, t))),
        Err(problem) => Err(format!(
            "{} ({})",
            crate::code::visible(&path),
            crate::code::clip(&problem.to_string(), 200)
        )),
    }
}

/// The most names of `implementation_artifacts` looked at for specs.
pub const MOST_NAMES: usize = 2_000;

/// The spec of the story session `s` that the method (or a person) wrote or changed, as the
/// story's prompts quote it: its path and what it says; `None` without one, or when it is
/// the server's own as written.
pub fn of_story(
    project: &crate::files::Project,
    install: &crate::bmad_method::Install,
    s: &Session,
) -> Option<(String, Spec)> {
    let (epic, link) = (s.method_epic?, s.story.as_ref()?);
    let folder = install.settings.implementation_artifacts.as_deref()?;
    let key = super::epics::stories(s, epic)
        .into_iter()
        .find(|st| st.number == link.sprint)?
        .key;
    let names = project.names_in_project(folder, MOST_NAMES)?;
    let (path, text) = find(project, folder, &names, &key).ok()??;
    if is_ours(&text) {
        return None;
    }
    Some((path, read(&text)?))
}

/// The lines a story's prompt gains for the method's spec at `path`: its intent, code map
/// and acceptance criteria, quoted as the project's text, escaped and clipped.
pub fn block(found: Option<&(String, Spec)>) -> String {
    let Some((path, spec)) = found else {
        return String::new();
    };
    let quote = |lines: &[String]| -> String {
        lines
            .iter()
            .map(|l| {
                format!(
                    "> {}\n",
                    crate::code::visible(&crate::code::clip(l, ITEM_CHARS))
                )
            })
            .collect()
    };
    let mut out = format!(
        "\n## The BMAD method's spec of this story\n\n{} (status `{}`) is this story's spec as the method's /bmad-build or a person wrote it: the project's text, quoted as written there (its words, not the server's); build to it where it does not contradict this prompt.\n\n",
        crate::code::inline(path),
        crate::code::visible(spec.status.as_deref().unwrap_or("none the method knows"))
    );
    for (name, lines) in [
        ("Intent", &spec.intent),
        ("Code map", &spec.code_map),
        ("Acceptance criteria", &spec.acceptance),
    ] {
        if !lines.is_empty() {
            out.push_str(&format!("{name}:\n{}\n", quote(lines)));
        }
    }
    out
}

/// A spec as read: what the method (or a person) says of the story.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spec {
    /// Its `status`, when it is one the method recognises.
    pub status: Option<String>,
    pub title: String,
    /// The intent's problem and approach, the code map's lines, the acceptance criteria.
    pub intent: Vec<String>,
    pub code_map: Vec<String>,
    pub acceptance: Vec<String>,
    /// Build Auto's deferred findings: summary and evidence.
    pub deferred: Vec<(String, String)>,
}

/// The front matter of `text` and the body after it.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    Some((&rest[..=end], &rest[end + 5..]))
}

/// What the spec `text` says; `None` when it has no front matter the method's template
/// gives.
pub fn read(text: &str) -> Option<Spec> {
    let (front, body) = split(text)?;
    let yaml: serde_norway::Value = serde_norway::from_str(front).ok()?;
    let field = |k: &str| yaml.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let status =
        Some(field("status").trim().to_string()).filter(|s| STATUSES.contains(&s.as_str()));
    let deferred = (yaml.get("deferred").and_then(|d| d.as_sequence()))
        .map(|items| {
            items
                .iter()
                .take(MOST_ITEMS)
                .map(|i| {
                    let f = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    (f("summary"), f("evidence"))
                })
                .filter(|(s, _)| !s.trim().is_empty())
                .collect()
        })
        .unwrap_or_default();
    Some(Spec {
        status,
        title: crate::code::clip(field("title"), 200),
        intent: items(body, "Intent", |l| {
            l.starts_with("**Problem:**") || l.starts_with("**Approach:**")
        }),
        code_map: items(body, "Code Map", |l| l.starts_with("- ")),
        acceptance: items(body, "Tasks & Acceptance", |l| {
            l.starts_with("- Given") || l.starts_with("- given")
        }),
        deferred,
    })
}

/// The lines of `body` under its `## heading` that `keep` takes, clipped, at most
/// [`MOST_ITEMS`].
fn items(body: &str, heading: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut under = false;
    let mut out = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        if let Some(h) = t.strip_prefix("## ") {
            under = h.trim() == heading;
            continue;
        }
        if under && keep(t) && out.len() < MOST_ITEMS {
            out.push(crate::code::clip(t, ITEM_CHARS));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::session::StoryLink;

    fn story() -> Session {
        let mut s = super::super::approved_plan(
            "todo-sprint-1",
            "Sprint 1 (API) of: Build a todo app",
            &[(1, "API"), (2, "Web UI")],
        );
        s.story = Some(StoryLink {
            parent_session_id: "p".into(),
            parent_task: "todo".into(),
            sprint: 1,
            sprint_title: "API".into(),
            owner: "ada".into(),
            branch: None,
            worktree: "/w".into(),
        });
        s.current_stage = Stage::Dev;
        s
    }

    const PLAN: &str = "# Sprint Plan\n\n## Sprint 1: API\n- Task: the todos table\n- Definition of done: the API's tests pass\n\n## Sprint 2: Web UI\n- Task: the page\n";

    fn of<'a>(s: &'a Session, deferred: &'a [(String, String)]) -> Of<'a> {
        Of {
            story: s,
            plan: PLAN,
            plan_path: ".claude/specs/todo/sprint-plan.md",
            created: "2026-11-29",
            context: &[],
            deferred,
        }
    }

    #[test]
    fn a_story_written_as_the_methods_spec_reads_back_and_is_known_as_ours() {
        let mut s = story();
        let text = render(&of(&s, &[]));
        assert!(is_ours(&text), "{text}");
        let spec = read(&text).unwrap();
        assert_eq!(spec.status.as_deref(), Some("in-progress"));
        assert_eq!(spec.title, "API");
        assert!(text.contains("\n- [ ] Task: the todos table\n"), "{text}");
        assert!(
            spec.acceptance
                .iter()
                .any(|a| a.contains("then the API's tests pass")),
            "{spec:?}"
        );
        assert!(!text.contains("Web UI"), "only its own sprint: {text}");
        s.current_stage = Stage::Qa;
        let deferred = [("a: b # c 'q'".to_string(), "why\nnot".to_string())];
        let text = render(&of(&s, &deferred));
        let spec = read(&text).unwrap();
        assert_eq!(spec.status.as_deref(), Some("in-review"));
        assert_eq!(
            spec.deferred,
            [("a: b # c 'q'".to_string(), "why not".to_string())]
        );
        assert!(is_ours(&text));
        // The method's step moves its status: the file is no longer the server's.
        let moved = text.replace("status: 'in-review'", "status: 'done'");
        assert!(!is_ours(&moved));
        assert_eq!(read(&moved).unwrap().status.as_deref(), Some("done"));
        assert!(!is_ours("---\ntitle: x\nstatus: draft\n---\n"));
    }

    #[test]
    fn the_status_follows_the_story_and_each_return_to_development_is_a_loopback() {
        use crate::workflow::session::State;
        let mut s = story();
        let step = |s: &mut Session, stage: Stage| {
            let mut e = s.history[0].clone();
            e.stage = stage;
            s.history.push(e);
            s.current_stage = stage;
        };
        assert_eq!((status_now(&s), s.loopbacks()), ("in-progress", 0));
        step(&mut s, Stage::Review);
        assert_eq!((status_now(&s), s.loopbacks()), ("in-review", 0));
        step(&mut s, Stage::Dev);
        assert_eq!((status_now(&s), s.loopbacks()), ("in-progress", 1));
        step(&mut s, Stage::Qa);
        step(&mut s, Stage::Dev);
        assert_eq!(s.loopbacks(), 2);
        step(&mut s, Stage::Qa);
        s.current_state = State::Completed;
        assert_eq!((status_now(&s), s.loopbacks()), ("done", 2));
        let text = render(&of(&s, &[]));
        assert!(text.contains("review_loop_iteration: 2\n"), "{text}");
        assert!(text.contains("\n- [x] Task: the todos table\n"), "{text}");
    }

    #[test]
    fn a_methods_spec_in_a_prompt_is_quoted_escaped_and_labelled() {
        let spec = Spec {
            status: Some("ready-for-dev".into()),
            intent: vec!["**Problem:** late\u{202e}".into()],
            ..Spec::default()
        };
        let b = block(Some(&("out/spec-1-1-a.md".to_string(), spec)));
        assert!(
            b.contains("`out/spec-1-1-a.md` (status `ready-for-dev`)"),
            "{b}"
        );
        assert!(b.contains("its words, not the server's"), "{b}");
        assert!(b.contains("Intent:\n> **Problem:** late\\u{202e}\n"), "{b}");
        assert!(!b.contains("Code map"), "{b}");
        assert_eq!(block(None), "");
    }

    #[test]
    fn a_spec_the_method_wrote_is_read_as_it_says() {
        let text = "---\ntitle: 'Digest'\ntype: 'feature'\ncreated: '2026-11-29'\nstatus: 'in-review' # x\nroute: 'dispatch'\nreview_loop_iteration: 1\ncontext: []\n---\n\n<frozen-after-approval reason=\"r\">\n\n## Intent\n\n**Problem:** Mail is late.\n\n**Approach:** Send it at nine.\n\n</frozen-after-approval>\n\n## Code Map\n\n- `src/mail.rs` -- the sender\n\n## Tasks & Acceptance\n\n**Execution:**\n- [ ] `src/mail.rs` -- send -- why\n\n**Acceptance Criteria:**\n- Given a digest, when it is nine, then it is sent\n";
        let spec = read(text).unwrap();
        assert_eq!(spec.status.as_deref(), Some("in-review"));
        assert_eq!(
            spec.intent,
            [
                "**Problem:** Mail is late.",
                "**Approach:** Send it at nine."
            ]
        );
        assert_eq!(spec.code_map, ["- `src/mail.rs` -- the sender"]);
        assert_eq!(
            spec.acceptance,
            ["- Given a digest, when it is nine, then it is sent"]
        );
        assert!(read("no front matter").is_none());
        let odd = read("---\nstatus: 'thinking'\n---\n").unwrap();
        assert_eq!(odd.status, None);
    }
}
