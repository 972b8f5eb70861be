//! `ServeProcess`: the one way these tests start `toolsmith serve` as a child process, over
//! stdio or over HTTP on a free port. It writes and reads JSON-RPC lines, reads stderr as
//! lines, speaks raw HTTP/1.1 to the URL the server printed, and kills the process on drop,
//! so a failing test leaves no server behind. Bounds are generous; nothing here measures
//! speed.

use std::fmt::Display;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::toolsmith;

/// How long a test waits for a line, an answer or an exit before it fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// A running `toolsmith serve`.
pub(crate) struct ServeProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    /// The `http://…/mcp` URL the server printed, when it serves HTTP.
    url: Option<String>,
    patience: Duration,
    next_id: u64,
}

impl ServeProcess {
    /// `toolsmith serve ARGS` over stdio, from the workspace root.
    pub(crate) fn stdio(args: &[&str]) -> Self {
        let mut command = toolsmith();
        command.arg("serve").args(args);
        Self::spawn(command)
    }

    /// `toolsmith serve ARGS --http 127.0.0.1:0`, with `TOOLSMITH_AUTH_TOKEN` set to `token`
    /// or unset; not started yet, for a test that expects it to refuse to start.
    pub(crate) fn http_command(args: &[&str], token: Option<&str>) -> Command {
        let mut command = toolsmith();
        command
            .arg("serve")
            .args(args)
            .args(["--http", "127.0.0.1:0"])
            .env_remove("TOOLSMITH_AUTH_TOKEN");
        if let Some(token) = token {
            command.env("TOOLSMITH_AUTH_TOKEN", token);
        }
        command
    }

    /// [`Self::http_command`] started, once its first stderr line has given its URL.
    pub(crate) fn http(args: &[&str], token: Option<&str>) -> Self {
        Self::spawn_http(Self::http_command(args, token))
    }

    /// Starts `command`, an [`Self::http_command`] the test may have added to, once its
    /// first stderr line has given its URL.
    pub(crate) fn spawn_http(command: Command) -> Self {
        let mut server = Self::spawn(command);
        // Over HTTP, stdin is not read: closed, as a service manager would leave it.
        drop(server.stdin.take());
        // The folder's warnings (a broken file) may come first.
        let mut seen = Vec::new();
        let url = loop {
            let line = server
                .stderr
                .recv_timeout(server.patience)
                .unwrap_or_else(|_| panic!("no URL on stderr in {seen:?}"));
            // Up to a quote: with `--log-format json` the line is a JSON object.
            let url = line.split_whitespace().find_map(|word| {
                word.starts_with("http://")
                    .then(|| word.split('"').next())?
                    .map(str::to_owned)
            });
            match url {
                Some(url) => break url,
                None => seen.push(line),
            }
        };
        server.url = Some(url);
        server
    }

