//! The official SDK clients through the gateway ("through Toolsmith, the official
//! Python and TypeScript SDK clients list and call them over stdio and HTTP; progress,
//! cancellation and sampling round-trip"). A folder with a prompt of its own serves
//! `@modelcontextprotocol/server-everything` as `[upstream.everything]`; the Python SDK
//! (`mcp`, in `.ci/sdk/.venv` from `.ci/sdk/requirements.txt`) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk`, in `.ci/upstreams`) each list and call its tools, get its
//! prompts (under the prefix) and the folder's own, read its resources and a template's
//! (under their own URIs), see a long call's progress and answer its sampling request.
//! Ignored unless run with `cargo test -- --include-ignored` (as `.ci/run` does, having
//! installed the clients and the server).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::serve_process::ServeProcess;
use crate::{require, workspace};

const OWN_PROMPT: &str = "---\ndescription: The folder's own prompt.\n---\nHello from the folder\n";

fn here(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/gateway_clients")
        .join(file)
}

/// The gateway's folder; the test fails without server-everything.
fn gateway() -> tempfile::TempDir {
    let entry = workspace()
        .join(".ci/upstreams/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    require(
        entry.is_file(),
        "server-everything (npm ci --prefix .ci/upstreams)",
    );
    crate::folder(&[
        (
            "toolsmith.toml",
            &format!(
                "[upstream.everything]\ncommand = [\"node\", {:?}, \"stdio\"]\n",
                entry.display().to_string()
            ),
        ),
        ("prompts/own.md", OWN_PROMPT),
    ])
}

/// The Python of `.ci/sdk/.venv` (or `TOOLSMITH_PYTHON_SDK`), which has the official
/// Python SDK and FastMCP; the test fails without it.
pub(crate) fn python_sdk() -> PathBuf {
    let python = std::env::var_os("TOOLSMITH_PYTHON_SDK").map_or_else(
        || workspace().join(".ci/sdk/.venv/bin/python"),
        PathBuf::from,
    );
    require(
        python.exists(),
        "the Python SDK and FastMCP (python3 -m venv .ci/sdk/.venv && .ci/sdk/.venv/bin/pip install -r .ci/sdk/requirements.txt)",
    );
    python
}

