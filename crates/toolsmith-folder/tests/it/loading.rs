//! Loading a folder's files: each under its own deadline, and reloads that reuse what did
//! not change.

use std::sync::Arc;

use toolsmith_folder::ToolFolder;

const SLOW: &str = "for i in range(10000000):\n    for j in range(10000000):\n        pass\n";

fn tool(name: &str) -> String {
    format!(
        "def {name}(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n\nmcp.tool({name})\n"
    )
}

#[test]
fn a_slow_file_is_a_diagnostic_and_the_others_load() {
    // Regression test for issue 14, item 6: the top level gets `[defaults] load_timeout`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[defaults]\nload_timeout = \"200ms\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("a_slow.star"), SLOW).unwrap();
    std::fs::write(dir.path().join("b.star"), tool("echo")).unwrap();
    let folder = ToolFolder::load(dir.path()).unwrap();
    let names: Vec<_> = folder
        .catalog()
        .definitions()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["echo"]);
    let diagnostics = folder.catalog().diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].rule, "load-timeout");
    assert!(diagnostics[0].location.path.ends_with("a_slow.star"));
    assert!(diagnostics[0].message.contains("200ms"), "{diagnostics:?}");
}

#[test]
fn reload_evaluates_only_the_files_that_changed() {
    // Regression test for issue 14, item 6: a reload must not run every file again.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kept.star"), tool("kept")).unwrap();
    std::fs::write(dir.path().join("edited.star"), tool("edited")).unwrap();
    let before = ToolFolder::load(dir.path()).unwrap();
    std::fs::write(dir.path().join("edited.star"), tool("edited_again")).unwrap();
    let after = before.reload().unwrap();

    let tool_of = |folder: &ToolFolder, name: &str| {
        Arc::clone(folder.catalog().get(name).expect("the tool loaded").tool())
    };
    assert!(Arc::ptr_eq(
        &tool_of(&before, "kept"),
        &tool_of(&after, "kept")
    ));
    assert!(after.catalog().get("edited").is_none());
    assert!(after.catalog().get("edited_again").is_some());
}

#[test]
fn a_call_of_a_tool_left_out_says_why() {
    // Regression test for issue 14, item 22: a tool hidden by `requires` answered a bare
    // "unknown tool", and one that failed to load an unrelated "did you mean".
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("needs_key.star"),
        "def needs_key() -> str:\n    \"\"\"Needs a key.\"\"\"\n    return \"\"\n\n\
         mcp.tool(needs_key, requires={\"env\": [\"TOOLSMITH_TEST_UNSET_KEY\"]})\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("js.toml"),
        "description = \"x\"\ncommand = 5\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("jsx.star"), tool("jsx")).unwrap();
    let folder = ToolFolder::load(dir.path()).unwrap();
    let why = |name: &str| folder.catalog().lookup(name).err().unwrap().to_string();
    assert_eq!(
        why("needs_key"),
        "tool `needs_key` is hidden: environment variable `TOOLSMITH_TEST_UNSET_KEY` is not set"
    );
    let js = why("js");
    assert!(js.starts_with("tool `js` failed to load: "), "{js}");
    assert!(js.contains("js.toml:"), "{js}");
    assert!(!js.contains("did you mean"), "{js}");
    assert_eq!(why("jsy"), "unknown tool `jsy`; did you mean `jsx`?");
}