    /// Starts `command`, a `toolsmith serve` however it is invoked (under a shell's limits,
    /// from a client's entry), with its stdin, stdout and stderr piped to this test.
    pub(crate) fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            stderr,
            url: None,
            patience: PATIENCE,
            next_id: 1,
        }
    }

    /// Waits up to `patience` (instead of [`PATIENCE`]) for each line, answer and exit.
    pub(crate) fn with_patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Writes one line to stdin: a JSON-RPC message (a `Value`, or text as it is).
    pub(crate) fn send(&mut self, message: impl Display) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC message; a server that died or
    /// stopped answering fails the test here.
    pub(crate) fn receive(&self) -> Value {
        self.receive_within(self.patience)
    }

    /// Reads stdout until a message satisfies `wanted`, which it returns.
    pub(crate) fn until(&self, mut wanted: impl FnMut(&Value) -> bool) -> Value {
        let deadline = Instant::now() + self.patience;
        loop {
            let message = self.receive_within(deadline.saturating_duration_since(Instant::now()));
            if wanted(&message) {
                return message;
            }
        }
    }

    fn receive_within(&self, patience: Duration) -> Value {
        let line = self
            .stdout
            .recv_timeout(patience)
            .expect("an answer on stdout: the server died or stopped answering");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("stdout carried `{line}`: {error}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// `initialize`, its answer, then `notifications/initialized`; the `initialize` result.
    pub(crate) fn initialize(&mut self) -> Value {
        self.initialize_with(&json!({}))
    }

    /// [`Self::initialize`] of a client that declares `capabilities` (`{"sampling": {}}`).
    pub(crate) fn initialize_with(&mut self, capabilities: &Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "toolsmith-cli-tests", "version": "1"}}}),
        );
        let answer = self.until(|message| message["id"] == 0);
        assert!(
            answer["result"]["serverInfo"]["name"].is_string(),
            "{answer}"
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer["result"].clone()
    }

    /// Sends a request with a fresh numeric id and returns the id, without waiting.
    pub(crate) fn send_request(&mut self, method: &str, params: &Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its answer; notifications in between are passed over.
    pub(crate) fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.send_request(method, params);
        self.until(|message| message["id"] == id)
    }

    /// The names `tools/list` shows, in its order.
    pub(crate) fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", &json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The result of a `tools/call` (which must not be a JSON-RPC error).
    pub(crate) fn call(&mut self, name: &str, arguments: &Value) -> Value {
        let answer = self.request("tools/call", &json!({"name": name, "arguments": arguments}));
        assert!(answer["result"].is_object(), "{answer}");
        answer["result"].clone()
    }

    /// The text of a `tools/call` result's first content block.
    pub(crate) fn call_text(&mut self, name: &str, arguments: &Value) -> String {
        let result = self.call(name, arguments);
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{result}"))
            .to_owned()
    }

    /// Reads stderr until a line satisfies `wanted`; returns every line read, that one
    /// last. Fails the test, showing what stderr said, if none comes in time.
    pub(crate) fn stderr_until(&self, mut wanted: impl FnMut(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + self.patience;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.stderr.recv_timeout(left) else {
                panic!("the awaited line did not come on stderr: {seen:#?}");
            };
            let found = wanted(&line);
            seen.push(line);
            if found {
                return seen;
            }
        }
    }

    /// Waits for the process to exit by itself; its exit code.
    pub(crate) fn wait(&mut self) -> Option<i32> {
        let started = Instant::now();
        while started.elapsed() < self.patience {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("the server did not exit");
    }

    /// Closes stdin and waits for the exit; the exit code and the stdout lines that came
    /// after the last one read.
    pub(crate) fn finish(mut self) -> (Option<i32>, Vec<String>) {
        drop(self.stdin.take());
        let status = self.wait();
        (status, rest(&self.stdout, self.patience))
    }

    /// Waits for the exit; the exit code and everything stderr said.
    pub(crate) fn exit(mut self) -> (Option<i32>, String) {
        let status = self.wait();
        (status, rest(&self.stderr, self.patience).join("\n"))
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM, as a service manager stops a server, and waits for the exit.
    pub(crate) fn stop(mut self) -> Option<i32> {
        let terminated = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(terminated.success());
        self.wait()
    }

    /// The URL the server printed (`http://127.0.0.1:PORT/mcp`).
    pub(crate) fn url(&self) -> &str {
        self.url.as_deref().expect("a server over HTTP")
    }

    /// The `host:port` the server listens on.
    pub(crate) fn address(&self) -> &str {
        self.url()
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }

    /// A new connection to the server, with a read timeout.
    pub(crate) fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.address()).unwrap();
        stream.set_read_timeout(Some(self.patience)).unwrap();
        stream
    }

    /// Writes `request` as it is on a new connection and reads the whole answer; returns
    /// the status code and the answer.
    pub(crate) fn raw(&self, request: &str) -> (u16, String) {
        let mut stream = self.connect();
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

    /// One stateless 2026-07-28 request over HTTP: `method` on `name` (its `Mcp-Name`) with
    /// `params`, the client declaring `capabilities`, with `token` as a bearer token if
    /// given; the status and the JSON-RPC answer (read from an SSE body too).
    pub(crate) fn post_2026(
        &self,
        token: Option<&str>,
        capabilities: &Value,
        (method, name): (&str, &str),
        params: &Value,
    ) -> (u16, Value) {
        let mut params = params.clone();
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let bearer = token.map(|token| format!("Bearer {token}"));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ];
        if let Some(bearer) = &bearer {
            headers.push(("Authorization", bearer));
        }
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
        let (status, _, text) = self.post(&headers, &body.to_string());
        let json = text
            .lines()
            .find_map(|line| line.strip_prefix("data:"))
            .unwrap_or(&text);
        let answer = serde_json::from_str(json.trim()).unwrap_or_else(|_| panic!("{text}"));
        (status, answer)
    }

    /// One HTTP/1.1 POST of `body` to `/mcp` with `headers`; returns the status code, the
    /// head and the body.
    pub(crate) fn post(&self, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.address(),
            body.len()
        );
        for (name, value) in headers {
            request.extend([*name, ": ", *value, "\r\n"]);
        }
        request.push_str("\r\n");
        request.push_str(body);
        let (status, answer) = self.raw(&request);
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (status, head.to_owned(), body.to_owned())
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of `stream`, read on a thread of their own so the child never blocks on a
/// full pipe.
fn lines_of(stream: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// What is left of `lines` up to the end of the stream, once the process has exited.
fn rest(lines: &mpsc::Receiver<String>, patience: Duration) -> Vec<String> {
    let deadline = Instant::now() + patience;
    let mut rest = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => rest.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => return rest,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("the stream did not end: {rest:?}"),
        }
    }
}

/// The `Mcp-Session-Id` an HTTP response's `head` gives; a head without one fails the test.
pub(crate) fn session_id_of(head: &str) -> String {
    head.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"))
}
