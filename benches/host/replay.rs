//! A recorded real run played again: the workload `cronlite-full`
//! (benches/workloads/cronlite-full/, its README says what each file holds and how it is
//! played). A fresh clone of the project at its first commit, with the recorded git
//! identity and the project's checks as `.bmad/config.toml`; before each call, the
//! project's commits made before it (set to the commit's code, committed with its message,
//! author and dates) and the human's terminal commands (in a pty, answers typed as their
//! questions show); every dialog closed without a decision; the placeholders filled from
//! what the replay's own replies and session say. After each call the session's stage and
//! state (read from disk) must be the recorded ones: a replay that drifts is refused, not
//! measured.
//!
//! The recorded reviews predate the review in layers: where the latest role prompt named
//! layers, the replay gives a recorded review the `## <layer>` section each needs (saying
//! the recording has no findings of its own for it), as a host that followed the prompt
//! would, and counts what each layer's fresh context would read (`layers_read`): its
//! instructions' file, the diff of the project's files (not the workflow's) since the
//! development began, and for the intent check the PRD and the plan.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::stdio::{Conn, Dialog};
use super::terminal;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The workload's folder in the repository.
const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../benches/workloads/cronlite-full"
);

/// The recorded run.
pub struct Workload {
    /// The calls, in order (`i`, `label`, `at`, `args`, `recorded`).
    pub calls: Vec<Value>,
    /// The human's terminal commands (`before`, `cmd`, `typed`, `rc`).
    human: Vec<Value>,
    /// `workload.json`: identity, first commit, commits with their times, figures.
    pub meta: Value,
}

fn jsonl(name: &str) -> Res<Vec<Value>> {
    let text = std::fs::read_to_string(Path::new(DIR).join(name))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Ok(serde_json::from_str(l)?))
        .collect()
}

impl Workload {
    pub fn load() -> Res<Workload> {
        let meta = std::fs::read_to_string(Path::new(DIR).join("workload.json"))?;
        Ok(Workload {
            calls: jsonl("calls.jsonl")?,
            human: jsonl("human.jsonl")?,
            meta: serde_json::from_str(&meta)?,
        })
    }

    /// The calls' labels, in order.
    pub fn labels(&self) -> Vec<String> {
        self.calls
            .iter()
            .map(|c| c["label"].as_str().unwrap_or("?").to_string())
            .collect()
    }
}

/// What one replay gave: each raw tool result, and what drifted from the recording.
pub struct Replayed {
    pub results: Vec<Value>,
    pub drift: Vec<String>,
    /// Per review submitted in layers: the call and the bytes its layers' fresh contexts
    /// read.
    pub layers_read: LayersRead,
}

/// Per review submitted in layers: the call and the bytes its layers read.
pub type LayersRead = Vec<(u64, usize)>;

/// The review in layers as the replay follows it.
#[derive(Default)]
struct Layered {
    /// The layers the latest role prompt named.
    named: Option<Vec<(String, String)>>,
    /// The commit the development began from.
    since: Option<String>,
    read: Vec<(u64, usize)>,
}

impl Layered {
    /// Before call `i`: a review submitted in layers gets its sections, and its cost.
    fn before(&mut self, project: &Path, i: u64, args: &mut Value) -> Res<()> {
        let reviews = args["action"] == "submit" && args["stage"] == "review";
        let Some(named) = self.named.as_ref().filter(|_| reviews) else {
            return Ok(());
        };
        let review = args["claude_result"].as_str().unwrap_or_default();
        args["claude_result"] = with_layers(review, named).into();
        let session = session_on_disk(project)?;
        let base = self.since.as_deref().unwrap_or("HEAD");
        self.read
            .push((i, layers_cost(project, named, base, &session)?));
        Ok(())
    }

    /// After a call: the development's first commit, and the layers a prompt named.
    fn after(&mut self, session: &Value, result: &Value) {
        if self.since.is_none() {
            self.since = session["stages"]["dev"]["round_began"]["commit"]
                .as_str()
                .map(String::from);
        }
        // Claude Code is sent the text alone; other hosts the structured reply.
        let prompt = result["structuredContent"]["role_prompt"]
            .as_str()
            .or(result["content"][0]["text"].as_str());
        if let Some(named) = prompt.and_then(layers_named) {
            self.named = Some(named);
        }
    }
}

