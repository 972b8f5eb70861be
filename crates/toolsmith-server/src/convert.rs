//! Model ⇄ rmcp types. Each tool is converted once per catalog, when first listed or
//! looked up (through serde, from exactly what [`ToolDefinition::to_mcp`] publishes, its
//! schemas shared rather than copied), and cached; call results are built directly from a
//! [`CallOutcome`] on the hot path, without a JSON round trip.

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks the logging types deprecated (SEP-2577); they still work"
)]

use std::sync::{Arc, OnceLock};

use crate::metrics::{Metrics, ToolMetrics};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::{
    Annotations, AudioContent, CallToolResult, ContentBlock, EmbeddedResource as EmbeddedBlock,
    ImageContent, LoggingLevel, MetaObject, Resource, ResourceContents, TextContent, Tool,
};
use tokio::sync::Semaphore;
use toolsmith_model::{
    CallOutcome, Caller, Catalog, CatalogEntry, Content, EvaluatorSettings, JsonObject, LogLevel,
    SearchSettings, ToolDefinition, may_use,
};
use toolsmith_search::IndexSource;

/// How many tools one `tools/list` page holds.
pub const PAGE_SIZE: usize = 100;

/// A catalog together with its tools converted to rmcp's `Tool` type, swapped as one unit
/// so a page of `tools/list` and a `tools/call` always see the same catalog.
pub(crate) struct Published {
    /// The catalog as given, before the `[search]` settings were applied.
    pub(crate) loaded: Arc<Catalog>,
    /// The catalog served: `loaded` with discovery applied.
    pub(crate) catalog: Arc<Catalog>,
    /// Every tool, in catalog order (by name), converted when first needed: `tools` and
    /// `catalog.entries()` line up. A folder of thousands of tools behind `tool_search`
    /// converts only the few it lists (docs/performance.md); boxed, so the thousands never
    /// converted cost a pointer each, not a `Tool`'s 224 bytes.
    tools: Vec<OnceLock<Box<Tool>>>,
    /// Indexes into `tools` of the tools `tools/list` shows (not `discoverable`).
    listed: Vec<usize>,
    /// Each tool's own call slots, in catalog order ([`tool_slots`]).
    pub(crate) tool_slots: Vec<Arc<Semaphore>>,
    /// Each tool's counters, in catalog order, looked up on its first call (not per call,
    /// and not for the thousands of tools of a big folder that are never called; boxed for
    /// them).
    tool_metrics: Vec<OnceLock<Box<ToolMetrics>>>,
}

/// Each tool's own call slots, in catalog order: its `max_concurrency`, else three quarters
/// of the server's `max_calls` (at least one), so one tool's calls cannot take every slot
/// and calls of other tools still start.
fn tool_slots(catalog: &Catalog, max_calls: usize) -> Vec<Arc<Semaphore>> {
    let share = max_calls.saturating_sub(max_calls.div_ceil(4)).max(1);
    catalog
        .entries()
        .iter()
        .map(|entry| {
            let slots = entry.max_concurrency().unwrap_or(share);
            Arc::new(Semaphore::new(slots.clamp(1, Semaphore::MAX_PERMITS)))
        })
        .collect()
}

impl Published {
    /// Converts every tool of `catalog` once, after adding the `tool_search` and
    /// `execute_tool` built-ins when some tool is discoverable (docs/search.md, "The
    /// built-in tools") and the `run_code` evaluator when `evaluator` turns it on
    /// (docs/code-mode.md), for a server running at most `max_calls` calls at once.
    pub(crate) fn new(
        catalog: Arc<Catalog>,
        search: SearchSettings,
        evaluator: &EvaluatorSettings,
        max_calls: usize,
        index: IndexSource,
    ) -> Self {
        let loaded = Arc::clone(&catalog);
        let catalog = toolsmith_search::with_discovery(catalog, search, index);
        let catalog = toolsmith_code::with_evaluator(catalog, evaluator);
        let tools = catalog.entries().iter().map(|_| OnceLock::new()).collect();
        let listed = catalog
            .entries()
            .iter()
            .enumerate()
            .filter(|(_, entry)| !entry.discoverable())
            .map(|(index, _)| index)
            .collect();
        let tool_slots = tool_slots(&catalog, max_calls);
        let tool_metrics = catalog.entries().iter().map(|_| OnceLock::new()).collect();
        Self {
            loaded,
            catalog,
            tools,
            listed,
            tool_slots,
            tool_metrics,
        }
    }

