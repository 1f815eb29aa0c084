//! `bmad-mcp setup <host>` as a person runs it, for every host, in a throw-away home and
//! project: the file gets our entry in the host's shape beside another server's entry and
//! the file's comments, which survive; a second run changes nothing and says so;
//! `--remove` takes our entry out and nothing else. Where the host is installed
//! (`./scripts/test` puts the pinned CLIs in `target/npm/<name>/`), its own `mcp list`
//! reads the written file: Claude Code, Gemini CLI and opencode connect to the server;
//! Codex and Copilot CLI, whose `list` does not connect, list it with our command. A host
//! that could not be installed (`target/npm/<name>.skipped`) is reported skipped with its
//! reason; the checks of the file still run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use jsonc_parser::cst::CstRootNode;
use serde_json::Value;

use crate::support::{server_path, ROOT};

/// A home and a project, both empty, that every command of a test runs with.
struct Place {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        Place {
            _dir: dir,
            home,
            project,
        }
    }

    /// `cmd` run in the project with this home, and none of the variables that would
    /// send a host (or setup) to the tester's own configuration.
    fn isolate<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        for (name, _) in std::env::vars() {
            if name.starts_with("BMAD_") {
                cmd.env_remove(name);
            }
        }
        cmd.current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("CLAUDE_CONFIG_DIR", self.home.join(".claude"))
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("COPILOT_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::null())
    }

    /// `bmad-mcp setup <args>` with the variables `env`; (exit status, stdout, stderr).
    fn setup(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut cmd = Command::new(server_path());
        self.isolate(&mut cmd)
            .arg("setup")
            .args(args)
            .envs(env.iter().copied());
        run_for(&mut cmd, 30)
    }
}

/// What setup printed after the entry says, from the hosts table, where the host declines
/// the gate's dialog unseen and how to be asked in it, and what else the person must do
/// (Gemini CLI's rule for headless runs).
fn left_to_the_person(host: &str, out: &str) {
    use bmad_mcp::hosts::{by_setup_name, Dialog};
    let row = by_setup_name(host).unwrap();
    let mut said: Vec<&str> = Vec::new();
    if let Some(Dialog::DeclinedUnattended(u)) = row.client.map(|c| c.dialog) {
        said.extend([u.when, u.shown]);
    }
    said.extend(
        row.config
            .and_then(|c| c.still_to_do)
            .iter()
            .flat_map(|t| t.lines()),
    );
    for line in said {
        assert!(out.contains(line), "{host}: setup says `{line}`:\n{out}");
    }
}

/// Runs `cmd` for at most `secs` seconds; (exit status, stdout, stderr).
fn run_for(cmd: &mut Command, secs: u64) -> (i32, String, String) {
    let what = format!("{cmd:?}");
    crate::hosts::run_within(cmd, &what, Duration::from_secs(secs))
}

/// A command that writes more than a pipe holds still ends, its output whole.
#[cfg(unix)]
#[test]
fn a_long_output_is_read_as_it_comes() {
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "head -c 300000 /dev/zero | tr '\\0' x; head -c 100000 /dev/zero | tr '\\0' y >&2",
    ]);
    let (code, out, err) = run_for(&mut cmd, 20);
    assert_eq!((code, out.len(), err.len()), (0, 300_000, 100_000));
}

/// One host's case: its files, a file as a person may have it (another server, comments
/// where the host allows them), and the parts of it that must survive every run.
struct Case {
    host: &'static str,
    /// The user's file, relative to the home (`.config` is XDG_CONFIG_HOME).
    user: &'static str,
    /// The project's file, relative to the project.
    project: &'static str,
    seed: &'static str,
    kept: &'static [&'static str],
}

const CLAUDE_CODE: Case = Case {
    host: "claude-code",
    user: ".claude/.claude.json",
    project: ".mcp.json",
    // In Claude Code's own layout: it rewrites the file whenever it runs.
    seed: "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"/bin/false\",\n      \"args\": []\n    }\n  }\n}\n",
    kept: &[
        "\"numStartups\": 3",
        "\"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"/bin/false\",\n      \"args\": []\n    }",
    ],
};

