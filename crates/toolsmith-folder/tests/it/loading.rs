//! Loading a folder's files: each under its own deadline, and reloads that reuse what did
//! not change.

use std::sync::Arc;

use toolsmith_folder::{Snapshot, ToolFolder};

const SLOW: &str = "for i in range(10000000):\n    for j in range(10000000):\n        pass\n";

fn tool(name: &str) -> String {
    format!(
        "def {name}(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n\nmcp.tool({name})\n"
    )
}

#[test]
fn a_slow_file_is_a_diagnostic_and_the_others_load() {
    // Regression test: the top level gets `[defaults] load_timeout`.
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
    // Regression test: a reload must not run every file again.
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
fn a_reload_as_of_a_snapshot_reuses_what_it_saw_unchanged_and_notices_a_new_script() {
    // `--watch` reloads take the files' stamps from the snapshot that
    // started them, and whether a manifest has a script from the folder's listing. An
    // unchanged manifest keeps its tool and its catalog entry; a manifest that gains a
    // `.star` script is loaded again and runs it.
    let dir = tempfile::tempdir().unwrap();
    let command = "description = \"Say.\"\ncommand = [\"echo\", \"said\"]\n";
    std::fs::write(dir.path().join("kept.toml"), command).unwrap();
    std::fs::write(dir.path().join("scripted.toml"), "description = \"Say.\"\n").unwrap();
    let before = ToolFolder::load(dir.path()).unwrap();
    assert!(
        before.catalog().get("scripted").is_none(),
        "no script, no command yet"
    );

    std::fs::write(
        dir.path().join("scripted.star"),
        "def scripted() -> str:\n    return \"from the script\"\n",
    )
    .unwrap();
    let seen = Snapshot::take(dir.path());
    let after = before.reload_as_of(&seen).unwrap();
    let entry_of = |folder: &ToolFolder, name: &str| {
        folder.catalog().get(name).expect("the tool loaded").clone()
    };
    assert!(Arc::ptr_eq(
        entry_of(&before, "kept").tool(),
        entry_of(&after, "kept").tool()
    ));
    assert!(
        after.catalog().get("scripted").is_some(),
        "{:?}",
        after.catalog().diagnostics()
    );

    // Nothing changed since `seen`: nothing is loaded again.
    let again = after.reload_as_of(&seen).unwrap();
    assert!(Arc::ptr_eq(
        entry_of(&after, "scripted").tool(),
        entry_of(&again, "scripted").tool()
    ));
}

#[test]
fn a_call_of_a_tool_left_out_says_why() {
    // Regression test: a tool hidden by `requires` answered a bare
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

// An init's state follows the files that name it. A reload keeps the
// inits of unchanged files; a reloaded manifest joins the command init an unchanged one
// still holds; a changed `.star` file's init starts afresh.
#[test]
fn a_reload_keeps_the_inits_of_unchanged_files() {
    use toolsmith_model::InitStatus;

    let dir = tempfile::tempdir().unwrap();
    let manifest = |description: &str| {
        format!(
            "description = \"{description}\"\ncommand = [\"echo\", \"done\"]\ninit = [\"true\"]\n"
        )
    };
    let star = "def setup():\n    return \"ready\"\n\ndef embed(text: str) -> str:\n    \"\"\"Embed.\"\"\"\n    return mcp.init_value()\n\nmcp.tool(embed, init = setup)\n";
    std::fs::write(dir.path().join("model.star"), star).unwrap();
    std::fs::write(dir.path().join("transcribe.toml"), manifest("Transcribe.")).unwrap();
    std::fs::write(dir.path().join("translate.toml"), manifest("Translate.")).unwrap();
    let folder = ToolFolder::load(dir.path()).unwrap();
    let status = |folder: &ToolFolder, tool: &str| {
        folder.catalog().get(tool).unwrap().init_status().unwrap()
    };
    let caller = folder.caller();
    let arguments = |value: serde_json::Value| value.as_object().cloned().unwrap();
    let embedded = caller
        .call("embed", arguments(serde_json::json!({"text": "x"})))
        .unwrap();
    assert_eq!(embedded.joined_text(), "ready");
    let transcribed = caller
        .call("transcribe", arguments(serde_json::json!({})))
        .unwrap();
    assert!(!transcribed.is_error, "{}", transcribed.joined_text());
    // One command, one init: running it for `transcribe` ran it for `translate`.
    assert_eq!(status(&folder, "translate"), InitStatus::Ready);

    std::fs::write(
        dir.path().join("translate.toml"),
        manifest("Translate text."),
    )
    .unwrap();
    let reloaded = folder.reload().unwrap();
    assert_eq!(status(&reloaded, "translate"), InitStatus::Ready);
    assert_eq!(status(&reloaded, "embed"), InitStatus::Ready);

    std::fs::write(dir.path().join("model.star"), format!("{star}\n# edited\n")).unwrap();
    let edited = reloaded.reload().unwrap();
    assert_eq!(status(&edited, "embed"), InitStatus::NotRun);
    assert_eq!(status(&edited, "transcribe"), InitStatus::Ready);
}

#[test]
fn an_evaluator_named_as_a_tool_is_a_duplicate_tool_name() {
    // `[evaluator] name` equal to a tool's name gave no diagnostic, though the docs promise
    // `duplicate-tool-name`: the tool is served, and the load says the evaluator is not.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        "[server]\nname = \"x\"\n\n[evaluator]\nname = \"echo\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("echo.star"), tool("echo")).unwrap();
    let folder = ToolFolder::load(dir.path()).unwrap();
    let names: Vec<_> = folder
        .catalog()
        .definitions()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["echo"]);
    let diagnostics = folder.catalog().diagnostics();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let clash = &diagnostics[0];
    assert_eq!(clash.rule, "duplicate-tool-name");
    assert!(clash.location.path.ends_with("toolsmith.toml"), "{clash}");
    assert_eq!(clash.location.line, 5, "{clash}");
    assert!(
        clash.message.contains("evaluator is named `echo`") && clash.message.contains("echo.star"),
        "{clash}"
    );

    // Not turned on: nothing to say.
    std::fs::write(dir.path().join("toolsmith.toml"), "[options.echo]\n").unwrap();
    assert!(folder.reload().unwrap().catalog().diagnostics().is_empty());
}
