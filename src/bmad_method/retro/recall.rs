//! The team's retrospective in a role prompt: the open action items (`open`,
//! `in-progress`) of the method's sprint status that concern the stage, under a heading
//! that says whose they are, each clipped to one line, in at most [`BLOCK_BUDGET`] bytes.
//! An item whose owner names a role (`Dev team`, `QA`, `Architect`) concerns that role's
//! stages; any other owner (a person, the team, nobody) concerns every stage. A `done`
//! item is never recalled; with no open item the prompt gets nothing.

use crate::files::Project;
use crate::workflow::Stage;

use super::action_items::{self, ActionItem};
use crate::bmad_method::MethodSettings;

/// The most bytes the block takes in a prompt.
pub const BLOCK_BUDGET: usize = 768;

/// The longest action shown, in characters.
const ACTION_CHARS: usize = 160;

/// The longest owner shown, in characters.
const OWNER_CHARS: usize = 40;

/// The words of an owner that name each role, by the stage id it plays.
const ROLE_WORDS: [(&str, &[&str]); 6] = [
    ("po", &["po", "pm", "product"]),
    ("architect", &["architect", "architects", "architecture"]),
    ("sm", &["sm", "scrum"]),
    (
        "dev",
        &[
            "dev",
            "devs",
            "developer",
            "developers",
            "engineer",
            "engineers",
            "engineering",
        ],
    ),
    ("review", &["review", "reviewer", "reviewers"]),
    ("qa", &["qa", "test", "tester", "testers", "testing", "tea"]),
];

/// The roles whose items a stage's prompt carries: its own, and for the light tracks'
/// stages the roles they stand in for.
fn roles_of(stage: Stage) -> &'static [&'static str] {
    match stage.id() {
        "spec" => &["po", "architect", "sm"],
        "bug" => &["dev", "qa"],
        "po" => &["po"],
        "architect" => &["architect"],
        "sm" => &["sm"],
        "dev" => &["dev"],
        "review" => &["review"],
        _ => &["qa"],
    }
}

/// Whether an item owned by `owner` concerns `stage`: the roles it names include one the
/// stage plays, or it names none.
pub fn concerns(owner: &str, stage: Stage) -> bool {
    let lower = owner.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let named: Vec<&str> = ROLE_WORDS
        .iter()
        .filter(|(_, ws)| ws.iter().any(|w| words.contains(w)))
        .map(|(role, _)| *role)
        .collect();
    named.is_empty() || named.iter().any(|r| roles_of(stage).contains(r))
}

/// What a prompt recalled of the retrospective.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recalled {
    /// The block added to the prompt (empty when no open item concerns the stage).
    pub text: String,
    /// How many items it carries.
    pub items: usize,
    /// What could not be read.
    pub notices: Vec<String>,
}

/// The retrospective's block for `stage`'s prompt in the project of an install with
/// `settings`.
pub fn block(project: &Project, settings: &MethodSettings, stage: Stage) -> Recalled {
    let mut out = Recalled::default();
    let Some(folder) = settings.implementation_artifacts.as_deref() else {
        return out;
    };
    let Some(status) = action_items::read(project, folder, &mut out.notices) else {
        return out;
    };
    let open: Vec<&ActionItem> = status
        .items
        .iter()
        .filter(|i| i.status.is_open() && concerns(&i.owner, stage))
        .collect();
    let verdicts = verdicts(project, &open);
    let (text, items) = render(&status.path, &open, &verdicts);
    out.text = text;
    out.items = items;
    out
}

/// The verdicts of the retrospective documents the items point to (at most two).
fn verdicts(project: &Project, items: &[&ActionItem]) -> Vec<(String, String)> {
    let mut refs: Vec<&str> = Vec::new();
    for r in items.iter().filter_map(|i| i.reference.as_deref()) {
        if !refs.contains(&r) {
            refs.push(r);
        }
    }
    refs.iter()
        .take(2)
        .filter_map(|r| action_items::verdict(project, r))
        .collect()
}

/// The block for `items` of the sprint status at `path`, and how many it carries: most
/// recent epic first; an item that does not fit in what is left is passed over for a
/// shorter one, and the items left out are counted on the last line.
fn render(path: &str, items: &[&ActionItem], verdicts: &[(String, String)]) -> (String, usize) {
    if items.is_empty() {
        return (String::new(), 0);
    }
    let mut text = format!(
        "\n## The team's retrospective\n\nOpen action items of the BMAD method's retrospectives ({}), quoted as written there: the team's commitments, not this task's requirements. Honour those that bear on this stage's work.\n",
        crate::code::inline(path)
    );
    for (doc, verdict) in verdicts {
        text.push_str(&format!(
            "Retrospective {}: verdict {verdict}.\n",
            crate::code::inline(doc)
        ));
    }
    let mut ordered = items.to_vec();
    ordered.sort_by_key(|i| std::cmp::Reverse(i.epic));
    // Room kept for the line that counts the items left out.
    let room = BLOCK_BUDGET.saturating_sub(40);
    let mut shown = 0;
    for item in &ordered {
        let line = line(item);
        if text.len() + line.len() > room {
            continue;
        }
        text.push_str(&line);
        shown += 1;
    }
    if shown == 0 {
        return (String::new(), 0);
    }
    if shown < ordered.len() {
        text.push_str(&format!(
            "({} more open in the file.)\n",
            ordered.len() - shown
        ));
    }
    (text, shown)
}

