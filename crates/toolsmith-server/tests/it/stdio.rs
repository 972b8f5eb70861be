//! The example tools over stdio streams: handshake, list, the result contract, and what a
//! client that sends garbage gets.

use rmcp::model::ErrorCode;
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use toolsmith_server::testing::ReplaceCatalog as _;

use crate::{BEHAVIOUR, call, examples, folder, state_for, stdio_client, text};

#[tokio::test]
async fn initialize_reports_the_folder_server_info() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let info = client.peer_info().unwrap();
    assert_eq!(
        info.server_info.as_ref().unwrap().name,
        "toolsmith-examples"
    );
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .starts_with("Example tools")
    );
    let capabilities = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(capabilities["tools"], json!({"listChanged": true}));
    assert!(capabilities.get("logging").is_some());
}

#[tokio::test]
async fn lists_every_tool_but_discoverable_ones_in_name_order() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for expected in [
        "calendar_month",
        "forecast_get",
        "forecast_compare",
        "git_log",
        "hello",
        "process_list",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert!(!names.contains(&"add"), "discoverable `add` is listed");
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    // Published exactly as `toolsmith list --json` shows it.
    let folder = toolsmith_folder::ToolFolder::load(&examples()).unwrap();
    let forecast = tools
        .iter()
        .find(|tool| tool.name == "forecast_get")
        .unwrap();
    let expected = folder
        .catalog()
        .get("forecast_get")
        .unwrap()
        .definition()
        .to_mcp();
    assert_eq!(serde_json::to_value(forecast).unwrap(), expected);
}

#[tokio::test]
async fn results_follow_the_contract() {
    let client = stdio_client(state_for(&examples(), 8)).await;

    let hello = client
        .call_tool(call("hello", json!({"name": "Ada", "times": 2})))
        .await
        .unwrap();
    assert_eq!(text(&hello), "Hello, Ada!\nHello, Ada!");
    assert_eq!(hello.is_error, Some(false));

    let forecast = client
        .call_tool(call("forecast_get", json!({"city": "Oslo", "days": 1})))
        .await
        .unwrap();
    assert_eq!(forecast.is_error, Some(false));
    assert_eq!(
        forecast.structured_content.as_ref().unwrap()["city"],
        "Oslo"
    );

    let unknown_city = client
        .call_tool(call("forecast_get", json!({"city": "Atlantis"})))
        .await
        .unwrap();
    assert_eq!(unknown_city.is_error, Some(true));
    assert_eq!(text(&unknown_city), "unknown city: Atlantis");
    assert!(unknown_city.structured_content.as_ref().unwrap()["known_cities"].is_array());

    let invalid = client
        .call_tool(call("forecast_get", json!({"city": 3, "days": 99})))
        .await
        .unwrap();
    assert_eq!(invalid.is_error, Some(true));
    // What the client's model reads: every violation, with its path.
    insta::assert_snapshot!("invalid_arguments", text(&invalid));

    // Discoverable tools are hidden from the list, not from calls.
    let add = client
        .call_tool(call("add", json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert_eq!(add.is_error, Some(false), "{}", text(&add));
}

#[tokio::test]
async fn unknown_tool_is_invalid_params_with_a_suggestion() {
    let client = stdio_client(state_for(&examples(), 8)).await;
    let error = client.call_tool(call("helo", json!({}))).await.unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error.message.contains("did you mean `hello`"),
        "{}",
        error.message
    );
}

/// A client that writes raw lines and reads raw lines.
struct Raw {
    input: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    output: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    server: tokio::task::JoinHandle<Result<(), toolsmith_server::ServeError>>,
}

impl Raw {
    fn start() -> Self {
        Self::serve(state_for(&examples(), 8))
    }

    fn serve(state: toolsmith_server::ServerState) -> Self {
        Self::serve_buffered(state, 1 << 20)
    }

    /// A server whose streams buffer `bytes` each way.
    fn serve_buffered(state: toolsmith_server::ServerState, bytes: usize) -> Self {
        let (server_end, client_end) = tokio::io::duplex(bytes);
        let (read, write) = tokio::io::split(server_end);
        let server = tokio::spawn(toolsmith_server::serve_stream(
            state,
            read,
            write,
            CancellationToken::new(),
        ));
        let (output, input) = tokio::io::split(client_end);
        Self {
            input,
            output: BufReader::new(output).lines(),
            server,
        }
    }

    async fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn receive(&mut self) -> Value {
        let line = self.output.next_line().await.unwrap().expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"))
    }

    /// Messages up to and including the response to `id`.
    async fn until_response(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.receive().await;
            let done = message["id"] == id;
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    async fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
        assert_eq!(self.receive().await["id"], 0);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }
}

#[tokio::test]
async fn malformed_line_gets_a_parse_error_and_the_server_goes_on() {
    let mut raw = Raw::start();
    raw.initialize().await;
    raw.send("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ")
        .await;
    assert_eq!(raw.receive().await["error"]["code"], -32700);
    raw.send(r#"{"not": "a message"}"#).await;
    assert_eq!(raw.receive().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(
        raw.receive().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[tokio::test]
async fn notification_before_initialize_does_not_end_the_session() {
    let mut raw = Raw::start();
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Bo"}}}"#).await;
    assert_eq!(
        raw.receive().await["result"]["content"][0]["text"],
        "Hello, Bo!"
    );
}

#[tokio::test]
async fn end_of_input_ends_the_server_cleanly() {
    let mut raw = Raw::start();
    raw.initialize().await;
    raw.input.shutdown().await.unwrap();
    drop(raw.input);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(20), raw.server)
        .await
        .unwrap()
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
    assert!(raw.output.next_line().await.unwrap().is_none());
}

#[tokio::test]
async fn stateless_2026_discover_is_answered() {
    let mut raw = Raw::start();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#
    ))
    .await;
    let discovered = raw.receive().await;
    let versions = discovered["result"]["supportedVersions"]
        .as_array()
        .unwrap_or_else(|| panic!("{discovered}"));
    assert!(versions.contains(&json!("2026-07-28")), "{discovered}");
    // Without an initialize handshake, each request carries its version.
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"hello","arguments":{{"name":"Cy"}},{meta}}}}}"#
    ))
    .await;
    let called = raw.receive().await;
    assert_eq!(
        called["result"]["content"][0]["text"], "Hello, Cy!",
        "{called}"
    );
}

