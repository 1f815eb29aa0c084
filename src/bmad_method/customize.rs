//! The BMAD method's rule for layering its TOML files (a skill's `customize.toml`, then the
//! team's `_bmad/custom/<skill>.toml`, then the person's `<skill>.user.toml`): scalars
//! override, tables deep-merge, arrays of tables keyed by `code` or `id` replace the
//! matching entry and append the others, every other array appends.

use toml::{Table, Value};

/// `over` laid on `base` by the method's rule.
pub fn customize(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(b)), Value::Table(o)) => customize(b, o),
            (Some(Value::Array(b)), Value::Array(o)) => merge_arrays(b, o),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The key an entry of an array of tables is matched by: its `code`, else its `id`.
fn entry_key(v: &Value) -> Option<(&'static str, &Value)> {
    let t = v.as_table()?;
    ["code", "id"]
        .into_iter()
        .find_map(|k| t.get(k).map(|value| (k, value)))
}

fn merge_arrays(base: &mut Vec<Value>, over: Vec<Value>) {
    let keyed = |items: &[Value]| items.iter().all(|v| entry_key(v).is_some());
    if base.is_empty() || over.is_empty() || !keyed(base) || !keyed(&over) {
        base.extend(over);
        return;
    }
    for item in over {
        let key = entry_key(&item).map(|(k, v)| (k, v.clone()));
        match base
            .iter_mut()
            .find(|b| entry_key(b).map(|(k, v)| (k, v.clone())) == key)
        {
            Some(slot) => *slot = item,
            None => base.push(item),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Table {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn scalars_override_tables_merge_keyed_entries_replace_and_lists_append() {
        let mut base = table(
            "[agent]\nname = \"John\"\nicon = \"a\"\nprinciples = [\"one\"]\n\
             [[agent.menu]]\ncode = \"PRD\"\nskill = \"bmad-prd\"\n\
             [[agent.menu]]\ncode = \"CE\"\nskill = \"bmad-create-epics-and-stories\"\n",
        );
        customize(
            &mut base,
            table(
                "[agent]\nicon = \"b\"\nprinciples = [\"two\"]\n\
                 [[agent.menu]]\ncode = \"PRD\"\nskill = \"our-prd\"\n\
                 [[agent.menu]]\ncode = \"X\"\nprompt = \"do x\"\n",
            ),
        );
        let agent = base["agent"].as_table().unwrap();
        assert_eq!(agent["name"].as_str(), Some("John"), "kept");
        assert_eq!(agent["icon"].as_str(), Some("b"), "overridden");
        let principles: Vec<_> = agent["principles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(principles, ["one", "two"], "appended");
        let menu: Vec<_> = agent["menu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["code"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(menu, ["PRD", "CE", "X"], "replaced in place, new appended");
        assert_eq!(
            agent["menu"][0]["skill"].as_str(),
            Some("our-prd"),
            "the matching entry replaced"
        );
    }
}
