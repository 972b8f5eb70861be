//! `serve --audit-log` (docs/http.md, "Audit log") on a real `toolsmith serve`: the lines
//! after calls of every outcome over real stdio pipes and over HTTP with a bearer token or an
//! OAuth access token (oauth2-mock-server), argument values kept out (and written when
//! asked), code mode's inner calls, `-` for stderr, a full disk, two replicas sharing one
//! file through Redis, and a `SIGHUP` after a rename losing no line while calls run.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_process::{PATIENCE, ServeProcess, session_id_of};

/// A value that must never be written unless `--audit-arguments` says so.
const SECRET: &str = "hunter2-do-not-log-7f3a";

/// A folder with a tool for each outcome, a prompt and a resource: `greet` answers (and
/// takes a `secret` it does not show), `broken` fails, `spin` runs past its 300 ms timeout,
/// `linger` runs until cancelled, `shape` breaks its output schema, `once` may be called
/// once a minute (`[limits.tools]`), so a second call is `busy`.
fn folder(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let spin = "    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n";
    let files = [
        (
            "greet.star".to_owned(),
            "def greet(name: str, secret: str = \"\") -> str:\n    \"\"\"Greets someone.\"\"\"\n    return \"Hello, \" + name\n\nmcp.tool(greet)\n".to_owned(),
        ),
        (
            "broken.star".to_owned(),
            "def broken() -> str:\n    \"\"\"Always fails.\"\"\"\n    fail(\"it broke\")\n\nmcp.tool(broken)\n".to_owned(),
        ),
        (
            "spin.star".to_owned(),
            format!("def spin() -> str:\n    \"\"\"Spins past its timeout.\"\"\"\n{spin}\nmcp.tool(spin, timeout = \"300ms\")\n"),
        ),
        (
            "linger.star".to_owned(),
            format!("def linger() -> str:\n    \"\"\"Spins until cancelled.\"\"\"\n{spin}\nmcp.tool(linger, timeout = \"60s\")\n"),
        ),
        (
            "shape.star".to_owned(),
            "def shape() -> dict:\n    \"\"\"Breaks its output schema.\"\"\"\n    return {\"x\": 1}\n\nmcp.tool(shape, output = {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"string\"}}, \"required\": [\"x\"]})\n".to_owned(),
        ),
        (
            "ask.star".to_owned(),
            "def ask() -> str:\n    \"\"\"Asks the user's name.\"\"\"\n    answer = mcp.elicit(\"Your name?\", {\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}})\n    return str(answer)\n\nmcp.tool(ask)\n".to_owned(),
        ),
        (
            "once.star".to_owned(),
            "def once() -> str:\n    \"\"\"May run once a minute.\"\"\"\n    return \"ran\"\n\nmcp.tool(once)\n".to_owned(),
        ),
        (
            "prompts/hello.md".to_owned(),
            "---\ndescription: Says hello.\narguments:\n  - name: who\n    description: Whom to greet.\n    required: true\n---\nSay hello to {{who}}.\n".to_owned(),
        ),
        ("resources/notes.md".to_owned(), "Some notes.\n".to_owned()),
        (
            "resources/notes.md.toml".to_owned(),
            "uri = \"resource://audit-test/notes\"\nmime_type = \"text/markdown\"\n".to_owned(),
        ),
        (
            "toolsmith.toml".to_owned(),
            format!("[limits.tools]\nonce = 1\n\n{config}"),
        ),
    ];
    for (name, source) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, source).unwrap();
    }
    dir
}

/// Every line of the audit log at `path`, each of which must be one JSON object.
fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("`{line}`: {error}")))
        .collect()
}

