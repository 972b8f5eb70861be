//! Tools not held (docs/performance.md, "Tools not held"): a server of a
//! folder of hundreds of tool files keeps each plain command manifest's tool as a
//! [`Deferred`] one, its name and what the walks over every tool read, and reads the file
//! again when a call, a `tool_search` hit or a listing needs the tool. Such a folder's
//! tools are behind `tool_search`, and a server uses few of them; each one held cost
//! about 3 KB.

use std::borrow::Cow;
use std::sync::Arc;

use fnv::FnvHashMap;
use toolsmith_model::{
    Adjusted, Deferred, Diagnostic, LoadTool, SchemaValidator, SearchMode, SourceLocation, Tool,
    ToolDefinition,
};
use toolsmith_starlark::{LoadSettings, LoadedModule};

use crate::config::FolderConfig;
use crate::discover::{self, ToolFile};
use crate::inits::CommandInits;
use crate::loading::LoadedFile;

/// A folder with at least this many tool files defers its plain manifests' tools. Under
/// `[search] mode = "auto"` and its budget of 8,000 tokens, a few dozen tools already go
/// behind `tool_search`; from a few hundred on, only a budget raised far above the
/// default lists them, and then `tools/list` reads each file once more.
pub(crate) const DEFER_FROM: usize = 500;

/// Whether deferring the tools of a folder of `files` tool files with `config` pays: a
/// big folder whose `tools/list` does not list every tool (`[search] mode = "never"`).
pub(crate) fn pays(files: usize, config: &FolderConfig) -> bool {
    files >= DEFER_FROM && config.search.mode != SearchMode::Never
}

/// The files a reload may reuse of `previous`: all of them when the folder's settings are
/// the same, else those holding no deferred tool, which is read again with the settings it
/// was deferred with.
pub(crate) fn reusable(previous: &[LoadedFile], same_settings: bool) -> Cow<'_, [LoadedFile]> {
    if same_settings {
        return previous.into();
    }
    previous
        .iter()
        .filter(|file| !holds_deferred(file))
        .cloned()
        .collect::<Vec<_>>()
        .into()
}

/// What the catalog's builder does to a tool's definition to publish it (the folder's
/// default timeout, its options, …), which a deferred tool read again gets too.
pub(crate) type Publish = dyn Fn(&mut ToolDefinition) -> Result<(), Diagnostic> + Send + Sync;

/// Replaces the tool of each plain manifest among `files` by a [`Deferred`] one, in
/// `files` (which a reload reuses) and in `tools` (which the catalog is built from). A
/// tool already deferred (a file a reload kept) stays as it is.
pub(crate) fn defer(
    files: &mut [LoadedFile],
    tools: &mut [Arc<dyn Tool>],
    settings: &LoadSettings,
    publish: &Arc<Publish>,
) {
    let load: Arc<LoadTool> = {
        let settings = settings.clone();
        let publish = Arc::clone(publish);
        Arc::new(move |source: &SourceLocation| read_again(source, &settings, &*publish))
    };
    let mut deferred: FnvHashMap<*const (), Arc<dyn Tool>> = FnvHashMap::default();
    for file in files {
        let ToolFile::Manifest(_) = file.file else {
            continue;
        };
        let [tool] = file.module.tools.as_slice() else {
            continue;
        };
        if !file.module.diagnostics.is_empty() || !deferrable(tool.as_ref()) {
            continue;
        }
        let mut published = tool.definition().clone();
        // Left for the catalog's builder to report.
        if publish(&mut published).is_err() {
            continue;
        }
        let stub: Arc<dyn Tool> = Arc::new(Deferred::new(&published, Arc::clone(&load)));
        deferred.insert(Arc::as_ptr(tool).cast(), Arc::clone(&stub));
        file.module = Arc::new(LoadedModule {
            tools: vec![stub],
            diagnostics: Vec::new(),
        });
    }
    for tool in tools {
        if let Some(stub) = deferred.get(&Arc::as_ptr(tool).cast()) {
            *tool = Arc::clone(stub);
        }
    }
}

/// Whether `file` holds a deferred tool.
fn holds_deferred(file: &LoadedFile) -> bool {
    file.module
        .tools
        .iter()
        .any(|tool| tool.deferred().is_some())
}

