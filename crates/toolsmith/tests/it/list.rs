//! `toolsmith list`.

use serde_json::{Value, json};

use crate::{folder, json_output, snapshot, toolsmith};

#[test]
fn lists_the_bundled_examples() {
    let mut command = toolsmith();
    command.args(["list", "examples/tools"]);
    insta_cmd::assert_cmd_snapshot!(command);
}

#[test]
fn json_publishes_mcp_tool_objects_and_errors() {
    let listed = json_output(toolsmith().args(["list", "examples/tools", "--json"]));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "add",
        "calendar_month",
        "chart_bar",
        "forecast_get",
        "git_log",
        "hello",
        "process_list",
        "text_slugify",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "tools/list order is by name");
    assert_eq!(listed["errors"], json!([]));
    let forecast = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "forecast_get")
        .unwrap();
    assert_eq!(
        forecast["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(forecast["inputSchema"]["properties"]["days"]["maximum"], 7);
}

#[test]
fn broken_files_are_reported_and_the_rest_still_loads() {
    let dir = folder(&[
        (
            "good.star",
            "def ping() -> str:\n    \"\"\"Answer pong.\"\"\"\n    return \"pong\"\n\nmcp.tool(ping)\n",
        ),
        ("broken.star", "def oops(:\n    pass\n"),
        (
            "typo.toml",
            "description = \"Typo.\"\n[[parameters]]\nname = \"n\"\ntype = \"integr\"\n",
        ),
        ("typo.star", "tool.return_string(\"x\")\n"),
    ]);
    let mut command = toolsmith();
    command.arg("list").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn json_errors_carry_path_line_and_column() {
    let dir = folder(&[("broken.star", "x = 1\ndef oops(:\n    pass\n")]);
    let output = toolsmith()
        .arg("list")
        .arg(dir.path())
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let error = &listed["errors"][0];
    assert!(error["path"].as_str().unwrap().ends_with("broken.star"));
    assert_eq!(error["line"], 2);
    assert!(error["column"].as_u64().unwrap() > 0);
    assert!(!error["message"].as_str().unwrap().is_empty());
}

#[test]
fn missing_default_folder_says_how_to_start() {
    let dir = folder(&[]);
    let mut command = toolsmith();
    command.arg("list").current_dir(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn json_reports_token_costs_and_the_search_decision() {
    let output = toolsmith()
        .args(["list", "examples/tools", "--json", "--search", "always"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let search = &listed["search"];
    assert_eq!(search["mode"], "always");
    assert_eq!(search["all_behind_search"], true);
    assert_eq!(search["encoding"], "o200k_base");
    let per_tool = search["tokens"].as_object().unwrap();
    assert_eq!(per_tool.len(), listed["tools"].as_array().unwrap().len());
    let sum: u64 = per_tool.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(search["total_tokens"], json!(sum));
    // `hello`'s definition is a few dozen tokens, not a character count.
    let hello = per_tool["hello"].as_u64().unwrap();
    assert!((20..120).contains(&hello), "{hello}");
}

// `list` shows which tools have an init, shared ones once, and whether it
// has run in this process (never, for `list`); `--json` carries the same.
const INIT_FOLDER: &[(&str, &str)] = &[
    (
        "model.star",
        "def setup():\n    return \"loaded\"\n\ndef embed(text: str) -> str:\n    \"\"\"Embed text.\"\"\"\n    return text\n\ndef classify(text: str) -> str:\n    \"\"\"Classify text.\"\"\"\n    return text\n\nmcp.tool(embed, init = setup)\nmcp.tool(classify, init = setup)\n",
    ),
    (
        "transcribe.toml",
        "description = \"Transcribe audio.\"\ncommand = [\"echo\", \"done\"]\ninit = [\"python3\", \"download_model.py\"]\ninit_timeout = \"2m\"\n",
    ),
];

#[test]
fn tools_with_an_init_are_listed_with_its_state() {
    let dir = folder(INIT_FOLDER);
    let mut command = toolsmith();
    command.arg("list").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn json_lists_each_init_with_its_tools_and_state() {
    let dir = folder(INIT_FOLDER);
    let listed = json_output(toolsmith().arg("list").arg(dir.path()).arg("--json"));
    assert_eq!(
        listed["inits"],
        json!([
            {"init": "setup", "kind": "function", "tools": ["classify", "embed"], "timeout": "60s", "state": "not run"},
            {"init": "python3 download_model.py", "kind": "command", "tools": ["transcribe"], "timeout": "120s", "state": "not run"},
        ])
    );
}

/// A folder with a tool named as clients refuse (`name = "my shout"`), a manifest whose
/// file stem has a space, and a good tool.
fn refused_names() -> tempfile::TempDir {
    folder(&[
        (
            "voice.star",
            "def shout(text: str) -> str:\n    \"\"\"Shout text back.\n\n    Args:\n        text: What to shout.\n    \"\"\"\n    return text.upper()\n\ndef whisper(text: str) -> str:\n    \"\"\"Whisper text back.\n\n    Args:\n        text: What to whisper.\n    \"\"\"\n    return text.lower()\n\nmcp.tool(shout, name = \"my shout\")\nmcp.tool(whisper)\n",
        ),
        (
            "say hello.toml",
            "description = \"Say hello.\"\ncommand = [\"echo\", \"hello\"]\n",
        ),
    ])
}

#[test]
fn names_clients_reject_are_not_listed_and_the_rest_are() {
    // A tool named `my shout` was listed and served, and some clients then rejected the
    // whole server; `check` flagged it but `list` and `serve` did not.
    let dir = refused_names();
    let mut command = toolsmith();
    command.arg("list").arg(dir.path());
    snapshot!(dir.path(), command);
}

#[test]
fn names_clients_reject_are_not_served_and_the_rest_are() {
    let dir = refused_names();
    let client = crate::mcp_client::McpClient::stdio(&[dir.path().to_str().unwrap()]);
    assert_eq!(client.tool_names(), ["whisper"]);
    assert_eq!(client.call_text("whisper", &json!({"text": "HI"})), "hi");
    let refused = client
        .try_call("my shout", &json!({"text": "hi"}))
        .unwrap_err();
    assert!(
        refused.contains("tool name `my shout` contains ' '"),
        "{refused}"
    );
}

/// `toolsmith ARGS` as a process that file permissions bind: as itself, or, run as root,
/// with its capabilities dropped by `setpriv` (root reads any folder otherwise). `None` when
/// neither can be had.
fn bound_by_permissions(args: &[&std::ffi::OsStr]) -> Option<std::process::Command> {
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.starts_with(b"0\n"));
    if !root {
        let mut command = toolsmith();
        command.args(args);
        return Some(command);
    }
    let setpriv = std::process::Command::new("setpriv")
        .args(["--inh-caps=-all", "--bounding-set=-all", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !setpriv {
        return None;
    }
    let plain = toolsmith();
    let mut command = std::process::Command::new("setpriv");
    command
        .args(["--inh-caps=-all", "--bounding-set=-all"])
        .arg(plain.get_program())
        .args(args);
    for (name, value) in plain.get_envs() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    Some(command)
}

#[test]
fn an_unreadable_subfolder_and_a_latin1_file_cost_only_themselves() {
    // A subfolder without read permission stopped the whole folder (exit 2, naming the
    // top folder), and a Latin-1 file said only "stream did not contain valid UTF-8".
    use std::os::unix::fs::PermissionsExt as _;
    let dir = folder(&[
        (
            "ping.star",
            "def ping() -> str:\n    \"\"\"Answer pong.\"\"\"\n    return \"pong\"\n\nmcp.tool(ping)\n",
        ),
        (
            "locked/pong.star",
            "def pong() -> str:\n    \"\"\"Answer ping.\"\"\"\n    return \"ping\"\n\nmcp.tool(pong)\n",
        ),
    ]);
    std::fs::write(
        dir.path().join("latin.star"),
        b"def cafe() -> str:\n    \"\"\"Caf\xe9.\"\"\"\n    return \"x\"\n\nmcp.tool(cafe)\n",
    )
    .unwrap();
    let locked = dir.path().join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let args = [std::ffi::OsStr::new("list"), dir.path().as_os_str()];
    let Some(mut command) = bound_by_permissions(&args) else {
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!("skipped: run as root without `setpriv`, no folder is unreadable");
        return;
    };
    let output = command.output().unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr =
        String::from_utf8_lossy(&output.stderr).replace(&*dir.path().to_string_lossy(), "[DIR]");
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("ping"), "{stdout}");
    insta::assert_snapshot!(stderr);
}
