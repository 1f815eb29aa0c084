//! The templates the method's planning skills write their documents in, read from the
//! install: `bmad-prd`'s PRD template and `bmad-architecture`'s architecture spine, each
//! where the skill's `customize.toml` (under the team's and the person's overrides) says it
//! is. Their sections are what a document written in them is checked for, so that a PRD or
//! a spine the method wrote, unchanged, is judged by the method's own shape.
//!
//! A template's sections are its headings one level below its title; one the template
//! marks as optional (`*(optional)*`, "add when …", or a guide comment beginning "Only
//! when …", "Present when …", "… cut this section otherwise") is checked only for having
//! text when it is there. Where the template's shape sits in a fenced `markdown` block (the
//! PRD template, which surrounds it with notes on adapting it), that block is the shape.

use crate::workflow::sections::{self, Shaped};
use crate::workflow::Stage;

use super::{Install, Method};

/// The skill whose template a stage's document is written in, and the key of its
/// `customize.toml` that names the template's file (relative to the skill's folder).
pub fn skill_of(stage: Stage) -> Option<(&'static str, &'static str)> {
    match stage.id() {
        "po" => Some(("bmad-prd", "prd_template")),
        "architect" => Some(("bmad-architecture", "spine_template")),
        _ => None,
    }
}

/// Words that mark a template's section as one a document may leave out.
const OPTIONAL: &[&str] = &[
    "optional",
    "add when",
    "only when",
    "present when",
    "cut this section",
    "cut otherwise",
];

/// The sections of the template `stage`'s document is written in, as the install has it:
/// `None` without an install, a skill for the stage, or a template file with sections.
pub fn sections(method: &Method, stage: Stage) -> Option<Vec<Shaped>> {
    let (skill, key) = skill_of(stage)?;
    let install = method.install()?;
    let rel = template_path(method, install, skill, key)?;
    let mut notices = Vec::new();
    let text = super::read(method.project(), &rel, &mut notices)?;
    Some(shape(&text)).filter(|s| !s.is_empty())
}

/// Where the template of `skill` is, relative to the project: the value of `key` in its
/// `customize.toml` as the team and the person override it, beneath the skill's folder.
fn template_path(method: &Method, install: &Install, skill: &str, key: &str) -> Option<String> {
    let found = install.skills.iter().find(|s| s.name == skill)?;
    let dir = found.dir()?;
    let project = method.project();
    let mut notices = Vec::new();
    let mut merged = super::read_toml(project, &format!("{dir}/customize.toml"), &mut notices)?;
    for rel in [
        format!("_bmad/custom/{skill}.toml"),
        format!("_bmad/custom/{skill}.user.toml"),
    ] {
        if let Some(over) = super::read_toml(project, &rel, &mut notices) {
            super::customize::customize(&mut merged, over);
        }
    }
    let file = merged.get("workflow")?.get(key)?.as_str()?.trim();
    let file = file.trim_start_matches("./");
    // Only a file within the skill's own folder: a path that climbs out, or an absolute
    // one, is not followed.
    let within = !file.is_empty()
        && !file.starts_with('/')
        && !file
            .split('/')
            .any(|part| part == ".." || part.contains('{'));
    within.then(|| format!("{dir}/{file}"))
}

/// The template's own shape: the first fenced `markdown` block when it has one, else the
/// whole file.
fn shape_text(template: &str) -> &str {
    let mut offset = 0;
    let mut open: Option<usize> = None;
    for line in template.split_inclusive('\n') {
        let t = line.trim();
        match open {
            None if t == "```markdown" || t == "```md" => open = Some(offset + line.len()),
            Some(start) if t == "```" => return &template[start..offset],
            _ => {}
        }
        offset += line.len();
    }
    template
}

/// A line's heading level and text, for `#` to `######` followed by a space.
fn heading(line: &str) -> Option<(usize, &str)> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    let rest = &line[hashes..];
    ((1..=6).contains(&hashes) && rest.starts_with(' ')).then(|| (hashes, rest.trim()))
}