/// The client program of `sdk`; the test fails when it is not installed.
fn client(sdk: Sdk) -> Command {
    match sdk {
        Sdk::Python => {
            let mut command = Command::new(python_sdk());
            command.arg(here("py_client.py"));
            command
        }
        Sdk::TypeScript => {
            let modules = crate::typescript_sdk();
            let mut command = Command::new("node");
            command.env("NODE_PATH", modules).arg(here("ts_client.cjs"));
            command
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

/// Runs the client of `sdk` against the gateway, over stdio or at `url`.
fn drive(sdk: Sdk, http: bool) {
    let (dir, mut command) = (gateway(), client(sdk));
    let folder = dir.path().to_str().unwrap().to_owned();
    let server = http.then(|| ServeProcess::http(&[&folder], None));
    match &server {
        Some(server) => command.args(["--url", server.url()]),
        None => command.args([
            "--stdio",
            &format!(
                "{} serve {folder}",
                insta_cmd::get_cargo_bin("toolsmith").display()
            ),
        ]),
    };
    let output = command.env("NO_COLOR", "1").output().unwrap();
    assert!(
        output.status.success(),
        "{sdk:?} client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    check(sdk, &seen);
    if let Some(server) = server {
        server.stop();
    }
}

fn names(seen: &Value, key: &str) -> Vec<String> {
    seen[key]
        .as_array()
        .unwrap_or_else(|| panic!("no `{key}` in {seen}"))
        .iter()
        .map(|name| name.as_str().unwrap().to_owned())
        .collect()
}

fn first_text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn check(sdk: Sdk, seen: &Value) {
    let tools = names(seen, "tools");
    assert!(tools.contains(&"everything_echo".to_owned()), "{tools:?}");
    let expected = match sdk {
        Sdk::Python => "Echo: from python",
        Sdk::TypeScript => "Echo: from typescript",
    };
    assert_eq!(first_text(&seen["echo"]), expected, "{}", seen["echo"]);

    // Prompts: the upstream's under its prefix, next to the folder's own.
    let prompts = names(seen, "prompts");
    for name in ["everything_args-prompt", "everything_simple-prompt", "own"] {
        assert!(prompts.contains(&name.to_owned()), "{name} in {prompts:?}");
    }
    assert_eq!(
        seen["args_prompt"]["messages"][0]["content"]["text"], "What's weather in Oslo, Viken?",
        "prompts/get is forwarded with its arguments: {}",
        seen["args_prompt"]
    );
    assert_eq!(
        seen["own_prompt"]["messages"][0]["content"]["text"],
        "Hello from the folder"
    );

    // Resources and templates keep their URIs; reads are forwarded.
    let resources = names(seen, "resources");
    assert!(
        resources.contains(&"demo://resource/static/document/features.md".to_owned()),
        "{resources:?}"
    );
    assert_eq!(
        names(seen, "templates"),
        [
            "demo://resource/dynamic/blob/{resourceId}",
            "demo://resource/dynamic/text/{resourceId}"
        ]
    );
    let features = &seen["static"]["contents"][0];
    assert_eq!(
        features["uri"],
        "demo://resource/static/document/features.md"
    );
    assert_eq!(features["mimeType"], "text/markdown");
    assert!(
        features["text"]
            .as_str()
            .is_some_and(|text| text.contains("Features")),
        "{features}"
    );
    let dynamic = &seen["dynamic"]["contents"][0];
    assert_eq!(dynamic["uri"], "demo://resource/dynamic/text/7");
    assert!(
        dynamic["text"]
            .as_str()
            .is_some_and(|text| text.starts_with("Resource 7")),
        "{dynamic}"
    );

    // Progress and sampling cross the gateway both ways.
    assert!(
        first_text(&seen["long"]).contains("completed"),
        "{}",
        seen["long"]
    );
    let progress: Vec<f64> = seen["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0], "every step, in order");
    let sampled = match sdk {
        Sdk::Python => "sampled by the python client",
        Sdk::TypeScript => "sampled by the typescript client",
    };
    assert!(
        first_text(&seen["sampling"]).contains(sampled),
        "the upstream's sampling request reached the client: {}",
        seen["sampling"]
    );
}

#[test]
#[ignore = "needs server-everything (npm ci --prefix .ci/upstreams) and the Python SDK in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn python_sdk_uses_the_gateway_over_stdio() {
    drive(Sdk::Python, false);
}

#[test]
#[ignore = "needs server-everything (npm ci --prefix .ci/upstreams) and the Python SDK in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn python_sdk_uses_the_gateway_over_http() {
    drive(Sdk::Python, true);
}

#[test]
#[ignore = "needs server-everything and the TypeScript SDK: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn typescript_sdk_uses_the_gateway_over_stdio() {
    drive(Sdk::TypeScript, false);
}

#[test]
#[ignore = "needs server-everything and the TypeScript SDK: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn typescript_sdk_uses_the_gateway_over_http() {
    drive(Sdk::TypeScript, true);
}

/// Writes its parent's pid (the inner `toolsmith serve`) and its own to `pidfile`, then
/// sleeps far longer than any test waits.
const LINGER: &str = r#"description = "Lingers for five minutes, after writing the pids a test needs."
command = ["sh", "-c", "echo $PPID $$ > \"$0\"; sleep 300", "{pidfile}"]
timeout = "10m"

[[parameters]]
name = "pidfile"
type = "string"
description = "Where to write the pids."
required = true
"#;

/// A real upstream (docs/gateway.md, "Tests"): the Python SDK answers the form server-everything's
/// `trigger-elicitation-request` asks through the gateway, and cancels a proxied call the
/// way its users do (cancelling the task that waits for it), which stops the tool running
/// in the upstream (an inner Toolsmith whose `linger` tool writes its pids).
#[test]
#[ignore = "needs server-everything (npm ci --prefix .ci/upstreams) and the Python SDK in .ci/sdk/.venv (CI runs it: cargo test -- --include-ignored)"]
fn python_sdk_answers_an_upstreams_elicitation_and_cancels_a_proxied_call() {
    let (gateway, python) = (gateway(), python_sdk());
    let fixture = crate::upstreams::Fixture::new("");
    fixture.write("inner/linger.toml", LINGER);
    let config = std::fs::read_to_string(gateway.path().join("toolsmith.toml")).unwrap();
    fixture.write(
        "outer/toolsmith.toml",
        &format!(
            "{config}\n[upstream.inner]\ncommand = [{:?}, \"serve\", {:?}]\n",
            insta_cmd::get_cargo_bin("toolsmith").display().to_string(),
            fixture.path("inner").display().to_string()
        ),
    );
    let pidfile = fixture.path("pids");
    let output = Command::new(python)
        .arg(here("py_elicit_cancel.py"))
        .args([
            "--stdio",
            &format!(
                "{} serve {}",
                insta_cmd::get_cargo_bin("toolsmith").display(),
                fixture.outer()
            ),
            "--pidfile",
            pidfile.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the Python client failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        seen["asked"],
        serde_json::json!(["Please provide inputs for the following fields:"]),
        "{seen}"
    );
    let elicited = seen["elicited"]["content"].to_string();
    assert!(
        elicited.contains("User provided the requested information")
            && elicited.contains("Ada Lovelace"),
        "the client's answer reached the upstream: {elicited}"
    );
    // The tool sleeps for five minutes unless the cancellation stopped it.
    let pids = crate::upstreams::wait_for_pids(&pidfile);
    crate::upstreams::wait_until_gone(pids[1]);
    assert_eq!(
        first_text(&seen["after"]),
        "Echo: after the cancel",
        "the session goes on: {seen}"
    );
}
