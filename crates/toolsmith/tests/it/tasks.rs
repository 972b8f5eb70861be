//! MCP tasks (issue 21, item 3; docs/tasks.md): rmcp's client (the official Rust SDK)
//! speaking 2026-07-28 with the `io.modelcontextprotocol/tasks` extension to a real
//! `toolsmith serve --http`: a call becomes a task, its progress shows on `tasks/get`, one
//! task is cancelled and another's result collected. The conformance suite's `tasks-*`
//! scenarios run in `.ci/run`.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    DetailedTask, GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ErrorData, RoleClient, ServiceError};
use serde_json::json;

use crate::serve_process::{PATIENCE, ServeProcess};

/// A folder of two command tools that run as tasks: one that reports progress and then
/// works for a minute (to be cancelled), one that reports progress and finishes.
fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("crunch.toml"),
        r#"description = "Reports progress, then works for a minute."
command = ["sh", "-c", "echo 'mcp:{{\"progress\": 1, \"total\": 3, \"message\": \"step one\"}}' >&2; sleep 60; echo crunched"]
task = "required"
timeout = "2m"
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("tally.toml"),
        r#"description = "Reports progress, then finishes."
command = ["sh", "-c", "echo 'mcp:{{\"progress\": 2, \"total\": 2}}' >&2; echo tallied {count}"]
task = "required"

[[parameters]]
name = "count"
type = "integer"
required = true
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("plain.toml"),
        "description = \"Never a task.\"\ncommand = [\"echo\", \"plain\"]\n",
    )
    .unwrap();
    dir
}

/// A 2026-07-28 client (`server/discover`, per-request metadata) that declares the tasks
/// extension, or not.
fn connect(
    runtime: &tokio::runtime::Runtime,
    url: &str,
    tasks: bool,
) -> RunningService<RoleClient, ClientConfig> {
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    let config = ClientConfig::new(capabilities, Implementation::new("tasks-test", "1.0.0"));
    // The transport spawns its worker when made: inside the runtime.
    runtime
        .block_on(async {
            config
                .serve_with_lifecycle(
                    StreamableHttpClientTransport::from_uri(url.to_owned()),
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
        })
        .unwrap()
}

fn call(
    runtime: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ClientConfig>,
    name: &'static str,
    arguments: serde_json::Value,
) -> Result<CallToolResponse, ServiceError> {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    runtime.block_on(
        client
            .peer()
            .call_tool_once(CallToolRequestParams::new(name).with_arguments(arguments)),
    )
}

fn get(
    runtime: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ClientConfig>,
    id: &str,
) -> DetailedTask {
    runtime
        .block_on(client.peer().get_task(GetTaskParams::new(id)))
        .unwrap()
        .task
}

/// Polls `tasks/get` until `done` holds of the task; fails after [`PATIENCE`].
fn poll_until(
    runtime: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, ClientConfig>,
    id: &str,
    mut done: impl FnMut(&DetailedTask) -> bool,
) -> DetailedTask {
    let started = Instant::now();
    loop {
        let task = get(runtime, client, id);
        if done(&task) {
            return task;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "task never got there: {task:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn task_id(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

#[test]
fn a_task_shows_progress_is_cancelled_and_another_gives_its_result() {
    let dir = folder();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = connect(&runtime, server.url(), true);

    let crunch = task_id(call(&runtime, &client, "crunch", json!({})).unwrap());
    let tally = task_id(call(&runtime, &client, "tally", json!({"count": 7})).unwrap());

    // Progress shows as the task's status message while it runs.
    let running = poll_until(&runtime, &client, &crunch, |task| {
        task.task.status_message.as_deref() == Some("1/3: step one")
    });
    assert_eq!(running.status(), TaskStatus::Working);

    // Cancelled, it stops (its process group is killed) and says so.
    runtime
        .block_on(client.peer().cancel_task(CancelTaskParams::new(&crunch)))
        .unwrap();
    let cancelled = poll_until(&runtime, &client, &crunch, |task| {
        task.status().is_terminal()
    });
    assert_eq!(cancelled.status(), TaskStatus::Cancelled);

    // The other one's result is inlined once it completed.
    let completed = poll_until(&runtime, &client, &tally, |task| {
        task.status().is_terminal()
    });
    let TaskPayload::Completed { result } = &completed.payload else {
        panic!("expected a completed task, got {completed:?}")
    };
    assert_eq!(result["content"][0]["text"], "tallied 7");
    assert_eq!(result["isError"], false);
    assert_eq!(completed.task.status_message.as_deref(), Some("2/2"));

    // A tool that is never a task answers in the request, even for a tasks client.
    let plain = call(&runtime, &client, "plain", json!({})).unwrap();
    assert!(matches!(plain, CallToolResponse::Complete(_)), "{plain:?}");
}

#[test]
fn a_required_task_is_refused_to_a_client_without_tasks() {
    let dir = folder();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = connect(&runtime, server.url(), false);
    let refused = call(&runtime, &client, "tally", json!({"count": 1})).unwrap_err();
    let ServiceError::McpError(ErrorData { code, data, .. }) = refused else {
        panic!("expected a JSON-RPC error, got {refused:?}")
    };
    assert_eq!(code.0, -32021);
    assert!(
        data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object()
    );
    // Unknown task ids are -32602 for a client that has tasks.
    let client = connect(&runtime, server.url(), true);
    let unknown = runtime
        .block_on(client.peer().get_task(GetTaskParams::new("no-such-task")))
        .unwrap_err();
    let ServiceError::McpError(ErrorData { code, .. }) = unknown else {
        panic!("expected a JSON-RPC error, got {unknown:?}")
    };
    assert_eq!(code.0, -32602);
}
