//! The method's own record of an install (v6): `_bmad/_config/manifest.yaml` (the version,
//! the modules, the tools it was installed for) and `_bmad/_config/skill-manifest.csv`
//! (every skill: its id, name, description and module). Read as data, never as text to
//! show whole.

use serde::Deserialize;

/// Where the installer keeps its manifests, relative to the project.
pub const MANIFEST: &str = "_bmad/_config/manifest.yaml";
pub const SKILL_MANIFEST: &str = "_bmad/_config/skill-manifest.csv";

/// What `manifest.yaml` says, in the parts the server uses.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Manifest {
    #[serde(default)]
    pub installation: Installation,
    #[serde(default)]
    pub modules: Vec<Module>,
    /// The tools (the installer's `--tools` ids) the skills were installed for.
    #[serde(default)]
    pub ides: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Installation {
    #[serde(default)]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Module {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
}

/// `manifest.yaml`'s text as data, or why it is not.
pub fn parse_manifest(text: &str) -> Result<Manifest, String> {
    serde_norway::from_str(text).map_err(|e| e.to_string())
}

/// One row of `skill-manifest.csv`.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    #[serde(rename = "canonicalId")]
    pub canonical_id: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub module: String,
}

/// The rows of `skill-manifest.csv`, at most `limit`, or why it cannot be read.
pub fn parse_skills(text: &str, limit: usize) -> Result<Vec<Row>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for row in reader.deserialize::<Row>().take(limit) {
        rows.push(row.map_err(|e| e.to_string())?);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_and_a_skill_list_as_data_and_a_damaged_one_said() {
        let m = parse_manifest(
            "installation:\n  version: 6.12.0\nmodules:\n  - name: core\n    version: 6.12.0\nides:\n  - codex\n",
        )
        .unwrap();
        assert_eq!(m.installation.version.as_deref(), Some("6.12.0"));
        assert_eq!(m.ides, ["codex"]);
        assert_eq!(m.modules[0].name, "core");
        assert!(parse_manifest("ides: [unclosed").is_err());

        let rows = parse_skills(
            "canonicalId,name,description,module,path\n\"bmad-prd\",\"bmad-prd\",\"Create a PRD, \"\"well\"\"\",\"bmm\",\"x\"\n",
            10,
        )
        .unwrap();
        assert_eq!(rows[0].name, "bmad-prd");
        assert_eq!(rows[0].description, "Create a PRD, \"well\"");
        assert!(parse_skills("canonicalId,name\n\"a\n", 10).is_err());
    }
}