/// The layers the latest role prompt named (`- <name>: `<file>`` under `## Review in
/// layers`, an installed one's line going on after it), if it named them.
fn layers_named(prompt: &str) -> Option<Vec<(String, String)>> {
    let at = prompt.find("## Review in layers")?;
    let block = &prompt[at..];
    // The built-in layers are named in the folder the block gives.
    let ours = block
        .split_once("(ours in `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(folder, _)| folder.trim_end_matches('/'));
    let named = block
        .lines()
        .skip_while(|l| !l.starts_with("- "))
        .map_while(|l| l.strip_prefix("- "))
        .filter_map(|l| {
            // An installed layer's line goes on after its file (` → <its reply>`).
            let (name, file) = l.split_once(": `")?;
            let (file, _) = file.split_once('`')?;
            let file = match ours {
                Some(folder) if !file.contains('/') => format!("{folder}/{file}"),
                _ => file.to_string(),
            };
            Some((name.to_string(), file))
        })
        .collect::<Vec<_>>();
    (!named.is_empty()).then_some(named)
}

/// `review` with a section for each of `layers` it lacks.
fn with_layers(review: &str, layers: &[(String, String)]) -> String {
    let mut out = review.trim_end().to_string();
    for (name, _) in layers {
        if !review.contains(&format!("## {name}")) {
            out.push_str(&format!(
                "\n\n## {name}\nNo findings of its own: the recorded review predates the layers."
            ));
        }
    }
    out.push('\n');
    out
}

/// What the layers' fresh contexts read for one review: each its file and the diff since
/// `since`, the intent check the PRD and the plan too.
fn layers_cost(
    project: &Path,
    layers: &[(String, String)],
    since: &str,
    session: &Value,
) -> Res<usize> {
    // The change as a reviewer sees it: the project's files, not the workflow's own.
    let project_files = [
        "diff",
        since,
        "--",
        ".",
        ":(exclude).bmad-task",
        ":(exclude).claude",
        ":(exclude).bmad",
        ":(exclude)_bmad-output",
    ];
    let diff = git(project, &project_files, &[])?.len();
    let size = |rel: &str| std::fs::metadata(project.join(rel)).map_or(0, |m| m.len() as usize);
    let mut total = 0;
    for (name, file) in layers {
        total += size(file) + diff;
        if name == "Acceptance Audit" {
            for stage in ["po", "sm"] {
                total += session["stages"][stage]["artifact"]["path"]
                    .as_str()
                    .map_or(0, size);
            }
        }
    }
    Ok(total)
}

fn git(project: &Path, args: &[&str], env: &[(&str, &str)]) -> Res<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(project)
        .envs(env.iter().copied())
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The interpreter `{{python3.9}}` names: `python3.9` where installed, else `python3`.
fn python39() -> &'static str {
    let found = Command::new("python3.9")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        "python3.9"
    } else {
        "python3"
    }
}

/// A fresh clone of the project at its first commit in `project`, with the run's identity
/// and its checks.
fn prepare(w: &Workload, project: &Path) -> Res<()> {
    let bundle = Path::new(DIR).join("project.bundle");
    let parent = project.parent().ok_or("no parent")?;
    git(
        parent,
        &[
            "clone",
            "-q",
            &bundle.display().to_string(),
            &project.display().to_string(),
        ],
        &[],
    )?;
    let first = w.meta["first_commit"].as_str().ok_or("first_commit")?;
    git(project, &["reset", "-q", "--hard", first], &[])?;
    let who = &w.meta["identity"];
    git(
        project,
        &["config", "user.name", who[0].as_str().unwrap_or_default()],
        &[],
    )?;
    git(
        project,
        &["config", "user.email", who[1].as_str().unwrap_or_default()],
        &[],
    )?;
    let checks = std::fs::read_to_string(Path::new(DIR).join("checks.toml"))?;
    std::fs::create_dir_all(project.join(".bmad"))?;
    std::fs::write(
        project.join(".bmad/config.toml"),
        checks.replace("{{python3.9}}", python39()),
    )?;
    Ok(())
}

/// Applies each commit made before `at` (a commit in the same second came after the call)
/// not yet applied: the work tree set to its code, then committed as it was.
fn apply_commits(w: &Workload, project: &Path, at: &str, applied: &mut usize) -> Res<()> {
    let commits = w.meta["commits"].as_array().ok_or("commits")?;
    while let Some(c) = commits
        .get(*applied)
        .filter(|c| c["at"].as_str() < Some(at))
    {
        let sha = c["sha"].as_str().ok_or("sha")?;
        git(project, &["checkout", sha, "--", "."], &[])?;
        git(project, &["add", "-A"], &[])?;
        let committer = git(project, &["show", "-s", "--format=%cn%n%ce%n%cI", sha], &[])?;
        let mut who = committer.lines();
        let (name, email, date) = (
            who.next().unwrap_or_default(),
            who.next().unwrap_or_default(),
            who.next().unwrap_or_default(),
        );
        git(
            project,
            &["commit", "-q", "--allow-empty", "-C", sha],
            &[
                ("GIT_COMMITTER_NAME", name),
                ("GIT_COMMITTER_EMAIL", email),
                ("GIT_COMMITTER_DATE", date),
            ],
        )?;
        *applied += 1;
    }
    Ok(())
}

