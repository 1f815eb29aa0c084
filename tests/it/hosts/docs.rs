//! `docs/hosts.md`'s list of hosts is the one the code acts on: rendered here from the hosts table
//! (`bmad_mcp::hosts`), and compared with the page. `BMAD_WRITE_DOCS=1` writes
//! the rendered table into the page instead.

use bmad_mcp::hosts::{Client, Dialog, DialogHooks, Host, Shown, Shows, Sight, HOSTS};

use crate::support::ROOT;

const BEGIN: &str =
    "<!-- BEGIN hosts table: tests/it/hosts/docs.rs renders it from src/hosts/mod.rs -->\n";
const END: &str = "<!-- END hosts table -->";

fn reads(c: &Client) -> &'static str {
    match c.shows {
        Shows::Text => "the text; the JSON is sent beside it for programs",
        Shows::JsonInstead => "the text: it would show `structuredContent` in place of the text, so none is sent",
        Shows::TextThenJson => "the text, once: it would show `structuredContent` after the text, so none is sent",
        Shows::TextErrorsAsJson => "the text; it would hand an error result over whole, as one JSON string echoing the call's arguments, and show the person none of it: the server sends it an error as a result whose text names the error (the JSON beside it for programs)",
        Shows::Printed => "no model: the text and the JSON, printed",
    }
}

fn dialog(c: &Client) -> String {
    match c.dialog {
        Dialog::None => "not declared".into(),
        Dialog::Shown => "declared; the form is shown".into(),
        Dialog::DeclinedUnattended(u) => format!("declared; it closes every dialog at once {}, with nobody asked: the reply to a form closed sooner than a person reads one (a second) says it was the host's doing, not the human's, names the terminal command and the dashboard, and says how to be asked in the dialog: {}", u.when, u.shown),
    }
}

fn gate(c: &Client) -> &'static str {
    match c.dialog {
        Dialog::Shown => "the human, in the dialog, the terminal or the dashboard",
        Dialog::DeclinedUnattended(_) => "the human: in the dialog where the host shows it, else in the terminal or on the dashboard",
        Dialog::None if !c.host_word_passes => "the human, in the terminal or on the dashboard; the model only under an approved `gates = \"host\"`",
        Dialog::None => "whoever makes the call (`decided_by: host`); only the human under `gates = \"human\"`",
    }
}

fn hooks(c: &Client) -> String {
    match c.hooks {
        DialogHooks::ClaudeCodeSettings => "its `Elicitation` and `ElicitationResult` hooks answer a form in the person's place (the TUI never shows it): read from every settings file it loads (user, project, local, managed, `--settings`, its plugins) before an answer is taken as the human's; one the human did not approve with `bmad-mcp config approve` keeps the dialog shut, and the gate waits for the terminal or the dashboard".into(),
        DialogHooks::NoneOnTheDialog(what) => format!("none on the dialog: {what}"),
        DialogHooks::NoDialog => "— (no dialog)".into(),
    }
}

fn shown(s: Shown) -> &'static str {
    match s {
        Shown::Whole => "all of it",
        Shown::FirstLine => "its first line",
        Shown::LastLines => "its last lines (the rest on request)",
        Shown::Nothing => "nothing",
    }
}

/// What the person sees in each mode, a line each beneath the entry's.
fn screens(c: &Client) -> String {
    let mut t = String::from(
        "where the screen shows nothing of a reply the person must act on, the model relays its `user_message`, which names the terminal command and `bmad-mcp dashboard`",
    );
    for s in c.screens {
        let dialog = match s.dialog {
            Sight::Form => "shown",
            Sight::ClosedUnseen => "closed at once, unseen",
            Sight::NoDialog => "none",
        };
        t.push_str(&format!(
            "\n  * {}: of a result, {}; of an error result, {}; the dialog: {dialog}",
            s.mode,
            shown(s.result),
            shown(s.error)
        ));
    }
    t
}

fn shell(h: &Host) -> String {
    match &h.shell {
        Some(m) => {
            let vars: Vec<String> = m.vars_shown().iter().map(|v| format!("`{v}`")).collect();
            format!("yes: {}, or the host's own process", vars.join(", "))
        }
        None => "— (no shell tool)".to_string(),
    }
}

/// One entry per host, a line per property: a table with these columns would have rows
/// of a thousand characters, which no one reads.
fn render() -> String {
    let mut t = String::new();
    for h in &HOSTS {
        let Some(c) = &h.client else {
            continue;
        };
        let clients: Vec<String> = c.names.iter().map(|n| format!("`{n}`")).collect();
        let lines = [
            ("how to register", c.register.to_string()),
            ("what the model reads", reads(c).to_string()),
            ("elicitation", dialog(c)),
            ("what the person sees", screens(c)),
            ("hooks that answer the dialog", hooks(c)),
            (
                "who passes a gate (`gates = \"auto\"`)",
                gate(c).to_string(),
            ),
            ("the assistant's shell recognised", shell(h)),
            ("protocol era", c.era.to_string()),
            ("known limits", c.limits.to_string()),
        ];
        t.push_str(&format!("**{}** ({})\n\n", h.name, clients.join(", ")));
        for (what, said) in lines {
            t.push_str(&format!("* {what}: {said}\n"));
        }
        t.push('\n');
    }
    t
}

#[test]
fn the_hosts_table_is_the_one_the_code_acts_on() {
    let path = std::path::Path::new(ROOT).join("docs/hosts.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let start = page.find(BEGIN).expect("the table's opening marker") + BEGIN.len();
    let end = page.find(END).expect("the table's closing marker");
    let table = render();
    if std::env::var_os("BMAD_WRITE_DOCS").is_some() {
        let written = format!("{}{table}{}", &page[..start], &page[end..]);
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert_eq!(
        &page[start..end],
        table,
        "docs/hosts.md's table differs from the code's: rerun with BMAD_WRITE_DOCS=1 to write it"
    );
}

/// What setup prints for a host beyond its entry (`still_to_do`: Gemini CLI's headless
/// rule) is what docs/setup.md shows: each line of the rule is a line of the page.
#[test]
fn what_setup_leaves_to_the_person_is_on_the_setup_page() {
    let page = std::fs::read_to_string(std::path::Path::new(ROOT).join("docs/setup.md")).unwrap();
    let todos: Vec<&str> = HOSTS
        .iter()
        .filter_map(|h| h.config.and_then(|c| c.still_to_do))
        .collect();
    assert!(!todos.is_empty());
    for line in todos
        .iter()
        .flat_map(|t| t.lines())
        .filter(|l| !l.contains('`') && (l.starts_with("[[") || l.contains(" = ")))
    {
        assert!(
            page.lines().any(|p| p == line),
            "docs/setup.md lacks `{line}`, which setup prints"
        );
    }
}
