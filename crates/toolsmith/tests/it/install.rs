//! `toolsmith install`: the entry it writes into a client's file, in a temporary HOME, is
//! one the client can run, and the rest of the file survives. What it prints is under
//! snapshots, with the home folder, the tools folder, the binary and the workspace
//! filtered. The clients' own CLIs read these files in `client_clis.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::{folder, json_output, path_filters, snapshot_filtered, toolsmith, workspace};

/// The environment variables a client's path may depend on, all unset for these tests.
pub(crate) const PATH_VARIABLES: [&str; 6] = [
    "XDG_CONFIG_HOME",
    "CODEX_HOME",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
    "CLAUDE_CONFIG_DIR",
];

/// `toolsmith install ARGS` with `home` as the home folder.
pub(crate) fn install(home: &Path, args: &[&str]) -> Command {
    let mut command = toolsmith();
    command.arg("install").args(args).env("HOME", home);
    for variable in PATH_VARIABLES {
        command.env_remove(variable);
    }
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

/// Starts the server as a client would from `entry` (`command` and `args`, or Goose's
/// `cmd`, or opencode's `command` array; `env`, `envs` or `environment`), calls `greet`
/// and returns its text.
fn greet_through(entry: &Value) -> String {
    let (program, args) = match (&entry["command"], &entry["cmd"]) {
        (Value::Array(line), _) => (&line[0], line[1..].to_vec()),
        (Value::String(_), _) => (&entry["command"], entry["args"].as_array().unwrap().clone()),
        (_, program) => (program, entry["args"].as_array().unwrap().clone()),
    };
    let mut command = Command::new(program.as_str().unwrap());
    command.env_remove("MCP_TOOL_OPTIONS");
    for arg in args {
        command.arg(arg.as_str().unwrap());
    }
    let env = ["env", "envs", "environment"]
        .iter()
        .find_map(|key| entry[key].as_object());
    for (name, value) in env.into_iter().flatten() {
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
        std::fs::read_to_string(home.path().join(".claude.json.toolsmith.bak")).unwrap(),
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
fn a_file_that_does_not_parse_is_left_alone_with_the_entry_to_add_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "{\n  \"mcpServers\": {\n";
    std::fs::write(&config, before).unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(home.path(), &["cursor", "examples/tools"])
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    assert!(!home.path().join(".cursor/mcp.json.toolsmith.bak").exists());
}

/// Comments in a JSON-with-comments file are kept, and re-installing
/// replaces the entry where it is.
#[test]
fn comments_in_a_jsonc_file_are_kept_and_the_entry_replaced_in_place() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config/Code/User/mcp.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "{\n  // my servers\n  \"servers\": {\n    \"first\": {\"command\": \"a\"}, // mine\n  },\n  \"inputs\": []\n}\n";
    std::fs::write(&config, before).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["vscode", "examples/tools", "--name", "examples"];
        args.extend(extra);
        let output = install(home.path(), &args).output().unwrap();
        assert!(output.status.success(), "{output:?}");
        std::fs::read_to_string(&config).unwrap()
    };
    let added = run(&[]);
    assert!(
        added.contains("// my servers") && added.contains("// mine"),
        "{added}"
    );
    let mut other = std::fs::read_to_string(&config).unwrap();
    other = other.replace("\"inputs\": []", "\"inputs\": [], \"after\": 1");
    std::fs::write(&config, &other).unwrap();
    let replaced = run(&["--profile", "weather"]);
    let examples = replaced.find("\"examples\"").unwrap();
    assert!(replaced.find("\"first\"").unwrap() < examples, "{replaced}");
    assert!(
        examples < replaced.find("\"inputs\"").unwrap(),
        "{replaced}"
    );
    assert!(replaced.contains("\"--profile\""), "{replaced}");
    let removed = run(&["--remove"]);
    assert!(!removed.contains("examples"), "{removed}");
    assert!(
        removed.contains("// my servers") && removed.contains("// mine"),
        "{removed}"
    );
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

    // Over a file that has the entry, the diff shows the lines that would change.
    let config = home.path().join(".codex/config.toml");
    let installed = install(home.path(), &["codex", "examples/tools"])
        .output()
        .unwrap();
    assert!(installed.status.success(), "{installed:?}");
    let before = std::fs::read_to_string(&config).unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(
            home.path(),
            &[
                "codex",
                "examples/tools",
                "--profile",
                "weather",
                "--name",
                "toolsmith-examples",
                "--dry-run"
            ],
        )
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

#[test]
fn a_client_without_project_files_says_so() {
    let home = tempfile::tempdir().unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(home.path(), &["windsurf", "examples/tools", "--project"])
    );
}

