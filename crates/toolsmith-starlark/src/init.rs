//! `mcp.tool(f, init = setup)` (docs/tools.md, "Lazy initialization"): the file's function
//! that runs once, with no arguments, before the first call of any tool of the file naming
//! it. Tools of one file naming the same function share one [`LazyInit`]; a reload of the
//! file makes new ones, so its init runs again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{
    CallContext, Initializer, JsonObject, LazyInit, ToolDefinition, ToolFailure,
};

use crate::engine::{self, Function, Invocation};
use crate::native::failure;

/// The inits of one file, by function name, and the tools folder it was loaded from.
pub(crate) struct FileInits(HashMap<String, Arc<LazyInit>>, Arc<Path>);

impl FileInits {
    /// No inits yet, for a file of the tools folder `folder`.
    pub(crate) fn new(folder: &Path) -> Self {
        let absolute = std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned());
        Self(HashMap::new(), Arc::from(absolute))
    }

    /// The tools folder.
    pub(crate) fn folder(&self) -> &Arc<Path> {
        &self.1
    }

    /// The init of the function `name`, made from `function` the first time it is named.
    pub(crate) fn named(&mut self, name: &str, function: Function) -> Arc<LazyInit> {
        let folder = &self.1;
        Arc::clone(self.0.entry(name.to_owned()).or_insert_with(|| {
            Arc::new(LazyInit::new(
                name,
                StarlarkInit {
                    function,
                    folder: Arc::clone(folder),
                },
            ))
        }))
    }
}

/// A Starlark function run as an init: called with no arguments under the calling tool's
/// permissions; what it returns (JSON-like) is the init's value, and `mcp.error(...)` fails
/// it.
struct StarlarkInit {
    function: Function,
    folder: Arc<Path>,
}

impl Initializer for StarlarkInit {
    fn run(
        &self,
        definition: &ToolDefinition,
        context: &CallContext,
    ) -> Result<Value, ToolFailure> {
        let invocation = Invocation {
            arguments: &JsonObject::new(),
            fill_none: &[],
            declared: &[],
            accepts_extra: false,
            context,
            definition,
            folder: &self.folder,
            init_value: None,
        };
        engine::call_function(&self.function, &invocation)
            .map_err(|error| failure(&error, definition))?
            .into_init_value()
    }
}
