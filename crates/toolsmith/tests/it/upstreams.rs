//! Upstream MCP servers: an outer folder whose
//! `[upstream.inner]` is a second, real `toolsmith serve` of an inner folder, over stdio and
//! over HTTP; the outer one is served to rmcp's client and driven through `list` and `call`.
//! Killing the inner server in the middle of a call gives an `isError` naming it, and the
//! next call, after Toolsmith has started it again, succeeds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::{PATIENCE, ServeProcess};
use crate::toolsmith;

const ECHO: &str = r#"def echo(text: str) -> dict:
    """Echoes the text back as structured content.

    Args:
        text: What to echo.
    """
    return {"text": text}

def refuse(reason: str) -> dict:
    """Always fails, with a reason the model can read.

    Args:
        reason: Why it fails.
    """
    return mcp.error("refused: " + reason, code = 7)

mcp.tool(echo, read_only = True)
mcp.tool(refuse)
"#;

/// Writes its parent's pid (the inner `toolsmith serve`) and its own to `pidfile`, then
/// sleeps: the test kills both while the call is in flight.
const SLOW: &str = r#"description = "Sleeps for a while, after writing the pids a test needs to kill its server."
command = ["sh", "-c", "echo $PPID $$ > \"$0\"; sleep 20", "{pidfile}"]
timeout = "25s"

[[parameters]]
name = "pidfile"
type = "string"
description = "Where to write the pids."
required = true
"#;

const OWN: &str = r#"def own() -> str:
    """Answers from the outer folder itself."""
    return "own"

mcp.tool(own)
"#;

/// An inner tools folder (`echo`, `refuse`, `slow`) and an outer one (`own`) whose
/// `toolsmith.toml` names upstreams, in a temporary folder; the other upstream test modules
/// use it too.
pub(crate) struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// An inner folder and an outer one whose `toolsmith.toml` ends with `upstream`.
    pub(crate) fn new(upstream: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Self { dir };
        fixture.write("inner/echo.star", ECHO);
        fixture.write("inner/slow.toml", SLOW);
        fixture.write("outer/own.star", OWN);
        fixture.write(
            "outer/toolsmith.toml",
            &format!("[server]\nname = \"outer\"\n\n{upstream}"),
        );
        fixture
    }

    /// `[upstream.inner]` running the inner folder over stdio.
    pub(crate) fn stdio() -> Self {
        let binary = insta_cmd::get_cargo_bin("toolsmith");
        let fixture = Self::new("");
        let inner = fixture.path("inner");
        fixture.write(
            "outer/toolsmith.toml",
            &format!(
                "[server]\nname = \"outer\"\n\n# the inner folder, served by a second Toolsmith\n[upstream.inner]\ncommand = [{:?}, \"serve\", {:?}]\n",
                binary.display().to_string(),
                inner.display().to_string()
            ),
        );
        fixture
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub(crate) fn outer(&self) -> String {
        self.path("outer").display().to_string()
    }

    pub(crate) fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The path of `scripted_upstream/server.py`, a server on the standard library whose tools
/// misbehave on purpose (its docstring lists them).
pub(crate) fn scripted_upstream() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/scripted_upstream/server.py")
        .display()
        .to_string()
}

fn serves_the_inner_tools(client: &McpClient) {
    let names = client.tool_names();
    assert_eq!(
        names,
        ["inner_echo", "inner_refuse", "inner_slow", "own"],
        "the upstream's tools under its prefix, next to the folder's own"
    );
    let echoed = client.call("inner_echo", &json!({"text": "hi"}));
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(echoed.structured_content, Some(json!({"text": "hi"})));
    let refused = client.call("inner_refuse", &json!({"reason": "no"}));
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content,
        Some(json!({"error": "refused: no", "code": 7})),
        "the upstream's error result passes through unchanged"
    );
    // Arguments are checked against the upstream's schema before anything is sent.
    let invalid = client.call("inner_echo", &json!({"text": 5}));
    assert_eq!(invalid.is_error, Some(true));
    assert!(text(&invalid).contains("text"), "{}", text(&invalid));
}

#[test]
fn upstream_tools_are_served_over_stdio() {
    let fixture = Fixture::stdio();
    let client = McpClient::stdio(&[&fixture.outer()]);
    serves_the_inner_tools(&client);
}