const CODEX: Case = Case {
    host: "codex",
    user: ".codex/config.toml",
    project: ".codex/config.toml",
    seed: "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"/bin/false\" # theirs\nenabled = false\n",
    kept: &[
        "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"/bin/false\" # theirs\nenabled = false\n",
    ],
};

const GEMINI: Case = Case {
    host: "gemini",
    user: ".gemini/settings.json",
    project: ".gemini/settings.json",
    seed: "{\n  // my settings\n  \"mcpServers\": {\n    /* theirs */\n    \"other\": {\"command\": \"/bin/false\", \"args\": []}\n  }\n}\n",
    kept: &[
        "// my settings",
        "/* theirs */\n    \"other\": {\"command\": \"/bin/false\", \"args\": []}",
    ],
};

const OPENCODE: Case = Case {
    host: "opencode",
    user: ".config/opencode/opencode.json",
    project: "opencode.json",
    seed: "{\n  // my settings\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"other\": {\"type\": \"local\", \"command\": [\"/bin/false\"], \"enabled\": false} // theirs\n  }\n}\n",
    kept: &[
        "// my settings\n  \"$schema\": \"https://opencode.ai/config.json\",",
        "\"other\": {\"type\": \"local\", \"command\": [\"/bin/false\"], \"enabled\": false}",
        "// theirs",
    ],
};

const COPILOT: Case = Case {
    host: "copilot",
    user: ".copilot/mcp-config.json",
    project: ".github/mcp.json",
    seed: "{\n  \"mcpServers\": {\n    \"other\": {\"type\": \"local\", \"command\": \"/bin/false\", \"args\": [], \"tools\": [\"*\"]}\n  }\n}\n",
    kept: &["\"other\": {\"type\": \"local\", \"command\": \"/bin/false\", \"args\": [], \"tools\": [\"*\"]}"],
};

const CURSOR: Case = Case {
    host: "cursor",
    user: ".cursor/mcp.json",
    project: ".cursor/mcp.json",
    seed: "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"npx\", \"args\": [\"-y\", \"other-mcp\"]}\n  }\n}\n",
    kept: &["\"other\": {\"command\": \"npx\", \"args\": [\"-y\", \"other-mcp\"]}"],
};

const VSCODE: Case = Case {
    host: "vscode",
    user: ".config/Code/User/mcp.json",
    project: ".vscode/mcp.json",
    seed: "{\n  // my servers\n  \"servers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"other-mcp\"]}, // theirs\n  },\n  \"inputs\": [],\n}\n",
    kept: &[
        "// my servers",
        "\"other\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"other-mcp\"]}, // theirs",
        "\"inputs\": [],\n}",
    ],
};

const CLAUDE_DESKTOP: Case = Case {
    host: "claude-desktop",
    user: ".config/Claude/claude_desktop_config.json",
    project: "",
    seed: "{\n  \"globalShortcut\": \"Alt+Space\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"uvx\", \"args\": [\"other-mcp\"]}\n  }\n}\n",
    kept: &[
        "\"globalShortcut\": \"Alt+Space\"",
        "\"other\": {\"command\": \"uvx\", \"args\": [\"other-mcp\"]}",
    ],
};

impl Case {
    fn file(&self, place: &Place, scope: &str) -> PathBuf {
        match scope {
            "user" => place.home.join(self.user),
            _ => place.project.join(self.project),
        }
    }

    /// Our entry as the file has it now (`None`: absent), after checking that every part
    /// of the seed that must survive is still there, byte for byte.
    fn entry(&self, file: &Path) -> Option<Value> {
        let text = std::fs::read_to_string(file).unwrap();
        for kept in self.kept {
            assert!(
                text.contains(kept),
                "{} lost {kept:?}:\n{text}",
                file.display()
            );
        }
        let all = if self.host == "codex" {
            let table: toml::Table = text.parse().unwrap();
            serde_json::to_value(table).unwrap()
        } else {
            CstRootNode::parse(&text, &Default::default())
                .unwrap()
                .value()
                .and_then(|v| v.to_serde_value())
                .unwrap()
        };
        let servers = match self.host {
            "codex" => "mcp_servers",
            "opencode" => "mcp",
            "vscode" => "servers",
            _ => "mcpServers",
        };
        assert!(all[servers]["other"].is_object(), "{text}");
        all[servers].get("bmad").cloned()
    }

