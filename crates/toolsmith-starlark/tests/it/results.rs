//! Each row of the result contract (docs/result-contract.md), through `Catalog::call`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_model::{CallContext, ClientBridge, LogLevel};

use crate::{call, call_with, catalog, text};

const TOOLS: &str = r#"
def give_text() -> str:
    """Text."""
    return "hello"

def give_dict() -> dict:
    """Dict."""
    return {"sum": 3, "items": [1, 2], "nested": {"ok": True, "none": None}, "ratio": 0.5}

def give_list():
    """List."""
    return [1, "two", 3.5]

def give_number():
    """Number."""
    return 42

def give_none():
    """None."""
    return None

def give_error(city: str) -> str:
    """Error with details, from a tool annotated `-> str`."""
    return mcp.error("unknown city " + city, known=["Oslo", "Paris"], code=404)

def give_error_field() -> dict:
    """A dict whose `error` field is set."""
    return {"error": "no such city", "known": ["Oslo"]}

def give_result():
    """An explicit result."""
    return mcp.result(content=[mcp.text("first"), "second"], structured={"n": 2}, is_error=False)

def give_content():
    """Content helpers."""
    return [
        mcp.text("caption"),
        mcp.image("iVBORw0KGgo=", "image/png"),
        mcp.audio("UklGRg==", "audio/wav"),
        mcp.resource("file:///notes.txt", text="notes", mime_type="text/plain"),
        mcp.resource_link("file:///big.csv", "big.csv", description="The data", mime_type="text/csv"),
    ]

def give_image():
    """One image."""
    return mcp.image("iVBORw0KGgo=", "image/png")

def broken(x: int):
    """Fails in a helper."""
    return divide(x, 0)

def divide(a, b):
    # Two statements, so that freezing does not inline it into the caller.
    quotient = a // b
    return quotient

def wrong_output() -> dict:
    """Declares a dict, returns something else."""
    return {"n": "not a number"}

def not_json():
    """Returns a function."""
    return divide

def failing():
    """Calls fail()."""
    fail("nope: " + str(1))

def big_int():
    """A big integer."""
    return 123456789012345678901234567890

def echo_args(a: int, b: float, c: list[int], d: dict, e: bool | None = None):
    """Echo."""
    return {"a": a, "b": b, "c": c, "d": d, "e": e}

mcp.tool(give_text)
mcp.tool(give_dict)
mcp.tool(give_list)
mcp.tool(give_number)
mcp.tool(give_none)
mcp.tool(give_error)
mcp.tool(give_error_field)
mcp.tool(give_result)
mcp.tool(give_content)
mcp.tool(give_image)
mcp.tool(broken)
mcp.tool(wrong_output, output={"type": "object", "properties": {"n": {"type": "integer"}}})
mcp.tool(not_json)
mcp.tool(failing)
mcp.tool(big_int)
mcp.tool(echo_args)
"#;

#[test]
fn string_is_one_text_block() {
    let outcome = call(&catalog(TOOLS), "give_text", json!({}));
    assert_eq!(
        outcome,
        json!({"content": [{"type": "text", "text": "hello"}], "isError": false})
    );
}

#[test]
fn dict_is_structured_content_plus_json_text() {
    let outcome = call(&catalog(TOOLS), "give_dict", json!({}));
    let expected =
        json!({"sum": 3, "items": [1, 2], "nested": {"ok": true, "none": null}, "ratio": 0.5});
    assert_eq!(outcome["structuredContent"], expected);
    assert_eq!(
        serde_json::from_str::<Value>(text(&outcome)).unwrap(),
        expected
    );
    assert_eq!(outcome["isError"], false);
}

#[test]
fn list_and_number_are_wrapped() {
    let catalog = catalog(TOOLS);
    let list = call(&catalog, "give_list", json!({}));
    assert_eq!(
        list["structuredContent"],
        json!({"result": [1, "two", 3.5]})
    );
    let number = call(&catalog, "give_number", json!({}));
    assert_eq!(number["structuredContent"], json!({"result": 42}));
    assert_eq!(text(&number), "42");
}