#[tokio::test]
async fn progress_and_logs_reach_the_client_before_the_result() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let mut raw = Raw::serve(state_for(dir.path(), 8));
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty","arguments":{"steps":3},"_meta":{"progressToken":"p1"}}}"#).await;
    let messages = raw.until_response(1).await;
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| &m["params"])
        .collect();
    assert_eq!(progress.len(), 3, "{messages:?}");
    assert_eq!(
        progress[2],
        &json!({"progressToken": "p1", "progress": 3.0, "total": 3.0, "message": "step"})
    );
    let logs: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| &m["params"]["data"])
        .collect();
    assert_eq!(
        logs,
        [&json!("step 1"), &json!("step 2"), &json!("step 3")],
        "debug is held back by default"
    );
    assert_eq!(
        messages.last().unwrap()["result"]["content"][0]["text"],
        "done"
    );

    // Without a progress token there is no progress; after logging/setLevel debug, debug logs flow.
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}"#)
        .await;
    raw.until_response(2).await;
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chatty","arguments":{"steps":1}}}"#).await;
    let messages = raw.until_response(3).await;
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == "notifications/progress"),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["params"]["data"] == "not sent unless asked for"),
        "{messages:?}"
    );
}

/// Plain `tools/call` lines (no `_meta`, as most clients send them) are served by the
/// transport's own dispatch: they must still run concurrently and stop when cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_calls_run_concurrently_and_stop_when_cancelled() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    // Two call slots: the third call can only start once the cancelled tool's thread ended.
    let mut raw = Raw::serve(state_for(dir.path(), 2));
    raw.initialize().await;
    raw.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{}}}"#,
    )
    .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#).await;
    let echoed = tokio::time::timeout(std::time::Duration::from_secs(15), raw.receive())
        .await
        .expect("the fast call waited for the slow one");
    assert_eq!(echoed["id"], 2, "{echoed}");
    assert_eq!(echoed["result"]["content"][0]["text"], "still here");

    raw.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spin","arguments":{}}}"#,
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"changed my mind"}}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"next"}}}"#).await;
    let next = tokio::time::timeout(std::time::Duration::from_secs(15), raw.receive())
        .await
        .expect("a cancelled tool kept its slot");
    // Cancelled requests get no response (as rmcp does for the requests it dispatches).
    assert_eq!(next["id"], 4, "{next}");
    assert_eq!(next["result"]["content"][0]["text"], "next");
}