    /// Setup in `scope` over the seeded file: our entry written in the host's shape, and
    /// a second run that changes nothing. Returns the entry.
    fn add(&self, place: &Place, scope: &str, env: &[(&str, &str)]) -> Value {
        let file = self.file(place, scope);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, self.seed).unwrap();
        let args = [self.host, "--scope", scope];
        let (code, out, err) = place.setup(&args, env);
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains(&file.display().to_string()), "{out}");
        assert!(
            out.contains("before: no `bmad` entry")
                && out.contains("written; the file's other content is as it was."),
            "{out}"
        );
        let entry = self.entry(&file).expect("our entry");
        assert_shape(self.host, &entry);
        assert!(out.contains(server_path()), "the entry is printed:\n{out}");
        left_to_the_person(self.host, &out);
        let written = std::fs::read(&file).unwrap();
        let (code, again, err) = place.setup(&args, env);
        assert_eq!(code, 0, "{again}{err}");
        assert!(
            again.contains("already registered, nothing changed"),
            "{again}"
        );
        assert_eq!(
            std::fs::read(&file).unwrap(),
            written,
            "a second run changed the file"
        );
        entry
    }

    /// `--remove`: our entry goes, the rest stays; a second one changes nothing.
    fn remove(&self, place: &Place, scope: &str) {
        let file = self.file(place, scope);
        let args = [self.host, "--scope", scope, "--remove"];
        let (code, out, err) = place.setup(&args, &[]);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains("after: no `bmad` entry") && out.contains("removed"),
            "{out}"
        );
        assert_eq!(self.entry(&file), None);
        let left = std::fs::read(&file).unwrap();
        let (code, again, err) = place.setup(&args, &[]);
        assert_eq!(code, 0, "{again}{err}");
        assert!(
            again.contains("no `bmad` entry: nothing changed"),
            "{again}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), left);
    }
}

/// Our entry has the fields its host expects, and runs this very binary over stdio.
fn assert_shape(host: &str, entry: &Value) {
    let command = match host {
        "opencode" => {
            assert_eq!(entry["type"], "local", "{entry}");
            assert_eq!(entry["enabled"], true, "{entry}");
            assert_eq!(
                entry["command"].as_array().map(Vec::len),
                Some(1),
                "{entry}"
            );
            &entry["command"][0]
        }
        _ => {
            assert_eq!(entry["args"], serde_json::json!([]), "{entry}");
            &entry["command"]
        }
    };
    assert_eq!(command.as_str(), Some(server_path()), "{entry}");
    let kind = match host {
        "claude-code" | "vscode" => Some("stdio"),
        "copilot" | "opencode" => Some("local"),
        _ => None,
    };
    assert_eq!(entry["type"].as_str(), kind, "{entry}");
    if host == "copilot" {
        assert_eq!(entry["tools"], serde_json::json!(["*"]), "{entry}");
    }
}

/// The pinned host CLI `bin` of `target/npm/<name>`, or `None` after printing why it is
/// skipped when `./scripts/test` could not install it.
fn host_cli(name: &str, bin: &str) -> Option<PathBuf> {
    crate::support::npm::package_bin(name, bin, &format!("{name}'s own `mcp list`"))
}

/// `cli <args>` in the place, with the variables `env`; (exit status, stdout, stderr).
fn host(place: &Place, cli: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(cli);
    place.isolate(&mut cmd).args(args).envs(env.iter().copied());
    run_for(&mut cmd, 120)
}

/// The line of `list` that names our server.
fn line_of<'a>(list: &'a str, what: &str) -> &'a str {
    list.lines()
        .find(|l| l.contains("bmad") && l.contains(what))
        .unwrap_or_else(|| panic!("no line with bmad and {what:?}:\n{list}"))
}

