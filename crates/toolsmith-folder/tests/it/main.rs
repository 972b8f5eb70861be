//! Integration tests of toolsmith-folder: whole folders on disk, loaded as a server would.

mod conformance;
mod files;
mod loading;
mod overrides;
mod prompts_and_resources;

use serde_json::Value;
use toolsmith_model::JsonObject;

/// A JSON object literal as prompt or call arguments.
pub fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("arguments must be an object, got {other}"),
    }
}
