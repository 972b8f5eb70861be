//! Integration tests of the rules: each rule's fixture folder under `resources/<rule-id>/`
//! loaded like `toolsmith check` loads a folder, with the rendered findings under insta
//! snapshots; the generated docs pages; the output formats and `--fix` edits.

#![expect(
    clippy::unwrap_used,
    reason = "a fixture that cannot be read is a broken test"
)]

mod docs;
mod formats;
mod rules;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toolsmith_check::CheckContext;
use toolsmith_folder::ToolFolder;
use toolsmith_model::{SourceLocation, ToolDefinition};

/// The files of a folder, relative to it (hidden files skipped).
pub(crate) fn files(root: &Path) -> BTreeSet<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(path.strip_prefix(root).unwrap().to_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Loads a folder and gathers its check context; only `PATH` and `HOME` count as set, and
/// only `sh` as found.
pub(crate) fn load(root: &Path) -> (ToolFolder, CheckContext) {
    let folder = ToolFolder::load(root).unwrap();
    let mut context = CheckContext::gather(
        root,
        files(root),
        folder.catalog().definitions(),
        folder.config().search,
        &mut |path| std::fs::read_to_string(path).ok(),
        &|name| matches!(name, "PATH" | "HOME"),
        &|program| program == "sh",
    );
    context.tested_tools = toolsmith_testing::collect(&folder)
        .cases
        .into_iter()
        .map(|case| case.tool)
        .collect();
    context.resource_uris = Some(
        folder
            .resources()
            .list()
            .iter()
            .map(|r| r.uri.clone())
            .collect(),
    );
    context.token_passthrough = toolsmith_folder::token_passthrough(root, folder.config());
    (folder, context)
}

/// Tools given as MCP Tool objects in `*.json` files of a fixture folder: definitions built
/// in code (as a Rust program embedding Toolsmith registers them), for rules the folder
/// loader can never trigger. Each tool's source line is the line of its `"name"`.
pub(crate) fn json_tools(root: &Path) -> Vec<ToolDefinition> {
    let mut tools = Vec::new();
    for file in files(root)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        let path = root.join(&file);
        let text = std::fs::read_to_string(&path).unwrap();
        let listed: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        for tool in listed {
            let name = tool["name"].as_str().unwrap();
            let schema = tool["inputSchema"].as_object().cloned().unwrap_or_default();
            let mut definition = ToolDefinition::new(
                name,
                tool["description"].as_str().unwrap_or_default(),
                schema,
            );
            definition.output_schema = tool
                .get("outputSchema")
                .and_then(|s| s.as_object())
                .cloned()
                .map(Into::into);
            let needle = format!("\"name\": \"{name}\"");
            let line = text
                .lines()
                .position(|l| l.contains(&needle))
                .map_or(1, |n| n + 1);
            definition.source = SourceLocation {
                path: path.clone(),
                line: u32::try_from(line).unwrap(),
                column: 1,
            };
            tools.push(definition);
        }
    }
    tools
}

/// A rule's fixture folder, relative to the crate (so paths in snapshots are stable).
pub(crate) fn fixture(rule: &str) -> PathBuf {
    Path::new("resources").join(rule)
}
