//! The shape of the source, as data and the tests that keep it: the layer order of the
//! crate's top-level modules (a module may use only the modules listed before it, so no
//! import cycle can form between them), no import cycle between the files of one folder,
//! no function longer than [`MAX_FN_LINES`], a `//!` opening every file, and every regular
//! expression declared as a `workflow::patterns::Pattern` that is listed to be checked at
//! start.
//! ARCHITECTURE.md explains each layer.

/// Lowest first.
pub const LAYERS: [&str; 24] = [
    "code",
    "hosts",
    "fault",
    "exit",
    "process_origin",
    "workflow",
    "error",
    "files",
    "settings",
    "git",
    "lessons",
    "bmad_method",
    "prompts",
    "store",
    "policy",
    "act",
    "night",
    "server",
    "jsonrpc",
    "stdio",
    "http",
    "dashboard",
    "terminal",
    "setup",
];

/// The most lines a function may take, from its `fn` to its closing brace: one a reader
/// holds in view. A function whose body is one `match` of one-line arms (a table) is
/// exempt.
pub const MAX_FN_LINES: usize = 80;

/// The most lines of shipped code outside `src/workflow/` that may name a variant of
/// `Stage` or `State` (`Stage::Review`, `State::Completed`): each is a question about the
/// workflow asked by hand above the core, which the stage table, the rules, the session's
/// accessors or a change's record could answer. A ratchet: lower it when a line goes,
/// never raise it (57 when it was set; 69 before the change's record).
pub const MAX_VARIANT_LINES_ABOVE_CORE: usize = 57;

#[cfg(test)]
mod tests {
    use super::{LAYERS, MAX_FN_LINES, MAX_VARIANT_LINES_ABOVE_CORE};
    use std::collections::{BTreeMap, BTreeSet};
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

