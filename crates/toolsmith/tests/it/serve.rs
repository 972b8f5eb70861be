//! `toolsmith serve`: the real binary as a child process, spoken to in raw JSON-RPC over
//! its stdin/stdout and in raw HTTP over a socket. (rmcp's own client drives the server in
//! `toolsmith-server`'s tests; here the point is the process: what reaches stdout, exit
//! codes, signals, the URL line.) Bounds are generous; nothing here measures speed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::{folder, toolsmith};

pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// A `toolsmith serve` over stdio.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Server {
    fn start(dir: &str) -> Self {
        Self::start_with(dir, &[])
    }

    fn start_with(dir: &str, extra: &[&str]) -> Self {
        let mut child = toolsmith()
            .args(["serve", dir])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = read_lines(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(message.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC message.
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("an answer on stdout");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carried `{line}`: {error}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#);
        assert!(self.receive()["result"]["serverInfo"]["name"].is_string());
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// The names `tools/list` shows.
    fn listed(&mut self) -> Vec<String> {
        self.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
        self.receive()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The text of a `tools/call` result.
    fn call(&mut self, name: &str, arguments: &Value) -> String {
        let request = json!({"jsonrpc": "2.0", "id": "call", "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        self.send(&request.to_string());
        let result = self.receive();
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}"))
            .to_owned()
    }

    /// Closes stdin and waits for the exit; returns the exit code and what else came out.
    fn finish(mut self) -> (Option<i32>, Vec<String>) {
        drop(self.stdin.take());
        let status = wait(&mut self.child);
        (status, self.lines.try_iter().collect())
    }
}

fn read_lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

pub(crate) fn wait(child: &mut Child) -> Option<i32> {
    let started = std::time::Instant::now();
    while started.elapsed() < PATIENCE {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("the server did not exit");
}

#[test]
fn stdio_serves_the_examples_and_exits_zero_at_end_of_input() {
    let mut server = Server::start("examples/tools");
    server.initialize();

    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let listed = server.receive();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"hello") && names.contains(&"forecast_get"),
        "{names:?}"
    );
    assert!(!names.contains(&"add"), "discoverable tools are not listed");

    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Ada","times":2}}}"#);
    assert_eq!(
        server.receive()["result"]["content"][0]["text"],
        "Hello, Ada!\nHello, Ada!"
    );

    server.send("this is not JSON");
    assert_eq!(server.receive()["error"]["code"], -32700);

    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"helo"}}"#);
    let unknown = server.receive();
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `hello`")
    );

    let (status, rest) = server.finish();
    assert_eq!(status, Some(0));
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn search_always_lists_only_the_discovery_builtins() {
    let mut server = Server::start_with("examples/tools", &["--search", "always"]);
    server.initialize();
    assert_eq!(server.listed(), ["execute_tool", "tool_search"]);
    let found = server.call("tool_search", &json!({"query": "greet someone by name"}));
    assert!(found.starts_with("hello "), "{found}");
    let ran = server.call(
        "execute_tool",
        &json!({"name": "hello", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(ran, "Hello, Ada!");
    assert_eq!(server.finish().0, Some(0));
}

/// Forty tools whose definitions are about 10,600 tokens together: over the default budget.
fn large_folder(config: &str) -> tempfile::TempDir {
    let description = "Looks up one record of the archive by its identifier and returns every \
                       field of it, with the history of its changes. "
        .repeat(10);
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| {
            let name = format!("archive_{i}.toml");
            let text = format!(
                "name = \"archive_{i}\"\ndescription = \"{description}\"\ncommand = [\"echo\", \"{i}\"]\n"
            );
            (name, text)
        })
        .collect();
    files.push(("toolsmith.toml".into(), config.into()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    folder(&files)
}

#[test]
fn auto_puts_tools_over_the_token_budget_behind_search() {
    let dir = large_folder("");
    let mut server = Server::start(dir.path().to_str().unwrap());
    server.initialize();
    assert_eq!(server.listed(), ["execute_tool", "tool_search"]);
    let ran = server.call("execute_tool", &json!({"name": "archive_7"}));
    assert_eq!(ran.trim(), "7");
    server.finish();

    // A bigger budget lists them all again.
    let dir = large_folder("[search]\nbudget_tokens = 50000\n");
    let mut server = Server::start(dir.path().to_str().unwrap());
    server.initialize();
    assert_eq!(server.listed().len(), 40);
    server.finish();
}

#[test]
fn search_never_lists_discoverable_tools_too() {
    let mut server = Server::start_with("examples/tools", &["--search", "never"]);
    server.initialize();
    let listed = server.listed();
    assert!(listed.contains(&"add".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"tool_search".to_owned()), "{listed:?}");
    server.finish();
}

#[test]
fn stdio_publishes_the_stdio_overrides() {
    let manifest = "description = \"Echo the text back.\"\ncommand = [\"cat\"]\n\n[overrides.stdio]\ndescription = \"Echo the text back (local).\"\n\n[overrides.http]\ndescription = \"Echo the text back (remote).\"\n";
    let dir = folder(&[("echo.toml", manifest)]);
    let mut server = Server::start(dir.path().to_str().unwrap());
    server.initialize();
    server.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    let listed = server.receive();
    assert_eq!(
        listed["result"]["tools"][0]["description"],
        "Echo the text back (local)."
    );
    server.finish();
}

#[test]
fn stdout_carries_only_protocol_messages_when_tools_print() {
    let dir = folder(&[(
        "noisy.star",
        r#"
def noisy() -> str:
    """Prints, then answers."""
    print("NOISE FROM A TOOL")
    return "quiet answer"

mcp.tool(noisy)
"#,
    )]);
    let mut server = Server::start(dir.path().to_str().unwrap());
    server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cli-test","version":"1"}}}"#);
    server.receive();
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noisy","arguments":{}}}"#);
    // `receive` fails on any stdout line that is not a JSON-RPC message.
    assert_eq!(
        server.receive(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "quiet answer"}], "isError": false}})
    );
    let (status, rest) = server.finish();
    assert_eq!(status, Some(0));
    assert!(rest.is_empty(), "{rest:?}");
}

/// A `toolsmith serve --http` on a free port, and the URL it printed.
pub(crate) fn start_http(extra: &[&str], token: Option<&str>) -> (Child, String) {
    let mut command = toolsmith();
    command
        .args(["serve", "examples/tools", "--http", "127.0.0.1:0"])
        .args(extra);
    command.env_remove("TOOLSMITH_AUTH_TOKEN");
    if let Some(token) = token {
        command.env("TOOLSMITH_AUTH_TOKEN", token);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in `{line}`"));
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, url.to_owned())
}

/// One raw HTTP/1.1 POST to `url`; returns the status line, the headers and the body.
pub(crate) fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.extend([*name, ": ", *value, "\r\n"]);
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_owned(), body.to_owned())
}

