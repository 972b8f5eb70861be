//! `toolsmith search`: the `tool_search` ranking on the command line.

use crate::serve_process::ServeProcess;
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

/// A one-shot `toolsmith search` keeps its index in the cache folder and reads it
/// back while the folder is unchanged; a changed file, or a cache file that is not one,
/// makes it load the folder again.
#[test]
fn a_kept_index_is_read_back_until_the_folder_changes() {
    let dir = folder(&[
        (
            "mail/send_email.toml",
            "description = \"Send an email to someone.\"\ncommand = [\"true\"]\n",
        ),
        (
            "notes/add_note.toml",
            "description = \"Add a note to a notebook.\"\ncommand = [\"true\"]\n",
        ),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let search = |query: &str| {
        json_output(
            toolsmith()
                .env("TOOLSMITH_CACHE_DIR", cache.path())
                .arg("search")
                .arg(dir.path())
                .args([query, "--json"]),
        )
    };
    let names = |results: &serde_json::Value| -> Vec<String> {
        results["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|found| found["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = search("send an email");
    assert_eq!(names(&first)[0], "send_email", "{first}");
    let kept: Vec<_> = std::fs::read_dir(cache.path().join("search"))
        .expect("the index is kept in the cache folder")
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        search("send an email"),
        first,
        "the kept index answers the same"
    );
    assert!(names(&search("weather forecast")).is_empty());

    std::fs::write(
        dir.path().join("notes/add_note.toml"),
        "description = \"Get the weather forecast for a city.\"\ncommand = [\"true\"]\n",
    )
    .unwrap();
    let changed = search("weather forecast");
    assert_eq!(names(&changed), ["add_note"], "the edit is seen: {changed}");
    assert_eq!(
        changed["results"][0]["description"],
        "Get the weather forecast for a city."
    );

    let kept = kept[0].as_ref().unwrap().path();
    std::fs::write(&kept, b"not an index").unwrap();
    assert_eq!(names(&search("weather forecast")), ["add_note"]);
    assert_ne!(
        std::fs::read(&kept).unwrap(),
        b"not an index",
        "a cache file that cannot be read is made again"
    );
}

/// A request no tool of the folder does ("order a large pepperoni pizza" used to
/// return a tool at a score close to real hits) shows no tools, as `tool_search` answers it:
/// `--json` prints `"results": []` with a `note`, the table says so on stderr, and `--all`
/// shows the ranking below the floor.
#[test]
fn a_request_no_tool_does_shows_no_tools_unless_all() {
    let query = "order a large pepperoni pizza for delivery";
    let results = json_output(toolsmith().args(["search", "examples/tools", query, "--json"]));
    assert_eq!(results["results"], serde_json::json!([]), "{results}");
    let note = results["note"].as_str().unwrap();
    assert!(note.starts_with("no tool fits"), "{note}");

    let mut command = toolsmith();
    command.args(["search", "examples/tools", query]);
    insta_cmd::assert_cmd_snapshot!(command);

    let all = json_output(toolsmith().args(["search", "examples/tools", query, "--json", "--all"]));
    assert!(!all["results"].as_array().unwrap().is_empty(), "{all}");
    assert!(all.get("note").is_none(), "{all}");
}

/// Over stdio, a folder-wide `tool_search` for a pizza order answers "no tool
/// fits" with no tools (it used to hand back a tool a model would then call), while a real
/// request still finds its tool and `execute_tool` still runs any tool by name.
#[test]
fn tool_search_over_stdio_says_no_tool_fits_a_pizza_order() {
    let mut server = ServeProcess::stdio(&["examples/tools", "--search", "always"]);
    server.initialize();
    let answer = server.call(
        "tool_search",
        &serde_json::json!({"query": "order a large pepperoni pizza for delivery"}),
    );
    let text = answer["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("no tool fits"), "{answer}");
    assert_eq!(
        answer["structuredContent"]["results"],
        serde_json::json!([])
    );
    assert_eq!(answer["structuredContent"]["note"], text);
    assert_ne!(answer["isError"], true);

    let found = server.call_text(
        "tool_search",
        &serde_json::json!({"query": "greet someone by name"}),
    );
    assert!(found.starts_with("hello "), "{found}");
    let ran = server.call_text(
        "execute_tool",
        &serde_json::json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    );
    assert!(ran.contains('5'), "{ran}");
    assert_eq!(server.finish().0, Some(0));
}
