//! Replicas sharing their sessions through Redis, behind nginx round-robin (items
//! 4 and 5): Debian's `redis-server` and `nginx`, started on free loopback ports with
//! their files in a temp dir (`services.rs`), and two `toolsmith serve --http --state redis://…` processes.
//! nginx runs `docs/deploy/nginx.conf`, the file docs/deploy.md shows, so the two agree.
//! These tests are ignored unless run with `cargo test -- --include-ignored` (as `.ci/run`
//! does, having installed both); there, a missing program fails them.

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::ServeProcess;
use crate::services::{
    free_port, nginx, redis, replica, replica_with, replicas_that_answered, require_redis,
    require_redis_and_nginx,
};

const ECHO: &str = "def echo(text: str) -> str:\n    \"\"\"Echo the text back.\n\n    Args:\n        text: What to echo.\n    \"\"\"\n    return text\n\nmcp.tool(echo)\n";

#[test]
#[ignore = "needs redis-server and nginx (CI runs it: cargo test -- --include-ignored)"]
fn one_session_is_served_by_both_replicas_and_survives_losing_one() {
    require_redis_and_nginx();
    let temp = tempfile::tempdir().unwrap();
    let tools = crate::folder(&[("echo.star", ECHO)]);
    let redis_port = free_port();
    let redis = redis(temp.path(), redis_port);
    let state = format!("redis://127.0.0.1:{redis_port}/0");
    let a = replica(tools.path(), &state, "replica-a");
    let b = replica(tools.path(), &state, "replica-b");
    let balancer = free_port();
    let _nginx = nginx(temp.path(), balancer, &[a.address(), b.address()]);

    let client = McpClient::http(&format!("http://127.0.0.1:{balancer}/mcp"));
    for call in 0..50 {
        let said = format!("call {call}");
        assert_eq!(text(&client.call("echo", &json!({"text": said}))), said);
    }
    // Round-robin sent the one session's requests to both, and both answered them: before
    // the shared state, the second replica answered "Session not found".
    let answered = replicas_that_answered(temp.path());
    assert_eq!(
        answered,
        BTreeSet::from(["replica-a".to_owned(), "replica-b".to_owned()]),
        "the replicas that answered POSTs"
    );

    // One replica gone: the session goes on through the other, every call answered once.
    drop(a);
    for call in 0..20 {
        let said = format!("after {call}");
        let answer = client.try_call("echo", &json!({"text": said}));
        assert_eq!(answer.map(|result| text(&result)), Ok(said));
    }

    // Redis gone: a new session is refused clearly, the open one keeps working.
    drop(redis);
    let (status, head, body) = b.post(
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(body.contains("shared state"), "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("toolsmith-replica: replica-b"),
        "{head}"
    );
    assert_eq!(
        text(&client.call("echo", &json!({"text": "still here"}))),
        "still here"
    );
}

/// `ask` asks the user for a name (elicitation), `linger` runs until cancelled (a minute at
/// most), `chatty` logs at `debug`.
const CLIENT_TOOLS: [(&str, &str); 3] = [
    (
        "ask.star",
        "def ask() -> str:\n    \"\"\"Asks the user for a name.\"\"\"\n    answer = mcp.elicit(\"Your name?\", {\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]})\n    return \"hello \" + json.encode(answer)\n\nmcp.tool(ask)\n",
    ),
    (
        "linger.star",
        "def linger() -> str:\n    \"\"\"Spins until cancelled.\"\"\"\n    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n\nmcp.tool(linger, timeout = \"60s\")\n",
    ),
    (
        "chatty.star",
        "def chatty() -> str:\n    \"\"\"Logs at debug.\"\"\"\n    mcp.log(\"debug\", \"a debug line\")\n    return \"said\"\n\nmcp.tool(chatty)\n",
    ),
];

/// Redis and two replicas of [`CLIENT_TOOLS`], without a balancer: the tests post to each
/// replica's own port.
fn two_replicas() -> (
    tempfile::TempDir,
    crate::services::Daemon,
    ServeProcess,
    ServeProcess,
) {
    replicas_of(&CLIENT_TOOLS, &[])
}

/// Redis and two replicas, `replica-a` and `replica-b`, serving a folder of `files` with
/// `flags`.
fn replicas_of(
    files: &[(&str, &str)],
    flags: &[&str],
) -> (
    tempfile::TempDir,
    crate::services::Daemon,
    ServeProcess,
    ServeProcess,
) {
    require_redis();
    let temp = tempfile::tempdir().unwrap();
    let tools = crate::folder(files);
    let redis_port = free_port();
    let redis = redis(temp.path(), redis_port);
    let state = format!("redis://127.0.0.1:{redis_port}/0");
    let a = replica_with(tools.path(), &state, "replica-a", flags);
    let b = replica_with(tools.path(), &state, "replica-b", flags);
    drop(temp);
    (tools, redis, a, b)
}

fn headers(session: Option<&str>) -> Vec<(&str, &str)> {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(session) = session {
        headers.extend([
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
    }
    headers
}

/// Opens a session on `replica` for a client with `capabilities`; its id.
fn open_session(replica: &ServeProcess, capabilities: &Value) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "replicas-test", "version": "1"}}});
    let (status, head, body) = replica.post(&headers(None), &initialize.to_string());
    assert_eq!(status, 200, "{head}\n{body}");
    let session = crate::serve_process::session_id_of(&head);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, head, _) = post(replica, &session, &initialized);
    assert_eq!(status, 202, "{head}");
    session
}