/// One item on one line, its words clipped and what cannot be seen escaped.
fn line(item: &ActionItem) -> String {
    let one = crate::bmad_method::one_line;
    let epic = item.epic.map(|e| format!("epic {e}, ")).unwrap_or_default();
    let owner = one(&item.owner, OWNER_CHARS).unwrap_or_else(|| "no owner".into());
    let action = one(&item.action, ACTION_CHARS).unwrap_or_default();
    format!(
        "- [{epic}owner: {owner}, {}] {action}\n",
        item.status.name()
    )
}

#[cfg(test)]
mod tests {
    use super::super::action_items::ItemStatus;
    use super::*;

    fn item(epic: u64, owner: &str, action: &str, status: ItemStatus) -> ActionItem {
        ActionItem {
            id: None,
            epic: Some(epic),
            action: action.into(),
            owner: owner.into(),
            status,
            reference: None,
        }
    }

    #[test]
    fn an_owner_naming_a_role_concerns_its_stages_and_any_other_every_stage() {
        assert!(concerns("Dev team", Stage::Dev));
        assert!(!concerns("Dev team", Stage::Po));
        assert!(concerns("Dev team", Stage::Bug), "the fix track's stage");
        assert!(concerns("QA / Test Architect", Stage::Architect));
        assert!(concerns("QA / Test Architect", Stage::Qa));
        assert!(!concerns("QA", Stage::Review));
        for stage in Stage::ALL {
            assert!(concerns("Charlie", stage), "{stage}");
            assert!(concerns("", stage), "{stage}");
        }
        assert!(!concerns("Product", Stage::Dev));
        assert!(concerns("Product", Stage::Spec));
        assert!(!concerns("developers", Stage::Review), "a word, not a part");
    }

    #[test]
    fn the_block_is_labelled_clipped_within_budget_and_empty_without_items() {
        assert_eq!(render("s.yaml", &[], &[]), (String::new(), 0));
        let long = "word ".repeat(200);
        let items = [
            item(1, "Dev team", "Validate\u{202e} input", ItemStatus::Open),
            item(2, "Ada", &long, ItemStatus::InProgress),
            item(1, "Bo", "Short one", ItemStatus::Open),
        ];
        let refs: Vec<&ActionItem> = items.iter().collect();
        let verdicts = [("out/epic-1-retro.md".to_string(), "accepted".to_string())];
        let (text, shown) = render("out/sprint-status.yaml", &refs, &verdicts);
        assert!(text.contains("## The team's retrospective"), "{text}");
        assert!(text.contains("not this task's requirements"), "{text}");
        assert!(text.contains("Retrospective `out/epic-1-retro.md`: verdict accepted."));
        assert!(text.contains("Validate\\u{202e} input"), "escaped: {text}");
        let epic2 = text.find("[epic 2, owner: Ada, in-progress]").unwrap();
        assert!(
            epic2 < text.find("[epic 1,").unwrap(),
            "the latest epic first"
        );
        assert_eq!(shown, 3);
        assert!(text.len() <= BLOCK_BUDGET, "{}", text.len());

        let many: Vec<ActionItem> = (0..20)
            .map(|n| {
                item(
                    1,
                    "Ada",
                    &format!("Action number {n} of the retrospective, said at some length"),
                    ItemStatus::Open,
                )
            })
            .collect();
        let refs: Vec<&ActionItem> = many.iter().collect();
        let (text, shown) = render("s.yaml", &refs, &[]);
        assert!(
            shown < 20 && text.len() <= BLOCK_BUDGET,
            "{} bytes",
            text.len()
        );
        assert!(
            text.ends_with(&format!("({} more open in the file.)\n", 20 - shown)),
            "{text}"
        );
    }

    #[test]
    fn a_prompt_recalls_the_open_items_of_its_stage_and_says_a_damaged_file() {
        let (dir, project) = crate::files::project::tests::project();
        let settings = MethodSettings {
            implementation_artifacts: Some("impl".into()),
            ..MethodSettings::default()
        };
        assert_eq!(block(&project, &settings, Stage::Dev), Recalled::default());
        std::fs::create_dir_all(dir.path().join("impl")).unwrap();
        std::fs::write(
            dir.path().join("impl/sprint-status.yaml"),
            "action_items:\n  - {epic: 1, action: Pin the toolchain, owner: Dev team, status: open}\n  - {epic: 1, action: Retired one, owner: Ada, status: done}\n",
        )
        .unwrap();
        let dev = block(&project, &settings, Stage::Dev);
        assert_eq!(dev.items, 1);
        assert!(dev.text.contains("Pin the toolchain") && !dev.text.contains("Retired one"));
        assert_eq!(
            block(&project, &settings, Stage::Po).text,
            "",
            "not the PO's"
        );
        std::fs::write(
            dir.path().join("impl/sprint-status.yaml"),
            "action_items: [",
        )
        .unwrap();
        let damaged = block(&project, &settings, Stage::Dev);
        assert_eq!(damaged.text, "");
        assert!(
            damaged.notices[0].contains("is damaged"),
            "{:?}",
            damaged.notices
        );
    }

    /// The sprint status's path and a retrospective's (folders of the install's config,
    /// files of the project) stay inside their quotes.
    #[test]
    fn the_paths_in_the_block_stay_quoted() {
        let forged = crate::code::FORGED;
        let open = item(1, "Dev", "Check the inputs", ItemStatus::Open);
        let verdicts = [(format!("{forged}/retro.md"), "good".to_string())];
        let (text, shown) = render(&format!("{forged}/sprint-status.yaml"), &[&open], &verdicts);
        assert_eq!(shown, 1);
        assert!(!crate::code::forged_in(&text), "{text}");
    }
}