#[test]
fn upstream_over_http_is_served() {
    let fixture = Fixture::new("");
    let inner = ServeProcess::http(&[fixture.path("inner").to_str().unwrap()], None);
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.inner]\nurl = {:?}\nheaders = {{ X-Trace = \"${{TOOLSMITH_TEST_TRACE}}\" }}\n",
            inner.url()
        ),
    );
    let mut command = toolsmith();
    command
        .args(["serve", &fixture.outer()])
        .env("TOOLSMITH_TEST_TRACE", "from-the-test");
    let client = McpClient::spawn(command);
    serves_the_inner_tools(&client);
}

#[test]
fn an_unset_header_variable_is_a_diagnostic_naming_it() {
    let fixture = Fixture::new(
        "[upstream.remote]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = \"Bearer ${TOOLSMITH_TEST_UNSET_TOKEN}\" }\n",
    );
    let output = toolsmith()
        .args(["list", "--json", &fixture.outer()])
        .env_remove("TOOLSMITH_TEST_UNSET_TOKEN")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        all.contains("TOOLSMITH_TEST_UNSET_TOKEN") && all.contains("upstream `remote`"),
        "{all}"
    );
    assert!(
        all.contains("\"own\""),
        "the folder's own tool still loads: {all}"
    );
}

#[test]
fn an_upstream_that_cannot_start_is_listed_as_unavailable_and_the_rest_serves() {
    // The rest of the server keeps serving.
    let fixture = Fixture::new(
        "[upstream.broken]\ncommand = [\"sh\", \"-c\", \"echo cannot find the token >&2; exit 3\"]\n",
    );
    let output = toolsmith()
        .args(["list", &fixture.outer()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("own"), "{all}");
    assert!(all.contains("upstream `broken`"), "{all}");
    assert!(
        all.contains("cannot find the token"),
        "the message quotes the upstream's stderr: {all}"
    );
    let client = McpClient::stdio(&[&fixture.outer()]);
    assert_eq!(client.tool_names(), ["own"]);
    assert_eq!(client.call_text("own", &json!({})), "own");
}

#[test]
fn killing_an_upstream_mid_call_is_an_error_and_the_next_call_restarts_it() {
    // A call in flight when its upstream dies gets an isError, never a
    // hang, and the upstream is started again for the next call.
    let fixture = Fixture::stdio();
    let client = std::sync::Arc::new(McpClient::stdio(&[&fixture.outer()]));
    assert_eq!(
        client.call("inner_echo", &json!({"text": "a"})).is_error,
        Some(false)
    );
    let pidfile = fixture.path("pids");
    let calling = {
        let client = std::sync::Arc::clone(&client);
        let pidfile = pidfile.display().to_string();
        std::thread::spawn(move || client.call("inner_slow", &json!({"pidfile": pidfile})))
    };
    let pids = wait_for_pids(&pidfile);
    for pid in pids {
        // SIGKILL: the inner server gets no chance to answer.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let result = calling.join().unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(
        text(&result).contains("upstream `inner`"),
        "{}",
        text(&result)
    );
    let again = client.call("inner_echo", &json!({"text": "b"}));
    assert_eq!(again.is_error, Some(false), "{again:?}");
    assert_eq!(again.structured_content, Some(json!({"text": "b"})));
}

/// Says it is about to ask, then asks the client's model (through the outer server).
const ASK: &str = r#"def ask(question: str) -> str:
    """Asks the client's model a question, saying first that it is about to.

    Args:
        question: What to ask the model.
    """
    mcp.progress(1, 2, "asking")
    return mcp.sample(question)

mcp.tool(ask)
"#;

#[test]
fn progress_sampling_and_cancellation_cross_an_upstream_both_ways() {
    // The upstream's progress reaches the client under the client's own
    // token, its sampling request is asked of the client and the answer goes back, and the
    // client's cancellation stops the tool running in the upstream.
    let fixture = Fixture::stdio();
    fixture.write("inner/ask.star", ASK);
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "round-trip", "version": "1"}}}),
    );
    server.until(|message| message["id"] == 0);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let id = server.send_request(
        "tools/call",
        &json!({"name": "inner_ask", "arguments": {"question": "ping?"},
                "_meta": {"progressToken": "mine-1"}}),
    );
    // The progress and the sampling request may reach the client in either order (the
    // upstream's messages are routed concurrently), but both before the result.
    let mut progress = None;
    let answer = loop {
        let message = server.receive();
        if message["method"] == "notifications/progress" {
            progress = Some(message);
        } else if message["method"] == "sampling/createMessage" {
            assert!(
                message["params"]["messages"].to_string().contains("ping?"),
                "{message}"
            );
            server.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "role": "assistant", "model": "test-model",
                "content": {"type": "text", "text": "pong"}}}));
        } else if message["id"] == id {
            break message;
        }
    };
    assert_eq!(answer["result"]["content"][0]["text"], "pong", "{answer}");
    let progress = progress.expect("the upstream's progress reached the client before the result");
    assert_eq!(progress["params"]["progressToken"], "mine-1", "{progress}");
    assert_eq!(
        progress["params"]["progress"].as_f64(),
        Some(1.0),
        "{progress}"
    );
    assert_eq!(progress["params"]["message"], "asking", "{progress}");

    let pidfile = fixture.path("pids");
    let slow = server.send_request(
        "tools/call",
        &json!({"name": "inner_slow", "arguments": {"pidfile": pidfile.display().to_string()}}),
    );
    let pids = wait_for_pids(&pidfile);
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": slow, "reason": "no longer needed"}}),
    );
    // The inner server stops the tool's process group: its shell goes long before its
    // `sleep 20` would have ended, while the inner server itself keeps running.
    wait_until_gone(pids[1]);
    assert!(alive(pids[0]), "the upstream itself keeps serving");
    let echoed = server.call("inner_echo", &json!({"text": "after"}));
    assert_eq!(
        echoed["structuredContent"],
        json!({"text": "after"}),
        "{echoed}"
    );
}

