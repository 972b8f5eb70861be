//! A tool whose definition is not held until something needs it: a folder of thousands of
//! manifests behind `tool_search` uses few of them, and each held definition (schema,
//! description, command) costs kilobytes (docs/performance.md, "Tools
//! not held").
//!
//! A [`Deferred`] tool keeps its name, its file and what the walks over every tool read
//! (the length `tools/list` would publish, its timeout, its call slots). Its file is read
//! again when something asks for the tool itself: a call, a `tool_search` hit, a listing.
//! Walks that read every definition once (building a search index) read a copy they drop
//! ([`Deferred::definition_once`]).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::definition::{JsonObject, SourceLocation, ToolDefinition};
use crate::init::LazyInit;
use crate::outcome::ToolReturn;
use crate::tool::{AsyncTool, CallContext, Tool, ToolFailure};

/// Reads a deferred tool's file again: the tool it defines now, as the catalog publishes
/// it, or why it cannot (the file is gone, broken, or defines another tool).
pub type LoadTool = dyn Fn(&SourceLocation) -> Result<Arc<dyn Tool>, String> + Send + Sync;

/// A tool read from its file when first needed ([module docs](self)).
pub struct Deferred {
    name: Box<str>,
    source: SourceLocation,
    discoverable: bool,
    published_len: usize,
    timeout: Duration,
    max_concurrency: Option<usize>,
    load: Arc<LoadTool>,
    /// The tool, once read; or, when it could not be, a definition that says why.
    loaded: OnceLock<Result<Arc<dyn Tool>, Box<ToolDefinition>>>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("loaded", &self.is_loaded())
            .finish_non_exhaustive()
    }
}

impl Deferred {
    /// The tool publishing `published` (as the catalog would: adjusted), which `load`
    /// reads again from `published.source` when needed.
    pub fn new(published: &ToolDefinition, load: Arc<LoadTool>) -> Self {
        Self {
            name: published.name.as_str().into(),
            source: published.source.clone(),
            discoverable: published.discoverable,
            published_len: published.mcp_json_len(),
            timeout: published.effective_timeout(),
            max_concurrency: published.max_concurrency,
            load,
            loaded: OnceLock::new(),
        }
    }

    /// Where the tool is defined.
    pub fn source(&self) -> &SourceLocation {
        &self.source
    }

    /// Whether its definition marks it `discoverable`.
    pub fn discoverable(&self) -> bool {
        self.discoverable
    }

    /// [`ToolDefinition::mcp_json_len`] of its definition, as it was read.
    pub fn published_len(&self) -> usize {
        self.published_len
    }

    /// [`ToolDefinition::effective_timeout`] of its definition, as it was read.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Its `max_concurrency`, as it was read.
    pub fn max_concurrency(&self) -> Option<usize> {
        self.max_concurrency
    }

    /// Whether its file has been read again (and the tool is held).
    pub fn is_loaded(&self) -> bool {
        self.loaded.get().is_some()
    }

    /// Its definition for a walk that reads it once: the one held, or, when the tool is not
    /// held, a copy read from its file (a walk over every tool must not hold them all).
    pub fn definition_once(&self) -> Cow<'_, ToolDefinition> {
        match self.loaded.get() {
            Some(loaded) => Cow::Borrowed(definition_of(loaded)),
            None => Cow::Owned(definition_of(&self.read()).clone()),
        }
    }

    fn loaded(&self) -> &Result<Arc<dyn Tool>, Box<ToolDefinition>> {
        self.loaded.get_or_init(|| self.read())
    }

    /// The tool its file defines now, when it is still this one.
    fn read(&self) -> Result<Arc<dyn Tool>, Box<ToolDefinition>> {
        let tool = (self.load)(&self.source).and_then(|tool| {
            if tool.name() == &*self.name {
                Ok(tool)
            } else {
                Err(format!(
                    "{} now defines tool `{}`, not `{}`; the server reloads it with `--watch`",
                    self.source.path.display(),
                    tool.name(),
                    self.name
                ))
            }
        });
        tool.map_err(|why| {
            let mut definition = ToolDefinition::new(
                self.name.as_ref(),
                "This tool could not be read again from its file.",
                JsonObject::new(),
            );
            definition.source = self.source.clone();
            definition.discoverable = self.discoverable;
            definition.unavailable = Some(format!("tool `{}` failed to load: {why}", self.name));
            Box::new(definition)
        })
    }
}

fn definition_of(loaded: &Result<Arc<dyn Tool>, Box<ToolDefinition>>) -> &ToolDefinition {
    match loaded {
        Ok(tool) => tool.definition(),
        Err(unavailable) => unavailable,
    }
}

impl Tool for Deferred {
    fn definition(&self) -> &ToolDefinition {
        definition_of(self.loaded())
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        match self.loaded() {
            Ok(tool) => tool.call(arguments, context),
            Err(unavailable) => Err(ToolFailure::failed(
                unavailable.unavailable.clone().unwrap_or_default(),
            )),
        }
    }

    fn init(&self) -> Option<&Arc<LazyInit>> {
        // None, without reading the file: only a tool with no init is deferred, and one
        // read again with an init is refused (`LoadTool`).
        None
    }

    fn as_async(&self) -> Option<&dyn AsyncTool> {
        self.loaded().as_ref().ok()?.as_async()
    }

    fn deferred(&self) -> Option<&Deferred> {
        Some(self)
    }
}

/// A tool published with a definition other than its own (a folder's default timeout, its
/// options): what a catalog entry holds for a tool its builder adjusted, for a tool read
/// again by a [`Deferred`] one, whose entry holds no definition.
pub struct Adjusted {
    tool: Arc<dyn Tool>,
    definition: ToolDefinition,
}

impl Adjusted {
    /// `tool` publishing `definition`; `tool` itself when that is its own.
    pub fn of(tool: Arc<dyn Tool>, definition: ToolDefinition) -> Arc<dyn Tool> {
        if *tool.definition() == definition {
            tool
        } else {
            Arc::new(Self { tool, definition })
        }
    }
}

impl Tool for Adjusted {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        self.tool.call(arguments, context)
    }

    fn init(&self) -> Option<&Arc<LazyInit>> {
        self.tool.init()
    }

    fn as_async(&self) -> Option<&dyn AsyncTool> {
        self.tool.as_async()
    }
}
