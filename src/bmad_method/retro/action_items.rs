//! What the method's retrospective leaves in `{implementation_artifacts}/sprint-status.yaml`,
//! read as its own `sprint_plan.py status` reads it: `action_items`, each with an `epic`,
//! the `action`, an `owner` and a `status` of `open`, `in-progress` or `done` (since 6.12
//! also an `id` and a `ref` to the retrospective document). An item of no known status is
//! passed over, as the method's status view does; a file that is not the method's YAML is a
//! notice.

use serde_norway::Value;

use crate::files::Project;

use super::{MAX_READ_BYTES, SPRINT_STATUS};

/// The most action items read of one file.
pub const MAX_ITEMS: usize = 200;

/// An action item's status, the method's three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemStatus {
    Open,
    InProgress,
    Done,
}

impl ItemStatus {
    fn parse(v: &str) -> Option<ItemStatus> {
        match v {
            "open" => Some(ItemStatus::Open),
            "in-progress" => Some(ItemStatus::InProgress),
            "done" => Some(ItemStatus::Done),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ItemStatus::Open => "open",
            ItemStatus::InProgress => "in-progress",
            ItemStatus::Done => "done",
        }
    }

    /// Open as the method's status view counts it: `open` and `in-progress`.
    pub fn is_open(self) -> bool {
        self != ItemStatus::Done
    }
}

/// One action item, as the retrospective wrote it (the project's text, unclipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionItem {
    pub id: Option<String>,
    pub epic: Option<u64>,
    pub action: String,
    pub owner: String,
    pub status: ItemStatus,
    /// The retrospective document it came from, as written.
    pub reference: Option<String>,
}

/// The method's sprint status, as far as the retrospective is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SprintStatus {
    /// Its path, relative to the project.
    pub path: String,
    pub items: Vec<ActionItem>,
}

/// The sprint status in the folder `implementation` (relative to the project); `None` when
/// there is none, or it cannot be used (said in `notices`).
pub fn read(
    project: &Project,
    implementation: &str,
    notices: &mut Vec<String>,
) -> Option<SprintStatus> {
    let path = format!("{implementation}/{SPRINT_STATUS}");
    let text = match project.read_in_project(&path, MAX_READ_BYTES) {
        Ok(text) => text?,
        Err(problem) => {
            notices.push(format!(
                "The BMAD method's {path} could not be read ({}); its retrospective's action items are not recalled.",
                crate::code::clip(&problem.to_string(), 200)
            ));
            return None;
        }
    };
    match parse(&text, &path) {
        Ok((status, passed_over)) => {
            if passed_over > 0 {
                notices.push(format!(
                    "{passed_over} action item(s) in {path} have no status the BMAD method knows (`open`, `in-progress`, `done`) and were passed over."
                ));
            }
            Some(status)
        }
        Err(why) => {
            notices.push(format!(
                "The BMAD method's {path} is damaged ({}); its retrospective's action items are not recalled, and the task goes on.",
                crate::code::clip(&why, 200)
            ));
            None
        }
    }
}

/// The sprint status in `text`, and how many action items were passed over; `Err` when it
/// is not a YAML mapping, or its `action_items` not a list.
pub fn parse(text: &str, path: &str) -> Result<(SprintStatus, usize), String> {
    let doc: Value = serde_norway::from_str(text).map_err(|e| {
        let why = e.to_string();
        why.lines().next().unwrap_or("not YAML").to_string()
    })?;
    let map = match doc {
        Value::Mapping(m) => m,
        Value::Null => serde_norway::Mapping::new(),
        _ => return Err("not a YAML mapping".into()),
    };
    let mut status = SprintStatus {
        path: path.to_string(),
        ..SprintStatus::default()
    };
    let mut passed_over = 0;
    match map.get("action_items") {
        None | Some(Value::Null) => {}
        Some(Value::Sequence(items)) => {
            for item in items.iter().take(MAX_ITEMS) {
                match action_item(item) {
                    Some(a) => status.items.push(a),
                    None => passed_over += 1,
                }
            }
        }
        Some(_) => return Err("`action_items` is not a list".into()),
    }
    Ok((status, passed_over))
}

