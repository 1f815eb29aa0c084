//! `bmad-mcp setup <host> [--scope user|project] [--remove]`: registers this very binary
//! as a stdio MCP server named `bmad` in a host's configuration, the way that host expects
//! ([`crate::hosts`]), or takes that entry out. The edit touches our entry only and keeps the
//! rest of the file, comments included ([`json`], [`toml`]); it is idempotent (a second
//! run writes nothing and says so), refuses an entry named `bmad` that runs another
//! program ([`entry`]), and prints the file with our entry before and after.
//!
//! It runs under an assistant's shell too, unlike the gate commands: what it writes is
//! only this binary's own entry, which the assistant's file tools could write as well;
//! no decision of the human's is taken by it.

pub mod config_files;
mod entry;
mod file;
mod json;
mod toml;

use std::path::Path;

use crate::exit::Exit;
use crate::settings;
use config_files::{Format, Scope, Target};
use entry::{Change, Found, Want, NAME};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The host whose configuration gets the entry.
    #[arg(value_enum)]
    pub host: Target,
    /// The user's configuration (every project) or the project's (a file in the project,
    /// `--project` or the one the working directory is in).
    #[arg(long, value_enum, default_value_t)]
    pub scope: Scope,
    /// Take our entry out instead (and nothing else).
    #[arg(long)]
    pub remove: bool,
    /// Replace an entry of ours found whole, with nothing of it kept: in a project's file,
    /// one that runs anything but this binary with no arguments, variables or working
    /// directory is otherwise shown and refused.
    #[arg(long, conflicts_with = "remove")]
    pub force: bool,
}

/// Runs `setup`; `project` is the project directory (for `--scope project`).
pub fn run(args: &Args, project: &Path) -> Exit {
    let name = host_name(args.host);
    let path = match args.host.file(args.scope, project) {
        Ok(path) => path,
        Err(why) => {
            eprintln!("bmad-mcp setup {name}: {why}");
            return Exit::Refused;
        }
    };
    match destination(args.scope, &path, project).and_then(|target| apply(args, &path, &target)) {
        Ok(()) => Exit::Done,
        Err(why) => {
            eprintln!(
                "bmad-mcp setup {name}: {} is left as it was: {}",
                path.display(),
                crate::code::visible_lines(&why)
            );
            Exit::Failed
        }
    }
}

/// The file a write to `path` lands in, links followed ([`file::destination`]). In the
/// project's scope it must be in the project: a project's files come from whoever
/// committed them, and a link there (`.vscode/mcp.json -> ../../.bash_profile`) must not
/// make setup write elsewhere. The user's own links (into a dotfiles repository) lead
/// where the user chose. In either scope it is never in a repository's own folder
/// ([`in_git_dir`]).
fn destination(scope: Scope, path: &Path, project: &Path) -> Result<std::path::PathBuf, String> {
    let target = file::destination(path)?;
    if let Some(git_dir) = in_git_dir(&target, project) {
        return Err(format!(
            "it leads to {}, inside the repository's own folder {}: no host reads its servers there, and a link that leads there would have setup rewrite git's files",
            target.display(),
            git_dir.display()
        ));
    }
    if scope == Scope::Project {
        let root = project
            .canonicalize()
            .map_err(|e| format!("the project {} cannot be read: {e}", project.display()))?;
        if !target.starts_with(&root) {
            return Err(format!(
                "it leads to {}, outside the project {}: a link in the project does not take setup out of it",
                target.display(),
                root.display()
            ));
        }
    }
    Ok(target)
}

/// The repository folder `target` is in, if any: the project's git folder and the one its
/// work trees share (a linked work tree's is elsewhere, and may have any name), or any
/// folder named `.git` on its path. A committed link (`.codex/config.toml ->
/// ../.git/config`, `.gemini -> .git/info`) would otherwise have setup write git's
/// configuration or hooks' folder.
fn in_git_dir(target: &Path, project: &Path) -> Option<std::path::PathBuf> {
    let repo = crate::git::Repo::at(project);
    let mut own = repo
        .iter()
        .flat_map(|r| [r.git_dir(), r.common_dir()])
        .filter_map(|d| d.canonicalize().ok());
    if let Some(dir) = own.find(|d| target.starts_with(d)) {
        return Some(dir);
    }
    target
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == ".git"))
        .map(Path::to_path_buf)
}

