//! Code mode: the `run_code` evaluator over real stdio and HTTP with rmcp's
//! client, its inner tool calls going through the normal call path, and its sessions
//! surviving a restart and being pruned.

use std::path::Path;
use std::time::{Duration, SystemTime};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::mcp_client::{McpClient, text};
use crate::serve_process::ServeProcess;

/// Tools a program can combine: paged records, a lookup that fails for some ids, a tool that
/// never finishes within its own timeout, and one that may write only under `out/`.
const RECORDS: &str = r#"
def list_records(page: int = 1) -> dict:
    """List the shop's orders, ten a page.

    Args:
        page: Which page, from 1.
    """
    start = (page - 1) * 10
    records = [{"id": i, "region": ["north", "south", "east"][i % 3], "amount": i * 5} for i in range(start, min(start + 10, 30))]
    return {"records": records, "next": page + 1 if start + 10 < 30 else None}

mcp.tool(list_records, read_only = True)

def get_customer(id: int) -> dict:
    """Look up one customer by id; ids over 100 do not exist.

    Args:
        id: The customer's id.
    """
    if id > 100:
        return mcp.error("no customer " + str(id))
    return {"id": id, "name": "customer " + str(id)}

mcp.tool(get_customer, read_only = True)

def region_names() -> list[str]:
    """The shop's sales regions."""
    return ["north", "south", "east"]

mcp.tool(region_names, read_only = True)

def spin() -> str:
    """Loops until stopped."""
    n = 0
    for _ in range(10000000):
        n += 1
    return str(n)

mcp.tool(spin, timeout = "200ms")

def save_report(path: str, text: str) -> str:
    """Writes a report file.

    Args:
        path: Where, under out/.
        text: What to write.
    """
    mcp.write_file(path, text)
    return "saved " + path

mcp.tool(save_report, permissions = {"fs.write": ["out/"]})
"#;

/// A folder with the record tools and `[evaluator]` on.
fn records_folder(toml: &str) -> tempfile::TempDir {
    crate::folder(&[
        ("records.star", RECORDS),
        ("toolsmith.toml", toml),
        ("out/.keep", ""),
    ])
}

/// `serve DIR` over stdio, with sessions saved under `data`.
fn serve(dir: &Path, data: &Path, extra: &[&str]) -> McpClient {
    McpClient::spawn(serve_command(dir, data, extra))
}

fn serve_command(dir: &Path, data: &Path, extra: &[&str]) -> std::process::Command {
    let mut command = crate::toolsmith();
    command
        .arg("serve")
        .arg(dir)
        .args(extra)
        .env("XDG_DATA_HOME", data);
    command
}

fn run(client: &McpClient, arguments: &Value) -> CallToolResult {
    client.call("run_code", arguments)
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or(Value::Null)
}

/// The files of session `id` saved under `data`, by any folder's server.
fn session_files(data: &Path, id: &str) -> Vec<std::path::PathBuf> {
    let suffix = format!("shared--{id}.json");
    std::fs::read_dir(data.join("toolsmith/sessions"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.to_string_lossy().ends_with(&suffix))
                .collect()
        })
        .unwrap_or_default()
}

const AGGREGATE: &str = r#"
totals = {}
page = 1
for _ in range(10):
    listed = tools.list_records(page = page)
    for record in listed["records"]:
        totals[record["region"]] = totals.get(record["region"], 0) + record["amount"]
    if listed["next"] == None:
        break
    page = listed["next"]
names = tools.region_names()["result"]
first = tools.get_customer(id = 1)["name"]
print("pages read:", page)
{"totals": {name: totals[name] for name in names}, "first": first}
"#;

#[test]
fn a_program_calls_three_tools_and_aggregates_over_stdio() {
    // docs/code-mode.md, "The program" and "What comes back".
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    let names = client.tool_names();
    assert!(names.contains(&"run_code".to_owned()), "{names:?}");
    assert!(names.contains(&"list_records".to_owned()), "{names:?}");
    let result = run(&client, &json!({"code": AGGREGATE}));
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        structured(&result),
        json!({"totals": {"north": 675, "south": 725, "east": 775}, "first": "customer 1"})
    );
    let shown = text(&result);
    assert!(shown.contains("printed:\npages read: 3"), "{shown}");
    assert!(
        shown.ends_with(
            "session: none (nothing is kept; pass `session` to keep globals and functions)"
        ),
        "{shown}"
    );
}