/// The sections of a template's text: its headings one level below the title (the first
/// heading of the highest level), outside fenced code and front matter, in order.
pub fn shape(template: &str) -> Vec<Shaped> {
    let lines: Vec<&str> = sections::outside_code(shape_text(template))
        .map(|(_, l)| l)
        .collect();
    let heads: Vec<(usize, usize, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| heading(l).map(|(level, text)| (i, level, text)))
        .collect();
    let Some(top) = heads.iter().map(|h| h.1).min() else {
        return Vec::new();
    };
    let Some(level) = heads.iter().map(|h| h.1).filter(|l| *l > top).min() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (n, (i, l, text)) in heads.iter().enumerate() {
        if *l != level {
            continue;
        }
        let end = heads.get(n + 1).map_or(lines.len(), |h| h.0);
        let guide: String = lines[i + 1..end]
            .iter()
            .map(|l| l.trim())
            .skip_while(|l| l.is_empty())
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase();
        let lower = text.to_lowercase();
        let optional = OPTIONAL
            .iter()
            .any(|w| lower.contains(w) || guide.contains(w));
        let name = strip_note(text);
        out.push(Shaped {
            key: sections::heading_key(&name),
            name,
            required: !optional,
        });
    }
    out
}

/// A template heading without the note it adds in italics (`*(add when …)*`).
fn strip_note(text: &str) -> String {
    match text.find("*(") {
        Some(at) => text[..at].trim().to_string(),
        None => text.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_shape_is_the_template_and_its_notes_mark_what_is_optional() {
        let prd = "# PRD Template\n\n## Essential Spine *(almost always present)*\n\n```markdown\n---\ntitle: x\n---\n\n# PRD: {Name}\n\n## 0. Document Purpose\n[what]\n\n## 2. Target User\n\n### 2.1 Jobs\n[jobs]\n\n## 5. Non-Goals (Explicit)\n[x]\n\n## 6. Extras *(add when needed)*\n[x]\n```\n\n## Adapt-In Menu\n- x\n";
        let got = shape(prd);
        let names: Vec<(&str, &str, bool)> = got
            .iter()
            .map(|s| (s.name.as_str(), s.key.as_str(), s.required))
            .collect();
        assert_eq!(
            names,
            [
                ("0. Document Purpose", "document purpose", true),
                ("2. Target User", "target user", true),
                ("5. Non-Goals (Explicit)", "non-goals", true),
                ("6. Extras", "extras", false),
            ]
        );
        let spine = "---\nname: x\n---\n\n# Architecture Spine — {name}\n\n<!-- guide -->\n\n## Design Paradigm\n\n<!-- Name the pattern. -->\n\n## Inherited Invariants\n\n<!-- Only when it inherits. Cut this section otherwise. -->\n\n### AD-1\n\n## Stack\n\n| a | b |\n";
        let got = shape(spine);
        let req: Vec<(&str, bool)> = got.iter().map(|s| (s.name.as_str(), s.required)).collect();
        assert_eq!(
            req,
            [
                ("Design Paradigm", true),
                ("Inherited Invariants", false),
                ("Stack", true)
            ]
        );
    }

    #[test]
    fn a_document_in_the_template_is_checked_for_its_sections() {
        let shaped =
            shape("# T\n## 1. Vision\nx\n## Later *(optional)*\nx\n## 7. Success Metrics\nx\n");
        let doc = "# PRD: Todo\n\n## 1. Vision\nA todo app.\n\n## 7. Success Metrics\n\n## Later\n";
        let found = sections::check_shaped(&shaped, doc);
        assert!(found.missing.is_empty(), "{found:?}");
        assert_eq!(found.empty, ["Later", "7. Success Metrics"]);
        let found = sections::check_shaped(&shaped, "# PRD\n## Vision\nx\n## Success metrics\ny\n");
        assert!(found.complete(), "{found:?}");
    }
}
