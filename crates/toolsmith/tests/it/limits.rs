//! `[limits]` in toolsmith.toml (docs/limits.md): a caller's burst past
//! `calls_per_minute` gets 429 with `Retry-After` over HTTP and a JSON-RPC error over stdio,
//! a tool past its `[limits.tools]` quota an `isError` result, a caller past
//! `concurrent_calls` 429 while its call runs, and with `--state` two replicas behind nginx
//! draw on one budget through Redis.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::services::{
    free_port, nginx, redis, replica, replicas_that_answered, require_redis_and_nginx,
};

const ECHO: &str = "def echo(text: str) -> str:\n    \"\"\"Echo the text back.\n\n    Args:\n        text: What to echo.\n    \"\"\"\n    return text\n\ndef other() -> str:\n    \"\"\"Say ok.\"\"\"\n    return \"ok\"\n\nmcp.tool(echo)\nmcp.tool(other)\n";

fn call_body(id: u64, tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": if tool == "echo" { json!({"text": "hi"}) } else { json!({}) }}}).to_string()
}

/// One stateless `tools/call` POST to `address` (`host:port`); status, head and body.
fn post_call(address: &str, id: u64, tool: &str) -> (u16, String, String) {
    let body = call_body(id, tool);
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in `{answer}`"));
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (status, head.to_owned(), body.to_owned())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// The JSON-RPC error of a 429 body: code `-32029`, the limit named, the request's id.
fn assert_rate_limited(head: &str, body: &str, id: u64, limit: &str) {
    let retry: u64 = header(head, "retry-after")
        .unwrap_or_else(|| panic!("no Retry-After in {head}"))
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "Retry-After: {retry}");
    let error: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("{body}"));
    assert_eq!(error["id"], id, "{error}");
    assert_eq!(error["error"]["code"], -32029, "{error}");
    assert_eq!(error["error"]["data"]["limit"], limit, "{error}");
    assert_eq!(error["error"]["data"]["retryAfter"], retry, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("`[limits] {limit}`")),
        "{message}"
    );
}

fn metrics(server: &ServeProcess) -> String {
    let (status, answer) = server.raw(&format!(
        "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.address()
    ));
    assert_eq!(status, 200, "{answer}");
    answer
}

#[test]
fn a_burst_past_calls_per_minute_gets_429_with_retry_after() {
    let tools = crate::folder(&[
        ("tools.star", ECHO),
        ("toolsmith.toml", "[limits]\ncalls_per_minute = 3\n"),
    ]);
    let server = ServeProcess::http(&[tools.path().to_str().unwrap()], None);
    for id in 1..=3 {
        let (status, head, body) = post_call(server.address(), id, "echo");
        assert_eq!(status, 200, "call {id}: {head}\n{body}");
    }
    let (status, head, body) = post_call(server.address(), 4, "other");
    assert_eq!(status, 429, "{head}\n{body}");
    assert_rate_limited(&head, &body, 4, "calls_per_minute");
    assert!(body.contains("the client `127.0.0.1`"), "{body}");
    // Other requests are not calls: they go through.
    let (status, _, body) = server.post(
        &[("Content-Type", "application/json")],
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let scraped = metrics(&server);
    assert!(
        scraped.contains("toolsmith_rate_limited_total{limit=\"calls_per_minute\"} 1"),
        "{scraped}"
    );
}

#[test]
fn over_stdio_a_tool_quota_is_is_error_and_the_caller_limit_a_json_rpc_error() {
    let tools = crate::folder(&[
        ("tools.star", ECHO),
        (
            "toolsmith.toml",
            "[limits]\ncalls_per_minute = 4\n[limits.tools]\necho = 2\n",
        ),
    ]);
    let mut server = ServeProcess::stdio(&[tools.path().to_str().unwrap()]);
    server.initialize();
    let echo = json!({"text": "hi"});
    assert_eq!(server.call_text("echo", &echo), "hi");
    assert_eq!(server.call_text("echo", &echo), "hi");
    // The tool's quota: an isError result the model can read, naming the limit.
    let third = server.call("echo", &echo);
    assert_eq!(third["isError"], true, "{third}");
    let text = third["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`[limits.tools] echo`"), "{text}");
    assert!(text.contains("retry in"), "{text}");
    assert_eq!(third["structuredContent"]["limit"], "tools", "{third}");
    // Another tool is not held to it.
    assert_eq!(server.call_text("other", &json!({})), "ok");
    // The fifth call of the minute: the one caller's limit, a JSON-RPC error.
    let fifth = server.request("tools/call", &json!({"name": "other", "arguments": {}}));
    assert_eq!(fifth["error"]["code"], -32029, "{fifth}");
    assert_eq!(
        fifth["error"]["data"]["limit"], "calls_per_minute",
        "{fifth}"
    );
}

