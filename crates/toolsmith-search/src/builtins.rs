//! The built-in discovery tools, `tool_search` and `execute_tool` (docs/search.md, "The
//! built-in tools"): ordinary [`Tool`]s added to a catalog that has discoverable tools, so a
//! server calls them through the same path as any other tool.
//!
//! A folder tool with a built-in's name wins: the built-in is left out and the catalog
//! carries a `builtin-tool-shadowed` warning, so nothing changes silently.

use std::sync::{Arc, Once, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};
use toolsmith_model::{
    CallContext, CallOutcome, Caller, Catalog, CatalogEntry, Content, Diagnostic, JsonObject,
    Severity, SourceLocation, Tool, ToolDefinition, ToolFailure, ToolReturn, UnknownTool, may_use,
};

use crate::index::{Hit, Judged, SearchIndex};
use crate::kept::IndexSource;

/// The name of the search built-in.
pub const TOOL_SEARCH: &str = "tool_search";
/// The name of the built-in that runs a tool by name.
pub const EXECUTE_TOOL: &str = "execute_tool";

/// The description of `tool_search`.
const TOOL_SEARCH_DESCRIPTION: &str = "Search the tools that are not listed. Returns the best \
     matches, each with its name, description and inputSchema; run one with `execute_tool`.";
/// The description of `execute_tool`.
const EXECUTE_TOOL_DESCRIPTION: &str =
    "Run a tool found with `tool_search`, by name, with its arguments.";

/// Whether `definition` is one of these built-ins as a Toolsmith server publishes it (its
/// name and description), for `toolsmith check --upstream`, which exempts them: they are
/// Toolsmith's, not the author's, and a lint of them is no finding the author can fix.
pub fn is_builtin(definition: &ToolDefinition) -> bool {
    [
        (TOOL_SEARCH, TOOL_SEARCH_DESCRIPTION),
        (EXECUTE_TOOL, EXECUTE_TOOL_DESCRIPTION),
    ]
    .iter()
    .any(|(name, description)| definition.name == *name && definition.description == *description)
}

/// How many results `tool_search` returns unless asked otherwise.
const DEFAULT_MAX_RESULTS: u64 = 5;
/// The most results one `tool_search` returns.
const MOST_RESULTS: u64 = 50;

/// The `tool_search` and `execute_tool` built-ins for `catalog`, which they search and run
/// (listed and discoverable tools alike), and a `builtin-tool-shadowed` warning for each one
/// left out because a tool of `catalog` has its name.
pub(crate) fn builtins(
    catalog: &Arc<Catalog>,
    source: IndexSource,
) -> (Vec<Arc<dyn Tool>>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut tools = Vec::new();
    let builtins: [Arc<dyn Tool>; 2] = [
        Arc::new(ToolSearch::new(Arc::clone(catalog), source)),
        Arc::new(ExecuteTool::new(Arc::clone(catalog))),
    ];
    for builtin in builtins {
        let name = &builtin.definition().name;
        if let Some(entry) = catalog.get(name) {
            let mut warning = Diagnostic::error(
                "builtin-tool-shadowed",
                entry.definition().source.clone(),
                format!("tool `{name}` hides the built-in discovery tool of the same name"),
            )
            .with_help("rename the tool so models can search and run discoverable tools");
            warning.severity = Severity::Warning;
            diagnostics.push(warning);
        } else {
            tools.push(builtin);
        }
    }
    (tools, diagnostics)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// `{"results": [{name, title, description, score, inputSchema}]}` for `hits` of `catalog`:
/// the structured content of `tool_search`, with everything needed to call each tool.
pub fn results(catalog: &Catalog, hits: &[Hit]) -> Value {
    found_results(hits, |name| {
        catalog.get(name).map(|entry| Shown::of(entry.definition()))
    })
}

/// What `tool_search` shows of a tool found, besides its name and score.
pub(crate) struct Shown<'a> {
    pub(crate) title: Option<&'a str>,
    pub(crate) description: &'a str,
    pub(crate) input_schema_text: &'a str,
}

impl<'a> Shown<'a> {
    fn of(definition: &'a ToolDefinition) -> Self {
        Self {
            title: definition.title.as_deref(),
            description: &definition.description,
            input_schema_text: definition.input_schema.text(),
        }
    }
}

/// [`results`] of the tools `found` tells about.
fn found_results<'a>(hits: &[Hit], found: impl Fn(&str) -> Option<Shown<'a>>) -> Value {
    let results: Vec<Value> = hits
        .iter()
        .filter_map(|hit| {
            let tool = found(&hit.name)?;
            let input_schema = serde_json::from_str(tool.input_schema_text).unwrap_or(Value::Null);
            Some(result(
                &hit.name,
                tool.title,
                tool.description,
                hit.score,
                input_schema,
            ))
        })
        .collect();
    json!({ "results": results })
}

