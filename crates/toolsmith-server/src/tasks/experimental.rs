//! The experimental tasks of MCP 2025-11-25 (basic/utilities/tasks), for clients of that
//! revision: a `tools/call` with a `task` param is answered at once with a
//! `CreateTaskResult` (`{"task": {…}}`), and `tasks/get`, `tasks/result`, `tasks/list` and
//! `tasks/cancel` serve the task; tools show their `task` property as
//! `execution.taskSupport`, and the server declares `capabilities.tasks` (docs/tasks.md).
//! The tasks are the same as 2026-07-28's ([`super::Tasks`], in memory or in Redis); only
//! the wire differs, and all of it is in this file.
//!
//! rmcp 3.11 models SEP-2663's tasks only: it drops the `task` param of a `tools/call`,
//! refuses `tasks/get` and `tasks/cancel` from a client without the extension before the
//! handler sees them, and has no `execution` on a tool nor `tasks` in the capabilities. So
//! a transport hands each message of a 2025-11-25 session to [`rename`] before rmcp reads
//! it: a task message comes to the handler as a custom request named [`PREFIX`] + its
//! method, answered by [`serve`] and the handler with the shapes below; and the transport
//! passes the `initialize` result through [`advertise`].

use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ErrorCode, ListToolsResult, PaginatedRequestParams, Task, TaskPayload,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolsmith_model::{Caller, TaskSupport};

use super::Tasks;
use crate::convert::Published;

/// The prefix of the custom method a renamed 2025-11-25 task request comes as.
pub(crate) const PREFIX: &str = "toolsmith/2025-11-25/";

/// The protocol revision these tasks belong to.
pub(crate) const REVISION: &str = "2025-11-25";

/// The `_meta` key tying a result to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How often `tasks/result` and `tasks/cancel` look at a task they wait for.
const WAIT_STEP: Duration = Duration::from_millis(20);

/// How long `tasks/cancel` waits for the task to stop before it answers.
const CANCEL_PATIENCE: Duration = Duration::from_secs(5);

/// Tasks per `tasks/list` page.
const LIST_PAGE: usize = 100;

/// `message` (one JSON-RPC message of a 2025-11-25 session) renamed to [`PREFIX`] + its
/// method when it is a task request rmcp would misread: `tools/call` with a `task` param,
/// `tools/list` (for `execution`), `tasks/get`, `tasks/result`, `tasks/list` and
/// `tasks/cancel`. `None` for any other message, which goes to rmcp as it is.
pub(crate) fn rename(message: &[u8]) -> Option<Vec<u8>> {
    // The hot path stays one scan: only a message that says `task` or `tools/list` is read.
    let names = |word: &[u8]| message.windows(word.len()).any(|window| window == word);
    if !(names(b"task") || names(b"tools/list")) {
        return None;
    }
    let mut value: Value = serde_json::from_slice(message).ok()?;
    let object = value.as_object_mut()?;
    object.get("id")?;
    let method = object.get("method")?.as_str()?;
    let renamed = match method {
        "tools/call" => object
            .get("params")
            .is_some_and(|params| params.get("task").is_some()),
        "tools/list" | "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => true,
        _ => false,
    };
    if !renamed {
        return None;
    }
    let method = format!("{PREFIX}{method}");
    object.insert("method".to_owned(), Value::String(method));
    serde_json::to_vec(&value).ok()
}

/// Adds the server's 2025-11-25 `capabilities.tasks` to an `initialize` `result` that
/// agreed on that revision: `tasks/list`, `tasks/cancel` and task-augmented `tools/call`.
pub(crate) fn advertise(result: &mut Value) {
    if result.get("protocolVersion").and_then(Value::as_str) != Some(REVISION) {
        return;
    }
    if let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        capabilities.insert(
            "tasks".to_owned(),
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        );
    }
}

