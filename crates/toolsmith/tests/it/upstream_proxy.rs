//! What a faithful proxy of an upstream's tools does, each behaviour with a test of its own
//! (docs/gateway.md, "A faithful proxy"): an upstream cancelling what it asked the client
//! cancels it at the client; its tool list changes, log messages, roots requests and result
//! `_meta` cross the gateway; a per-tool timeout, `toolsmith call` and `search`, profiles,
//! `discoverable` and name collisions apply to its tools as to the folder's own; and its
//! process group goes when Toolsmith does. The upstream is a second `toolsmith serve`
//! (the `upstreams.rs` fixture) or `scripted_upstream/server.py`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::{PATIENCE, ServeProcess};
use crate::toolsmith;
use crate::upstreams::{Fixture, alive, scripted_upstream, wait_for_pids, wait_until_gone};

/// When an upstream cancels a request it had sent the client through
/// Toolsmith (sampling here), the client gets `notifications/cancelled` for the request
/// Toolsmith forwarded.
#[test]
fn an_upstream_that_withdraws_its_sampling_request_cancels_it_at_the_client() {
    let fixture = Fixture::new("");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.scripted]\ncommand = [\"python3\", {:?}]\n",
            scripted_upstream()
        ),
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize_with(&json!({"sampling": {}}));
    let asking = server.send_request(
        "tools/call",
        &json!({"name": "scripted_ask", "arguments": {}}),
    );
    let asked = server.until(|message| message["method"] == "sampling/createMessage");
    assert!(
        asked["params"]["messages"]
            .to_string()
            .contains("Is this still needed?"),
        "{asked}"
    );
    // The client leaves it unanswered; the upstream takes it back.
    let withdrawing = server.send_request(
        "tools/call",
        &json!({"name": "scripted_withdraw", "arguments": {}}),
    );
    let (mut cancelled, mut answers) = (None, std::collections::HashMap::new());
    while cancelled.is_none() || answers.len() < 2 {
        let message = server.receive();
        if message["method"] == "notifications/cancelled" {
            cancelled = Some(message);
        } else if message.get("method").is_none() {
            answers.insert(message["id"].as_u64().unwrap(), message);
        }
    }
    let cancelled = cancelled.unwrap();
    assert_eq!(
        cancelled["params"]["requestId"], asked["id"],
        "the forwarded request is the one cancelled: {cancelled}"
    );
    assert_eq!(
        answers[&withdrawing]["result"]["content"][0]["text"],
        "withdrawn"
    );
    assert_eq!(
        answers[&asking]["result"]["content"][0]["text"], "the question was withdrawn",
        "{}",
        answers[&asking]
    );
}

/// The gateway asks an upstream for the 2025-11-25 revision in `initialize`
/// (docs/gateway.md, "A faithful proxy"), not rmcp's newest, 2026-07-28. The scripted
/// upstream grants whichever revision it is asked for, and an upstream on 2026-07-28 may
/// not ask the client things during a call the way the gateway forwards them; on
/// 2025-11-25 its sampling request reaches the client and the answer comes back.
#[test]
fn an_upstream_is_asked_for_the_2025_11_25_revision_and_may_ask_the_client_mid_call() {
    let fixture = Fixture::new("");
    let initializes = fixture.path("initializes");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.scripted]\ncommand = [\"python3\", {:?}, \"--initialize\", {:?}]\n",
            scripted_upstream(),
            initializes.display().to_string()
        ),
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize_with(&json!({"sampling": {}}));
    let asking = server.send_request(
        "tools/call",
        &json!({"name": "scripted_ask", "arguments": {}}),
    );
    let asked = server.until(|message| message["method"] == "sampling/createMessage");
    server.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "model": "test-model",
        "content": {"type": "text", "text": "yes"}}}));
    let answer = server.until(|message| message["id"] == asking);
    assert_eq!(
        answer["result"]["content"][0]["text"], "sampled: yes",
        "{answer}"
    );

    let initializes = std::fs::read_to_string(&initializes).unwrap();
    assert!(
        !initializes.is_empty(),
        "the upstream was never initialized"
    );
    for line in initializes.lines() {
        let params: Value = serde_json::from_str(line).unwrap();
        assert_eq!(params["protocolVersion"], "2025-11-25", "{params}");
        assert_eq!(params["clientInfo"]["name"], "toolsmith", "{params}");
    }
}

