//! `mcp.tool(f, init = setup)` (docs/tools.md, "Lazy initialization"): the file's function
//! that runs once, with no arguments, before the first call of any tool of the file naming
//! it. Tools of one file naming the same function share one [`LazyInit`]; a reload of the
//! file makes new ones, so its init runs again.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{
    CallContext, Initializer, JsonObject, LazyInit, ToolDefinition, ToolFailure,
};

use crate::engine::{self, Function, Invocation};
use crate::native::failure;

/// The inits of one file, by function name.
#[derive(Default)]
pub(crate) struct FileInits(HashMap<String, Arc<LazyInit>>);

impl FileInits {
    /// The init of the function `name`, made from `function` the first time it is named.
    pub(crate) fn named(&mut self, name: &str, function: Function) -> Arc<LazyInit> {
        Arc::clone(
            self.0
                .entry(name.to_owned())
                .or_insert_with(|| Arc::new(LazyInit::new(name, StarlarkInit { function }))),
        )
    }
}

/// A Starlark function run as an init: called with no arguments under the calling tool's
/// permissions; what it returns (JSON-like) is the init's value, and `mcp.error(...)` fails
/// it.
struct StarlarkInit {
    function: Function,
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
            init_value: None,
        };
        engine::call_function(&self.function, &invocation)
            .map_err(|error| failure(&error, definition))?
            .into_init_value()
    }
}
