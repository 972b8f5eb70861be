//! The map stays true: `docs/architecture.md` and the other docs name files that exist,
//! every source file of `toolsmith-server` has its row in the map's module table, and the
//! central crates read as floors (no module circle inside `toolsmith-model`,
//! `toolsmith-folder` or `toolsmith-server`).
//!
//! These tests read the repository's text only (no build, no process), so they are fast.
//! Each failure says which path, module or circle is wrong and what to do about it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

/// Module circles not broken yet: crate, the modules of the circle (any order), and why it
/// is still there. A circle found that is not listed fails the test, and so does a listed
/// one that is gone (remove its line: the list only shrinks).
const KNOWN_CIRCLES: &[(&str, &[&str], &str)] = &[(
    "toolsmith-model",
    &["deferred", "init", "tool"],
    "the `Tool` trait names `Deferred` and `LazyInit` (its `deferred()` and `init()`), \
     which implement or run tools through `CallContext`: breaking it means moving \
     `CallContext`, `ToolFailure` and `ClientBridge` out of tool.rs",
)];

/// The crates whose modules must import downwards only.
const LAYERED_CRATES: &[&str] = &["toolsmith-model", "toolsmith-folder", "toolsmith-server"];

/// Where paths named by the docs start (relative to the repository root).
const ROOTED: &[&str] = &[
    "crates/",
    "docs/",
    "bench/",
    "examples/",
    "fuzz/",
    ".ci/",
    "npm/",
];

