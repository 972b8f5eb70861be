//! `toolsmith search` (issue 4): the `tool_search` ranking on the command line.

use serde_json::Value;

use crate::toolsmith;

#[test]
fn ranks_the_bundled_examples() {
    let mut command = toolsmith();
    command.args(["search", "examples/tools", "sum two numbers", "-n", "3"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn a_typo_still_finds_the_tool() {
    let output = toolsmith()
        .args(["search", "examples/tools", "wether forecast", "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = &results["results"][0];
    assert!(
        first["name"].as_str().unwrap().starts_with("forecast"),
        "{results}"
    );
    assert!(first["inputSchema"].is_object());
}

#[test]
fn no_match_says_so_on_stderr() {
    let mut command = toolsmith();
    command.args(["search", "examples/tools", "zebra"]);
    insta_cmd::assert_cmd_snapshot!(command);
}