fn apply(args: &Args, path: &Path, target: &Path) -> Result<(), String> {
    let want = if args.remove {
        Want::Remove
    } else {
        Want::Add {
            command: this_binary()?,
            env: match args.host {
                Target::Codex => settings_for_codex(),
                _ => Vec::new(),
            },
        }
    };
    let was = file::read(target)?;
    let text = was.as_deref().unwrap_or("");
    let found = match (args.force, args.scope) {
        (true, _) => Found::Replace,
        (false, Scope::Project) => Found::Vet,
        (false, Scope::User) => Found::Update,
    };
    let mut change = match (args.host.format(), &want) {
        (Format::Toml, want) => toml::edit(text, want, found)?,
        (Format::Json { container }, Want::Remove) => json::edit(text, container, None, found)?,
        (Format::Json { container }, Want::Add { command, .. }) => {
            json::edit(text, container, Some(&args.host.fields(command)), found)?
        }
    };
    let scope = match args.scope {
        Scope::User => "user",
        Scope::Project => "project",
    };
    // Where the bytes go, when a link leads elsewhere.
    let leads = match target == path {
        true => String::new(),
        false => format!(" (which leads to {})", target.display()),
    };
    println!(
        "{} ({scope} scope): {}{leads}",
        host_name(args.host),
        path.display()
    );
    if text.is_empty() && !change.text.is_empty() && !change.text.ends_with('\n') {
        // A file setup makes ends as text files do.
        change.text.push('\n');
    }
    let changed = change.text != text;
    if changed {
        file::replace(target, was.as_deref(), &change.text)?;
    }
    report(&change, changed, args.remove, was.is_none());
    let left = args.host.left_to_the_person();
    if !args.remove && !left.is_empty() {
        println!("  still yours to know or do:");
        for line in left.iter().flat_map(|l| l.lines()) {
            println!("    {line}");
        }
    }
    Ok(())
}

/// What changed, for the person who ran it: our entry before and after; `new` when the
/// file did not exist before.
fn report(change: &Change, changed: bool, remove: bool, new: bool) {
    let show = |label: &str, entry: &Option<String>| match entry {
        Some(text) => {
            println!("  {label}:");
            for line in text.lines() {
                match line.trim_end() {
                    "" => println!(),
                    line => println!("    {}", crate::code::visible_lines(line)),
                }
            }
        }
        None => println!("  {label}: no `{NAME}` entry"),
    };
    if !changed {
        match &change.after {
            Some(_) => show("already registered, nothing changed", &change.after),
            None => println!("  no `{NAME}` entry: nothing changed"),
        }
        return;
    }
    show("before", &change.before);
    show("after", &change.after);
    match (remove, new) {
        (_, true) => println!("  written; the file is new, with this entry alone."),
        (true, false) => println!("  removed; the file's other content is as it was."),
        (false, false) => println!("  written; the file's other content is as it was."),
    }
}

/// The absolute path of the running binary, which the host will start.
fn this_binary() -> Result<String, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot tell where this binary is: {e}"))?;
    exe.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("its path is not UTF-8: {}", exe.display()))
}

/// The settings the stdio server reads, for Codex, which passes a server only an
/// allow-list of variables. Not the project root (the host starts the server in each
/// project; a fixed root would send every project's tasks to one), nor the HTTP server's
/// settings and token (stdio does not read them, and a token has no place in a file), nor
/// any other `BMAD_*` variable set where setup runs (a test's, a tool's).
const FOR_CODEX: [&str; 8] = [
    settings::OWNER_ENV,
    settings::LOCK_WAIT_ENV,
    settings::CHECK_TIMEOUT_ENV,
    settings::MAX_RESULT_ENV,
    settings::MAX_OBJECTIVE_ENV,
    settings::MAX_TEXT_ENV,
    settings::MAX_LINE_ENV,
    settings::CLAIMS_ENV,
];

/// Those of [`FOR_CODEX`] set where setup runs, by name.
fn settings_for_codex() -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = FOR_CODEX
        .iter()
        .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
        .collect();
    vars.sort();
    vars
}

fn host_name(host: Target) -> String {
    use clap::ValueEnum;
    host.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}
