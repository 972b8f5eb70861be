//! [`CommandInit`]: a manifest's `init = ["python3", "download_model.py"]`, run once before
//! the first call of the tools naming it (docs/tools.md, "Lazy initialization"), exactly as
//! a command tool runs: its own process group, the same cleared environment, killed at its
//! deadline.

use std::path::PathBuf;

use serde_json::Value;
use toolsmith_model::{CallContext, Initializer, JsonObject, Tool, ToolDefinition, ToolFailure};

use crate::template::{ArgvTemplate, TemplateError};
use crate::tool::CommandTool;

/// A program run as an init, in the tools folder, with `{}` on stdin.
///
/// It runs with the environment of the tool whose call runs it (`permissions.env`,
/// `TOOLSMITH_TOOL`, …). A non-zero exit fails the init with the tail of its stderr; what it
/// prints is the init's value (JSON when it parses, else text).
#[derive(Debug, Clone)]
pub struct CommandInit {
    command: Vec<String>,
    base_dir: PathBuf,
}

impl CommandInit {
    /// An init running `command` from the tools folder `base_dir`.
    ///
    /// Fails when the command is empty or has a `{placeholder}`: an init takes no arguments.
    pub fn new(command: Vec<String>, base_dir: impl Into<PathBuf>) -> Result<Self, TemplateError> {
        ArgvTemplate::parse(&command, &[])?;
        Ok(Self {
            command,
            base_dir: base_dir.into(),
        })
    }
}

impl Initializer for CommandInit {
    fn run(
        &self,
        definition: &ToolDefinition,
        context: &CallContext,
    ) -> Result<Value, ToolFailure> {
        // The calling tool's parameters are not the init's: no defaults, no placeholders.
        let mut runner = definition.clone();
        runner.input_schema = JsonObject::new().into();
        let tool = CommandTool::new(runner, self.command.clone(), &self.base_dir)
            .map_err(|error| ToolFailure::failed(error.to_string()))?;
        // An init prepares the tools folder, whatever the client's root is.
        let context = CallContext {
            working_dir: None,
            ..context.clone()
        };
        tool.call(&JsonObject::new(), &context)?.into_init_value()
    }
}