/// Waits until the log at `path` has a line `wanted` accepts; that line.
fn line_where(path: &Path, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(line) = lines(path).into_iter().find(&wanted) {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "no such line in {:#?}",
            lines(path)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The line of the direct `method` of `name` that ended `outcome` (there must be one).
fn find(log: &[Value], method: &str, name: &str, outcome: &str) -> Value {
    log.iter()
        .find(|line| {
            line["method"] == method
                && line["name"] == name
                && line["outcome"] == outcome
                && line["via"].is_null()
        })
        .unwrap_or_else(|| panic!("no {method} {name} {outcome} in {log:#?}"))
        .clone()
}

/// The SHA-256 of `text` in hex, by coreutils' `sha256sum`.
fn sha256(text: &str) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()[..64].to_owned()
}

/// Checks what every line has, whatever the call: a UTC time to the millisecond, a
/// duration, a digest and a size.
fn assert_shape(line: &Value) {
    let time = line["time"].as_str().unwrap_or_else(|| panic!("{line}"));
    // 2026-12-07T22:41:58.123Z
    assert_eq!(time.len(), 24, "{line}");
    assert!(time.ends_with('Z') && time.as_bytes()[19] == b'.', "{line}");
    assert!(
        line["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0),
        "{line}"
    );
    let digest = line["arguments_sha256"].as_str().unwrap_or_default();
    assert_eq!(digest.len(), 64, "{line}");
    assert!(line["result_bytes"].is_u64(), "{line}");
    assert!(line["request_id"].is_string(), "{line}");
}

/// Calls of every outcome over `server`'s stdio, a prompt, resources and a `run_code`
/// whose program calls `greet`; waits for the cancelled call's line in `log_path`. The
/// answer of the first, successful call.
fn call_every_outcome(server: &mut ServeProcess, log_path: &Path) -> Value {
    let greeted = server.call("greet", &json!({"secret": SECRET, "name": "Ada"}));
    assert_eq!(greeted["content"][0]["text"], "Hello, Ada", "{greeted}");
    assert_eq!(server.call("broken", &json!({}))["isError"], true);
    assert_eq!(server.call("greet", &json!({"name": 7}))["isError"], true);
    assert_eq!(server.call("spin", &json!({}))["isError"], true);
    assert_eq!(server.call("shape", &json!({}))["isError"], true);
    assert_eq!(server.call("once", &json!({}))["isError"], false);
    assert_eq!(server.call("once", &json!({}))["isError"], true);
    let unknown = server.request("tools/call", &json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let prompt = server.request(
        "prompts/get",
        &json!({"name": "hello", "arguments": {"who": "Grace"}}),
    );
    assert!(prompt["result"]["messages"].is_array(), "{prompt}");
    let read = server.request(
        "resources/read",
        &json!({"uri": "resource://audit-test/notes"}),
    );
    assert!(read["result"]["contents"].is_array(), "{read}");
    let missing = server.request(
        "resources/read",
        &json!({"uri": "resource://audit-test/no"}),
    );
    assert!(missing["error"].is_object(), "{missing}");
    let code = format!("tools.greet(name = \"Edsger\", secret = \"{SECRET}\")");
    let ran = server.call("run_code", &json!({"code": code}));
    assert_eq!(ran["isError"], false, "{ran}");
    // A call the client cancels gets no answer; its line says `cancelled`.
    let id = server.send_request("tools/call", &json!({"name": "linger", "arguments": {}}));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "changed my mind"}}),
    );
    line_where(log_path, |line| line["name"] == "linger");

    greeted
}