#[test]
fn none_is_empty_content() {
    let outcome = call(&catalog(TOOLS), "give_none", json!({}));
    assert_eq!(outcome, json!({"content": [], "isError": false}));
}

#[test]
fn mcp_error_keeps_details_even_from_a_str_tool() {
    let outcome = call(&catalog(TOOLS), "give_error", json!({"city": "Rome"}));
    assert_eq!(outcome["isError"], true);
    assert_eq!(text(&outcome), "unknown city Rome");
    assert_eq!(
        outcome["structuredContent"],
        json!({"known": ["Oslo", "Paris"], "code": 404, "error": "unknown city Rome"})
    );
}

#[test]
fn dict_with_error_field_is_an_error() {
    let outcome = call(&catalog(TOOLS), "give_error_field", json!({}));
    assert_eq!(outcome["isError"], true);
    assert_eq!(text(&outcome), "no such city");
    assert_eq!(outcome["structuredContent"]["known"], json!(["Oslo"]));
}

#[test]
fn mcp_result_is_passed_through() {
    let outcome = call(&catalog(TOOLS), "give_result", json!({}));
    assert_eq!(
        outcome,
        json!({
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
            "structuredContent": {"n": 2},
            "isError": false
        })
    );
}

#[test]
fn content_helpers_become_blocks() {
    let catalog = catalog(TOOLS);
    let outcome = call(&catalog, "give_content", json!({}));
    assert_eq!(
        outcome["content"],
        json!([
            {"type": "text", "text": "caption"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}},
            {"type": "resource_link", "uri": "file:///big.csv", "name": "big.csv", "description": "The data", "mimeType": "text/csv"}
        ])
    );
    let image = call(&catalog, "give_image", json!({}));
    assert_eq!(
        image,
        json!({"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], "isError": false})
    );
}

#[test]
fn script_error_names_file_line_and_frame() {
    let catalog = catalog(TOOLS);
    let outcome = call(&catalog, "broken", json!({"x": 1}));
    assert_eq!(outcome["isError"], true);
    let message = text(&outcome);
    let line = TOOLS
        .lines()
        .position(|line| line.contains("quotient = a // b"))
        .unwrap()
        + 1;
    assert!(
        message.starts_with(&format!("tools/test.star:{line}:16: ")),
        "{message}"
    );
    assert!(message.contains("division by zero"), "{message}");
    assert!(message.contains("in `divide`"), "{message}");
    let failed = call(&catalog, "failing", json!({}));
    assert!(text(&failed).contains("nope: 1"), "{failed}");
    assert!(text(&failed).starts_with("tools/test.star:"), "{failed}");
}

#[test]
fn output_not_matching_output_schema_is_an_error() {
    let outcome = call(&catalog(TOOLS), "wrong_output", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).contains("does not match its outputSchema"),
        "{outcome}"
    );
}

#[test]
fn unconvertible_return_value_is_a_clear_error() {
    let outcome = call(&catalog(TOOLS), "not_json", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).contains("`function` cannot be converted to JSON"),
        "{outcome}"
    );
}

#[test]
fn arguments_arrive_as_starlark_values() {
    let catalog = catalog(TOOLS);
    let outcome = call(
        &catalog,
        "echo_args",
        json!({"a": 1, "b": 2.5, "c": [1, 2], "d": {"k": [true, null]}}),
    );
    assert_eq!(
        outcome["structuredContent"],
        json!({"a": 1, "b": 2.5, "c": [1, 2], "d": {"k": [true, null]}, "e": null})
    );
    let big = call(&catalog, "big_int", json!({}));
    assert_eq!(text(&big), "123456789012345678901234567890");
}

#[derive(Default)]
struct RecordingClient {
    events: Mutex<Vec<String>>,
}

impl RecordingClient {
    fn record(&self, event: String) {
        self.events
            .lock()
            .expect("no test thread panicked")
            .push(event);
    }
}