/// POSTs `message` in `session` to `replica`: status, head and body.
fn post(replica: &ServeProcess, session: &str, message: &Value) -> (u16, String, String) {
    replica.post(&headers(Some(session)), &message.to_string())
}

/// The JSON-RPC messages of one HTTP response, read as they come (an SSE stream, or a
/// single JSON body), over a connection of its own.
struct Messages {
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// SSE text received and not yet made into messages.
    pending: String,
    /// A plain JSON body: its one message, not yet taken.
    json: bool,
    ended: bool,
    /// When waiting for more gives up (SSE keep-alives would keep a stream going).
    deadline: Instant,
}

impl Messages {
    /// Sends `method` (`POST`, `GET`) to the replica at `address` in `session`, with `body`.
    fn open(address: &str, method: &str, session: &str, body: Option<&Value>) -> Self {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        let accept = if method == "GET" {
            vec![
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ]
        } else {
            headers(Some(session))
        };
        for (name, value) in accept {
            request.extend([name, ": ", value, "\r\n"]);
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            head.push_str(&line);
        }
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let lower = head.to_ascii_lowercase();
        Self {
            reader,
            chunked: lower.contains("transfer-encoding: chunked"),
            pending: String::new(),
            json: lower.contains("content-type: application/json"),
            ended: false,
            deadline: Instant::now() + Duration::from_secs(20),
        }
    }

