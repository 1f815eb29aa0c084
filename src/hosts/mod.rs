//! Every host this server knows, in one table ([`HOSTS`]): what each declares as an MCP client,
//! what its model reads of a reply and what its person sees of one in each mode ([`Client`],
//! [`OnScreen`]), what it may run in the person's place when its dialog opens ([`DialogHooks`];
//! Claude Code's, read from its settings files: [`hooks`]), the marks its shell tool leaves and the
//! programs it runs as ([`Shell`]), and where it keeps its MCP servers for `bmad-mcp setup`
//! ([`Config`]). Adding a host is adding a row here; the server's replies
//! ([`server::per_host`](crate::server::per_host)), the rule that refuses a decision under an
//! assistant (`assistant`, through [`recognise`]), `bmad-mcp setup` and `docs/hosts.md` (rendered
//! from this table by a test) all read it. A leaf: it names nothing of the crate.

pub mod hooks;
pub mod recognise;

/// What a host shows its model of a tool result that has both a text and
/// `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shows {
    /// The text alone.
    Text,
    /// The `structuredContent` as JSON, in place of the text.
    JsonInstead,
    /// The text, then the `structuredContent` as JSON.
    TextThenJson,
    /// The text of a result; of an error result, the whole result as one escaped JSON
    /// string (the text and `structuredContent` both) after the call's arguments, echoed,
    /// and its interface shows the person no text of it.
    TextErrorsAsJson,
    /// No model: both are printed for the person at the command line, and a script
    /// there reads the JSON.
    Printed,
}

/// Whether a host can put a question to its human (MCP elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// It declares none.
    None,
    /// It declares it and shows the form.
    Shown,
    /// It declares it and shows the form in some modes; in the others it closes every
    /// dialog at once (declines or cancels it), with nobody asked.
    DeclinedUnattended(Unseen),
}

/// What a host may run in the person's place when its dialog opens, as read from its pinned
/// version: a dialog's answer is the human's only where nothing stands between the form and
/// the person, or the human approved what does (`bmad-mcp config approve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogHooks {
    /// Claude Code's `Elicitation` and `ElicitationResult` hooks, from its settings files
    /// ([`hooks`]): the server reads them before it takes the dialog's answer as the human's.
    ClaudeCodeSettings,
    /// None on the dialog: what its hooks are about instead, and how that was read.
    NoneOnTheDialog(&'static str),
    /// It shows no dialog.
    NoDialog,
}

/// Where a host that declares the dialog closes it unseen, and what shows it, as the
/// reply to such a close and docs/hosts.md tell the human.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unseen {
    /// When it closes every dialog at once, as "it closes every dialog at once …" goes
    /// on: "in `codex exec`, and in its interactive mode under …".
    pub when: &'static str,
    /// How a person runs it to be shown the form, as "To be asked in the dialog, …" goes
    /// on.
    pub shown: &'static str,
}

/// How much of a tool result's text a host's screen shows its person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// All of it.
    Whole,
    /// Its first line, cut.
    FirstLine,
    /// Its last lines, the rest on request.
    LastLines,
    /// None of it (a line that the call was made, at most).
    Nothing,
}

/// What becomes of the server's dialog on a host's screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sight {
    /// The form is shown, and the person answers it.
    Form,
    /// It is closed at once, nobody asked.
    ClosedUnseen,
    /// The host declares none.
    NoDialog,
}

/// What a person sees on a host's screen in one of its modes, as the tests read it from
/// the screen (tests/it/hosts/). Where it shows nothing of a reply the person must act on,
/// they read what the model relays: the reply's `next_step` asks it to show them
/// `user_message`, which names the terminal command and the dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnScreen {
    /// The mode, as the person starts it: "`claude -p`".
    pub mode: &'static str,
    /// Of a tool result.
    pub result: Shown,
    /// Of a result flagged as an error.
    pub error: Shown,
    /// The server's dialog.
    pub dialog: Sight,
}

