//! Manifest + script tools (Scriptling-compatible; docs/tools.md, "Manifest + script
//! (Scriptling)"): the manifest gives the definition, the script is parsed once at load and
//! run top to bottom on every call with the `tool` module.

use std::path::Path;
use std::sync::Arc;

use toolsmith_model::{
    CallContext, Code, Diagnostic, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn,
};

use crate::engine::{self, Form, Program};
use crate::native::{failure, source_diagnostic};

/// A tool whose definition comes from a manifest and whose code is a script.
pub(crate) struct ScriptTool {
    definition: ToolDefinition,
    program: Program,
    /// The tools folder, which the script's relative paths mean.
    folder: Arc<Path>,
}

impl Tool for ScriptTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        engine::run_script(
            &self.program,
            arguments,
            context,
            &self.definition,
            &self.folder,
        )
        .map_err(|error| failure(&error, &self.definition))
    }
}

/// Parses the script and, with `source_facts`, records its calls on the definition; a
/// syntax error is the tool's load diagnostic.
pub(crate) fn load(
    mut definition: ToolDefinition,
    path: &Path,
    source: &str,
    source_facts: bool,
    folder: &Path,
) -> Result<Arc<dyn Tool>, Diagnostic> {
    let program = engine::parse(path, source, Form::Script)
        .map_err(|error| source_diagnostic(path, error))?;
    // The whole script runs per call: all of its calls are the tool's.
    let facts = program.facts();
    if source_facts {
        definition.facts.get_or_insert_default().code = Some(Code {
            path: path.to_owned(),
            calls: facts.calls.clone(),
            file_calls: facts.calls.clone(),
            strings: facts.strings.clone(),
        });
    }
    Ok(Arc::new(ScriptTool {
        definition,
        program,
        folder: Arc::from(std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned())),
    }))
}
