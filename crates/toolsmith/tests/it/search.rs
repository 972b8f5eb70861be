//! `toolsmith search` (issue 4): the `tool_search` ranking on the command line.

use crate::{folder, json_output, toolsmith};

#[test]
fn ranks_the_bundled_examples() {
    let mut command = toolsmith();
    command.args(["search", "examples/tools", "sum two numbers", "-n", "3"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn a_typo_still_finds_the_tool() {
    let results =
        json_output(toolsmith().args(["search", "examples/tools", "wether forecast", "--json"]));
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

/// Tools grouped in subfolders by product: a query naming the product finds that product's
/// tool, though neither tool's own text names it.
#[test]
fn the_folder_a_tool_is_in_counts_like_a_tag() {
    let dir = folder(&[
        (
            "airtable/create_record.toml",
            "description = \"Create a new record in a table.\"\ncommand = [\"true\"]\n",
        ),
        (
            "sheets/append_row.toml",
            "description = \"Append a new row to a table.\"\ncommand = [\"true\"]\n",
        ),
    ]);
    let top = |query: &str| {
        let results = json_output(
            toolsmith()
                .arg("search")
                .arg(dir.path())
                .args([query, "--json"]),
        );
        results["results"][0]["name"].as_str().unwrap().to_owned()
    };
    assert_eq!(top("add a row in airtable"), "create_record");
    assert_eq!(top("add a row to my sheets"), "append_row");
}

#[test]
fn an_empty_query_is_a_usage_error() {
    let output = toolsmith()
        .args(["search", "examples/tools", "  "])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the query is empty"), "{stderr}");
    assert!(output.stdout.is_empty());
}
