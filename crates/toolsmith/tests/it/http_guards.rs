//! `toolsmith serve --http` guarding itself (issue 14): flags that must not weaken it, and
//! raw HTTP/1.1 over a loopback socket that must not get past it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

use crate::serve::{PATIENCE, start_http, stop, wait};
use crate::toolsmith;

// Regression test for issue 14, item 10: `--auth-token ""` used to serve without auth.
#[test]
fn an_empty_auth_token_is_refused() {
    for (flag, env) in [(Some(""), None), (Some("  "), None), (None, Some(""))] {
        let mut command = toolsmith();
        command.args(["serve", "examples/tools", "--http", "127.0.0.1:0"]);
        command.env_remove("TOOLSMITH_AUTH_TOKEN");
        if let Some(token) = flag {
            command.args(["--auth-token", token]);
        }
        if let Some(token) = env {
            command.env("TOOLSMITH_AUTH_TOKEN", token);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let status = wait(&mut child);
        let mut message = String::new();
        stderr.read_to_string(&mut message).unwrap();
        assert_eq!(status, Some(2), "{flag:?} {env:?}: {message}");
        assert!(
            message.contains("error: the auth token is empty"),
            "{message}"
        );
        assert!(message.contains("hint:"), "{message}");
    }
}

/// Writes `request` as it is to the server at `url` and reads the whole answer; returns the
/// status code and the answer.
fn raw(url: &str, request: &str) -> (u16, String) {
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in `{answer}`"));
    (status, answer)
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

// Regression test for issue 14, item 11: a second `Host` header and an absolute-form
// request line used to get past the DNS-rebinding check, which read only the first `Host`.
#[test]
fn a_second_host_header_or_a_foreign_absolute_target_is_refused() {
    let (child, url) = start_http(&[], None);
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");

    let (status, answer) = raw(&url, &list_request("/mcp", &["localhost", "evil.example"]));
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = raw(
        &url,
        &list_request("http://evil.example/mcp", &["localhost"]),
    );
    assert_eq!(status, 403, "{answer}");

    // Near misses: one allowed `Host`, and an absolute form naming the server itself.
    let (status, answer) = raw(&url, &list_request("/mcp", &["localhost"]));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = raw(
        &url,
        &list_request(&format!("http://{address}/mcp"), &[address]),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(stop(child), Some(0));
}
