//! `GET /metrics` and `--log-format json` on a real `toolsmith serve`.
//! Calls of every outcome go over real HTTP with rmcp's client (and over real stdio pipes
//! with `--metrics ADDR`); the metrics are then parsed by a real Prometheus text-format
//! parser, Python's `prometheus_client.parser` (pip package `prometheus-client`, which
//! `.ci/run` installs). The tests that parse are ignored unless run with
//! `cargo test -- --include-ignored`; there, without the parser, they fail.

#![expect(
    clippy::float_cmp,
    reason = "the samples compared are counts, whole numbers that f64 holds exactly"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::serve_process::ServeProcess;

/// A folder with a tool for each outcome: `greet` answers, `broken` fails, `spin` runs past
/// its 300 ms timeout, `linger` runs until cancelled (its timeout is a minute).
fn tools() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "greet.star",
            "def greet(name: str) -> str:\n    \"\"\"Greets someone.\"\"\"\n    return \"Hello, \" + name\n\nmcp.tool(greet)\n",
        ),
        (
            "broken.star",
            "def broken() -> str:\n    \"\"\"Always fails.\"\"\"\n    fail(\"it broke\")\n\nmcp.tool(broken)\n",
        ),
        (
            "spin.star",
            "def spin() -> str:\n    \"\"\"Spins past its timeout.\"\"\"\n    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n\nmcp.tool(spin, timeout = \"300ms\")\n",
        ),
        (
            "linger.star",
            "def linger() -> str:\n    \"\"\"Spins until cancelled.\"\"\"\n    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n\nmcp.tool(linger, timeout = \"60s\")\n",
        ),
    ];
    for (name, source) in files {
        std::fs::write(dir.path().join(name), source).unwrap();
    }
    dir
}

/// One sample of a parsed exposition: its name and labels.
type Key = (String, BTreeMap<String, String>);

/// `text` parsed by `prometheus_client.parser`: every sample's value by name and labels.
/// The test fails when Python's `prometheus_client` is missing.
fn parsed(text: &str) -> BTreeMap<Key, f64> {
    const PARSE: &str = "import json, sys\n\
        from prometheus_client.parser import text_string_to_metric_families\n\
        samples = [[s.name, s.labels, s.value] for family in text_string_to_metric_families(sys.stdin.read()) for s in family.samples]\n\
        print(json.dumps(samples))\n";
    let python = Command::new("python3")
        .args(["-c", "import prometheus_client.parser"])
        .stderr(Stdio::null())
        .status();
    crate::require(
        python.is_ok_and(|status| status.success()),
        "Python's prometheus_client (pip install prometheus-client==0.26.0)",
    );
    let mut child = Command::new("python3")
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the parser refused the metrics: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    let samples: Vec<(String, BTreeMap<String, String>, f64)> =
        serde_json::from_slice(&output.stdout).unwrap();
    samples
        .into_iter()
        .map(|(name, labels, value)| ((name, labels), value))
        .collect()
}

/// The key of the sample `name{labels}`.
fn key(name: &str, labels: &[(&str, &str)]) -> Key {
    let labels = labels
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    (name.to_owned(), labels)
}

/// The value of the sample `name{labels}`; a missing one fails the test.
fn value(samples: &BTreeMap<Key, f64>, name: &str, labels: &[(&str, &str)]) -> f64 {
    let key = key(name, labels);
    *samples
        .get(&key)
        .unwrap_or_else(|| panic!("no sample {key:?} in {samples:#?}"))
}

/// `GET path` on `address` (`host:port`) with `headers`: the status and the body.
fn get(address: &str, path: &str, headers: &[&str]) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(crate::serve_process::PATIENCE))
        .unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in `{answer}`"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

/// The calls of every outcome the tests make: ok ×3, an `isError` result, invalid
/// arguments, a timeout and an unknown tool.
fn call_every_outcome(call: &mut dyn FnMut(&str, Value) -> Result<bool, String>) {
    for name in ["Ada", "Grace", "Edsger"] {
        assert_eq!(call("greet", json!({"name": name})), Ok(false));
    }
    assert_eq!(call("broken", json!({})), Ok(true));
    assert_eq!(call("greet", json!({"name": 7})), Ok(true));
    assert_eq!(call("spin", json!({})), Ok(true));
    let unknown = call("nope", json!({})).unwrap_err();
    assert!(unknown.contains("unknown tool"), "{unknown}");
}

