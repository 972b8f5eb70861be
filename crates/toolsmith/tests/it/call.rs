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
