//! Profiles (`[profiles.NAME]`): one folder, several servers. The real
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

#[test]
fn list_profiles_shows_each_with_its_tool_count_and_tokens() {
    let dir = profiles_folder();
    let mut command = toolsmith();
    command.args(["list", "--profiles"]).arg(dir.path());
    snapshot!(dir.path(), command);

    let listed = json_output(
        toolsmith()
            .args(["list", "--profiles", "--json"])
            .arg(dir.path()),
    );
    let profiles = listed["profiles"].as_array().unwrap();
    let counts: Vec<(Option<&str>, u64)> = profiles
        .iter()
        .map(|p| (p["name"].as_str(), p["tool_count"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        counts,
        [
            (None, 5),
            (Some("finders"), 3),
            (Some("quiet"), 4),
            (Some("triage"), 2)
        ]
    );
    assert!(
        profiles
            .iter()
            .all(|p| p["listed_tokens"].as_u64().unwrap() > 0)
    );
}

#[test]
fn list_search_check_and_test_take_a_profile() {
    let dir = profiles_folder();
    let names = |args: &[&str]| -> Vec<String> {
        let listed = json_output(
            toolsmith()
                .args(["list", "--json"])
                .args(args)
                .arg(dir.path()),
        );
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&["--profile", "triage"]),
        ["github_search", "notes_find"]
    );
    let quiet = json_output(
        toolsmith()
            .args(["list", "--json", "--profile", "quiet"])
            .arg(dir.path()),
    );
    assert_eq!(quiet["search"]["mode"], "always");
    let discoverable: Vec<&str> = quiet["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["name"] == "notes_add")
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(discoverable, ["notes_add"]);

    // `search` ranks only the profile's tools.
    let found = json_output(
        toolsmith()
            .args(["search", "--json", "--profile", "triage"])
            .arg(dir.path())
            .arg("open an issue"),
    );
    let hits: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["name"].as_str().unwrap())
        .collect();
    assert!(!hits.contains(&"github_issue_create"), "{hits:?}");

    // `check` lints only the profile's tools: no finding names a tool left out.
    let output = toolsmith()
        .args(["check", "--format", "json", "--profile", "triage"])
        .arg(dir.path())
        .output()
        .unwrap();
    let findings: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let messages: Vec<&str> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["message"].as_str().unwrap())
        .collect();
    assert!(
        !messages.is_empty(),
        "the tools have no examples: {messages:?}"
    );
    for message in &messages {
        for left_out in ["github_issue_create", "notes_add", "forecast_get"] {
            assert!(!message.contains(left_out), "{message}");
        }
    }
}

#[test]
fn test_runs_only_the_profiles_cases() {
    let dir = folder(&[
        ("weather.star", &WEATHER.replace(
            "mcp.tool(forecast_get)",
            "mcp.tool(forecast_get, examples = [{\"args\": {\"city\": \"Oslo\"}, \"expect\": {\"text\": \"sunny in Oslo\"}}])",
        )),
        ("notes.star", &NOTES.replace(
            "mcp.tool(notes_add, tags = [\"writing\"])",
            "mcp.tool(notes_add, tags = [\"writing\"], examples = [{\"args\": {\"text\": \"x\"}, \"expect\": {\"text\": \"wrong\"}}])",
        )),
        ("toolsmith.toml", "[profiles.weather]\ntools = [\"forecast_get\"]\n"),
    ]);
    let all = toolsmith().arg("test").arg(dir.path()).output().unwrap();
    assert_eq!(all.status.code(), Some(1), "notes_add's case fails");
    let weather = toolsmith()
        .args(["test", "--json", "--profile", "weather"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        weather.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&weather.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&weather.stdout).unwrap();
    let tools: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["forecast_get"]);
}

#[test]
fn an_unknown_profile_exits_2_naming_the_profiles() {
    let dir = profiles_folder();
    let mut command = toolsmith();
    command
        .args(["serve", "--profile", "triag"])
        .arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn a_profile_entry_that_matches_nothing_is_a_warning_and_the_rest_serves() {
    let dir = folder(&[
        ("notes.star", NOTES),
        ("broken.star", "def broken(:\n"),
        (
            "toolsmith.toml",
            "[profiles.writer]\ntools = [\n  \"notes_ad\",\n  \"notes_find\",\n  \"tag:nothing\",\n  \"calendar_*\",\n  \"broken\",\n]\nprompts = [\"nope\"]\n",
        ),
    ]);
    let mut command = toolsmith();
    command
        .args(["list", "--profile", "writer"])
        .arg(dir.path());
    snapshot!(dir.path(), command);

    let writer = McpClient::stdio(&[dir.path().to_str().unwrap(), "--profile", "writer"]);
    assert_eq!(writer.tool_names(), ["notes_find"]);
}

#[test]
fn watch_reloads_an_edited_profile() {
    let dir = profiles_folder();
    let client = McpClient::stdio(&[
        dir.path().to_str().unwrap(),
        "--profile",
        "triage",
        "--watch",
    ]);
    assert_eq!(client.tool_names(), ["github_search", "notes_find"]);
    std::fs::write(
        dir.path().join("toolsmith.toml"),
        CONFIG.replace(
            "tools = [\"github_search\", \"notes_find\"]",
            "tools = [\"github_search\", \"notes_find\", \"forecast_get\"]",
        ),
    )
    .unwrap();
    client.wait_for_tools_changed(1);
    assert_eq!(
        client.tool_names(),
        ["forecast_get", "github_search", "notes_find"]
    );
}

#[test]
fn an_installed_profile_serves_that_profile_when_the_client_starts_it() {
    // `install --profile NAME` writes an entry that, started as the
    // client starts it, serves that profile, under the profile's own server name.
    let dir = profiles_folder();
    let home = tempfile::tempdir().unwrap();
    let installed = crate::install::install(
        home.path(),
        &[
            "claude-code",
            dir.path().to_str().unwrap(),
            "--profile",
            "triage",
        ],
    )
    .output()
    .unwrap();
    assert!(installed.status.success(), "{installed:?}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude.json")).unwrap())
            .unwrap();
    let entry = &written["mcpServers"]["triage-server"];
    let mut command = std::process::Command::new(entry["command"].as_str().unwrap());
    for arg in entry["args"].as_array().unwrap() {
        command.arg(arg.as_str().unwrap());
    }
    command.current_dir(std::env::temp_dir());
    let client = McpClient::spawn(command);
    assert_eq!(client.tool_names(), ["github_search", "notes_find"]);
    assert_eq!(client.server_name(), "triage-server");
}
