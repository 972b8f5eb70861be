//! `toolsmith serve --profile toolsmith-dev` (issue 16, item 5): rmcp's client talks to the
//! real binary, over its stdio pipes and over HTTP, writes a tool through the dev tools and
//! calls it, checks it, and is refused writes that leave the folder.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::net::unix::pipe;
use tokio::sync::Notify;

use crate::serve_process::{PATIENCE, ServeProcess};
use crate::{folder, toolsmith};

/// The dev tools, as `tools/list` names them.
const DEV_TOOLS: [&str; 7] = [
    "toolsmith_call",
    "toolsmith_check",
    "toolsmith_list_tools",
    "toolsmith_new_tool",
    "toolsmith_read_file",
    "toolsmith_test",
    "toolsmith_write_file",
];

/// A tool the folder has from the start.
const HELLO: &str = r#"
def hello(name: str) -> str:
    """Greets someone.

    Args:
        name: Who to greet.
    """
    return "Hello, " + name + "!"

mcp.tool(hello)
"#;

/// The tool the client writes: it works, and its undescribed parameter is a finding.
const SHOUT: &str = r#"
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()

mcp.tool(shout)
"#;

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Client {
    tools_changed: Arc<AtomicUsize>,
    changed: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
    }
}

type Session = RunningService<RoleClient, Client>;