/// The clients `install --list --json` reports, in a temporary HOME.
fn listed(home: &Path, dir: &str) -> Vec<Value> {
    let report = json_output(&mut install(home, &["--list", dir, "--json"]));
    report["clients"].as_array().unwrap().clone()
}

/// A client's file read back without Toolsmith: JSON, TOML or YAML by its extension.
fn read_back(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => serde_json::to_value(text.parse::<toml::Table>().unwrap()).unwrap(),
        Some("yaml") => yaml_as_json(&yaml_edit::YamlValue::parse_raw(&text).unwrap()),
        _ => serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display())),
    }
}

fn yaml_as_json(value: &yaml_edit::YamlValue) -> Value {
    use yaml_edit::{ScalarType, YamlValue};
    match value {
        YamlValue::Scalar(scalar) => match scalar.scalar_type() {
            ScalarType::Boolean => scalar.to_bool().unwrap().into(),
            ScalarType::Integer => scalar.to_i64().unwrap().into(),
            _ => scalar.value().into(),
        },
        YamlValue::Sequence(items) => items.iter().map(yaml_as_json).collect(),
        YamlValue::Mapping(members) => members
            .iter()
            .map(|(key, value)| (key.clone(), yaml_as_json(value)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => panic!("unexpected YAML {other:?}"),
    }
}

/// The entry `name` under the client's key, a map of names or (Continue) a list.
fn entry_named<'a>(document: &'a Value, key: &str, name: &str) -> &'a Value {
    match &document[key] {
        Value::Array(items) => items.iter().find(|item| item["name"] == name).unwrap(),
        servers => &servers[name],
    }
}

/// Every client's file is written in a temporary HOME, read back
/// by a parser of its format, and the entry in it starts a server that answers.
#[test]
fn every_clients_file_is_written_read_back_and_runs_the_server() {
    let home = tempfile::tempdir().unwrap();
    let tools = folder(&[("greet.star", GREET)]);
    let dir = tools.path().to_str().unwrap();
    let clients = listed(home.path(), dir);
    assert!(clients.len() >= 26, "{clients:?}");
    let keys: [(&str, &str); 6] = [
        ("vscode", "servers"),
        ("visual-studio", "servers"),
        ("codex", "mcp_servers"),
        ("zed", "context_servers"),
        ("goose", "extensions"),
        ("opencode", "mcp"),
    ];
    for client in &clients {
        let id = client["client"].as_str().unwrap();
        let key = keys.iter().find(|(client, _)| *client == id).map_or(
            if id == "crush" { "mcp" } else { "mcpServers" },
            |(_, key)| key,
        );
        // Visual Studio has no user file on Linux: its project file, named.
        let path = match client["config"].as_str() {
            Some(path) => PathBuf::from(path),
            None => home.path().join(".mcp.json"),
        };
        assert!(path.starts_with(home.path()), "{id}: {}", path.display());
        let mut args = vec![id, dir, "--name", "greetings"];
        let named = path.to_str().unwrap();
        if client["config"].is_null() {
            args.extend(["--config", named]);
        }
        let output = install(home.path(), &args).output().unwrap();
        assert!(output.status.success(), "{id}: {output:?}");
        let document = read_back(&path);
        let entry = entry_named(&document, key, "greetings");
        assert_eq!(greet_through(entry), "Hello, Ada", "{id}: {entry}");
        if key == "extensions" || document[key].is_array() {
            assert_eq!(entry["name"], "greetings", "{id}");
        }
    }
    // Now `--list` finds the folder installed in every file it knows.
    for client in listed(home.path(), dir) {
        if client["config"].is_null() {
            continue;
        }
        assert_eq!(client["present"], true, "{client}");
        assert_eq!(client["installed"], json!(["greetings"]), "{client}");
    }
}