/// A plain call can ask the client's model; the answer comes back through rmcp's loop.
#[tokio::test]
async fn a_plain_call_can_ask_the_client() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let mut raw = Raw::serve(state_for(dir.path(), 8));
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
    assert_eq!(raw.receive().await["id"], 0);
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"prompt":"ping"}}}"#).await;
    let asked = raw.receive().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    let answer = json!({
        "jsonrpc": "2.0",
        "id": asked["id"],
        "result": {"role": "assistant", "model": "m", "content": {"type": "text", "text": "pong: ping"}},
    });
    raw.send(&answer.to_string()).await;
    let called = raw.receive().await;
    assert_eq!(called["id"], 1, "{called}");
    assert_eq!(
        called["result"]["content"][0]["text"], "pong: ping",
        "{called}"
    );
}

#[tokio::test]
async fn replacing_the_catalog_tells_clients_the_list_changed() {
    let state = state_for(&examples(), 8);
    let client = stdio_client(state.clone()).await;
    let seen = client.service().seen.clone();
    // A round trip: the handshake is over on the server's side too.
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    let dir = folder(&[(
        "only.star",
        "def only() -> str:\n    \"\"\"The one tool.\"\"\"\n    return \"1\"\n\nmcp.tool(only)\n",
    )]);
    let replacement = toolsmith_folder::ToolFolder::load(dir.path()).unwrap();
    state
        .replace_catalog(std::sync::Arc::clone(replacement.catalog()))
        .await;
    for _ in 0..200 {
        if seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        seen.tools_changed.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.into_owned())
        .collect();
    assert_eq!(names, ["only"]);
}

/// Waits (boundedly) for the next message.
async fn next(raw: &mut Raw) -> Value {
    tokio::time::timeout(std::time::Duration::from_secs(15), raw.receive())
        .await
        .expect("an answer within 15 s")
}

// Regression test: requests with an id that cannot be echoed got no
// answer at all.
#[tokio::test]
async fn a_request_with_an_unusable_id_is_answered_with_a_null_id() {
    let mut raw = Raw::start();
    raw.initialize().await;
    for id in [
        "1.5",
        "{\"a\":1}",
        "[1]",
        "true",
        "null",
        "18446744073709551616",
    ] {
        raw.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        let answer = next(&mut raw).await;
        assert_eq!(answer["error"]["code"], -32600, "id {id}: {answer}");
        assert_eq!(answer.get("id"), Some(&Value::Null), "id {id}: {answer}");
    }
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(next(&mut raw).await["id"], 2);
}

// Regression test: a `tools/call` whose params are the wrong shape
// was answered "method not found".
#[tokio::test]
async fn a_call_with_malformed_params_is_invalid_params() {
    let mut raw = Raw::start();
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":[1,2]}}"#).await;
    let answer = next(&mut raw).await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5}}"#)
        .await;
    let answer = next(&mut raw).await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("`tools/call`"), "{message}");
    // A method nobody serves is still "method not found".
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method","params":{}}"#)
        .await;
    let answer = next(&mut raw).await;
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

// Regression test: `arguments` given as an array was answered in serde's
// words ("invalid type: sequence, expected a map"), and an unknown method with its bare
// name, neither of which tells a model what to send instead.
#[tokio::test]
async fn malformed_requests_are_told_what_was_expected() {
    let mut raw = Raw::start();
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":[1,2]}}"#).await;
    let answer = next(&mut raw).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "invalid params for `tools/call`: `arguments` must be an object of parameter names to \
         values, e.g. {\"city\": \"Oslo\"}, not an array"
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#)
        .await;
    let answer = next(&mut raw).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "method not found: `no/such/method`"
    );
}