#[test]
#[ignore = "needs the pinned Claude Code CLI: run ./scripts/test"]
fn claude_code_connects_to_what_setup_wrote_in_either_scope() {
    let place = Place::new();
    CLAUDE_CODE.add(&place, "user", &[]);
    let list = |dir: &Path| {
        let mut cmd = crate::support::claude::command(&place.home, &["mcp", "get", "bmad"]);
        let (code, out, err) = run_for(cmd.current_dir(dir), 120);
        assert_eq!(code, 0, "{out}{err}");
        out
    };
    let got = list(&place.project);
    assert!(
        got.contains("Scope: User config") && got.contains("✔ Connected"),
        "{got}"
    );
    assert!(
        got.contains(&format!("Command: {}", server_path())),
        "{got}"
    );
    CLAUDE_CODE.remove(&place, "user");
    // The project's `.mcp.json`: Claude Code asks the person to approve it first.
    CLAUDE_CODE.add(&place, "project", &[]);
    let got = list(&place.project);
    assert!(
        got.contains("Scope: Project config")
            && got.contains(&format!("Command: {}", server_path())),
        "{got}"
    );
    CLAUDE_CODE.remove(&place, "project");
}

#[test]
#[ignore = "needs the pinned Codex CLI: run ./scripts/test"]
fn codex_lists_what_setup_wrote_with_the_settings_in_its_env() {
    let place = Place::new();
    let owner = [
        ("BMAD_OWNER", "Ann <ann@example.com>"),
        ("BMAD_PROJECT_ROOT", "/elsewhere"),
        ("BMAD_MCP_TOKEN", "secret"),
        ("BMAD_HTTP_REQUEST_SECS", "5"),
        ("BMAD_TEST_PYTHON", "/usr/bin/python3"),
        ("BMAD_CLAIMS", "local"),
    ];
    let entry = CODEX.add(&place, "user", &owner);
    // Codex passes a server only an allow-list of variables: the settings go in its env,
    // not the project root (each project is the server's working directory), nor what
    // only `serve --http` reads (a token has no place in a file), nor a variable the
    // server does not read (a test's).
    assert_eq!(
        entry["env"],
        serde_json::json!({"BMAD_CLAIMS": "local", "BMAD_OWNER": "Ann <ann@example.com>"})
    );
    let cli = host_cli("codex", "codex");
    if let Some(cli) = &cli {
        let ours = codex_lists_bmad(&place, cli).expect("bmad listed");
        assert_eq!(ours["transport"]["command"], server_path(), "{ours}");
        assert_eq!(
            ours["transport"]["env"]["BMAD_OWNER"], "Ann <ann@example.com>",
            "{ours}"
        );
        assert_eq!(ours["enabled"], true, "{ours}");
    }
    CODEX.remove(&place, "user");
    CODEX.add(&place, "project", &[]);
    if let Some(cli) = &cli {
        // Codex reads a project's servers only once the person trusted the project.
        assert_eq!(codex_lists_bmad(&place, cli), None);
        let user = place.home.join(".codex/config.toml");
        let mut text = std::fs::read_to_string(&user).unwrap();
        let project = serde_json::to_string(&place.project).unwrap();
        text.push_str(&format!(
            "\n[projects.{project}]\ntrust_level = \"trusted\"\n"
        ));
        std::fs::write(&user, text).unwrap();
        let ours = codex_lists_bmad(&place, cli).expect("bmad listed in the trusted project");
        assert_eq!(ours["transport"]["command"], server_path(), "{ours}");
    }
    CODEX.remove(&place, "project");
}

/// Our server as `codex mcp list --json` lists it, run in the project.
fn codex_lists_bmad(place: &Place, cli: &Path) -> Option<Value> {
    let codex_home = place.home.join(".codex");
    let env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let (code, out, err) = host(place, cli, &["mcp", "list", "--json"], &env);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out[out.find('[').unwrap()..]).unwrap();
    let found = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "bmad");
    found.cloned()
}

#[test]
#[ignore = "needs the pinned Gemini CLI: run ./scripts/test"]
fn gemini_connects_to_what_setup_wrote_in_either_scope() {
    let place = Place::new();
    let cli = host_cli("gemini", "gemini");
    for scope in ["user", "project"] {
        GEMINI.add(&place, scope, &[]);
        if let Some(cli) = &cli {
            // A folder not trusted hides its servers: this one is.
            let trust = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];
            let (code, out, err) = host(&place, cli, &["mcp", "list"], &trust);
            assert_eq!(code, 0, "{out}{err}");
            let out = format!("{out}{err}");
            let line = line_of(&out, server_path());
            assert!(
                line.contains("Connected") && !line.contains("Disconnected"),
                "{scope}: {out}"
            );
        }
        GEMINI.remove(&place, scope);
    }
}

