//! `toolsmith bundle`: the `.mcpb` it writes checked by the official MCPB CLI
//! (`@anthropic-ai/mcpb`, pinned in `.ci/mcpb`), unpacked and started from its own
//! `mcp_config` where Toolsmith is not installed, and its `server.json` validated against
//! the MCP registry's schema (a copy in `bundle/`, with the commit it came from).
//!
//! An author had no way to hand a tools folder to anyone.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::serve_process::ServeProcess;
use crate::{folder, require, toolsmith, workspace};

/// A 1×1 PNG: `mcpb validate` reads the icon's signature.
const ICON: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x00, 0x02, 0x00,
    0x00, 0x05, 0x00, 0x01, 0x7a, 0x5e, 0xab, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

/// A small Linux executable in place of `toolsmith`, for the tests that never start the
/// bundle: deflating a debug build's ~150 MB is most of a test's time.
const SMALL_BINARY: &str = "/bin/true";

const CONFIG: &str = r#"
[server]
name = "weather-tools"
title = "Weather tools"
registry_name = "io.github.acme/weather-tools"
version = "1.2.3"
description = "Weather forecasts for any city."
author = "Ada Lovelace <ada@example.com>"
website = "https://example.com/weather"
repository = "https://github.com/acme/weather-tools"
icon = "icon.png"
"#;

/// A tool that needs a key (hidden without it) and may read a city, and answers with both.
const TOOL: &str = r#"
def weather_key_echo() -> dict:
    """Show which key and city the server was given.

    Use this tool to check the bundle's configuration.
    """
    return {"key": mcp.getenv("WEATHER_API_KEY", ""), "city": mcp.getenv("WEATHER_CITY", "none")}

mcp.tool(weather_key_echo, read_only=True,
         requires={"env": ["WEATHER_API_KEY"]},
         permissions={"env": ["WEATHER_API_KEY", "WEATHER_CITY"]})
"#;

/// The weather folder, with a `.git`, files that look like secrets and one `.mcpbignore`
/// leaves out.
fn weather_folder() -> tempfile::TempDir {
    let dir = folder(&[
        ("toolsmith.toml", CONFIG),
        ("weather.star", TOOL),
        (".env", "WEATHER_API_KEY=do-not-ship\n"),
        ("keys/server.pem", "-----BEGIN PRIVATE KEY-----\n"),
        (".git/config", "[core]\n"),
        ("notes/draft.md", "not for users\n"),
        (".mcpbignore", "# drafts stay home\nnotes/\n"),
        ("README.md", "# Weather tools\n"),
    ]);
    std::fs::write(dir.path().join("icon.png"), ICON).unwrap();
    dir
}

/// `toolsmith bundle ARGS` with the key set (the tool is hidden without it), which must
/// succeed without a warning about `toolsmith.toml` (every `[server]` key the bundle reads
/// is one the folder loader knows); its `--json` report.
fn bundle(args: &[&str]) -> Value {
    let output = toolsmith()
        .arg("bundle")
        .args(args)
        .arg("--json")
        .env("WEATHER_API_KEY", "author-key")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("invalid-config"), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The names of the files in a zip archive.
fn archive_names(path: &Path) -> BTreeSet<String> {
    let archive = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    archive
        .file_names()
        .map(|name| name.unwrap().into_owned())
        .collect()
}

/// The MCPB CLI of `.ci/mcpb`; the test fails without it.
fn mcpb_cli() -> PathBuf {
    let cli = workspace().join(".ci/mcpb/node_modules/.bin/mcpb");
    require(cli.is_file(), "the MCPB CLI (npm ci --prefix .ci/mcpb)");
    cli
}

/// Runs the MCPB CLI, which must succeed; what it printed.
fn mcpb(cli: &Path, args: &[&str]) -> String {
    let output = Command::new(cli).args(args).output().unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "mcpb {args:?}:\n{printed}");
    printed
}

/// `${__dirname}` and `${user_config.NAME}` replaced, as a client does when it starts the
/// bundle.
fn substitute(text: &str, dirname: &Path, user_config: &Value) -> String {
    let mut text = text.replace("${__dirname}", &dirname.display().to_string());
    if let Some(values) = user_config.as_object() {
        for (name, value) in values {
            text = text.replace(&format!("${{user_config.{name}}}"), value.as_str().unwrap());
        }
    }
    text
}

