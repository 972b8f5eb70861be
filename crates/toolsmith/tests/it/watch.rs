//! `toolsmith serve --watch`: the binary over stdio, its folder edited under it.

use crate::serve_process::ServeProcess;
use crate::{folder, toolsmith};

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

/// `toolsmith serve DIR --watch` over stdio, initialized.
fn watched(dir: &str) -> ServeProcess {
    let mut server = ServeProcess::stdio(&[dir, "--watch"]);
    server.initialize();
    server
}

/// Waits for `notifications/tools/list_changed`.
fn list_changed(server: &ServeProcess) {
    server.until(|message| message["method"] == "notifications/tools/list_changed");
}

/// Waits for the next reload's summary line on stderr.
fn reloaded(server: &ServeProcess) {
    server.stderr_until(|line| line.contains("watch: reloaded"));
}

#[test]
fn watch_publishes_new_tools_and_keeps_those_of_a_broken_file() {
    let dir = folder(&[("tools.star", ONE_TOOL)]);
    let file = dir.path().join("tools.star");
    let mut server = watched(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(&file, TWO_TOOLS).unwrap();
    list_changed(&server);
    assert_eq!(server.tool_names(), ["first", "second"]);

    // The broken file keeps its old tools; the tool list does not change, so no
    // `tools/list_changed` comes. The load error reaches stderr with
    // the file and its line.
    std::fs::write(&file, BROKEN).unwrap();
    server.stderr_until(|line| line.contains("tools.star:") && line.contains("error"));
    assert_eq!(server.tool_names(), ["first", "second"]);
}

#[test]
fn an_edited_search_mode_applies_on_reload() {
    let dir = folder(&[("tools.star", TWO_TOOLS)]);
    let mut server = watched(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first", "second"]);

    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[search]\nmode = \"always\"\n",
    )
    .unwrap();
    list_changed(&server);
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
    let mut server = watched(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["execute_tool", "tool_search"]);

    std::fs::write(dir.path().join("two.star"), BROKEN).unwrap();
    std::fs::write(dir.path().join("toolsmith.toml"), search("auto")).unwrap();
    list_changed(&server);
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
    // Regression test: a file whose top level loops made `initialize`
    // wait the whole call timeout (30 s), and every reload evaluated it again.
    let dir = folder(&[
        ("toolsmith.toml", "[defaults]\nload_timeout = \"300ms\"\n"),
        ("slow.star", SLOW_TOP_LEVEL),
        ("tools.star", ONE_TOOL),
    ]);
    let mut command = toolsmith();
    command
        .args(["serve", dir.path().to_str().unwrap(), "--watch"])
        .env("TOOLSMITH_LOG", "toolsmith_starlark::print=info");
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(dir.path().join("tools.star"), TWO_TOOLS).unwrap();
    // On a loaded machine a reload may catch the write half done (the file emptied, not yet
    // written); the write's own event reloads again.
    let mut names = Vec::new();
    for _ in 0..3 {
        list_changed(&server);
        names = server.tool_names();
        if names == ["first", "second"] {
            break;
        }
    }
    assert_eq!(names, ["first", "second"]);

    // Everything the reload printed precedes its summary line on stderr.
    let stderr = server.stderr_until(|line| line.contains("watch: reloaded"));
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

/// The notifications that arrive up to the next `tools/list_changed`, that one included.
fn notifications_until_tools_changed(server: &ServeProcess) -> Vec<String> {
    let mut methods = Vec::new();
    server.until(|message| {
        let Some(method) = message["method"].as_str() else {
            return false;
        };
        methods.push(method.to_owned());
        method == "notifications/tools/list_changed"
    });
    methods
}

#[test]
fn a_reload_announces_only_the_lists_that_changed() {
    // Regression test: every reload sent `tools/list_changed`, even
    // when a broken file's old tools were kept or only a resource changed.
    let dir = folder(&[("tools.star", ONE_TOOL)]);
    let mut server = watched(dir.path().to_str().unwrap());
    assert_eq!(server.tool_names(), ["first"]);

    std::fs::write(dir.path().join("tools.star"), BROKEN).unwrap();
    reloaded(&server);
    std::fs::create_dir(dir.path().join("resources")).unwrap();
    std::fs::write(dir.path().join("resources/note.txt"), "a note").unwrap();
    reloaded(&server);
    std::fs::write(dir.path().join("tools.star"), TWO_TOOLS).unwrap();
    assert_eq!(
        notifications_until_tools_changed(&server),
        [
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );
    assert_eq!(server.tool_names(), ["first", "second"]);
}