/// `tool_search`'s answer to `query`: the hits of `judged`, each with what `found` tells
/// about it, as text (a line a tool with its input schema) and as [`results`]; or, when no
/// tool fits (the no-fit floor, docs/search.md), no tools and a `note` that says so.
pub(crate) fn answer<'a>(
    query: &str,
    judged: &Judged,
    found: impl Fn(&str) -> Option<Shown<'a>>,
) -> CallOutcome {
    if let Some(note) = judged.verdict.note(query) {
        return CallOutcome {
            content: vec![Content::text(note.clone())],
            structured_content: Some(json!({ "results": [], "note": note })),
            is_error: false,
            meta: None,
        };
    }
    let hits = &judged.hits;
    let text: Vec<String> = hits
        .iter()
        .filter_map(|hit| {
            let tool = found(&hit.name)?;
            Some(format!(
                "{} ({}): {}\n  inputSchema: {}",
                hit.name, hit.score, tool.description, tool.input_schema_text,
            ))
        })
        .collect();
    let text = if text.is_empty() {
        format!("no tool matches `{query}`; try other words")
    } else {
        text.join("\n")
    };
    CallOutcome {
        content: vec![Content::text(text)],
        structured_content: Some(found_results(hits, found)),
        is_error: false,
        meta: None,
    }
}

/// The query and how many results `arguments` ask `tool_search` for, read as its call
/// path reads them (after validation).
fn search_arguments(arguments: &JsonObject) -> (&str, usize) {
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let limit = arguments
        .get("max_results")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MOST_RESULTS);
    (query, usize::try_from(limit).unwrap_or(usize::MAX))
}

/// [`search_arguments`] of `arguments` that `tool_search`'s input schema accepts as they
/// are: a non-empty `query` string, a `max_results` integer from 1 to 50 or none. `None`
/// for any other: only validation may answer those.
pub(crate) fn plain_search_arguments(arguments: &JsonObject) -> Option<(&str, usize)> {
    let query = arguments.get("query")?.as_str()?;
    let limit_ok = match arguments.get("max_results") {
        None => true,
        Some(limit) => limit
            .as_u64()
            .is_some_and(|limit| (1..=MOST_RESULTS).contains(&limit)),
    };
    (!query.is_empty() && limit_ok).then(|| search_arguments(arguments))
}

/// One of [`results`]: a found tool with its score and what it takes to call it.
pub fn result(
    name: &str,
    title: Option<&str>,
    description: &str,
    score: f64,
    input_schema: Value,
) -> Value {
    let mut result = JsonObject::new();
    result.insert("name".into(), json!(name));
    if let Some(title) = title {
        result.insert("title".into(), json!(title));
    }
    result.insert("description".into(), json!(description));
    result.insert("score".into(), json!(score));
    result.insert("inputSchema".into(), input_schema);
    Value::Object(result)
}

/// `tool_search(query, max_results=5)`: the best-matching tools with everything needed to
/// call them.
struct ToolSearch {
    definition: ToolDefinition,
    /// Built by the first search, or ahead of it on a thread of the server's when the
    /// catalog is published, so serving a large folder starts without waiting for it; or
    /// the one `source` offers.
    index: OnceLock<Arc<SearchIndex>>,
    source: IndexSource,
    /// Whether the index was handed to `source` to be kept (by [`Tool::prepare`], off any
    /// call's path).
    kept: Once,
    catalog: Arc<Catalog>,
}

impl ToolSearch {
    fn new(catalog: Arc<Catalog>, source: IndexSource) -> Self {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the tool should do, in a few words (e.g. \"weather forecast for a city\")",
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MOST_RESULTS,
                    "default": DEFAULT_MAX_RESULTS,
                    "description": "How many tools to return, best first",
                },
            },
            "required": ["query"],
        }));
        let mut definition = ToolDefinition::new(TOOL_SEARCH, TOOL_SEARCH_DESCRIPTION, schema);
        definition.title = Some("Search tools".into());
        definition.annotations.read_only = Some(true);
        definition.source = SourceLocation::file("<builtin>");
        Self {
            definition,
            index: OnceLock::new(),
            source,
            kept: Once::new(),
            catalog,
        }
    }
}