    /// The next message; `None` once the response has ended.
    fn next(&mut self) -> Option<Value> {
        loop {
            assert!(
                Instant::now() < self.deadline,
                "no end of the response within 20 s"
            );
            if self.json {
                if self.ended {
                    return None;
                }
                let body = self.read_all();
                self.ended = true;
                return serde_json::from_str(body.trim()).ok();
            }
            if let Some(end) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim)
                    .collect();
                if let Ok(message) = serde_json::from_str(&data.join("\n")) {
                    return Some(message);
                }
                continue;
            }
            if self.ended {
                return None;
            }
            match self.read_some() {
                Some(text) => self.pending.push_str(&text.replace("\r\n", "\n")),
                None => self.ended = true,
            }
        }
    }

    /// The next message that `wanted` accepts, skipping others; panics at the end.
    fn until(&mut self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let message = self.next().expect("the response ended first");
            if wanted(&message) {
                return message;
            }
        }
    }

    /// The next piece of the body (a chunk); `None` at its end.
    fn read_some(&mut self) -> Option<String> {
        if !self.chunked {
            let mut line = String::new();
            return match self.reader.read_line(&mut line) {
                Ok(0) => None,
                Ok(_) => Some(line),
                Err(error) => panic!("reading the stream: {error}"),
            };
        }
        let mut size = String::new();
        self.reader
            .read_line(&mut size)
            .unwrap_or_else(|error| panic!("reading the stream: {error}"));
        let size = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).ok()?;
        if size == 0 {
            return None;
        }
        let mut chunk = vec![0; size + 2];
        self.reader.read_exact(&mut chunk).unwrap();
        chunk.truncate(size);
        Some(String::from_utf8(chunk).unwrap())
    }

    fn read_all(&mut self) -> String {
        let mut body = String::new();
        while let Some(piece) = self.read_some() {
            body.push_str(&piece);
        }
        body
    }
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn an_elicitation_from_one_replica_is_answered_through_the_other() {
    // The elicitation rides A's POST stream, the client's answer lands on
    // B (as a round-robin balancer may send it), and B relays it to A over Redis pub/sub.
    let (_tools, _redis, a, b) = two_replicas();
    let session = open_session(&a, &json!({"elicitation": {}}));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "ask", "arguments": {}}});
    let mut on_a = Messages::open(a.address(), "POST", &session, Some(&call));
    let asked = on_a.until(|message| message["method"] == "elicitation/create");
    assert_eq!(asked["params"]["message"], "Your name?", "{asked}");

    let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let (status, head, body) = post(&b, &session, &answer);
    assert_eq!(status, 202, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("toolsmith-replica: replica-b"),
        "{head}"
    );

    let result = on_a.until(|message| message["id"] == 1);
    let said = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("Ada"), "{result}");
    assert_eq!(result["result"]["isError"], false, "{result}");
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn a_cancellation_posted_to_one_replica_stops_the_call_on_the_other() {
    // `notifications/cancelled` for a call running on A, POSTed to B,
    // stops it on A. As on one server, the call then gets no response: its stream ends
    // without one. Both of A's paths: rmcp's session worker (a client that can be asked
    // for elicitation) and the direct one (a client that cannot be asked anything).
    let (_tools, _redis, a, b) = two_replicas();
    for capabilities in [json!({"elicitation": {}}), json!({})] {
        let session = open_session(&a, &capabilities);
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "linger", "arguments": {}}});
        let started = Instant::now();
        let waiting = std::thread::spawn({
            let address = a.address().to_owned();
            let session = session.clone();
            move || {
                let mut on_a = Messages::open(&address, "POST", &session, Some(&call));
                std::iter::from_fn(|| on_a.next()).collect::<Vec<_>>()
            }
        });
        // Long enough for the call to be running on A.
        std::thread::sleep(Duration::from_millis(500));
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "changed my mind"}});
        let (status, head, body) = post(&b, &session, &cancel);
        assert_eq!(status, 202, "{head}\n{body}");
        let messages = waiting.join().unwrap();
        assert!(
            messages.iter().all(|message| message.get("id").is_none()),
            "a cancelled call got a response ({capabilities}): {messages:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the call ran on ({capabilities})"
        );
    }
    let (_, metrics) = a.raw(&format!(
        "GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        a.address()
    ));
    let cancelled = metrics
        .lines()
        .find(|line| {
            line.starts_with("toolsmith_tool_calls_total{")
                && line.contains(r#"tool="linger""#)
                && line.contains(r#"outcome="cancelled""#)
        })
        .unwrap_or_else(|| panic!("no cancelled calls counted:\n{metrics}"));
    assert!(cancelled.ends_with(" 2"), "{cancelled}");
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn a_log_level_set_on_one_replica_applies_on_the_other() {
    // `logging/setLevel` is shared: published to a replica that holds
    // the session already, and read by one that restores it later.
    let (_tools, _redis, a, b) = two_replicas();
    let set_debug = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": {"level": "debug"}});
    let chatty = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "chatty", "arguments": {}}});
    let debug_line = |message: &Value| {
        message["method"] == "notifications/message" && message["params"]["level"] == "debug"
    };

    // Set on B while A holds the session: A hears of it.
    let session = open_session(&a, &json!({}));
    let (status, head, body) = post(&b, &session, &set_debug);
    assert_eq!(status, 200, "{head}\n{body}");
    let mut stream_on_a = Messages::open(a.address(), "GET", &session, None);
    std::thread::sleep(Duration::from_millis(300));
    let (status, _, body) = post(&a, &session, &chatty);
    assert_eq!(status, 200, "{body}");
    let logged = stream_on_a.until(debug_line);
    assert_eq!(logged["params"]["data"], "a debug line", "{logged}");

    // Set on A, then B restores the session: it reads the level from the shared state.
    let session = open_session(&a, &json!({}));
    let (status, head, body) = post(&a, &session, &set_debug);
    assert_eq!(status, 200, "{head}\n{body}");
    let mut stream_on_b = Messages::open(b.address(), "GET", &session, None);
    let (status, head, body) = post(&b, &session, &chatty);
    assert_eq!(status, 200, "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("toolsmith-replica: replica-b"),
        "{head}"
    );
    let logged = stream_on_b.until(debug_line);
    assert_eq!(logged["params"]["data"], "a debug line", "{logged}");
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn a_log_from_a_call_on_one_replica_reaches_the_get_stream_on_the_other() {
    // A session's notifications for its GET stream reach it on whichever
    // replica holds it, from a call on either path of the other one (restoring, then direct).
    let (_tools, _redis, a, b) = two_replicas();
    let session = open_session(&a, &json!({}));
    let set_debug = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": {"level": "debug"}});
    let (status, head, body) = post(&a, &session, &set_debug);
    assert_eq!(status, 200, "{head}\n{body}");
    let mut stream_on_a = Messages::open(a.address(), "GET", &session, None);
    std::thread::sleep(Duration::from_millis(300));
    for id in [2, 3] {
        let chatty = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "chatty", "arguments": {}}});
        let (status, head, body) = post(&b, &session, &chatty);
        assert_eq!(status, 200, "{head}\n{body}");
        assert!(body.contains("said"), "{body}");
        let logged = stream_on_a.until(|message| message["method"] == "notifications/message");
        assert_eq!(logged["params"]["data"], "a debug line", "{logged}");
    }
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn a_subscription_made_through_either_replica_is_followed_where_the_get_stream_is() {
    // `resources/subscribe` is shared like the log level. Session one is
    // held by A and subscribes through B; session two subscribes on A and is restored by B
    // later. When the resource changes, each session's GET stream (on A, on B) gets
    // `resources/updated` once, and the next reload's `tools/list_changed` once.
    let mut files = CLIENT_TOOLS.to_vec();
    files.extend([
        ("resources/note.txt", "first"),
        ("resources/note.txt.toml", "uri = \"test://note\"\n"),
    ]);
    let (tools, _redis, a, b) = replicas_of(&files, &["--watch"]);
    let subscribe = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
        "params": {"uri": "test://note"}});
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});

    let one = open_session(&a, &json!({}));
    let mut stream_of_one = Messages::open(a.address(), "GET", &one, None);
    let (status, head, body) = post(&b, &one, &subscribe);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("toolsmith-replica: replica-b"),
        "{head}"
    );

    let two = open_session(&a, &json!({}));
    let (status, head, body) = post(&a, &two, &subscribe);
    assert_eq!(status, 200, "{head}\n{body}");
    let (status, head, body) = post(&b, &two, &ping);
    assert_eq!(status, 200, "{head}\n{body}");
    let mut stream_of_two = Messages::open(b.address(), "GET", &two, None);
    std::thread::sleep(Duration::from_millis(500));

    std::fs::write(tools.path().join("resources/note.txt"), "second").unwrap();
    for stream in [&mut stream_of_one, &mut stream_of_two] {
        let updated =
            stream.until(|message| message["method"] == "notifications/resources/updated");
        assert_eq!(updated["params"]["uri"], "test://note", "{updated}");
    }
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(tools.path().join("echo.star"), ECHO).unwrap();
    for stream in [&mut stream_of_one, &mut stream_of_two] {
        let mut seen = Vec::new();
        stream.until(|message| {
            seen.push(message["method"].as_str().unwrap_or_default().to_owned());
            message["method"] == "notifications/tools/list_changed"
        });
        let updated = seen
            .iter()
            .filter(|method| *method == "notifications/resources/updated")
            .count();
        assert_eq!(
            updated, 0,
            "resources/updated came more than once: {seen:?}"
        );
    }
}

