//! A real third-party server as an upstream:
//! `@modelcontextprotocol/server-everything`, the MCP project's own demonstration server
//! (pinned in `.ci/upstreams/package.json`), behind `toolsmith serve` over stdio. Its tools
//! are listed under the prefix, with the tools it registers only after `initialize`; text,
//! image and structured results pass through unchanged; a long operation's progress reaches
//! the client under the client's token; a cancelled call gets no answer and the session goes
//! on. Ignored unless run with `cargo test -- --include-ignored` (as `.ci/run` does), which
//! needs `npm ci --prefix .ci/upstreams`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;

fn serve_everything() -> (tempfile::TempDir, ServeProcess) {
    let entry = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../.ci/upstreams/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    crate::require(
        entry.is_file(),
        "server-everything (npm ci --prefix .ci/upstreams)",
    );
    let dir = crate::folder(&[(
        "toolsmith.toml",
        &format!(
            "[upstream.everything]\ncommand = [\"node\", {:?}, \"stdio\"]\n",
            entry.display().to_string()
        ),
    )]);
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    (dir, server)
}

#[test]
#[ignore = "needs server-everything: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn server_everything_is_served_under_its_prefix_with_results_unchanged() {
    let (_dir, mut server) = serve_everything();
    let names = server.tool_names();
    for name in [
        "everything_echo",
        "everything_get-sum",
        "everything_get-tiny-image",
        "everything_get-structured-content",
        "everything_trigger-long-running-operation",
    ] {
        assert!(
            names.iter().any(|listed| listed == name),
            "{name} in {names:?}"
        );
    }
    assert!(
        names.iter().all(|name| name.starts_with("everything_")),
        "{names:?}"
    );

    let echoed = server.call_text("everything_echo", &json!({"message": "hello"}));
    assert!(echoed.contains("hello"), "{echoed}");
    let sum = server.call_text("everything_get-sum", &json!({"a": 2, "b": 40}));
    assert!(sum.contains("42"), "{sum}");
    let image = server.call("everything_get-tiny-image", &json!({}));
    let kinds: Vec<&str> = image["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["type"].as_str())
        .collect();
    assert!(
        kinds.contains(&"image"),
        "an image block passes through: {image}"
    );
    let image_block = image["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "image")
        .unwrap();
    assert_eq!(image_block["mimeType"], "image/png", "{image_block}");
    assert!(
        image_block["data"]
            .as_str()
            .is_some_and(|data| data.len() > 100)
    );
    let weather = server.call(
        "everything_get-structured-content",
        &json!({"location": "New York"}),
    );
    assert!(
        weather["structuredContent"].is_object(),
        "structured content passes through: {weather}"
    );
    // Arguments are checked against the upstream's own schema before anything is sent.
    let invalid = server.call("everything_get-sum", &json!({"a": "two", "b": 40}));
    assert_eq!(invalid["isError"], true, "{invalid}");

    // A block's annotations pass through too (the client decides by them who
    // sees it), and a resource link keeps its fields.
    let annotated = server.call(
        "everything_get-annotated-message",
        &json!({"messageType": "error", "includeImage": true}),
    );
    let blocks = annotated["content"].as_array().unwrap();
    assert_eq!(
        blocks[0]["annotations"],
        json!({"priority": 1.0, "audience": ["user", "assistant"]}),
        "{annotated}"
    );
    assert_eq!(
        blocks[1]["annotations"],
        json!({"priority": 0.5, "audience": ["user"]}),
        "{annotated}"
    );
    let links = server.call("everything_get-resource-links", &json!({"count": 2}));
    let link = links["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "resource_link")
        .unwrap_or_else(|| panic!("a resource_link block: {links}"));
    assert!(
        link["uri"].is_string() && link["name"].is_string(),
        "{link}"
    );
}

#[test]
#[ignore = "needs server-everything: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn server_everything_progress_reaches_the_client_and_a_cancelled_call_ends() {
    let (_dir, mut server) = serve_everything();
    let id = server.send_request(
        "tools/call",
        &json!({"name": "everything_trigger-long-running-operation",
                "arguments": {"duration": 1, "steps": 3},
                "_meta": {"progressToken": 77}}),
    );
    let mut steps = Vec::new();
    let answer = server.until(|message| {
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], 77, "{message}");
            steps.push(message["params"]["progress"].as_f64());
        }
        message["id"] == id
    });
    assert_eq!(
        steps,
        [Some(1.0), Some(2.0), Some(3.0)],
        "every step, in order"
    );
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("completed")),
        "{answer}"
    );

    // A long one, cancelled after its first step: no answer comes for it, and the next
    // call is answered as usual.
    let long = server.send_request(
        "tools/call",
        &json!({"name": "everything_trigger-long-running-operation",
                "arguments": {"duration": 120, "steps": 120},
                "_meta": {"progressToken": "long"}}),
    );
    server.until(|message| {
        message["method"] == "notifications/progress"
            && message["params"]["progressToken"] == "long"
    });
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": long, "reason": "the test is done with it"}}),
    );
    let next = server.send_request(
        "tools/call",
        &json!({"name": "everything_echo", "arguments": {"message": "next"}}),
    );
    let answered: Value =
        server.until(|message| message.get("id").is_some() && message["method"].is_null());
    assert_eq!(
        answered["id"], next,
        "the cancelled call got no answer: {answered}"
    );
}

/// `resources/subscribe` of an upstream's resource is forwarded to it, and its
/// `notifications/resources/updated` reach the subscribed client; after
/// `resources/unsubscribe` the upstream is told too, and sends nothing more for it.
#[test]
#[ignore = "needs server-everything: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn server_everything_resource_updates_reach_a_subscribed_client() {
    let (_dir, mut server) = serve_everything();
    let uri = "demo://resource/static/document/features.md";
    let subscribed = server.request("resources/subscribe", &json!({"uri": uri}));
    assert!(subscribed["result"].is_object(), "{subscribed}");

    // server-everything sends `resources/updated` for each URI its client subscribed to,
    // once at once and then every 5 s, while the tool has them on.
    server.call("everything_toggle-subscriber-updates", &json!({}));
    let updated = server.until(|message| message["method"] == "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], uri, "{updated}");
    server.call("everything_toggle-subscriber-updates", &json!({}));

    let unsubscribed = server.request("resources/unsubscribe", &json!({"uri": uri}));
    assert!(unsubscribed["result"].is_object(), "{unsubscribed}");
    // On again: had Toolsmith kept its subscription upstream, the update would come now.
    server.call("everything_toggle-subscriber-updates", &json!({}));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let id = server.send_request("ping", &json!({}));
    server.until(|message| {
        assert_ne!(
            message["method"], "notifications/resources/updated",
            "an update after unsubscribing: {message}"
        );
        message["id"] == id
    });
}
