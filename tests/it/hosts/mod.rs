//! The agent hosts end to end (Claude Code's screens and the hooks on its dialog:
//! `claude.rs`): Gemini CLI, opencode, Codex CLI and Copilot CLI, each the real binary
//! `./scripts/test` installs into `target/npm/<name>`, with a throwaway HOME, driven by a
//! scripted fake model on 127.0.0.1 (`tests/hosts/fake_model.py`, streaming each host's
//! own API) through a quick-track task: `start`, `submit`, the gate
//! as that host handles it (its model's `confirm`, then `bmad-mcp confirm` run from the
//! host's own shell tool, which is refused; the test plays the human in a terminal), then
//! dev and review in a second run. Each test asserts what the fake API received (the
//! readable text, once), how the gate was decided and recorded in `.bmad-task/`, and the
//! refusal. Codex's and Copilot's interactive interfaces run too, on a pseudo-terminal
//! (`support::screen`): the test types the human's answer into the form they show, or
//! reads the reply to a decline. A host that is not installed reports itself skipped with
//! the reason.

mod claude;
mod codex;
mod copilot;
mod docs;
mod gemini;
mod opencode;

/// The pinned Claude Code CLI, for the night shift's tests too.
pub(crate) use claude::installed as claude_cli;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::screen::{compact, Screen};
use crate::support::terminal::in_terminal;
use crate::support::{document, read_json, scored, server_path, ROOT, SPEC_SECTIONS};

/// How long one run of a host may take.
const RUN_LIMIT: Duration = Duration::from_secs(180);

const DEV: &str = "# Implementation Report\n\n## Summary\nAdded the flag.\n\n## Changes\n- `src/cli.rs`: `--verbose`.\n\n## Tests\n3 passed.\n";
const REVIEW: &str = "# Code Review\n\n## Findings\n- none.\n\nReview Status: Pass\nIntent: met\n";

/// One host as the tests drive it.
pub struct Host {
    /// Its folder under `target/npm/`, and its binary in `node_modules/.bin/`.
    pub package: &'static str,
    pub bin: &'static str,
    /// The mark the host's shell tool carries, as the refusal names it.
    pub mark: &'static str,
}

/// The host's binary, or `None` after printing why it is skipped (the reason
/// `./scripts/test` wrote in `target/npm/<name>.skipped`).
pub fn installed(host: &Host) -> Option<PathBuf> {
    crate::support::npm::package_bin(
        host.package,
        host.bin,
        &format!("{} end to end", host.package),
    )
}

/// A throwaway HOME, the project, and the fake model's files.
pub struct Place {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    pub root: PathBuf,
}

impl Place {
    pub fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (home, project) = (root.join("home"), root.join("project"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let git = Command::new("git")
            .args(["init", "-q", "."])
            .current_dir(&project)
            .status()
            .unwrap();
        assert!(git.success());
        Place {
            _dir: dir,
            home,
            project,
            root,
        }
    }

    /// A command for `bin` in the project with nothing of the caller's environment but
    /// PATH (no other host's marks, no project root), HOME the throwaway one.
    pub fn command(&self, bin: &Path) -> Command {
        let mut cmd = Command::new(bin);
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .stdin(Stdio::null());
        cmd
    }

    pub fn session(&self, id: &str) -> Value {
        read_json(&self.project.join(format!(".bmad-task/session-{id}.json")))
    }
}

impl Drop for Place {
    /// What a host installed into the throwaway home and left running (Codex CLI's
    /// app-server daemon) ends with the test.
    fn drop(&mut self) {
        kill_left_under(&self.root);
    }
}

/// The fake model API, playing one script.
pub struct Fake {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

/// How the scripted model ends a run that leaves the person something to do: as a model does
/// what the reply's `next_step` asks, it shows them `user_message` (the fake puts the last
/// result's in for `{relay}`).
pub const RELAY: &str = "bmad-mcp says: {relay}";

impl Fake {
    /// Starts the fake with `steps`, for a host whose shell tool is `shell`.
    pub fn start(place: &Place, run: &str, steps: Value, shell: &Value) -> Fake {
        Fake::ending(
            place,
            run,
            steps,
            shell,
            "Done: the human decides the gate.",
        )
    }

    /// [`Fake::start`], the model relaying the last `user_message` at its end ([`RELAY`]).
    pub fn relaying(place: &Place, run: &str, steps: Value, shell: &Value) -> Fake {
        Fake::ending(place, run, steps, shell, RELAY)
    }

