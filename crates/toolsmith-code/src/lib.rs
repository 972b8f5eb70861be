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
//!   under `$XDG_DATA_HOME/toolsmith/sessions/`, pruned by count, bytes and age.
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
/// `duplicate-tool-name` diagnostic.
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
    let evaluator = tool::RunCode::new(Arc::clone(&catalog), &settings.name, &settings.options);
    let discoverable = |entry: &toolsmith_model::CatalogEntry| {
        if only {
            entry.definition().name != TOOL_SEARCH
        } else {
            entry.discoverable()
        }
    };
    Arc::new(catalog.derive(discoverable, vec![Arc::new(evaluator)], Vec::new()))
}
