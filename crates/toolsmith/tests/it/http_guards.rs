//! `toolsmith serve --http` guarding itself: flags that must not weaken it, and
//! raw HTTP/1.1 over a loopback socket that must not get past it.

use std::io::{Read, Write};

use serde_json::{Value, json};

use crate::serve_process::{PATIENCE, ServeProcess};

// Regression test: `--auth-token ""` used to serve without auth.
#[test]
fn an_empty_auth_token_is_refused() {
    for (flag, env) in [(Some(""), None), (Some("  "), None), (None, Some(""))] {
        let mut command = ServeProcess::http_command(&["examples/tools"], env);
        if let Some(token) = flag {
            command.args(["--auth-token", token]);
        }
        let (status, message) = ServeProcess::spawn(command).exit();
        assert_eq!(status, Some(2), "{flag:?} {env:?}: {message}");
        assert!(
            message.contains("error: the auth token is empty"),
            "{message}"
        );
        assert!(message.contains("hint:"), "{message}");
    }
}

/// A raw `tools/list` POST with `target` in the request line and `hosts` as `Host` headers.
fn list_request(target: &str, hosts: &[&str]) -> String {
    let hosts: String = hosts
        .iter()
        .map(|host| ["Host: ", host, "\r\n"].concat())
        .collect();
    format!(
        "POST {target} HTTP/1.1\r\n{hosts}Content-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{LIST}",
        LIST.len()
    )
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

// Regression test: a second `Host` header and an absolute-form
// request line used to get past the DNS-rebinding check, which read only the first `Host`.
#[test]
fn a_second_host_header_or_a_foreign_absolute_target_is_refused() {
    let server = ServeProcess::http(&["examples/tools"], None);
    let address = server.address();

    let (status, answer) = server.raw(&list_request("/mcp", &["localhost", "evil.example"]));
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = server.raw(&list_request("http://evil.example/mcp", &["localhost"]));
    assert_eq!(status, 403, "{answer}");

    // Near misses: one allowed `Host`, and an absolute form naming the server itself.
    let (status, answer) = server.raw(&list_request("/mcp", &["localhost"]));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = server.raw(&list_request(&format!("http://{address}/mcp"), &[address]));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.stop(), Some(0));
}

// Regression test: a connection that sent nothing stayed open for
// good, so idle connections could use up the file descriptors.
#[test]
fn a_silent_connection_is_closed_after_the_header_timeout() {
    let server = ServeProcess::http(&["examples/tools", "--header-timeout", "1s"], None);
    let mut silent = server.connect();
    let mut answer = Vec::new();
    // The server closes it (end of stream); a read timeout would fail here instead.
    silent.read_to_end(&mut answer).unwrap();
    // Half a request line is as silent.
    let mut slow = server.connect();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: local")
        .unwrap();
    answer.clear();
    let _ = slow.read_to_end(&mut answer);
    // The server still answers.
    let (status, answer) = server.raw(&list_request("/mcp", &["localhost"]));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.stop(), Some(0));
}

// Regression test: connections past the cap are answered 503 at once,
// and a slot frees when a connection closes.
#[test]
fn connections_past_the_cap_get_503() {
    let server = ServeProcess::http(&["examples/tools", "--max-connections", "2"], None);
    let first = server.connect();
    // The server has accepted both once it answers on the second.
    let mut keep = server.connect();
    let request =
        list_request("/mcp", &["localhost"]).replace("Connection: close", "Connection: keep-alive");
    keep.write_all(request.as_bytes()).unwrap();
    let mut buffer = [0; 64];
    let read = keep.read(&mut buffer).unwrap();
    assert!(
        buffer[..read].starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&buffer[..read])
    );
    let (status, answer) = server.raw(&list_request("/mcp", &["localhost"]));
    assert_eq!(status, 503, "{answer}");
    drop(first);
    drop(keep);
    // The server notices the closes; a new connection then gets through.
    let started = std::time::Instant::now();
    loop {
        let (status, answer) = server.raw(&list_request("/mcp", &["localhost"]));
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{answer}");
        assert!(started.elapsed() < PATIENCE, "no slot freed");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(server.stop(), Some(0));
}

/// A raw POST of `body` (JSON) to `server`; returns the status and the body parsed as JSON.
fn post_json(server: &ServeProcess, body: &str) -> (u16, Value) {
    let (status, _, body) = server.post(
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body,
    );
    let answer =
        serde_json::from_str(&body).unwrap_or_else(|error| panic!("{status} `{body}`: {error}"));
    (status, answer)
}

// Regression test: bodies that are not one JSON-RPC message got 415
// "fail to deserialize"; they get 400 and the JSON-RPC error.
#[test]
fn bodies_that_are_not_a_message_get_400_and_the_json_rpc_error() {
    let server = ServeProcess::http(&["examples/tools"], None);
    for (body, code, id) in [
        ("{not json", -32700, Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#,
            -32600,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
    ] {
        let (status, answer) = post_json(&server, body);
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["jsonrpc"], "2.0", "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert_eq!(answer["id"], id, "{body}: {answer}");
    }
    assert_eq!(server.stop(), Some(0));
}

// Regression test: a request whose body never comes held its
// connection (and a reader) for good; it gets 408.
#[test]
fn a_body_that_does_not_arrive_gets_408() {
    let server = ServeProcess::http(&["examples/tools", "--body-timeout", "1s"], None);
    let request = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"";
    let (status, answer) = server.raw(request);
    assert_eq!(status, 408, "{answer}");
    assert_eq!(server.stop(), Some(0));
}

// A 5 MB `Content-Length` POST got its 413 before its body was read, and the connection
// was closed with the body unread, so the client saw a reset instead of the 413.
#[test]
fn a_body_over_the_limit_is_read_before_its_413() {
    let server = ServeProcess::http(&["examples/tools"], None);
    let body = vec![b' '; 5 * 1024 * 1024];
    let mut stream = server.connect();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream
        .write_all(&body)
        .expect("the server reads the whole body");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("the answer is read to the end, not reset");
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(
        answer.contains("the request body limit is 4194304 bytes"),
        "{answer}"
    );
    assert_eq!(server.stop(), Some(0));
}