/// A host as an MCP client, as this server met it (the end-to-end tests run each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The `clientInfo.name`s it declares.
    pub names: &'static [&'static str],
    /// What it shows its model of a result with both a text and `structuredContent`.
    pub shows: Shows,
    pub dialog: Dialog,
    /// What it may run in the person's place when its dialog opens.
    pub hooks: DialogHooks,
    /// Where it cannot ask (it declares no dialog, or this version or mode stopped
    /// declaring it), whether its model's word passes a gate under the default
    /// `gates = "auto"`. False for every agent host: its model's `confirm` is not the
    /// human's, and the gate waits for the human's own channels (the terminal, the
    /// dashboard). True only where no model is behind the client.
    pub host_word_passes: bool,
    /// The protocol version it asks for in `initialize` (or `server/discover`).
    pub era: &'static str,
    /// How the server is registered with it.
    pub register: &'static str,
    /// What it leaves out or does differently that a user meets.
    pub limits: &'static str,
    /// What its person sees, per mode.
    pub screens: &'static [OnScreen],
    /// Its own slash commands that share a name with one of the server's MCP prompts: it renames
    /// such a prompt on every start, saying so (Gemini CLI's `/resume`), so the server offers that
    /// prompt to it under another name ([`server::mcp_prompts`](crate::server::mcp_prompts)).
    pub commands: &'static [&'static str],
    /// The argument that marks its long-lived server process, which runs its MCP servers
    /// and outlives the person's session (Codex CLI's `app-server` daemon): under it, the
    /// server ends with the host's interface in its project ([`stdio::host`](crate::stdio::host)).
    pub daemon: Option<&'static str>,
}

/// What marks a host's shell tool, each mark read from the host's own shell tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shell {
    /// Environment variables its shell tool sets (and usually the servers it spawns): the
    /// name, and the value it must have (`None`: any non-empty value).
    pub vars: &'static [(&'static str, Option<&'static str>)],
    /// The exact file names of its executable (`/proc/<pid>/exe`), or of the script node or
    /// bun runs (`node_modules/.bin/gemini`): `claude`, `claude.exe`.
    pub programs: &'static [&'static str],
    /// Its npm packages: a script node or bun runs from `node_modules/<package>/` is its.
    pub packages: &'static [&'static str],
}

/// Where a directory of the user's starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The home directory.
    Home,
    /// The system's configuration directory (`~/.config` on Linux).
    SystemConfig,
}

/// How a host's file holds its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON (comments allowed), servers in the top-level object named `container`.
    Json { container: &'static str },
    /// Codex's TOML, servers in `[mcp_servers.NAME]`.
    Toml,
}

/// Where a host keeps its MCP servers, as `bmad-mcp setup` edits them (the agent hosts'
/// entries are the ones their own `mcp add` writes; the others follow their
/// documentation, docs/setup.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The name `bmad-mcp setup` takes.
    pub setup_name: &'static str,
    pub format: Format,
    /// The user's file: in the directory the variable names (when set to an absolute
    /// path), else in `dir` under `base`; then `file` within.
    pub user_var: Option<&'static str>,
    pub user_base: Base,
    pub user_dir: &'static str,
    pub user_file: &'static str,
    /// The project's file, relative to the project; `None`: the host reads none.
    pub project_file: Option<&'static str>,
    /// The same file with comments (`opencode.jsonc`), used instead when only it exists.
    pub commented: Option<&'static str>,
    /// What the person must still do for a mode of the host to offer the tool, which setup
    /// prints after the entry (and docs/setup.md says); `None`: nothing.
    pub still_to_do: Option<&'static str>,
}

/// One host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Host {
    /// Its name as the user knows it.
    pub name: &'static str,
    /// As an MCP client; `None` where no test runs it.
    pub client: Option<Client>,
    /// Its shell tool; `None` where it has none.
    pub shell: Option<Shell>,
    /// Where `bmad-mcp setup` registers the server; `None` where it does not.
    pub config: Option<Config>,
    /// How the night shift (`bmad-mcp run`) starts it for one step, unattended; `None`
    /// where it has no headless mode.
    pub headless: Option<Headless>,
}

/// A host's headless mode as `bmad-mcp run` starts it: one fresh session per step, in the
/// story's worktree, with this server registered for that session only and the host's
/// permission checks left as the person set them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headless {
    /// The program, looked for on PATH (`bmad-mcp run --host-bin` names another).
    pub program: &'static str,
    /// Its arguments; `{prompt}` stands for the step's prompt (this server's entry is
    /// added as [`Headless::register`] says).
    pub args: &'static [&'static str],
    pub register: Register,
    /// What its output says of the tokens its model used.
    pub usage: Usage,
    /// What turns its permission checks off: a run refuses a host started or configured
    /// so.
    pub bypass: Bypass,
}