/// "a name that another tool already has is a load error naming both", for the
/// folder's own tool and an upstream's, and for two upstreams under one prefix.
#[test]
fn an_upstream_tool_named_like_another_is_a_load_error_naming_both() {
    let fixture = Fixture::stdio();
    fixture.write(
        "outer/inner_echo.star",
        "def inner_echo(text: str) -> str:\n    \"\"\"Echoes from the outer folder, under a name the upstream has too.\n\n    Args:\n        text: What to echo.\n    \"\"\"\n    return text\n\nmcp.tool(inner_echo)\n",
    );
    let config = std::fs::read_to_string(fixture.path("outer/toolsmith.toml")).unwrap();
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "{config}\n[upstream.twin]\nprefix = \"inner\"\ncommand = [{:?}, \"serve\", {:?}]\n",
            binary.display().to_string(),
            fixture.path("inner").display().to_string()
        ),
    );
    let output = toolsmith()
        .args(["list", "--json", &fixture.outer()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "a load error exits 1");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let duplicates: Vec<String> = listed["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|error| error["rule"] == "duplicate-tool-name")
        .map(|error| format!("{}:{} {}", error["path"], error["line"], error["message"]))
        .collect();
    let echo: Vec<&String> = duplicates
        .iter()
        .filter(|text| text.contains("`inner_echo`"))
        .collect();
    assert!(
        echo.iter()
            .any(|text| text.contains("inner_echo.star") && text.contains("toolsmith.toml")),
        "the folder's own tool and the upstream's, both named: {duplicates:?}"
    );
    assert!(
        duplicates
            .iter()
            .any(|text| text.contains("`inner_refuse`")
                && text.matches("toolsmith.toml").count() == 2),
        "two upstreams' tools, both named: {duplicates:?}"
    );
}

/// An upstream's `notifications/tools/list_changed` has Toolsmith list its tools
/// again and tell its own clients. The inner server runs with `--watch`, so a tool added
/// to its folder is such a change.
#[test]
fn an_upstreams_list_changed_refreshes_its_tools_and_reaches_the_client() {
    let fixture = Fixture::new("");
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.inner]\ncommand = [{:?}, \"serve\", {:?}, \"--watch\"]\n",
            binary.display().to_string(),
            fixture.path("inner").display().to_string()
        ),
    );
    let client = McpClient::stdio(&[&fixture.outer()]);
    assert!(!client.tool_names().contains(&"inner_added".to_owned()));
    fixture.write(
        "inner/added.star",
        "def added() -> str:\n    \"\"\"Says it was added while the server ran.\"\"\"\n    return \"added\"\n\nmcp.tool(added)\n",
    );
    client.wait_for_tools_changed(1);
    let deadline = Instant::now() + PATIENCE;
    while !client.tool_names().contains(&"inner_added".to_owned()) {
        assert!(Instant::now() < deadline, "{:?}", client.tool_names());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(client.call_text("inner_added", &json!({})), "added");
}

/// "the upstream's progress notifications go to the client that made the call,
/// its log messages too".
#[test]
fn an_upstreams_log_messages_reach_the_client_before_the_result() {
    let fixture = Fixture::stdio();
    fixture.write(
        "inner/chatty.star",
        "def chatty(word: str) -> str:\n    \"\"\"Logs the word, then says it.\n\n    Args:\n        word: What to log.\n    \"\"\"\n    mcp.log(\"warning\", \"heard \" + word)\n    return word\n\nmcp.tool(chatty)\n",
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    let id = server.send_request(
        "tools/call",
        &json!({"name": "inner_chatty", "arguments": {"word": "hello"}}),
    );
    let mut logged = Vec::new();
    let answer = server.until(|message| {
        if message["method"] == "notifications/message" {
            logged.push(message.clone());
        }
        message["id"] == id
    });
    assert_eq!(answer["result"]["content"][0]["text"], "hello", "{answer}");
    let log = logged
        .iter()
        .find(|log| log["params"]["data"] == "heard hello")
        .unwrap_or_else(|| panic!("the upstream's log in {logged:?}"));
    assert_eq!(log["params"]["level"], "warning", "{log}");
}

/// An upstream's `roots/list` during a call is asked of the client that made it,
/// and the client's roots are its answer.
#[test]
fn an_upstreams_roots_request_is_answered_by_the_client() {
    let fixture = Fixture::stdio();
    fixture.write(
        "inner/where.star",
        "def where() -> dict:\n    \"\"\"Says which roots the client has.\"\"\"\n    return {\"roots\": mcp.roots()}\n\nmcp.tool(where)\n",
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize_with(&json!({"roots": {}}));
    let id = server.send_request(
        "tools/call",
        &json!({"name": "inner_where", "arguments": {}}),
    );
    let root = json!({"uri": "file:///work/project", "name": "project"});
    let mut asked = 0;
    let answer = loop {
        let message = server.receive();
        if message["method"] == "roots/list" {
            asked += 1;
            server
                .send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": [root]}}));
        } else if message["id"] == id && message.get("method").is_none() {
            break message;
        }
    };
    assert!(asked > 0, "the client was asked for its roots");
    assert_eq!(
        answer["result"]["structuredContent"]["roots"],
        json!([root]),
        "{answer}"
    );
}

/// "A tool result's `_meta` passes through, next to its content,
/// `structuredContent` and `isError`."
#[test]
fn an_upstream_results_meta_passes_through() {
    let fixture = Fixture::new("");
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.scripted]\ncommand = [\"python3\", {:?}]\n",
            scripted_upstream()
        ),
    );
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    let result = server.call("scripted_meta", &json!({}));
    assert_eq!(
        result["_meta"],
        json!({"example.com/trace": "trace-1"}),
        "{result}"
    );
    assert_eq!(result["structuredContent"], json!({"ok": true}), "{result}");
    assert_eq!(result["content"][0]["text"], "with meta", "{result}");
}

