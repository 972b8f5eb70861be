//! Profiles (`[profiles.NAME]`, issue 16 item 1): one folder, several servers. The real
//! binary serves each profile to rmcp's client over stdio and HTTP; `list`, `search`,
//! `check` and `test` take `--profile` too.

use serde_json::json;

use crate::mcp_client::McpClient;
use crate::serve_process::ServeProcess;
use crate::{folder, json_output, snapshot, toolsmith};

const GITHUB: &str = r#"
def github_search(query: str) -> str:
    """Search GitHub issues by text."""
    return "issues about " + query

mcp.tool(github_search, tags = ["search"])

def github_issue_create(title: str) -> str:
    """Open a GitHub issue."""
    return "opened " + title

mcp.tool(github_issue_create)
"#;

const NOTES: &str = r#"
def notes_find(query: str) -> str:
    """Find notes by text."""
    return "notes about " + query

mcp.tool(notes_find, tags = ["search"])

def notes_add(text: str) -> str:
    """Add a note."""
    return "added " + text

mcp.tool(notes_add, tags = ["writing"])
"#;

const WEATHER: &str = r#"
def forecast_get(city: str) -> str:
    """Get the weather forecast for a city."""
    return "sunny in " + city

mcp.tool(forecast_get)
"#;

/// Three profiles: by names (with its own server name and a prompt), by glob and tag, and
/// with its own search mode and a `discoverable` list.
const CONFIG: &str = r#"
[server]
name = "everything"

[profiles.triage]
description = "Find issues and the notes about them"
tools = ["github_search", "notes_find"]
prompts = ["triage"]
name = "triage-server"
instructions = "Find the issue first, then the notes."

[profiles.finders]
description = "Everything GitHub, and whatever searches"
tools = ["github_*", "tag:search"]

[profiles.quiet]
tools = ["tag:search", "forecast_get", "notes_add"]
discoverable = ["notes_add"]

[profiles.quiet.search]
mode = "always"
"#;

const PROMPT: &str = "---\ndescription: Triage an issue\n---\nTriage this issue.\n";

fn profiles_folder() -> tempfile::TempDir {
    folder(&[
        ("github.star", GITHUB),
        ("notes.star", NOTES),
        ("weather.star", WEATHER),
        ("toolsmith.toml", CONFIG),
        ("prompts/triage.md", PROMPT),
        (
            "prompts/summarize.md",
            "---\ndescription: Summarize\n---\nSummarize.\n",
        ),
    ])
}

#[test]
fn each_profile_serves_exactly_its_tools_over_stdio_and_http() {
    let dir = profiles_folder();
    let path = dir.path().to_str().unwrap();

    let triage = McpClient::stdio(&[path, "--profile", "triage"]);
    assert_eq!(triage.tool_names(), ["github_search", "notes_find"]);
    assert_eq!(triage.server_name(), "triage-server");
    assert_eq!(triage.prompt_names(), ["triage"]);
    assert_eq!(
        triage.call_text("notes_find", &json!({"query": "login"})),
        "notes about login"
    );
    // A tool of the folder that the profile leaves out is not there to call.
    let refused = triage
        .try_call("notes_add", &json!({"text": "x"}))
        .unwrap_err();
    assert!(refused.contains("unknown tool `notes_add`"), "{refused}");
    drop(triage);

    let server = ServeProcess::http(&[path, "--profile", "finders"], None);
    let finders = McpClient::http(server.url());
    assert_eq!(
        finders.tool_names(),
        ["github_issue_create", "github_search", "notes_find"]
    );
    assert_eq!(finders.server_name(), "everything");
    assert_eq!(finders.prompt_names(), ["summarize", "triage"]);
    drop(finders);
    drop(server);

    let quiet = McpClient::stdio(&[path, "--profile", "quiet"]);
    assert_eq!(quiet.tool_names(), ["execute_tool", "tool_search"]);
    let found = quiet.call("tool_search", &json!({"query": "add a note"}));
    let names: Vec<String> = found.structured_content.unwrap()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"notes_add".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"github_issue_create".to_owned()),
        "{names:?}"
    );
    drop(quiet);

    let everything = McpClient::stdio(&[path]);
    assert_eq!(
        everything.tool_names(),
        [
            "forecast_get",
            "github_issue_create",
            "github_search",
            "notes_add",
            "notes_find"
        ]
    );
}
