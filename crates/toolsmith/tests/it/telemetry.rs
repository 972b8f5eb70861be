//! OpenTelemetry traces (docs/http.md, "Telemetry"), received by a real OTLP/HTTP receiver:
//! `telemetry/receiver.py` decodes each export with the `opentelemetry-proto` package
//! (pinned in `.ci/sdk/requirements.txt`). FastMCP's client (`telemetry/client.py`) calls
//! tools of a gateway inside a span of its own; the gateway's spans join that trace, with a
//! child for a command's process and for an upstream call, and the upstream (a second
//! `toolsmith serve`) reports the same trace. Without a collector named, nothing starts.
//! The Python tests are ignored unless run with `cargo test -- --include-ignored`, which
//! needs the venv.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::gateway_clients::python_sdk;
use crate::serve_process::ServeProcess;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/telemetry")
        .join(name)
}

/// The receiver, killed when dropped; the spans it got are JSON lines in its file.
struct Receiver {
    child: Child,
    port: u16,
    spans: PathBuf,
    _dir: tempfile::TempDir,
}

impl Receiver {
    fn start(python: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let spans = dir.path().join("spans.jsonl");
        let mut child = Command::new(python)
            .arg(script("receiver.py"))
            .arg(&spans)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the receiver prints its port");
        Self {
            child,
            port,
            spans,
            _dir: dir,
        }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.spans)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The spans, once `wanted` holds of them (or after 20 s, for the assertion to say).
    fn spans_until(&self, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if wanted(&spans) || started.elapsed() > Duration::from_secs(20) {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The one span of `service` named `name`.
fn span<'a>(spans: &'a [Value], service: &str, name: &str) -> &'a Value {
    let found: Vec<&Value> = spans
        .iter()
        .filter(|span| span["service"] == service && span["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "one `{name}` of {service} in {spans:#?}");
    found[0]
}

const SERVER: i64 = 2;
const CLIENT: i64 = 3;
const INTERNAL: i64 = 1;
const STATUS_ERROR: i64 = 2;

/// A gateway folder: two command tools (one failing) and `[upstream.up]`, a second
/// `toolsmith serve` of a folder with a Starlark tool, each with `[telemetry] service_name`.
fn folders() -> (tempfile::TempDir, tempfile::TempDir) {
    let upstream = crate::folder(&[
        (
            "shout.star",
            "def shout() -> str:\n    \"\"\"Shout.\"\"\"\n    return \"HEY\"\n\nmcp.tool(shout)\n",
        ),
        (
            "toolsmith.toml",
            "[telemetry]\nservice_name = \"upstream\"\n",
        ),
    ]);
    let toolsmith = insta_cmd::get_cargo_bin("toolsmith");
    let config = format!(
        "[telemetry]\nservice_name = \"gateway\"\n\n[upstream.up]\ncommand = [{:?}, \"serve\", {:?}]\n",
        toolsmith.to_str().unwrap(),
        upstream.path().to_str().unwrap(),
    );
    let gateway = crate::folder(&[
        (
            "greet.toml",
            "description = \"Greet.\"\ncommand = [\"sh\", \"-c\", \"echo hello\"]\n",
        ),
        (
            "fail.toml",
            "description = \"Fail.\"\ncommand = [\"sh\", \"-c\", \"exit 3\"]\n",
        ),
        ("toolsmith.toml", &config),
    ]);
    (gateway, upstream)
}

#[test]
#[ignore = "needs FastMCP and opentelemetry-proto in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn a_fastmcp_call_traces_through_the_gateway_its_process_and_its_upstream() {
    let python = python_sdk();
    let receiver = Receiver::start(&python);
    let (gateway, _upstream) = folders();
    let command = format!(
        "{} serve {}",
        insta_cmd::get_cargo_bin("toolsmith").display(),
        gateway.path().display()
    );
    let output = Command::new(&python)
        .arg(script("client.py"))
        .args([&command, "greet", "fail", "up_shout"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        // The upstream is stopped with the gateway: it exports as its spans end.
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the FastMCP client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let caller: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        caller["calls"],
        json!({"greet": false, "fail": true, "up_shout": false})
    );
    let trace = caller["trace_id"].as_str().unwrap();
    let spans = receiver.spans_until(|spans| {
        spans.iter().any(|span| span["service"] == "upstream")
            && spans
                .iter()
                .any(|span| span["name"] == "tools/call up_shout")
    });

    // The request span: a child of FastMCP's span, named and attributed as the MCP
    // semantic conventions say.
    let greet = span(&spans, "gateway", "tools/call greet");
    assert_eq!(greet["kind"], SERVER);
    assert_eq!(greet["trace_id"], trace);
    assert_eq!(greet["parent_span_id"], caller["span_id"]);
    let attributes = &greet["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "greet");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["network.transport"], "pipe");
    assert!(attributes["jsonrpc.request.id"].is_string(), "{greet}");
    assert!(attributes["mcp.protocol.version"].is_string(), "{greet}");
    assert_eq!(attributes.get("error.type"), None, "{greet}");

    // The command's process, under the request span.
    let process = spans
        .iter()
        .find(|span| span["parent_span_id"] == greet["span_id"])
        .unwrap_or_else(|| panic!("no child of {greet} in {spans:#?}"));
    assert_eq!(process["name"], "exec sh");
    assert_eq!(process["kind"], INTERNAL);
    assert_eq!(process["trace_id"], trace);
    assert_eq!(process["attributes"]["process.exit.code"], 0);

    // A tool that fails is `tool_error` on its request span.
    let fail = span(&spans, "gateway", "tools/call fail");
    assert_eq!(fail["attributes"]["error.type"], "tool_error");
    assert_eq!(fail["status"], STATUS_ERROR);

    // The upstream call: a CLIENT span under the request span, and the upstream's own
    // request span under that, in the same trace.
    let proxied = span(&spans, "gateway", "tools/call up_shout");
    assert_eq!(proxied["trace_id"], trace);
    let call = span(&spans, "gateway", "tools/call shout");
    assert_eq!(call["kind"], CLIENT);
    assert_eq!(call["parent_span_id"], proxied["span_id"]);
    assert_eq!(call["attributes"]["gen_ai.tool.name"], "shout");
    assert_eq!(call["attributes"]["network.transport"], "pipe");
    let upstream = span(&spans, "upstream", "tools/call shout");
    assert_eq!(upstream["kind"], SERVER);
    assert_eq!(upstream["trace_id"], trace);
    assert_eq!(upstream["parent_span_id"], call["span_id"]);
}

#[test]
#[ignore = "needs opentelemetry-proto in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn a_plain_http_call_joins_the_trace_of_its_meta_and_is_flushed_on_sigterm() {
    let python = python_sdk();
    let receiver = Receiver::start(&python);
    let dir = crate::folder(&[(
        "greet.toml",
        "description = \"Greet.\"\ncommand = [\"sh\", \"-c\", \"echo hello\"]\n",
    )]);
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint());
    let server = ServeProcess::spawn_http(command);
    // A stateless call, as `curl` makes it: rmcp's own Streamable HTTP service answers it.
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "greet", "arguments": {},
            "_meta": {"traceparent": format!("00-{trace}-00f067aa0ba902b7-01")},
        },
    });
    let (status, _, answer) = server.post(
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &body.to_string(),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("hello"), "{answer}");
    // Nothing is exported before the 5 s schedule: the spans arrive with the shutdown.
    server.stop();
    let spans = receiver.spans_until(|spans| spans.len() >= 2);
    let call = span(&spans, "toolsmith", "tools/call greet");
    assert_eq!(call["kind"], SERVER);
    assert_eq!(call["trace_id"], trace);
    assert_eq!(call["parent_span_id"], "00f067aa0ba902b7");
    assert_eq!(call["attributes"]["network.transport"], "tcp");
    assert_eq!(call["attributes"]["jsonrpc.request.id"], "7");
    let process = span(&spans, "toolsmith", "exec sh");
    assert_eq!(process["parent_span_id"], call["span_id"]);
}

