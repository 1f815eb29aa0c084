//! Editing Codex's `config.toml` with `toml_edit`, which keeps the file's comments, order
//! and layout: only our `[mcp_servers.bmad]` table's own keys change. Codex starts a
//! server with a short allow-list of variables, so the `BMAD_*` settings it needs go in
//! the entry's `env` table.

use toml_edit::{DocumentMut, Item, Table, TableLike};

use super::entry::{foreign, not_ours, refused, runs_us, Change, Found, Want, NAME};

/// The table of servers in Codex's configuration.
const SERVERS: &str = "mcp_servers";

/// The file's `text` with our entry set as `want` says (an entry of ours found treated
/// as `found` says, every other table kept), or refused when an entry named `bmad` runs
/// another program.
pub fn edit(text: &str, want: &Want, found: Found) -> Result<Change, String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("it is not valid TOML: {e}"))?;
    if doc.get(SERVERS).is_none() {
        if matches!(want, Want::Remove) {
            return Ok(unchanged(text));
        }
        let mut servers = Table::new();
        // No empty `[mcp_servers]` header: only `[mcp_servers.bmad]` appears.
        servers.set_implicit(true);
        doc.insert(SERVERS, Item::Table(servers));
    }
    // A file may write its tables inline (`mcp_servers = { bmad = { … } }`); what we add
    // is written in the same style.
    let inline = doc[SERVERS].is_inline_table();
    let servers = doc[SERVERS]
        .as_table_like_mut()
        .ok_or_else(|| format!("its `{SERVERS}` is not a table"))?;
    let before = servers.get(NAME).map(render);
    if let Some(entry) = servers.get(NAME) {
        check_ours(entry)?;
        if let (Want::Add { command, env }, Found::Vet) = (want, found) {
            let parts = foreign(&as_json(entry), command, env);
            if !parts.is_empty() {
                return Err(refused(&parts, before.as_deref()));
            }
        }
    }
    match want {
        Want::Remove => {
            servers.remove(NAME);
        }
        Want::Add { command, env } => {
            if found == Found::Replace || servers.get(NAME).is_none() {
                servers.insert(NAME, new_table(inline));
            }
            let entry = servers.get_mut(NAME).ok_or_else(|| not_ours("vanished"))?;
            let inline = entry.is_inline_table();
            let entry = entry
                .as_table_like_mut()
                .ok_or_else(|| not_ours("is not a table"))?;
            set(entry, command, env, inline);
        }
    }
    let after = servers.get(NAME).map(render);
    Ok(Change {
        text: doc.to_string(),
        before,
        after,
    })
}

fn unchanged(text: &str) -> Change {
    Change {
        text: text.to_string(),
        before: None,
        after: None,
    }
}

fn check_ours(entry: &Item) -> Result<(), String> {
    match entry.get("command").and_then(Item::as_str) {
        Some(c) if runs_us(c) => Ok(()),
        Some(c) => Err(not_ours(&format!("runs `{c}`"))),
        None if entry.get("url").is_some() => Err(not_ours("is a remote server (a `url`)")),
        None => Err(not_ours("runs no command")),
    }
}

/// Sets the keys of our entry that differ from what we register (`command`, `args` when
/// it has none, and each of `env`), so that a second run leaves the text as it is; the
/// entry's other keys (its arguments, a timeout, another variable) stay.
fn set(entry: &mut dyn TableLike, command: &str, env: &[(String, String)], inline: bool) {
    if entry.get("command").and_then(Item::as_str) != Some(command) {
        entry.insert("command", toml_edit::value(command));
    }
    // The arguments the person gave our server stay.
    if entry.get("args").and_then(Item::as_array).is_none() {
        entry.insert("args", toml_edit::value(toml_edit::Array::new()));
    }
    if env.is_empty() {
        return;
    }
    if entry.get("env").is_none() {
        entry.insert("env", new_table(inline));
    }
    if let Some(vars) = entry.get_mut("env").and_then(Item::as_table_like_mut) {
        for (name, value) in env {
            if vars.get(name).and_then(Item::as_str) != Some(value.as_str()) {
                vars.insert(name, toml_edit::value(value.as_str()));
            }
        }
    }
}