/// The params of a task-augmented `tools/call`: the call, and the TTL the client asked
/// for (`task.ttl`, milliseconds).
pub(crate) fn call_params(
    params: Option<Value>,
) -> Result<(CallToolRequestParams, Option<u64>), ErrorData> {
    let mut params = params.unwrap_or(Value::Null);
    let task = params
        .as_object_mut()
        .and_then(|params| params.remove("task"))
        .unwrap_or(Value::Null);
    if !task.is_object() {
        return Err(ErrorData::invalid_params(
            "`task` must be an object, e.g. {\"ttl\": 60000}",
            None,
        ));
    }
    let ttl = task.get("ttl").and_then(Value::as_u64);
    let call = serde_json::from_value(params).map_err(|error| {
        ErrorData::invalid_params(format!("invalid params for `tools/call`: {error}"), None)
    })?;
    Ok((call, ttl))
}

/// The params of a renamed `tools/list`.
pub(crate) fn list_params(
    params: Option<Value>,
) -> Result<Option<PaginatedRequestParams>, ErrorData> {
    params
        .filter(|params| !params.is_null())
        .map(serde_json::from_value)
        .transpose()
        .map_err(|error| {
            ErrorData::invalid_params(format!("invalid params for `tools/list`: {error}"), None)
        })
}

/// `CreateTaskResult`: the new task.
pub(crate) fn created(task: &Task) -> Value {
    json!({ "task": wire(task) })
}

/// `tools/list` with each tool that may run as a task showing it: `execution.taskSupport`
/// `"optional"` or `"required"` (absent, as `"forbidden"`, for the others).
pub(crate) fn with_execution(list: &ListToolsResult, published: &Published) -> Value {
    let supports: Vec<Option<&str>> = list
        .tools
        .iter()
        .map(|tool| {
            let index = published.index_of(&tool.name)?;
            match published.catalog.entries()[index].definition().task {
                TaskSupport::Optional => Some("optional"),
                TaskSupport::Required => Some("required"),
                TaskSupport::Never => None,
            }
        })
        .collect();
    let mut value = serde_json::to_value(list).unwrap_or(Value::Null);
    if let Some(list) = value.as_object_mut() {
        // SEP-2322's discriminator is not on the 2025-11-25 wire.
        list.remove("resultType");
    }
    if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
        for (tool, support) in tools.iter_mut().zip(supports) {
            if let (Some(tool), Some(support)) = (tool.as_object_mut(), support) {
                tool.insert("execution".to_owned(), json!({ "taskSupport": support }));
            }
        }
    }
    value
}

/// Answers the renamed `tasks/*` request `method` of `caller`, whose tasks are listed in
/// `scope`; `cancelled` ends a `tasks/result` that waits.
pub(crate) async fn serve(
    tasks: &Tasks,
    method: &str,
    params: Option<Value>,
    caller: Option<&Caller>,
    scope: &str,
    cancelled: &CancellationToken,
) -> Result<Value, ErrorData> {
    let params = params.unwrap_or(Value::Null);
    match method {
        "tasks/get" => Ok(wire(&tasks.get(task_id(&params)?, caller).await?.task)),
        "tasks/result" => result(tasks, task_id(&params)?, caller, cancelled).await,
        "tasks/cancel" => cancel(tasks, task_id(&params)?, caller).await,
        "tasks/list" => list(tasks, scope, &params).await,
        _ => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            method.to_owned(),
            None,
        )),
    }
}

/// `tasks/result`: waits for the task to end, then answers what the call would have: its
/// result (with the related-task `_meta`) or its JSON-RPC error.
async fn result(
    tasks: &Tasks,
    id: &str,
    caller: Option<&Caller>,
    cancelled: &CancellationToken,
) -> Result<Value, ErrorData> {
    loop {
        match tasks.get(id, caller).await?.payload {
            TaskPayload::Completed { mut result } => {
                // SEP-2322's discriminator is not on the 2025-11-25 wire.
                result.remove("resultType");
                let meta = result.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": id }));
                }
                return Ok(Value::Object(result));
            }
            TaskPayload::Failed { error } => {
                return Err(serde_json::from_value(Value::Object(error))
                    .unwrap_or_else(|_| ErrorData::internal_error("the task failed", None)));
            }
            TaskPayload::Cancelled => {
                return Err(ErrorData::internal_error(
                    format!("task {id} was cancelled: it has no result"),
                    None,
                ));
            }
            _ => {}
        }
        tokio::select! {
            () = tokio::time::sleep(WAIT_STEP) => {}
            () = cancelled.cancelled() => {
                return Err(ErrorData::internal_error("the request was cancelled", None));
            }
        }
    }
}

