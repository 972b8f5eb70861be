//! rmcp's client (the official Rust SDK) talking to a real `toolsmith serve` process: over
//! the child's stdin and stdout, or over HTTP to the URL a [`ServeProcess`] printed. For
//! tests that check what a client sees (lists, calls, list-changed notifications) rather
//! than the raw bytes `serve.rs` looks at.
//!
//! [`ServeProcess`]: crate::serve_process::ServeProcess

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub(crate) struct Counting {
    /// How many `tools/list_changed` notifications arrived.
    pub(crate) tools_changed: Arc<AtomicUsize>,
}

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
    }
}

/// A connected client, with the runtime that drives it and the server process it started.
pub(crate) struct McpClient {
    runtime: tokio::runtime::Runtime,
    service: Option<RunningService<RoleClient, Counting>>,
    seen: Counting,
    child: Option<tokio::process::Child>,
}

impl McpClient {
    /// Starts `toolsmith serve ARGS` (stdio) and connects to its stdin and stdout.
    pub(crate) fn stdio(args: &[&str]) -> Self {
        let mut command = crate::toolsmith();
        command.arg("serve").args(args);
        Self::spawn(command)
    }

    /// Starts `command`, a `toolsmith serve` over stdio with whatever arguments and
    /// environment the test gave it, and connects to its stdin and stdout.
    pub(crate) fn spawn(command: std::process::Command) -> Self {
        let runtime = runtime();
        let seen = Counting::default();
        let (service, child) = runtime.block_on(async {
            let mut command = tokio::process::Command::from(command);
            command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .kill_on_drop(true);
            let mut child = command.spawn().unwrap();
            let stdout = child.stdout.take().unwrap();
            let stdin = child.stdin.take().unwrap();
            (seen.clone().serve((stdout, stdin)).await.unwrap(), child)
        });
        Self {
            runtime,
            service: Some(service),
            seen,
            child: Some(child),
        }
    }

    /// Connects to the Streamable HTTP endpoint `url` (a server the test started).
    pub(crate) fn http(url: &str) -> Self {
        let runtime = runtime();
        let seen = Counting::default();
        // The transport spawns its worker when made: inside the runtime.
        let service = runtime.block_on(async {
            seen.clone()
                .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
                .await
        });
        Self {
            runtime,
            service: Some(service.unwrap()),
            seen,
            child: None,
        }
    }

    fn service(&self) -> &RunningService<RoleClient, Counting> {
        self.service.as_ref().expect("connected until dropped")
    }

    /// What `initialize` answered: the server's name.
    pub(crate) fn server_name(&self) -> String {
        let info = self.service().peer_info().expect("initialized");
        info.server_info
            .clone()
            .expect("the server says who it is")
            .name
    }

    /// The names `tools/list` gives, in its order (every page).
    pub(crate) fn tool_names(&self) -> Vec<String> {
        let tools = self
            .runtime
            .block_on(self.service().list_all_tools())
            .unwrap();
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    /// The tools `tools/list` gives, in its order (every page).
    pub(crate) fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.runtime
            .block_on(self.service().list_all_tools())
            .unwrap()
    }

    /// The names `prompts/list` gives.
    pub(crate) fn prompt_names(&self) -> Vec<String> {
        let prompts = self
            .runtime
            .block_on(self.service().list_all_prompts())
            .unwrap();
        prompts.into_iter().map(|prompt| prompt.name).collect()
    }

    /// Calls `name` with `arguments` (a JSON object); a protocol error panics.
    pub(crate) fn call(&self, name: &str, arguments: &Value) -> CallToolResult {
        self.try_call(name, arguments).unwrap()
    }

    /// Calls `name` with `arguments` (a JSON object); a protocol error is its message.
    pub(crate) fn try_call(&self, name: &str, arguments: &Value) -> Result<CallToolResult, String> {
        let Value::Object(arguments) = arguments.clone() else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        self.runtime
            .block_on(self.service().call_tool(params))
            .map_err(|error| error.to_string())
    }

    /// The text of [`McpClient::call`]'s content blocks.
    pub(crate) fn call_text(&self, name: &str, arguments: &Value) -> String {
        text(&self.call(name, arguments))
    }

    /// Waits (up to the tests' patience) until `tools/list_changed` has arrived `count`
    /// times in all.
    pub(crate) fn wait_for_tools_changed(&self, count: usize) {
        let deadline = std::time::Instant::now() + crate::serve_process::PATIENCE;
        while self.seen.tools_changed.load(Ordering::SeqCst) < count {
            assert!(
                std::time::Instant::now() < deadline,
                "no tools/list_changed notification"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        if let Some(service) = self.service.take() {
            let _ = self.runtime.block_on(service.cancel());
        }
        if let Some(mut child) = self.child.take() {
            let _ = self.runtime.block_on(child.kill());
        }
    }
}

/// The text of a result's content blocks, one per line.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
