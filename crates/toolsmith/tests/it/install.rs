//! `toolsmith install`: the entry it writes into a client's file, in a temporary HOME, is
//! one the client can run, and the rest of the file survives. What it prints is under
//! snapshots, with the home folder, the tools folder, the binary and the workspace
//! filtered.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::{folder, path_filters, snapshot_filtered, toolsmith, workspace};

/// `toolsmith install ARGS` with `home` as the home folder.
fn install(home: &Path, args: &[&str]) -> Command {
    let mut command = toolsmith();
    command
        .arg("install")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME");
    command
}

/// Filters for what `install` prints: `[HOME]`, `[TOOLS]` (a temporary tools folder),
/// `[TOOLSMITH]` (the binary) and `[WORKSPACE]`.
fn install_filters(home: &Path, tools: Option<&Path>) -> Vec<(String, String)> {
    let binary = insta_cmd::get_cargo_bin("toolsmith");
    let workspace = workspace();
    let mut paths = vec![(home, "[HOME]"), (binary.as_path(), "[TOOLSMITH]")];
    paths.extend(tools.map(|tools| (tools, "[TOOLS]")));
    paths.push((workspace.as_path(), "[WORKSPACE]"));
    path_filters(&paths)
}

const GREET: &str = r#"
def greet(name: str) -> str:
    """Greet someone with the configured greeting."""
    return mcp.option("greeting") + ", " + name

mcp.tool(greet, options = {"greeting": "Hello"})
"#;

/// Starts the server as a client would from `entry` (`command`, `args`, `env`), calls
/// `greet` and returns its text.
fn greet_through(entry: &Value) -> String {
    let mut command = Command::new(entry["command"].as_str().unwrap());
    command.env_remove("MCP_TOOL_OPTIONS");
    for arg in entry["args"].as_array().unwrap() {
        command.arg(arg.as_str().unwrap());
    }
    for (name, value) in entry["env"].as_object().into_iter().flatten() {
        command.env(name, value.as_str().unwrap());
    }
    command.current_dir(std::env::temp_dir());
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    let text = server.call_text("greet", &json!({"name": "Ada"}));
    server.finish();
    text
}

#[test]
fn claude_code_gets_an_entry_it_can_run_and_keeps_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let tools = folder(&[("greet.star", GREET)]);
    let config = home.path().join(".claude.json");
    let before = r#"{"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}"#;
    std::fs::write(&config, before).unwrap();
    let dir = tools.path().to_str().unwrap();
    let filters = || install_filters(home.path(), Some(tools.path()));

    let options = r#"{"greet": {"greeting": "Hej"}}"#;
    snapshot_filtered!(
        filters(),
        install(
            home.path(),
            &[
                "claude-code",
                dir,
                "--name",
                "greetings",
                "--tool-options",
                options,
            ],
        )
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(written["theme"], "dark");
    assert_eq!(written["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(
        std::fs::read_to_string(home.path().join(".claude.json.bak")).unwrap(),
        before
    );

    // The client starts the server from the entry, and the options reach the tool.
    let entry = &written["mcpServers"]["greetings"];
    assert_eq!(greet_through(entry), "Hej, Ada");

    // Installing again replaces the entry; --remove takes it out.
    snapshot_filtered!(
        filters(),
        install(home.path(), &["claude-code", dir, "--name", "greetings"])
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        greet_through(&written["mcpServers"]["greetings"]),
        "Hello, Ada"
    );
    snapshot_filtered!(
        filters(),
        install(
            home.path(),
            &["claude-code", dir, "--name", "greetings", "--remove"],
        )
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"].as_object().unwrap().len(),
        1,
        "{written}"
    );
}

#[test]
fn a_file_that_is_not_json_is_left_alone_with_the_entry_to_add_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "{\n  // my servers\n  \"mcpServers\": {}\n}\n";
    std::fs::write(&config, before).unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(home.path(), &["cursor", "examples/tools"])
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert!(!home.path().join(".cursor/mcp.json.bak").exists());
}

#[test]
fn codex_gets_a_toml_table_and_keeps_its_settings() {
    let home = tempfile::tempdir().unwrap();
    let tools = folder(&[("greet.star", GREET)]);
    let config = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "# mine\nmodel = \"o3\"\n").unwrap();
    let dir = tools.path().to_str().unwrap();
    snapshot_filtered!(
        install_filters(home.path(), Some(tools.path())),
        install(home.path(), &["codex", dir, "--name", "greetings"])
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\nmodel = \"o3\"\n"), "{text}");
    let parsed: toml::Table = text.parse().unwrap();
    let entry = serde_json::to_value(&parsed["mcp_servers"]["greetings"]).unwrap();
    assert_eq!(greet_through(&entry), "Hello, Ada");
}

#[test]
fn a_dry_run_prints_the_entry_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(
            home.path(),
            &[
                "vscode",
                "examples/tools",
                "--name",
                "examples",
                "--dry-run",
            ],
        )
    );
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none());

    // `--json` reports the client, the file, the action and the entry.
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(
            home.path(),
            &["gemini", "examples/tools", "--json", "--dry-run"],
        )
    );
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none());
}

#[test]
fn a_client_without_project_files_says_so() {
    let home = tempfile::tempdir().unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(home.path(), &["windsurf", "examples/tools", "--project"])
    );
}
