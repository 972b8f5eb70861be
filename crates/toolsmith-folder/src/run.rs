//! Running a folder's tools outside the server (`toolsmith call`, `toolsmith test`): each call
//! gets its deadline, options and working directory, and runs on its own thread under the
//! hard watchdog of the call policy the server follows too ([`Watchdog`]), so a tool stuck
//! in one long native operation still yields a timeout result on time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use serde_json::Value;
use toolsmith_model::{
    CallContext, CallFailure, CallOutcome, Catalog, ClientBridge, Diagnostic, Interrupt,
    JsonObject, NoClient, Severity, SourceLocation, UnknownTool,
};

use crate::config::FolderConfig;

/// The environment variable with tool options as JSON: `{"tool": {"option": value}}`.
pub const OPTIONS_ENV: &str = "MCP_TOOL_OPTIONS";

/// Runs a catalog's tools one call at a time, each under a watchdog.
#[derive(Clone)]
pub struct Caller {
    catalog: Arc<Catalog>,
    working_dir: PathBuf,
    client: Arc<dyn ClientBridge>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("working_dir", &self.working_dir)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// A caller for `catalog` whose command tools run in `working_dir`.
    pub fn new(catalog: Arc<Catalog>, working_dir: PathBuf) -> Self {
        Self {
            catalog,
            working_dir,
            client: Arc::new(NoClient),
        }
    }

    /// Calls a tool: validate, run under the watchdog, apply the result contract.
    pub fn call(&self, name: &str, arguments: JsonObject) -> Result<CallOutcome, UnknownTool> {
        self.call_with_timeout(name, arguments, None)
    }

    /// Like [`Caller::call`], with `timeout` in place of the tool's own when given (a
    /// `toolsmith test` case may set its own timeout).
    ///
    /// The call runs on a thread of its own under the server's call policy ([`Watchdog`]):
    /// the same deadline, the same hard watchdog and grace, the same results when the tool
    /// gives none ([`CallFailure`]).
    pub fn call_with_timeout(
        &self,
        name: &str,
        arguments: JsonObject,
        timeout: Option<Duration>,
    ) -> Result<CallOutcome, UnknownTool> {
        let entry = self.catalog.lookup(name)?;
        let definition = entry.definition();
        let watchdog = entry.watchdog(timeout);
        let context = CallContext {
            deadline: watchdog.deadline(),
            interrupt: Interrupt::new(),
            client: Arc::clone(&self.client),
            options: definition.options.clone(),
            working_dir: Some(self.working_dir.clone()),
            caller: None,
        };
        let interrupt = context.interrupt.clone();
        let (sender, receiver) = mpsc::channel();
        let catalog = Arc::clone(&self.catalog);
        // A qualified name (`publisher/package/tool`) found the tool; the thread looks it
        // up by its published one.
        let tool = definition.name.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("tool {name}"))
            .spawn(move || {
                if let Some(entry) = catalog.get(&tool) {
                    let _ = sender.send(entry.call(arguments, &context));
                }
            });
        if let Err(error) = spawned {
            let reason = error.to_string();
            return Ok(CallFailure::NoThread { reason }.outcome(name));
        }
        let outcome = match receiver.recv_timeout(watchdog.until_fired()) {
            Ok(outcome) => outcome,
            // A tool thread that panicked dropped its sender.
            Err(RecvTimeoutError::Disconnected) => CallFailure::Crashed.outcome(name),
            Err(RecvTimeoutError::Timeout) => receiver
                .recv_timeout(watchdog.fire(&interrupt))
                .unwrap_or_else(|_| watchdog.abandoned().outcome(name)),
        };
        Ok(outcome)
    }
}

/// Tool options from `toolsmith.toml` `[options.TOOL]`, overridden by `MCP_TOOL_OPTIONS`.
pub(crate) fn options_by_tool(
    config: &FolderConfig,
    diagnostics: &mut Vec<Diagnostic>,
) -> HashMap<String, JsonObject> {
    let mut options: HashMap<String, JsonObject> = HashMap::new();
    let mut merge = |source: &JsonObject| {
        for (tool, values) in source {
            if let Value::Object(values) = values {
                options
                    .entry(tool.clone())
                    .or_default()
                    .extend(values.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    };
    merge(&config.options);
    if let Ok(text) = std::env::var(OPTIONS_ENV) {
        if let Ok(Value::Object(from_env)) = serde_json::from_str::<Value>(&text) {
            merge(&from_env);
        } else {
            let mut warning = Diagnostic::error(
                "invalid-config",
                SourceLocation {
                    path: PathBuf::from(format!("${OPTIONS_ENV}")),
                    line: 0,
                    column: 0,
                },
                format!("`{OPTIONS_ENV}` is not a JSON object; it is ignored"),
            )
            .with_help("set it to JSON such as {\"forecast_get\": {\"units\": \"metric\"}}");
            warning.severity = Severity::Warning;
            diagnostics.push(warning);
        }
    }
    options
}
