//! `toolsmith serve --watch`: the binary over stdio, its folder edited under it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{folder, toolsmith};

const PATIENCE: Duration = Duration::from_secs(30);

const ONE_TOOL: &str = r#"
def first(text: str) -> str:
    """Returns its text."""
    return text

mcp.tool(first)
"#;

const TWO_TOOLS: &str = r#"
def first(text: str) -> str:
    """Returns its text."""
    return text

mcp.tool(first)

def second(text: str) -> str:
    """Returns its text, twice."""
    return text + text

mcp.tool(second)
"#;

const BROKEN: &str = "def first(text: str) -> str:\n    return (\n";

struct Watched {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    stderr: mpsc::Receiver<String>,
    next_id: u64,
}

impl Watched {
    fn start(dir: &str) -> Self {
        Self::start_with_env(dir, &[])
    }

    fn start_with_env(dir: &str, env: &[(&str, &str)]) -> Self {
        let mut child = toolsmith()
            .args(["serve", dir, "--watch"])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        let mut server = Self {
            child,
            stdin,
            lines,
            stderr,
            next_id: 1,
        };
        server.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"watch-test","version":"1"}}}"#);
        server.until(|message| message["id"] == 0);
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    fn send(&mut self, message: &str) {
        self.stdin.write_all(message.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads stdout until a message satisfies `wanted`, which it returns.
    fn until(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .expect("the awaited message on stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if wanted(&message) {
                return message;
            }
        }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
        ));
        let listed = self.until(|message| message["id"] == id);
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }

    fn list_changed(&self) {
        self.until(|message| message["method"] == "notifications/tools/list_changed");
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
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

#[test]
fn watch_publishes_new_tools_and_keeps_those_of_a_broken_file() {
    let dir = folder(&[("tools.star", ONE_TOOL)]);
    let file = dir.path().join("tools.star");
    let mut server = Watched::start(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(&file, TWO_TOOLS).unwrap();
    server.list_changed();
    assert_eq!(server.tool_names(), ["first", "second"]);

    // The broken file keeps its old tools; the tool list does not change, so no
    // `tools/list_changed` comes (issue 14, item 20). The load error reaches stderr with
    // the file and its line.
    std::fs::write(&file, BROKEN).unwrap();
    let deadline = Instant::now() + PATIENCE;
    let mut stderr = Vec::new();
    let reported = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = server.stderr.recv_timeout(left) else {
            break false;
        };
        let found = line.contains("tools.star:") && line.contains("error");
        stderr.push(line);
        if found {
            break true;
        }
    };
    assert!(
        reported,
        "no diagnostic with file:line on stderr: {stderr:#?}"
    );
    assert_eq!(server.tool_names(), ["first", "second"]);
}

#[test]
fn an_edited_search_mode_applies_on_reload() {
    let dir = folder(&[("tools.star", TWO_TOOLS)]);
    let mut server = Watched::start(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first", "second"]);

    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[search]\nmode = \"always\"\n",
    )
    .unwrap();
    server.list_changed();
    assert_eq!(server.tool_names(), ["execute_tool", "tool_search"]);
}

#[test]
fn a_tool_kept_from_a_broken_file_is_listed_as_its_file_said() {
    // Everything is behind search at first; then, in one edit, the budget leaves room for
    // every tool and the file of `second` breaks. `second` is kept, and listed: it was
    // behind search only because of the old settings, not because its file asked.
    let search = |mode: &str| format!("[search]\nmode = \"{mode}\"\n");
    let dir = folder(&[
        ("toolsmith.toml", &search("always")),
        ("one.star", ONE_TOOL),
        ("two.star", &TWO_TOOLS.replace("first", "second_first")),
    ]);
    let mut server = Watched::start(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["execute_tool", "tool_search"]);

    std::fs::write(dir.path().join("two.star"), BROKEN).unwrap();
    std::fs::write(dir.path().join("toolsmith.toml"), search("auto")).unwrap();
    server.list_changed();
    assert_eq!(
        server.tool_names(),
        ["first", "second", "second_first"],
        "the tools kept from two.star keep their own `discoverable`"
    );
}

/// A top level that runs until its load timeout, and says when it starts.
const SLOW_TOP_LEVEL: &str = r#"
print("evaluating slow.star")
for i in range(10000000):
    for j in range(10000000):
        pass
"#;

#[test]
fn a_slow_top_level_holds_up_neither_start_nor_reloads() {
    // Regression test for issue 14, item 6: a file whose top level loops made `initialize`
    // wait the whole call timeout (30 s), and every reload evaluated it again.
    let dir = folder(&[
        ("toolsmith.toml", "[defaults]\nload_timeout = \"300ms\"\n"),
        ("slow.star", SLOW_TOP_LEVEL),
        ("tools.star", ONE_TOOL),
    ]);
    let mut server = Watched::start_with_env(
        dir.path().to_str().unwrap(),
        &[("TOOLSMITH_LOG", "toolsmith_starlark::print=info")],
    );
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(dir.path().join("tools.star"), TWO_TOOLS).unwrap();
    server.list_changed();
    assert_eq!(server.tool_names(), ["first", "second"]);

    // Everything the reload printed precedes its summary line on stderr.
    let deadline = Instant::now() + PATIENCE;
    let mut stderr = Vec::new();
    while !stderr
        .iter()
        .any(|line: &String| line.contains("watch: reloaded"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        stderr.push(
            server
                .stderr
                .recv_timeout(left)
                .expect("the reload's summary"),
        );
    }
    assert!(
        stderr
            .iter()
            .any(|line| line.contains("slow.star") && line.contains("load-timeout")),
        "the slow file is reported: {stderr:#?}"
    );
    let evaluations = stderr
        .iter()
        .filter(|line| line.contains("evaluating slow.star"))
        .count();
    assert_eq!(
        evaluations, 1,
        "the unchanged slow file ran again: {stderr:#?}"
    );
}

impl Watched {
    /// Waits for the next reload's summary line on stderr.
    fn reloaded(&self) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.stderr.recv_timeout(left).expect("a reload on stderr");
            if line.contains("watch: reloaded") {
                return;
            }
        }
    }

    /// The notifications that arrive up to the next `tools/list_changed`, that one included.
    fn notifications_until_tools_changed(&self) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut methods = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("tools/list_changed");
            let message: Value = serde_json::from_str(&line).unwrap();
            if let Some(method) = message["method"].as_str() {
                methods.push(method.to_owned());
                if method == "notifications/tools/list_changed" {
                    return methods;
                }
            }
        }
    }
}

#[test]
fn a_reload_announces_only_the_lists_that_changed() {
    // Regression test for issue 14, item 20: every reload sent `tools/list_changed`, even
    // when a broken file's old tools were kept or only a resource changed.
    let dir = folder(&[("tools.star", ONE_TOOL)]);
    let mut server = Watched::start(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(dir.path().join("tools.star"), BROKEN).unwrap();
    server.reloaded();
    std::fs::create_dir(dir.path().join("resources")).unwrap();
    std::fs::write(dir.path().join("resources/note.txt"), "a note").unwrap();
    server.reloaded();
    std::fs::write(dir.path().join("tools.star"), TWO_TOOLS).unwrap();
    assert_eq!(
        server.notifications_until_tools_changed(),
        [
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    assert_eq!(server.tool_names(), ["first", "second"]);
}