/// A scalar as text (a number or a word); `None` for a list or a mapping.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// One item of `action_items`; `None` for one that is not a mapping, has no action or no
/// status the method knows.
fn action_item(item: &Value) -> Option<ActionItem> {
    let Value::Mapping(m) = item else {
        return None;
    };
    let text = |k: &str| m.get(k).and_then(scalar).filter(|s| !s.trim().is_empty());
    let status = ItemStatus::parse(text("status")?.as_str())?;
    Some(ActionItem {
        id: text("id"),
        epic: text("epic").and_then(|e| e.trim().parse().ok()),
        action: text("action")?,
        owner: text("owner").unwrap_or_default(),
        status,
        reference: text("ref"),
    })
}

/// The verdict a retrospective document states in its front matter (`verdict:`), read
/// from `path` (as an action item's `ref` names it); `None` when it cannot be read or
/// states none.
pub fn verdict(project: &Project, path: &str) -> Option<(String, String)> {
    let rel = super::relative(project, path)?;
    let text = project.read_in_project(&rel, MAX_READ_BYTES).ok()??;
    let front = text.strip_prefix("---")?;
    let end = front.find("\n---")?;
    let map: serde_norway::Mapping = serde_norway::from_str(&front[..end]).ok()?;
    let v = map.get("verdict").and_then(scalar)?;
    Some((rel, super::super::one_line(&v, 40)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the method's `sprint_status.py update --add-action` writes them, and a legacy
    /// item as its template shows one.
    const WRITTEN: &str = r#"
generated: 11-27-2026 10:00
last_updated: 11-27-2026 12:00
development_status:
  epic-1: done
  1-1-login: done
  epic-1-retrospective: done
action_items:
  - id: "epic-1-retro-item-1-validate-input"
    epic: 1
    action: "Validate every form's input on the server"
    owner: "Dev team"
    status: open
    ref: "{project-root}/_bmad-output/implementation-artifacts/epic-1-retro-2026-11-27.md"
  - epic: 1
    action: "Add error handling to the review checklist"
    owner: "Charlie"
    status: done
  - epic: 1
    action: "Name the owner"
    owner: "QA"
    status: in-progress
  - epic: 1
    action: "No status"
  - "not a mapping"
"#;

    #[test]
    fn items_are_read_as_the_method_writes_them_and_unknown_ones_passed_over() {
        let (s, passed_over) = parse(WRITTEN, "x/sprint-status.yaml").unwrap();
        assert_eq!(passed_over, 2);
        assert_eq!(s.items.len(), 3);
        let first = &s.items[0];
        assert_eq!(
            first.id.as_deref(),
            Some("epic-1-retro-item-1-validate-input")
        );
        assert_eq!((first.epic, first.owner.as_str()), (Some(1), "Dev team"));
        assert!(first
            .reference
            .as_deref()
            .unwrap()
            .ends_with("epic-1-retro-2026-11-27.md"));
        let open: Vec<bool> = s.items.iter().map(|i| i.status.is_open()).collect();
        assert_eq!(open, [true, false, true], "in-progress counts as open");
    }

    #[test]
    fn a_damaged_file_is_an_error_to_say_and_an_empty_one_holds_nothing() {
        assert!(parse("action_items: [unclosed", "p").is_err());
        assert!(parse("- a list", "p").is_err());
        assert!(parse("action_items: {a: 1}", "p")
            .unwrap_err()
            .contains("not a list"));
        let (s, n) = parse("", "p").unwrap();
        assert!(s.items.is_empty() && n == 0);
    }

    #[test]
    fn a_retrospective_documents_verdict_is_read_from_its_front_matter() {
        let (dir, project) = crate::files::project::tests::project();
        let folder = dir.path().join("out");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("epic-1-retro.md"),
            "---\nepic: 1\nverdict: accepted-with-open-items\n---\n# Retro\n",
        )
        .unwrap();
        let abs = folder.join("epic-1-retro.md");
        for path in [
            "out/epic-1-retro.md",
            "{project-root}/out/epic-1-retro.md",
            abs.to_str().unwrap(),
        ] {
            assert_eq!(
                verdict(&project, path),
                Some((
                    "out/epic-1-retro.md".into(),
                    "accepted-with-open-items".into()
                )),
                "{path}"
            );
        }
        assert_eq!(verdict(&project, "/etc/passwd"), None);
        assert_eq!(verdict(&project, "out/missing.md"), None);
    }
}
