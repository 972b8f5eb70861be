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

/// Tools grouped in subfolders by product: a query naming the product finds that product's
/// tool, though neither tool's own text names it.
#[test]
fn the_folder_a_tool_is_in_counts_like_a_tag() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, name, description) in [
        (
            "airtable",
            "create_record",
            "Create a new record in a table.",
        ),
        ("sheets", "append_row", "Append a new row to a table."),
    ] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
        std::fs::write(
            dir.path().join(folder).join(format!("{name}.toml")),
            format!("description = \"{description}\"\ncommand = [\"true\"]\n"),
        )
        .unwrap();
    }
    let top = |query: &str| {
        let output = toolsmith()
            .arg("search")
            .arg(dir.path())
            .args([query, "--json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let results: Value = serde_json::from_slice(&output.stdout).unwrap();
        results["results"][0]["name"].as_str().unwrap().to_owned()
    };
    assert_eq!(top("add a row in airtable"), "create_record");
    assert_eq!(top("add a row to my sheets"), "append_row");
}