/// Rests a second, then says so.
const NAP: &str = r#"description = "Rests for a second, then says it has rested."
command = ["sh", "-c", "sleep 1; echo rested"]
"#;

#[test]
fn calls_in_flight_hold_no_thread_and_a_line_bigger_than_the_pipe_arrives_whole() {
    // What a proxied call costs: an upstream's calls are futures on the
    // server's runtime (docs/performance.md, "The gateway"), so calls waiting on it hold no
    // call thread each; and a call is written to the upstream's stdin by its sender, the
    // rest of a line the pipe does not take queued whole, in order, with later lines
    // behind it.
    let fixture = Fixture::stdio();
    fixture.write("inner/nap.toml", NAP);
    let mut server = ServeProcess::stdio(&[&fixture.outer()]);
    server.initialize();
    let naps: Vec<u64> = (0..6)
        .map(|_| server.send_request("tools/call", &json!({"name": "inner_nap"})))
        .collect();
    // Far more than a pipe holds (64 KiB), between small calls.
    let big = "0123456789abcdef".repeat(10_000);
    let mut echoes = Vec::new();
    for text in ["before", big.as_str(), "after", "last"] {
        let id = server.send_request(
            "tools/call",
            &json!({"name": "inner_echo", "arguments": {"text": text}}),
        );
        echoes.push((id, text));
    }
    // Answers come in any order: each is kept until all are in.
    let mut answers = std::collections::HashMap::new();
    let mut answered = |server: &ServeProcess, id: u64| -> Value {
        while !answers.contains_key(&id) {
            let message = server.until(|message| message["id"].is_u64());
            answers.insert(message["id"].as_u64().unwrap(), message);
        }
        answers[&id].clone()
    };
    for (id, text) in &echoes {
        let answer = answered(&server, *id);
        assert_eq!(
            answer["result"]["structuredContent"]["text"].as_str(),
            Some(*text),
            "call {id} came back whole and as its own"
        );
    }
    // The naps are still resting at the upstream.
    let call_threads = call_threads(server.pid());
    assert_eq!(
        call_threads, 0,
        "no call thread waits for an upstream's answer"
    );
    for id in naps {
        let answer = answered(&server, id);
        assert_eq!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .map(str::trim),
            Some("rested"),
            "{answer}"
        );
    }
}

