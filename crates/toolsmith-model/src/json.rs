//! The JSON object MCP uses for schemas, arguments, structured content and `_meta`: the
//! one type every module below and above the definition shares, so it sits under them all.

use serde_json::{Map, Value};

/// A JSON object, as MCP uses for schemas and `_meta`.
pub type JsonObject = Map<String, Value>;
