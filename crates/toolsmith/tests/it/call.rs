//! `toolsmith call`.

use serde_json::Value;

use crate::{folder, json_output, snapshot, toolsmith};

#[test]
fn prints_text_content() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "hello", "name=Alice", "times=2"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn json_prints_the_call_tool_result() {
    let mut command = toolsmith();
    command.args([
        "call",
        "examples/tools",
        "process_list",
        "--json",
        "--args",
        r#"{"numbers": [1, 2, 3], "operation": "average"}"#,
    ]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn error_result_exits_one() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "forecast_get", "city=Atlantis"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn invalid_arguments_list_every_violation() {
    let mut command = toolsmith();
    command.args([
        "call",
        "examples/tools",
        "calendar_month",
        "year=0",
        "month=13",
        "colour=red",
    ]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn unknown_tool_exits_two_with_a_suggestion() {
    let mut command = toolsmith();
    command.args(["call", "examples/tools", "helo"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn string_values_are_coerced_and_json_values_kept() {
    let result = json_output(toolsmith().args([
        "call",
        "examples/tools",
        "process_list",
        "numbers=[2, 4]",
        "operation=sum",
        "--json",
    ]));
    let text = result["content"][0]["text"].as_str().unwrap();
    let object: Value = serde_json::from_str(text).unwrap();
    assert_eq!(object["result"], 6);
}

#[test]
fn image_results_are_summarised_on_stderr() {
    let output = toolsmith()
        .args(["call", "examples/tools", "chart_bar", "values=[1, 2]"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Bar chart of 2 bars, largest 2.\n"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("image/png"));
}

#[test]
fn runaway_script_is_stopped_near_its_timeout() {
    let dir = folder(&[(
        "spin.star",
        "def spin() -> str:\n    \"\"\"Spin forever.\"\"\"\n    for i in range(10000000):\n        for j in range(10000000):\n            pass\n    return \"done\"\n\nmcp.tool(spin, timeout = \"300ms\")\n",
    )]);
    let started = std::time::Instant::now();
    let output = toolsmith()
        .arg("call")
        .arg(dir.path())
        .arg("spin")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("timed out after 300ms"));
    // Generous bound: this only guards against a call that never stops.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn no_tool_given_for_a_folder_explains_usage() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command.arg("call").arg(dir.path());
    snapshot!(dir.path(), command);
}

const NOTES: &str = r#"
def notes_read(name: str) -> str:
    """Returns a note."""
    return mcp.read_file("notes/" + name)

mcp.tool(notes_read, permissions = {"fs.read": ["notes/"]})

def notes_add(name: str, text: str) -> list:
    """Adds a note; returns the names of all notes."""
    mcp.write_file("notes/" + name, text)
    return mcp.list_dir("notes")

mcp.tool(notes_add, permissions = {"fs.read": ["notes/"], "fs.write": ["notes/"]})

def notes_key() -> str:
    """Returns the notes service key."""
    return mcp.getenv("NOTES_KEY", "none")

mcp.tool(notes_key, permissions = {"env": ["NOTES_KEY"]})

def notes_leak() -> str:
    """Returns a variable it was not granted."""
    return mcp.getenv("NOTES_SECRET")

mcp.tool(notes_leak)
"#;

/// Runs `toolsmith call DIR TOOL ARGS…`: exit code and stdout.
fn call_in(dir: &std::path::Path, tool: &str, args: &[&str]) -> (Option<i32>, String) {
    let output = toolsmith()
        .arg("call")
        .arg(dir)
        .arg(tool)
        .args(args)
        .env("NOTES_KEY", "k-123")
        .env("NOTES_SECRET", "hunter2")
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_script_reaches_only_the_files_its_permissions_grant() {
    let dir = folder(&[
        ("tools.star", NOTES),
        ("notes/today.txt", "buy milk"),
        ("secret.txt", "hunter2"),
    ]);
    assert_eq!(
        call_in(dir.path(), "notes_read", &["name=today.txt"]),
        (Some(0), "buy milk\n".to_owned())
    );

    let (code, stdout) = call_in(dir.path(), "notes_read", &["name=../secret.txt"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("outside the tool's `fs.read` permission"),
        "{stdout}"
    );
    assert!(!stdout.contains("hunter2"), "{stdout}");

    let (code, stdout) = call_in(
        dir.path(),
        "notes_add",
        &["name=tomorrow.txt", "text=call mum"],
    );
    assert_eq!(
        (code, stdout.as_str()),
        (Some(0), "[\"today.txt\",\"tomorrow.txt\"]\n")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes/tomorrow.txt")).unwrap(),
        "call mum"
    );

    // Writing outside the grant leaves the file alone.
    let (code, stdout) = call_in(dir.path(), "notes_add", &["name=../secret.txt", "text=x"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("secret.txt")).unwrap(),
        "hunter2"
    );
}

#[test]
fn a_script_reads_only_the_environment_variables_its_permissions_name() {
    let dir = folder(&[("tools.star", NOTES)]);
    assert_eq!(
        call_in(dir.path(), "notes_key", &[]),
        (Some(0), "k-123\n".to_owned())
    );
    let (code, stdout) = call_in(dir.path(), "notes_leak", &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(r#"permissions = {"env": ["NOTES_SECRET"]}"#),
        "{stdout}"
    );
    assert!(!stdout.contains("hunter2"), "{stdout}");
}