    /// Whether `other` lists and publishes exactly the same tools.
    pub(crate) fn same_tools(&self, other: &Self) -> bool {
        self.listed == other.listed
            && self.catalog.entries().len() == other.catalog.entries().len()
            && self
                .catalog
                .entries()
                .iter()
                .zip(other.catalog.entries())
                .all(|(mine, theirs)| mine.publishes_as(theirs))
    }

    /// The counters of the tool at `index` of the catalog, in `metrics`.
    pub(crate) fn tool_metrics(&self, index: usize, metrics: &Metrics) -> &ToolMetrics {
        self.tool_metrics[index]
            .get_or_init(|| Box::new(metrics.tool(self.catalog.entries()[index].name())))
    }

    /// The converted tool at `index` of the catalog.
    fn tool_at(&self, index: usize) -> &Tool {
        self.tools[index]
            .get_or_init(|| Box::new(to_rmcp_tool(self.catalog.entries()[index].definition())))
    }

    /// The catalog index of the tool called `name` (listed or discoverable).
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        // Catalog entries are sorted by name (the stable order of `tools/list`).
        self.catalog
            .entries()
            .binary_search_by(|entry| entry.name().cmp(name))
            .ok()
    }

    /// Every tool served, listed or not, in catalog order, with its definition (whether it
    /// is discoverable, the scopes it needs).
    pub(crate) fn served(&self) -> impl Iterator<Item = (&Tool, &CatalogEntry)> {
        (0..self.tools.len())
            .map(|index| self.tool_at(index))
            .zip(self.catalog.entries())
    }

    /// The converted tool called `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.index_of(name).map(|index| self.tool_at(index))
    }

    /// One page of `tools/list`, starting at `cursor`, and the cursor of the next page.
    ///
    /// Cursors are opaque to clients (MCP spec, utilities/pagination); an invalid one is
    /// `-32602`. A `caller` sees only the tools its scopes cover (docs/auth.md), and pages
    /// over those.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
        caller: Option<&Caller>,
    ) -> Result<(Vec<Tool>, Option<String>), ErrorData> {
        let visible: Vec<usize>;
        let listed = if caller.is_none() {
            &self.listed
        } else {
            let entries = self.catalog.entries();
            visible = self
                .listed
                .iter()
                .copied()
                .filter(|&index| may_use(caller, &entries[index].definition().scopes))
                .collect();
            &visible
        };
        let start = match cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor)
                .filter(|&start| start <= listed.len())
                .ok_or_else(|| {
                    ErrorData::invalid_params(format!("invalid cursor `{cursor}`"), None)
                })?,
        };
        let end = start.saturating_add(size.max(1)).min(listed.len());
        let page = listed[start..end]
            .iter()
            .map(|&index| self.tool_at(index).clone())
            .collect();
        let next = (end < listed.len()).then(|| encode_cursor(end));
        Ok((page, next))
    }
}

/// Converts one definition through the JSON that `toolsmith list --json` prints, so the
/// wire form is exactly [`ToolDefinition::to_mcp`].
///
/// rmcp's `Tool` drops fields it does not model; that loss is logged here, once per
/// catalog, instead of going unnoticed.
fn to_rmcp_tool(definition: &ToolDefinition) -> Tool {
    // Converted without the schemas, which are then shared with the definition.
    let published = serde_json::Value::Object(definition.to_mcp_skeleton());
    match serde_json::from_value::<Tool>(published.clone()) {
        Ok(mut tool) => {
            if serde_json::to_value(&tool).ok().as_ref() != Some(&published) {
                tracing::warn!(tool = %definition.name, "rmcp's Tool type does not carry every field of this tool; some are not published");
            }
            // Parsed once and kept for the life of the definition: a listed tool is
            // listed again.
            tool.input_schema = Arc::clone(definition.input_schema.object());
            tool.output_schema = definition
                .output_schema
                .as_ref()
                .map(|schema| Arc::clone(schema.object()));
            tool
        }
        Err(error) => {
            // Only a definition rmcp cannot represent at all gets here (e.g. an icon with
            // a field of the wrong type); publish what is certain rather than nothing.
            tracing::warn!(tool = %definition.name, %error, "publishing a reduced tool definition");
            Tool::new(
                definition.name.clone(),
                definition.description.clone(),
                Arc::clone(definition.input_schema.object()),
            )
        }
    }
}

fn encode_cursor(start: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("tools:{start}"))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes)
        .ok()?
        .strip_prefix("tools:")?
        .parse()
        .ok()
}

