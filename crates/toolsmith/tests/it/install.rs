//! `toolsmith install`: the entry it writes into a client's file, in a temporary HOME, is
//! one the client can run, and the rest of the file survives.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::{folder, toolsmith};

/// `toolsmith install ARGS` with `home` as the home folder.
fn install(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = toolsmith()
        .arg("install")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
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

    let options = r#"{"greet": {"greeting": "Hej"}}"#;
    let (code, _, stderr) = install(
        home.path(),
        &[
            "claude-code",
            dir,
            "--name",
            "greetings",
            "--tool-options",
            options,
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("added the MCP server `greetings`"),
        "{stderr}"
    );
    assert!(stderr.contains("restart Claude Code"), "{stderr}");
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
    let (code, _, stderr) = install(home.path(), &["claude-code", dir, "--name", "greetings"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("replaced"), "{stderr}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(
        greet_through(&written["mcpServers"]["greetings"]),
        "Hello, Ada"
    );
    let (code, _, _) = install(
        home.path(),
        &["claude-code", dir, "--name", "greetings", "--remove"],
    );
    assert_eq!(code, Some(0));
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
    let (code, _, stderr) = install(home.path(), &["cursor", "examples/tools"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    assert!(stderr.contains("it is left as it is"), "{stderr}");
    assert!(stderr.contains("\"mcpServers\""), "{stderr}");
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
    let (code, _, stderr) = install(home.path(), &["codex", dir, "--name", "greetings"]);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with("# mine\nmodel = \"o3\"\n"), "{text}");
    let parsed: toml::Table = text.parse().unwrap();
    let entry = serde_json::to_value(&parsed["mcp_servers"]["greetings"]).unwrap();
    assert_eq!(greet_through(&entry), "Hello, Ada");
}

#[test]
fn a_dry_run_prints_the_entry_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = install(
        home.path(),
        &[
            "vscode",
            "examples/tools",
            "--name",
            "examples",
            "--dry-run",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("would add the MCP server `examples`"),
        "{stderr}"
    );
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["servers"]["examples"]["type"], "stdio");
    assert!(std::fs::read_dir(home.path()).unwrap().next().is_none());

    let (code, stdout, _) = install(
        home.path(),
        &["gemini", "examples/tools", "--json", "--dry-run"],
    );
    assert_eq!(code, Some(0));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["action"], "add");
    assert_eq!(report["entry"]["args"][0], "serve");
    assert!(
        report["config"]
            .as_str()
            .unwrap()
            .ends_with(".gemini/settings.json")
    );
}

#[test]
fn a_client_without_project_files_says_so() {
    let home = tempfile::tempdir().unwrap();
    let (code, _, stderr) = install(home.path(), &["windsurf", "examples/tools", "--project"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("Windsurf has no project configuration file"),
        "{stderr}"
    );
}