/// The counts [`call_every_outcome`] leaves, checked in `samples`.
fn assert_counts(samples: &BTreeMap<Key, f64>) {
    let calls = "toolsmith_tool_calls_total";
    let counted = |tool, outcome| value(samples, calls, &[("tool", tool), ("outcome", outcome)]);
    assert_eq!(counted("greet", "ok"), 3.0);
    assert_eq!(counted("greet", "invalid_arguments"), 1.0);
    assert_eq!(counted("greet", "is_error"), 0.0);
    assert_eq!(counted("broken", "is_error"), 1.0);
    assert_eq!(counted("broken", "ok"), 0.0);
    assert_eq!(counted("spin", "timeout"), 1.0);
    assert_eq!(counted("", "unknown_tool"), 1.0);
    let durations = "toolsmith_tool_call_duration_seconds";
    let count = format!("{durations}_count");
    assert_eq!(value(samples, &count, &[("tool", "greet")]), 4.0);
    assert_eq!(value(samples, &count, &[("tool", "spin")]), 1.0);
    let inf = [("tool", "spin"), ("le", "+Inf")];
    assert_eq!(value(samples, &format!("{durations}_bucket"), &inf), 1.0);
    // The spin took at least its timeout.
    let within = [("tool", "spin"), ("le", "0.25")];
    assert_eq!(value(samples, &format!("{durations}_bucket"), &within), 0.0);
    assert!(value(samples, &format!("{durations}_sum"), &[("tool", "spin")]) >= 0.3);
    assert_eq!(value(samples, "toolsmith_tool_calls_in_flight", &[]), 0.0);
    assert_eq!(value(samples, "toolsmith_tools", &[]), 4.0);
    assert_eq!(value(samples, "toolsmith_load_errors", &[]), 0.0);
    let reloads = "toolsmith_reloads_total";
    assert_eq!(value(samples, reloads, &[("result", "ok")]), 0.0);
}

#[test]
#[ignore = "needs Python's prometheus_client: pip install prometheus-client (CI runs it: cargo test -- --include-ignored)"]
fn metrics_over_http_count_every_outcome_of_rmcp_calls() {
    let dir = tools();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    let client = McpClient::http(server.url());
    call_every_outcome(&mut |name, arguments| {
        client
            .try_call(name, &arguments)
            .map(|result| result.is_error == Some(true))
    });
    let (status, text) = get(server.address(), "/metrics", &[]);
    assert_eq!(status, 200, "{text}");
    let samples = parsed(&text);
    assert_counts(&samples);
    assert_eq!(value(&samples, "toolsmith_sessions_open", &[]), 1.0);
    // Every call was a POST answered 200, and so were the session's other requests.
    let answered = value(
        &samples,
        "toolsmith_http_requests_total",
        &[("status", "200")],
    );
    assert!(answered >= 7.0, "{answered}");
}

