//! Code mode for Toolsmith (docs/code-mode.md): the `run_code` evaluator tool, where a model
//! writes a Starlark program that calls the server's other tools as functions, so the
//! intermediate results stay in the sandbox and only what the program returns reaches the
//! model.
//!
//! - [`with_evaluator`]: a catalog as `[evaluator]` serves it: plus the evaluator tool, and
//!   with `mode = "only"` every other tool but `tool_search` behind search.
//! - Each run goes through the catalog's own call path for every tool it calls (validation,
//!   the tool's timeout within the run's time constraint, its permissions, the caller's
//!   client for progress and logs, cancellation), as `execute_tool` does.
//! - Sessions keep a run's JSON-like globals and `def` functions in one file per session
//!   under `$XDG_DATA_HOME/toolsmith/sessions/`, named for the tools folder served (so two
//!   folders never share one), pruned by count, bytes and age.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use serde_json::json;
//! use toolsmith_model::{CallContext, Catalog, EvaluatorSettings};
//!
//! let settings = EvaluatorSettings { enabled: true, ..EvaluatorSettings::default() };
//! let served = toolsmith_code::with_evaluator(Arc::new(Catalog::new(Vec::new(), Vec::new())), &settings);
//! let arguments = json!({"code": "x = [n * n for n in range(4)]\nsum(x)"});
//! let context = CallContext::detached(Duration::from_secs(5));
//! let outcome = served.call("run_code", arguments.as_object().cloned().unwrap(), &context).unwrap();
//! assert_eq!(outcome.structured_content, Some(json!({"result": 14})));
//! ```

mod description;
mod options;
mod sessions;
mod tool;

use std::sync::Arc;

use toolsmith_model::{Catalog, EvaluatorMode, EvaluatorSettings, SearchMode, SearchSettings};
use toolsmith_search::{Plan, TOOL_SEARCH};

pub use options::{
    DEFAULT_MAX_SESSION_AGE, DEFAULT_MAX_SESSION_BYTES, DEFAULT_MAX_SESSION_COUNT,
    DEFAULT_TIME_CONSTRAINT, MAX_TIME_CONSTRAINT,
};

