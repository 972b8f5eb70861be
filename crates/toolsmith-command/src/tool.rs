//! [`CommandTool`]: a manifest's `command = [...]` as a [`Tool`] — how argv, the working
//! directory and the environment are prepared for each call, and how the process's exit is
//! turned into a result or a [`ToolFailure`] (docs/tools.md, "Command tools";
//! docs/architecture.md, "Sandbox and limits").

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::Arc;

use nix::sys::signal::Signal;
use serde_json::Value;
use toolsmith_model::telemetry::{Attribute, SpanRole, WorkSpan};
use toolsmith_model::{
    CallContext, JsonObject, LogLevel, StopReason, Tool, ToolDefinition, ToolFailure, ToolReturn,
};

use crate::output::{excerpt, format_bytes, interpret};
use crate::process::{self, Finished, Limits, RunError};
use crate::template::{ArgvTemplate, TemplateError};
use crate::worker::WorkerPool;

/// How much stdout a call may produce before it is stopped (4 MiB).
pub const DEFAULT_OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

/// Environment variables every command inherits; `permissions.env` adds to them.
const INHERITED_ENV: [&str; 3] = ["PATH", "HOME", "LANG"];

/// A tool that runs a program per call (docs/tools.md, "Command tools").
///
/// Each call spawns the program directly (never through a shell) in its own process group,
/// with the arguments — schema defaults filled in — as one compact JSON object on stdin and
/// substituted into argv by the [`ArgvTemplate`]. It runs in `context.working_dir`, or the
/// tools folder, with an environment cleared down to `PATH`, `HOME`, `LANG`, the variables
/// `permissions.env` names, and:
///
/// - `TOOLSMITH_TOOL`: the tool's name;
/// - `TOOLSMITH_TOOL_DIR`: the tools folder;
/// - `TOOLSMITH_OPTIONS`: the call's tool options as compact JSON.
///
/// stdout becomes the result: a JSON object with an MCP result key (`content`,
/// `structuredContent`, `isError`) is passed through as is, other JSON is structured
/// content, anything else is text. A non-zero exit fails with the tail of stderr. On the
/// deadline, an interrupt, or stdout past [`output_limit`](Self::output_limit), the whole
/// process group is killed; once the program exits, whatever it left running in its group
/// is killed too.
#[derive(Debug, Clone)]
pub struct CommandTool {
    definition: ToolDefinition,
    /// The command as written, for messages.
    command: Vec<String>,
    template: ArgvTemplate,
    /// The tools folder, absolute.
    base_dir: PathBuf,
    /// `properties.*.default` of the input schema, applied to absent arguments.
    defaults: Vec<(String, Value)>,
    output_limit: usize,
    /// The warm processes that serve the calls, for a `worker = true` manifest.
    worker: Option<Arc<WorkerPool>>,
}

