//! Editing a host's JSON configuration through a concrete syntax tree (`jsonc-parser`'s
//! CST), so that a file with comments and trailing commas (VS Code's and opencode's may
//! have both) keeps them: only our entry's own fields change, every other byte of the
//! file stays as it was.

use jsonc_parser::cst::{CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use jsonc_parser::ParseOptions;
use serde_json::Value;

use super::entry::{foreign, not_ours, refused, runs_us, Change, Found, NAME};

/// Our entry in the object `container` (`mcpServers`, `servers`, `mcp`) of the file's
/// `text`: set to have `fields` (`Some`; an entry of ours found is treated as `found`
/// says) or removed (`None`). An entry named `bmad` that runs another program is refused,
/// untouched.
pub fn edit(
    text: &str,
    container: &str,
    fields: Option<&[(&'static str, Value)]>,
    found: Found,
) -> Result<Change, String> {
    let root = CstRootNode::parse(text, &ParseOptions::default())
        .map_err(|e| format!("it is not valid JSON (nor JSON with comments): {e}"))?;
    let unchanged = || Change {
        text: text.to_string(),
        before: None,
        after: None,
    };
    let Some(top) = top_object(&root, fields.is_some())? else {
        return Ok(unchanged());
    };
    single(&top, container)?;
    let servers = match top.get(container) {
        Some(prop) => prop
            .object_value()
            .ok_or_else(|| format!("its `{container}` is not an object"))?,
        None if fields.is_some() => top
            .object_value_or_create(container)
            .ok_or_else(|| format!("its `{container}` cannot be made"))?,
        None => return Ok(unchanged()),
    };
    single(&servers, NAME)?;
    // What the person is shown of the entry, before and after.
    let shown = |prop: Option<&CstObjectProp>| prop?.value().and_then(|v| pretty(&v, 0));
    let entry = servers.get(NAME);
    let before = entry.as_ref().and_then(value_of);
    let shown_before = shown(entry.as_ref());
    if let Some(entry) = &before {
        check_ours(entry)?;
        if let (Some(fields), Found::Vet) = (fields, found) {
            let parts = foreign(entry, &command_of(fields), &[]);
            if !parts.is_empty() {
                return Err(refused(&parts, shown_before.as_deref()));
            }
        }
    }
    match (fields, entry) {
        (None, Some(prop)) => prop.remove(),
        (None, None) => {}
        (Some(fields), None) => {
            servers.append(NAME, object(fields));
        }
        (Some(fields), Some(prop)) if found == Found::Replace => prop.set_value(object(fields)),
        (Some(fields), Some(prop)) => update(&prop, fields)?,
    }
    Ok(Change {
        text: root.to_string(),
        before: shown_before,
        after: shown(servers.get(NAME).as_ref()),
    })
}

/// The file's top-level object; made when `make` and the file is empty; `None` when it is
/// empty and there is nothing to remove.
fn top_object(root: &CstRootNode, make: bool) -> Result<Option<CstObject>, String> {
    match root.value() {
        None if make => Ok(Some(root.object_value_or_set())),
        None => Ok(None),
        Some(v) => v
            .as_object()
            .map(Some)
            .ok_or_else(|| "its top level is not an object".to_string()),
    }
}

/// Refuses an object that names `key` twice: the edit would change the first, and the
/// hosts read the last.
fn single(object: &CstObject, key: &str) -> Result<(), String> {
    let named = object
        .properties()
        .iter()
        .filter(|p| p.name().and_then(|n| n.decoded_value().ok()).as_deref() == Some(key))
        .count();
    match named {
        0 | 1 => Ok(()),
        n => Err(format!(
            "it names `{key}` {n} times in one object; a host reads the last one and setup would edit the first: keep one yourself"
        )),
    }
}

/// The program our `fields` run: `command`, or the first of opencode's array.
fn command_of(fields: &[(&'static str, Value)]) -> String {
    let command = fields.iter().find(|(k, _)| *k == "command").map(|(_, v)| v);
    match command {
        Some(Value::Array(a)) => a.first().and_then(Value::as_str),
        Some(v) => v.as_str(),
        None => None,
    }
    .unwrap_or_default()
    .to_string()
}

fn value_of(prop: &CstObjectProp) -> Option<Value> {
    prop.value().and_then(|v| v.to_serde_value())
}

/// An entry is ours when the program it runs is a `bmad-mcp` binary: `command` as a
/// string, or the first element of `command` as an array (opencode's shape).
fn check_ours(entry: &Value) -> Result<(), String> {
    let command = match entry.get("command") {
        Some(Value::String(c)) => Some(c.as_str()),
        Some(Value::Array(a)) => a.first().and_then(Value::as_str),
        _ => None,
    };
    match command {
        Some(c) if runs_us(c) => Ok(()),
        Some(c) => Err(not_ours(&format!("runs `{c}`"))),
        None if entry.get("url").is_some() => Err(not_ours("is a remote server (a `url`)")),
        None => Err(not_ours("runs no command")),
    }
}

/// Sets each of `fields` whose value differs in our entry (one left as it is keeps its
/// formatting, so a second run changes nothing), keeping the entry's other fields and the
/// arguments the person gave our server (an `args` array, the rest of opencode's
/// `command` array).
fn update(prop: &CstObjectProp, fields: &[(&'static str, Value)]) -> Result<(), String> {
    let entry = prop
        .object_value()
        .ok_or_else(|| not_ours("is not an object"))?;
    for (key, want) in fields {
        let had = entry.get(key);
        let want = match (*key, had.as_ref().and_then(value_of), want) {
            ("args", Some(Value::Array(args)), _) => Value::Array(args),
            ("command", Some(Value::Array(was)), Value::Array(ours)) if !was.is_empty() => {
                Value::Array(ours.iter().chain(&was[1..]).cloned().collect())
            }
            _ => want.clone(),
        };
        let want = &want;
        match had {
            Some(field) if value_of(&field).as_ref() == Some(want) => {}
            Some(field) => field.set_value(input(want)),
            None => {
                entry.append(key, input(want));
            }
        }
    }
    Ok(())
}

fn object(fields: &[(&'static str, Value)]) -> CstInputValue {
    CstInputValue::Object(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), input(v)))
            .collect(),
    )
}

fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// An entry as the person reads it: indented, its keys in the order the file has them
/// (a `Value`'s map would sort them), without the file's comments. `None` for a value
/// that is not JSON.
fn pretty(node: &CstNode, depth: usize) -> Option<String> {
    let pad = |d: usize| "  ".repeat(d);
    let block = |items: Vec<String>, open: char, close: char| match items.is_empty() {
        true => format!("{open}{close}"),
        false => format!("{open}\n{}\n{}{close}", items.join(",\n"), pad(depth)),
    };
    if let Some(object) = node.as_object() {
        let mut items = Vec::new();
        for prop in object.properties() {
            let name = prop.name()?.decoded_value().ok()?;
            let value = pretty(&prop.value()?, depth + 1)?;
            items.push(format!(
                "{}{}: {value}",
                pad(depth + 1),
                Value::String(name)
            ));
        }
        return Some(block(items, '{', '}'));
    }
    if let Some(array) = node.as_array() {
        let items: Option<Vec<String>> = array
            .elements()
            .iter()
            .map(|e| Some(format!("{}{}", pad(depth + 1), pretty(e, depth + 1)?)))
            .collect();
        return Some(block(items?, '[', ']'));
    }
    node.to_serde_value().map(|v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::edit;
    use crate::setup::entry::Found;
    use serde_json::{json, Value};

    fn fields() -> Vec<(&'static str, Value)> {
        vec![("command", json!("/opt/bin/bmad-mcp")), ("args", json!([]))]
    }

    #[test]
    fn a_new_file_gets_the_container_and_our_entry() {
        let c = edit("", "mcpServers", Some(&fields()), Found::Update).unwrap();
        let v: Value = serde_json::from_str(&c.text).unwrap();
        assert_eq!(
            v["mcpServers"]["bmad"]["command"], "/opt/bin/bmad-mcp",
            "{}",
            c.text
        );
        assert!(c.before.is_none() && c.after.is_some());
    }

    #[test]
    fn comments_other_entries_and_our_extra_fields_survive_and_a_rerun_changes_nothing() {
        let text = "{\n  // mine\n  \"servers\": {\n    \"other\": {\"command\": \"x\"}, /* keep */\n    \"bmad\": {\"command\": \"/old/bmad-mcp\", \"trust\": true},\n  },\n}\n";
        let c = edit(text, "servers", Some(&fields()), Found::Update).unwrap();
        for kept in [
            "// mine",
            "/* keep */",
            "\"other\": {\"command\": \"x\"}",
            "\"trust\": true",
        ] {
            assert!(c.text.contains(kept), "{kept} lost:\n{}", c.text);
        }
        assert!(c.text.contains("/opt/bin/bmad-mcp") && !c.text.contains("/old/"));
        let again = edit(&c.text, "servers", Some(&fields()), Found::Update).unwrap();
        assert_eq!(again.text, c.text);
        let gone = edit(&c.text, "servers", None, Found::Update).unwrap();
        assert!(
            !gone.text.contains("bmad")
                && gone.text.contains("// mine")
                && gone.text.contains("\"other\""),
            "{}",
            gone.text
        );
        assert!(gone.after.is_none() && gone.before.is_some());
    }

    /// setup prints the entry with its keys in the file's order, as the host and the
    /// person read them, not sorted.
    #[test]
    fn the_entry_is_shown_in_the_order_it_is_written() {
        let ours = vec![
            ("type", json!("local")),
            ("command", json!("/opt/bin/bmad-mcp")),
            ("args", json!([])),
            ("tools", json!(["*"])),
        ];
        let c = edit("", "mcpServers", Some(&ours), Found::Update).unwrap();
        let shown = "{\n  \"type\": \"local\",\n  \"command\": \"/opt/bin/bmad-mcp\",\n  \"args\": [],\n  \"tools\": [\n    \"*\"\n  ]\n}";
        assert_eq!(c.after.as_deref(), Some(shown));
        let text = "{\"mcpServers\": {\"bmad\": {\"trust\": true, /* mine */ \"env\": {\"Z\": \"1\", \"A\": \"2\"}, \"command\": \"/old/bmad-mcp\"}}}";
        let c = edit(text, "mcpServers", Some(&fields()), Found::Update).unwrap();
        let before = "{\n  \"trust\": true,\n  \"env\": {\n    \"Z\": \"1\",\n    \"A\": \"2\"\n  },\n  \"command\": \"/old/bmad-mcp\"\n}";
        assert_eq!(c.before.as_deref(), Some(before));
        let after = c.after.unwrap();
        assert!(
            after.find("trust") < after.find("env") && after.find("env") < after.find("args"),
            "{after}"
        );
    }

    /// The arguments a person gave our server stay: an `args` array, and the rest of
    /// opencode's `command` array; only the binary's path follows.
    #[test]
    fn the_arguments_given_to_our_server_stay() {
        let text = "{\"mcpServers\": {\"bmad\": {\"command\": \"/old/bmad-mcp\", \"args\": [\"--project\", \"/p\"]}}}";
        let c = edit(text, "mcpServers", Some(&fields()), Found::Update).unwrap();
        let v: Value = serde_json::from_str(&c.text).unwrap();
        assert_eq!(v["mcpServers"]["bmad"]["args"], json!(["--project", "/p"]));
        assert_eq!(v["mcpServers"]["bmad"]["command"], "/opt/bin/bmad-mcp");
        let text = "{\"mcp\": {\"bmad\": {\"type\": \"local\", \"command\": [\"/old/bmad-mcp\", \"--owner\", \"A <a@e.org>\"]}}}";
        let ours = vec![("command", json!(["/opt/bin/bmad-mcp"]))];
        let c = edit(text, "mcp", Some(&ours), Found::Update).unwrap();
        let v: Value = serde_json::from_str(&c.text).unwrap();
        assert_eq!(
            v["mcp"]["bmad"]["command"],
            json!(["/opt/bin/bmad-mcp", "--owner", "A <a@e.org>"])
        );
        assert_eq!(
            edit(&c.text, "mcp", Some(&ours), Found::Update)
                .unwrap()
                .text,
            c.text
        );
    }

    /// An object that names our entry, or the servers' object, twice is refused: the hosts
    /// read the last one.
    #[test]
    fn a_name_given_twice_is_refused_untouched() {
        let ours = "{\"command\": \"/opt/bin/bmad-mcp\", \"args\": []}";
        for text in [
            format!("{{\"mcpServers\": {{\"bmad\": {ours}, \"bmad\": {{\"command\": \"npx\"}}}}}}"),
            format!("{{\"mcpServers\": {{\"bmad\": {ours}}}, \"mcpServers\": {{}}}}"),
        ] {
            for want in [Some(&fields()[..]), None] {
                let e = edit(&text, "mcpServers", want, Found::Update)
                    .map(|c| c.text)
                    .unwrap_err();
                assert!(e.contains("2 times"), "{e}");
            }
        }
    }

    #[test]
    fn another_programs_entry_named_bmad_is_refused_untouched() {
        for entry in [
            r#"{"command": "npx"}"#,
            r#"{"url": "http://x/mcp"}"#,
            r#"{"type": "local", "command": ["node", "s.js"]}"#,
        ] {
            let text = format!(r#"{{"mcp": {{"bmad": {entry}}}}}"#);
            assert!(edit(&text, "mcp", Some(&fields()), Found::Update)
                .unwrap_err()
                .contains("another server's entry"));
            assert!(edit(&text, "mcp", None, Found::Update).is_err());
        }
    }

    #[test]
    fn a_path_with_quotes_and_backslashes_is_written_escaped() {
        let path = r#"C:\Users\A "B"\bmad-mcp.exe"#;
        let c = edit(
            "{}",
            "servers",
            Some(&[("command", json!(path))]),
            Found::Update,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&c.text).unwrap();
        assert_eq!(v["servers"]["bmad"]["command"], path, "{}", c.text);
    }

    #[test]
    fn what_is_not_an_object_of_servers_is_refused() {
        assert!(edit("[1]", "mcpServers", Some(&fields()), Found::Update).is_err());
        assert!(edit(
            r#"{"mcpServers": 3}"#,
            "mcpServers",
            Some(&fields()),
            Found::Update
        )
        .is_err());
        assert!(edit("{ not json", "mcpServers", Some(&fields()), Found::Update).is_err());
    }
}