impl ToolSearch {
    /// The index of the catalog: the one its source offers when that indexes these very
    /// tools, else built by the first search or [`Tool::prepare`].
    fn index(&self) -> &Arc<SearchIndex> {
        self.index.get_or_init(|| {
            self.source
                .offered_for(&self.catalog)
                // Read once each: a deferred tool is not held for it (docs/performance.md).
                .unwrap_or_else(|| Arc::new(SearchIndex::new(self.catalog.definitions_once())))
        })
    }
}

impl Tool for ToolSearch {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Builds the index, and hands one built here (not offered) to the source to keep.
    fn prepare(&self) {
        let index = self.index();
        if let Some(keep) = &self.source.built {
            let offered = self
                .source
                .offered
                .as_ref()
                .is_some_and(|offered| Arc::ptr_eq(offered, index));
            self.kept.call_once(|| {
                if !offered {
                    keep(index, &self.catalog);
                }
            });
        }
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let (query, limit) = search_arguments(arguments);
        let index = self.index();
        // Tools the caller's scopes do not cover are not found (docs/auth.md); searching
        // the whole catalog first keeps one index for every caller.
        let caller = context.caller.as_deref();
        let judged = if caller.is_some() {
            let mut judged = index.search_judged(query, usize::MAX);
            judged.hits.retain(|hit| {
                self.catalog
                    .get(&hit.name)
                    .is_some_and(|entry| may_use(caller, &entry.definition().scopes))
            });
            judged.hits.truncate(limit);
            judged
        } else {
            index.search_judged(query, limit)
        };
        let found = |name: &str| {
            self.catalog
                .get(name)
                .map(|entry| Shown::of(entry.definition()))
        };
        Ok(ToolReturn::Outcome(answer(query, &judged, found)))
    }
}

/// `execute_tool(name, arguments)`: runs a tool by name through the catalog's validated call
/// path. Scriptling's `parameters` key is accepted for `arguments`.
struct ExecuteTool {
    definition: ToolDefinition,
    catalog: Arc<Catalog>,
}

impl ExecuteTool {
    fn new(catalog: Arc<Catalog>) -> Self {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The tool to run, as `tool_search` named it",
                },
                "arguments": {
                    "type": "object",
                    "description": "The tool's arguments, matching its inputSchema",
                },
                "parameters": {
                    "type": "object",
                    "description": "Another name for `arguments`",
                },
            },
            "required": ["name"],
        }));
        let mut definition = ToolDefinition::new(EXECUTE_TOOL, EXECUTE_TOOL_DESCRIPTION, schema);
        definition.title = Some("Run a tool".into());
        definition.source = SourceLocation::file("<builtin>");
        // The call path applies this tool's timeout; the tool it runs keeps its own.
        definition.timeout = catalog
            .entries()
            .iter()
            .map(CatalogEntry::effective_timeout)
            .max();
        Self {
            definition,
            catalog,
        }
    }
}

impl Tool for ExecuteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let name = arguments
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let inner = inner_arguments(arguments)?;
        let outcome = execute(&self.catalog, name, inner, context).map_err(|unknown| {
            ToolFailure::failed(format!(
                "{unknown}\nuse `{TOOL_SEARCH}` to find tools by what they do"
            ))
        })?;
        Ok(ToolReturn::Outcome(outcome))
    }
}

/// The arguments a tool that runs another tool was given for it: its `arguments` object
/// (Scriptling's `parameters` is accepted too), empty when there is none.
pub fn inner_arguments(arguments: &JsonObject) -> Result<JsonObject, ToolFailure> {
    match arguments
        .get("arguments")
        .or_else(|| arguments.get("parameters"))
    {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(inner)) => Ok(inner.clone()),
        Some(_) => Err(ToolFailure::failed(
            "`arguments` must be an object of the tool's arguments",
        )),
    }
}

/// Runs the tool `name` of `catalog` from inside another tool's call (`execute_tool`, the
/// `toolsmith_call` of `serve --profile toolsmith-dev`), through the catalog's validated
/// call path: its own timeout within the caller's deadline, its own options, the caller's
/// client and interrupt. The client's bridge hears of the call once it ended
/// ([`toolsmith_model::ClientBridge::inner_call`], for the audit log) when it asks to.
pub fn execute(
    catalog: &Catalog,
    name: &str,
    arguments: JsonObject,
    context: &CallContext,
) -> Result<CallOutcome, UnknownTool> {
    if !context.client.audits_inner_calls() {
        return execute_with_kind(catalog, name, arguments, context).map(|(outcome, _)| outcome);
    }
    let started = Instant::now();
    let given = arguments.clone();
    let executed = execute_with_kind(catalog, name, arguments, context);
    let (outcome, kind) = match &executed {
        Ok((outcome, kind)) => (Some(outcome), *kind),
        Err(_) => (None, toolsmith_model::OutcomeKind::UnknownTool),
    };
    context.client.inner_call(&toolsmith_model::InnerCall {
        tool: name,
        arguments: &given,
        outcome,
        kind,
        elapsed: started.elapsed(),
    });
    executed.map(|(outcome, _)| outcome)
}

