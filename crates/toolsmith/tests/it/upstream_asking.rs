//! An upstream that asks the client something while it answers `prompts/get` or
//! `resources/read` ("an upstream's sampling, elicitation and roots
//! requests are forwarded to the client, and answered in either protocol era"). The
//! upstream (`upstream_asking/server.cjs`, on the official TypeScript SDK) elicits the
//! user's name for its prompt and samples a line for its resource. A 2025-11-25 client over
//! stdio is asked live; a 2026-07-28 request over HTTP gets `input_required`, answers, and
//! retries. Ignored unless run with `cargo test -- --include-ignored`, which needs
//! `npm ci --prefix .ci/upstreams`.

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::workspace;

/// A folder serving the asking upstream as `[upstream.asking]`.
fn gateway() -> tempfile::TempDir {
    let modules = crate::typescript_sdk();
    let server = workspace().join("crates/toolsmith/tests/it/upstream_asking/server.cjs");
    crate::folder(&[(
        "toolsmith.toml",
        &format!(
            "[upstream.asking]\ncommand = [\"node\", {:?}]\nenv = {{ NODE_PATH = {:?} }}\n",
            server.display().to_string(),
            modules.display().to_string()
        ),
    )])
}

/// The answer to the request `id` (not a request of the server's with the same id).
fn answer_to(server: &ServeProcess, id: u64) -> Value {
    server.until(|message| message["id"] == id && message.get("method").is_none())
}

#[test]
#[ignore = "needs the TypeScript SDK: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn a_2025_client_is_asked_live_what_the_upstream_asks() {
    let dir = gateway();
    let mut server = ServeProcess::stdio(&[dir.path().to_str().unwrap()]);
    server.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "asking-test", "version": "1"}}}),
    );
    answer_to(&server, 0);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let id = server.send_request("prompts/get", &json!({"name": "asking_introduce"}));
    let asked = server.until(|message| message["method"] == "elicitation/create");
    assert_eq!(asked["params"]["message"], "What is your name?", "{asked}");
    server.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}}));
    let prompt = answer_to(&server, id);
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"], "Please greet Ada.",
        "{prompt}"
    );

    let id = server.send_request("resources/read", &json!({"uri": "asking://haiku"}));
    let asked = server.until(|message| message["method"] == "sampling/createMessage");
    server.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "leaves fall"},
        "model": "test-model"}}));
    let read = answer_to(&server, id);
    assert_eq!(
        read["result"]["contents"][0]["text"], "sampled: leaves fall",
        "{read}"
    );
}

/// One stateless 2026-07-28 request of a client that can elicit and sample.
fn post_2026(server: &ServeProcess, method: &str, name: &str, params: &Value) -> Value {
    let capabilities = json!({"elicitation": {}, "sampling": {}});
    let (status, answer) = server.post_2026(None, &capabilities, (method, name), params);
    assert_eq!(status, 200, "{answer}");
    answer
}

/// The one request an `input_required` result asks: its key and the request.
fn asked(answer: &Value) -> (String, Value) {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let requests = result["inputRequests"].as_object();
    let (key, request) = requests
        .and_then(|requests| requests.iter().next())
        .unwrap_or_else(|| panic!("one input request: {answer}"));
    (key.clone(), request.clone())
}

#[test]
#[ignore = "needs the TypeScript SDK: npm ci --prefix .ci/upstreams (CI runs it: cargo test -- --include-ignored)"]
fn a_2026_request_gets_input_required_and_its_retry_the_upstreams_answer() {
    let dir = gateway();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);

    let name = "asking_introduce";
    let first = post_2026(&server, "prompts/get", name, &json!({"name": name}));
    let (key, request) = asked(&first);
    assert_eq!(request["method"], "elicitation/create", "{first}");
    assert_eq!(
        request["params"]["message"], "What is your name?",
        "{first}"
    );
    let retry = post_2026(
        &server,
        "prompts/get",
        name,
        &json!({"name": name,
            "inputResponses": {key.as_str(): {"action": "accept", "content": {"name": "Grace"}}},
            "requestState": first["result"]["requestState"]}),
    );
    assert_eq!(
        retry["result"]["messages"][0]["content"]["text"], "Please greet Grace.",
        "{retry}"
    );

    let uri = "asking://haiku";
    let first = post_2026(&server, "resources/read", uri, &json!({"uri": uri}));
    let (key, request) = asked(&first);
    assert_eq!(request["method"], "sampling/createMessage", "{first}");
    let retry = post_2026(
        &server,
        "resources/read",
        uri,
        &json!({"uri": uri,
            "inputResponses": {key.as_str(): {"role": "assistant",
                "content": {"type": "text", "text": "geese fly"}, "model": "test-model"}},
            "requestState": first["result"]["requestState"]}),
    );
    assert_eq!(
        retry["result"]["contents"][0]["text"], "sampled: geese fly",
        "{retry}"
    );
}
