//! `docs/hosts.md`'s table is the one the code acts on: rendered here from the hosts table
//! (`bmad_mcp::hosts`), and compared with the page. `BMAD_WRITE_DOCS=1` writes
//! the rendered table into the page instead.

use bmad_mcp::hosts::{Client, Dialog, Host, Shows, HOSTS};

use crate::support::ROOT;

const BEGIN: &str =
    "<!-- BEGIN hosts table: tests/it/hosts/docs.rs renders it from src/hosts/mod.rs -->\n";
const END: &str = "<!-- END hosts table -->";

fn reads(c: &Client) -> &'static str {
    match c.shows {
        Shows::Text => "the text; the JSON is sent beside it for programs",
        Shows::JsonInstead => "the text: it would show `structuredContent` in place of the text, so none is sent",
        Shows::TextThenJson => "the text, once: it would show `structuredContent` after the text, so none is sent",
        Shows::TextErrorsAsJson => "the text; an error result whole, as one JSON string, so an error carries no `structuredContent`",
        Shows::Printed => "no model: the text and the JSON, printed",
    }
}

fn dialog(c: &Client) -> &'static str {
    match c.dialog {
        Dialog::None => "not declared",
        Dialog::Shown => "declared; the form is shown",
        Dialog::DeclinedUnattended => "declared; its non-interactive mode declines at once, which the reply says is not the human's rejection",
    }
}

fn gate(c: &Client) -> &'static str {
    match c.dialog {
        Dialog::Shown => "the human, in the dialog, the terminal or the dashboard",
        Dialog::DeclinedUnattended => "the human: in the dialog when a person is at the host, else in the terminal or on the dashboard",
        Dialog::None if !c.host_word_passes => "the human, in the terminal or on the dashboard; the model only under an approved `gates = \"host\"`",
        Dialog::None => "whoever makes the call (`decided_by: host`); only the human under `gates = \"human\"`",
    }
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

fn render() -> String {
    let mut t = String::from(
        "| host | how to register | what the model reads | elicitation | who passes a gate (`gates = \"auto\"`) | the assistant's shell recognised | protocol era | known limits |\n|---|---|---|---|---|---|---|---|\n",
    );
    for h in &HOSTS {
        let Some(c) = &h.client else {
            continue;
        };
        let clients: Vec<String> = c.names.iter().map(|n| format!("`{n}`")).collect();
        t.push_str(&format!(
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} |\n",
            h.name,
            clients.join(", "),
            c.register,
            reads(c),
            dialog(c),
            gate(c),
            shell(h),
            c.era,
            c.limits
        ));
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
