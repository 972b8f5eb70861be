//! The full path every caller uses: catalog lookup → argument validation → run → result
//! contract.

use std::sync::Arc;

use serde_json::json;
use toolsmith_model::{CallContext, Catalog, Tool};

use crate::support::{PATIENCE, definition, object, tool_with};

fn catalog(dir: &std::path::Path) -> Catalog {
    let properties = json!({
        "count": {"type": "integer", "minimum": 1},
        "word": {"type": "string", "default": "hi"},
    });
    let program = r#"for i in $(seq "$1"); do printf '%s ' "$2"; done"#;
    let tool = tool_with(
        definition("repeat", &properties),
        dir,
        &["bash", "-c", program, "repeat", "{count}", "{word}"],
    );
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(tool)];
    Catalog::new(tools, Vec::new())
}

#[test]
fn catalog_coerces_validates_runs_and_applies_the_result_contract() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let context = CallContext::detached(PATIENCE);
    // "3" is coerced to 3 by validation; `word` comes from the schema default.
    let outcome = catalog
        .call("repeat", object(&json!({"count": "3"})), &context)
        .unwrap();
    assert!(!outcome.is_error, "{outcome:?}");
    assert_eq!(outcome.joined_text(), "hi hi hi ");
}

#[test]
fn invalid_arguments_never_reach_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let context = CallContext::detached(PATIENCE);
    let outcome = catalog
        .call("repeat", object(&json!({"count": 0})), &context)
        .unwrap();
    assert!(outcome.is_error);
    assert!(
        outcome.joined_text().contains("/count"),
        "{}",
        outcome.joined_text()
    );
}

#[test]
fn failing_command_becomes_an_error_result() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool_with(
        definition("broken", &json!({})),
        dir.path(),
        &["bash", "-c", "echo 'bad input' >&2; exit 4"],
    );
    let catalog = Catalog::new(vec![Arc::new(tool)], Vec::new());
    let outcome = catalog
        .call(
            "broken",
            object(&json!({})),
            &CallContext::detached(PATIENCE),
        )
        .unwrap();
    assert!(outcome.is_error);
    assert!(outcome.joined_text().contains("exited with status 4"));
    assert!(outcome.joined_text().ends_with("bad input"));
}