/// How a headless session is given this server, for that session only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Register {
    /// `--mcp-config '{"mcpServers": {"bmad": …}}'` (Claude Code), beside the person's own
    /// servers, and `--allowedTools` for its one tool: nothing else is allowed.
    McpConfigJson,
    /// `-c mcp_servers.bmad.command=…` and `-c mcp_servers.bmad.args=…` (Codex CLI).
    ConfigOverrides,
    /// The person's own registration (`bmad-mcp setup <host>`).
    Setup,
}

/// Where a headless run reports the tokens its model used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// One JSON object at the end (`--output-format json`): `usage` with `input_tokens`,
    /// `output_tokens` and the cache's, and `total_cost_usd`.
    ResultObject,
    /// JSON lines; each `turn.completed` event carries that turn's `usage`
    /// (`input_tokens`, `cached_input_tokens`, `output_tokens`).
    TurnEvents,
    /// Nothing the run reads (the step's tokens are shown unknown).
    Unknown,
}

/// What turns a host's permission checks off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bypass {
    /// Its command-line flags (a flag taking the value, `--permission-mode
    /// bypassPermissions`, written with `=`).
    pub flags: &'static [&'static str],
    /// Settings files, relative to the project (`./…`) or to the host's user folder (the
    /// variable `user_var` names, else `user_dir` under the home directory).
    pub files: &'static [&'static str],
    pub user_var: Option<&'static str>,
    pub user_dir: &'static str,
    /// The key (its path in the file) and the value that turn them off there.
    pub key: &'static [&'static str],
    pub value: &'static str,
}

/// Gemini CLI's headless mode (`gemini -p`) offers its model no tool that would need a
/// person's confirmation (an untrusted server's, by its policy engine's default), and says
/// nothing of it; setup leaves `trust` out (in the interactive mode it is the person's
/// check before each call), so headless runs need a rule of the person's own. Read from
/// Gemini CLI 0.61.0; tests/it/hosts/gemini.rs runs it.
pub const GEMINI_HEADLESS: &str = "Gemini CLI's headless mode (`gemini -p`) does not offer the model a tool of a server without `trust`, and tells nobody. For headless runs, allow `bmad-task` there with a policy rule in `~/.gemini/policies/bmad.toml`:
[[rule]]
mcpName = \"bmad\"
toolName = \"bmad-task\"
decision = \"allow\"
priority = 100
interactive = false
(in the interactive mode Gemini still asks you before each call), or add `\"trust\": true` to the entry (no question in either mode). The gates stay yours either way.";

/// Codex CLI's dialog does not send a form whose optional text field is left empty: Enter
/// there does nothing. Read from Codex 0.169.0's interface; tests/it/hosts/codex.rs types
/// a note for that reason.
pub const CODEX_NOTE: &str = "In Codex's dialog, Enter on the empty note field (it is optional) does nothing: type a note there, a word will do, then Enter, to send your decision.";

/// One mode of a host's screen.
const fn on(mode: &'static str, result: Shown, error: Shown, dialog: Sight) -> OnScreen {
    OnScreen {
        mode,
        result,
        error,
        dialog,
    }
}

/// A user's file under the home directory, in `dir`, no variable.
const fn json_in_home(
    setup_name: &'static str,
    dir: &'static str,
    project: &'static str,
) -> Config {
    Config {
        setup_name,
        format: Format::Json {
            container: "mcpServers",
        },
        user_var: None,
        user_base: Base::Home,
        user_dir: dir,
        user_file: "mcp.json",
        project_file: Some(project),
        commented: None,
        still_to_do: None,
    }
}