/// Paths the docs name that a run makes (a fuzzer, `.ci/run`), so a fresh checkout does not
/// have them.
const MADE_BY_RUNS: &[&str] = &["fuzz/target/", "fuzz/crashes-found/", ".ci/sdk/.venv"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every path a doc names (in backticks or as a link) is a file or folder that exists.
#[test]
fn docs_name_files_that_exist() {
    let root = repository();
    let sources = source_files(&root);
    let mut problems = Vec::new();
    for doc in doc_files(&root) {
        let text = fs::read_to_string(&doc).unwrap();
        let shown = doc.strip_prefix(&root).unwrap().display().to_string();
        for named in named_paths(&text) {
            if !named.resolves(&root, &doc, &sources) {
                problems.push(format!(
                    "{shown}:{}: `{}` names no file of the repository; point it at the file \
                     that holds that code now (or drop the reference)",
                    named.line, named.path
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// Every source file of `toolsmith-server` is named in the module table of
/// `docs/architecture.md` ("Server modules").
#[test]
fn every_server_module_is_on_the_map() {
    let root = repository();
    let src = root.join("crates/toolsmith-server/src");
    let map = fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let listed = server_table(&map, &src);
    let mut problems = Vec::new();
    for file in files_under(&src) {
        let relative = file.strip_prefix(&src).unwrap().display().to_string();
        if file.extension().is_some_and(|extension| extension == "rs") && !listed.contains(&file) {
            problems.push(format!(
                "crates/toolsmith-server/src/{relative} is not in the module table of \
                 docs/architecture.md (\"Server modules\"): add it to the row of its concept, \
                 or give it a row saying what it holds"
            ));
        }
    }
    assert!(
        !listed.is_empty(),
        "docs/architecture.md has no \"## Server modules\" table"
    );
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// No circle between the top-level modules of the central crates: what a module uses sits
/// below it, except for the circles still listed in [`KNOWN_CIRCLES`].
#[test]
fn central_crates_have_no_module_circles() {
    let root = repository();
    let mut problems = Vec::new();
    let mut found = BTreeSet::new();
    for krate in LAYERED_CRATES {
        let graph = module_graph(&root, &root.join("crates").join(krate).join("src"));
        for circle in circles(&graph) {
            let members: BTreeSet<String> = circle.iter().cloned().collect();
            found.insert(((*krate).to_owned(), members.clone()));
            if known(krate, &members).is_some() {
                continue;
            }
            let mut steps = Vec::new();
            for module in &members {
                for (next, site) in &graph.edges[module] {
                    if members.contains(next) {
                        steps.push(format!("    {module} → {next} ({site})"));
                    }
                }
            }
            let path = cycle_path(&graph, &members).join(" → ");
            problems.push(format!(
                "{krate}: the modules {} import each other in a circle ({path}); their imports \
                 of each other:\n{}\n  Move what both \
                 need into the lower module (or a small new one) so imports point one way; \
                 only if that cannot be done now, list the circle in KNOWN_CIRCLES \
                 (crates/toolsmith/tests/it/architecture.rs) with the reason",
                members.iter().cloned().collect::<Vec<_>>().join(", "),
                steps.join("\n")
            ));
        }
    }
    for (krate, members, _) in KNOWN_CIRCLES {
        let members: BTreeSet<String> = members.iter().map(|m| (*m).to_owned()).collect();
        if !found.contains(&((*krate).to_owned(), members.clone())) {
            problems.push(format!(
                "{krate}: the circle {} listed in KNOWN_CIRCLES \
                 (crates/toolsmith/tests/it/architecture.rs) is no longer there as listed: \
                 remove its line (or list the circle as it is now)",
                members.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n\n"));
}

fn known(krate: &str, members: &BTreeSet<String>) -> Option<&'static str> {
    KNOWN_CIRCLES.iter().find_map(|(name, listed, reason)| {
        let listed: BTreeSet<String> = listed.iter().map(|m| (*m).to_owned()).collect();
        (*name == krate && &listed == members).then_some(*reason)
    })
}

// ---------------------------------------------------------------------------------------
// Docs and the paths they name.

/// The docs: `docs/` (all of it), the README, and every other `README.md` of the crates,
/// the benches and the examples.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = files_under(&root.join("docs"))
        .into_iter()
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    docs.push(root.join("README.md"));
    for entry in fs::read_dir(root.join("crates")).unwrap().flatten() {
        docs.push(entry.path().join("README.md"));
    }
    docs.retain(|doc| doc.exists());
    for folder in ["bench", "examples"] {
        docs.extend(
            files_under(&root.join(folder))
                .into_iter()
                .filter(|path| path.file_name().is_some_and(|name| name == "README.md")),
        );
    }
    docs.sort();
    docs
}

/// One path a doc names, with what its line says about where it is relative to.
struct Named {
    path: String,
    line: usize,
    link: bool,
    /// Folders that a bare `*.rs` name on this line (or table) is relative to.
    bases: Vec<String>,
}

impl Named {
    fn resolves(&self, root: &Path, doc: &Path, sources: &[String]) -> bool {
        let path = self.path.as_str();
        if self.link {
            let folder = doc.parent().unwrap();
            return expand(path).iter().all(|one| folder.join(one).exists());
        }
        if MADE_BY_RUNS.contains(&path) {
            return true;
        }
        if ROOTED.iter().any(|start| path.starts_with(start)) {
            return expand(path).iter().all(|one| exists(&root.join(one)));
        }
        // A bare source file: relative to a folder its line names, else to any crate.
        expand(path).iter().all(|one| {
            self.bases
                .iter()
                .any(|base| exists(&root.join(base).join(one)))
                || (self.bases.is_empty()
                    && sources
                        .iter()
                        .any(|source| source.ends_with(&format!("/{one}"))))
        })
    }
}

/// Whether `path` exists; a `*` in its last component matches any name.
fn exists(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let Some((before, after)) = name.split_once('*') else {
        return path.exists();
    };
    let Ok(entries) = fs::read_dir(path.parent().unwrap()) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name().to_string_lossy().to_string();
        name.starts_with(before) && name.ends_with(after)
    })
}

/// `a/{b,c}.rs` as `a/b.rs` and `a/c.rs`.
fn expand(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else {
        return vec![path.to_owned()];
    };
    let Some(close) = path[open..].find('}').map(|close| open + close) else {
        return vec![path.to_owned()];
    };
    path[open + 1..close]
        .split(',')
        .flat_map(|choice| expand(&format!("{}{choice}{}", &path[..open], &path[close + 1..])))
        .collect()
}

/// The paths a Markdown text names: code spans that are paths into the repository or
/// Rust files, and relative links; fenced code blocks are skipped.
fn named_paths(text: &str) -> Vec<Named> {
    let mut named = Vec::new();
    let mut fenced = false;
    let mut table_bases: Vec<String> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let spans: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        let row = line.trim_start().starts_with('|');
        if !row {
            table_bases.clear();
        } else if table_bases.is_empty() && !line.contains("---") {
            // A table's header may name the folder its rows are relative to.
            table_bases = spans
                .iter()
                .filter(|span| is_folder(span))
                .map(|s| (*s).to_owned())
                .collect();
        }
        let mut bases: Vec<String> = spans
            .iter()
            .filter(|span| is_folder(span))
            .map(|s| (*s).to_owned())
            .collect();
        for span in &spans {
            let krate = (*span == "toolsmith" || span.starts_with("toolsmith-"))
                && !span.contains(['/', ' ']);
            if krate {
                bases.push(format!("crates/{span}/"));
                bases.push(format!("crates/{span}/src/"));
                // Folders of the crate named on the same line (`src/args/`: `mod.rs`).
                for folder in spans.iter().filter(|span| span.ends_with('/')) {
                    bases.push(format!("crates/{span}/{folder}"));
                }
            }
        }
        if row {
            bases.extend(table_bases.iter().cloned());
        }
        for span in &spans {
            let path = span.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
            if is_path(path) {
                named.push(Named {
                    path: path.to_owned(),
                    line: index + 1,
                    link: false,
                    bases: bases.clone(),
                });
            }
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].split('#').next().unwrap();
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                named.push(Named {
                    path: target.to_owned(),
                    line: index + 1,
                    link: true,
                    bases: Vec::new(),
                });
            }
        }
    }
    named
}

fn is_folder(span: &str) -> bool {
    span.ends_with('/') && ROOTED.iter().any(|start| span.starts_with(start))
}

fn is_path(span: &str) -> bool {
    if span.is_empty()
        || span.contains(char::is_whitespace)
        || span.contains(['<', '>', '$', '(', '=', '"'])
        || span.contains("::")
    {
        return false;
    }
    ROOTED
        .iter()
        .any(|start| span.starts_with(start) && span.len() > start.len())
        || (Path::new(span)
            .extension()
            .is_some_and(|extension| extension == "rs")
            && !span.starts_with('.'))
}

fn files_under(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = fs::read_dir(folder) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "node_modules" || name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Every Rust file under `crates/`, `bench/` and `fuzz/`, relative to the repository.
fn source_files(root: &Path) -> Vec<String> {
    ["crates", "bench", "fuzz"]
        .iter()
        .flat_map(|folder| files_under(&root.join(folder)))
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .map(|path| path.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

/// The files the "Server modules" table of the map names, as paths under `src`.
fn server_table(map: &str, src: &Path) -> BTreeSet<PathBuf> {
    let section = map
        .split("\n## ")
        .find(|section| section.starts_with("Server modules"))
        .unwrap_or_default();
    let mut listed = BTreeSet::new();
    for line in section.lines().filter(|line| line.starts_with('|')) {
        let cell = line.trim_end().trim_end_matches('|');
        let cell = cell.rsplit('|').next().unwrap();
        for span in cell.split('`').skip(1).step_by(2) {
            for one in expand(span) {
                let path = src.join(&one);
                if one.ends_with('/') {
                    listed.extend(files_under(&path));
                } else {
                    listed.insert(path);
                }
            }
        }
    }
    listed
}

// ---------------------------------------------------------------------------------------
// Modules and their imports.

/// The top-level modules of a crate and, for each, the modules it names with the first
/// place it does so (`file:line`).
struct Graph {
    edges: BTreeMap<String, BTreeMap<String, String>>,
}

fn module_graph(root: &Path, src: &Path) -> Graph {
    let tops: BTreeSet<String> = fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            let top = name.strip_suffix(".rs").unwrap_or(&name).to_owned();
            (top != "lib" && top != "main").then_some(top)
        })
        .collect();
    let reexports = reexports(
        &code_of(&fs::read_to_string(src.join("lib.rs")).unwrap()),
        &tops,
    );
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = tops
        .iter()
        .map(|top| (top.clone(), BTreeMap::new()))
        .collect();
    let mut test_only = BTreeSet::new();
    for file in files_under(src) {
        if file.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let relative = file.strip_prefix(src).unwrap();
        let mut module: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|part| part.to_string_lossy().to_string())
            .collect();
        if module.last().is_some_and(|last| last == "mod") {
            module.pop();
        }
        if module == ["lib"]
            || test_only
                .iter()
                .any(|gated: &Vec<String>| module.starts_with(gated))
        {
            continue;
        }
        let code = code_of(&fs::read_to_string(&file).unwrap());
        for gated in test_modules(&code) {
            let mut path = module.clone();
            path.push(gated);
            test_only.insert(path);
        }
        let code = without_test_blocks(&code);
        let shown = format!("{}:", file.strip_prefix(root).unwrap_or(&file).display());
        for (offset, target) in references(&code, &module) {
            let top = if tops.contains(&target) {
                target
            } else if let Some(top) = reexports.get(&target) {
                top.clone()
            } else {
                continue;
            };
            if top != module[0] {
                let line = code[..offset].matches('\n').count() + 1;
                edges
                    .get_mut(&module[0])
                    .unwrap()
                    .entry(top)
                    .or_insert_with(|| format!("{shown}{line}"));
            }
        }
    }
    Graph { edges }
}

/// The names `lib.rs` re-exports from each top-level module.
fn reexports(lib: &str, tops: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(start) = statement.find("use ") else {
            continue;
        };
        let path = statement[start + 4..].trim();
        let path = path
            .strip_prefix("self::")
            .or_else(|| path.strip_prefix("crate::"))
            .unwrap_or(path);
        let first: String = path.chars().take_while(|c| is_ident(*c)).collect();
        if !tops.contains(&first) {
            continue;
        }
        let words: Vec<&str> = path
            .split(|c: char| !is_ident(c) && c != ':')
            .flat_map(|word| word.split("::"))
            .filter(|word| !word.is_empty())
            .collect();
        for (index, word) in words.iter().enumerate() {
            let leaf = !path.contains(&format!("{word}::"));
            if leaf && words.get(index + 1) != Some(&"as") && *word != "as" && *word != "self" {
                names.insert((*word).to_owned(), first.clone());
            }
        }
    }
    names
}

/// The top-level names `code` (of the module at `module`) reaches through `crate::` or
/// `super::`, with their offsets.
fn references(code: &str, module: &[String]) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut index = 0;
    while index < code.len() {
        let rest = &code[index..];
        let boundary = index == 0 || !is_ident(bytes[index - 1] as char);
        let (skip, path): (usize, Vec<String>) = if boundary && rest.starts_with("crate::") {
            (7, Vec::new())
        } else if boundary && rest.starts_with("super::") {
            let mut skip = 0;
            let mut path = module.to_vec();
            while code[index + skip..].starts_with("super::") {
                skip += 7;
                path.pop();
            }
            (skip, path)
        } else {
            index += 1;
            continue;
        };
        let after = &code[index + skip..];
        let names: Vec<String> = if let Some(group) = after.strip_prefix('{') {
            group_heads(group)
        } else {
            vec![after.chars().take_while(|c| is_ident(*c)).collect()]
        };
        // A path that stays below the crate root stays inside the same top-level module.
        if path.is_empty() {
            found.extend(
                names
                    .into_iter()
                    .filter(|name| !name.is_empty())
                    .map(|name| (index, name)),
            );
        }
        index += skip;
    }
    found
}

/// The first segment of each item of a `{a::B, c}` group, `group` starting after `{`.
fn group_heads(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (offset, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..offset]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..offset]);
                start = offset + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .map(|item| {
            item.trim_start()
                .chars()
                .take_while(|c| is_ident(*c))
                .collect::<String>()
        })
        .filter(|head| !head.is_empty() && head != "self")
        .collect()
}

/// The names of the modules a file declares only for tests (`#[cfg(test)] mod name;`).
fn test_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(start) = rest.find("#[cfg(test)]") {
        rest = &rest[start + 12..];
        let item = rest.trim_start();
        let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
        if let Some(declared) = item.strip_prefix("mod ") {
            let name: String = declared.chars().take_while(|c| is_ident(*c)).collect();
            if declared[name.len()..].trim_start().starts_with(';') {
                names.push(name);
            }
        }
    }
    names
}