#[test]
#[ignore = "needs redis-server (CI runs it: cargo test -- --include-ignored)"]
fn the_roots_a_client_gave_one_replica_serve_the_other_until_they_change() {
    // A session's roots are kept in the shared state. A asks the client
    // for them; B then runs the command tool in that root without asking. After
    // `notifications/roots/list_changed` posted to B, A asks again, and B takes the new
    // answer from the shared state.
    let files = [(
        "here.toml",
        "description = \"Print the working directory.\"\ncommand = [\"pwd\"]\n",
    )];
    let (_tools, _redis, a, b) = replicas_of(&files, &[]);
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    let session = open_session(&a, &json!({"roots": {}}));
    let call = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "here", "arguments": {}}})
    };
    // Calls `here` on `replica`, answering `roots/list` with `root` if it asks: the
    // directory the tool ran in, and whether it asked.
    let run = |replica: &ServeProcess, id: u32, root: &std::path::Path| {
        let mut stream = Messages::open(replica.address(), "POST", &session, Some(&call(id)));
        let mut asked = false;
        loop {
            let message = stream
                .next()
                .expect("the call's stream ended without its result");
            if message["method"] == "roots/list" {
                asked = true;
                let uri = format!("file://{}", root.canonicalize().unwrap().display());
                let answer = json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"roots": [{"uri": uri}]}});
                let (status, head, _) = post(replica, &session, &answer);
                assert_eq!(status, 202, "{head}");
            } else if message["id"] == id {
                let ran = message["result"]["content"][0]["text"].as_str();
                let ran = ran.unwrap_or_else(|| panic!("no text: {message}")).trim();
                return (std::path::PathBuf::from(ran), asked);
            }
        }
    };

    let first_path = first.path().canonicalize().unwrap();
    let second_path = second.path().canonicalize().unwrap();
    assert_eq!(run(&a, 1, first.path()), (first_path.clone(), true));
    assert_eq!(run(&b, 2, second.path()), (first_path, false));

    let changed = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    let (status, head, _) = post(&b, &session, &changed);
    assert_eq!(status, 202, "{head}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(run(&a, 3, second.path()), (second_path.clone(), true));
    assert_eq!(run(&b, 4, first.path()), (second_path, false));
}
