//! The architect's design focus, from the kind of product the objective names.

/// What is being built, as far as the objective says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    CommandLine,
    Library,
    Service,
    Unknown,
}

/// The kind of product an objective names: a command-line tool before a library before a
/// service ("a CLI that calls the GitHub API" is a tool), whole words only.
pub(super) fn kind_of(objective: &str) -> Kind {
    let lower = objective.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(w));
    let phrase = |list: &[&str]| list.iter().any(|p| lower.contains(p));
    if has(&["cli", "command-line", "terminal", "tui"]) || phrase(&["command line", "shell script"])
    {
        Kind::CommandLine
    } else if has(&["library", "crate", "package", "sdk", "module", "plugin"]) {
        Kind::Library
    } else if has(&[
        "service",
        "api",
        "server",
        "backend",
        "website",
        "web",
        "endpoint",
        "microservice",
        "app",
    ]) {
        Kind::Service
    } else {
        Kind::Unknown
    }
}

/// The architect's focus for what is being built: a tool is not designed like a service.
pub(super) fn design_focus(objective: &str) -> &'static str {
    match kind_of(objective) {
        Kind::CommandLine => "This is a command-line tool. Design its interface as commands, arguments and flags, its input and output (files, stdin and stdout, formats), exit codes and error messages, configuration, and how it is installed. Leave out servers, endpoints and scaling unless the PRD asks for them.",
        Kind::Library => "This is a library. Design its interface as a public API (types, functions, errors) with an example of use, how callers handle its errors, its dependencies, and how it is versioned and published. Leave out deployment and servers.",
        Kind::Service => "This is a service. Design its interface as endpoints or messages with request and response shapes, its storage, authentication, and how it is deployed, scaled, monitored and recovered.",
        Kind::Unknown => "Fit the design to what is being built: a tool's interface is its commands and exit codes, a library's its public API, a service's its endpoints, with storage and deployment.",
    }
}