/// The placeholders of the recording filled from the replay's own values.
struct Filled {
    project: String,
    session_id: String,
    task_name: String,
    digest: String,
}

impl Filled {
    fn fill(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => s
                .replace("{{project}}", &self.project)
                .replace("{{session_id}}", &self.session_id)
                .replace("{{task_name}}", &self.task_name)
                .replace("{{document_digest}}", &self.digest)
                .into(),
            Value::Array(a) => a.iter().map(|x| self.fill(x)).collect(),
            Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), self.fill(x))).collect(),
            other => other.clone(),
        }
    }
}

/// The session on disk (the one the project has): its id, task name, stage and state.
fn session_on_disk(project: &Path) -> Res<Value> {
    for entry in std::fs::read_dir(project.join(".bmad-task"))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("session-") && name.ends_with(".json") {
            return Ok(serde_json::from_str(&std::fs::read_to_string(&path)?)?);
        }
    }
    Err("no session under .bmad-task/".into())
}

/// The document digest a reply's text names, if any (`document_digest: …`).
fn digest_in(text: &str) -> Option<String> {
    let at = text.find("document_digest")?;
    let rest = text[at + "document_digest".len()..].trim_start_matches([':', ' ', '`', '"']);
    let digest: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
    (digest.len() >= 12).then_some(digest)
}

/// The human's commands before call `i`, each run in a pty; a drift when one exits other
/// than recorded.
fn human_before(
    w: &Workload,
    (server, project, home): (&Path, &Path, &Path),
    i: u64,
    filled: &Filled,
    drift: &mut Vec<String>,
) -> Res<()> {
    for h in w.human.iter().filter(|h| h["before"].as_u64() == Some(i)) {
        let argv: Vec<String> = h["cmd"]
            .as_array()
            .ok_or("cmd")?
            .iter()
            .skip(1)
            .map(|a| filled.fill(a).as_str().unwrap_or_default().to_string())
            .collect();
        let typed: Vec<String> = h["typed"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t.as_str().unwrap_or_default().to_string())
            .collect();
        let (rc, shown) = terminal::run(server, project, home, &argv, &typed)?;
        if Some(rc as i64) != h["rc"].as_i64() {
            drift.push(format!(
                "before call {i}: `bmad-mcp {}` exited {rc}, recorded {}:\n{shown}",
                argv.join(" "),
                h["rc"]
            ));
        }
    }
    Ok(())
}

/// Replays the workload as `client`; each raw result, and what drifted.
pub fn replay(server: &Path, w: &Workload, client: &str) -> Res<Replayed> {
    let root = tempfile::tempdir()?;
    let home = root.path().join("home");
    std::fs::create_dir_all(&home)?;
    let project: PathBuf = root
        .path()
        .join(w.meta["project_name"].as_str().unwrap_or("p"));
    prepare(w, &project)?;
    let mut conn = Conn::open(server, &project, &home, client, Dialog::Cancel)?;
    let mut filled = Filled {
        project: project.display().to_string(),
        session_id: String::new(),
        task_name: String::new(),
        digest: String::new(),
    };
    let (mut applied, mut results, mut drift) = (0, Vec::new(), Vec::new());
    let mut layered = Layered::default();
    for call in &w.calls {
        let i = call["i"].as_u64().unwrap_or(0);
        apply_commits(
            w,
            &project,
            call["at"].as_str().unwrap_or_default(),
            &mut applied,
        )?;
        human_before(
            w,
            (server, project.as_path(), home.as_path()),
            i,
            &filled,
            &mut drift,
        )?;
        let mut args = filled.fill(&call["args"]);
        layered.before(&project, i, &mut args)?;
        let result = conn.call(&args)?;
        let session = session_on_disk(&project)?;
        layered.after(&session, &result);
        filled.session_id = session["session_id"].as_str().unwrap_or_default().into();
        filled.task_name = session["task_name"].as_str().unwrap_or_default().into();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let digest = result["structuredContent"]["document_digest"]
            .as_str()
            .map(String::from)
            .or_else(|| digest_in(text));
        if let Some(d) = &digest {
            filled.digest = d.clone();
        }
        let rec = &call["recorded"];
        let got = (
            session["current_stage"].as_str().unwrap_or("?"),
            session["current_state"].as_str().unwrap_or("?"),
            result["isError"] == true,
        );
        let want = (
            rec["stage"].as_str().unwrap_or("?"),
            rec["state"].as_str().unwrap_or("?"),
            rec["is_error"] == true,
        );
        if got != want {
            drift.push(format!("call {i}: {got:?}, recorded {want:?}:\n{text}"));
        }
        results.push(result);
    }
    Ok(Replayed {
        results,
        drift,
        layers_read: layered.read,
    })
}