    /// Every source file: its path relative to `src/`, and its text.
    fn sources() -> Vec<(PathBuf, String)> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        files.sort();
        files
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                (f.strip_prefix(&src).unwrap().to_path_buf(), text)
            })
            .collect()
    }

    /// The code of a file with its comments, strings and character literals blanked out
    /// (a doc link or a message is not a dependency, a brace in a string opens no
    /// block), every line kept where it was.
    fn code_of(text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len());
        let blank = |out: &mut String, span: &[char]| {
            out.extend(span.iter().map(|c| if *c == '\n' { '\n' } else { ' ' }))
        };
        let mut i = 0;
        while i < chars.len() {
            let end = literal_end(&chars, i);
            if end > i {
                blank(&mut out, &chars[i..end]);
                i = end;
            } else {
                out.push(chars[i]);
                i += 1;
            }
        }
        out
    }

    /// Where the comment, string or character literal starting at `i` ends (`i` when none
    /// starts there).
    fn literal_end(c: &[char], i: usize) -> usize {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        let after_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if at(i) == '/' && at(i + 1) == '/' {
            return (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
        }
        if at(i) == '/' && at(i + 1) == '*' {
            let (mut depth, mut k) = (0, i);
            while k < c.len() {
                if at(k) == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if at(k) == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        return k;
                    }
                } else {
                    k += 1;
                }
            }
            return c.len();
        }
        // A raw string: r"…", r#"…"#, br"…".
        let r = if at(i) == 'b' && at(i + 1) == 'r' {
            i + 1
        } else {
            i
        };
        if !after_ident && at(r) == 'r' && (at(r + 1) == '"' || at(r + 1) == '#') {
            let hashes = (r + 1..c.len()).take_while(|&k| c[k] == '#').count();
            if at(r + 1 + hashes) == '"' {
                let mut k = r + 2 + hashes;
                while k < c.len() {
                    if c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#') {
                        return k + 1 + hashes;
                    }
                    k += 1;
                }
                return c.len();
            }
        }
        let q = if at(i) == 'b' && !after_ident && matches!(at(i + 1), '"' | '\'') {
            i + 1
        } else {
            i
        };
        if at(q) == '"' {
            let mut k = q + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            return (k + 1).min(c.len());
        }
        // A character literal, not a lifetime: 'x', '\n', '\u{1F600}'.
        if at(q) == '\'' {
            if at(q + 1) == '\\' {
                let close = (q + 2..c.len().min(q + 12)).find(|&k| c[k] == '\'');
                return close.map_or(i, |k| k + 1);
            }
            if at(q + 2) == '\'' {
                return q + 3;
            }
        }
        i
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
        let mut wrong = Vec::new();
        let mut seen = BTreeSet::new();
        for (rel, text) in sources() {
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
        let listed: BTreeSet<String> = LAYERS.iter().map(|m| m.to_string()).collect();
        assert_eq!(
            seen, listed,
            "every layer is a module and every module a layer"
        );
    }

    #[test]
    fn every_file_opens_with_its_concern() {
        let silent: Vec<String> = sources()
            .into_iter()
            .filter(|(_, text)| !text.starts_with("//!"))
            .map(|(rel, _)| format!("src/{}", rel.display()))
            .collect();
        assert!(
            silent.is_empty(),
            "each file's first line is a `//!` naming its one concern: {silent:?}"
        );
    }

    /// A pattern compiled anywhere but through `workflow::patterns` would escape the check
    /// at start, and a `Pattern` missing from its list too.
    #[test]
    fn every_pattern_is_declared_and_listed_for_the_check_at_start() {
        let mut declared = Vec::new();
        for (file, text) in sources() {
            let shipped = code_of(text.split("#[cfg(test)]").next().unwrap());
            if file != Path::new("workflow/patterns.rs") {
                for word in ["Regex::new", "RegexBuilder", "RegexSet"] {
                    assert!(
                        !shipped.contains(word),
                        "src/{} uses {word}: declare a `workflow::patterns::Pattern` and list it in `workflow::PATTERNS`, so that it is compiled at start",
                        file.display()
                    );
                }
            }
            for rest in shipped.split("static ").skip(1) {
                if let Some((name, _)) = rest.split_once(": Pattern =") {
                    if !name.contains(char::is_whitespace) {
                        declared.push(name.to_string());
                    }
                }
            }
        }
        let mut listed: Vec<String> = crate::workflow::PATTERNS
            .iter()
            .map(|p| p.name().rsplit("::").next().unwrap().to_string())
            .collect();
        declared.sort();
        listed.sort();
        assert_eq!(
            declared, listed,
            "the `Pattern` statics and `workflow::PATTERNS`"
        );
    }

    #[test]
    fn the_reader_sees_groups_and_ignores_comments() {
        let code = code_of(
            "use crate::{store::Store, files};\n// crate::server\nlet x = crate::code::clip;",
        );
        assert_eq!(uses(&code), ["store", "files", "code"]);
    }

    #[test]
    fn the_reader_blanks_strings_and_keeps_lifetimes() {
        let code = code_of("f(\"crate::a {\", r#\"}\"#, '{', b'}');\nfn g<'a>(x: &'a str) {}");
        assert_eq!(code.lines().count(), 2);
        assert!(!code.contains("crate::a"), "{code}");
        assert_eq!(code.matches(['{', '}']).count(), 2, "{code}");
        assert!(code.contains("<'a>(x: &'a str)"), "{code}");
    }

    /// A function: its name, the line of its `fn`, how many lines it takes from there to
    /// its closing brace, and whether its body is a table (one `match` of one-line arms).
    struct Function {
        name: String,
        line: usize,
        lines: usize,
        table: bool,
    }

    fn is_ident(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }

    /// Where the brace opened at `open` closes.
    fn closing(code: &[u8], open: usize) -> usize {
        let mut depth = 0;
        for (k, b) in code.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return k;
                    }
                }
                _ => {}
            }
        }
        code.len()
    }

    /// Every function with a body in `code` (as [`code_of`] leaves it), nested ones
    /// included.
    fn functions(code: &str) -> Vec<Function> {
        let b = code.as_bytes();
        let mut found = Vec::new();
        let mut i = 0;
        while let Some(k) = code[i..].find("fn ") {
            let at = i + k;
            i = at + 3;
            if at > 0 && is_ident(b[at - 1]) {
                continue;
            }
            let name: String = code[i..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if name.is_empty() {
                continue;
            }
            // The body opens at the first `{` outside the signature's parentheses and
            // brackets; a `;` there first ends a declaration without one.
            let mut depth = 0i32;
            let mut open = None;
            for (k, c) in b.iter().enumerate().skip(i) {
                match c {
                    b'(' | b'[' => depth += 1,
                    b')' | b']' => depth -= 1,
                    b'{' if depth == 0 => {
                        open = Some(k);
                        break;
                    }
                    b';' if depth == 0 => break,
                    _ => {}
                }
            }
            let Some(open) = open else { continue };
            let close = closing(b, open);
            let line = code[..at].matches('\n').count() + 1;
            found.push(Function {
                name,
                line,
                lines: code[at..close].matches('\n').count() + 1,
                table: is_table(&code[open + 1..close]),
            });
        }
        found
    }

    /// Whether a function's body is one `match` whose arms each take one line.
    fn is_table(body: &str) -> bool {
        let body = body.trim();
        let Some(open) = body.find('{') else {
            return false;
        };
        body.starts_with("match ")
            && closing(body.as_bytes(), open) == body.len() - 1
            && body[open + 1..body.len() - 1]
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| l.contains("=>") && l.trim_end().ends_with(','))
    }

    #[test]
    fn no_function_is_longer_than_the_limit() {
        let mut long = Vec::new();
        for (rel, text) in sources() {
            let file = rel.to_str().unwrap().replace('\\', "/");
            for f in functions(&code_of(&text)) {
                if f.lines <= MAX_FN_LINES || f.table {
                    continue;
                }
                long.push(format!(
                    "src/{file}:{} `fn {}` takes {} lines",
                    f.line, f.name, f.lines
                ));
            }
        }
        assert!(
            long.is_empty(),
            "over {MAX_FN_LINES} lines: split each into named steps\n{}",
            long.join("\n")
        );
    }

    #[test]
    fn the_reader_measures_functions_and_knows_a_table() {
        let code = code_of(
            "trait T { fn declared(&self); }\nfn table(s: S) -> &'static str {\n    match s {\n        S::A => \"a\",\n        S::B => \"{\",\n    }\n}\nfn body(x: [u8; 2]) {\n    let y = match x {\n        _ => 1,\n    };\n}\n",
        );
        let found: Vec<(String, usize, usize, bool)> = functions(&code)
            .into_iter()
            .map(|f| (f.name, f.line, f.lines, f.table))
            .collect();
        assert_eq!(
            found,
            [
                ("table".to_string(), 2, 6, true),
                ("body".to_string(), 8, 5, false)
            ]
        );
    }

    /// A module's path below the crate: `store/list.rs` is `store::list`, `store/mod.rs`
    /// is `store`.
    fn module_of(rel: &Path) -> Vec<String> {
        let mut path: Vec<String> = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_string())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        path
    }

    /// The paths of a `use` tree (or of a path in code) that starts at `i`: `a::{b, c::d
    /// as e}` gives `a::b` named `b` and `a::c::d` named `e`.
    fn tree(code: &str, i: &mut usize) -> Vec<(Vec<String>, String)> {
        let b = code.as_bytes();
        let skip_space = |i: &mut usize| {
            while *i < b.len() && b[*i].is_ascii_whitespace() {
                *i += 1;
            }
        };
        let mut segs: Vec<String> = Vec::new();
        loop {
            skip_space(i);
            if b.get(*i) == Some(&b'{') {
                *i += 1;
                let mut out = Vec::new();
                loop {
                    for (tail, name) in tree(code, i) {
                        out.push(([segs.clone(), tail].concat(), name));
                    }
                    skip_space(i);
                    match b.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return out;
                        }
                        _ => return out,
                    }
                }
            }
            let start = *i;
            while *i < b.len() && is_ident(b[*i]) {
                *i += 1;
            }
            if start == *i {
                break;
            }
            segs.push(code[start..*i].to_string());
            if code[*i..].starts_with("::") {
                *i += 2;
                continue;
            }
            let mut j = *i;
            skip_space(&mut j);
            if let Some(alias) = code[j..].strip_prefix("as ") {
                let alias: String = alias
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                *i = j + 3;
                skip_space(i);
                *i += alias.len();
                return vec![(segs, alias)];
            }
            break;
        }
        let name = segs.last().cloned().unwrap_or_default();
        vec![(segs, name)]
    }

    /// The non-test code of each module, and what each re-exports (`pub use`): by module
    /// and name, the path it names.
    struct Crate {
        code: BTreeMap<Vec<String>, String>,
        reexports: BTreeMap<(Vec<String>, String), Vec<String>>,
    }

    impl Crate {
        fn read() -> Crate {
            let mut code = BTreeMap::new();
            let mut reexports = BTreeMap::new();
            for (rel, text) in sources() {
                let module = module_of(&rel);
                // Tests sit at a file's end (or in a `*_tests.rs` file of their own); what
                // a test uses is no dependency of the code.
                let mut c = code_of(&text);
                if module.last().is_some_and(|m| m.ends_with("_tests")) {
                    continue;
                }
                if let Some(cut) = c.find("#[cfg(test)]") {
                    c.truncate(cut);
                }
                let mut from = 0;
                while let Some(k) = c[from..].find("use ") {
                    let at = from + k;
                    from = at + 4;
                    let before = c[..at].trim_end();
                    let before = match before.strip_suffix(')') {
                        Some(b) => b.rsplit_once('(').map_or(b, |(v, _)| v).trim_end(),
                        None => before,
                    };
                    let word_start = at == 0 || !is_ident(c.as_bytes()[at - 1]);
                    if !word_start || !before.ends_with("pub") {
                        continue;
                    }
                    let mut i = from;
                    for (path, name) in tree(&c, &mut i) {
                        reexports.insert((module.clone(), name), path);
                    }
                }
                code.insert(module, c);
            }
            Crate { code, reexports }
        }

        /// The module a path written in `module` names an item of (or is): `super::`,
        /// `self::` and `crate::` taken, re-exports followed to where the item lives.
        fn resolve(&self, module: &[String], path: &[String], hops: usize) -> Vec<String> {
            let mut cur = module.to_vec();
            let mut rest = path;
            match rest.first().map(String::as_str) {
                Some("crate") => {
                    cur.clear();
                    rest = &rest[1..];
                }
                Some("self") => rest = &rest[1..],
                _ => {}
            }
            while rest.first().is_some_and(|s| s == "super") {
                cur.pop();
                rest = &rest[1..];
            }
            for (k, seg) in rest.iter().enumerate() {
                let mut deeper = cur.clone();
                deeper.push(seg.clone());
                if self.code.contains_key(&deeper) {
                    cur = deeper;
                    continue;
                }
                if let Some(to) = self.reexports.get(&(cur.clone(), seg.clone())) {
                    if hops < 8 {
                        let mut to = to.clone();
                        to.extend(rest[k + 1..].iter().cloned());
                        return self.resolve(&cur, &to, hops + 1);
                    }
                }
                break;
            }
            cur
        }

        /// Within each folder, which of its files (a subfolder counts as one) use which:
        /// by folder, from file to files. A folder's own file (`mod.rs`) is the folder's,
        /// so its uses and its children's uses of it are no edges between siblings.
        fn sibling_uses(&self) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
            let mut folders: BTreeMap<_, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
            for (module, code) in &self.code {
                let mut from = 0;
                while let Some(k) = code[from..].find("::") {
                    let colons = from + k;
                    from = colons + 2;
                    let start = code[..colons]
                        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .map_or(0, |s| s + 1);
                    let head = &code[start..colons];
                    let led = start == 0 || !code[..start].ends_with("::");
                    if !led || !matches!(head, "super" | "self" | "crate") {
                        continue;
                    }
                    let mut i = start;
                    for (path, _) in tree(code, &mut i) {
                        let target = self.resolve(module, &path, 0);
                        let shared = module.iter().zip(&target).take_while(|(a, b)| a == b);
                        let depth = shared.count();
                        if depth == 0 || depth == module.len() || depth == target.len() {
                            continue;
                        }
                        folders
                            .entry(module[..depth].to_vec())
                            .or_default()
                            .entry(module[depth].clone())
                            .or_default()
                            .insert(target[depth].clone());
                    }
                }
            }
            folders
        }
    }

    /// The groups of files in `uses` that reach each other (strongly connected, more than
    /// one file), each sorted.
    fn cycles(uses: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![from.clone()];
            while let Some(n) = todo.pop() {
                for m in uses.get(&n).into_iter().flatten() {
                    if seen.insert(m.clone()) {
                        todo.push(m.clone());
                    }
                }
            }
            seen
        };
        let reached: BTreeMap<&String, BTreeSet<String>> =
            uses.keys().map(|n| (n, reach(n))).collect();
        let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
        for (n, from_n) in &reached {
            if !from_n.contains(*n) {
                continue;
            }
            let group: Vec<String> = from_n
                .iter()
                .filter(|m| reached.get(m).is_some_and(|r| r.contains(*n)))
                .cloned()
                .collect();
            groups.insert(group);
        }
        groups.into_iter().collect()
    }

    #[test]
    fn no_folder_has_an_import_cycle_between_its_files() {
        let krate = Crate::read();
        let mut found = Vec::new();
        for (folder, uses) in krate.sibling_uses() {
            for group in cycles(&uses) {
                let folder = folder.join("::");
                let edges: Vec<String> = group
                    .iter()
                    .map(|a| {
                        let to: Vec<&str> = uses[a]
                            .iter()
                            .filter(|b| group.contains(b))
                            .map(String::as_str)
                            .collect();
                        format!("{a} uses {}", to.join(", "))
                    })
                    .collect();
                found.push(format!("{folder}: {}", edges.join("; ")));
            }
        }
        assert!(
            found.is_empty(),
            "files of one folder use each other (move what they share to where it belongs):\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn the_reader_follows_paths_and_reexports() {
        let mut i = 0;
        let code = "super::{a::B, c::{self, D as E}}";
        let paths: Vec<String> = tree(code, &mut i)
            .into_iter()
            .map(|(p, n)| format!("{} {n}", p.join("::")))
            .collect();
        assert_eq!(
            paths,
            ["super::a::B B", "super::c::self self", "super::c::D E"]
        );
        let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
        let krate = Crate {
            code: [m("w"), m("w::a"), m("w::b"), m("w::c")]
                .into_iter()
                .map(|k| (k, String::new()))
                .collect(),
            reexports: [((m("w"), "B".to_string()), m("b::B"))]
                .into_iter()
                .collect(),
        };
        assert_eq!(krate.resolve(&m("w::a"), &m("super::B"), 0), m("w::b"));
        assert_eq!(
            krate.resolve(&m("w::a"), &m("crate::w::c::f"), 0),
            m("w::c")
        );
        assert_eq!(krate.resolve(&m("w::a"), &m("super::g"), 0), m("w"));
        let uses: BTreeMap<String, BTreeSet<String>> = [
            ("a", vec!["b"]),
            ("b", vec!["c"]),
            ("c", vec!["a"]),
            ("d", vec!["a"]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
        assert_eq!(cycles(&uses), [["a", "b", "c"]]);
    }

    /// The part of a file that ships: all of it but its test module (from the
    /// `#[cfg(test)]` that opens a `mod`); nothing of a file of tests (`*_tests.rs`).
    fn shipped<'a>(rel: &Path, text: &'a str) -> &'a str {
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with("_tests.rs") {
            return "";
        }
        let mut from = 0;
        while let Some(k) = text[from..].find("#[cfg(test)]") {
            let at = from + k;
            from = at + "#[cfg(test)]".len();
            let mut rest = text[from..].trim_start();
            // Attributes between it and the item (`#[path = …]`).
            while rest.starts_with("#[") {
                let Some(end) = rest.find(']') else { break };
                rest = rest[end + 1..].trim_start();
            }
            if rest.starts_with("mod ") || rest.starts_with("pub mod ") {
                return &text[..at];
            }
        }
        text
    }

    /// Each file above the core (outside `src/workflow/`, and not this file), with its
    /// shipped code as [`code_of`] leaves it and its shipped text as written.
    fn above_the_core() -> Vec<(PathBuf, String, String)> {
        sources()
            .into_iter()
            .filter(|(rel, _)| !rel.starts_with("workflow") && rel != Path::new("layers.rs"))
            .map(|(rel, text)| {
                let kept = shipped(&rel, &text).to_string();
                (rel, code_of(&kept), kept)
            })
            .collect()
    }

    /// Where `word` occurs in `code` as an identifier of its own (no identifier character
    /// on either side).
    fn word_at(code: &str, word: &str) -> Vec<usize> {
        let b = code.as_bytes();
        code.match_indices(word)
            .map(|(at, _)| at)
            .filter(|&at| at == 0 || !is_ident(b[at - 1]))
            .filter(|&at| b.get(at + word.len()).is_none_or(|c| !is_ident(*c)))
            .collect()
    }

    /// The history a session keeps is read in the core only: above it, shipped code names
    /// no `history` but the core's module (`workflow::history::…`), and no key
    /// `"history"`; what a change did is its record (`workflow::Effects`), and every other
    /// question of the history is one of `Session`'s accessors (`workflow/history.rs`).
    #[test]
    fn a_sessions_history_is_read_in_the_core_only() {
        let mut found = Vec::new();
        for (rel, code, text) in above_the_core() {
            for at in word_at(&code, "history") {
                if code[at..].starts_with("history::") {
                    continue;
                }
                let line = code[..at].matches('\n').count() + 1;
                let said = text.lines().nth(line - 1).unwrap_or("").trim();
                found.push(format!("src/{}:{line}: {said}", rel.display()));
            }
            if text.contains("\"history\"") {
                found.push(format!("src/{}: the key \"history\"", rel.display()));
            }
        }
        assert!(
            found.is_empty(),
            "the history read above the core: use the change's record (`workflow::Effects`) or a `Session` accessor of `workflow/history.rs`\n{}",
            found.join("\n")
        );
    }

    /// The lines of `code` that name a variant of `Stage` or `State`, by number.
    fn variant_lines(code: &str) -> Vec<usize> {
        use crate::workflow::{Stage, State};
        let names: Vec<String> = (Stage::ALL.iter().map(|s| format!("Stage::{s:?}")))
            .chain(State::ALL.iter().map(|s| format!("State::{s:?}")))
            .collect();
        let mut lines: Vec<usize> = names
            .iter()
            .flat_map(|n| word_at(code, n))
            .map(|at| code[..at].matches('\n').count() + 1)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// Above the core, a line that names a stage or a state asks the workflow a question
    /// by hand: there are no more of them than [`MAX_VARIANT_LINES_ABOVE_CORE`].
    #[test]
    fn stages_and_states_named_above_the_core_do_not_grow() {
        let mut all = Vec::new();
        for (rel, code, text) in above_the_core() {
            for line in variant_lines(&code) {
                let said = text.lines().nth(line - 1).unwrap_or("").trim().to_string();
                all.push(format!("src/{}:{line}: {said}", rel.display()));
            }
        }
        println!("{} lines above the core name a stage or a state", all.len());
        assert!(
            all.len() <= MAX_VARIANT_LINES_ABOVE_CORE,
            "{} lines above the core name a stage or a state (at most {MAX_VARIANT_LINES_ABOVE_CORE}): ask the stage table, the rules, a `Session` accessor or the change's record instead\n{}",
            all.len(),
            all.join("\n")
        );
    }

    #[test]
    fn the_readers_find_words_variants_and_shipped_code() {
        let code = code_of("let h = s.history; // s.history\nf(\"history\", history_len, workflow::history::x);\nif s.current_state == State::Completed && t == Stage::Qa { Stage::ALL; }\n");
        assert_eq!(word_at(&code, "history").len(), 2, "{code}");
        assert_eq!(variant_lines(&code), [3]);
        assert_eq!(
            variant_lines("Stage::Quality; State::CompletedAt"),
            Vec::<usize>::new()
        );
        let text = "fn a() {}\n#[cfg(test)]\nfn b() {}\nfn c() {}\n#[cfg(test)]\n#[path = \"x.rs\"]\nmod tests;\n";
        let kept = shipped(Path::new("m.rs"), text);
        assert!(
            kept.contains("fn c()") && !kept.contains("mod tests"),
            "{kept}"
        );
        assert_eq!(shipped(Path::new("m_tests.rs"), text), "");
    }
}