/// A model outcome as an rmcp `CallToolResult`: moved, not serialized.
pub(crate) fn call_result(outcome: CallOutcome) -> CallToolResult {
    let CallOutcome {
        content,
        structured_content,
        is_error,
        meta,
    } = outcome;
    let content = content.into_iter().map(content_block).collect();
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = structured_content;
    result.meta = meta.map(rmcp::model::MetaObject);
    result
}

/// An `isError` result with one text block.
pub(crate) fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn content_block(content: Content) -> ContentBlock {
    match content {
        Content::Text {
            text,
            annotations,
            meta,
        } => {
            let mut block = TextContent::new(text);
            block.annotations = block_annotations(annotations);
            block.meta = meta.map(|meta| MetaObject(*meta));
            ContentBlock::Text(block)
        }
        Content::Image {
            data,
            mime_type,
            annotations,
            meta,
        } => {
            let mut block = ImageContent::new(data, mime_type);
            block.annotations = block_annotations(annotations);
            block.meta = meta.map(|meta| MetaObject(*meta));
            ContentBlock::Image(block)
        }
        Content::Audio {
            data,
            mime_type,
            annotations,
            meta,
        } => {
            let mut block = AudioContent::new(data, mime_type);
            block.annotations = block_annotations(annotations);
            block.meta = meta.map(|meta| MetaObject(*meta));
            ContentBlock::Audio(block)
        }
        Content::Resource {
            resource,
            annotations,
            meta,
        } => {
            let contents_meta = resource.meta.map(|meta| MetaObject(*meta));
            let contents = match (resource.text, resource.blob) {
                (Some(text), _) => ResourceContents::TextResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                    meta: contents_meta,
                },
                (None, blob) => ResourceContents::BlobResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    blob: blob.unwrap_or_default(),
                    meta: contents_meta,
                },
            };
            let mut block = EmbeddedBlock::new(contents);
            block.annotations = block_annotations(annotations);
            block.meta = meta.map(|meta| MetaObject(*meta));
            ContentBlock::Resource(block)
        }
        Content::ResourceLink {
            uri,
            name,
            description,
            mime_type,
            title,
            size,
            icons,
            annotations,
            meta,
        } => {
            let mut link = Resource::new(uri, name);
            link.description = description;
            link.mime_type = mime_type;
            link.title = title;
            link.size = size;
            link.icons = icons.map(|icons| {
                icons
                    .into_iter()
                    .filter_map(|icon| serde_json::from_value(icon).ok())
                    .collect()
            });
            link.annotations = block_annotations(annotations);
            link.meta = meta.map(|meta| MetaObject(*meta));
            ContentBlock::ResourceLink(link)
        }
    }
}

/// A block's annotations as rmcp types them; what does not read as annotations is left out.
fn block_annotations(annotations: Option<Box<JsonObject>>) -> Option<Annotations> {
    serde_json::from_value(serde_json::Value::Object(*annotations?)).ok()
}