// Regression test: a 2025-03-26 session refused JSON-RPC batches,
// which that revision allows. Accepted there, and only there.
#[tokio::test]
async fn a_2025_03_26_session_takes_batches_and_later_revisions_refuse_them() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Ada"}}},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    let mut raw = Raw::start();
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
    assert_eq!(
        raw.receive().await["result"]["protocolVersion"],
        "2025-03-26"
    );
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(batch).await;
    let mut answers = vec![raw.receive().await, raw.receive().await];
    answers.sort_by_key(|answer| answer["id"].as_u64());
    assert_eq!(
        answers[0]["result"]["content"][0]["text"], "Hello, Ada!",
        "{answers:?}"
    );
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    raw.send("[]").await;
    let empty = raw.receive().await;
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert_eq!(empty.get("id"), Some(&Value::Null), "{empty}");

    let mut later = Raw::start();
    later.initialize().await;
    later.send(batch).await;
    let refused = later.receive().await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused.get("id"), Some(&Value::Null), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("only protocol revision 2025-03-26"),
        "{message}"
    );
}

// Regression test: a second request with the id of a running one
// took over the id, and the first one's answer was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_id_is_refused_while_its_request_runs() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let mut raw = Raw::serve(state_for(dir.path(), 8));
    raw.initialize().await;
    // The handshake's id is free again once `initialize` was answered.
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#)
        .await;
    assert_eq!(
        next(&mut raw).await,
        json!({"jsonrpc": "2.0", "id": 0, "result": {}})
    );

    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin_briefly","arguments":{}}}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"second"}}}"#).await;
    // A request that rmcp's loop serves is refused the fast path's running id too.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    for _ in 0..2 {
        let refused = next(&mut raw).await;
        assert_eq!(refused["id"], 1, "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("already used"), "{message}");
    }
    let first = next(&mut raw).await;
    assert_eq!(first["id"], 1, "{first}");
    assert_eq!(first["result"]["isError"], true, "{first}");
    let text = first["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("timed out"), "{text}");

    // Answered, the id can be used again.
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}"#).await;
    let again = next(&mut raw).await;
    assert_eq!(again["id"], 1, "{again}");
    assert_eq!(again["result"]["content"][0]["text"], "again", "{again}");
}

// Regression test: rmcp put a `_meta.progressToken` on every request
// the server sends the client.
#[tokio::test]
async fn requests_to_the_client_carry_no_progress_token() {
    let dir = folder(&[("behaviour.star", BEHAVIOUR)]);
    let mut raw = Raw::serve(state_for(dir.path(), 8));
    raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"roots":{}},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
    assert_eq!(next(&mut raw).await["id"], 0);
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"prompt":"ping"}}}"#).await;
    let mut asked_for = Vec::new();
    loop {
        let message = next(&mut raw).await;
        if message["id"] == 1 && message.get("method").is_none() {
            assert_eq!(
                message["result"]["content"][0]["text"], "pong: ping",
                "{message}"
            );
            break;
        }
        let method = message["method"].as_str().unwrap().to_owned();
        assert!(
            message["params"]["_meta"].get("progressToken").is_none(),
            "{message}"
        );
        let result = if method == "roots/list" {
            json!({"roots": []})
        } else {
            json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "pong: ping"}})
        };
        raw.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string())
            .await;
        asked_for.push(method);
    }
    assert_eq!(asked_for, ["roots/list", "sampling/createMessage"]);
}

// Regression test: error replies went into the output queue with
// `try_send` and were dropped once it was full; now the server stops reading instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_invalid_request_is_answered_when_the_client_reads_late() {
    const COUNT: usize = 5000;
    let raw = Raw::serve_buffered(state_for(&examples(), 8), 16 * 1024);
    let Raw {
        mut input,
        mut output,
        server,
    } = raw;
    input.write_all(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await.unwrap();
    input.write_all(b"\n").await.unwrap();
    let writer = tokio::spawn(async move {
        use std::fmt::Write as _;
        let mut lines = String::new();
        lines.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        for id in 1..=COUNT {
            writeln!(lines, r#"{{"jsonrpc":"1.0","id":{id},"method":"ping"}}"#).unwrap();
        }
        lines.push_str("{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n");
        input.write_all(lines.as_bytes()).await.unwrap();
        input
    });
    // The client reads nothing for a while, as a busy client does: far more answers than
    // the output holds pile up.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let mut answered = 0;
    loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), output.next_line())
            .await
            .expect("answers keep coming")
            .unwrap()
            .expect("the server is still there");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == "last" {
            break;
        }
        if message["id"] == 0 {
            continue;
        }
        assert_eq!(message["error"]["code"], -32600, "{message}");
        answered += 1;
    }
    assert_eq!(answered, COUNT, "every request with an id gets its answer");
    drop(writer.await.unwrap());
    server.abort();
}