/// The whole path: bundle a folder, check it with the official CLI, unpack it, start it
/// from its manifest where no `toolsmith` is on `PATH` and `HOME` is empty, and call its
/// tool with a `user_config` value that reaches it as its environment variable.
#[test]
#[ignore = "needs the MCPB CLI: npm ci --prefix .ci/mcpb (CI runs it: cargo test -- --include-ignored)"]
fn a_bundle_runs_from_its_manifest_where_toolsmith_is_not_installed() {
    let cli = mcpb_cli();
    let tools = weather_folder();
    let out = tempfile::tempdir().unwrap();
    let bundle_path = out.path().join("weather.mcpb");
    let url = "https://github.com/acme/weather-tools/releases/download/v1.2.3/weather.mcpb";
    let report = bundle(&[
        tools.path().to_str().unwrap(),
        "-o",
        bundle_path.to_str().unwrap(),
        "--server-json",
        "--url",
        url,
    ]);
    assert_eq!(report["tools"], json!(["weather_key_echo"]));

    // What went in: the folder under tools/, never .git, secrets or what .mcpbignore names.
    let names = archive_names(&bundle_path);
    for name in [
        "manifest.json",
        "server/toolsmith",
        "tools/weather.star",
        "tools/icon.png",
    ] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    for name in [".env", "server.pem", ".git", "notes/", ".mcpbignore"] {
        assert!(
            !names.iter().any(|bundled| bundled.contains(name)),
            "{name} was bundled: {names:?}"
        );
    }
    assert_eq!(report["left_out"], json!([".env", "keys/server.pem"]));

    let info = mcpb(&cli, &["info", bundle_path.to_str().unwrap()]);
    assert!(info.contains("weather.mcpb"), "{info}");
    let unpacked = out.path().join("unpacked");
    mcpb(
        &cli,
        &[
            "unpack",
            bundle_path.to_str().unwrap(),
            unpacked.to_str().unwrap(),
        ],
    );
    let validated = mcpb(&cli, &["validate", unpacked.to_str().unwrap()]);
    assert!(validated.contains("passes"), "{validated}");

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(unpacked.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["manifest_version"], "0.4");
    assert_eq!(manifest["name"], "weather-tools");
    assert_eq!(manifest["version"], "1.2.3");
    assert_eq!(manifest["display_name"], "Weather tools");
    assert_eq!(manifest["homepage"], "https://example.com/weather");
    assert_eq!(
        manifest["author"],
        json!({"name": "Ada Lovelace", "email": "ada@example.com"})
    );
    assert_eq!(manifest["server"]["type"], "binary");
    assert_eq!(manifest["compatibility"]["platforms"], json!(["linux"]));
    let key = &manifest["user_config"]["WEATHER_API_KEY"];
    assert_eq!(key["sensitive"], true, "{manifest:#}");
    assert_eq!(key["required"], true, "{manifest:#}");
    let city = &manifest["user_config"]["WEATHER_CITY"];
    assert!(city.get("sensitive").is_none(), "{manifest:#}");
    assert_eq!(city["required"], false, "{manifest:#}");

    // Started the way a client starts it, with the user's answers.
    let answers = json!({"WEATHER_API_KEY": "users-key", "WEATHER_CITY": "Oslo"});
    let home = tempfile::tempdir().unwrap();
    let command = from_manifest(&manifest, &unpacked, &answers, home.path());
    let mut server = ServeProcess::spawn(command);
    server.initialize();
    assert_eq!(server.tool_names(), ["weather_key_echo"]);
    let result = server.request(
        "tools/call",
        &json!({"name": "weather_key_echo", "arguments": {}}),
    );
    assert_eq!(
        result["result"]["structuredContent"],
        json!({"key": "users-key", "city": "Oslo"}),
        "{result:#}"
    );

    // The registry entry: valid against the registry's schema, naming this very file.
    check_server_json(
        &out.path().join("server.json"),
        &bundle_path,
        url,
        &manifest,
    );
}