/// The model's log level for an MCP one.
pub(crate) fn log_level(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

/// The MCP log level for a model one.
pub(crate) fn logging_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith_model::{
        CallContext, EmbeddedResource, Icon, JsonObject, Tool as ModelTool, ToolFailure,
        ToolReturn, Ui,
    };

    struct Fixed(ToolDefinition);

    impl ModelTool for Fixed {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(&self, _: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            Ok(ToolReturn::Text(String::new()))
        }
    }

    fn schema() -> JsonObject {
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
            .as_object()
            .cloned()
            .unwrap()
    }

    fn catalog(definitions: Vec<ToolDefinition>) -> Arc<Catalog> {
        let tools: Vec<Arc<dyn ModelTool>> = definitions
            .into_iter()
            .map(|d| Arc::new(Fixed(d)) as Arc<dyn ModelTool>)
            .collect();
        Arc::new(Catalog::new(tools, Vec::new()))
    }

    fn rich() -> ToolDefinition {
        let mut definition = ToolDefinition::new("forecast", "Get the weather.", schema());
        definition.title = Some("Forecast".into());
        definition.output_schema = Some(
            json!({"type": "object"})
                .as_object()
                .cloned()
                .unwrap()
                .into(),
        );
        definition.annotations.read_only = Some(true);
        definition.annotations.open_world = Some(false);
        definition.icons = vec![Icon {
            src: "data:image/png;base64,AAAA".into(),
            mime_type: Some("image/png".into()),
            sizes: vec!["48x48".into()],
            theme: Some("dark".into()),
        }];
        definition.meta.insert("example.com/x".into(), json!(1));
        definition.ui = Some(Ui {
            resource_uri: "ui://forecast/view.html".into(),
            visibility: vec!["model".into()],
        });
        definition
    }

    #[test]
    fn converted_tool_is_exactly_what_to_mcp_publishes() {
        let definition = rich();
        let tool = to_rmcp_tool(&definition);
        assert_eq!(serde_json::to_value(&tool).unwrap(), definition.to_mcp());
    }

    #[test]
    fn discoverable_tools_are_callable_but_not_listed() {
        let mut hidden = ToolDefinition::new("add", "Add.", schema());
        hidden.discoverable = true;
        let published = Published::new(
            catalog(vec![
                rich(),
                hidden,
                ToolDefinition::new("echo", "Echo.", schema()),
            ]),
            SearchSettings::default(),
            &EvaluatorSettings::default(),
            8,
            IndexSource::default(),
        );
        let (page, next) = published.page(None, PAGE_SIZE, None).unwrap();
        let names: Vec<&str> = page.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ["echo", "execute_tool", "forecast", "tool_search"]);
        assert_eq!(next, None);
        assert!(published.tool("add").is_some());
    }

    #[test]
    fn pages_follow_the_catalog_order() {
        let definitions = (0..5)
            .map(|i| ToolDefinition::new(format!("tool_{i}"), "A tool.", schema()))
            .collect();
        let published = Published::new(
            catalog(definitions),
            SearchSettings::default(),
            &EvaluatorSettings::default(),
            8,
            IndexSource::default(),
        );
        let (first, cursor) = published.page(None, 2, None).unwrap();
        assert_eq!(first.len(), 2);
        let (second, cursor) = published.page(cursor.as_deref(), 2, None).unwrap();
        assert_eq!(second[0].name, "tool_2");
        let (last, cursor) = published.page(cursor.as_deref(), 2, None).unwrap();
        assert_eq!((last.len(), cursor), (1, None));
    }

    #[test]
    fn invalid_cursor_is_invalid_params() {
        let published = Published::new(
            catalog(vec![rich()]),
            SearchSettings::default(),
            &EvaluatorSettings::default(),
            8,
            IndexSource::default(),
        );
        for cursor in ["nope", "dG9vbHM6OTk", ""] {
            let error = published.page(Some(cursor), 10, None).unwrap_err();
            assert_eq!(
                error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{cursor}"
            );
        }
    }

    #[test]
    fn call_result_matches_the_model_json() {
        let outcomes = [
            CallOutcome::text("hi"),
            CallOutcome::error("bad"),
            CallOutcome {
                content: vec![
                    Content::text("{\"a\":1}"),
                    Content::image("AAAA", "image/png"),
                    Content::audio("BBBB", "audio/wav"),
                    Content::resource(EmbeddedResource {
                        uri: "file:///a.txt".into(),
                        mime_type: None,
                        text: Some("a".into()),
                        blob: None,
                        meta: None,
                    }),
                    Content::resource(EmbeddedResource {
                        uri: "file:///b.bin".into(),
                        mime_type: Some("application/octet-stream".into()),
                        text: None,
                        blob: Some("AA==".into()),
                        meta: None,
                    }),
                    Content::resource_link("file:///c", "c", Some("see".into()), None),
                ],
                structured_content: Some(json!({"a": 1})),
                is_error: false,
                meta: None,
            },
            // An upstream's blocks pass through with their annotations and _meta.
            serde_json::from_value(json!({
                "content": [
                    {"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5},
                     "_meta": {"k": 1}},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png",
                     "annotations": {"lastModified": "2026-01-01T00:00:00Z"}},
                    {"type": "audio", "data": "BBBB", "mimeType": "audio/wav", "_meta": {"a": true}},
                    {"type": "resource", "resource": {"uri": "file:///a", "text": "a", "_meta": {"r": 2}},
                     "annotations": {"priority": 1.0}, "_meta": {"e": 3}},
                    {"type": "resource_link", "uri": "file:///c", "name": "c", "title": "C",
                     "size": 12, "icons": [{"src": "https://example.com/c.png"}],
                     "annotations": {"audience": ["assistant"]}, "_meta": {"l": 4}}
                ],
                "isError": false,
                "_meta": {"outer": "x"}
            }))
            .unwrap(),
        ];
        for outcome in outcomes {
            let expected = outcome.to_json();
            let mut actual = serde_json::to_value(call_result(outcome)).unwrap();
            // rmcp adds the 2026-07-28 discriminator and strips it for older peers.
            actual.as_object_mut().unwrap().remove("resultType");
            assert_eq!(actual, expected);
        }
    }
}
