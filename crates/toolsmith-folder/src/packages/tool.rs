//! A package's tool as its host serves it: published under the package's prefix with the
//! package it came from recorded, and run in the package folder, whatever folder the call
//! would otherwise run in (the client's root, the host folder), so its relative paths and
//! grants mean what its author wrote; every program its call starts is confined to what the
//! host allows, or refused (`toolsmith_command::confined`).

use std::path::PathBuf;
use std::sync::Arc;

use toolsmith_command::Confinement;
use toolsmith_model::{CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn};

/// A tool of a package.
pub(crate) struct PackageTool {
    /// The published definition: prefixed name, `package` set.
    definition: ToolDefinition,
    /// The tool as its package folder loaded it.
    inner: Arc<dyn Tool>,
    /// The package folder.
    folder: PathBuf,
    /// What the programs a call starts may touch.
    confinement: Arc<Confinement>,
}

impl PackageTool {
    pub(crate) fn new(
        definition: ToolDefinition,
        inner: Arc<dyn Tool>,
        folder: PathBuf,
        confinement: Confinement,
    ) -> Self {
        Self {
            definition,
            inner,
            folder,
            confinement: Arc::new(confinement),
        }
    }
}

impl Tool for PackageTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let context = CallContext {
            working_dir: Some(self.folder.clone()),
            ..context.clone()
        };
        toolsmith_command::confined(&self.confinement, || self.inner.call(arguments, &context))
    }
}
