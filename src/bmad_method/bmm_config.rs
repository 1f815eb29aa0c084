//! The method's settings the server honours (v6): from `_bmad/bmm/config.yaml`, which the
//! method's own agents load, the human's name, the language to speak to them in, the
//! language of documents, the project's name and the folders of planning and implementation
//! documents; and the server's switches kept beside the method's overrides,
//! `[bmad-mcp] planning_copies` (the plan shared with the method: the copies, the epics, the
//! sprint status) and `review_layers` in `_bmad/custom/config.toml` (the team's) or
//! `_bmad/custom/config.user.toml` (the person's, which wins).

use std::collections::BTreeMap;

use crate::files::Project;

use super::customize::customize;

pub const MODULE_CONFIG: &str = "_bmad/bmm/config.yaml";
pub const TEAM_CONFIG: &str = "_bmad/custom/config.toml";
pub const PERSONAL_CONFIG: &str = "_bmad/custom/config.user.toml";

/// The longest setting value kept (a name or a language), in characters.
const MAX_VALUE_CHARS: usize = 80;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MethodSettings {
    pub user_name: Option<String>,
    pub communication_language: Option<String>,
    pub document_output_language: Option<String>,
    /// `planning_artifacts`, relative to the project; `None` when it is not set or lies
    /// outside the project.
    pub planning_artifacts: Option<String>,
    /// `implementation_artifacts` (by default `{output_folder}/implementation-artifacts`),
    /// relative to the project; `None` when it lies outside the project.
    pub implementation_artifacts: Option<String>,
    /// The method's `project_name`.
    pub project_name: Option<String>,
    /// Whether the review must give each of its layers a section of its own (on unless the
    /// team or the person turned it off).
    pub review_layers: bool,
    /// Whether the plan is shared with the method (on unless the team or the person turned
    /// it off): confirmed planning documents copied into `planning_artifacts`, an approved
    /// sprint plan written as its epics there, its stories' statuses kept in
    /// `{implementation_artifacts}/sprint-status.yaml`.
    pub planning_copies: bool,
}

/// `{project-root}/x/y` (or a relative `x/y`) as `x/y`; an absolute path, or one that
/// climbs out, is `None`.
pub fn in_project(v: &str) -> Option<String> {
    let rel = v
        .strip_prefix("{project-root}")
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(v)
        .trim_end_matches('/');
    let climbs = rel.split('/').any(|p| p == "..");
    let ok = !rel.is_empty() && !rel.starts_with('/') && !rel.contains('{') && !climbs;
    ok.then(|| rel.to_string())
}

/// `implementation_artifacts` as the method resolves it: the setting (its
/// `{output_folder}` expanded), else `{output_folder}/implementation-artifacts`, the
/// method's default; one outside the project is said and `None`.
fn implementation(
    map: &BTreeMap<String, serde_norway::Value>,
    notices: &mut Vec<String>,
) -> Option<String> {
    let output = map
        .get("output_folder")
        .and_then(|v| v.as_str())
        .unwrap_or("_bmad-output");
    let output = output.trim_end_matches('/');
    let value = match map.get("implementation_artifacts").and_then(|v| v.as_str()) {
        Some(v) => v.replace("{output_folder}", output),
        None => format!("{output}/implementation-artifacts"),
    };
    let rel = in_project(&value);
    if rel.is_none() {
        notices.push(format!("{MODULE_CONFIG}: `implementation_artifacts` is not a folder inside the project; the method's sprint status and retrospectives are not read."));
    }
    rel
}