#[test]
#[ignore = "needs the pinned opencode CLI: run ./scripts/test"]
fn opencode_connects_to_what_setup_wrote_in_either_scope() {
    let place = Place::new();
    let cli = host_cli("opencode", "opencode");
    for scope in ["user", "project"] {
        OPENCODE.add(&place, scope, &[]);
        if let Some(cli) = &cli {
            let quiet = [("OPENCODE_DISABLE_MODELS_FETCH", "1")];
            let (code, out, err) = host(&place, cli, &["mcp", "list"], &quiet);
            assert_eq!(code, 0, "{out}{err}");
            let out = format!("{out}{err}");
            assert!(
                line_of(&out, "bmad").contains("connected"),
                "{scope}: {out}"
            );
            assert!(out.contains(server_path()), "{out}");
        }
        OPENCODE.remove(&place, scope);
    }
}

#[test]
#[ignore = "needs the pinned Copilot CLI: run ./scripts/test"]
fn copilot_lists_what_setup_wrote_in_either_scope() {
    let place = Place::new();
    let cli = host_cli("copilot", "copilot");
    // Copilot reads a workspace's servers only in a folder the person trusts.
    let config = place.home.join(".copilot/config.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let trusted = serde_json::json!({"trustedFolders": [place.project]});
    std::fs::write(&config, trusted.to_string()).unwrap();
    // Its first run unpacks 235 MB; one cache for every run of the test.
    let cache = Path::new(ROOT).join("target/tmp/setup-copilot-cache");
    for (scope, source) in [("user", "user"), ("project", "workspace")] {
        COPILOT.add(&place, scope, &[]);
        if let Some(cli) = &cli {
            let env = [("XDG_CACHE_HOME", cache.to_str().unwrap())];
            let (code, out, err) = host(&place, cli, &["mcp", "list", "--json"], &env);
            assert_eq!(code, 0, "{out}{err}");
            let listed: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
            let ours = &listed["mcpServers"]["bmad"];
            assert_eq!(ours["command"], server_path(), "{out}");
            assert_eq!(ours["source"], source, "{out}");
            assert!(listed["mcpServers"]["other"].is_object(), "{out}");
        }
        COPILOT.remove(&place, scope);
    }
}

/// The hosts that cannot run here: their files, in each scope they have.
#[test]
fn cursor_vscode_and_claude_desktop_get_their_documented_entries() {
    for (case, scopes) in [
        (&CURSOR, &["user", "project"][..]),
        (&VSCODE, &["user", "project"][..]),
        (&CLAUDE_DESKTOP, &["user"][..]),
    ] {
        let place = Place::new();
        for scope in scopes {
            case.add(&place, scope, &[]);
            case.remove(&place, scope);
        }
    }
    let place = Place::new();
    let (code, out, err) = place.setup(&["claude-desktop", "--scope", "project"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("no project configuration"), "{err}");
}

#[test]
fn a_new_file_is_made_and_a_removal_from_no_file_makes_none() {
    let place = Place::new();
    let file = place.home.join(".cursor/mcp.json");
    let (code, out, err) = place.setup(&["cursor", "--remove"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("nothing changed") && !file.exists(), "{out}");
    let (code, out, err) = place.setup(&["cursor"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    // A new file has no other content to speak of.
    assert!(
        out.contains("the file is new") && !out.contains("other content"),
        "{out}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with("}\n"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["mcpServers"]["bmad"]["command"], server_path(), "{text}");
}

/// Installed under another name, the binary updates and removes the entry its own setup
/// wrote (in JSON and in Codex's TOML), and still leaves another program's alone.
#[test]
fn a_binary_of_another_name_keeps_its_own_entry() {
    let place = Place::new();
    let renamed = place.home.join("bin/bmad-server");
    std::fs::create_dir_all(renamed.parent().unwrap()).unwrap();
    std::fs::copy(server_path(), &renamed).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&renamed);
        place.isolate(&mut cmd).arg("setup").args(args);
        run_for(&mut cmd, 30)
    };
    for (host, file) in [
        ("cursor", place.home.join(".cursor/mcp.json")),
        ("codex", place.home.join(".codex/config.toml")),
    ] {
        for args in [&[host][..], &[host][..]] {
            let (code, out, err) = run(args);
            assert_eq!(code, 0, "{host}: {out}{err}");
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(renamed.to_str().unwrap()), "{text}");
        let (code, out, err) = run(&[host, "--remove"]);
        assert_eq!(code, 0, "{host}: {out}{err}");
        assert!(!std::fs::read_to_string(&file)
            .unwrap()
            .contains("bmad-server"));
    }
}

#[test]
fn another_programs_entry_named_bmad_is_left_as_it_is() {
    let place = Place::new();
    let file = place.home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let theirs =
        "{\"mcpServers\": {\"bmad\": {\"command\": \"npx\", \"args\": [\"bmad-method\"]}}}\n";
    std::fs::write(&file, theirs).unwrap();
    for args in [&["gemini"][..], &["gemini", "--remove"][..]] {
        let (code, out, err) = place.setup(args, &[]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            err.contains("runs `npx`") && err.contains("is left as it was"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
    }
}

#[test]
fn a_file_with_a_syntax_error_is_refused_untouched() {
    let place = Place::new();
    let file = place.project.join(".vscode/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let broken = "{ \"servers\": { \"other\": ";
    std::fs::write(&file, broken).unwrap();
    let (code, out, err) = place.setup(&["vscode", "--scope", "project"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("not valid JSON"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
}

/// A user's file that is a link (into a dotfiles repository) stays a link: the file it
/// leads to is what changes, outside the home too, and setup says which.
#[cfg(unix)]
#[test]
fn a_linked_file_stays_a_link() {
    let place = Place::new();
    let dotfiles = place.home.parent().unwrap().join("dotfiles/codex.toml");
    std::fs::create_dir_all(dotfiles.parent().unwrap()).unwrap();
    std::fs::write(&dotfiles, "# kept\nmodel = \"o3\"\n").unwrap();
    std::fs::create_dir_all(place.home.join(".codex")).unwrap();
    let link = place.home.join(".codex/config.toml");
    std::os::unix::fs::symlink("../../dotfiles/codex.toml", &link).unwrap();
    let (code, out, err) = place.setup(&["codex"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    // Where the bytes went is said, not only the link's name.
    let real = dotfiles.canonicalize().unwrap();
    assert!(
        out.contains(&format!("(which leads to {})", real.display())),
        "{out}"
    );
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&dotfiles).unwrap();
    assert!(
        text.starts_with("# kept\nmodel = \"o3\"\n") && text.contains(server_path()),
        "{text}"
    );
}

/// A project's file comes from whoever committed it: a link in it (the file's or a
/// folder's, dangling or not) that leads out of the project is refused and nothing is
/// written there; one that stays in the project is followed.
#[cfg(unix)]
#[test]
fn a_link_in_the_project_does_not_take_setup_out_of_it() {
    let place = Place::new();
    let victim = place.project.parent().unwrap().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let victim = victim.canonicalize().unwrap();
    std::fs::create_dir_all(place.project.join(".vscode")).unwrap();
    let file_link = place.project.join(".vscode/mcp.json");
    std::os::unix::fs::symlink("../../victim/.bash_profile", &file_link).unwrap();
    let folder_link = place.project.join(".gemini");
    std::os::unix::fs::symlink(&victim, &folder_link).unwrap();
    for (host, link, lands) in [
        ("vscode", &file_link, victim.join(".bash_profile")),
        ("gemini", &folder_link, victim.join("settings.json")),
    ] {
        let (code, out, err) = place.setup(&[host, "--scope", "project"], &[]);
        assert_eq!(code, 1, "{host}: {out}{err}");
        assert!(
            err.contains(&format!(
                "leads to {}, outside the project",
                lands.display()
            )),
            "{host}: {err}"
        );
        assert!(!lands.exists(), "{host} wrote {}", lands.display());
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
    }
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
    // A link that stays in the project is followed, and said.
    std::fs::create_dir_all(place.project.join("config")).unwrap();
    std::os::unix::fs::symlink("config/mcp.json", place.project.join(".mcp.json")).unwrap();
    let (code, out, err) = place.setup(&["claude-code", "--scope", "project"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let real = place
        .project
        .canonicalize()
        .unwrap()
        .join("config/mcp.json");
    assert!(
        out.contains(&format!("(which leads to {})", real.display())),
        "{out}"
    );
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.contains(server_path()), "{text}");
}

/// setup's project is the one the working directory is in, or `--project`: never the one a
/// variable of the environment names (a host's shell or a profile may carry it).
#[test]
fn setups_project_is_where_it_runs_or_the_one_named() {
    let place = Place::new();
    let elsewhere = place.project.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let elsewhere_text = elsewhere.display().to_string();
    for var in ["BMAD_PROJECT_ROOT", "CLAUDE_PROJECT_DIR"] {
        let (code, out, err) = place.setup(
            &["codex", "--scope", "project"],
            &[(var, elsewhere_text.as_str())],
        );
        assert_eq!(code, 0, "{var}: {out}{err}");
        assert!(
            !elsewhere.join(".codex").exists(),
            "{var} chose the project"
        );
        assert!(place.project.join(".codex/config.toml").is_file(), "{var}");
    }
    let (code, out, err) = place.setup(
        &[
            "codex",
            "--scope",
            "project",
            "--project",
            elsewhere_text.as_str(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(elsewhere.join(".codex/config.toml").is_file(), "{out}{err}");
}

/// `git` in `dir`, with an identity for commits; panics when it fails.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.org"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A link committed in the project that leads into the repository's own folder (`.git`,
/// a `--separate-git-dir` of another name, the folder a linked work tree shares) is
/// refused, and git's files are left as they were.
#[cfg(unix)]
#[test]
fn a_link_into_the_repositorys_own_folder_is_refused() {
    use std::os::unix::fs::symlink;
    let place = Place::new();
    std::fs::remove_dir(place.project.join(".git")).unwrap();
    git(&place.project, &["init", "-q"]);
    let config = place.project.join(".git/config");
    let config_before = std::fs::read(&config).unwrap();
    std::fs::create_dir_all(place.project.join(".codex")).unwrap();
    symlink("../.git/config", place.project.join(".codex/config.toml")).unwrap();
    symlink(".git/info", place.project.join(".gemini")).unwrap();
    let refused = |place: &Place, dir: &Path, host: &str| {
        let mut cmd = Command::new(server_path());
        place.isolate(&mut cmd).current_dir(dir);
        let (code, out, err) = run_for(cmd.args(["setup", host, "--scope", "project"]), 30);
        assert_eq!(code, 1, "{host}: {out}{err}");
        assert!(
            err.contains("inside the repository's own folder"),
            "{host}: {err}"
        );
    };
    for host in ["codex", "gemini"] {
        refused(&place, &place.project, host);
    }
    assert_eq!(std::fs::read(&config).unwrap(), config_before);
    assert!(!place.project.join(".git/info/settings.json").exists());
    git(&place.project, &["status", "--short"]);

    // A git folder of another name, and the one a linked work tree shares.
    let main = place.project.parent().unwrap().join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "--separate-git-dir", "gitdata"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
    git(&main, &["worktree", "add", "-q", "../linked"]);
    let linked = main.parent().unwrap().join("linked");
    std::fs::create_dir_all(main.join(".codex")).unwrap();
    symlink("../gitdata/config", main.join(".codex/config.toml")).unwrap();
    symlink("../main/gitdata/info", linked.join(".gemini")).unwrap();
    let shared = std::fs::read(main.join("gitdata/config")).unwrap();
    refused(&place, &main, "codex");
    refused(&place, &linked, "gemini");
    assert_eq!(std::fs::read(main.join("gitdata/config")).unwrap(), shared);
    assert!(!main.join("gitdata/info/settings.json").exists());
}

/// A project's committed entry that looks like ours but runs otherwise (another program
/// named like ours, arguments, variables, a working directory) is shown and refused, in
/// each format setup edits; `--force` replaces it whole.
#[test]
fn a_projects_entry_that_runs_otherwise_is_refused_unless_forced() {
    let place = Place::new();
    for (case, theirs, shown) in [
        (
            &CLAUDE_CODE,
            "{\"mcpServers\": {\"other\": {\"command\": \"/bin/false\"}, \"bmad\": {\"type\": \"stdio\", \"command\": \"./bmad-mcp\", \"args\": [], \"env\": {\"LD_PRELOAD\": \"/tmp/evil.so\"}}}}\n",
            "LD_PRELOAD",
        ),
        (
            &OPENCODE,
            "{\"mcp\": {\"other\": {\"type\": \"local\", \"command\": [\"/bin/false\"]}, \"bmad\": {\"type\": \"local\", \"command\": [\"SERVER\", \"--owner\", \"Mallory <m@x>\"], \"enabled\": true}}}\n",
            "Mallory",
        ),
        (
            &CODEX,
            "[mcp_servers.other]\ncommand = \"/bin/false\"\n\n[mcp_servers.bmad]\ncommand = \"/tmp/x/bmad-mcp.sh\"\nargs = []\ncwd = \"/tmp\"\n\n[mcp_servers.bmad.env]\nBMAD_OWNER = \"Mallory <m@x>\"\n",
            "/tmp/x/bmad-mcp.sh",
        ),
    ] {
        let theirs = theirs.replace("SERVER", server_path());
        let file = case.file(&place, "project");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &theirs).unwrap();
        let args = [case.host, "--scope", "project"];
        let (code, out, err) = place.setup(&args, &[]);
        assert_eq!(code, 1, "{}: {out}{err}", case.host);
        assert!(
            err.contains(shown) && err.contains("--force") && err.contains("is left as it was"),
            "{}: {err}",
            case.host
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), theirs);
        let (code, out, err) = place.setup(&[case.host, "--scope", "project", "--force"], &[]);
        assert_eq!(code, 0, "{}: {out}{err}", case.host);
        let text = std::fs::read_to_string(&file).unwrap();
        for gone in ["LD_PRELOAD", "Mallory", "bmad-mcp.sh", "cwd"] {
            assert!(!text.contains(gone), "{}: {gone} kept:\n{text}", case.host);
        }
        let entry = Case { kept: &[], ..*case }.entry(&file).expect("our entry");
        assert_shape(case.host, &entry);
        // What setup wrote is accepted as it is.
        let (code, again, err) = place.setup(&args, &[]);
        assert_eq!(code, 0, "{}: {again}{err}", case.host);
        assert!(again.contains("nothing changed"), "{again}");
    }
}

/// setup whose reader goes away before it prints stops quietly, as the other commands do.
#[test]
fn setup_whose_reader_goes_away_stops_quietly() {
    let place = Place::new();
    let mut cmd = Command::new(server_path());
    let mut child = place
        .isolate(&mut cmd)
        .args(["setup", "cursor"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(out.status.code(), Some(3), "{said}");
}

/// A host file larger than any host's configuration is refused before it is read.
#[test]
fn a_host_file_too_large_is_refused_unread() {
    let place = Place::new();
    let file = place.home.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let big = std::fs::File::create(&file).unwrap();
    big.set_len(64 << 20).unwrap();
    let (code, out, err) = place.setup(&["cursor"], &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("larger than 32 MiB"), "{err}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 << 20);
}

/// What setup prints after each agent host's entry is what the hosts table says is left to
/// the person: where the host closes the gate's dialog unseen and how to be asked in it
/// (`claude -p` among them), Codex's dialog that needs a note before Enter, Gemini CLI's
/// rule for headless runs. No host needs to be installed for it.
#[test]
fn setup_says_for_each_agent_host_what_is_left_to_the_person() {
    for host in ["claude-code", "codex", "gemini", "opencode", "copilot"] {
        let place = Place::new();
        let (code, out, err) = place.setup(&[host], &[]);
        assert_eq!(code, 0, "{host}: {out}{err}");
        left_to_the_person(host, &out);
    }
}