/// `catalog` (as `[search]` published it) with the evaluator `settings` describe: nothing
/// changes when it is off; otherwise the evaluator tool is added, calling every tool of
/// `catalog` (discoverable ones too), and with [`EvaluatorMode::Only`] every tool but
/// `tool_search` is marked `discoverable`, so `tools/list` shows just the two (the
/// `tool_search` and `execute_tool` built-ins are added when `catalog` has none).
///
/// A folder tool with the evaluator's name wins: the evaluator is left out with a
/// `duplicate-tool-name` diagnostic (unless `catalog` has one for that name already, as
/// the folder's load reports it).
pub fn with_evaluator(catalog: Arc<Catalog>, settings: &EvaluatorSettings) -> Arc<Catalog> {
    if !settings.enabled {
        return catalog;
    }
    let only = settings.mode == EvaluatorMode::Only;
    let catalog = if only && catalog.get(TOOL_SEARCH).is_none() {
        let always = SearchSettings {
            mode: SearchMode::Always,
            ..SearchSettings::default()
        };
        toolsmith_search::apply(
            catalog,
            &Plan::decide(always, None),
            toolsmith_search::IndexSource::default(),
        )
    } else {
        catalog
    };
    let discoverable = |entry: &toolsmith_model::CatalogEntry| {
        if only {
            entry.definition().name != TOOL_SEARCH
        } else {
            entry.discoverable()
        }
    };
    let reported = catalog.diagnostics().iter().any(|diagnostic| {
        diagnostic.rule == "duplicate-tool-name"
            && diagnostic.tool.as_deref() == Some(settings.name.as_str())
    });
    if reported && catalog.get(&settings.name).is_some() {
        return Arc::new(catalog.derive(discoverable, Vec::new(), Vec::new()));
    }
    let evaluator = tool::RunCode::new(
        Arc::clone(&catalog),
        &settings.name,
        &settings.options,
        settings.folder.as_deref(),
    );
    Arc::new(catalog.derive(discoverable, vec![Arc::new(evaluator)], Vec::new()))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use serde_json::json;
    use toolsmith_model::{CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn};

    use super::*;

    /// A tool that counts its calls.
    struct Counted(ToolDefinition, Arc<AtomicUsize>);

    impl Tool for Counted {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(&self, _: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            self.1.fetch_add(1, Ordering::SeqCst);
            Ok(ToolReturn::Text("called".into()))
        }
    }

    fn text(outcome: &toolsmith_model::CallOutcome) -> String {
        serde_json::to_string(&outcome.content).unwrap()
    }

    /// The folder's load reports a tool named as the evaluator; serving it says so once.
    #[test]
    fn a_reported_name_clash_serves_the_tool_without_a_second_diagnostic() {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let tool = Counted(
            ToolDefinition::new("run_code", "A folder's own tool of that name.", schema),
            Arc::new(AtomicUsize::new(0)),
        );
        let reported = toolsmith_model::Diagnostic::error(
            "duplicate-tool-name",
            toolsmith_model::SourceLocation::file("toolsmith.toml"),
            "the code-mode evaluator is named `run_code`, as a tool is",
        )
        .for_tool("run_code");
        let catalog = Arc::new(Catalog::new(vec![Arc::new(tool)], vec![reported]));
        let settings = EvaluatorSettings {
            enabled: true,
            ..EvaluatorSettings::default()
        };
        let served = with_evaluator(catalog, &settings);
        let names: Vec<_> = served
            .definitions()
            .map(|d| d.description.clone())
            .collect();
        assert_eq!(names, ["A folder's own tool of that name."]);
        assert_eq!(served.diagnostics().len(), 1, "{:?}", served.diagnostics());

        // Not reported by the load (an embedder's catalog): the served catalog says it.
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let tool = Counted(
            ToolDefinition::new("run_code", "A folder's own tool of that name.", schema),
            Arc::new(AtomicUsize::new(0)),
        );
        let catalog = Arc::new(Catalog::new(vec![Arc::new(tool)], Vec::new()));
        let served = with_evaluator(catalog, &settings);
        assert_eq!(served.definitions().count(), 1);
        assert_eq!(served.diagnostics()[0].rule, "duplicate-tool-name");
    }

    /// A session file's `source` was run whole at restore, so a statement appended after a
    /// saved `def` (here a tool call) ran at the next run; so did a call in a default.
    #[test]
    fn a_session_restores_only_its_definitions() {
        let calls = Arc::new(AtomicUsize::new(0));
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let tool = Counted(
            ToolDefinition::new("wipe", "Wipes everything, for the test.", schema),
            Arc::clone(&calls),
        );
        let catalog = Arc::new(Catalog::new(vec![Arc::new(tool)], Vec::new()));
        let sessions = tempfile::tempdir().unwrap();
        let mut options = JsonObject::new();
        options.insert(
            "sessions_dir".into(),
            json!(sessions.path().display().to_string()),
        );
        let settings = EvaluatorSettings {
            enabled: true,
            options,
            ..EvaluatorSettings::default()
        };
        let served = with_evaluator(catalog, &settings);
        let file = sessions.path().join("shared--s1.json");
        let saved = json!({
            "format": 1,
            "saved": 0,
            "values": {"n": 2},
            "definitions": [
                {"name": "f", "source": "def f():\n    return n\nx = tools.wipe()"},
                {"name": "g", "source": "def g(y = tools.wipe()):\n    return y"},
                {"name": "h", "source": "def h(y = [1, -2]):\n    return len(y) + n"},
            ],
        });
        std::fs::write(&file, saved.to_string()).unwrap();
        let arguments = json!({"session": "s1", "code": "h()"});
        let context = CallContext::detached(Duration::from_secs(10));
        let outcome = served
            .call(
                "run_code",
                arguments.as_object().cloned().unwrap(),
                &context,
            )
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{}", text(&outcome));
        assert_eq!(outcome.structured_content, Some(json!({"result": 4})));
        let shown = text(&outcome);
        assert!(
            shown.contains("`f` from the session could not be restored: its saved source is not a single `def` statement"),
            "{shown}"
        );
        assert!(
            shown.contains(
                "`g` from the session could not be restored: a parameter's default calls a function"
            ),
            "{shown}"
        );
    }
}