#[test]
fn stdio_calls_of_every_outcome_are_logged_without_their_arguments() {
    let dir = folder("");
    let log_path = dir.path().join("audit.jsonl");
    let folder = dir.path().to_str().unwrap();
    let mut server = ServeProcess::stdio(&[
        folder,
        "--code-mode=alongside",
        "--audit-log",
        log_path.to_str().unwrap(),
    ]);
    server.initialize();
    let greeted = call_every_outcome(&mut server, &log_path);
    let log = lines(&log_path);
    let text = std::fs::read_to_string(&log_path).unwrap();
    assert!(!text.contains(SECRET), "{text}");
    for line in &log {
        assert_shape(line);
        assert_eq!(line["caller"], "anonymous", "{line}");
        assert!(
            line["subject"].is_null() && line["client_id"].is_null(),
            "{line}"
        );
        assert!(
            line["session"].is_null() && line["replica"].is_null(),
            "{line}"
        );
        assert!(line.get("arguments").is_none(), "{line}");
    }
    // The digest is of the arguments as canonical JSON: keys sorted, no whitespace.
    let ok = find(&log, "tools/call", "greet", "ok");
    let canonical = format!(r#"{{"name":"Ada","secret":"{SECRET}"}}"#);
    assert_eq!(ok["arguments_sha256"], sha256(&canonical), "{ok}");
    let answer_bytes = serde_json::to_string(&greeted).unwrap().len();
    assert_eq!(ok["result_bytes"], answer_bytes, "{ok}");
    assert!(ok["error_code"].is_null(), "{ok}");
    find(&log, "tools/call", "broken", "is_error");
    let invalid = find(&log, "tools/call", "greet", "invalid_arguments");
    assert_eq!(invalid["arguments_sha256"], sha256(r#"{"name":7}"#));
    let timeout = find(&log, "tools/call", "spin", "timeout");
    assert!(
        timeout["duration_ms"].as_f64().unwrap() >= 300.0,
        "{timeout}"
    );
    find(&log, "tools/call", "shape", "invalid_output");
    find(&log, "tools/call", "once", "ok");
    find(&log, "tools/call", "once", "busy");
    let unknown = find(&log, "tools/call", "nope", "unknown_tool");
    assert_eq!(unknown["error_code"], -32602, "{unknown}");
    assert_eq!(unknown["result_bytes"], 0, "{unknown}");
    find(&log, "tools/call", "linger", "cancelled");
    let prompt = find(&log, "prompts/get", "hello", "ok");
    assert_eq!(prompt["arguments_sha256"], sha256(r#"{"who":"Grace"}"#));
    let read = find(&log, "resources/read", "resource://audit-test/notes", "ok");
    assert_eq!(read["arguments_sha256"], sha256("{}"), "{read}");
    assert!(read["result_bytes"].as_u64().unwrap() > 10, "{read}");
    find(
        &log,
        "resources/read",
        "resource://audit-test/no",
        "invalid_request",
    );
    // Code mode: the run, and the call its program made, each with a line.
    let run = find(&log, "tools/call", "run_code", "ok");
    let inner = log
        .iter()
        .find(|line| line["via"] == "run_code")
        .unwrap_or_else(|| panic!("no inner call in {log:#?}"));
    assert_eq!(inner["name"], "greet", "{inner}");
    assert_eq!(inner["outcome"], "ok", "{inner}");
    assert_eq!(inner["request_id"], run["request_id"], "{inner}");
    let canonical = format!(r#"{{"name":"Edsger","secret":"{SECRET}"}}"#);
    assert_eq!(inner["arguments_sha256"], sha256(&canonical), "{inner}");
    assert!(inner["result_bytes"].as_u64().unwrap() > 0, "{inner}");
}

/// A POST of `body` to the server at `address` with the bearer `token`, in `session` if
/// any: the status, the head and the JSON-RPC answer (from a JSON body or the last event
/// of a stream).
fn post(address: &str, token: &str, session: Option<&str>, body: &Value) -> (u16, String, Value) {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Authorization: Bearer {token}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.extend([
            "Mcp-Session-Id: ",
            session,
            "\r\nMCP-Protocol-Version: 2025-11-25\r\n",
        ]);
    }
    request.push_str("\r\n");
    request.push_str(&body);
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
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let json = serde_json::from_str(body).unwrap_or_else(|_| {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    });
    (status, head.to_owned(), json)
}

fn call_body(id: u64, name: &str, arguments: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

#[test]
fn http_calls_with_the_token_are_logged_as_token_and_toolsmith_toml_can_ask_for_arguments() {
    // `[audit]` in toolsmith.toml, relative to the folder, with the argument values.
    let dir = folder("[audit]\nfile = \"audit.jsonl\"\narguments = true\n");
    let log_path = dir.path().join("audit.jsonl");
    let server = ServeProcess::http(
        &[dir.path().to_str().unwrap(), "--replica-name", "replica-a"],
        Some("s3cret"),
    );
    // A stateless call, then a session's.
    let (status, _, answer) = post(
        server.address(),
        "s3cret",
        None,
        &call_body(1, "greet", &json!({"name": "Ada", "secret": SECRET})),
    );
    assert_eq!(status, 200, "{answer}");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "audit", "version": "1"}}});
    let (status, head, _) = post(server.address(), "s3cret", None, &initialize);
    assert_eq!(status, 200, "{head}");
    let session = session_id_of(&head);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(server.address(), "s3cret", Some(&session), &initialized).0,
        202
    );
    let (status, _, answer) = post(
        server.address(),
        "s3cret",
        Some(&session),
        &call_body(2, "broken", &json!({})),
    );
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    // A 2026-07-28 request whose tool asks the user: answered `input_required`.
    let (status, answer) = server.post_2026(
        Some("s3cret"),
        &json!({"elicitation": {}}),
        ("tools/call", "ask"),
        &json!({"name": "ask", "arguments": {}}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    // Refused at the door: no line.
    let (status, _, _) = post(
        server.address(),
        "wrong",
        None,
        &call_body(3, "greet", &json!({"name": "x"})),
    );
    assert_eq!(status, 401);

    let log = lines(&log_path);
    assert_eq!(log.len(), 3, "{log:#?}");
    let asked = find(&log, "tools/call", "ask", "input_required");
    assert!(asked["result_bytes"].as_u64().unwrap() > 0, "{asked}");
    let stateless = find(&log, "tools/call", "greet", "ok");
    assert_eq!(stateless["caller"], "token", "{stateless}");
    assert_eq!(stateless["replica"], "replica-a", "{stateless}");
    assert!(stateless["session"].is_null(), "{stateless}");
    assert_eq!(
        stateless["arguments"],
        json!({"name": "Ada", "secret": SECRET}),
        "{stateless}"
    );
    let in_session = find(&log, "tools/call", "broken", "is_error");
    assert_eq!(in_session["caller"], "token", "{in_session}");
    assert_eq!(in_session["session"], session.as_str(), "{in_session}");
    assert_eq!(in_session["arguments"], json!({}), "{in_session}");
    assert_eq!(server.stop(), Some(0));
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn replicas_name_themselves_in_the_lines_of_one_shared_file() {
    // Two replicas sharing sessions through Redis append to one file: each line whole, each
    // naming the replica that served the call.
    crate::services::require_redis();
    let dir = folder("");
    let redis_dir = tempfile::tempdir().unwrap();
    let port = crate::services::free_port();
    let _redis = crate::services::redis(redis_dir.path(), port);
    let state = format!("redis://127.0.0.1:{port}/0");
    let log_path = dir.path().join("audit.jsonl");
    let flags = ["--audit-log", log_path.to_str().unwrap()];
    let a = crate::services::replica_with(dir.path(), &state, "replica-a", &flags);
    let b = crate::services::replica_with(dir.path(), &state, "replica-b", &flags);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "audit", "version": "1"}}});
    let (status, head, _) = post(a.address(), "none", None, &initialize);
    assert_eq!(status, 200, "{head}");
    let session = session_id_of(&head);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(a.address(), "none", Some(&session), &initialized).0,
        202
    );
    for (id, replica) in [(1, &a), (2, &b), (3, &a), (4, &b)] {
        let call = call_body(id, "greet", &json!({"name": format!("call {id}")}));
        let (status, _, answer) = post(replica.address(), "none", Some(&session), &call);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let log = lines(&log_path);
    let served: Vec<(&str, &str)> = log
        .iter()
        .map(|line| {
            assert_eq!(line["session"], session.as_str(), "{line}");
            (
                line["request_id"].as_str().unwrap(),
                line["replica"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        served,
        [
            ("1", "replica-a"),
            ("2", "replica-b"),
            ("3", "replica-a"),
            ("4", "replica-b")
        ],
        "{log:#?}"
    );
}

#[test]
fn a_dash_writes_the_lines_to_stderr() {
    let dir = folder("");
    let mut server = ServeProcess::stdio(&[
        dir.path().to_str().unwrap(),
        "--audit-log",
        "-",
        "--audit-arguments",
    ]);
    server.initialize();
    server.call("greet", &json!({"name": "Ada", "secret": SECRET}));
    let said = server.stderr_until(|line| line.contains("\"method\":\"tools/call\""));
    let line: Value = serde_json::from_str(said.last().unwrap()).unwrap();
    assert_eq!(line["name"], "greet", "{line}");
    assert_eq!(line["outcome"], "ok", "{line}");
    assert_eq!(line["arguments"]["secret"], SECRET, "{line}");
}

#[test]
fn a_full_disk_is_a_warning_never_a_failed_call() {
    // /dev/full takes the open and refuses every write with ENOSPC, as a full disk does.
    let dir = folder("");
    let mut server =
        ServeProcess::stdio(&[dir.path().to_str().unwrap(), "--audit-log", "/dev/full"]);
    server.initialize();
    for name in ["Ada", "Grace", "Edsger"] {
        let answer = server.call("greet", &json!({"name": name}));
        assert_eq!(
            answer["content"][0]["text"],
            format!("Hello, {name}"),
            "{answer}"
        );
    }
    let said = server.stderr_until(|line| line.contains("audit log"));
    let warning = said.last().unwrap();
    assert!(
        warning.contains("could not be written to /dev/full"),
        "{warning}"
    );
    assert!(warning.contains("No space left on device"), "{warning}");
    // At most one warning a minute: the other two lines lost say nothing yet.
    let (_, rest) = server.finish();
    assert!(
        rest.iter().all(|line| !line.contains("audit log")),
        "{rest:?}"
    );
}

#[test]
fn sighup_after_a_rename_starts_a_new_file_and_loses_no_line() {
    let dir = folder("");
    let log_path = dir.path().join("audit.jsonl");
    let rotated = dir.path().join("audit.jsonl.1");
    let server = ServeProcess::http(
        &[
            dir.path().to_str().unwrap(),
            "--audit-log",
            log_path.to_str().unwrap(),
        ],
        Some("s3cret"),
    );
    let address = server.address().to_owned();
    let made = Arc::new(AtomicUsize::new(0));
    let rotated_seen = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|caller| {
            let (address, made, rotated_seen) = (
                address.clone(),
                Arc::clone(&made),
                Arc::clone(&rotated_seen),
            );
            std::thread::spawn(move || {
                let mut after = 0;
                for id in 0.. {
                    let name = format!("caller {caller} call {id}");
                    let (status, _, answer) = post(
                        &address,
                        "s3cret",
                        None,
                        &call_body(id, "greet", &json!({"name": name})),
                    );
                    assert_eq!(status, 200, "{answer}");
                    made.fetch_add(1, Ordering::SeqCst);
                    if rotated_seen.load(Ordering::SeqCst) {
                        after += 1;
                        if after == 20 {
                            return;
                        }
                    }
                }
            })
        })
        .collect();
    // Rotate as logrotate does, with calls in flight: rename, then SIGHUP.
    while lines(&log_path).len() < 40 {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::rename(&log_path, &rotated).unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(server.pid()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let deadline = Instant::now() + PATIENCE;
    while !log_path.exists() {
        assert!(Instant::now() < deadline, "no new file after SIGHUP");
        std::thread::sleep(Duration::from_millis(5));
    }
    rotated_seen.store(true, Ordering::SeqCst);
    for caller in callers {
        caller.join().unwrap();
    }
    let (old, new) = (lines(&rotated), lines(&log_path));
    let made = made.load(Ordering::SeqCst);
    assert_eq!(
        old.len() + new.len(),
        made,
        "old {} new {}",
        old.len(),
        new.len()
    );
    // Each caller made 20 calls after the new file appeared; the few in flight as it was
    // opened (before the log switched to it) went to the old one.
    assert!(new.len() >= 60, "the new file has {} lines", new.len());
    for line in old.iter().chain(&new) {
        assert_eq!(line["outcome"], "ok", "{line}");
    }
    // Still serving: SIGHUP did not end it.
    let (status, _, _) = post(
        server.address(),
        "s3cret",
        None,
        &call_body(1, "greet", &json!({"name": "x"})),
    );
    assert_eq!(status, 200);
    assert_eq!(lines(&log_path).len(), new.len() + 1);
}

#[test]
#[ignore = "needs oauth2-mock-server: npm ci --prefix .ci/oauth (CI runs it: cargo test -- --include-ignored)"]
fn oauth_calls_are_logged_with_the_tokens_subject_and_client() {
    let mut issuer = crate::oauth::Issuer::start();
    let url = issuer.url.clone();
    let dir = folder("");
    std::fs::write(
        dir.path().join("tickets.star"),
        "def close_ticket(id: int) -> str:\n    \"\"\"Close a ticket.\"\"\"\n    return \"closed\"\n\nmcp.tool(close_ticket, scopes = [\"tickets:write\"])\n",
    )
    .unwrap();
    let log_path = dir.path().join("audit.jsonl");
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command
        .args(["--oauth-issuer", &url])
        .args(["--audit-log", log_path.to_str().unwrap()]);
    let server = ServeProcess::spawn_http(command);
    let audience = server.url().to_owned();
    let claims = json!({"aud": audience, "sub": "alice", "client_id": "ticket-app",
                        "scope": "tickets:read"});
    let token = &issuer.token("first", 600, &claims);
    let (status, _, answer) = post(
        server.address(),
        token,
        None,
        &call_body(1, "greet", &json!({"name": "Ada"})),
    );
    assert_eq!(status, 200, "{answer}");
    // A tool whose scope the token lacks: refused, `invalid_request`.
    let (status, _, answer) = post(
        server.address(),
        token,
        None,
        &call_body(2, "close_ticket", &json!({"id": 7})),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    let log = lines(&log_path);
    assert_eq!(log.len(), 2, "{log:#?}");
    for line in &log {
        assert_eq!(line["caller"], "oauth", "{line}");
        assert_eq!(line["subject"], "alice", "{line}");
        assert_eq!(line["client_id"], "ticket-app", "{line}");
    }
    find(&log, "tools/call", "greet", "ok");
    find(&log, "tools/call", "close_ticket", "invalid_request");
}