/// `code` without its `#[cfg(test)] mod name { .. }` blocks.
fn without_test_blocks(code: &str) -> String {
    let mut kept = String::new();
    let mut rest = code;
    while let Some(start) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..start]);
        let after = &rest[start + 12..];
        let item = after.trim_start();
        let brace = item.find(['{', ';']).unwrap_or(item.len());
        if item.starts_with("mod ") && item[brace..].starts_with('{') {
            let mut depth = 0;
            let mut end = item.len();
            for (offset, c) in item.char_indices().skip(brace) {
                if c == '{' {
                    depth += 1;
                } else if c == '}' {
                    depth -= 1;
                    if depth == 0 {
                        end = offset + 1;
                        break;
                    }
                }
            }
            // Keep the lines, so that line numbers still match the file.
            kept.extend(item[..end].chars().filter(|c| *c == '\n'));
            kept.extend(
                after[..after.len() - item.len()]
                    .chars()
                    .filter(|c| *c == '\n'),
            );
            rest = &item[end..];
        } else {
            rest = after;
        }
    }
    kept.push_str(rest);
    kept
}

/// Rust source without comments, strings and character literals (newlines kept).
fn code_of(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut code = String::with_capacity(source.len());
    let mut index = 0;
    let blank = |code: &mut String, text: &[char]| {
        code.extend(text.iter().map(|c| if *c == '\n' { '\n' } else { ' ' }));
    };
    while index < chars.len() {
        let c = chars[index];
        let next = chars.get(index + 1).copied();
        let end = if c == '/' && next == Some('/') {
            chars[index..]
                .iter()
                .position(|c| *c == '\n')
                .map_or(chars.len(), |n| index + n)
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut at = index;
            loop {
                if at + 1 >= chars.len() {
                    break chars.len();
                }
                if chars[at] == '/' && chars[at + 1] == '*' {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && chars[at + 1] == '/' {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break at;
                    }
                } else {
                    at += 1;
                }
            }
        } else if c == 'r'
            && (index == 0 || !is_ident(chars[index - 1]))
            && matches!(next, Some('"' | '#'))
        {
            let hashes = chars[index + 1..].iter().take_while(|c| **c == '#').count();
            if chars.get(index + 1 + hashes) == Some(&'"') {
                let mut at = index + 2 + hashes;
                loop {
                    if at >= chars.len() {
                        break chars.len();
                    }
                    if chars[at] == '"'
                        && chars[at + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|c| **c == '#')
                            .count()
                            == hashes
                    {
                        break at + 1 + hashes;
                    }
                    at += 1;
                }
            } else {
                code.push(c);
                index += 1;
                continue;
            }
        } else if c == '"' {
            let mut at = index + 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at + 1
        } else if c == '\'' && next == Some('\\') {
            chars[index + 2..]
                .iter()
                .position(|c| *c == '\'')
                .map_or(chars.len(), |n| index + n + 3)
        } else if c == '\'' && chars.get(index + 2) == Some(&'\'') {
            index + 3
        } else {
            code.push(c);
            index += 1;
            continue;
        };
        let end = end.min(chars.len());
        blank(&mut code, &chars[index..end]);
        index = end;
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The groups of modules that reach each other (strongly connected, more than one module).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([from.clone()]);
        while let Some(module) = queue.pop_front() {
            for next in graph
                .edges
                .get(&module)
                .into_iter()
                .flat_map(BTreeMap::keys)
            {
                if seen.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = graph
        .edges
        .keys()
        .map(|module| (module, reach(module)))
        .collect();
    let mut circles: Vec<Vec<String>> = Vec::new();
    let mut placed = BTreeSet::new();
    for (module, reached) in &reachable {
        if placed.contains(*module) || !reached.contains(*module) {
            continue;
        }
        let members: Vec<String> = reached
            .iter()
            .filter(|other| reachable[other].contains(*module))
            .cloned()
            .collect();
        placed.extend(members.iter().cloned());
        if members.len() > 1 {
            circles.push(members);
        }
    }
    circles
}

/// One way round a circle: from its first module back to itself, within its members.
fn cycle_path(graph: &Graph, members: &BTreeSet<String>) -> Vec<String> {
    let start = members.iter().next().unwrap().clone();
    let mut previous: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([start.clone()]);
    while let Some(module) = queue.pop_front() {
        for next in graph.edges[&module]
            .keys()
            .filter(|next| members.contains(*next))
        {
            if *next == start {
                let mut path = vec![module.clone()];
                let mut at = module.clone();
                while at != start {
                    at = previous[&at].clone();
                    path.push(at.clone());
                }
                path.reverse();
                path.push(start);
                return path;
            }
            if !previous.contains_key(next) && *next != start {
                previous.insert(next.clone(), module.clone());
                queue.push_back(next.clone());
            }
        }
    }
    vec![start]
}
