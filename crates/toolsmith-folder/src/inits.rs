//! Command inits shared across a folder's manifests (docs/tools.md, "Lazy initialization"):
//! manifests naming the same `init` command (the same program and arguments, as written)
//! share one init, which runs once before the first call of any of them. One load of the
//! folder starts from the inits that the tools of its unchanged files hold, so editing one
//! of several manifests that share an init keeps it, while an init no unchanged file names
//! starts afresh.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use toolsmith_command::{CommandInit, TemplateError};
use toolsmith_model::{Init, InitializedTool, LazyInit, Tool};

/// The command inits of one load of a folder, by command.
#[derive(Clone, Default)]
pub(crate) struct CommandInits(Arc<Mutex<HashMap<Vec<String>, Arc<LazyInit>>>>);

impl CommandInits {
    /// The inits `tools` (those of the files a reload keeps) already run.
    pub(crate) fn kept<'a>(tools: impl IntoIterator<Item = &'a Arc<dyn Tool>>) -> Self {
        let mut inits = HashMap::new();
        for tool in tools {
            if let (Some(Init::Command(command)), Some(init)) =
                (&tool.definition().init, tool.init())
            {
                inits
                    .entry(command.clone())
                    .or_insert_with(|| Arc::clone(init));
            }
        }
        Self(Arc::new(Mutex::new(inits)))
    }

    /// `tool` with the init of its `init = [...]` command, shared with the other manifests
    /// naming it; `tool` itself when it has none.
    pub(crate) fn attach(
        &self,
        tool: Arc<dyn Tool>,
        base_dir: &Path,
    ) -> Result<Arc<dyn Tool>, TemplateError> {
        let Some(Init::Command(command)) = &tool.definition().init else {
            return Ok(tool);
        };
        let mut inits = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let init = if let Some(init) = inits.get(command) {
            Arc::clone(init)
        } else {
            let runner = CommandInit::new(command.clone(), base_dir)?;
            let init = Arc::new(LazyInit::new(command.join(" "), runner));
            inits.insert(command.clone(), Arc::clone(&init));
            init
        };
        Ok(Arc::new(InitializedTool::new(tool, init)))
    }
}