/// `install --list` shows every client, its file, whether it exists and
/// whether the folder is installed there.
#[test]
fn list_shows_every_client_its_file_and_whether_the_folder_is_there() {
    let home = tempfile::tempdir().unwrap();
    let filters = || install_filters(home.path(), None);
    let output = install(home.path(), &["claude-code", "examples/tools"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let cursor = home.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, r#"{"mcpServers": {"other": {"command": "x"}}}"#).unwrap();
    let gemini = home.path().join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(&gemini, "{ not json").unwrap();
    snapshot_filtered!(
        filters(),
        install(home.path(), &["--list", "examples/tools"])
    );
}

/// `--http URL` writes each client's own form for a URL server; the
/// token is written only when passed, and from `--auth-token-env` the file names the
/// variable.
#[test]
fn http_installs_a_url_server_in_the_clients_own_form() {
    let home = tempfile::tempdir().unwrap();
    let url = "https://tools.example.com/mcp";
    let report = json_output(&mut install(
        home.path(),
        &[
            "gemini",
            "--http",
            url,
            "--auth-token-env",
            "TOOLS_TOKEN",
            "--json",
        ],
    ));
    assert_eq!(report["name"], "tools-example-com");
    assert_eq!(
        report["entry"],
        json!({"httpUrl": url, "headers": {"Authorization": "Bearer ${TOOLS_TOKEN}"}})
    );
    let report = json_output(&mut install(
        home.path(),
        &[
            "codex",
            "--http",
            url,
            "--auth-token-env",
            "TOOLS_TOKEN",
            "--json",
        ],
    ));
    assert_eq!(
        report["entry"],
        json!({"url": url, "bearer_token_env_var": "TOOLS_TOKEN"})
    );
    let report = json_output(&mut install(
        home.path(),
        &[
            "opencode",
            "--http",
            url,
            "--auth-token",
            "s3cret",
            "--name",
            "remote",
            "--json",
        ],
    ));
    assert_eq!(
        report["entry"],
        json!({"type": "remote", "enabled": true, "url": url, "headers": {"Authorization": "Bearer s3cret"}})
    );
    // A client that cannot take it says why and what to do instead.
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(
            home.path(),
            &["kiro", "--http", url, "--auth-token-env", "TOOLS_TOKEN"]
        )
    );
}

/// `--profile NAME` puts `serve --profile NAME DIR` in the entry.
#[test]
fn a_profile_goes_into_the_entrys_arguments() {
    let home = tempfile::tempdir().unwrap();
    let report = json_output(&mut install(
        home.path(),
        &[
            "cursor",
            "examples/tools",
            "--profile",
            "weather",
            "--json",
            "--dry-run",
        ],
    ));
    let args = report["entry"]["args"].as_array().unwrap();
    assert_eq!(
        args[..3],
        [json!("serve"), json!("--profile"), json!("weather")]
    );
    assert!(
        args[3].as_str().unwrap().ends_with("examples/tools"),
        "{args:?}"
    );
}

/// An unknown client gets clap's error with a "did you mean".
#[test]
fn an_unknown_client_gets_a_suggestion() {
    let home = tempfile::tempdir().unwrap();
    snapshot_filtered!(
        install_filters(home.path(), None),
        install(home.path(), &["roo", "examples/tools"])
    );
}

/// Installing the same entry again leaves the file (and its `.toolsmith.bak`) alone.
#[test]
fn installing_the_same_entry_again_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let first = install(home.path(), &["kiro", "examples/tools"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{first:?}");
    let again = install(home.path(), &["kiro", "examples/tools"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("nothing to change"), "{said}");
    assert!(
        !home
            .path()
            .join(".kiro/settings/mcp.json.toolsmith.bak")
            .exists()
    );
}