#[test]
#[ignore = "needs opentelemetry-proto in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn code_mode_inner_calls_and_a_scripts_http_request_are_spans_that_pass_the_trace_on() {
    let python = python_sdk();
    let receiver = Receiver::start(&python);
    let tool = format!(
        "def fetch() -> str:\n    \"\"\"Fetch a greeting.\"\"\"\n    return http.get(\"{}/hello\").text\n\nmcp.tool(fetch, permissions = {{\"net\": [\"127.0.0.1\"]}})\n",
        receiver.endpoint()
    );
    let dir = crate::folder(&[("fetch.star", &tool), ("toolsmith.toml", "[evaluator]\n")]);
    let mut command = crate::toolsmith();
    command
        .arg("serve")
        .arg(dir.path())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint());
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    let text = server.call_text("run_code", &json!({"code": "tools.fetch()"}));
    assert!(text.contains("hello"), "{text}");
    server.finish();
    let spans = receiver.spans_until(|spans| spans.len() >= 4);
    let request = span(&spans, "toolsmith", "tools/call run_code");
    let inner = span(&spans, "toolsmith", "execute_tool fetch");
    assert_eq!(inner["kind"], INTERNAL);
    assert_eq!(inner["parent_span_id"], request["span_id"]);
    let get = span(&spans, "toolsmith", "GET");
    assert_eq!(get["kind"], CLIENT);
    assert_eq!(get["parent_span_id"], inner["span_id"]);
    assert_eq!(get["attributes"]["http.response.status_code"], 200);
    assert_eq!(get["attributes"]["url.path"], "/hello");
    // The request carried the GET span's trace context.
    let fetched = spans
        .iter()
        .find(|record| record["get"] == "/hello")
        .unwrap_or_else(|| panic!("no GET in {spans:#?}"));
    assert_eq!(
        fetched["traceparent"],
        format!(
            "00-{}-{}-01",
            request["trace_id"].as_str().unwrap(),
            get["span_id"].as_str().unwrap()
        )
    );
}