impl ClientBridge for RecordingClient {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.record(format!("progress {progress} {total:?} {message:?}"));
    }
    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        self.record(format!("log {} {logger} {message}", level.as_str()));
    }
    fn sample(&self, request: Value) -> Result<Value, String> {
        self.record(format!("sample {request}"));
        Ok(json!({"role": "assistant", "content": {"type": "text", "text": "a haiku"}}))
    }
    fn elicit(&self, message: &str, schema: Value) -> Result<Value, String> {
        self.record(format!("elicit {message} {schema}"));
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }
    fn roots(&self) -> Result<Vec<Value>, String> {
        Ok(vec![json!({"uri": "file:///work", "name": "work"})])
    }
}

#[test]
fn client_requests_go_through_the_bridge() {
    let catalog = catalog(
        r#"
def chat() -> dict:
    """Uses the client."""
    mcp.progress(1, total=3, message="starting")
    mcp.log("warning", "careful")
    poem = mcp.sample("write a haiku", system="be brief", max_tokens=50)
    answer = mcp.elicit("your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return {"poem": poem, "name": answer["content"]["name"], "roots": mcp.roots(), "units": mcp.option("units", "metric"), "depth": mcp.option("depth")}

mcp.tool(chat, options={"depth": 2})
"#,
    );
    let client = Arc::new(RecordingClient::default());
    let mut context = CallContext::detached(Duration::from_secs(5));
    context.client = client.clone();
    context.options.insert("units".into(), json!("imperial"));
    let outcome = call_with(&catalog, "chat", json!({}), &context);
    assert_eq!(
        outcome["structuredContent"],
        json!({"poem": "a haiku", "name": "Ada", "roots": [{"uri": "file:///work", "name": "work"}], "units": "imperial", "depth": 2})
    );
    let events = client.events.lock().unwrap();
    assert_eq!(events[0], "progress 1 Some(3.0) Some(\"starting\")");
    assert_eq!(events[1], "log warning chat careful");
    assert!(events[2].contains("\"maxTokens\":50"), "{}", events[2]);
    assert!(
        events[2].contains("\"systemPrompt\":\"be brief\""),
        "{}",
        events[2]
    );
    assert!(events[3].starts_with("elicit your name?"), "{}", events[3]);
}

#[test]
fn json_module_and_sum_are_available() {
    let catalog = catalog(
        r#"
def stats(numbers: list[float]) -> dict:
    """Stats."""
    decoded = json.decode(json.encode({"n": numbers}))
    return {"total": sum(decoded["n"]), "offset": sum([1, 2], 10)}

mcp.tool(stats)
"#,
    );
    let outcome = call(&catalog, "stats", json!({"numbers": [1, 2.5]}));
    assert_eq!(
        outcome["structuredContent"],
        json!({"total": 3.5, "offset": 13})
    );
}

// Regression test: `mcp.log` and `mcp.progress` in a loop reached the
// client one for one.
#[test]
fn a_flood_of_logs_and_progress_is_throttled() {
    let catalog = catalog(
        r#"
def chatty() -> str:
    """Logs and reports progress far too often."""
    for i in range(20000):
        mcp.log("info", "tick")
        mcp.progress(i, total=20000)
    return "done"

mcp.tool(chatty, timeout=30)
"#,
    );
    let client = Arc::new(RecordingClient::default());
    let mut context = CallContext::detached(Duration::from_secs(30));
    context.client = client.clone();
    let outcome = call_with(&catalog, "chatty", json!({}), &context);
    assert_eq!(text(&outcome), "done");
    let events = client.events.lock().unwrap();
    let passed = events
        .iter()
        .filter(|event| !event.starts_with("log warning toolsmith"))
        .count();
    assert!(passed < 4_000, "{passed} of 40000 notifications passed");
    let dropped: usize = events
        .iter()
        .filter_map(|event| {
            let (_, rest) = event.split_once("sent too many notifications: ")?;
            rest.split(' ').next()?.parse::<usize>().ok()
        })
        .sum();
    assert_eq!(passed + dropped, 40_000);
    // The progress the client saw last is the tool's last.
    assert_eq!(
        events.last().map(String::as_str),
        Some("progress 19999 Some(20000.0) None")
    );
}
