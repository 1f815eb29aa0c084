//! The engines: the models that write a stage's document on the server's behalf. The
//! server never calls one itself; the host runs them and submits what they wrote.
//!
//! * `claude` is the host's own model: the assistant the user talks to. Every session
//!   runs it, and its reply is submitted as `claude_result`.
//! * `codex` is a second, independent model that the host can reach, for instance Codex
//!   through a Codex MCP server. It gets the same role prompt, never sees the host's
//!   draft, and its reply is submitted as `codex_result`. A host that has none runs
//!   claude alone: it never writes a draft in the second model's name.
//!
//! A session's engines are fixed at `start`: the host's `engines` list when it gives one,
//! else `claude` and `codex` when the objective names codex as a word, else `claude`.
//! Which of them writes each stage is the stage table's (`Stage::engines`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A model engine the host runs on the server's behalf.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// The host's own model.
    Claude,
    /// A second, independent model (for instance through a Codex MCP server).
    Codex,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Claude, Engine::Codex];

    /// The host's own model: the one every session runs, first in its list.
    pub const HOST: Engine = Engine::Claude;

    /// The engine other than this one.
    pub fn other(self) -> Engine {
        match self {
            Engine::Claude => Engine::Codex,
            Engine::Codex => Engine::Claude,
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Engine::Claude => "claude",
            Engine::Codex => "codex",
        }
    }

    /// The `submit` field that carries this engine's result.
    pub fn result_field(self) -> &'static str {
        match self {
            Engine::Claude => "claude_result",
            Engine::Codex => "codex_result",
        }
    }

    /// What the engine is, for a host that has to decide whether it has it.
    pub fn what(self) -> &'static str {
        match self {
            Engine::Claude => "the host's own model",
            Engine::Codex => {
                "a second, independent model, for instance Codex through a Codex MCP server"
            }
        }
    }

    /// The engine named `name` (case and surrounding blanks do not matter).
    pub fn parse(name: &str) -> Option<Engine> {
        let name = name.trim();
        Engine::ALL
            .into_iter()
            .find(|e| e.id().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// The engines of a new session: the host's list when it gave one (already checked by
/// [`check_list`]), else the objective's word.
pub fn for_start(objective: &str, given: Option<&[Engine]>) -> Vec<Engine> {
    match given {
        Some(list) => list.to_vec(),
        None if objective_wants_codex(objective) => vec![Engine::Claude, Engine::Codex],
        None => vec![Engine::HOST],
    }
}

/// Reads the `engines` a host gave at `start`: known names, each once, the host's own
/// model first, and every engine the stage table gives a stage to alone (`required`).
/// The error says what is wrong and what to send instead.
pub fn check_list(names: &[String], required: &[Engine]) -> Result<Vec<Engine>, String> {
    const FORMS: &str =
        "[\"claude\"] (the host's model alone) or [\"claude\", \"codex\"] (with a second model)";
    if names.is_empty() {
        return Err(format!("the list is empty; send {FORMS}"));
    }
    let mut engines = Vec::with_capacity(names.len());
    for name in names {
        let Some(engine) = Engine::parse(name) else {
            let known: Vec<String> = Engine::ALL.iter().map(|e| format!("`{e}`")).collect();
            return Err(format!(
                "`{}` is not an engine; the engines are {}",
                crate::code::clip(name, 40),
                known.join(" and ")
            ));
        };
        if engines.contains(&engine) {
            return Err(format!("`{engine}` is listed twice; name each engine once"));
        }
        engines.push(engine);
    }
    if let Some(missing) = required.iter().find(|e| !engines.contains(e)) {
        return Err(format!(
            "`{missing}` ({}) is missing: every session runs it; send {FORMS}",
            missing.what()
        ));
    }
    if engines[0] != Engine::HOST {
        return Err(format!(
            "`{}` ({}) must come first; send {FORMS}",
            Engine::HOST,
            Engine::HOST.what()
        ));
    }
    Ok(engines)
}

/// Whether an objective asks for the second engine: it names `codex` as a word.
/// A neighbouring CJK character counts as a boundary, so `使用codex` asks for codex too.
pub fn objective_wants_codex(objective: &str) -> bool {
    let lower = objective.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    lower.match_indices("codex").any(|(i, m)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + m.len()).copied();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn codex_is_recognised_only_as_a_word() {
        assert!(objective_wants_codex("Build a CLI with codex"));
        assert!(objective_wants_codex("使用 codex 构建登录"));
        assert!(objective_wants_codex("Codex: build it"));
        assert!(objective_wants_codex("使用codex开发"));
        assert!(!objective_wants_codex("Build a codexample parser"));
        assert!(!objective_wants_codex("Build a todo app"));
    }

    #[test]
    fn a_given_list_overrides_the_objective() {
        let objective = "Rename the Codex class";
        assert_eq!(
            for_start(objective, None),
            [Engine::Claude, Engine::Codex],
            "the old rule still applies when no list is given"
        );
        assert_eq!(
            for_start(objective, Some(&[Engine::Claude])),
            [Engine::Claude]
        );
        assert_eq!(
            for_start("Build a todo app", Some(&[Engine::Claude, Engine::Codex])),
            [Engine::Claude, Engine::Codex]
        );
        assert_eq!(for_start("Build a todo app", None), [Engine::Claude]);
    }

    #[test]
    fn lists_are_checked_with_messages_that_say_what_to_send() {
        let required = [Engine::Claude];
        assert_eq!(
            check_list(&names(&["claude"]), &required),
            Ok(vec![Engine::Claude])
        );
        assert_eq!(
            check_list(&names(&[" Claude ", "CODEX"]), &required),
            Ok(vec![Engine::Claude, Engine::Codex])
        );
        for (list, says) in [
            (vec![], "empty"),
            (vec!["claude", "gpt"], "`gpt` is not an engine"),
            (vec!["claude", "claude"], "listed twice"),
            (vec!["codex"], "`claude` (the host's own model) is missing"),
            (vec!["codex", "claude"], "must come first"),
        ] {
            let e = check_list(&names(&list), &required).unwrap_err();
            assert!(e.contains(says), "{list:?}: {e}");
        }
        let long = "x".repeat(500);
        let e = check_list(&names(&["claude", &long]), &required).unwrap_err();
        assert!(e.len() < 200, "the caller's text is cut: {e}");
    }

    #[test]
    fn ids_parse_and_serialize_alike() {
        for e in Engine::ALL {
            assert_eq!(Engine::parse(e.id()), Some(e));
            assert_eq!(serde_json::to_value(e).unwrap(), e.id());
            assert_eq!(e.other().other(), e);
        }
        assert_eq!(Engine::parse("gemini"), None);
    }
}
