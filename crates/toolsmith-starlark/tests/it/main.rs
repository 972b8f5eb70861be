//! Integration tests: real `.star` sources through `load_module`/`load_script` and the
//! model's `Catalog::call`, i.e. the same path the server uses.

mod diagnostics;
mod limits;
mod memory;
mod results;
mod schema;
mod scriptling;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use toolsmith_model::{CallContext, Catalog, Diagnostic, JsonObject, ToolDefinition};
use toolsmith_starlark::{LoadSettings, LoadedModule, load_module};

/// Loads `source` as `tools/test.star`.
pub fn load(source: &str) -> LoadedModule {
    load_module(Path::new("tools/test.star"), source, &settings())
}

/// Each evaluation's heap limit in these tests: lower than the default (1 GiB) so the test
/// of a runaway script reaches it quickly in a debug build, high enough for the tests that
/// build 64 MiB values to meet the value guards first.
pub const TEST_HEAP_LIMIT: usize = 256 << 20;

/// Settings for the `tools` folder. Every test loads through here, so the heap limit is set
/// before the first evaluation reads it.
pub fn settings() -> LoadSettings {
    toolsmith_starlark::set_heap_limit(TEST_HEAP_LIMIT);
    LoadSettings::new("tools")
}

/// Loads `source`, which must load cleanly, into a catalog.
pub fn catalog(source: &str) -> Catalog {
    let loaded = load(source);
    assert!(
        loaded.diagnostics.is_empty(),
        "unexpected diagnostics: {:#?}",
        loaded.diagnostics
    );
    Catalog::new(loaded.tools, Vec::new())
}

/// The diagnostics of loading `source`.
pub fn diagnostics(source: &str) -> Vec<Diagnostic> {
    load(source).diagnostics
}

/// The published MCP definition of tool `name`.
pub fn definition(catalog: &Catalog, name: &str) -> Value {
    catalog
        .get(name)
        .expect("tool exists")
        .definition()
        .to_mcp()
}

/// A JSON object literal as call arguments.
pub fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// Calls `name` with a 5 s timeout; the outcome as MCP JSON.
pub fn call(catalog: &Catalog, name: &str, args: Value) -> Value {
    call_with(
        catalog,
        name,
        args,
        &CallContext::detached(Duration::from_secs(5)),
    )
}

/// Calls `name` with the given context; the outcome as MCP JSON.
pub fn call_with(catalog: &Catalog, name: &str, args: Value, context: &CallContext) -> Value {
    catalog
        .call(name, arguments(args), context)
        .expect("tool exists")
        .to_json()
}

/// The text of the first content block.
pub fn text(outcome: &Value) -> &str {
    outcome["content"][0]["text"].as_str().unwrap_or_default()
}

/// A definition with the given input schema, as a manifest would give it.
pub fn manifest(name: &str, description: &str, schema: Value) -> ToolDefinition {
    let mut definition = ToolDefinition::new(name, description, arguments(schema));
    definition.source.path = format!("tools/{name}.toml").into();
    definition
}