impl CommandTool {
    /// A command tool for `definition` running `command` from the tools folder `base_dir`.
    ///
    /// An element of `command` that names an existing file inside `base_dir` by a relative
    /// path (`weather.py` in `["python3", "weather.py"]`) is made absolute, and a relative
    /// program path containing a `/` (`./run.sh`) is resolved against `base_dir`, since the
    /// working directory may be the client's root instead.
    ///
    /// Fails when the command is empty or a placeholder names no parameter of the input
    /// schema; the error lists the valid names.
    pub fn new(
        definition: ToolDefinition,
        command: Vec<String>,
        base_dir: impl Into<PathBuf>,
    ) -> Result<Self, TemplateError> {
        let base_dir = base_dir.into();
        let base_dir = std::path::absolute(&base_dir).unwrap_or(base_dir);
        let properties = definition.input_schema.keyword("properties");
        let properties = properties.as_ref().and_then(Value::as_object);
        let parameters: Vec<&str> = properties
            .map(|properties| properties.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let template =
            ArgvTemplate::parse(&resolve_file_arguments(&base_dir, &command), &parameters)?;
        let defaults = properties
            .map(|properties| {
                properties
                    .iter()
                    .filter_map(|(name, property)| {
                        let default = property.get("default")?;
                        Some((name.clone(), default.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Self {
            definition,
            command,
            template,
            base_dir,
            defaults,
            output_limit: DEFAULT_OUTPUT_LIMIT,
            worker: None,
        })
    }

    /// The same tool with a different stdout limit, in bytes.
    #[must_use]
    pub fn with_output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// The same tool served by the warm processes of `pool` instead of a process per call
    /// (docs/tools.md, "Warm command tools").
    ///
    /// The pool runs its own command (the one the manifest names, shared by the tools whose
    /// manifests name it); this tool's command is then only its name in messages.
    #[must_use]
    pub fn with_worker(mut self, pool: Arc<WorkerPool>) -> Self {
        self.worker = Some(pool);
        self
    }

    /// The pool serving this tool's calls, when it is a worker.
    pub fn worker(&self) -> Option<&Arc<WorkerPool>> {
        self.worker.as_ref()
    }

    /// Sets how many bytes of stdout a call may produce before it is stopped.
    pub fn set_output_limit(&mut self, bytes: usize) {
        self.output_limit = bytes;
    }

    /// How many bytes of stdout a call may produce ([`DEFAULT_OUTPUT_LIMIT`] unless set).
    pub fn output_limit(&self) -> usize {
        self.output_limit
    }

    /// The command as written in the manifest.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    /// The parsed argv template.
    pub fn template(&self) -> &ArgvTemplate {
        &self.template
    }

    /// The tools folder the command belongs to (absolute).
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// The command for messages: `python3 weather.py`.
    pub(crate) fn display(&self) -> String {
        self.command.join(" ")
    }

    /// The arguments with schema defaults filled in for absent (or `null`) ones.
    fn with_defaults(&self, arguments: &JsonObject) -> JsonObject {
        let mut arguments = arguments.clone();
        for (name, default) in &self.defaults {
            if arguments.get(name).is_none_or(Value::is_null) {
                arguments.insert(name.clone(), default.clone());
            }
        }
        arguments
    }

    /// Sets the environment: cleared, then the inherited and permitted variables.
    fn set_environment(&self, command: &mut Command, context: &CallContext) {
        let permitted = self.definition.permissions.env.iter().map(String::as_str);
        clear_environment(command, permitted);
        let options =
            serde_json::to_string(&context.options).expect("a JSON object always serializes");
        command
            .env("TOOLSMITH_TOOL", &self.definition.name)
            .env("TOOLSMITH_TOOL_DIR", &self.base_dir)
            .env("TOOLSMITH_OPTIONS", options);
        // Who the call acts for, when an OAuth token said (docs/auth.md).
        if let Some(caller) = &context.caller {
            command.env("TOOLSMITH_CALLER", caller.to_json().to_string());
        }
    }

    /// An `mcp:` line from the program's stderr: progress or a log message for the client.
    pub(crate) fn event(&self, line: &[u8], context: &CallContext) {
        let name = &self.definition.name;
        let event: Value = match serde_json::from_slice(line) {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!(tool = %name, %error, "ignoring an `mcp:` stderr line that is not JSON");
                return;
            }
        };
        let message = event.get("message").and_then(Value::as_str);
        if let Some(progress) = event.get("progress").and_then(Value::as_f64) {
            let total = event.get("total").and_then(Value::as_f64);
            context.client.progress(progress, total, message);
        } else if let Some(level) = event.get("log").and_then(Value::as_str) {
            let Some(level) = LogLevel::parse(level) else {
                tracing::warn!(tool = %name, level, "ignoring an `mcp:` log line with an unknown level");
                return;
            };
            let logger = event.get("logger").and_then(Value::as_str).unwrap_or(name);
            context
                .client
                .log(level, logger, message.unwrap_or_default());
        } else {
            tracing::warn!(tool = %name, "ignoring an `mcp:` stderr line: expected `progress` or `log`");
        }
    }

    pub(crate) fn failure(&self, message: impl std::fmt::Display) -> ToolFailure {
        ToolFailure::failed(format!("command `{}` {message}", self.display()))
    }

    /// The failure for a program that exited unsuccessfully, with the end of its stderr (or
    /// of its stdout, when stderr is empty).
    fn exit_failure(&self, finished: &Finished) -> ToolFailure {
        let stderr = excerpt(&finished.stderr, finished.stderr_cut).map(|tail| ("stderr", tail));
        let shown =
            stderr.or_else(|| excerpt(&finished.stdout, false).map(|tail| ("stdout", tail)));
        let details = shown.map_or_else(
            || " and printed nothing".to_owned(),
            |(stream, tail)| stream_details(stream, tail),
        );
        let message = format!(
            "command `{}` {}{details}",
            self.display(),
            describe_exit(finished.status)
        );
        ToolFailure::failed(message)
    }
}

impl Tool for CommandTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn reloadable(&self) -> bool {
        // A worker's pool is shared with the other tools of its command.
        self.worker.is_none()
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        // A span per run under the request's (docs/http.md, "Telemetry"); free without one.
        let span = WorkSpan::start(
            SpanRole::Internal,
            || format!("exec {}", self.program_name()),
            || {
                vec![
                    Attribute::new("process.executable.name", self.program_name().to_owned()),
                    Attribute::new("gen_ai.tool.name", self.definition.name.clone()),
                ]
            },
        );
        let result = self.run(arguments, context, &span);
        if let Err(failure) = &result {
            span.fail_with(failure);
        }
        result
    }
}

impl CommandTool {
    /// The file name of the program the command runs.
    fn program_name(&self) -> &str {
        let program = self.command.first().map_or("", String::as_str);
        program.rsplit('/').next().unwrap_or(program)
    }

    /// One call: on the worker, or in a process of its own, which gets the span's trace
    /// context as `TRACEPARENT` (and `TRACESTATE`) for its own spans.
    fn run(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
        span: &WorkSpan,
    ) -> Result<ToolReturn, ToolFailure> {
        let arguments = self.with_defaults(arguments);
        if let Some(pool) = &self.worker {
            return pool.call(self, &arguments, context);
        }
        let mut argv = self.template.render(&arguments).into_iter();
        let Some(program) = argv.next() else {
            return Err(self.failure("has no program: its first element is an absent argument"));
        };
        let resolved = resolve_program(&self.base_dir, &program);
        let working_dir = context.working_dir.as_deref().unwrap_or(&self.base_dir);
        if !working_dir.is_dir() {
            return Err(self.failure(format_args!(
                "cannot run: working directory `{}` does not exist",
                working_dir.display()
            )));
        }
        let mut command = Command::new(&resolved);
        command.args(argv).current_dir(working_dir);
        self.set_environment(&mut command, context);
        if let Some((traceparent, tracestate)) = span.trace_context() {
            command.env("TRACEPARENT", traceparent);
            if let Some(tracestate) = tracestate {
                command.env("TRACESTATE", tracestate);
            }
        }
        let input = serde_json::to_vec(&arguments).expect("a JSON object always serializes");
        let limits = Limits {
            // The caller sets the deadline from the published definition, whose timeout
            // may come from `toolsmith.toml` rather than from this tool's own definition.
            deadline: context.deadline,
            stdout_bytes: self.output_limit,
        };
        let mut on_event = |line: &[u8]| self.event(line, context);
        let finished = match process::run(
            &mut command,
            &input,
            limits,
            &context.interrupt,
            &mut on_event,
        ) {
            Ok(finished) => finished,
            Err(RunError::Spawn(error)) => {
                return Err(spawn_failure(&program, &resolved, &error));
            }
            Err(RunError::Stopped(StopReason::Timeout)) => {
                return Err(ToolFailure::TimedOut {
                    after: self.definition.effective_timeout(),
                });
            }
            Err(RunError::Stopped(StopReason::Cancelled)) => return Err(ToolFailure::Cancelled),
            Err(RunError::OutputLimit) => {
                return Err(self.failure(format_args!(
                    "was stopped: output exceeded {}; write large results to a file and return its path",
                    format_bytes(self.output_limit)
                )));
            }
            Err(RunError::Io(error)) => return Err(self.failure(format_args!("failed: {error}"))),
        };
        if let Some(code) = finished.status.code() {
            span.set(|| Attribute::new("process.exit.code", i64::from(code)));
        }
        if !finished.status.success() {
            return Err(self.exit_failure(&finished));
        }
        interpret(&finished.stdout).map_err(|error| {
            self.failure(format_args!(
                "printed an object with MCP result keys that is not a valid CallToolResult: {error}"
            ))
        })
    }
}

/// `\nstderr:\n…` (or `stderr (last lines; earlier output cut)`) for a failure message.
pub(crate) fn stream_details(stream: &str, (text, cut): (String, bool)) -> String {
    if cut {
        format!("\n{stream} (last lines; earlier output cut):\n{text}")
    } else {
        format!("\n{stream}:\n{text}")
    }
}

/// Clears `command`'s environment down to `PATH`, `HOME`, `LANG` and the `permitted` names
/// (`permissions.env`) that are set here.
pub(crate) fn clear_environment<'a>(
    command: &mut Command,
    permitted: impl IntoIterator<Item = &'a str>,
) {
    command.env_clear();
    for name in INHERITED_ENV.into_iter().chain(permitted) {
        // `var_os` may panic on such names, and no variable can be called that anyway.
        if name.is_empty() || name.contains(['=', '\0']) {
            continue;
        }
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
}

/// The failure for a program that could not be started.
pub(crate) fn spawn_failure(program: &str, resolved: &Path, error: &std::io::Error) -> ToolFailure {
    let message = match error.kind() {
        std::io::ErrorKind::NotFound if program.contains('/') => format!(
            "program `{program}` not found at `{}`; check the path in `command`, relative to the tools folder",
            resolved.display()
        ),
        std::io::ErrorKind::NotFound => format!(
            "program `{program}` not found on PATH; install it or check the spelling in `command`"
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "program `{program}` is not executable; run `chmod +x {}`",
            resolved.display()
        ),
        _ => format!("program `{program}` could not be started: {error}"),
    };
    ToolFailure::failed(message)
}

/// `command` with its file arguments (not the program) made absolute, as
/// [`resolve_file_argument`] does.
pub(crate) fn resolve_file_arguments(base_dir: &Path, command: &[String]) -> Vec<String> {
    command
        .iter()
        .enumerate()
        .map(|(index, element)| match index {
            0 => element.clone(),
            _ => resolve_file_argument(base_dir, element).unwrap_or_else(|| element.clone()),
        })
        .collect()
}

/// `./run.sh` → `/tools/run.sh`: a program path with a `/` is relative to the tools folder;
/// a bare name is looked up on `PATH`.
pub(crate) fn resolve_program(base_dir: &Path, program: &str) -> PathBuf {
    if program.contains('/') {
        base_dir.join(program)
    } else {
        PathBuf::from(program)
    }
}

/// `weather.py` → `/tools/weather.py` when that is a file inside the tools folder.
fn resolve_file_argument(base_dir: &Path, element: &str) -> Option<String> {
    let path = Path::new(element);
    if element.is_empty() || path.is_absolute() || element.contains(['{', '}']) {
        return None;
    }
    let candidate = base_dir.join(path);
    if !candidate.is_file() {
        return None;
    }
    // `../elsewhere.py` names a file, but not one of this folder's.
    let inside = candidate
        .canonicalize()
        .ok()
        .zip(base_dir.canonicalize().ok())
        .is_some_and(|(file, base)| file.starts_with(base));
    inside.then(|| candidate.to_string_lossy().into_owned())
}

/// `exited with status 3`, `was killed by signal 9 (SIGKILL)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(number) => match Signal::try_from(number) {
            Ok(signal) => format!("was killed by signal {number} ({})", signal.as_str()),
            Err(_) => format!("was killed by signal {number}"),
        },
        None => format!("ended with {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_arguments_resolve_only_inside_the_folder() {
        let folder = tempfile::tempdir().unwrap();
        let tools = folder.path().join("tools");
        std::fs::create_dir(&tools).unwrap();
        std::fs::write(tools.join("weather.py"), "").unwrap();
        std::fs::write(folder.path().join("outside.py"), "").unwrap();
        assert_eq!(
            resolve_file_argument(&tools, "weather.py"),
            Some(tools.join("weather.py").to_string_lossy().into_owned())
        );
        assert_eq!(resolve_file_argument(&tools, "../outside.py"), None);
        assert_eq!(resolve_file_argument(&tools, "missing.py"), None);
        assert_eq!(resolve_file_argument(&tools, "-c"), None);
    }
}
