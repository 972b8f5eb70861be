//! Helpers shared by the tests: a tools folder in a temp dir and tools built from JSON.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith_command::CommandTool;
use toolsmith_model::{CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn};

/// How long an ordinary test call may take before it counts as hung.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// A definition called `name` with `properties` as its input schema's properties.
pub(crate) fn definition(name: &str, properties: &Value) -> ToolDefinition {
    let schema = serde_json::json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    ToolDefinition::new(name, "A test tool.", object(&schema))
}

/// A command tool over `command` in the folder `dir`.
pub(crate) fn tool(dir: &Path, properties: &Value, command: &[&str]) -> CommandTool {
    tool_with(definition("probe", properties), dir, command)
}

/// A command tool for an already built definition.
pub(crate) fn tool_with(definition: ToolDefinition, dir: &Path, command: &[&str]) -> CommandTool {
    let command = command.iter().map(|&element| element.to_owned()).collect();
    CommandTool::new(definition, command, dir).expect("the test command is a valid template")
}

/// Calls `tool` with `arguments` and a generous timeout.
pub(crate) fn call(tool: &CommandTool, arguments: &Value) -> Result<ToolReturn, ToolFailure> {
    tool.call(&object(arguments), &CallContext::detached(PATIENCE))
}

/// The text of a `ToolReturn::Text`, or a panic saying what came back instead.
pub(crate) fn text(returned: Result<ToolReturn, ToolFailure>) -> String {
    match returned {
        Ok(ToolReturn::Text(text)) => text,
        other => panic!("expected text, got {other:?}"),
    }
}

/// The message of a `ToolFailure::Failed`, or a panic saying what came back instead.
pub(crate) fn failure(returned: Result<ToolReturn, ToolFailure>) -> String {
    match returned {
        Err(ToolFailure::Failed { message }) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// `value` as a JSON object.
pub(crate) fn object(value: &Value) -> JsonObject {
    value
        .as_object()
        .expect("test arguments are objects")
        .clone()
}

/// Writes an executable script into `dir`.
pub(crate) fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, body).expect("the temp dir is writable");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the script was just written");
}

/// Whether process `pid` is gone (a zombie waiting for init to reap it counts as gone).
pub(crate) fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name in parentheses: `123 (sleep) Z ...`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits (up to 5 s) for process `pid` to be gone; a SIGKILL lands asynchronously.
pub(crate) fn eventually_gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if is_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    is_gone(pid)
}

/// Reads the pid a test command wrote to `dir/pidfile`.
pub(crate) fn read_pid(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("pidfile"))
        .expect("the command wrote its pidfile")
        .trim()
        .parse()
        .expect("the pidfile holds a pid")
}