/// [`execute`], and how the call ended (as `/metrics` counts it).
fn execute_with_kind(
    catalog: &Catalog,
    name: &str,
    arguments: JsonObject,
    context: &CallContext,
) -> Result<(CallOutcome, toolsmith_model::OutcomeKind), UnknownTool> {
    let entry = catalog.lookup(name)?;
    let definition = entry.definition();
    if let Some(outcome) = out_of_scope(definition, context.caller.as_deref()) {
        return Ok((outcome, toolsmith_model::OutcomeKind::InvalidRequest));
    }
    let deadline = context
        .deadline
        .min(Instant::now() + definition.effective_timeout());
    let context = CallContext {
        deadline,
        options: definition.options.clone(),
        ..context.clone()
    };
    Ok(entry.call_with_kind(arguments, &context))
}

/// The `isError` outcome of a call of a tool whose scopes `caller` does not hold, naming
/// the scope it lacks (docs/auth.md, "Tools by scope"); `None` when the call may run.
pub fn out_of_scope(definition: &ToolDefinition, caller: Option<&Caller>) -> Option<CallOutcome> {
    let missing = caller?.missing(&definition.scopes)?;
    Some(CallOutcome::error(format!(
        "insufficient_scope: tool `{}` requires the scope `{missing}`, which the access token does not hold",
        definition.name
    )))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::kept::{KeptIndex, KeptTool};

    struct Add(ToolDefinition);

    impl Tool for Add {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(&self, arguments: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            let a = arguments["a"].as_i64().unwrap_or_default();
            let b = arguments["b"].as_i64().unwrap_or_default();
            Ok(ToolReturn::Text(format!("{a} + {b} = {}", a + b)))
        }
    }

    // The server builds the index when it publishes the catalog, so the first
    // search finds it made.
    #[test]
    fn prepare_builds_the_index_a_search_then_uses() {
        let search = ToolSearch::new(catalog(true, None), IndexSource::default());
        assert!(search.index.get().is_none(), "nothing is built until asked");
        search.prepare();
        let built = Arc::clone(search.index.get().expect("prepare built the index"));
        assert_eq!(search.index().search("sum two numbers", 1)[0].name, "add");
        assert!(
            Arc::ptr_eq(&built, search.index()),
            "the search used the prepared index"
        );
    }

    // An index kept from an earlier run is searched instead of building one,
    // only when it indexes the very same tools; one built is handed over to be kept, once.
    #[test]
    fn an_offered_index_of_the_same_tools_is_used_and_a_built_one_is_handed_over() {
        let kept_count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&kept_count);
        let built: crate::KeepIndex = Arc::new(move |index: &SearchIndex, catalog: &Catalog| {
            assert_eq!(index.len(), catalog.entries().len());
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let fresh = ToolSearch::new(
            catalog(true, None),
            IndexSource {
                offered: None,
                built: Some(Arc::clone(&built)),
            },
        );
        fresh.prepare();
        fresh.prepare();
        assert_eq!(kept_count.load(std::sync::atomic::Ordering::SeqCst), 1);

        let offered = Arc::new(SearchIndex::new(catalog(true, None).definitions()));
        let same = ToolSearch::new(
            catalog(true, None),
            IndexSource {
                offered: Some(Arc::clone(&offered)),
                built: Some(Arc::clone(&built)),
            },
        );
        same.prepare();
        assert!(
            Arc::ptr_eq(same.index(), &offered),
            "the offered index is searched"
        );
        assert_eq!(
            kept_count.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "an offered index is not kept again"
        );

        let other = ToolSearch::new(
            catalog(true, Some("extra")),
            IndexSource {
                offered: Some(Arc::clone(&offered)),
                built: None,
            },
        );
        assert!(
            !Arc::ptr_eq(other.index(), &offered),
            "an index of other tools is not searched"
        );
        assert_eq!(other.index().len(), 2);
    }

    // The kept index answers `tool_search` as the loaded catalog's would, and
    // leaves arguments only validation may answer to the call path.
    #[test]
    fn a_kept_index_answers_as_the_loaded_tool_search_does() {
        let catalog = catalog(true, Some("notes"));
        let index = SearchIndex::new(catalog.definitions());
        let tools = catalog
            .definitions()
            .map(|definition| {
                let KeptTool {
                    name,
                    title,
                    description,
                    input_schema,
                } = KeptTool::of(definition);
                KeptTool {
                    name: name.into_owned().into(),
                    title: title.map(|title| title.into_owned().into()),
                    description: description.into_owned().into(),
                    input_schema: input_schema.into_owned().into(),
                }
            })
            .collect();
        let kept = KeptIndex::new(index, tools).expect("the same tools in the same order");
        let arguments = object(json!({"query": "sum two numbers", "max_results": 2}));
        let early = kept
            .search(&arguments)
            .expect("plain arguments are answered");
        let served = call(&discover(catalog), TOOL_SEARCH, Value::Object(arguments));
        assert_eq!(early, served);
        for refused in [
            json!({"query": ""}),
            json!({"query": "sum", "max_results": 0}),
            json!({"query": "sum", "max_results": 51}),
            json!({"max_results": 2}),
        ] {
            assert!(kept.search(&object(refused.clone())).is_none(), "{refused}");
        }
    }

    fn catalog(discoverable: bool, extra: Option<&str>) -> Arc<Catalog> {
        let schema = object(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }));
        let mut add = ToolDefinition::new("add", "Calculate the sum of two numbers.", schema);
        add.discoverable = discoverable;
        let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Add(add))];
        if let Some(name) = extra {
            let definition =
                ToolDefinition::new(name, "A folder tool.", object(json!({"type": "object"})));
            tools.push(Arc::new(Add(definition)));
        }
        Arc::new(Catalog::new(tools, Vec::new()))
    }

    fn discover(catalog: Arc<Catalog>) -> Arc<Catalog> {
        crate::with_discovery(
            catalog,
            toolsmith_model::SearchSettings::default(),
            IndexSource::default(),
        )
    }

    fn call(catalog: &Catalog, name: &str, arguments: Value) -> CallOutcome {
        let context = CallContext::detached(Duration::from_secs(5));
        catalog.call(name, object(arguments), &context).unwrap()
    }

    #[test]
    fn builtins_are_added_only_with_discoverable_tools() {
        let names = |catalog: &Catalog| -> Vec<String> {
            catalog.definitions().map(|d| d.name.clone()).collect()
        };
        assert_eq!(names(&discover(catalog(false, None))), ["add"]);
        assert_eq!(
            names(&discover(catalog(true, None))),
            ["add", "execute_tool", "tool_search"]
        );
    }

    #[test]
    fn search_returns_callable_results() {
        let catalog = discover(catalog(true, None));
        let outcome = call(&catalog, TOOL_SEARCH, json!({"query": "sum two numbers"}));
        let results = &outcome.structured_content.unwrap()["results"];
        assert_eq!(results[0]["name"], "add");
        assert_eq!(results[0]["inputSchema"]["required"], json!(["a", "b"]));
        assert!(outcome.content[0] != Content::text(""));
    }

    #[test]
    fn execute_runs_the_tool_with_either_key() {
        let catalog = discover(catalog(true, None));
        for key in ["arguments", "parameters"] {
            let outcome = call(
                &catalog,
                EXECUTE_TOOL,
                json!({"name": "add", key: {"a": 2, "b": 3}}),
            );
            assert_eq!(outcome.joined_text(), "2 + 3 = 5");
        }
        let invalid = call(
            &catalog,
            EXECUTE_TOOL,
            json!({"name": "add", "arguments": {"a": "x"}}),
        );
        assert!(invalid.is_error);
    }

    #[test]
    fn unknown_name_suggests_a_tool() {
        let catalog = discover(catalog(true, None));
        let outcome = call(
            &catalog,
            EXECUTE_TOOL,
            json!({"name": "ad", "arguments": {}}),
        );
        assert!(outcome.is_error);
        assert!(
            outcome.joined_text().contains("did you mean `add`"),
            "{}",
            outcome.joined_text()
        );
    }

    #[test]
    fn folder_tool_wins_over_a_builtin_with_a_warning() {
        let catalog = discover(catalog(true, Some(TOOL_SEARCH)));
        let search = catalog.get(TOOL_SEARCH).unwrap();
        assert_eq!(search.definition().description, "A folder tool.");
        let warning = &catalog.diagnostics()[0];
        assert_eq!(warning.rule, "builtin-tool-shadowed");
        assert_eq!(warning.severity, Severity::Warning);
        assert!(catalog.get(EXECUTE_TOOL).is_some());
    }
}