#[test]
fn a_program_runs_over_http_with_the_tools_only_mode() {
    // `mode = "only"` lists run_code and tool_search; every tool is
    // still a function.
    let dir = records_folder("[evaluator]\nmode = \"only\"\n");
    let data = tempfile::tempdir().unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let mut command = ServeProcess::http_command(&[dir_arg], None);
    command.env("XDG_DATA_HOME", data.path());
    let server = ServeProcess::spawn_http(command);
    let client = McpClient::http(server.url());
    let mut names = client.tool_names();
    names.sort();
    assert_eq!(names, ["run_code", "tool_search"]);
    let result = run(&client, &json!({"code": AGGREGATE}));
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(structured(&result)["totals"]["east"], 775);
}

#[test]
fn the_description_lists_the_tools_as_signatures() {
    // docs/code-mode.md, "Turning it on".
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    let tool = client
        .tools()
        .into_iter()
        .find(|tool| tool.name == "run_code")
        .unwrap();
    let description = tool.description.as_deref().unwrap_or_default();
    assert!(
        description
            .contains("tools.list_records(page: int = 1)  # List the shop's orders, ten a page."),
        "{description}"
    );
    assert!(
        description.contains("tools.get_customer(id: int)"),
        "{description}"
    );
}

#[test]
fn an_inner_error_is_handled_or_fails_with_the_line() {
    // docs/code-mode.md, "What comes back".
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    let handled = run(
        &client,
        &json!({"code": "r = tools.call_result(\"get_customer\", id = 500)\n{\"ok\": r[\"ok\"], \"error\": r[\"error\"]}"}),
    );
    assert_eq!(
        structured(&handled),
        json!({"ok": false, "error": "no customer 500"}),
        "{}",
        text(&handled)
    );
    let failed = run(
        &client,
        &json!({"code": "a = 1\nb = tools.get_customer(id = 500)\n"}),
    );
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(
        message.contains("<code>:2:5: tool `get_customer` failed: no customer 500"),
        "{message}"
    );
    assert!(
        message.contains(" 2 | b = tools.get_customer(id = 500)\n   |     ^"),
        "{message}"
    );
    let syntax = run(&client, &json!({"code": "x = (1,\n"}));
    assert_eq!(syntax.is_error, Some(true));
    assert!(text(&syntax).starts_with("<code>:"), "{}", text(&syntax));
    let unknown = run(&client, &json!({"code": "def f():\n    return y\nf()"}));
    let message = text(&unknown);
    assert!(
        message.contains("<code>:2:12: Variable `y` not found"),
        "{message}"
    );
}

// Regression test: an inner call that failed validation stopped the
// program with "invalid arguments:" and none of the lines saying which argument was wrong;
// and a program whose value was a failed `tools.call_result(...)` dict was marked
// `isError`, though the program ran and returned what it meant to.
#[test]
fn an_inner_validation_error_keeps_its_lines_and_only_an_error_is_an_error() {
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    let failed = run(&client, &json!({"code": "tools.get_customer(id = \"x\")"}));
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(message.contains("invalid arguments:"), "{message}");
    assert!(
        message.contains("- /id: \"x\" is not of type \"integer\""),
        "{message}"
    );
    let handled = run(
        &client,
        &json!({"code": "tools.call_result(\"get_customer\", id = 500)"}),
    );
    assert_eq!(handled.is_error, Some(false), "{}", text(&handled));
    assert_eq!(
        structured(&handled),
        json!({"ok": false, "value": null, "error": "no customer 500"})
    );
}