    /// [`Fake::start`], the model's last answer `last`.
    fn ending(place: &Place, run: &str, steps: Value, shell: &Value, last: &str) -> Fake {
        Fake::scripted(
            place,
            run,
            json!({"steps": steps, "shell": shell, "final": last}),
        )
    }

    /// A fake serving many sessions, each its own steps: those of the first entry of
    /// `by_prompt` (`{"when": [...], "steps": [...]}`) whose `when` strings are all in the
    /// session's prompt.
    pub fn by_prompt(place: &Place, run: &str, by_prompt: Value, shell: &Value) -> Fake {
        let script = json!({"steps": [], "by_prompt": by_prompt, "shell": shell, "final": "Done."});
        Fake::scripted(place, run, script)
    }

    /// Starts the fake on `script` (its steps, shell and final answer).
    fn scripted(place: &Place, run: &str, mut body: Value) -> Fake {
        let (port_file, log) = (
            place.root.join(format!("{run}.port")),
            place.root.join(format!("{run}.jsonl")),
        );
        let script = place.root.join(format!("{run}.json"));
        body["port_file"] = json!(port_file);
        body["log"] = json!(log);
        std::fs::write(&script, body.to_string()).unwrap();
        let child = Command::new("python3")
            .arg(Path::new(ROOT).join("tests/hosts/fake_model.py"))
            .arg(&script)
            .stdin(Stdio::null())
            .spawn()
            .expect("python3 runs the fake model");
        let deadline = Instant::now() + Duration::from_secs(20);
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                break p.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the fake model did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Fake { child, port, log }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request the host sent, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The whole of the longest conversation the host sent, as JSON text: what its model
    /// read, beyond the text the fake picks out of each tool result.
    fn longest_body(&self) -> String {
        let count = |r: &Value| r["results"].as_array().map_or(0, Vec::len);
        self.requests()
            .into_iter()
            .max_by_key(count)
            .map(|r| r["body"].to_string())
            .unwrap_or_default()
    }

    /// Each role prompt reached the model once in the whole conversation, and no JSON copy
    /// of a reply came with it (a `structuredContent` or a `role_prompt` key, as JSON or as
    /// JSON inside a string).
    pub fn assert_read_once(&self, headings: &[&str]) {
        let body = self.longest_body();
        for heading in headings {
            assert_eq!(body.matches(heading).count(), 1, "{heading} once: {body}");
        }
        for copy in [
            "structuredContent",
            "\"role_prompt\"",
            "\\\"role_prompt\\\"",
        ] {
            assert!(!body.contains(copy), "no JSON copy ({copy}): {body}");
        }
    }

    /// The tool results of the longest conversation the host sent: what its model read
    /// of each tool call, in order.
    pub fn results(&self) -> Vec<String> {
        let mut longest: Vec<String> = Vec::new();
        for r in self.requests() {
            let results: Vec<String> = r["results"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect();
            if results.len() > longest.len() {
                longest = results;
            }
        }
        for r in &longest {
            crate::support::words_for_the_person(r);
        }
        longest
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cmd` to its end within [`RUN_LIMIT`]; its exit status and output.
pub fn run(mut cmd: Command, what: &str) -> (i32, String) {
    let (code, out, err) = run_within(&mut cmd, what, RUN_LIMIT);
    (code, format!("{out}\n--- stderr ---\n{err}"))
}

/// Runs `cmd` to its end within `limit`, its output read as it comes (a child whose
/// output fills a pipe would otherwise never end); (exit status, stdout, stderr).
pub fn run_within(cmd: &mut Command, what: &str, limit: Duration) -> (i32, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = pipe.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} took more than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, out.join().unwrap(), err.join().unwrap())
}

/// Up to the gate: start a quick task, submit its spec, the model's `confirm`.
pub fn gate_steps(project: &Path) -> Value {
    let spec = scored(
        "technical_spec",
        &document("Technical Spec: --verbose", &SPEC_SECTIONS),
        92,
    );
    json!([
        {"tool": "bmad", "args": {"action": "start", "objective": "Add a --verbose flag", "track": "quick", "cwd": project}},
        {"tool": "bmad", "args": {"action": "submit", "session_id": "{session_id}", "claude_result": spec}},
        {"tool": "bmad", "args": {"action": "confirm", "session_id": "{session_id}"}},
    ])
}

/// The first run's script: [`gate_steps`], then `bmad-mcp confirm` from the host's shell
/// tool in a pseudo-terminal of its own (`script`), as a model that tries would.
pub fn first_steps(project: &Path) -> Value {
    let mut steps = gate_steps(project);
    steps.as_array_mut().unwrap().push(json!(
        {"tool": "shell", "command": format!("script -qec '{} confirm {{session_id}}' /dev/null", server_path())}
    ));
    steps
}

/// The second run's script, once the human decided: where the task stands, dev, review.
pub fn second_steps(id: &str) -> Value {
    json!([
        {"tool": "bmad", "args": {"action": "status", "session_id": id}},
        {"tool": "bmad", "args": {"action": "submit", "session_id": id, "claude_result": DEV}},
        {"tool": "bmad", "args": {"action": "submit", "session_id": id, "claude_result": REVIEW}},
    ])
}

/// A result read as text: the reply's lines once, the role prompt as Markdown once; not
/// an escaped JSON string, and no JSON copy beside it.
pub fn assert_readable_once(result: &str, heading: &str) {
    assert_eq!(
        result.matches(heading).count(),
        1,
        "the role prompt once: {result}"
    );
    assert_eq!(result.matches("next_step: ").count(), 1, "{result}");
    assert!(result.contains("\nrole_prompt: # Role: "), "{result}");
    for json in [
        "\\nnext_step",
        "\\nrole_prompt",
        "\"role_prompt\"",
        "\"next_step\"",
        "structuredContent",
    ] {
        assert!(!result.contains(json), "no JSON ({json}) in: {result}");
    }
}

/// The session id a result shows.
pub fn session_id(result: &str) -> String {
    let at = result.find("session_id: ").expect("a session id") + "session_id: ".len();
    result[at..at + 36].to_string()
}

/// After the first run: the spec waits for the human, nothing of the host's recorded as a
/// decision; the shell tool's `bmad-mcp confirm` was refused naming the host's mark. Then
/// the human confirms in a terminal. Returns the session id.
pub fn the_human_passes_the_gate(place: &Place, results: &[String], mark: &str) -> String {
    assert_eq!(results.len(), 4, "four tool results: {results:#?}");
    assert_readable_once(&results[0], "# Role: Tech Lead");
    let id = session_id(&results[0]);
    assert!(
        results[1].contains("state: awaiting_confirmation"),
        "{}",
        results[1]
    );
    let refused = &results[3];
    let flat = refused.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("refusing to decide: this command runs under an assistant's shell (")
            && flat.contains(mark),
        "the shell tool's confirm is refused, naming {mark}: {refused}"
    );
    nothing_decided(place, &id);
    let (code, out) = in_terminal(&place.project, &["confirm", &id], "[y/N]", "y\n");
    assert_eq!(code, 0, "the human confirms in a terminal: {out}");
    confirmed_by_the_human(place, &id, "cli");
    id
}

/// The session's last decision: a `confirm`, the human's, through `via`, from no
/// assistant's process. Returns it.
fn confirmed_by_the_human(place: &Place, id: &str, via: &str) -> Value {
    let session = place.session(id);
    let last = session["history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (&last["action"], &last["decided_by"], &last["via"]),
        (&json!("confirm"), &json!("human"), &json!(via)),
        "{last:#}"
    );
    assert_eq!(last["provenance"]["under_assistant"], false, "{last:#}");
    last
}

/// Waits up to [`RUN_LIMIT`] until the host gave its model `n` tool results (a host's
/// interface keeps running after the model's last turn); those results.
pub fn results_within(fake: &Fake, n: usize, screen: &mut Screen) -> Vec<String> {
    let deadline = Instant::now() + RUN_LIMIT;
    loop {
        // The model reads the last result in the request after it.
        let results = fake.results();
        if results.len() >= n || Instant::now() > deadline || screen.ended() {
            return results;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// How long a host's interface may take to show what a person waits for.
pub const SHOWN: Duration = Duration::from_secs(90);

/// The human at the host's interface, its form on the screen (its first field showing
/// `first`), chooses to confirm, goes on to the note (the second field, showing
/// `second`), types one and sends it: the model is handed the next stage, and the session
/// records the decision as the human's, via the dialog, with the note.
pub fn the_human_confirms_in_the_form(
    place: &Place,
    fake: &Fake,
    mut screen: Screen,
    (first, second): (&str, &str),
) {
    assert!(
        screen.shows(first, SHOWN) && screen.shows("Confirm the document", SHOWN),
        "the form is shown: {}",
        screen.text()
    );
    // The choice, then the note: Codex's form does not submit an empty text field. Each key
    // a moment after the form shows, as a person reads before pressing it: a busy interface
    // drops a key that comes as it draws.
    std::thread::sleep(Duration::from_secs(1));
    screen.type_keys("\r");
    assert!(screen.shows(second, SHOWN), "{}", screen.text());
    screen.type_keys("Fine by me");
    // Enter once the note shows, as a person presses it: keys that reach a busy interface
    // in one read are taken as a paste, where Enter is a line break, not a submit. (Copilot
    // draws the note so that the screen's text never holds it whole: a few seconds then.)
    screen.shows("Fine by me", Duration::from_secs(5));
    std::thread::sleep(Duration::from_secs(1));
    screen.type_keys("\r");
    let results = results_within(fake, 3, &mut screen);
    let shown = screen.end();
    assert_eq!(results.len(), 3, "{results:#?}\n{shown}");
    assert!(results[2].contains("stage: dev"), "{}", results[2]);
    let id = session_id(&results[0]);
    let last = confirmed_by_the_human(place, &id, "elicitation");
    assert_eq!(last["feedback"], "Fine by me", "{last:#}");
    assert_eq!(place.session(&id)["current_stage"], "dev");
}

/// The dialog declined unseen: nothing recorded, the gate still waits.
pub fn nothing_decided(place: &Place, id: &str) {
    let session = place.session(id);
    assert_eq!(
        session["current_state"], "awaiting_confirmation",
        "{session:#}"
    );
    assert!(
        !session["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["action"] == "confirm"),
        "no decision recorded: {session:#}"
    );
}

/// The only task in the project: its name, as the terminal commands name it.
pub fn only_task(place: &Place) -> String {
    let dir = place.project.join(".bmad-task");
    let sessions: Vec<Value> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("session-"))
        })
        .map(|p| read_json(&p))
        .collect();
    assert_eq!(sessions.len(), 1, "one task: {sessions:#?}");
    sessions[0]["task_name"].as_str().unwrap().to_string()
}

/// What the person's screen shows after a refusal, or a dialog that ended undecided: the
/// dashboard and the terminal command the reply names, in the host's own view of the
/// result or in the model's relay of `user_message`.
pub fn the_way_out_is_on_screen(place: &Place, shown: &str, host: &str) {
    let task = only_task(place);
    let flat = compact(shown);
    for way in [
        "bmad-mcp dashboard".to_string(),
        format!("bmad-mcp confirm {task}"),
    ] {
        assert!(
            flat.contains(&compact(&way)),
            "{host}: the screen shows `{way}`:\n{shown}"
        );
    }
}

/// The processes whose executable is `exe` and whose working directory is `dir`.
pub fn processes_of(exe: &Path, dir: &Path) -> Vec<i32> {
    let Ok(all) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    all.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            let at = |what: &str| std::fs::read_link(format!("/proc/{pid}/{what}")).ok();
            at("exe").as_deref() == Some(exe) && at("cwd").as_deref() == Some(dir)
        })
        .filter(|pid| {
            // A zombie has ended; whoever adopted it reaps it.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            })
        })
        .collect()
}

/// Kills every process whose executable lies under `dir`: what a host installed into the
/// throwaway home and left running (Codex CLI's app-server daemon).
pub fn kill_left_under(dir: &Path) {
    let Ok(all) = std::fs::read_dir("/proc") else {
        return;
    };
    for pid in all
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
    {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        if exe.is_some_and(|e| e.starts_with(dir)) {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

/// After the second run: dev and review were submitted, the task is complete.
pub fn the_task_completes(place: &Place, results: &[String], id: &str) {
    assert_eq!(results.len(), 3, "three tool results: {results:#?}");
    assert!(results[0].contains("stage: dev"), "{}", results[0]);
    assert_readable_once(&results[0], "# Role: Developer");
    assert_readable_once(&results[1], "# Role: Code Reviewer");
    assert!(results[2].contains("state: completed"), "{}", results[2]);
    let session = place.session(id);
    assert_eq!(
        (&session["current_stage"], &session["current_state"]),
        (&json!("review"), &json!("completed")),
        "{session:#}"
    );
}
