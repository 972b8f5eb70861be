//! Lazy initialization over a real transport: a tool's `init` runs once
//! however many first calls arrive together, its value reaches later calls, a failing init
//! is the call's error and runs again on the next call; and a tool hidden by `requires`
//! says why when it is called.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_model::InitStatus;
use toolsmith_server::ServerState;

use crate::{call, folder, state_for, stdio_client, text};

/// How long a test waits for what it waits for before failing; never reached when the
/// server behaves.
const PATIENCE: Duration = Duration::from_mins(1);

/// `setup` records each run in `runs/` and holds until the test creates `gate`, so every
/// first call arrives while it runs; `embed` and `classify` share it.
const STARLARK_INIT: &str = r#"
def setup():
    runs = mcp.list_dir("runs")
    mcp.write_file("runs/run-" + str(len(runs)), "ran")
    for i in range(10000000):
        if "gate" in mcp.list_dir("."):
            break
    return {"model": "tiny", "runs_before": len(runs)}

def embed(text: str) -> dict:
    """Embed text."""
    return {"text": text, "init": mcp.init_value()}

def classify(text: str) -> dict:
    """Classify text."""
    return {"label": "positive", "init": mcp.init_value()}

PERMISSIONS = {"fs.read": ["."], "fs.write": ["runs"]}

mcp.tool(embed, init = setup, init_timeout = "50s", permissions = PERMISSIONS)
mcp.tool(classify, init = setup, init_timeout = "50s", permissions = PERMISSIONS)
"#;

/// The same for two manifests naming one command.
const COMMAND_INIT: &str = r#"
echo ran >> runs.log
while [ ! -f gate ]; do sleep 0.02; done
echo '{"model": "tiny"}'
"#;

fn manifest(description: &str) -> String {
    format!(
        "description = \"{description}\"\ncommand = [\"echo\", \"done\"]\ninit = [\"sh\", \"setup.sh\"]\ninit_timeout = \"50s\"\n"
    )
}

/// Sends 8 calls at once, alternating between `tools` (with `arguments`); waits until all 8 are in the
/// server with the init running for one and the other 7 waiting for it; then opens the
/// gate and returns the results.
async fn eight_first_calls(
    state: &ServerState,
    dir: &Path,
    tools: [&'static str; 2],
    arguments: Value,
) -> Vec<rmcp::model::CallToolResult> {
    let client = stdio_client(state.clone()).await;
    let calls: Vec<_> = (0..8)
        .map(|index| {
            let peer = client.peer().clone();
            let request = call(tools[index % 2], arguments.clone());
            tokio::spawn(async move { peer.call_tool(request).await.unwrap() })
        })
        .collect();
    let catalog = state.catalog();
    let entry = catalog.get(tools[0]).unwrap();
    let arrived = tokio::time::timeout(PATIENCE, async {
        while entry.init_status() != Some(InitStatus::Running { waiting: 7 }) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        arrived.is_ok(),
        "8 calls did not arrive while one ran the init: {:?}",
        entry.init_status()
    );
    std::fs::write(dir.join("gate"), "").unwrap();
    let mut results = Vec::new();
    for call in calls {
        results.push(
            tokio::time::timeout(PATIENCE, call)
                .await
                .expect("every call is answered")
                .unwrap(),
        );
    }
    results
}

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{}", text(result));
    result.structured_content.clone().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starlark_init_runs_once_under_eight_concurrent_first_calls() {
    let dir = folder(&[("model.star", STARLARK_INIT)]);
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    let state = state_for(dir.path(), 16);
    let results = eight_first_calls(
        &state,
        dir.path(),
        ["embed", "classify"],
        json!({"text": "hi"}),
    )
    .await;
    for result in &results {
        assert_eq!(
            structured(result)["init"],
            json!({"model": "tiny", "runs_before": 0})
        );
    }
    let runs = std::fs::read_dir(dir.path().join("runs")).unwrap().count();
    assert_eq!(runs, 1, "the init ran {runs} times");
    let catalog = state.catalog();
    assert_eq!(
        catalog.get("classify").unwrap().init_status(),
        Some(InitStatus::Ready)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_init_runs_once_under_eight_concurrent_first_calls() {
    let dir = folder(&[
        ("setup.sh", COMMAND_INIT),
        ("transcribe.toml", &manifest("Transcribe audio.")),
        ("translate.toml", &manifest("Translate text.")),
    ]);
    let state = state_for(dir.path(), 16);
    let results =
        eight_first_calls(&state, dir.path(), ["transcribe", "translate"], json!({})).await;
    for result in &results {
        assert_eq!(result.is_error, Some(false), "{}", text(result));
        assert_eq!(text(result), "done");
    }
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    assert_eq!(runs, "ran\n", "the init ran {} times", runs.lines().count());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_init_fails_the_call_and_recovers_on_the_next() {
    let source = r#"
def setup():
    if "model.bin" not in mcp.list_dir("."):
        fail("the model is not downloaded yet")
    return "model.bin"

def embed(text: str) -> str:
    """Embed text."""
    return text + " with " + mcp.init_value()

mcp.tool(embed, init = setup, permissions = {"fs.read": ["."]})
"#;
    // Run by `sh`, not executed: a script just written may be busy (ETXTBSY) while
    // another test forks.
    let script = "test -f model.bin || { echo 'no model.bin yet' >&2; exit 3; }\n";
    let dir = folder(&[
        ("model.star", source),
        ("fetch.sh", script),
        (
            "transcribe.toml",
            "description = \"Transcribe audio.\"\ncommand = [\"echo\", \"done\"]\ninit = [\"sh\", \"fetch.sh\"]\n",
        ),
    ]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let arguments = || json!({"text": "hi"});

    let failed = client.call_tool(call("embed", arguments())).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(
        message.starts_with(
            "tool `embed` did not run: its init `setup` failed (the next call runs it again): "
        ) && message.contains("the model is not downloaded yet"),
        "{message}"
    );
    let failed = client
        .call_tool(call("transcribe", json!({})))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(
        message.contains("its init `sh fetch.sh` failed") && message.contains("no model.bin yet"),
        "{message}"
    );

    std::fs::write(dir.path().join("model.bin"), "weights").unwrap();
    let recovered = client.call_tool(call("embed", arguments())).await.unwrap();
    assert_eq!(recovered.is_error, Some(false), "{}", text(&recovered));
    assert_eq!(text(&recovered), "hi with model.bin");
    let recovered = client
        .call_tool(call("transcribe", json!({})))
        .await
        .unwrap();
    assert_eq!(recovered.is_error, Some(false), "{}", text(&recovered));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_hidden_by_requires_says_why_when_called() {
    let source = r#"
def trim(text: str) -> str:
    """Trim a video."""
    return text

mcp.tool(trim, requires = {"commands": ["toolsmith-test-missing-program", "sh"]})
"#;
    let dir = folder(&[("trim.star", source)]);
    let client = stdio_client(state_for(dir.path(), 8)).await;
    let error = client
        .call_tool(call("trim", json!({"text": "x"})))
        .await
        .unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "tool `trim` is hidden: program `toolsmith-test-missing-program` is not on `PATH`"
    );
}