/// Whether reading `tool`'s file again gives it back: a command tool that shares nothing
/// with others (no worker pool, no init), whose publishing reads nothing but the folder's
/// settings (no `requires`, no icon files), outside a package, needing no scopes, with
/// schemas that compile (a deferred tool's are compiled at its first call).
fn deferrable(tool: &dyn Tool) -> bool {
    // Asked first: a tool deferred already is not, and its definition is not read.
    if !tool.reloadable() {
        return false;
    }
    let definition = tool.definition();
    definition.init.is_none()
        && definition.requires.env.is_empty()
        && definition.requires.commands.is_empty()
        && definition.icons.is_empty()
        && definition.package.is_none()
        && definition.scopes.is_empty()
        && definition.unavailable.is_none()
        && SchemaValidator::new(&definition.input_schema).is_ok()
        && definition
            .output_schema
            .as_ref()
            .is_none_or(|schema| SchemaValidator::new(schema).is_ok())
}

/// The tool the manifest at `source` defines now, published as `publish` says; or why it
/// cannot be served in place of the deferred one.
fn read_again(
    source: &SourceLocation,
    settings: &LoadSettings,
    publish: &Publish,
) -> Result<Arc<dyn Tool>, String> {
    let module = discover::load_manifest(&source.path, settings, &CommandInits::kept([]));
    if let Some(problem) = module.diagnostics.first() {
        return Err(format!("{}: {}", problem.location, problem.message));
    }
    let [tool] = module.tools.as_slice() else {
        return Err(format!("{} defines no tool now", source.path.display()));
    };
    if !deferrable(tool.as_ref()) {
        return Err(format!(
            "{} changed since the server loaded it; `serve --watch` loads such a change",
            source.path.display()
        ));
    }
    let mut published = tool.definition().clone();
    publish(&mut published).map_err(|problem| problem.message)?;
    Ok(Adjusted::of(Arc::clone(tool), published))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;
    use toolsmith_model::{CallOutcome, Content, JsonObject};

    use super::*;
    use crate::ToolFolder;

    fn manifest(n: usize, description: &str) -> String {
        format!(
            r#"description = "{description}"
command = ["echo", "tool {n}", "{{word}}"]

[[parameters]]
name = "word"
type = "string"
required = true
"#
        )
    }

    /// A folder of `count` manifests, `tool_0000.toml` on.
    fn folder(count: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..count {
            let description = format!("Tool number {n}.");
            std::fs::write(
                dir.path().join(format!("tool_{n:04}.toml")),
                manifest(n, &description),
            )
            .unwrap();
        }
        dir
    }

    fn serve(dir: &Path) -> ToolFolder {
        ToolFolder::load_to_serve(dir, None, None).unwrap()
    }

    fn deferred<'a>(folder: &'a ToolFolder, name: &str) -> Option<&'a Deferred> {
        folder.catalog().get(name).unwrap().tool().deferred()
    }

    fn word(word: &str) -> JsonObject {
        json!({ "word": word }).as_object().cloned().unwrap()
    }

    fn text(outcome: &CallOutcome) -> String {
        outcome
            .content
            .iter()
            .map(|content| match content {
                Content::Text { text, .. } => text.as_str(),
                _ => "",
            })
            .collect()
    }

    #[test]
    fn a_big_served_folder_reads_a_tool_from_its_file_when_it_is_called() {
        // A tool not called costs its name, not its definition.
        let dir = folder(DEFER_FROM);
        let served = serve(dir.path());
        assert_eq!(served.catalog().entries().len(), DEFER_FROM);
        for entry in served.catalog().entries() {
            let deferred = entry
                .tool()
                .deferred()
                .expect("every plain manifest deferred");
            assert!(
                !deferred.is_loaded(),
                "{} read before it was needed",
                entry.name()
            );
        }
        let outcome = served.caller().call("tool_0123", word("hello")).unwrap();
        assert!(!outcome.is_error, "{outcome:?}");
        assert_eq!(text(&outcome).trim(), "tool 123 hello");
        assert!(deferred(&served, "tool_0123").unwrap().is_loaded());
        assert!(!deferred(&served, "tool_0124").unwrap().is_loaded());
        // Validated as a tool held is.
        let missing = served
            .caller()
            .call("tool_0124", JsonObject::new())
            .unwrap();
        assert!(
            missing.is_error && text(&missing).contains("word"),
            "{missing:?}"
        );

        // Published as the same folder loaded whole publishes it.
        let whole = ToolFolder::load_served(dir.path(), None, None).unwrap();
        assert!(
            whole
                .catalog()
                .entries()
                .iter()
                .all(|e| e.tool().deferred().is_none())
        );
        let (held, read) = (
            whole.catalog().get("tool_0007").unwrap(),
            served.catalog().get("tool_0007").unwrap(),
        );
        assert_eq!(read.published_len(), held.published_len());
        assert_eq!(read.effective_timeout(), held.effective_timeout());
        assert!(read.definition().publishes_as(held.definition()));
    }

    #[test]
    fn a_smaller_folder_or_one_listing_every_tool_holds_its_tools() {
        let dir = folder(DEFER_FROM - 1);
        assert!(deferred(&serve(dir.path()), "tool_0000").is_none());
        let dir = folder(DEFER_FROM);
        std::fs::write(
            dir.path().join("toolsmith.toml"),
            "[search]\nmode = \"never\"\n",
        )
        .unwrap();
        assert!(deferred(&serve(dir.path()), "tool_0000").is_none());
    }

    #[test]
    fn a_reload_keeps_the_deferred_tools_of_unchanged_files_and_defers_the_changed_one() {
        let dir = folder(DEFER_FROM);
        let served = serve(dir.path());
        let path = dir.path().join("tool_0002.toml");
        std::fs::write(&path, manifest(2, "A new description, longer than before.")).unwrap();
        let reloaded = served.reload().unwrap();
        let kept = |name| {
            Arc::ptr_eq(
                served.catalog().get(name).unwrap().tool(),
                reloaded.catalog().get(name).unwrap().tool(),
            )
        };
        assert!(kept("tool_0001"));
        assert!(!kept("tool_0002"));
        // Nothing kept was read to reload (a reload read every file again).
        let read =
            |entry: &toolsmith_model::CatalogEntry| entry.tool().deferred().unwrap().is_loaded();
        assert!(!reloaded.catalog().entries().iter().any(read));
        let changed = reloaded.catalog().get("tool_0002").unwrap();
        assert!(!changed.tool().deferred().unwrap().is_loaded());
        assert_eq!(
            changed.definition().description,
            "A new description, longer than before."
        );

        // New settings: each tool is read again with them.
        std::fs::write(
            dir.path().join("toolsmith.toml"),
            "[defaults]\ntimeout = \"7s\"\n",
        )
        .unwrap();
        let again = reloaded.reload().unwrap();
        let entry = again.catalog().get("tool_0001").unwrap();
        assert!(!Arc::ptr_eq(
            entry.tool(),
            reloaded.catalog().get("tool_0001").unwrap().tool()
        ));
        assert_eq!(entry.effective_timeout(), std::time::Duration::from_secs(7));
        assert_eq!(
            entry.definition().timeout,
            Some(std::time::Duration::from_secs(7))
        );
    }

    #[test]
    fn a_deferred_tool_whose_file_broke_fails_its_call_and_says_why() {
        let dir = folder(DEFER_FROM);
        let served = serve(dir.path());
        std::fs::write(dir.path().join("tool_0003.toml"), "description = \n").unwrap();
        std::fs::remove_file(dir.path().join("tool_0004.toml")).unwrap();
        for name in ["tool_0003", "tool_0004"] {
            let outcome = served.caller().call(name, word("x")).unwrap();
            assert!(outcome.is_error, "{outcome:?}");
            let message = text(&outcome);
            assert!(
                message.contains(&format!("tool `{name}` failed to load")),
                "{message}"
            );
            let definition = served.catalog().get(name).unwrap().definition();
            assert!(definition.unavailable.is_some(), "{definition:?}");
        }
        // The others are unaffected.
        let outcome = served.caller().call("tool_0005", word("y")).unwrap();
        assert!(!outcome.is_error, "{outcome:?}");
    }
}
