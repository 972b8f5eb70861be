//! Gathering a folder's cases: each tool's `examples` (manifest `[[tests]]` included), then
//! the `[[tests]]` of `tests/*.toml`, sorted by tool and numbered per tool. A file case's
//! tool is its `tool`, else the file's top-level `tool`, else the file's stem when a tool
//! has that name (`tests/forecast_get.toml`). A case naming a
//! tool the folder does not have fails with "did you mean"; one naming a tool hidden by
//! `requires.env` is skipped with the reason.

use std::path::{Path, PathBuf};

use toolsmith_folder::ToolFolder;
use toolsmith_model::{Catalog, Diagnostic, SourceLocation};

use crate::case::{CASE_KEYS, ParsedCase, TestCase, parse_case, parse_test_file};

/// The folder of test files inside a tools folder.
pub const TESTS_DIR: &str = "tests";

/// A folder's cases, and the problems with its test files.
#[derive(Debug, Default)]
pub struct Collection {
    /// Every case, sorted by tool (the order of `tools/list`), then as written.
    pub cases: Vec<TestCase>,
    /// Problems with `tests/*.toml` files (not with the tools: those are on the catalog).
    pub diagnostics: Vec<Diagnostic>,
}

/// Collects the cases of a loaded folder, reading its `tests/*.toml` files.
pub fn collect(folder: &ToolFolder) -> Collection {
    let mut files = Vec::new();
    let mut diagnostics = Vec::new();
    match test_files(&folder.root().join(TESTS_DIR)) {
        Ok(paths) => {
            for path in paths {
                match std::fs::read_to_string(&path) {
                    Ok(source) => files.push((path, source)),
                    Err(error) => diagnostics.push(Diagnostic::error(
                        "unreadable-file",
                        SourceLocation::file(&path),
                        format!("cannot read: {error}"),
                    )),
                }
            }
        }
        Err(error) => diagnostics.push(Diagnostic::error(
            "unreadable-file",
            SourceLocation::file(folder.root().join(TESTS_DIR)),
            format!("cannot read: {error}"),
        )),
    }
    let mut collection = collect_from(folder.catalog(), &files);
    diagnostics.append(&mut collection.diagnostics);
    collection.diagnostics = diagnostics;
    collection
}

/// Collects cases from a catalog and the text of test files (`(path, source)`), without
/// touching the file system.
pub fn collect_from(catalog: &Catalog, files: &[(PathBuf, String)]) -> Collection {
    let mut collection = Collection::default();
    let mut cases: Vec<(ParsedCase, String, SourceLocation)> = Vec::new();
    for definition in catalog.definitions() {
        for example in &definition.examples {
            cases.push((
                parse_case(example, CASE_KEYS),
                definition.name.clone(),
                definition.source.clone(),
            ));
        }
    }
    for (path, source) in files {
        let file = parse_test_file(path, source);
        collection.diagnostics.extend(file.diagnostics);
        // `tests/forecast_get.toml` tests `forecast_get` unless its cases say otherwise.
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned());
        let stem_tool = stem.filter(|stem| catalog.get(stem).is_some());
        for (mut case, location) in file.cases {
            let Some(tool) = case.tool.clone().or_else(|| stem_tool.clone()) else {
                if case.body.is_ok() {
                    case.body = Err(
                        "the case names no tool; add `tool = \"NAME\"` to it or at the top of the file, or name the file after the tool"
                            .into(),
                    );
                }
                cases.push((case, "(no tool)".into(), location));
                continue;
            };
            if case.body.is_ok()
                && let Err(unknown) = catalog.lookup(&tool)
            {
                case.body = match hidden_reason(catalog, &tool) {
                    Some(reason) => case.body.map(|mut body| {
                        body.skip = Some(reason);
                        body
                    }),
                    None => Err(unknown.to_string()),
                };
            }
            cases.push((case, tool, location));
        }
    }
    // Stable: examples stay in their order, and a tool's file cases follow its examples.
    cases.sort_by(|a, b| a.1.cmp(&b.1));
    let mut previous: Option<String> = None;
    let mut number = 0;
    for (case, tool, source) in cases {
        if previous.as_ref() == Some(&tool) {
            number += 1;
        } else {
            number = 1;
            previous = Some(tool.clone());
        }
        let name = case.name.unwrap_or_else(|| format!("example {number}"));
        collection.cases.push(TestCase {
            tool,
            name,
            source,
            body: case.body,
        });
    }
    collection
}

/// Why a tool is missing when the catalog hid it (`requires.env` not met).
fn hidden_reason(catalog: &Catalog, tool: &str) -> Option<String> {
    let needle = format!("tool `{tool}` is hidden");
    catalog
        .diagnostics()
        .iter()
        .find(|diagnostic| {
            diagnostic.rule == "missing-requirement" && diagnostic.message.starts_with(&needle)
        })
        .map(|diagnostic| diagnostic.message.clone())
}

/// The `*.toml` files directly in `dir` (none when it does not exist), sorted; names starting
/// with `_` or `.` are ignored, like everywhere in a tools folder.
fn test_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if !name.starts_with(['_', '.'])
            && path.extension().is_some_and(|e| e == "toml")
            && entry.file_type()?.is_file()
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use serde_json::json;
    use toolsmith_model::{
        CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn, input_schema,
    };

    struct Echo(ToolDefinition);

    impl Tool for Echo {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(&self, _: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            Ok(ToolReturn::Text("echo".into()))
        }
    }

    fn catalog() -> Catalog {
        let mut definition = ToolDefinition::new("echo", "Echo.", input_schema(&[]));
        definition.examples = vec![
            json!({"expect": {"text": "echo"}}),
            json!({"name": "named"}),
        ];
        Catalog::new(vec![Arc::new(Echo(definition))], Vec::new())
    }

    #[test]
    fn cases_are_numbered_per_tool_and_sorted() {
        let file = (
            PathBuf::from("tests/more.toml"),
            "[[tests]]\ntool = \"echo\"\n[[tests]]\ntool = \"acho\"\n".to_owned(),
        );
        let collection = collect_from(&catalog(), &[file]);
        let ids: Vec<String> = collection.cases.iter().map(TestCase::id).collect();
        assert_eq!(
            ids,
            [
                "acho: example 1",
                "echo: example 1",
                "echo: named",
                "echo: example 3"
            ]
        );
        assert_eq!(
            collection.cases[0].body.as_ref().unwrap_err(),
            "unknown tool `acho`; did you mean `echo`?"
        );
        assert_eq!(collection.cases[3].source.line, 1);
    }

    #[test]
    fn file_named_after_a_tool_tests_that_tool() {
        let files = [
            (
                PathBuf::from("tests/echo.toml"),
                "[[tests]]\nexpect = { text = \"echo\" }\n".to_owned(),
            ),
            (
                PathBuf::from("tests/misc.toml"),
                "[[tests]]\nname = \"lost\"\n".to_owned(),
            ),
        ];
        let collection = collect_from(&catalog(), &files);
        let ids: Vec<String> = collection.cases.iter().map(TestCase::id).collect();
        assert_eq!(
            ids,
            [
                "(no tool): lost",
                "echo: example 1",
                "echo: named",
                "echo: example 3"
            ]
        );
        assert!(
            collection.cases[0]
                .body
                .as_ref()
                .unwrap_err()
                .starts_with("the case names no tool")
        );
        assert!(collection.cases[3].body.is_ok());
    }
}