/// Whether the process `pid` runs OpenTelemetry's batch span processor (its thread's name,
/// cut to 15 characters by Linux).
fn exports_spans(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(Result::ok)
        .any(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with("OpenTelemetry"))
        })
}

/// A `toolsmith serve` over stdio of a one-tool folder, initialized and called once, with
/// `environment` and no other `OTEL_*` variable.
fn served(config: &str, environment: &[(&str, &str)]) -> (ServeProcess, tempfile::TempDir) {
    let dir = crate::folder(&[
        (
            "greet.toml",
            "description = \"Greet.\"\ncommand = [\"sh\", \"-c\", \"echo hello\"]\n",
        ),
        ("toolsmith.toml", config),
    ]);
    let mut command = crate::toolsmith();
    command.arg("serve").arg(dir.path());
    for (name, _) in std::env::vars() {
        if name.starts_with("OTEL_") {
            command.env_remove(name);
        }
    }
    command.envs(environment.iter().copied());
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    assert_eq!(server.call_text("greet", &json!({})).trim(), "hello");
    (server, dir)
}

#[test]
fn without_a_collector_named_no_exporter_starts() {
    let (server, _dir) = served("", &[]);
    assert!(!exports_spans(server.pid()));
    // `[telemetry] enabled = false` wins over a collector named in the environment.
    let (server, _dir) = served(
        "[telemetry]\nenabled = false\n",
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")],
    );
    assert!(!exports_spans(server.pid()));
    // The same with a collector named: the exporter runs (and its failures cost no call).
    let (server, _dir) = served("", &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")]);
    assert!(exports_spans(server.pid()));
}
