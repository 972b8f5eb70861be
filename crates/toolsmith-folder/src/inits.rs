//! Command inits shared across a folder's manifests (docs/tools.md, "Lazy initialization"):
//! manifests naming the same `init` command (the same program and arguments, as written)
//! share one init, which runs once before the first call of any of them. One load of the
//! folder starts from the inits that the tools of its unchanged files hold, so editing one
//! of several manifests that share an init keeps it, while an init no unchanged file names
//! starts afresh.
//!
//! Worker pools (docs/tools.md, "Warm command tools") are shared the same way within one
//! load: manifests with the same `command` (as written) and the same `worker` settings share
//! one pool. A reload starts new pools for the files it reloads; the tools of unchanged
//! files keep theirs, and a pool stops its processes once no tool holds it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use toolsmith_command::{CommandInit, TemplateError, WorkerPool, WorkerSettings};
use toolsmith_model::{Init, InitializedTool, LazyInit, Tool};

/// The worker pools of one load, by command and settings.
type WorkerPools = HashMap<(Vec<String>, WorkerSettings), Arc<WorkerPool>>;

/// The command inits and worker pools of one load of a folder, by command.
#[derive(Clone, Default)]
pub(crate) struct CommandInits(
    Arc<Mutex<HashMap<Vec<String>, Arc<LazyInit>>>>,
    Arc<Mutex<WorkerPools>>,
);

impl CommandInits {
    /// The inits `tools` (those of the files a reload keeps) already run.
    pub(crate) fn kept<'a>(tools: impl IntoIterator<Item = &'a Arc<dyn Tool>>) -> Self {
        let mut inits = HashMap::new();
        for tool in tools {
            // The init first: a tool without one (a deferred one) is not read for its command.
            let Some(init) = tool.init() else {
                continue;
            };
            if let Some(Init::Command(command)) = &tool.definition().init {
                inits
                    .entry(command.clone())
                    .or_insert_with(|| Arc::clone(init));
            }
        }
        Self(Arc::new(Mutex::new(inits)), Arc::default())
    }

    /// The pool for `command` with `settings`, shared with the other manifests of this load
    /// naming both.
    pub(crate) fn worker(
        &self,
        command: &[String],
        settings: WorkerSettings,
        base_dir: &Path,
    ) -> Result<Arc<WorkerPool>, TemplateError> {
        let mut pools = self.1.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (command.to_vec(), settings);
        if let Some(pool) = pools.get(&key) {
            return Ok(Arc::clone(pool));
        }
        let pool = WorkerPool::new(command.to_vec(), base_dir, settings)?;
        pools.insert(key, Arc::clone(&pool));
        Ok(pool)
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
