//! The layer order of the crate's top-level modules, kept true by a test: a module may use
//! only the modules listed before it, so no import cycle can form between them.
//! ARCHITECTURE.md explains each layer.

/// Lowest first.
pub const LAYERS: [&str; 18] = [
    "code",
    "exit",
    "assistant",
    "workflow",
    "error",
    "files",
    "settings",
    "git",
    "lessons",
    "prompts",
    "store",
    "evidence",
    "act",
    "server",
    "stdio",
    "http",
    "dashboard",
    "terminal",
];

#[cfg(test)]
mod tests {
    use super::LAYERS;
    use std::path::{Path, PathBuf};

    fn rank(module: &str) -> Option<usize> {
        LAYERS.iter().position(|m| *m == module)
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The code of a file without its comments (a doc link is not a dependency).
    fn code_of(text: &str) -> String {
        text.lines()
            .map(|l| match l.find("//") {
                Some(i) if !l[..i].contains('"') => &l[..i],
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every top-level module `code` names through `crate::`, including each item of a
    /// `crate::{a, b::c}` group.
    fn uses(code: &str) -> Vec<String> {
        let mut found = Vec::new();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let mut item = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    if depth == 1 && c == ',' {
                        found.push(std::mem::take(&mut item));
                    } else {
                        item.push(c);
                    }
                }
                found.push(item);
            } else {
                found.push(rest.to_string());
            }
        }
        found
            .iter()
            .map(|item| {
                item.trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_module_uses_only_the_layers_below_it() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut wrong = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for file in &files {
            let rel = file.strip_prefix(&src).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            let module = first.to_str().unwrap().trim_end_matches(".rs");
            if matches!(module, "lib" | "main" | "layers") {
                continue;
            }
            let Some(own) = rank(module) else {
                wrong.push(format!(
                    "{}: module `{module}` is in no layer",
                    rel.display()
                ));
                continue;
            };
            seen.insert(module.to_string());
            let text = std::fs::read_to_string(file).unwrap();
            for used in uses(&code_of(&text)) {
                match rank(&used) {
                    Some(r) if r > own => wrong.push(format!(
                        "{}: `{module}` uses `{used}`, a layer above it",
                        rel.display()
                    )),
                    _ => {}
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        let listed: std::collections::BTreeSet<String> =
            LAYERS.iter().map(|m| m.to_string()).collect();
        assert_eq!(
            seen, listed,
            "every layer is a module and every module a layer"
        );
    }

    #[test]
    fn the_reader_sees_groups_and_ignores_comments() {
        let code = code_of(
            "use crate::{store::Store, files};\n// crate::server\nlet x = crate::code::clip;",
        );
        assert_eq!(uses(&code), ["store", "files", "code"]);
    }
}