#[test]
#[ignore = "needs Python's prometheus_client: pip install prometheus-client (CI runs it: cargo test -- --include-ignored)"]
fn metrics_over_stdio_are_served_on_their_own_listener() {
    let dir = tools();
    let folder = dir.path().to_str().unwrap();
    let mut server = ServeProcess::stdio(&[folder, "--metrics", "127.0.0.1:0"]);
    let said = server.stderr_until(|line| line.contains("/metrics"));
    let line = said.last().unwrap();
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in `{line}`"));
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_owned();
    server.initialize();
    call_every_outcome(&mut |name, arguments| {
        let answer = server.request("tools/call", &json!({"name": name, "arguments": arguments}));
        match answer.get("error") {
            Some(error) => Err(error["message"].as_str().unwrap_or_default().to_owned()),
            None => Ok(answer["result"]["isError"] == true),
        }
    });
    let (status, text) = get(&address, "/metrics", &[]);
    assert_eq!(status, 200, "{text}");
    let samples = parsed(&text);
    assert_counts(&samples);
    assert_eq!(value(&samples, "toolsmith_sessions_open", &[]), 1.0);

    // A call the client cancels gets no answer, and counts as cancelled once it has stopped.
    let id = server.send_request("tools/call", &json!({"name": "linger", "arguments": {}}));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "changed my mind"}}),
    );
    let deadline = std::time::Instant::now() + crate::serve_process::PATIENCE;
    let cancelled = [("tool", "linger"), ("outcome", "cancelled")];
    loop {
        let samples = parsed(&get(&address, "/metrics", &[]).1);
        // A tool's series appear with its first call (docs/performance.md).
        let counted = samples.contains_key(&key("toolsmith_tool_calls_total", &cancelled));
        if counted && value(&samples, "toolsmith_tool_calls_total", &cancelled) == 1.0 {
            let ok = [("tool", "linger"), ("outcome", "ok")];
            assert_eq!(value(&samples, "toolsmith_tool_calls_total", &ok), 0.0);
            assert_eq!(value(&samples, "toolsmith_tool_calls_in_flight", &[]), 0.0);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no cancelled call counted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn metrics_want_the_token_and_move_off_the_port_with_their_own_listener() {
    let dir = tools();
    let folder = dir.path().to_str().unwrap();
    let server = ServeProcess::http(&[folder], Some("s3cret"));
    let address = server.address();
    let (status, body) = get(address, "/metrics", &[]);
    assert_eq!(status, 401, "{body}");
    let (status, _) = get(address, "/metrics", &["Authorization: Bearer wrong"]);
    assert_eq!(status, 401);
    let bearer = "Authorization: Bearer s3cret";
    let (status, _) = get(
        address,
        "/metrics",
        &[bearer, "Origin: https://evil.example"],
    );
    assert_eq!(status, 403);
    let (status, text) = get(address, "/metrics", &[bearer]);
    assert_eq!(status, 200, "{text}");
    // The two refusals counted (read without the parser, so this test needs nothing more).
    assert!(
        text.contains("toolsmith_http_requests_total{status=\"401\"} 2\n"),
        "{text}"
    );
    drop(server);

    // With `--metrics`, the port has no `/metrics`; the listener does, behind the token too.
    let mut command = ServeProcess::http_command(&[folder, "--metrics", "127.0.0.1:0"], None);
    command.env("TOOLSMITH_AUTH_TOKEN", "s3cret");
    let server = ServeProcess::spawn(command);
    let said = server.stderr_until(|line| line.contains("/mcp"));
    let word = |path: &str| {
        said.iter()
            .flat_map(|line| line.split_whitespace())
            .find(|word| word.starts_with("http://") && word.ends_with(path))
            .unwrap_or_else(|| panic!("no {path} URL in {said:#?}"))
            .trim_start_matches("http://")
            .trim_end_matches(path)
            .to_owned()
    };
    let (port, listener) = (word("/mcp"), word("/metrics"));
    assert_eq!(get(&port, "/metrics", &[bearer]).0, 404);
    assert_eq!(get(&listener, "/metrics", &[]).0, 401);
    assert_eq!(get(&listener, "/metrics", &[bearer]).0, 200);
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn json_logs_are_one_object_a_line_with_an_event_per_call() {
    let dir = tools();
    let folder = dir.path().to_str().unwrap();
    let server = ServeProcess::http(&[folder, "--log-format", "json"], None);
    let client = McpClient::http(server.url());
    assert!(
        !client
            .call("greet", &json!({"name": "Ada"}))
            .is_error
            .unwrap_or(false)
    );
    assert!(client.try_call("nope", &json!({})).is_err());
    let mut events = Vec::new();
    let lines = server.stderr_until(|line| {
        let event: Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("not a JSON line: `{line}`: {error}"));
        if event["target"] == "toolsmith::call" {
            events.push(event);
        }
        events.len() == 2
    });
    assert!(!lines.is_empty());
    let [ok, unknown] = &events[..] else {
        panic!("{events:#?}")
    };
    assert_eq!(ok["level"], "INFO", "{ok}");
    assert_eq!(ok["message"], "tool call", "{ok}");
    assert_eq!(ok["tool"], "greet", "{ok}");
    assert_eq!(ok["outcome"], "ok", "{ok}");
    assert!(
        ok["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
        "{ok}"
    );
    assert!(
        ok["session"].as_str().is_some_and(|id| !id.is_empty()),
        "{ok}"
    );
    assert!(ok["request_id"].is_string(), "{ok}");
    assert!(ok["timestamp"].is_string(), "{ok}");
    assert_eq!(unknown["tool"], "nope", "{unknown}");
    assert_eq!(unknown["outcome"], "unknown_tool", "{unknown}");
    assert_eq!(unknown["session"], ok["session"], "{unknown}");
    assert_ne!(unknown["request_id"], ok["request_id"], "{unknown}");
}

#[test]
#[ignore = "needs Python's prometheus_client: pip install prometheus-client (CI runs it: cargo test -- --include-ignored)"]
fn reloads_and_the_load_errors_they_leave_are_counted() {
    let dir = tools();
    let folder = dir.path().to_str().unwrap();
    let server = ServeProcess::http(&[folder, "--watch"], None);
    std::fs::write(dir.path().join("bad.star"), "def bad(:\n").unwrap();
    server.stderr_until(|line| line.contains("reloaded"));
    // The reload is counted once it is published, just after it says so.
    let deadline = std::time::Instant::now() + crate::serve_process::PATIENCE;
    loop {
        let (status, text) = get(server.address(), "/metrics", &[]);
        assert_eq!(status, 200, "{text}");
        let samples = parsed(&text);
        if value(&samples, "toolsmith_reloads_total", &[("result", "ok")]) == 1.0 {
            assert_eq!(value(&samples, "toolsmith_load_errors", &[]), 1.0);
            assert_eq!(value(&samples, "toolsmith_tools", &[]), 4.0);
            let failed = [("result", "failed")];
            assert_eq!(value(&samples, "toolsmith_reloads_total", &failed), 0.0);
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no reload counted");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