/// The settings of the install in `project`; what cannot be read is said in `notices`.
pub fn read(project: &Project, notices: &mut Vec<String>) -> MethodSettings {
    let mut s = MethodSettings {
        planning_copies: true,
        review_layers: true,
        ..MethodSettings::default()
    };
    if let Some(text) = super::read(project, MODULE_CONFIG, notices) {
        match serde_norway::from_str::<BTreeMap<String, serde_norway::Value>>(&text) {
            Ok(map) => {
                let get = |k: &str| map.get(k).and_then(|v| v.as_str()).and_then(|v| super::one_line(v, MAX_VALUE_CHARS));
                s.user_name = get("user_name");
                s.communication_language = get("communication_language");
                s.document_output_language = get("document_output_language");
                let planning = map.get("planning_artifacts").and_then(|v| v.as_str());
                s.planning_artifacts = planning.and_then(in_project);
                if planning.is_some() && s.planning_artifacts.is_none() {
                    notices.push(format!("{MODULE_CONFIG}: `planning_artifacts` is not a folder inside the project; confirmed documents are not copied there."));
                }
                s.project_name = get("project_name");
                s.implementation_artifacts = implementation(&map, notices);
            }
            Err(e) => notices.push(format!(
                "{MODULE_CONFIG} is not YAML the server can read ({}); the method's settings are not used.",
                crate::code::clip(&e.to_string(), 200)
            )),
        }
    }
    let mut ours = toml::Table::new();
    for rel in [TEAM_CONFIG, PERSONAL_CONFIG] {
        if let Some(t) = super::read_toml(project, rel, notices) {
            customize(&mut ours, t);
        }
    }
    let switch = |key: &str| {
        ours.get("bmad-mcp")
            .and_then(|t| t.get(key))
            .and_then(|v| v.as_bool())
    };
    if let Some(on) = switch("planning_copies") {
        s.planning_copies = on;
    }
    if let Some(on) = switch("review_layers") {
        s.review_layers = on;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_review_layers_are_required_until_the_team_or_the_person_turns_them_off() {
        let (dir, project) = crate::files::project::tests::project();
        let write = |rel: &str, text: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            MODULE_CONFIG,
            "output_folder: '{project-root}/_bmad-output'\n",
        );
        let mut notices = Vec::new();
        let s = read(&project, &mut notices);
        assert!(s.review_layers && notices.is_empty(), "{notices:?}");
        assert_eq!(
            s.implementation_artifacts.as_deref(),
            Some("_bmad-output/implementation-artifacts")
        );
        write(TEAM_CONFIG, "[bmad-mcp]\nreview_layers = false\n");
        assert!(!read(&project, &mut notices).review_layers);
        write(PERSONAL_CONFIG, "[bmad-mcp]\nreview_layers = true\n");
        assert!(
            read(&project, &mut notices).review_layers,
            "the person's wins"
        );
    }

    #[test]
    fn a_folder_of_the_project_is_kept_and_one_outside_is_not() {
        assert_eq!(
            in_project("{project-root}/_bmad-output/planning-artifacts").as_deref(),
            Some("_bmad-output/planning-artifacts")
        );
        assert_eq!(in_project("docs/plans/").as_deref(), Some("docs/plans"));
        for outside in ["/etc", "{project-root}/../x", "{output_folder}/x", ""] {
            assert_eq!(in_project(outside), None, "{outside}");
        }
        let map = |yaml: &str| {
            serde_norway::from_str::<BTreeMap<String, serde_norway::Value>>(yaml).unwrap()
        };
        let mut notices = Vec::new();
        for (yaml, want) in [
            (
                "implementation_artifacts: '{project-root}/out/impl'",
                Some("out/impl"),
            ),
            (
                "output_folder: '{project-root}/docs'",
                Some("docs/implementation-artifacts"),
            ),
            (
                "output_folder: build\nimplementation_artifacts: '{output_folder}/i'",
                Some("build/i"),
            ),
            (
                "user_name: Ada",
                Some("_bmad-output/implementation-artifacts"),
            ),
            ("implementation_artifacts: /srv/impl", None),
        ] {
            assert_eq!(
                implementation(&map(yaml), &mut notices).as_deref(),
                want,
                "{yaml}"
            );
        }
        assert_eq!(notices.len(), 1, "the folder outside is said: {notices:?}");
        assert_eq!(
            super::super::one_line(" Fran\nçais ", MAX_VALUE_CHARS),
            Some("Fran çais".into())
        );
        assert_eq!(
            super::super::one_line("Ana\u{202e}\u{2028}Lima", 80),
            Some("Ana\\u{202e} Lima".into())
        );
    }
}