/// `toolsmith serve` as a child process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `toolsmith serve DIR --profile toolsmith-dev` over its stdio pipes, connected.
async fn stdio(dir: &Path, client: Client) -> (Server, Session) {
    let mut child = toolsmith()
        .args(["serve", dir.to_str().unwrap(), "--profile", "toolsmith-dev"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let output =
        pipe::Receiver::from_owned_fd(OwnedFd::from(child.stdout.take().unwrap())).unwrap();
    let input = pipe::Sender::from_owned_fd(OwnedFd::from(child.stdin.take().unwrap())).unwrap();
    let session = client.serve((output, input)).await.unwrap();
    (Server(child), session)
}

/// The same over HTTP.
async fn http(dir: &Path, client: Client) -> (ServeProcess, Session) {
    let server = ServeProcess::http(&[dir.to_str().unwrap(), "--profile", "toolsmith-dev"], None);
    let transport = StreamableHttpClientTransport::from_uri(server.url().to_owned());
    let session = client.serve(transport).await.unwrap();
    (server, session)
}

async fn call(session: &Session, name: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    session
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn tool_names(session: &Session) -> Vec<String> {
    let tools = session.list_all_tools().await.unwrap();
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

/// What the issue asks of the profile, over whichever transport `session` uses.
async fn writes_checks_and_calls_a_new_tool(session: &Session, client: &Client, dir: &Path) {
    let names = tool_names(session).await;
    for tool in DEV_TOOLS.iter().chain(&["hello"]) {
        assert!(names.iter().any(|name| name == tool), "{tool} in {names:?}");
    }

    let written = call(
        session,
        "toolsmith_write_file",
        json!({"path": "text/shout.star", "content": SHOUT}),
    )
    .await;
    assert_ne!(written.is_error, Some(true), "{}", text(&written));
    let structured = written.structured_content.clone().unwrap();
    assert_eq!(structured["path"], "text/shout.star");
    assert_eq!(structured["created"], true);
    assert_eq!(structured["tools"], json!(["shout"]));
    assert_eq!(
        std::fs::read_to_string(dir.join("text/shout.star")).unwrap(),
        SHOUT
    );

    // The write was answered after the reload was published: the list changed, and the new
    // tool is listed and callable.
    tokio::time::timeout(PATIENCE, client.changed.notified())
        .await
        .expect("notifications/tools/list_changed");
    assert!(tool_names(session).await.iter().any(|name| name == "shout"));
    let shouted = call(session, "shout", json!({"text": "hi"})).await;
    assert_eq!(text(&shouted), "HI");

    // `check` on the new tool: its findings as structured content, as `toolsmith check
    // --format json` prints them.
    let checked = call(session, "toolsmith_check", json!({"tool": "shout"})).await;
    assert_ne!(checked.is_error, Some(true), "{}", text(&checked));
    let report = checked.structured_content.clone().unwrap();
    let findings = report["findings"].as_array().unwrap();
    let undocumented = findings
        .iter()
        .find(|finding| finding["rule"] == "undocumented-parameter")
        .unwrap_or_else(|| panic!("no undocumented-parameter finding in {report:#}"));
    assert_eq!(undocumented["severity"], "warning");
    assert_eq!(undocumented["path"], "text/shout.star");
    assert_eq!(undocumented["line"], 2);
    assert!(undocumented["message"].as_str().unwrap().contains("`text`"));
    assert!(undocumented["help"].is_string());
    assert!(
        findings
            .iter()
            .all(|finding| finding["path"] == "text/shout.star"),
        "only the tool's findings: {report:#}"
    );
    assert!(text(&checked).contains("undocumented-parameter"));
}

/// Writes that leave the folder are refused, and write nothing.
async fn writes_outside_the_folder_are_refused(session: &Session, dir: &Path, outside: &Path) {
    let secret = outside.join("secret.star");
    std::fs::write(&secret, "kept").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("link.star")).unwrap();
    std::os::unix::fs::symlink(outside, dir.join("out")).unwrap();
    let absolute = outside.join("absolute.star");
    let refused = [
        ("../x.star", "leaves the tools folder"),
        (absolute.to_str().unwrap(), "is an absolute path"),
        ("link.star", "a link leads to"),
        ("out/x.star", "a link leads to"),
    ];
    for (path, why) in refused {
        let result = call(
            session,
            "toolsmith_write_file",
            json!({"path": path, "content": "x = 1\n"}),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{path}: {}", text(&result));
        assert!(text(&result).contains(why), "{path}: {}", text(&result));
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "kept");
    assert!(!absolute.exists());
    assert!(!outside.join("x.star").exists());
    assert!(!dir.parent().unwrap().join("x.star").exists());
}

/// A tools folder and, beside it, a folder it must not reach.
fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let base = folder(&[("tools/hello.star", HELLO), ("outside/.keep", "")]);
    let dir = base.path().join("tools");
    let outside = base.path().join("outside");
    (base, dir, outside)
}

#[tokio::test]
async fn the_dev_profile_writes_checks_and_calls_a_tool_over_stdio() {
    let (_base, dir, outside) = folders();
    let client = Client::default();
    let (_server, session) = stdio(&dir, client.clone()).await;
    writes_checks_and_calls_a_new_tool(&session, &client, &dir).await;
    writes_outside_the_folder_are_refused(&session, &dir, &outside).await;
    session.cancel().await.unwrap();
}

#[tokio::test]
async fn the_dev_profile_writes_checks_and_calls_a_tool_over_http() {
    let (_base, dir, outside) = folders();
    let client = Client::default();
    let (_server, session) = http(&dir, client.clone()).await;
    writes_checks_and_calls_a_new_tool(&session, &client, &dir).await;
    writes_outside_the_folder_are_refused(&session, &dir, &outside).await;
    session.cancel().await.unwrap();
}

#[tokio::test]
async fn the_dev_tools_scaffold_test_call_read_and_list() {
    let (_base, dir, _outside) = folders();
    let client = Client::default();
    let (_server, session) = stdio(&dir, client.clone()).await;

    let created = call(&session, "toolsmith_new_tool", json!({"name": "text_echo"})).await;
    assert_ne!(created.is_error, Some(true), "{}", text(&created));
    assert_eq!(
        created.structured_content.unwrap()["files"],
        json!(["text_echo.star"])
    );
    let tested = call(&session, "toolsmith_test", json!({"tool": "text_echo"})).await;
    let report = tested.structured_content.clone().unwrap();
    assert_eq!(report["passed"], true, "{}", text(&tested));
    assert_eq!(report["totals"]["passed"], 1);
    assert!(text(&tested).contains("PASS text_echo: example 1"));

    let called = call(
        &session,
        "toolsmith_call",
        json!({"name": "text_echo", "arguments": {"text": "a", "times": 2}}),
    )
    .await;
    let result = &called.structured_content.unwrap()["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "a a");

    let read = call(
        &session,
        "toolsmith_read_file",
        json!({"path": "text_echo.star"}),
    )
    .await;
    assert_eq!(
        read.structured_content.unwrap()["content"],
        std::fs::read_to_string(dir.join("text_echo.star")).unwrap()
    );
    let refused = call(
        &session,
        "toolsmith_read_file",
        json!({"path": "../outside/.keep"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));

    // A file that does not load: the write says so, and so does the list.
    let broken = call(
        &session,
        "toolsmith_write_file",
        json!({"path": "broken.star", "content": "def broken(:\n"}),
    )
    .await;
    let answer = broken.structured_content.clone().unwrap();
    assert_eq!(answer["tools"], json!([]));
    assert_eq!(answer["diagnostics"][0]["severity"], "error", "{answer:#}");
    assert_eq!(answer["diagnostics"][0]["path"], "broken.star");
    assert!(text(&broken).contains("it does not load"));

    let listed = call(&session, "toolsmith_list_tools", json!({})).await;
    let listed = listed.structured_content.unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hello", "text_echo"]);
    assert_eq!(listed["errors"][0]["path"], "broken.star");
    assert_eq!(
        listed["files"],
        json!(["broken.star", "hello.star", "text_echo.star"])
    );
    session.cancel().await.unwrap();
}

#[test]
fn an_unknown_profile_is_refused() {
    let dir = folder(&[("hello.star", HELLO)]);
    crate::snapshot!(
        dir.path(),
        toolsmith().args(["serve", dir.path().to_str().unwrap(), "--profile", "nope"])
    );
}