pub(crate) fn stop(mut child: Child) -> Option<i32> {
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    wait(&mut child)
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

#[test]
fn http_prints_its_url_answers_a_bare_curl_post_and_stops_on_sigterm() {
    let (child, url) = start_http(&[], None);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    // curl -X POST $URL -H 'Content-Type: application/json' -d '{...tools/list}'
    let (status, head, body) = post(
        &url,
        &[("Content-Type", "application/json"), ("Accept", "*/*")],
        LIST,
    );
    assert_eq!(status, 200, "{head}\n{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert!(
        answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "hello")
    );
    assert_eq!(stop(child), Some(0));
}

#[test]
fn http_requires_the_token_from_the_environment() {
    let (child, url) = start_http(&[], Some("s3cret"));
    let (status, head, _) = post(&url, &[("Content-Type", "application/json")], LIST);
    assert_eq!(status, 401);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{head}"
    );
    let (status, _, _) = post(
        &url,
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer s3cret"),
        ],
        LIST,
    );
    assert_eq!(status, 200);
    assert_eq!(stop(child), Some(0));
}

#[test]
fn serve_says_why_auto_search_put_every_tool_behind_search() {
    // Regression test for issue 14, item 24: docs/search.md promised this line, but at the
    // default log level `serve` printed nothing.
    let dir = folder(&[
        ("toolsmith.toml", "[search]\nbudget_tokens = 20\n"),
        (
            "echo.star",
            "def echo(text: str) -> str:\n    \"\"\"Returns its text, unchanged, to the caller.\"\"\"\n    return text\n\nmcp.tool(echo)\n",
        ),
    ]);
    let mut child = toolsmith()
        .args(["serve", dir.path().to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (sender, stderr) = mpsc::channel();
    let stream = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let found = loop {
        let Ok(line) = stderr.recv_timeout(PATIENCE) else {
            break false;
        };
        let found = line.contains("search: ") && line.contains("over the search budget of 20");
        seen.push(line);
        if found {
            break true;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "no explanation on stderr: {seen:#?}");
}

// Issue 15, item 5: the server's error keeps the operating system's reason as its cause
// and says how to fix it.
#[test]
fn a_port_in_use_is_an_error_with_its_cause_and_a_hint() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let output = toolsmith()
        .args(["serve", "examples/tools", "--http", &port.to_string()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    let error = format!("error: cannot listen on `127.0.0.1:{port}`");
    let at = lines.iter().position(|line| *line == error);
    let at = at.unwrap_or_else(|| panic!("no `{error}` line: {stderr}"));
    assert!(lines[at + 1].starts_with("  Caused by: "), "{stderr}");
    assert!(lines[at + 1].contains("in use"), "{stderr}");
    assert_eq!(
        lines[at + 2],
        format!("  hint: another program is using port {port}; pick another with --http PORT"),
        "{stderr}"
    );
    assert_eq!(lines.len(), at + 3, "{stderr}");
}