/// Every host known, Claude Code first.
pub const HOSTS: [Host; 9] = [
    Host {
        name: "Claude Code",
        client: Some(Client {
            names: &["claude-code"],
            shows: Shows::JsonInstead,
            // Read from Claude Code 2.1.330: `-p` answers every form with `cancel` about
            // 9 ms after it is sent.
            dialog: Dialog::DeclinedUnattended(Unseen {
                when: "in `claude -p` (its print mode)",
                shown: "run `claude` interactively, without `-p`",
            }),
            hooks: DialogHooks::ClaudeCodeSettings,
            host_word_passes: false,
            era: "2026-07-28 (`server/discover`)",
            register: "`bmad-mcp setup claude-code`; or instead the plugin, which adds a hook that asks you before a gate call (docs/plugin.md)",
            limits: "`claude -p` closes every dialog at once: the plugin's hook asks before each gate call",
            screens: &[
                // Its interface folds the results into "Called bmad N times".
                on("`claude`, its interface", Shown::Nothing, Shown::Nothing, Sight::Form),
                on("`claude -p`", Shown::Nothing, Shown::Nothing, Sight::ClosedUnseen),
            ],
            commands: &[],
            daemon: None,
        }),
        shell: Some(Shell {
            vars: &[("CLAUDECODE", None)],
            programs: &["claude", "claude.exe"],
            packages: &["@anthropic-ai/claude-code"],
        }),
        // Its user state, servers included, is `.claude.json`, in CLAUDE_CONFIG_DIR when
        // that is set.
        config: Some(Config {
            setup_name: "claude-code",
            format: Format::Json {
                container: "mcpServers",
            },
            user_var: Some("CLAUDE_CONFIG_DIR"),
            user_base: Base::Home,
            user_dir: "",
            user_file: ".claude.json",
            project_file: Some(".mcp.json"),
            commented: None,
            still_to_do: None,
        }),
        headless: Some(Headless {
            program: "claude",
            args: &["-p", "{prompt}", "--output-format", "json"],
            register: Register::McpConfigJson,
            usage: Usage::ResultObject,
            bypass: Bypass {
                flags: &["--dangerously-skip-permissions", "--permission-mode=bypassPermissions", "--allow-dangerously-skip-permissions"],
                files: &["settings.json", "./.claude/settings.json", "./.claude/settings.local.json"],
                user_var: Some("CLAUDE_CONFIG_DIR"),
                user_dir: ".claude",
                key: &["permissions", "defaultMode"],
                value: "bypassPermissions",
            },
        }),
    },
    Host {
        name: "Codex CLI",
        client: Some(Client {
            names: &["codex-mcp-client"],
            shows: Shows::JsonInstead,
            // Read from Codex 0.169.0's terminal interface under a pseudo-terminal: the
            // policy, not the terminal, decides whether the form is shown.
            dialog: Dialog::DeclinedUnattended(Unseen {
                when: "in `codex exec`, and in its interactive mode under `approval_policy = \"never\"` (also set by `--dangerously-bypass-approvals-and-sandbox`)",
                shown: "run Codex interactively with `approval_policy = \"on-request\"` (in its `config.toml`, or `codex -a on-request`)",
            }),
            hooks: DialogHooks::NoneOnTheDialog("its hooks (`PreToolUse`, `PermissionRequest`, `PostToolUse`, `SessionStart`, `UserPromptSubmit`, `Stop`, …, read from 0.169.0) name no event of the dialog; whether `PermissionRequest` is asked for a form was not checked"),
            host_word_passes: false,
            era: "2025-06-18",
            register: "`bmad-mcp setup codex`",
            limits: "passes the server only a short list of variables: `BMAD_*` settings go in `[mcp_servers.bmad.env]`; `codex mcp list` does not connect",
            // Read from Codex 0.169.0: its interface starts `codex app-server --listen
            // unix:// … --managed-daemon`, which keeps running after `/quit` and closes its
            // MCP servers' stdin about a minute later.
            screens: &[
                on(
                    "`codex` under `approval_policy = \"on-request\"`",
                    Shown::LastLines,
                    Shown::LastLines,
                    Sight::Form,
                ),
                on(
                    "`codex` under `approval_policy = \"never\"`",
                    Shown::LastLines,
                    Shown::LastLines,
                    Sight::ClosedUnseen,
                ),
                on("`codex exec`", Shown::Nothing, Shown::Nothing, Sight::ClosedUnseen),
            ],
            commands: &[],
            daemon: Some("app-server"),
        }),
        shell: Some(Shell {
            vars: &[
                ("CODEX_CI", None),
                ("CODEX_SESSION_ID", None),
                ("CODEX_THREAD_ID", None),
            ],
            programs: &["codex"],
            packages: &["@openai/codex"],
        }),
        // The project's file is read only in a project Codex trusts.
        config: Some(Config {
            setup_name: "codex",
            format: Format::Toml,
            user_var: Some("CODEX_HOME"),
            user_base: Base::Home,
            user_dir: ".codex",
            user_file: "config.toml",
            project_file: Some(".codex/config.toml"),
            commented: None,
            still_to_do: Some(CODEX_NOTE),
        }),
        headless: Some(Headless {
            program: "codex",
            args: &["exec", "--json", "{prompt}"],
            register: Register::ConfigOverrides,
            usage: Usage::TurnEvents,
            bypass: Bypass {
                flags: &["--dangerously-bypass-approvals-and-sandbox", "--yolo", "--sandbox=danger-full-access"],
                files: &["config.toml", "./.codex/config.toml"],
                user_var: Some("CODEX_HOME"),
                user_dir: ".codex",
                key: &["sandbox_mode"],
                value: "danger-full-access",
            },
        }),
    },
    Host {
        name: "Gemini CLI",
        client: Some(Client {
            names: &["gemini-cli-mcp-client", "mcp-test-client"],
            shows: Shows::TextErrorsAsJson,
            dialog: Dialog::None,
            hooks: DialogHooks::NoDialog,
            host_word_passes: false,
            era: "2025-06-18",
            register: "`bmad-mcp setup gemini`, in a folder Gemini trusts; headless runs also need a policy rule or `trust` (docs/setup.md)",
            limits: "its interactive mode asks the person before each call of a server without `trust`; its headless mode (`gemini -p`) offers the model no tool of such a server and says nothing, unless a policy rule allows it (docs/setup.md); drops variables whose names look like secrets (`KEY`, `TOKEN`, …) from the server's environment; wraps results in `<untrusted_context>`",
            // Read from Gemini CLI 0.61.0's built-in commands: `/resume` is one of them
            // (`/start` and `/status` are not).
            screens: &[
                // A flagged error shows only that the tool "reported an error": the server
                // sends it none (`server::result`).
                on("`gemini`, its interface", Shown::Whole, Shown::Nothing, Sight::NoDialog),
                on("`gemini -p`", Shown::Nothing, Shown::Nothing, Sight::NoDialog),
            ],
            commands: &["resume"],
            daemon: None,
        }),
        shell: Some(Shell {
            vars: &[("GEMINI_CLI", Some("1"))],
            programs: &["gemini"],
            packages: &["@google/gemini-cli"],
        }),
        // GEMINI_CLI_HOME stands for the home directory in Gemini CLI.
        config: Some(Config {
            setup_name: "gemini",
            format: Format::Json {
                container: "mcpServers",
            },
            user_var: Some("GEMINI_CLI_HOME"),
            user_base: Base::Home,
            user_dir: "",
            user_file: ".gemini/settings.json",
            project_file: Some(".gemini/settings.json"),
            commented: None,
            still_to_do: Some(GEMINI_HEADLESS),
        }),
        headless: Some(Headless {
            program: "gemini",
            args: &["-p", "{prompt}", "-o", "json"],
            register: Register::Setup,
            usage: Usage::Unknown,
            bypass: Bypass {
                flags: &["--yolo", "-y", "--approval-mode=yolo"],
                files: &["settings.json", "./.gemini/settings.json"],
                user_var: None,
                user_dir: ".gemini",
                key: &["general", "defaultApprovalMode"],
                value: "yolo",
            },
        }),
    },
    Host {
        name: "opencode",
        client: Some(Client {
            names: &["opencode"],
            shows: Shows::Text,
            dialog: Dialog::None,
            hooks: DialogHooks::NoDialog,
            host_word_passes: false,
            era: "2025-11-25",
            register: "`bmad-mcp setup opencode`",
            limits: "sets `AGENT=1` in the server's and the shell's environment",
            screens: &[
                // A call is a line of its arguments.
                on("`opencode`, its interface", Shown::Nothing, Shown::Nothing, Sight::NoDialog),
                on("`opencode run`", Shown::Nothing, Shown::Whole, Sight::NoDialog),
            ],
            commands: &[],
            daemon: None,
        }),
        shell: Some(Shell {
            vars: &[("OPENCODE", Some("1")), ("AGENT", Some("1"))],
            programs: &["opencode", "opencode.exe"],
            packages: &["opencode-ai"],
        }),
        // opencode follows XDG on every system (~/.config, not macOS's Library).
        config: Some(Config {
            setup_name: "opencode",
            format: Format::Json { container: "mcp" },
            user_var: Some("XDG_CONFIG_HOME"),
            user_base: Base::Home,
            user_dir: ".config",
            user_file: "opencode/opencode.json",
            project_file: Some("opencode.json"),
            commented: Some("opencode.jsonc"),
            still_to_do: None,
        }),
        headless: Some(Headless {
            program: "opencode",
            args: &["run", "--format", "json", "{prompt}"],
            register: Register::Setup,
            usage: Usage::Unknown,
            bypass: Bypass {
                flags: &["--dangerously-skip-permissions"],
                files: &["opencode/opencode.json", "./opencode.json"],
                user_var: Some("XDG_CONFIG_HOME"),
                user_dir: ".config",
                key: &["permission"],
                value: "allow",
            },
        }),
    },
    Host {
        name: "Copilot CLI",
        client: Some(Client {
            names: &["copilot-cli"],
            shows: Shows::TextThenJson,
            dialog: Dialog::DeclinedUnattended(Unseen {
                when: "with `-p` (its non-interactive mode)",
                shown: "run `copilot` interactively, without `-p`",
            }),
            hooks: DialogHooks::NoneOnTheDialog("its hooks (`preToolUse`, `preMcpToolCall`, `permissionRequest`, `notification`, …, read from 1.0.102's API schema) name no event of the dialog; a program driving it through its SDK can answer a pending form"),
            host_word_passes: false,
            era: "2026-07-28 (`server/discover`), else 2025-11-25",
            register: "`bmad-mcp setup copilot`",
            limits: "the server's `instructions` do not reach the model; `copilot mcp list` does not connect",
            screens: &[
                on("`copilot`, its interface", Shown::FirstLine, Shown::Whole, Sight::Form),
                on("`copilot -p`", Shown::FirstLine, Shown::Whole, Sight::ClosedUnseen),
            ],
            commands: &[],
            daemon: None,
        }),
        shell: Some(Shell {
            vars: &[("COPILOT_CLI", Some("1"))],
            programs: &["copilot"],
            packages: &["@github/copilot"],
        }),
        // Copilot CLI also reads `.mcp.json`, which is Claude Code's: its own file keeps
        // the two hosts' entries apart. Read only in a folder Copilot trusts.
        config: Some(Config {
            setup_name: "copilot",
            format: Format::Json {
                container: "mcpServers",
            },
            user_var: Some("COPILOT_HOME"),
            user_base: Base::Home,
            user_dir: ".copilot",
            user_file: "mcp-config.json",
            project_file: Some(".github/mcp.json"),
            commented: None,
            still_to_do: None,
        }),
        headless: Some(Headless {
            program: "copilot",
            args: &["-p", "{prompt}", "-s", "--allow-tool=bmad"],
            register: Register::Setup,
            usage: Usage::Unknown,
            bypass: Bypass {
                flags: &["--allow-all-tools", "--allow-all", "--yolo"],
                files: &[],
                user_var: Some("COPILOT_HOME"),
                user_dir: ".copilot",
                key: &[],
                value: "",
            },
        }),
    },
    Host {
        name: "MCP Inspector (CLI)",
        client: Some(Client {
            names: &["inspector-cli"],
            shows: Shows::Printed,
            dialog: Dialog::None,
            hooks: DialogHooks::NoDialog,
            host_word_passes: true,
            era: "2025-11-25",
            register: "`mcp-inspector --cli bmad-mcp --method tools/call …` (no registration)",
            limits: "no model: the person at the command line makes each call, and a `confirm` there is theirs as the host's; `--tool-arg` reads a value that parses as JSON as that JSON, so a submission in the JSON form goes JSON-encoded, as one string (`\"claude_result=$(jq -Rs . < submission.json)\"`)",
            screens: &[on(
                "`mcp-inspector --cli`",
                Shown::Whole,
                Shown::Whole,
                Sight::NoDialog,
            )],
            commands: &[],
            daemon: None,
        }),
        shell: None,
        config: None,
        headless: None,
    },
    Host {
        name: "Cursor",
        client: None,
        shell: None,
        config: Some(json_in_home("cursor", ".cursor", ".cursor/mcp.json")),
        headless: None,
    },
    Host {
        name: "VS Code",
        client: None,
        shell: None,
        // The default profile's mcp.json, beside its settings.json.
        config: Some(Config {
            setup_name: "vscode",
            format: Format::Json {
                container: "servers",
            },
            user_var: None,
            user_base: Base::SystemConfig,
            user_dir: "Code/User",
            user_file: "mcp.json",
            project_file: Some(".vscode/mcp.json"),
            commented: None,
            still_to_do: None,
        }),
        headless: None,
    },
    Host {
        name: "Claude Desktop",
        client: None,
        shell: None,
        config: Some(Config {
            setup_name: "claude-desktop",
            format: Format::Json {
                container: "mcpServers",
            },
            user_var: None,
            user_base: Base::SystemConfig,
            user_dir: "Claude",
            user_file: "claude_desktop_config.json",
            project_file: None,
            commented: None,
            still_to_do: None,
        }),
        headless: None,
    },
];