/// `[limits]` edited while `--watch` serves.
#[test]
fn an_edited_limit_applies_on_reload_and_the_counts_so_far_still_count() {
    let tools = crate::folder(&[
        ("tools.star", ECHO),
        ("toolsmith.toml", "[limits.tools]\necho = 1\n"),
    ]);
    let mut server = ServeProcess::stdio(&[tools.path().to_str().unwrap(), "--watch"]);
    server.initialize();
    let echo = json!({"text": "hi"});
    assert_eq!(server.call_text("echo", &echo), "hi");
    assert_eq!(server.call("echo", &echo)["isError"], true);

    // Raised to 3: two calls were counted this minute, so one more is let through.
    std::fs::write(
        tools.path().join("toolsmith.toml"),
        "[limits.tools]\necho = 3\n",
    )
    .unwrap();
    server.stderr_until(|line| line.contains("watch: reloaded"));
    assert_eq!(server.call_text("echo", &echo), "hi");
    let over = server.call("echo", &echo);
    assert_eq!(over["isError"], true, "{over}");
    assert!(
        over["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("allows 3 calls of `echo` a minute")),
        "the new limit is named: {over}"
    );
}

#[test]
fn a_caller_past_concurrent_calls_gets_429_until_its_call_ends() {
    let tools = tempfile::tempdir().unwrap();
    let release = tools.path().join("release");
    std::fs::write(tools.path().join("tools.star"), ECHO).unwrap();
    std::fs::write(
        tools.path().join("toolsmith.toml"),
        "[limits]\nconcurrent_calls = 1\n",
    )
    .unwrap();
    // A command tool that runs until the test creates `release`.
    std::fs::write(
        tools.path().join("wait.toml"),
        format!(
            "description = \"Wait for the test.\"\ntimeout = \"60s\"\ncommand = [\"sh\", \"-c\", \"while [ ! -e '{}' ]; do sleep 0.02; done; echo released\"]\n",
            release.display()
        ),
    )
    .unwrap();
    let server = ServeProcess::http(&[tools.path().to_str().unwrap()], None);
    let address = server.address().to_owned();
    // It may lose the slot to one of the calls below: then it asks again.
    let waiting = std::thread::spawn(move || {
        loop {
            let answer = post_call(&address, 1, "wait");
            if answer.0 != 429 {
                return answer;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    // Once the waiting call holds the caller's one slot, the next call is refused.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (head, body) = loop {
        let (status, head, body) = post_call(server.address(), 2, "other");
        if status == 429 {
            break (head, body);
        }
        assert_eq!(status, 200, "{head}\n{body}");
        assert!(
            !waiting.is_finished(),
            "the waiting call ended early: {:?}",
            waiting.join()
        );
        assert!(
            Instant::now() < deadline,
            "the concurrent call was never refused"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_rate_limited(&head, &body, 2, "concurrent_calls");
    std::fs::write(&release, "").unwrap();
    let (status, _, body) = waiting.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("released"), "{body}");
    // The slot comes back once the answer is sent (given back on a task: poll briefly).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _, body) = post_call(server.address(), 3, "other");
        if status == 200 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slot never came back: {body}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs redis-server and nginx (CI runs it: cargo test -- --include-ignored)"]
fn two_replicas_share_one_budget_through_redis() {
    require_redis_and_nginx();
    let temp = tempfile::tempdir().unwrap();
    let tools = crate::folder(&[
        ("tools.star", ECHO),
        ("toolsmith.toml", "[limits]\ncalls_per_minute = 6\n"),
    ]);
    let redis_port = free_port();
    let _redis = redis(temp.path(), redis_port);
    let state = format!("redis://127.0.0.1:{redis_port}/0");
    let a = replica(tools.path(), &state, "replica-a");
    let b = replica(tools.path(), &state, "replica-b");
    let balancer = free_port();
    let _nginx = nginx(temp.path(), balancer, &[a.address(), b.address()]);
    let address = format!("127.0.0.1:{balancer}");

    let statuses: Vec<u16> = (1..=10)
        .map(|id| post_call(&address, id, "echo").0)
        .collect();
    // Each replica alone would have allowed six: together they allowed six in all.
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429]);
    assert_eq!(
        replicas_that_answered(temp.path()),
        ["replica-a".to_owned(), "replica-b".to_owned()].into(),
        "round-robin sent calls to both replicas"
    );
    let (status, head, body) = post_call(&address, 11, "echo");
    assert_eq!(status, 429);
    assert_rate_limited(&head, &body, 11, "calls_per_minute");
    let refused: u64 = [&a, &b]
        .iter()
        .map(|server| {
            metrics(server)
                .lines()
                .find_map(|line| {
                    line.strip_prefix("toolsmith_rate_limited_total{limit=\"calls_per_minute\"} ")
                })
                .and_then(|count| count.trim().parse::<u64>().ok())
                .unwrap()
        })
        .sum();
    assert_eq!(refused, 5);
}