/// A wrapping manifest's own `timeout` bounds the forwarded call: an `isError`
/// saying it timed out, and the upstream is told to stop the tool.
#[test]
fn a_per_tool_timeout_on_an_upstream_tool_is_an_is_error() {
    let fixture = Fixture::stdio();
    fixture.write(
        "outer/hurried.toml",
        "upstream = \"inner\"\ntool = \"slow\"\ndescription = \"Sleeps, but is given one second for it.\"\ntimeout = \"1s\"\n",
    );
    let client = McpClient::stdio(&[&fixture.outer()]);
    let pidfile = fixture.path("pids");
    let result = client.call(
        "hurried",
        &json!({"pidfile": pidfile.display().to_string()}),
    );
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result).contains("timed out"), "{}", text(&result));
    let pids = wait_for_pids(&pidfile);
    wait_until_gone(pids[1]);
}

/// `toolsmith call` and `toolsmith search` reach an upstream's tools.
#[test]
fn toolsmith_call_and_search_reach_upstream_tools() {
    let fixture = Fixture::stdio();
    let called = toolsmith()
        .args([
            "call",
            &fixture.outer(),
            "inner_echo",
            "text=from the command line",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&called.stdout);
    assert!(
        called.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert!(stdout.contains("from the command line"), "{stdout}");

    let found = crate::json_output(toolsmith().args([
        "search",
        &fixture.outer(),
        "echo the text back",
        "--json",
    ]));
    assert_eq!(found["results"][0]["name"], "inner_echo", "{found}");
}

/// A profile selects an upstream's tools by its tag.
#[test]
fn a_profile_selects_upstream_tools_by_tag() {
    let fixture = Fixture::stdio();
    let config = std::fs::read_to_string(fixture.path("outer/toolsmith.toml")).unwrap();
    fixture.write(
        "outer/toolsmith.toml",
        &format!("{config}\n[profiles.relay]\ntools = [\"tag:inner\"]\n"),
    );
    let client = McpClient::stdio(&["--profile", "relay", &fixture.outer()]);
    assert_eq!(
        client.tool_names(),
        ["inner_echo", "inner_refuse", "inner_slow"]
    );
    assert_eq!(
        client
            .call("inner_echo", &json!({"text": "profiled"}))
            .structured_content,
        Some(json!({"text": "profiled"}))
    );
}

/// An upstream tool marked `discoverable` (here by a wrapping manifest) is not
/// listed, is found by `tool_search` and runs through `execute_tool`.
#[test]
fn a_discoverable_upstream_tool_is_found_by_search_and_executed() {
    let fixture = Fixture::stdio();
    fixture.write(
        "outer/repeat_back.toml",
        "upstream = \"inner\"\ntool = \"echo\"\nreplace = true\ndiscoverable = true\ndescription = \"Repeats a sentence back word for word, for checking what was heard.\"\n",
    );
    let client = McpClient::stdio(&[&fixture.outer()]);
    let names = client.tool_names();
    assert!(!names.contains(&"repeat_back".to_owned()), "{names:?}");
    assert!(names.contains(&"tool_search".to_owned()), "{names:?}");
    let found = client.call_text(
        "tool_search",
        &json!({"query": "repeat a sentence back word for word"}),
    );
    assert!(found.starts_with("repeat_back"), "{found}");
    let ran = client.call(
        "execute_tool",
        &json!({"name": "repeat_back", "arguments": {"text": "heard"}}),
    );
    assert_eq!(ran.is_error, Some(false), "{}", text(&ran));
    assert!(text(&ran).contains("heard"), "{}", text(&ran));
}

/// "each upstream program runs in its own process group, killed when its
/// connection ends and when Toolsmith exits": a child the upstream started in the
/// background is gone once Toolsmith has exited, stopped by SIGTERM or by its stdin closing.
#[test]
fn the_upstreams_process_group_goes_when_toolsmith_exits() {
    for ending in ["SIGTERM", "stdin closed"] {
        let fixture = Fixture::new("");
        let pidfile = fixture.path("child");
        fixture.write(
            "outer/toolsmith.toml",
            &format!(
                "[upstream.parent]\ncommand = [\"sh\", \"-c\", \"sleep 300 & echo $! > \\\"$0\\\"; exec python3 \\\"$1\\\"\", {:?}, {:?}]\n",
                pidfile.display().to_string(),
                scripted_upstream()
            ),
        );
        let mut server = ServeProcess::stdio(&[&fixture.outer()]);
        server.initialize();
        let deadline = Instant::now() + PATIENCE;
        let child = loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok())
            {
                break pid;
            }
            assert!(Instant::now() < deadline, "the upstream started no child");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            alive(child),
            "{ending}: the child runs while Toolsmith does"
        );
        match ending {
            "SIGTERM" => {
                server.stop();
            }
            _ => {
                server.finish();
            }
        }
        wait_until_gone(child);
    }
}