/// `tasks/cancel`: `-32602` for a task that already ended; else stops it and answers it
/// `cancelled` once it stopped (at most [`CANCEL_PATIENCE`] later, as it is then).
async fn cancel(tasks: &Tasks, id: &str, caller: Option<&Caller>) -> Result<Value, ErrorData> {
    let task = tasks.get(id, caller).await?;
    if task.status().is_terminal() {
        return Err(ErrorData::invalid_params(
            format!(
                "task {id} already ended ({}): only a running task can be cancelled",
                status(&task.task)
            ),
            None,
        ));
    }
    tasks.cancel(id, caller).await?;
    let deadline = Instant::now() + CANCEL_PATIENCE;
    loop {
        let task = tasks.get(id, caller).await?;
        if task.status().is_terminal() || Instant::now() >= deadline {
            return Ok(wire(&task.task));
        }
        tokio::time::sleep(WAIT_STEP).await;
    }
}

/// `tasks/list`: the caller's tasks, oldest first, [`LIST_PAGE`] a page.
async fn list(tasks: &Tasks, scope: &str, params: &Value) -> Result<Value, ErrorData> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => cursor
            .as_str()
            .and_then(|cursor| cursor.parse::<usize>().ok())
            .ok_or_else(|| ErrorData::invalid_params("invalid cursor", None))?,
    };
    let all = tasks.list(scope).await?;
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|task| wire(&task.task))
        .collect();
    let mut answer = json!({ "tasks": page });
    if start + LIST_PAGE < all.len() {
        answer["nextCursor"] = Value::String((start + LIST_PAGE).to_string());
    }
    Ok(answer)
}

fn task_id(params: &Value) -> Result<&str, ErrorData> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params("`taskId` (a string) is required", None))
}

/// A task on the 2025-11-25 wire: `ttl` and `pollInterval` (not `ttlMs`,
/// `pollIntervalMs`), no payload.
fn wire(task: &Task) -> Value {
    let mut wire = json!({
        "taskId": task.task_id,
        "status": task.status,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttl": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        wire["statusMessage"] = Value::String(message.clone());
    }
    if let Some(interval) = task.poll_interval_ms {
        wire["pollInterval"] = interval.into();
    }
    wire
}

fn status(task: &Task) -> String {
    serde_json::to_value(task.status)
        .ok()
        .and_then(|status| status.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_requests_are_renamed_and_others_are_not() {
        // rmcp drops the `task` param and refuses 2025-11-25 `tasks/get`.
        let renamed = |message: &str| {
            rename(message.as_bytes()).map(|bytes| {
                serde_json::from_slice::<Value>(&bytes).unwrap()["method"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
        };
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{"ttl":1000}}}"#;
        assert_eq!(
            renamed(call).as_deref(),
            Some("toolsmith/2025-11-25/tools/call")
        );
        let get = r#"{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}"#;
        assert_eq!(
            renamed(get).as_deref(),
            Some("toolsmith/2025-11-25/tasks/get")
        );
        let plain = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task"}}"#;
        assert_eq!(renamed(plain), None);
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/tasks/status"}"#;
        assert_eq!(renamed(notification), None);
    }

    #[test]
    fn only_a_2025_11_25_initialize_result_advertises_tasks() {
        let mut agreed = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}});
        advertise(&mut agreed);
        assert_eq!(
            agreed["capabilities"]["tasks"]["requests"]["tools"]["call"],
            json!({})
        );
        let mut older = json!({"protocolVersion": "2025-06-18", "capabilities": {}});
        advertise(&mut older);
        assert!(older["capabilities"].get("tasks").is_none());
    }
}