/// An empty table: `[…]` of its own, or `{ }` inside an inline table.
fn new_table(inline: bool) -> Item {
    if inline {
        toml_edit::value(toml_edit::InlineTable::new())
    } else {
        toml_edit::table()
    }
}

/// An entry as JSON, to judge it as the JSON hosts' are; a value TOML cannot read back
/// is an empty object.
fn as_json(entry: &Item) -> serde_json::Value {
    render(entry)
        .parse::<toml::Table>()
        .ok()
        .and_then(|doc| serde_json::to_value(doc.get(SERVERS)?.get(NAME)?).ok())
        .unwrap_or_default()
}

/// Our entry as it reads in a file of its own: `[mcp_servers.bmad]` and its keys.
fn render(entry: &Item) -> String {
    let mut doc = DocumentMut::new();
    let mut servers = Table::new();
    servers.set_implicit(true);
    servers.insert(NAME, entry.clone());
    doc.insert(SERVERS, Item::Table(servers));
    doc.to_string().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::edit;
    use crate::setup::entry::{Found, Want};

    fn add(env: &[(&str, &str)]) -> Want {
        Want::Add {
            command: "/opt/bin/bmad-mcp".into(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn our_table_is_added_with_its_env_keeping_comments_and_other_servers() {
        let text = "# my codex\nmodel = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"npx\" # theirs\n";
        let c = edit(text, &add(&[("BMAD_OWNER", "Ann <a@x>")]), Found::Update).unwrap();
        assert!(c.text.starts_with(text), "{}", c.text);
        let doc: toml::Table = c.text.parse().unwrap();
        let bmad = &doc["mcp_servers"]["bmad"];
        assert_eq!(bmad["command"].as_str(), Some("/opt/bin/bmad-mcp"));
        assert_eq!(bmad["env"]["BMAD_OWNER"].as_str(), Some("Ann <a@x>"));
        assert!(!c.text.contains("[mcp_servers]\n"), "{}", c.text);
        assert_eq!(
            edit(&c.text, &add(&[("BMAD_OWNER", "Ann <a@x>")]), Found::Update)
                .unwrap()
                .text,
            c.text
        );
        let gone = edit(&c.text, &Want::Remove, Found::Update).unwrap();
        assert!(!gone.text.contains("bmad"), "{}", gone.text);
        assert!(gone.text.contains("# theirs") && gone.text.contains("# the model"));
    }

    #[test]
    fn an_update_keeps_our_entrys_other_keys_and_variables() {
        let text = "[mcp_servers.bmad]\ncommand = \"/old/bmad-mcp\"\nargs = [\"--project\", \"/p\"]\nstartup_timeout_sec = 30\n\n[mcp_servers.bmad.env]\nRUST_LOG = \"info\"\n";
        let c = edit(text, &add(&[("BMAD_LOCK_WAIT_SECS", "5")]), Found::Update).unwrap();
        for kept in [
            "args = [\"--project\", \"/p\"]",
            "startup_timeout_sec = 30",
            "RUST_LOG = \"info\"",
            "BMAD_LOCK_WAIT_SECS = \"5\"",
        ] {
            assert!(c.text.contains(kept), "{kept}:\n{}", c.text);
        }
        assert!(!c.text.contains("/old/"));
    }

    #[test]
    fn inline_tables_stay_inline_and_another_programs_bmad_is_refused() {
        let c = edit(
            "mcp_servers = { x = { command = \"y\" } }\n",
            &add(&[("BMAD_OWNER", "a")]),
            Found::Update,
        )
        .unwrap();
        let doc: toml::Table = c.text.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["bmad"]["env"]["BMAD_OWNER"].as_str(),
            Some("a"),
            "{}",
            c.text
        );
        let theirs = "[mcp_servers.bmad]\ncommand = \"npx\"\n";
        assert!(edit(theirs, &add(&[]), Found::Update)
            .unwrap_err()
            .contains("another server's entry"));
        assert!(edit(theirs, &Want::Remove, Found::Update).is_err());
    }
}
