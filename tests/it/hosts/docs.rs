//! `docs/hosts.md`'s table is the one the code acts on: rendered here from the server's
//! host profiles (`bmad_mcp::server::host_profiles`) and the assistant's marks
//! (`bmad_mcp::assistant::marks`), and compared with the page. `BMAD_WRITE_DOCS=1` writes
//! the rendered table into the page instead.

use bmad_mcp::server::host_profiles::{Dialog, Profile, Shows, PROFILES};

use crate::support::ROOT;

const BEGIN: &str = "<!-- BEGIN hosts table: tests/it/hosts/docs.rs renders it from src/server/host_profiles.rs and src/assistant/marks.rs -->\n";
const END: &str = "<!-- END hosts table -->";

fn reads(p: &Profile) -> &'static str {
    match p.shows {
        Shows::Text => "the text; the JSON is sent beside it for programs",
        Shows::JsonInstead => "the text: it would show `structuredContent` in place of the text, so none is sent",
        Shows::TextThenJson => "the text, once: it would show `structuredContent` after the text, so none is sent",
        Shows::TextErrorsAsJson => "the text; an error result whole, as one JSON string, so an error carries no `structuredContent`",
        Shows::Printed => "no model: the text and the JSON, printed",
    }
}

fn dialog(p: &Profile) -> &'static str {
    match p.dialog {
        Dialog::None => "not declared",
        Dialog::Shown => "declared; the form is shown",
        Dialog::DeclinedUnattended => "declared; its non-interactive mode declines at once, which the reply says is not the human's rejection",
    }
}

fn gate(p: &Profile) -> &'static str {
    match p.dialog {
        Dialog::Shown => "the human, in the dialog, the terminal or the dashboard",
        Dialog::DeclinedUnattended => "the human: in the dialog when a person is at the host, else in the terminal or on the dashboard",
        Dialog::None if p.gate_waits_for_human() => "the human, in the terminal or on the dashboard; the model only under an approved `gates = \"host\"`",
        Dialog::None => "whoever makes the call (`decided_by: host`); only the human under `gates = \"human\"`",
    }
}

fn shell(p: &Profile) -> String {
    match p.marks() {
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
    for p in &PROFILES {
        let clients: Vec<String> = p.clients.iter().map(|c| format!("`{c}`")).collect();
        t.push_str(&format!(
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} |\n",
            p.host,
            clients.join(", "),
            p.register,
            reads(p),
            dialog(p),
            gate(p),
            shell(p),
            p.era,
            p.limits
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
