//! The arguments reach the program as one compact JSON object on stdin.

use serde_json::json;
use toolsmith_model::ToolReturn;

use crate::support::{call, text, tool};

#[test]
fn arguments_arrive_as_compact_json_on_stdin_which_is_then_closed() {
    let dir = tempfile::tempdir().unwrap();
    let properties = json!({"city": {"type": "string"}, "days": {"type": "integer"}});
    // `$(cat)` only finishes once stdin is closed.
    let tool = tool(
        dir.path(),
        &properties,
        &["bash", "-c", r#"printf 'raw:%s' "$(cat)""#],
    );
    let output = text(call(&tool, &json!({"city": "Oslo", "days": 2})));
    assert_eq!(output, r#"raw:{"city":"Oslo","days":2}"#);
}

#[test]
fn schema_defaults_fill_in_absent_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let properties = json!({
        "city": {"type": "string"},
        "days": {"type": "integer", "default": 3},
        "units": {"type": "string", "default": "metric"},
    });
    let tool = tool(dir.path(), &properties, &["cat"]);
    let returned = call(&tool, &json!({"city": "Oslo", "units": "imperial"}));
    assert_eq!(
        returned,
        Ok(ToolReturn::Value(
            json!({"city": "Oslo", "units": "imperial", "days": 3})
        ))
    );
}

#[test]
fn program_that_never_reads_stdin_still_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(
        dir.path(),
        &json!({"blob": {"type": "string"}}),
        &["echo", "ok"],
    );
    // Far more than a pipe buffer: writing it fails with EPIPE once `echo` has exited.
    let blob = "x".repeat(1024 * 1024);
    assert_eq!(text(call(&tool, &json!({ "blob": blob }))), "ok");
}

#[test]
fn large_input_echoed_back_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool(dir.path(), &json!({"blob": {"type": "string"}}), &["cat"]);
    let blob = "y".repeat(2 * 1024 * 1024);
    let returned = call(&tool, &json!({ "blob": blob }));
    assert_eq!(returned, Ok(ToolReturn::Value(json!({ "blob": blob }))));
}
