//! A search index kept between runs (docs/search.md, "The kept index"): indexing thousands
//! of tools takes longer than the rest of a server's start, so `toolsmith serve` and
//! `toolsmith search` keep the index they build, with what `tool_search` shows of each tool,
//! and the next run of the same folder searches it at once: before its files have loaded,
//! and without building the index again. Where it is kept and when it is still
//! good is the caller's business; here is what is kept and how it is used.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_model::{CallOutcome, Catalog, CatalogEntry, JsonObject, ToolDefinition};

use crate::builtins::{self, Shown};
use crate::index::SearchIndex;

/// What `tool_search` shows of one tool: kept beside the index, so a kept index answers
/// before the tools it indexes are loaded. Borrowed from a definition to be written, owned
/// once read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeptTool<'a> {
    /// The tool's name.
    pub name: Cow<'a, str>,
    /// Its title.
    pub title: Option<Cow<'a, str>>,
    /// Its description.
    pub description: Cow<'a, str>,
    /// Its input schema as JSON text (read only for the tools found).
    pub input_schema: Cow<'a, str>,
}

impl<'a> KeptTool<'a> {
    /// What `tool_search` shows of `definition`, borrowed.
    #[must_use]
    pub fn of(definition: &'a ToolDefinition) -> Self {
        Self {
            name: Cow::Borrowed(&definition.name),
            title: definition.title.as_deref().map(Cow::Borrowed),
            description: Cow::Borrowed(&definition.description),
            input_schema: Cow::Borrowed(definition.input_schema.text()),
        }
    }

    /// What `tool_search` shows of `definition`, borrowed or taken.
    #[must_use]
    pub fn from_definition(definition: Cow<'a, ToolDefinition>) -> Self {
        match definition {
            Cow::Borrowed(definition) => Self::of(definition),
            Cow::Owned(definition) => Self {
                input_schema: Cow::Owned(definition.input_schema.text().to_owned()),
                name: Cow::Owned(definition.name),
                title: definition.title.map(Cow::Owned),
                description: Cow::Owned(definition.description),
            },
        }
    }

    /// Its input schema.
    #[must_use]
    pub fn input_schema(&self) -> Value {
        serde_json::from_str(&self.input_schema).unwrap_or(Value::Null)
    }
}

/// What `tool_search` shows of each tool of a catalog, in its order, written as a sequence
/// of [`KeptTool`]s one tool at a time: a deferred tool is read from its file for it and
/// not held (docs/performance.md, "Tools not held").
pub struct KeptTools<'a>(pub &'a Catalog);

impl Serialize for KeptTools<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(
            self.0
                .entries()
                .iter()
                .map(|entry| KeptTool::from_definition(entry.definition_once())),
        )
    }
}

/// An index with, in its order, what `tool_search` shows of each of its tools.
pub struct KeptIndex {
    index: Arc<SearchIndex>,
    tools: Vec<KeptTool<'static>>,
}

impl KeptIndex {
    /// `index` and its `tools`, when they are the same tools in the same order.
    #[must_use]
    pub fn new(index: SearchIndex, tools: Vec<KeptTool<'static>>) -> Option<Self> {
        index
            .indexes(tools.iter().map(|tool| &*tool.name))
            .then(|| Self {
                index: Arc::new(index),
                tools,
            })
    }

    /// The index.
    #[must_use]
    pub fn index(&self) -> &Arc<SearchIndex> {
        &self.index
    }

    /// The kept tool named `name`.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&KeptTool<'static>> {
        // The index holds a catalog's tools in its order, which is by name.
        let at = self
            .tools
            .binary_search_by(|tool| (*tool.name).cmp(name))
            .ok()?;
        self.tools.get(at)
    }

    /// `tool_search`'s answer to `arguments`, when they are what its input schema accepts
    /// (a non-empty `query`, a `max_results` from 1 to 50); `None` otherwise, for the
    /// server's call path to refuse once the tools are loaded.
    #[must_use]
    pub fn search(&self, arguments: &JsonObject) -> Option<CallOutcome> {
        let (query, limit) = builtins::plain_search_arguments(arguments)?;
        let judged = self.index.search_judged(query, limit);
        Some(builtins::answer(query, &judged, |name| {
            let tool = self.tool(name)?;
            Some(Shown {
                title: tool.title.as_deref(),
                description: &tool.description,
                input_schema_text: &tool.input_schema,
            })
        }))
    }
}

/// Where the `tool_search` built for a catalog gets its index: one offered (kept from an
/// earlier run), used when it indexes exactly the catalog's tools, and who is handed the
/// index it builds otherwise, to keep it.
#[derive(Clone, Default)]
pub struct IndexSource {
    /// An index built before, of the tools it names.
    pub offered: Option<Arc<SearchIndex>>,
    /// Called once with the index `tool_search` built over its catalog (not one offered),
    /// on the thread that prepares the tool (`Tool::prepare`), off any call's path.
    pub built: Option<KeepIndex>,
}

/// Keeps an index built over a catalog ([`IndexSource::built`]).
pub type KeepIndex = Arc<dyn Fn(&SearchIndex, &Catalog) + Send + Sync>;

impl std::fmt::Debug for IndexSource {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("IndexSource")
            .field("offered", &self.offered.as_ref().map(|index| index.len()))
            .field("built", &self.built.is_some())
            .finish()
    }
}

impl IndexSource {
    /// The offered index, when it indexes exactly `catalog`'s tools, in its order.
    pub(crate) fn offered_for(&self, catalog: &Catalog) -> Option<Arc<SearchIndex>> {
        let offered = self.offered.as_ref()?;
        let names = catalog.entries().iter().map(CatalogEntry::name);
        offered.indexes(names).then(|| Arc::clone(offered))
    }
}