/// The host whose client declared `name`.
pub fn by_client(name: Option<&str>) -> Option<&'static Host> {
    let name = name?;
    HOSTS
        .iter()
        .find(|h| h.client.is_some_and(|c| c.names.contains(&name)))
}

/// The host `bmad-mcp setup` knows as `setup_name`.
pub fn by_setup_name(setup_name: &str) -> Option<&'static Host> {
    HOSTS
        .iter()
        .find(|h| h.config.is_some_and(|c| c.setup_name == setup_name))
}

impl Shell {
    /// The marks as `docs/hosts.md` shows them: `GEMINI_CLI=1`, `CODEX_CI`.
    pub fn vars_shown(&self) -> Vec<String> {
        self.vars
            .iter()
            .map(|(name, value)| match value {
                Some(v) => format!("{name}={v}"),
                None => (*name).to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_host_has_its_shell_marks_and_a_setup_entry() {
        for h in HOSTS
            .iter()
            .filter(|h| h.client.is_some_and(|c| !c.host_word_passes))
        {
            assert!(h.shell.is_some(), "{}", h.name);
            assert!(h.config.is_some(), "{}", h.name);
        }
    }

    /// The screens agree with the dialog: a host that closes it unseen in some modes has
    /// such a mode and one that shows the form; one without a dialog shows none.
    #[test]
    fn each_hosts_screens_agree_with_its_dialog() {
        for h in &HOSTS {
            let Some(c) = h.client else { continue };
            assert!(!c.screens.is_empty(), "{}", h.name);
            let has = |sight| c.screens.iter().any(|s| s.dialog == sight);
            match c.dialog {
                Dialog::None => assert!(!has(Sight::Form) && !has(Sight::ClosedUnseen)),
                Dialog::Shown => assert!(has(Sight::Form) && !has(Sight::ClosedUnseen)),
                Dialog::DeclinedUnattended(_) => {
                    assert!(has(Sight::Form) && has(Sight::ClosedUnseen), "{}", h.name)
                }
            }
        }
    }

    #[test]
    fn every_host_with_a_dialog_says_what_may_answer_it() {
        for c in HOSTS.iter().filter_map(|h| h.client) {
            let has_dialog = c.dialog != Dialog::None;
            assert_eq!(
                has_dialog,
                c.hooks != DialogHooks::NoDialog,
                "{:?}",
                c.names
            );
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        let mut clients: Vec<&str> = HOSTS
            .iter()
            .filter_map(|h| h.client)
            .flat_map(|c| c.names.iter().copied())
            .collect();
        let all = clients.len();
        clients.sort();
        clients.dedup();
        assert_eq!(clients.len(), all, "a client name in two rows");
        assert_eq!(
            by_client(Some("opencode")).map(|h| h.name),
            Some("opencode")
        );
        assert_eq!(by_client(Some("Codex-mcp-client")), None);
        assert_eq!(by_client(None), None);
        assert_eq!(by_setup_name("vscode").map(|h| h.name), Some("VS Code"));
        assert_eq!(by_setup_name("inspector"), None);
    }
}
