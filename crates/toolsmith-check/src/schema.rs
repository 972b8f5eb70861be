//! Reading tool schemas the way the rules need them: the parameters of an input schema, and
//! every subschema of a schema with its JSON path.

use serde_json::Value;
use toolsmith_model::{JsonObject, ToolDefinition};

/// One top-level parameter of a tool.
#[derive(Debug)]
pub(crate) struct Property<'a> {
    pub(crate) name: &'a str,
    pub(crate) schema: &'a JsonObject,
    pub(crate) required: bool,
}

/// The parameters of a tool, in schema order.
pub(crate) fn properties(definition: &ToolDefinition) -> Vec<Property<'_>> {
    let required: Vec<&str> = definition
        .input_schema
        .object()
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(Value::Object(properties)) = definition.input_schema.object().get("properties") else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(name, schema)| {
            Some(Property {
                name,
                schema: schema.as_object()?,
                required: required.contains(&name.as_str()),
            })
        })
        .collect()
}

/// Keywords whose value is one subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LIST_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];

/// Calls `visit(path, schema)` for `schema` and every subschema in it, depth first; `path`
/// is a JSON pointer (`/properties/days`).
pub(crate) fn walk(schema: &JsonObject, path: &str, visit: &mut dyn FnMut(&str, &JsonObject)) {
    visit(path, schema);
    for (key, value) in schema {
        let key_path = format!("{path}/{key}");
        if SCHEMA_KEYWORDS.contains(&key.as_str()) {
            if let Value::Object(sub) = value {
                walk(sub, &key_path, visit);
            }
        } else if SCHEMA_LIST_KEYWORDS.contains(&key.as_str()) {
            for (index, item) in value.as_array().into_iter().flatten().enumerate() {
                if let Value::Object(sub) = item {
                    walk(sub, &format!("{key_path}/{index}"), visit);
                }
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
            for (name, item) in value.as_object().into_iter().flatten() {
                if let Value::Object(sub) = item {
                    walk(sub, &format!("{key_path}/{name}"), visit);
                }
            }
        }
    }
}

/// The top-level parameter a JSON pointer into an input schema is under
/// (`/properties/days/items` → `days`).
pub(crate) fn parameter_of(path: &str) -> Option<&str> {
    path.strip_prefix("/properties/")
        .map(|rest| rest.split('/').next().unwrap_or(rest))
}

/// The schema's `type` names (`"string"` or `["string", "null"]`).
pub(crate) fn types(schema: &JsonObject) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `value` is of the JSON Schema type `name` (unknown types accept anything).
pub(crate) fn type_accepts(name: &str, value: &Value) -> bool {
    match name {
        "string" => value.is_string(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}
