//! Warm command tools through the whole server: `examples/workers/`
//! served over stdio, calls from several client threads at once, a worker command's load
//! error, and a client's cancellation (`notifications/cancelled`, `tasks/cancel`) reaching
//! the worker process as its cancel line.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::{PATIENCE, ServeProcess};
use crate::{folder, toolsmith, workspace};

#[test]
fn example_workers_answer_concurrent_calls_over_stdio() {
    let examples = workspace().join("examples/workers");
    let client = McpClient::stdio(&[examples.to_str().expect("a UTF-8 path")]);
    let mut names = client.tool_names();
    names.sort();
    assert_eq!(names, ["greet", "shout", "word_count"]);
    let answers: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|thread| {
                let client = &client;
                scope.spawn(move || {
                    (0..25)
                        .map(|call| {
                            let name = format!("{thread}-{call}");
                            client.call_text("greet", &json!({ "name": name }))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("a client thread panicked"))
            .collect()
    });
    for thread in 0..4 {
        for call in 0..25 {
            let expected = format!("Hello, {thread}-{call}!");
            assert_eq!(answers[thread * 25 + call], expected);
        }
    }
    // The same process serves the other tool of `greeter.py`.
    let counted = client.call("word_count", &json!({"text": "one two three"}));
    assert_eq!(
        counted.structured_content,
        Some(json!({"words": 3, "longest": "three"}))
    );
}

#[test]
#[ignore = "needs node, Node.js 20 or later (CI runs it: cargo test -- --include-ignored)"]
fn the_example_node_worker_answers_over_stdio() {
    let examples = workspace().join("examples/workers");
    let client = McpClient::stdio(&[examples.to_str().expect("a UTF-8 path")]);
    let shouted = client.try_call("shout", &json!({"text": "hi", "times": 2}));
    let result = shouted.unwrap_or_else(|error| {
        panic!("{error} (this test needs `node` on PATH, Node.js 20 or later)")
    });
    assert_eq!(text(&result), "HI HI");
}

#[test]
fn a_worker_command_with_placeholders_is_a_load_error() {
    let dir = folder(&[(
        "greet.toml",
        "description = \"Greet.\"\ncommand = [\"python3\", \"greet.py\", \"{name}\"]\nworker = true\n[[parameters]]\nname = \"name\"\n",
    )]);
    let output = toolsmith().arg("check").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("error[invalid-command]"), "{stdout}");
    assert!(stdout.contains("`worker`"), "{stdout}");
    assert!(
        stdout.contains("reads its arguments from stdin"),
        "{stdout}"
    );
}

/// A worker on the Python helper library: `until_cancelled` writes `started` (its pid) and
/// waits until the helper has read its cancel line, then writes `saw-cancel` and answers;
/// `pid` answers the worker's pid.
const WAITER: &str = r#"
import os, time
from pathlib import Path
from toolsmith_worker import tool, serve, cancelled

@tool
def until_cancelled():
    Path("started").write_text(str(os.getpid()))
    while not cancelled():
        time.sleep(0.01)
    Path("saw-cancel").write_text("yes")
    return "stopped"

@tool
def pid():
    return {"pid": os.getpid()}

serve()
"#;

/// A tools folder whose `until_cancelled` and `pid` share one worker process running
/// [`WAITER`]; `until_cancelled` may run as a task.
fn waiter_folder() -> tempfile::TempDir {
    let helper =
        std::fs::read_to_string(workspace().join("examples/workers/toolsmith_worker.py")).unwrap();
    folder(&[
        ("toolsmith_worker.py", &helper),
        ("waiter.py", WAITER),
        (
            "until_cancelled.toml",
            "description = \"Waits until the call is cancelled.\"\ncommand = [\"python3\", \"waiter.py\"]\nworker = true\ntask = \"optional\"\n",
        ),
        (
            "pid.toml",
            "description = \"The worker's pid.\"\ncommand = [\"python3\", \"waiter.py\"]\nworker = true\n",
        ),
    ])
}

/// Waits (bounded) for `dir/name` to be written and returns its contents.
fn wait_for_file(dir: &Path, name: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(contents) = std::fs::read_to_string(dir.join(name))
            && !contents.is_empty()
        {
            return contents;
        }
        assert!(Instant::now() < deadline, "`{name}` was never written");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The pid the worker answers with, and every message up to that answer.
fn worker_pid(server: &mut ServeProcess) -> (String, Vec<Value>) {
    let id = server.send_request("tools/call", &json!({"name": "pid", "arguments": {}}));
    let mut seen = Vec::new();
    let answer = server.until(|message| {
        seen.push(message.clone());
        message["id"] == id
    });
    let pid = &answer["result"]["structuredContent"]["pid"];
    assert!(pid.is_u64(), "{answer}");
    (pid.to_string(), seen)
}

// The worker tests of toolsmith-command cancel through the pool; this one
// goes through the server, from the client's `notifications/cancelled`.
#[test]
fn a_cancelled_call_reaches_its_worker_as_a_cancel_line_and_is_answered_once_at_most() {
    let dir = waiter_folder();
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    let call = server.send_request(
        "tools/call",
        &json!({"name": "until_cancelled", "arguments": {}}),
    );
    let started = wait_for_file(dir.path(), "started");
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": call, "reason": "no longer needed"}}),
    );
    assert_eq!(wait_for_file(dir.path(), "saw-cancel"), "yes");

    // The worker answered its cancel in time, so it keeps serving: the pool's one process
    // answers the next call, which it takes only once the cancelled one ended.
    let (pid, seen) = worker_pid(&mut server);
    assert_eq!(pid, started, "the worker was replaced");
    // A cancelled request should not be answered (MCP, "Cancellation"); one answer is
    // allowed for a cancel that crossed the result, a second never.
    let answers = seen.iter().filter(|message| message["id"] == call).count();
    assert!(
        answers <= 1,
        "{answers} answers to the cancelled call: {seen:?}"
    );
}

#[test]
fn a_cancelled_task_reaches_its_worker_as_a_cancel_line() {
    let dir = waiter_folder();
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    // A 2025-11-25 client: the experimental tasks over stdio (docs/tasks.md).
    server.initialize();
    let created = server.request(
        "tools/call",
        &json!({"name": "until_cancelled", "arguments": {}, "task": {}}),
    );
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let started = wait_for_file(dir.path(), "started");
    let cancelled = server.request("tasks/cancel", &json!({"taskId": task}));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    assert_eq!(wait_for_file(dir.path(), "saw-cancel"), "yes");
    let (pid, _) = worker_pid(&mut server);
    assert_eq!(pid, started, "the worker was replaced");
}
