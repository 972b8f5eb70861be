//! Upstream MCP servers (issue 17, items 1, 3 and 5): an outer folder whose
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

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// An inner folder and an outer one whose `toolsmith.toml` ends with `upstream`.
    fn new(upstream: &str) -> Self {
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
    fn stdio() -> Self {
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

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn outer(&self) -> String {
        self.path("outer").display().to_string()
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
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
    // Issue 17, item 3: the rest of the server keeps serving.
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
    // Issue 17, item 3: a call in flight when its upstream dies gets an isError, never a
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

fn wait_for_pids(path: &Path) -> Vec<u32> {
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
