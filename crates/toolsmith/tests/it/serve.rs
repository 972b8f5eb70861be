//! `toolsmith serve`: the real binary as a child process, spoken to in raw JSON-RPC over
//! its stdin/stdout and in raw HTTP over a socket. (rmcp's own client drives the server in
//! `toolsmith-server`'s tests; here the point is the process: what reaches stdout, exit
//! codes, signals, the URL line.) Bounds are generous; nothing here measures speed.

use std::process::Stdio;

use serde_json::{Value, json};

use crate::serve_process::{ServeProcess, session_id_of};
use crate::{folder, toolsmith};

#[test]
fn stdio_serves_the_examples_and_exits_zero_at_end_of_input() {
    let mut server = ServeProcess::stdio(&["examples/tools"]);
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
    let mut server = ServeProcess::stdio(&["examples/tools", "--search", "always"]);
    server.initialize();
    assert_eq!(server.tool_names(), ["execute_tool", "tool_search"]);
    let found = server.call_text("tool_search", &json!({"query": "greet someone by name"}));
    assert!(found.starts_with("hello "), "{found}");
    let ran = server.call_text(
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
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    assert_eq!(server.tool_names(), ["execute_tool", "tool_search"]);
    let ran = server.call_text("execute_tool", &json!({"name": "archive_7"}));
    assert_eq!(ran.trim(), "7");
    server.finish();

    // A bigger budget lists them all again.
    let dir = large_folder("[search]\nbudget_tokens = 50000\n");
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    assert_eq!(server.tool_names().len(), 40);
    server.finish();
}

#[test]
fn search_never_lists_discoverable_tools_too() {
    let mut server = ServeProcess::stdio(&["examples/tools", "--search", "never"]);
    server.initialize();
    let listed = server.tool_names();
    assert!(listed.contains(&"add".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"tool_search".to_owned()), "{listed:?}");
    server.finish();
}

#[test]
fn stdio_publishes_the_stdio_overrides() {
    let manifest = "description = \"Echo the text back.\"\ncommand = [\"cat\"]\n\n[overrides.stdio]\ndescription = \"Echo the text back (local).\"\n\n[overrides.http]\ndescription = \"Echo the text back (remote).\"\n";
    let dir = folder(&[("echo.toml", manifest)]);
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
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
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
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

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

#[test]
fn http_prints_its_url_answers_a_bare_curl_post_and_stops_on_sigterm() {
    let server = ServeProcess::http(&["examples/tools"], None);
    let url = server.url();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    // curl -X POST $URL -H 'Content-Type: application/json' -d '{...tools/list}'
    let (status, head, body) = server.post(
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
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn http_requires_the_token_from_the_environment() {
    let server = ServeProcess::http(&["examples/tools"], Some("s3cret"));
    let (status, head, _) = server.post(&[("Content-Type", "application/json")], LIST);
    assert_eq!(status, 401);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{head}"
    );
    let (status, _, _) = server.post(
        &[
            ("Content-Type", "application/json"),
            ("Authorization", "Bearer s3cret"),
        ],
        LIST,
    );
    assert_eq!(status, 200);
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn serve_says_why_auto_search_put_every_tool_behind_search() {
    // Regression test: docs/search.md promised this line, but at the
    // default log level `serve` printed nothing.
    let dir = folder(&[
        ("toolsmith.toml", "[search]\nbudget_tokens = 20\n"),
        (
            "echo.star",
            "def echo(text: str) -> str:\n    \"\"\"Returns its text, unchanged, to the caller.\"\"\"\n    return text\n\nmcp.tool(echo)\n",
        ),
    ]);
    let server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.stderr_until(|line| {
        line.contains("search: ") && line.contains("over the search budget of 20")
    });
}

// The server's error keeps the operating system's reason as its cause
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

#[test]
fn on_a_terminal_serve_says_what_it_serves_and_what_to_do_next() {
    // On a terminal nobody speaks MCP, so `serve` says what it is
    // waiting for and which commands show something at once. Its stdin is a pseudo-terminal
    // opened here (not `script`, which hung one CI run), and the test owns the deadline.
    let text = serve_on_a_terminal(&["serve", "examples/tools", "--profile", "weather"]);
    for expected in [
        "Serving 2 tools from examples/tools --profile weather: forecast_compare, forecast_get",
        "Waiting for an MCP client on stdin",
        "toolsmith call examples/tools forecast_compare cities=...",
        "toolsmith install claude-code examples/tools --profile weather",
        "toolsmith dev examples/tools --profile weather --open",
    ] {
        assert!(
            text.contains(expected),
            "{expected:?} missing from:\n{text}"
        );
    }
    assert!(!text.contains("cannot read stdin"), "{text}");
    // Off a terminal (a client's pipe), none of it.
    let piped = toolsmith()
        .args(["serve", "examples/tools"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(0));
    let said = String::from_utf8_lossy(&piped.stderr);
    assert!(!said.contains("Waiting for an MCP client"), "{said}");
}

/// Runs `toolsmith ARGS` with a pseudo-terminal as its stdin until it has said its first
/// minute (up to 20 s), then hangs the terminal up and returns what it wrote to stderr.
fn serve_on_a_terminal(args: &[&str]) -> String {
    use std::io::Read;
    use std::time::{Duration, Instant};

    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal opens");
    // openpty leaves both ends inheritable; the child must not hold the master open too.
    let close_on_exec = nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC);
    nix::fcntl::fcntl(&pty.master, close_on_exec).unwrap();
    let mut child = toolsmith()
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::from(pty.slave))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (sender, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(read @ 1..) = stderr.read(&mut chunk) {
            if sender.send(chunk[..read].to_vec()).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut text = Vec::new();
    while !String::from_utf8_lossy(&text).contains("following your edits") {
        let left = deadline.saturating_duration_since(Instant::now());
        match said.recv_timeout(left) {
            Ok(bytes) => text.extend(bytes),
            Err(_) => break,
        }
    }
    // Hanging up the terminal ends serve's input; the kill is for a server that ignores it.
    drop(pty.master);
    let stop = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() && Instant::now() < stop {
        std::thread::sleep(Duration::from_millis(20));
    }
    let exited = child.try_wait().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let text = String::from_utf8_lossy(&text).into_owned();
    assert!(
        exited.is_some_and(|status| status.success()),
        "a hang-up ends serve cleanly: {text}"
    );
    text
}

// Regression test: `printf '…' | toolsmith serve DIR` answered the
// `tools/call` with "tool `hello` was cancelled by the client": the end of stdin cancelled
// the calls still running. A client that closes its input has no more requests; it did not
// cancel the ones it sent. The slow tool is still running when the input ends.
#[test]
fn piped_requests_are_all_answered_before_the_exit() {
    let manifest = "description = \"Answer after a moment.\"\ncommand = [\"sh\", \"-c\", \"sleep 1; echo slow answer\"]\n";
    let dir = folder(&[("slow.toml", manifest)]);
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}"#);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
    );
    // Naming its own protocol version, this call takes rmcp's loop, not the fast path.
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}"#);
    server.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#);
    let (status, lines) = server.finish();
    assert_eq!(status, Some(0));
    let answers: Vec<Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for id in [1, 2] {
        let answer = answers
            .iter()
            .find(|answer| answer["id"] == id)
            .unwrap_or_else(|| panic!("no answer to call {id} in {answers:?}"));
        assert_eq!(
            answer["result"]["content"][0]["text"], "slow answer",
            "{answer}"
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert!(answers.iter().any(|answer| answer["id"] == 3));
}

// Regression test: over HTTP a malformed body got -32700 without the
// `"id": null` JSON-RPC 2.0 requires, and a body without `Content-Type: application/json`
// got a plain-text 415 that a client cannot read as JSON-RPC.
#[test]
fn http_refusals_are_json_rpc_errors_with_a_null_id() {
    /// Headers, body, the status and the JSON-RPC error code expected.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, u16, i64);
    let server = ServeProcess::http(&["examples/tools"], None);
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let accept = ("Accept", "application/json, text/event-stream");
    let json_type = ("Content-Type", "application/json");
    let batch = format!("[{list}]");
    let cases: [Case<'_>; 4] = [
        (&[accept, json_type], "{not json", 400, -32700),
        (&[accept, json_type], &batch, 400, -32600),
        (&[accept], list, 415, -32600),
        (&[accept, ("Content-Type", "text/plain")], list, 415, -32600),
    ];
    for (headers, body, status, code) in cases {
        let (got, head, answer) = server.post(headers, body);
        assert_eq!(got, status, "{body}: {head}\n{answer}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], code, "{answer}");
        assert_eq!(answer.get("id"), Some(&Value::Null), "{answer}");
        if status == 415 {
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("`Content-Type: application/json`"),
                "{message}"
            );
        }
    }
    assert_eq!(server.stop(), Some(0));
}

// Regression test: a tool whose file failed to load was answered
// "unknown tool `weather_get`; did you mean `weather_set`?", steering a model from get to
// set. A name the broken file registers says that the tool failed to load, where and why;
// a file that does not parse may define any name, and the answer says so.
#[test]
fn a_tool_of_a_broken_file_is_said_to_have_failed_to_load() {
    let dir = folder(&[
        (
            "set.star",
            "def weather_set(city: str) -> str:\n    \"\"\"Set the weather of a city.\"\"\"\n    return city\n\nmcp.tool(weather_set)\n",
        ),
        (
            "get.star",
            "def weather_get(city: str) -> str:\n    \"\"\"Get the weather of a city.\"\"\"\n    return city\n\ndef now(city: str) -> str:\n    \"\"\"Now.\"\"\"\n    return city\n\noops = 1 + \"a\"\nmcp.tool(weather_get)\nmcp.tool(now, name=\"weather_now\")\n",
        ),
        (
            "forecast.star",
            "def forecast_get(city: str) -> str:\n    \"\"\"Get the forecast.\"\"\"\n    return city +\n\nmcp.tool(forecast_get)\n",
        ),
    ]);
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.initialize();
    let mut message_of = |name: &str| {
        let answer = server.request(
            "tools/call",
            &json!({"name": name, "arguments": {"city": "Oslo"}}),
        );
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        answer["error"]["message"].as_str().unwrap().to_owned()
    };
    for name in ["weather_get", "weather_now"] {
        let message = message_of(name);
        assert!(
            message.starts_with(&format!("tool `{name}` failed to load: ")),
            "{message}"
        );
        assert!(message.contains("get.star:9:"), "{message}");
        assert!(!message.contains("weather_set"), "{message}");
    }
    let message = message_of("forecast_get");
    assert!(
        message.contains("may be among those left out by") && message.contains("forecast.star:3:"),
        "{message}"
    );
    // A name no broken file registers still gets its suggestion.
    assert!(message_of("weathr_set").contains("did you mean `weather_set`"));
    server.finish();
}

// Regression test: a 2025-03-26 session refused JSON-RPC batches, which
// that revision allows; over HTTP the answers come back as one JSON array. A session of a
// later revision still refuses them.
#[test]
fn http_takes_batches_in_a_2025_03_26_session_only() {
    let server = ServeProcess::http(&["examples/tools"], None);
    let open = |revision: &str| {
        let initialize = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"batch","version":"1"}}}}}}"#
        );
        let (status, head, _) = server.post(
            &[
                ("Accept", "application/json, text/event-stream"),
                ("Content-Type", "application/json"),
            ],
            &initialize,
        );
        assert_eq!(status, 200, "{head}");
        session_id_of(&head)
    };
    let post = |session: &str, body: &str| {
        server.post(
            &[
                ("Accept", "application/json, text/event-stream"),
                ("Content-Type", "application/json"),
                ("Mcp-Session-Id", session),
            ],
            body,
        )
    };
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"Ada"}}},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]"#;

    let session = open("2025-03-26");
    assert_eq!(post(&session, &format!("[{initialized}]")).0, 202);
    let (status, head, body) = post(&session, batch);
    assert_eq!(status, 200, "{head}\n{body}");
    let mut answers: Vec<Value> = serde_json::from_str(&body).unwrap();
    answers.sort_by_key(|answer| answer["id"].as_u64());
    assert_eq!(answers.len(), 2, "{body}");
    assert_eq!(
        answers[0]["result"]["content"][0]["text"], "Hello, Ada!",
        "{body}"
    );
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 2, "result": {}}));

    let later = open("2025-06-18");
    post(&later, initialized);
    let (status, _, body) = post(&later, batch);
    assert_eq!(status, 400, "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(server.stop(), Some(0));
}
