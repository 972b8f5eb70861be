//! Protocol tests over real transports: rmcp's client talks to the server over in-memory
//! stdio streams and over a TCP socket; raw requests go through the HTTP router in-process.
//! (Tests that spawn the `toolsmith serve` binary live in the CLI crate.)

#![expect(
    deprecated,
    reason = "rmcp 3.11 marks sampling and logging deprecated (SEP-2577); they still work"
)]
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail loudly on a broken fixture"
)]

mod calls;
mod content;
mod discovery;
mod http;
mod init;
mod policy;
mod roots;
mod session_calls;
mod stdio;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, SamplingMessage,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolsmith_folder::ToolFolder;
use toolsmith_server::{ServerOptions, ServerState};

/// The bundled example tools.
pub(crate) fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tools")
}

/// A temporary tools folder with the given files.
pub(crate) fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// Tools for call behaviour: one that spins until stopped, a fast one, one that reports
/// progress and logs, one that asks the client's model.
pub(crate) const BEHAVIOUR: &str = r#"
def spin() -> str:
    """Loops until the call is stopped."""
    total = 0
    for i in range(10000000):
        for j in range(10000000):
            total += 1
    return str(total)

mcp.tool(spin, timeout = "30s")

def spin_briefly() -> str:
    """Loops until its short timeout."""
    return spin()

mcp.tool(spin_briefly, timeout = "1s")

def echo(text: str) -> str:
    """Returns its text."""
    return text

mcp.tool(echo)

def chatty(steps: int) -> str:
    """Reports progress and logs each step."""
    for i in range(steps):
        mcp.progress(i + 1, total = steps, message = "step")
        mcp.log("info", "step " + str(i + 1))
    mcp.log("debug", "not sent unless asked for")
    return "done"

mcp.tool(chatty)

def ask(prompt: str) -> str:
    """Asks the client's model."""
    return mcp.sample(prompt)

mcp.tool(ask)
"#;

/// A server state for a folder's tools, with `calls` concurrent calls allowed.
pub(crate) fn state_for(dir: &Path, calls: usize) -> ServerState {
    let folder = ToolFolder::load(dir).unwrap();
    assert!(!folder.has_errors(), "{:?}", folder.catalog().diagnostics());
    ServerState::new(Arc::clone(folder.catalog()), options_for(&folder, calls))
}

/// Server options presenting `folder` by its `[server]` name and instructions, as `toolsmith
/// serve` does (the CLI crate maps the whole table), with `calls` concurrent calls allowed.
pub(crate) fn options_for(folder: &ToolFolder, calls: usize) -> ServerOptions {
    let config = folder.config();
    let mut options = ServerOptions::new(folder.root().to_owned());
    options.max_concurrent_calls = calls;
    options.name = config.name.clone().unwrap_or(options.name);
    options.instructions.clone_from(&config.instructions);
    options
}

/// What a test client saw besides responses.
#[derive(Default, Clone)]
pub(crate) struct Seen {
    pub(crate) tools_changed: Arc<AtomicUsize>,
    pub(crate) prompts_changed: Arc<AtomicUsize>,
    pub(crate) resources_changed: Arc<AtomicUsize>,
    /// URIs of `notifications/resources/updated`, in order.
    pub(crate) updated: Arc<std::sync::Mutex<Vec<String>>>,
}

/// A client that answers sampling with `pong: <prompt>` and counts `tools/list_changed`.
#[derive(Clone, Default)]
pub(crate) struct TestClient {
    pub(crate) seen: Seen,
    /// Root URIs to offer (`roots/list`); the roots capability is declared only with some.
    pub(crate) roots: Option<Vec<String>>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.roots.is_some() {
            json!({"sampling": {}, "roots": {"listChanged": true}})
        } else {
            json!({"sampling": {}})
        };
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "toolsmith-tests", "version": "1"},
        }))
        .unwrap()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        let roots: Vec<Value> = self
            .roots
            .iter()
            .flatten()
            .map(|uri| json!({"uri": uri}))
            .collect();
        Ok(serde_json::from_value(json!({ "roots": roots })).unwrap())
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let prompt = serde_json::to_value(&params.messages[0]).unwrap()["content"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(format!("pong: {prompt}")),
            "test-model".into(),
        ))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.tools_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.prompts_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.seen.resources_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.updated.lock().unwrap().push(params.uri);
    }
}

pub(crate) type Client = RunningService<RoleClient, TestClient>;

/// Serves `state` over in-memory stdio streams and connects a client (initialize handshake).
pub(crate) async fn stdio_client(state: ServerState) -> Client {
    connect(state, TestClient::default()).await
}

/// [`stdio_client`] for a client that offers `roots`.
pub(crate) async fn stdio_client_with_roots(state: ServerState, roots: Vec<String>) -> Client {
    let client = TestClient {
        roots: Some(roots),
        ..TestClient::default()
    };
    connect(state, client).await
}

async fn connect(state: ServerState, client: TestClient) -> Client {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(toolsmith_server::serve_stream(
        state,
        read,
        write,
        CancellationToken::new(),
    ));
    client.serve(client_end).await.unwrap()
}

/// `tools/call` with JSON arguments.
pub(crate) fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The text of a result's content blocks.
pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
