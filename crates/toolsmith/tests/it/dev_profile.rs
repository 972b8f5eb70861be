//! `toolsmith serve --profile toolsmith-dev`: rmcp's client talks to the
//! real binary, over its stdio pipes and over HTTP, writes a tool through the dev tools and
//! calls it, checks it, and is refused writes that leave the folder.

use std::path::Path;

use serde_json::json;

use crate::folder;
use crate::mcp_client::{McpClient, text};
use crate::serve_process::ServeProcess;

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

/// What the issue asks of the profile, over whichever transport `client` uses.
fn writes_checks_and_calls_a_new_tool(client: &McpClient, dir: &Path) {
    let names = client.tool_names();
    for tool in DEV_TOOLS.iter().chain(&["hello"]) {
        assert!(names.iter().any(|name| name == tool), "{tool} in {names:?}");
    }

    let written = client.call(
        "toolsmith_write_file",
        &json!({"path": "text/shout.star", "content": SHOUT}),
    );
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
    client.wait_for_tools_changed(1);
    assert!(client.tool_names().iter().any(|name| name == "shout"));
    let shouted = client.call("shout", &json!({"text": "hi"}));
    assert_eq!(text(&shouted), "HI");

    // `check` on the new tool: its findings as structured content, as `toolsmith check
    // --format json` prints them.
    let checked = client.call("toolsmith_check", &json!({"tool": "shout"}));
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
fn writes_outside_the_folder_are_refused(client: &McpClient, dir: &Path, outside: &Path) {
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
        let result = client.call(
            "toolsmith_write_file",
            &json!({"path": path, "content": "x = 1\n"}),
        );
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

/// `toolsmith serve DIR --profile toolsmith-dev` over its stdio pipes, connected.
fn stdio(dir: &Path) -> McpClient {
    McpClient::stdio(&[dir.to_str().unwrap(), "--profile", "toolsmith-dev"])
}

#[test]
fn the_dev_profile_writes_checks_and_calls_a_tool_over_stdio() {
    let (_base, dir, outside) = folders();
    let client = stdio(&dir);
    writes_checks_and_calls_a_new_tool(&client, &dir);
    writes_outside_the_folder_are_refused(&client, &dir, &outside);
}

#[test]
fn the_dev_profile_writes_checks_and_calls_a_tool_over_http() {
    let (_base, dir, outside) = folders();
    let server = ServeProcess::http(&[dir.to_str().unwrap(), "--profile", "toolsmith-dev"], None);
    let client = McpClient::http(server.url());
    writes_checks_and_calls_a_new_tool(&client, &dir);
    writes_outside_the_folder_are_refused(&client, &dir, &outside);
}

#[test]
fn the_dev_tools_scaffold_test_call_read_and_list() {
    let (_base, dir, _outside) = folders();
    let client = stdio(&dir);

    let created = client.call("toolsmith_new_tool", &json!({"name": "text_echo"}));
    assert_ne!(created.is_error, Some(true), "{}", text(&created));
    assert_eq!(
        created.structured_content.unwrap()["files"],
        json!(["text_echo.star"])
    );
    let tested = client.call("toolsmith_test", &json!({"tool": "text_echo"}));
    let report = tested.structured_content.clone().unwrap();
    assert_eq!(report["passed"], true, "{}", text(&tested));
    assert_eq!(report["totals"]["passed"], 1);
    assert!(text(&tested).contains("PASS text_echo: example 1"));

    let called = client.call(
        "toolsmith_call",
        &json!({"name": "text_echo", "arguments": {"text": "a", "times": 2}}),
    );
    let result = &called.structured_content.unwrap()["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "a a");

    let read = client.call("toolsmith_read_file", &json!({"path": "text_echo.star"}));
    assert_eq!(
        read.structured_content.unwrap()["content"],
        std::fs::read_to_string(dir.join("text_echo.star")).unwrap()
    );
    let refused = client.call("toolsmith_read_file", &json!({"path": "../outside/.keep"}));
    assert_eq!(refused.is_error, Some(true));

    // A file that does not load: the write says so, and so does the list.
    let broken = client.call(
        "toolsmith_write_file",
        &json!({"path": "broken.star", "content": "def broken(:\n"}),
    );
    let answer = broken.structured_content.clone().unwrap();
    assert_eq!(answer["tools"], json!([]));
    assert_eq!(answer["diagnostics"][0]["severity"], "error", "{answer:#}");
    assert_eq!(answer["diagnostics"][0]["path"], "broken.star");
    assert!(text(&broken).contains("it does not load"));

    let listed = client.call("toolsmith_list_tools", &json!({}));
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
}