/// The command a client runs for an unpacked bundle, from its `mcp_config`, with the user's
/// `answers`, no `toolsmith` on `PATH` and `home` (empty) as `HOME`.
fn from_manifest(manifest: &Value, unpacked: &Path, answers: &Value, home: &Path) -> Command {
    let config = &manifest["server"]["mcp_config"];
    let program = substitute(config["command"].as_str().unwrap(), unpacked, answers);
    let mut command = Command::new(program);
    command
        .args(
            config["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|arg| substitute(arg.as_str().unwrap(), unpacked, answers)),
        )
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .current_dir(home);
    for (name, value) in config["env"].as_object().unwrap() {
        command.env(name, substitute(value.as_str().unwrap(), unpacked, answers));
    }
    command
}

/// `server.json` is valid against the registry's schema and names `bundle` at `url` by its
/// hash, with the manifest's `user_config` as its environment variables.
fn check_server_json(path: &Path, bundle: &Path, url: &str, manifest: &Value) {
    let entry: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(include_str!("bundle/server.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&entry)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{entry:#}");
    assert_eq!(entry["name"], "io.github.acme/weather-tools");
    assert_eq!(entry["websiteUrl"], "https://example.com/weather");
    let package = &entry["packages"][0];
    assert_eq!(package["registryType"], "mcpb");
    assert_eq!(package["identifier"], url);
    assert_eq!(package["fileSha256"], sha256(bundle));
    assert_eq!(package["transport"], json!({"type": "stdio"}));
    let key = &manifest["user_config"]["WEATHER_API_KEY"];
    let city = &manifest["user_config"]["WEATHER_CITY"];
    assert_eq!(
        package["environmentVariables"],
        json!([
            {"name": "WEATHER_API_KEY", "description": key["description"], "isRequired": true, "isSecret": true},
            {"name": "WEATHER_CITY", "description": city["description"], "isRequired": false, "isSecret": false},
        ])
    );
}

fn sha256(path: &Path) -> String {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    Sha256::digest(&bytes)
        .iter()
        .fold(String::new(), |mut hex, byte| {
            write!(hex, "{byte:02x}").unwrap();
            hex
        })
}

/// A folder with a broken file is refused with the file's diagnostic, and bundled with
/// each error listed under `--allow-errors`: a client would only have shown missing tools.
#[test]
fn a_folder_with_load_errors_is_refused_unless_allowed() {
    let tools = folder(&[
        (
            "toolsmith.toml",
            "[server]\nname = \"x\"\nversion = \"1.0.0\"\ndescription = \"x\"\nauthor = \"x\"\n",
        ),
        ("broken.star", "def broken(:\n"),
    ]);
    let out = tempfile::tempdir().unwrap();
    let bundle_path = out.path().join("x.mcpb");
    let refused = toolsmith()
        .args([
            "bundle",
            tools.path().to_str().unwrap(),
            "--binary",
            SMALL_BINARY,
            "-o",
        ])
        .arg(&bundle_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("broken.star"), "{stderr}");
    assert!(stderr.contains("1 load error; not bundled"), "{stderr}");
    assert!(stderr.contains("--allow-errors"), "{stderr}");
    assert!(!bundle_path.exists());

    let allowed = toolsmith()
        .args(["bundle", tools.path().to_str().unwrap(), "--allow-errors"])
        .args(["--binary", SMALL_BINARY, "-o"])
        .arg(&bundle_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&allowed.stderr);
    assert!(allowed.status.success(), "{stderr}");
    assert!(stderr.contains("bundled with a load error: "), "{stderr}");
    assert!(stderr.contains("broken.star"), "{stderr}");
    assert!(bundle_path.is_file());
}

/// `.env` and key files stay out unless `--include` names them, and a `[server]` without
/// the manifest's keys gets them derived, each with a warning, never silently.
#[test]
fn secrets_need_include_and_missing_keys_are_derived_with_a_warning() {
    let tools = folder(&[
        (
            "hello.star",
            "def hello() -> str:\n    \"\"\"Say hello.\"\"\"\n    return \"hi\"\n\nmcp.tool(hello)\n",
        ),
        (".env", "TOKEN=x\n"),
        ("deploy/id_ed25519", "key\n"),
    ]);
    let out = tempfile::tempdir().unwrap();
    let bundle_path = out.path().join("hello.mcpb");
    let output = toolsmith()
        .args([
            "bundle",
            tools.path().to_str().unwrap(),
            "--include",
            ".env",
        ])
        .args(["--binary", SMALL_BINARY, "-o"])
        .arg(&bundle_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for key in ["name", "version", "description", "author"] {
        assert!(
            stderr.contains(&format!("warning: `[server] {key}` is not set")),
            "{key}: {stderr}"
        );
    }
    assert!(stderr.contains("left out `deploy/id_ed25519`"), "{stderr}");
    let names = archive_names(&bundle_path);
    assert!(names.contains("tools/.env"), "{names:?}");
    assert!(!names.contains("tools/deploy/id_ed25519"), "{names:?}");
}

/// A tool hidden where the author bundles (a variable it `requires` is not set there) is
/// still bundled and its variable still asked of the user: the user's machine is the one
/// that must have it.
#[test]
fn a_tool_hidden_for_the_author_is_bundled_with_its_variable() {
    let tools = folder(&[(
        "deploy.star",
        "def deploy_site() -> str:\n    \"\"\"Deploy the site.\"\"\"\n    return mcp.getenv(\"DEPLOY_TOKEN\", \"\")\n\nmcp.tool(deploy_site, requires={\"env\": [\"DEPLOY_TOKEN\"]}, permissions={\"env\": [\"DEPLOY_TOKEN\"]})\n",
    )]);
    let out = tempfile::tempdir().unwrap();
    let output = toolsmith()
        .args(["bundle", tools.path().to_str().unwrap(), "--json"])
        .args(["--binary", SMALL_BINARY, "-o"])
        .arg(out.path().join("deploy.mcpb"))
        .env_remove("DEPLOY_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("tool `deploy_site` is hidden: environment variable `DEPLOY_TOKEN` is not set; it is bundled"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["tools"], json!(["deploy_site"]));
    assert_eq!(report["user_config"], json!(["DEPLOY_TOKEN"]));
}
