//! FastMCP as an upstream (real upstream coverage): a server written with
//! FastMCP (`upstream_fastmcp/server.py`; pip `fastmcp`, pinned in
//! `.ci/sdk/requirements.txt`) behind `toolsmith serve` over stdio. Its tools are listed
//! under the prefix and called; text, structured and error results pass through; its
//! progress and log messages reach the client, and its elicitation is asked of the client
//! and answered. Ignored unless run with `cargo test -- --include-ignored`, which needs
//! `.ci/sdk/.venv` (`.ci/run` makes it).

use serde_json::json;

use crate::serve_process::ServeProcess;

/// `toolsmith serve` of a folder whose `[upstream.fast]` is the FastMCP server, with a
/// client that can elicit.
fn serve_fastmcp() -> (tempfile::TempDir, ServeProcess) {
    let python = crate::gateway_clients::python_sdk();
    let server = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/upstream_fastmcp/server.py");
    let dir = crate::folder(&[(
        "toolsmith.toml",
        &format!(
            "[upstream.fast]\ncommand = [{:?}, {:?}]\n",
            python.display().to_string(),
            server.display().to_string()
        ),
    )]);
    let mut gateway = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    gateway.initialize_with(&json!({"elicitation": {}}));
    (dir, gateway)
}

#[test]
#[ignore = "needs FastMCP in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn a_fastmcp_server_is_listed_and_called_through_toolsmith() {
    let (_dir, mut server) = serve_fastmcp();
    assert_eq!(
        server.tool_names(),
        [
            "fast_add",
            "fast_count",
            "fast_echo",
            "fast_fail",
            "fast_greet"
        ]
    );
    assert_eq!(server.call_text("fast_echo", &json!({"text": "hi"})), "hi");
    let sum = server.call("fast_add", &json!({"a": 2, "b": 40}));
    assert_eq!(sum["structuredContent"], json!({"sum": 42}), "{sum}");
    let failed = server.call("fast_fail", &json!({}));
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(
        failed["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("this tool always fails")),
        "{failed}"
    );
    // Arguments are checked against FastMCP's schema before anything is sent.
    let invalid = server.call("fast_add", &json!({"a": "two", "b": 40}));
    assert_eq!(invalid["isError"], true, "{invalid}");
}

#[test]
#[ignore = "needs FastMCP in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn a_fastmcp_servers_progress_logs_and_elicitation_reach_the_client() {
    let (_dir, mut server) = serve_fastmcp();
    let id = server.send_request(
        "tools/call",
        &json!({"name": "fast_count", "arguments": {"steps": 3},
                "_meta": {"progressToken": "counting"}}),
    );
    let (mut steps, mut logs) = (Vec::new(), Vec::new());
    let answer = server.until(|message| {
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "counting", "{message}");
            steps.push(message["params"]["progress"].as_f64());
        }
        if message["method"] == "notifications/message" {
            logs.push(message["params"]["data"].to_string());
        }
        message["id"] == id
    });
    assert_eq!(
        answer["result"]["content"][0]["text"], "counted to 3",
        "{answer}"
    );
    assert_eq!(
        steps,
        [Some(1.0), Some(2.0), Some(3.0)],
        "every step, in order"
    );
    assert!(
        logs.iter().any(|log| log.contains("counted to 3")),
        "{logs:?}"
    );

    let id = server.send_request(
        "tools/call",
        &json!({"name": "fast_greet", "arguments": {}}),
    );
    let asked = server.until(|message| message["method"] == "elicitation/create");
    assert_eq!(asked["params"]["message"], "What is your name?", "{asked}");
    let schema = &asked["params"]["requestedSchema"];
    let field = schema["properties"]
        .as_object()
        .and_then(|properties| properties.keys().next().cloned())
        .unwrap_or_else(|| panic!("a field to fill in: {asked}"));
    server.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {field: "Ada"}}}));
    let answer = server.until(|message| message["id"] == id && message.get("method").is_none());
    assert_eq!(
        answer["result"]["content"][0]["text"], "Hello, Ada!",
        "{answer}"
    );
}