#[test]
fn limits_stop_a_program() {
    // docs/code-mode.md, "The program": an inner timeout, a runaway loop stopped by
    // `time_constraint`, the heap limit and a write outside the permissions.
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let mut command = serve_command(dir.path(), data.path(), &[]);
    command.env("TOOLSMITH_HEAP_LIMIT", "64MiB");
    let client = McpClient::spawn(command);
    let inner = run(&client, &json!({"code": "tools.spin()"}));
    assert_eq!(inner.is_error, Some(true));
    assert!(
        text(&inner).contains("tool `spin` failed: tool `spin` timed out after 200ms"),
        "{}",
        text(&inner)
    );

    let runaway = run(
        &client,
        &json!({"code": "n = 0\nfor i in range(10000000):\n    for j in range(10000000):\n        n += j\n", "time_constraint": 0.3}),
    );
    assert_eq!(runaway.is_error, Some(true));
    let message = text(&runaway);
    assert!(
        message.contains("ran past its time constraint"),
        "{message}"
    );
    assert!(
        message.contains("the time constraint was 300ms"),
        "{message}"
    );

    let heap = run(
        &client,
        &json!({"code": "chunk = \"x\" * 10000\nbig = []\nfor i in range(1000000):\n    big.append(chunk + str(i))\n"}),
    );
    assert_eq!(heap.is_error, Some(true));
    assert!(
        text(&heap).contains("heap limit exceeded"),
        "{}",
        text(&heap)
    );

    let outside = run(
        &client,
        &json!({"code": "tools.save_report(path = \"../escape.txt\", text = \"x\")"}),
    );
    assert_eq!(outside.is_error, Some(true));
    assert!(
        text(&outside).contains("outside the tool's `fs.write` permission"),
        "{}",
        text(&outside)
    );
    assert!(!dir.path().join("../escape.txt").exists());
    let inside = run(
        &client,
        &json!({"code": "tools.save_report(path = \"out/r.txt\", text = \"ok\")"}),
    );
    assert_eq!(inside.is_error, Some(false), "{}", text(&inside));
}

#[test]
fn a_session_keeps_functions_and_values_across_runs_and_restarts() {
    // docs/code-mode.md, "Sessions".
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let define = json!({"session": "s1", "code": "rate = 3\ndef f(x):\n    return x * rate\nf(2)"});
    {
        let client = serve(dir.path(), data.path(), &[]);
        let first = run(&client, &define);
        assert_eq!(structured(&first), json!({"result": 6}), "{}", text(&first));
        assert!(
            text(&first).ends_with("session: s1 (kept 1 value and 1 function)"),
            "{}",
            text(&first)
        );
        let again = run(&client, &json!({"session": "s1", "code": "f(5)"}));
        assert_eq!(
            structured(&again),
            json!({"result": 15}),
            "{}",
            text(&again)
        );
        let elsewhere = run(&client, &json!({"session": "s2", "code": "f(5)"}));
        assert_eq!(elsewhere.is_error, Some(true));
    }
    let client = serve(dir.path(), data.path(), &[]);
    let restarted = run(&client, &json!({"session": "s1", "code": "f(7)"}));
    assert_eq!(
        structured(&restarted),
        json!({"result": 21}),
        "{}",
        text(&restarted)
    );
    assert_eq!(session_files(data.path(), "s1").len(), 1);
}

#[test]
fn two_folders_keep_separate_sessions() {
    // Every stdio server of a user shared one session scope, so a session of one tools
    // folder was resumed (its functions and values run) by the server of another folder.
    let data = tempfile::tempdir().unwrap();
    let first = records_folder("[evaluator]\n");
    let second = records_folder("[evaluator]\n");
    let one = serve(first.path(), data.path(), &[]);
    let kept = run(
        &one,
        &json!({"session": "s1", "code": "secret = 41\nsecret"}),
    );
    assert_eq!(structured(&kept), json!({"result": 41}), "{}", text(&kept));
    let other = serve(second.path(), data.path(), &[]);
    let elsewhere = run(&other, &json!({"session": "s1", "code": "secret"}));
    assert_eq!(elsewhere.is_error, Some(true), "{}", text(&elsewhere));
    assert!(text(&elsewhere).contains("secret"), "{}", text(&elsewhere));
    let again = run(&one, &json!({"session": "s1", "code": "secret + 1"}));
    assert_eq!(
        structured(&again),
        json!({"result": 42}),
        "{}",
        text(&again)
    );
    assert_eq!(session_files(data.path(), "s1").len(), 1);
}