/// How many of process `pid`'s threads are tool call threads.
fn call_threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter(|task| {
            let comm = std::fs::read_to_string(task.as_ref().unwrap().path().join("comm"));
            comm.is_ok_and(|comm| comm.trim() == "toolsmith-call")
        })
        .count()
}

/// Whether process `pid` runs (a zombie, dead but not yet reaped, does not).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

/// Waits (up to the tests' patience) until process `pid` no longer runs. The process is
/// told apart by its start time: pids are reused (this machine's `pid_max` is 32,768, and the
/// suite starts thousands of processes), and another test's process under the same pid is
/// not the one waited for.
pub(crate) fn wait_until_gone(pid: u32) {
    let deadline = Instant::now() + PATIENCE;
    let first = started_at(pid);
    while alive(pid) && started_at(pid) == first {
        assert!(
            Instant::now() < deadline,
            "process {pid} still runs: {:?}",
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|line| String::from_utf8_lossy(&line).replace('\0', " "))
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// When process `pid` started (field 22 of `/proc/PID/stat`, in clock ticks since boot).
fn started_at(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// Waits for the two pids the `slow` tool writes to `path`: its server's and its own.
pub(crate) fn wait_for_pids(path: &Path) -> Vec<u32> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            let pids: Vec<u32> = text
                .split_whitespace()
                .filter_map(|pid| pid.parse().ok())
                .collect();
            if pids.len() == 2 {
                return pids;
            }
        }
        assert!(Instant::now() < deadline, "the slow tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn list_shows_upstream_tools() {
    let fixture = Fixture::stdio();
    let listed: Value = crate::json_output(toolsmith().args(["list", "--json", &fixture.outer()]));
    let text = listed.to_string();
    assert!(
        text.contains("inner_echo") && text.contains("own"),
        "{text}"
    );
}

/// A tool whose published definition breaks two rules: a PCRE pattern JSON Schema cannot
/// read, and a parameter without a description.
const LINTABLE: &str = r#"description = "Looks a ticket up by its key, and says who holds it and what state it is in."
command = ["echo", "{key}"]

[[parameters]]
name = "key"
type = "string"
pattern = '\A[A-Z]+-\d+\z'
required = true
"#;

/// `check --upstream` and `check --url`: another server's published
/// definitions are linted without a folder, with the definition rules and none of the rules
/// about a folder's own files.
fn lint_findings(output: &std::process::Output) -> Vec<(String, String)> {
    let findings: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{error}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    findings
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            (
                finding["rule"].as_str().unwrap().to_owned(),
                finding["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn check_upstream_lints_a_server_started_by_command() {
    let fixture = Fixture::new("");
    fixture.write("inner/ticket.toml", LINTABLE);
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let output = toolsmith()
        .args(["check", "--format", "json", "--upstream", "--"])
        .arg(&binary)
        .args(["serve", fixture.path("inner").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "an error finding exits 1");
    let findings = lint_findings(&output);
    let rules: Vec<&str> = findings.iter().map(|(rule, _)| rule.as_str()).collect();
    assert!(
        findings
            .iter()
            .any(|(rule, message)| rule == "non-ecma-pattern" && message.contains("ticket")),
        "{findings:?}"
    );
    assert!(rules.contains(&"undocumented-parameter"), "{rules:?}");
    assert!(
        !rules.contains(&"missing-examples"),
        "a server has no test cases to look for: {rules:?}"
    );
}

// Regression test: `check --upstream` on a Toolsmith server with
// discovery on flagged its built-in `tool_search` and `execute_tool` under Toolsmith's own
// rules (too short, names another tool), findings its author cannot fix.
#[test]
fn check_upstream_exempts_a_toolsmith_servers_built_in_tools() {
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let output = toolsmith()
        .args(["check", "--format", "json", "--upstream", "--"])
        .arg(&binary)
        .args(["serve", "examples/tools", "--search", "always"])
        .output()
        .unwrap();
    let findings = lint_findings(&output);
    assert!(
        findings.iter().all(|(_, message)| {
            !message.contains("`tool_search`") && !message.contains("`execute_tool`")
        }),
        "{findings:?}"
    );
    assert_eq!(output.status.code(), Some(0), "{findings:?}");
}

#[test]
fn check_url_lints_a_server_over_http_and_a_dead_one_is_a_clear_error() {
    let fixture = Fixture::new("");
    fixture.write("inner/ticket.toml", LINTABLE);
    let inner = ServeProcess::http(&[fixture.path("inner").to_str().unwrap()], None);
    let output = toolsmith()
        .args(["check", "--format", "json", "--url", inner.url()])
        .args(["--header", "X-Trace: ${TOOLSMITH_TEST_TRACE}"])
        .env("TOOLSMITH_TEST_TRACE", "from-the-test")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        lint_findings(&output)
            .iter()
            .any(|(rule, _)| rule == "non-ecma-pattern")
    );

    let missing = toolsmith()
        .args(["check", "--upstream", "--", "/nonexistent/mcp-server"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2), "it could not run");
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("/nonexistent/mcp-server"), "{stderr}");
}

/// `toolsmith upstream add` writes the table `serve` reads, keeps the
/// rest of the file, tries the server, and refuses to write a name twice.
#[test]
fn upstream_add_writes_the_table_and_tries_the_server() {
    let fixture = Fixture::new("");
    let config = "# the outer folder\n[server]\nname = \"outer\" # kept\n";
    fixture.write("outer/toolsmith.toml", config);
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let inner = fixture.path("inner");
    let output = toolsmith()
        .args(["upstream", "add", &fixture.outer(), "inner", "--json", "--"])
        .arg(&binary)
        .args(["serve", inner.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let reported: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        reported["tools"],
        json!(["inner_echo", "inner_refuse", "inner_slow"]),
        "{stderr}"
    );
    let written = std::fs::read_to_string(fixture.path("outer/toolsmith.toml")).unwrap();
    assert!(
        written.starts_with(config),
        "the file's own lines stay:\n{written}"
    );
    assert!(written.contains("[upstream.inner]"), "{written}");
    let listed: Value = crate::json_output(toolsmith().args(["list", "--json", &fixture.outer()]));
    assert!(listed.to_string().contains("inner_echo"), "{listed}");

    let again = toolsmith()
        .args([
            "upstream",
            "add",
            &fixture.outer(),
            "inner",
            "--url",
            "http://127.0.0.1:9/mcp",
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2), "nothing is written twice");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already has `[upstream.inner]`"));

    let broken = toolsmith()
        .args([
            "upstream",
            "add",
            &fixture.outer(),
            "broken",
            "--",
            "/nonexistent/mcp-server",
        ])
        .output()
        .unwrap();
    assert_eq!(
        broken.status.code(),
        Some(1),
        "written, but it did not start"
    );
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(stderr.contains("did not start"), "{stderr}");
    let written = std::fs::read_to_string(fixture.path("outer/toolsmith.toml")).unwrap();
    assert!(written.contains("[upstream.broken]"), "{written}");
}

/// `lazy = true`: the upstream is started once to learn its tools, and
/// after that not until a call needs it; its tools are listed meanwhile from the last run.
#[test]
fn a_lazy_upstream_starts_at_its_first_call() {
    let fixture = Fixture::new("");
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let starts = fixture.path("starts");
    // Each start of the inner server adds a line to `starts`.
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "[upstream.inner]\nlazy = true\ncommand = [\"sh\", \"-c\", \"echo start >> \\\"$0\\\"; exec \\\"$1\\\" serve \\\"$2\\\"\", {:?}, {:?}, {:?}]\n",
            starts.display().to_string(),
            binary.display().to_string(),
            fixture.path("inner").display().to_string()
        ),
    );
    let started = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let listed = |what: &str| {
        let listed: Value =
            crate::json_output(toolsmith().args(["list", "--json", &fixture.outer()]));
        assert!(
            listed.to_string().contains("inner_echo"),
            "{what}: {listed}"
        );
    };
    listed("the first load starts it to learn its tools");
    assert_eq!(started(), 1);
    listed("then its tools come from the last run");
    assert_eq!(started(), 1, "listing does not start a lazy upstream");

    let client = McpClient::stdio(&[&fixture.outer()]);
    assert!(client.tool_names().contains(&"inner_echo".to_owned()));
    assert_eq!(started(), 1, "serving does not start it either");
    let echoed = client.call("inner_echo", &json!({"text": "now"}));
    assert_eq!(echoed.structured_content, Some(json!({"text": "now"})));
    assert_eq!(started(), 2, "the first call started it");
}
