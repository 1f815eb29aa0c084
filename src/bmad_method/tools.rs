//! Where the BMAD method's installer (`bmad-method install --tools <id>`, v6) writes the
//! skills for each tool it knows: the facts `bmad-method install --list-tools` prints.

/// The skills folder of each tool id, as the installer's table has it.
pub const TOOLS: [(&str, &str); 48] = [
    ("claude-code", ".claude/skills"),
    ("codex", ".agents/skills"),
    ("cursor", ".agents/skills"),
    ("github-copilot", ".agents/skills"),
    ("adal", ".adal/skills"),
    ("antigravity-cli", ".agents/skills"),
    ("auggie", ".agents/skills"),
    ("goose", ".agents/skills"),
    ("cline", ".cline/skills"),
    ("codebuddy", ".codebuddy/skills"),
    ("codewhale", ".codewhale/skills"),
    ("command-code", ".agents/skills"),
    ("crush", ".agents/skills"),
    ("droid", ".factory/skills"),
    ("firebender", ".firebender/skills"),
    ("gemini", ".agents/skills"),
    ("antigravity", ".agent/skills"),
    ("grok", ".agents/skills"),
    ("hermes", ".agents/skills"),
    ("bob", ".bob/skills"),
    ("iflow", ".iflow/skills"),
    ("junie", ".junie/skills"),
    ("kilo", ".agents/skills"),
    ("kimi-code", ".agents/skills"),
    ("kiro", ".kiro/skills"),
    ("kode", ".kode/skills"),
    ("mistral-vibe", ".agents/skills"),
    ("mux", ".agents/skills"),
    ("neovate", ".neovate/skills"),
    ("ona", ".ona/skills"),
    ("openclaw", ".agents/skills"),
    ("opencode", ".agents/skills"),
    ("openhands", ".agents/skills"),
    ("pi", ".agents/skills"),
    ("pochi", ".agents/skills"),
    ("polytoken", ".agents/skills"),
    ("qoder", ".qoder/skills"),
    ("qwen", ".qwen/skills"),
    ("replit", ".agents/skills"),
    ("roo", ".agents/skills"),
    ("rovo-dev", ".agents/skills"),
    ("cortex", ".cortex/skills"),
    ("amp", ".agents/skills"),
    ("trae", ".trae/skills"),
    ("warp", ".agents/skills"),
    ("windsurf", ".agents/skills"),
    ("zcode", ".zcode/skills"),
    ("zencoder", ".zencoder/skills"),
];

/// The skills folder the installer uses for `tool`, if it is one it knows.
pub fn folder(tool: &str) -> Option<&'static str> {
    TOOLS.iter().find(|(id, _)| *id == tool).map(|(_, f)| *f)
}

/// Every skills folder of the table once, in the table's order.
pub fn all_folders() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (_, f) in TOOLS {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_skills_folder_is_a_read_only_area_of_the_project() {
        for folder in all_folders() {
            assert!(
                crate::files::project::BMAD_INSTALL_DIRS.contains(&folder),
                "{folder}"
            );
        }
        assert_eq!(folder("cursor"), Some(".agents/skills"));
        assert_eq!(folder("nope"), None);
    }
}