#[test]
fn a_corrupt_session_file_is_reported_and_replaced() {
    // docs/code-mode.md, "Sessions".
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    // The folder's session file, saved once, then broken.
    let saved = run(&client, &json!({"session": "bad", "code": "1"}));
    assert_eq!(saved.is_error, Some(false), "{}", text(&saved));
    let [file] = session_files(data.path(), "bad").try_into().unwrap();
    std::fs::write(file, "{not json").unwrap();
    let result = run(&client, &json!({"session": "bad", "code": "x = 1\nx"}));
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let shown = text(&result);
    assert!(
        shown.contains("the saved session `bad` could not be used (not valid JSON"),
        "{shown}"
    );
    let again = run(&client, &json!({"session": "bad", "code": "x + 1"}));
    assert_eq!(structured(&again), json!({"result": 2}), "{}", text(&again));
    assert!(
        !text(&again).contains("could not be used"),
        "{}",
        text(&again)
    );
}

/// `count` session files in `sessions`, the first the oldest.
fn old_sessions(sessions: &Path, count: usize) {
    std::fs::create_dir_all(sessions).unwrap();
    let now = SystemTime::now();
    for index in 0..count {
        let path = sessions.join(format!("shared--old{index}.json"));
        std::fs::write(&path, r#"{"format": 1, "values": {}, "definitions": []}"#).unwrap();
        let age = Duration::from_secs(u64::try_from(1000 - index).unwrap());
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(now - age).unwrap();
    }
}

#[test]
fn sessions_are_pruned_by_count_bytes_and_age() {
    // 100 + 1 sessions prune the oldest; the byte budget; the age.
    let dir = records_folder("[evaluator]\n");
    let data = tempfile::tempdir().unwrap();
    let sessions = data.path().join("toolsmith/sessions");
    old_sessions(&sessions, 100);
    let client = serve(dir.path(), data.path(), &[]);
    let result = run(&client, &json!({"session": "new", "code": "1"}));
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(
        !sessions.join("shared--old0.json").exists(),
        "the oldest is pruned"
    );
    assert!(sessions.join("shared--old1.json").exists());
    assert_eq!(
        session_files(data.path(), "new").len(),
        1,
        "the session in use is kept"
    );
    assert_eq!(std::fs::read_dir(&sessions).unwrap().count(), 100);
    drop(client);

    let toml =
        "[evaluator]\n[options.run_code]\nmax_session_bytes = 200\nmax_session_age = \"10m\"\n";
    let dir = records_folder(toml);
    let data = tempfile::tempdir().unwrap();
    let sessions = data.path().join("toolsmith/sessions");
    old_sessions(&sessions, 5);
    let ancient = sessions.join("shared--ancient.json");
    std::fs::write(
        &ancient,
        r#"{"format": 1, "values": {}, "definitions": []}"#,
    )
    .unwrap();
    let file = std::fs::File::options().write(true).open(&ancient).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_hours(1))
        .unwrap();
    let client = serve(dir.path(), data.path(), &[]);
    let result = run(
        &client,
        &json!({"session": "big", "code": "data = \"x\" * 150\nlen(data)"}),
    );
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert!(!ancient.exists(), "older than max_session_age");
    let left: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(
        left,
        session_files(data.path(), "big"),
        "the byte budget keeps only the session in use"
    );
}

#[test]
fn serve_code_mode_turns_the_evaluator_on() {
    // `serve --code-mode=only` without `[evaluator]`.
    let dir = records_folder("");
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), data.path(), &["--code-mode=only"]);
    let mut names = client.tool_names();
    names.sort();
    assert_eq!(names, ["run_code", "tool_search"]);
    let found = run(
        &client,
        &json!({"code": "hits = tools.tool_search(query = \"customer lookup\")[\"results\"]\nhits[0][\"name\"]"}),
    );
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    assert!(
        text(&found).starts_with("get_customer\n"),
        "{}",
        text(&found)
    );
}
