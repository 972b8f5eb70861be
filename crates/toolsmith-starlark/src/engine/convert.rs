//! Starlark values ↔ JSON, in both directions, plus the result contract's first step: what a
//! returned value means ([`to_return`]).
//!
//! Conversion is explicit rather than through `serde`: nesting depth is bounded (a deeply
//! nested value must not overflow the native stack), dict keys that are numbers become
//! strings, floats that JSON cannot hold become `null`, and numbers that Starlark cannot
//! hold (JSON `1e400`) are an error instead of a panic.

use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::float::StarlarkFloat;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{Heap, UnpackValue, Value, ValueLike};
use toolsmith_model::{CallOutcome, ToolReturn};

use super::values::{McpPayload, McpValue};

/// How deeply values may nest when converted to JSON (`serde_json`'s own parser stops at 128).
const MAX_DEPTH: usize = 128;

/// What a tool's return value means (DESIGN.md §3).
pub(crate) fn to_return(value: Value) -> Result<ToolReturn, String> {
    if let Some(text) = value.unpack_str() {
        return Ok(ToolReturn::Text(text.to_owned()));
    }
    if let Some(special) = value.downcast_ref::<McpValue>() {
        return Ok(special.to_return());
    }
    if let Some(list) = ListRef::from_value(value) {
        let blocks: Option<Vec<_>> = list
            .iter()
            .map(|item| match item.downcast_ref::<McpValue>() {
                Some(McpValue(McpPayload::Content(content))) => Some(content.clone()),
                _ => None,
            })
            .collect();
        if let Some(content) = blocks.filter(|blocks| !blocks.is_empty()) {
            return Ok(ToolReturn::Outcome(CallOutcome {
                content,
                structured_content: None,
                is_error: false,
            }));
        }
    }
    to_json(value).map(ToolReturn::Value)
}

/// Converts a Starlark value to JSON.
pub(crate) fn to_json(value: Value) -> Result<serde_json::Value, String> {
    convert(value, 0)
}

fn convert(value: Value, depth: usize) -> Result<serde_json::Value, String> {
    use serde_json::Value as Json;
    if depth > MAX_DEPTH {
        return Err(format!("value is nested more than {MAX_DEPTH} levels deep"));
    }
    if value.is_none() {
        return Ok(Json::Null);
    }
    if let Some(flag) = value.unpack_bool() {
        return Ok(Json::Bool(flag));
    }
    if let Some(text) = value.unpack_str() {
        return Ok(Json::String(text.to_owned()));
    }
    if let Some(number) = value.unpack_i32() {
        return Ok(Json::from(number));
    }
    if value.get_type() == "int" {
        // A big integer: its decimal digits are a valid JSON number, kept exactly.
        return serde_json::from_str(&value.to_str()).map_err(|error| error.to_string());
    }
    if let Ok(Some(float)) = StarlarkFloat::unpack_value(value) {
        return Ok(serde_json::Number::from_f64(float.0).map_or(Json::Null, Json::Number));
    }
    let items = |items: &mut dyn Iterator<Item = Value>| {
        items
            .map(|item| convert(item, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Json::Array)
    };
    if let Some(list) = ListRef::from_value(value) {
        return items(&mut list.iter());
    }
    if let Some(tuple) = TupleRef::from_value(value) {
        return items(&mut tuple.iter());
    }
    if let Some(dict) = DictRef::from_value(value) {
        let mut object = serde_json::Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            object.insert(key_text(key)?, convert(item, depth + 1)?);
        }
        return Ok(Json::Object(object));
    }
    if let Some(fields) = StructRef::from_value(value) {
        let mut object = serde_json::Map::new();
        for (key, item) in fields.iter() {
            object.insert(key.as_str().to_owned(), convert(item, depth + 1)?);
        }
        return Ok(Json::Object(object));
    }
    if let Some(special) = value.downcast_ref::<McpValue>() {
        return Err(format!(
            "{special} can only be returned by a tool, not nested inside another value"
        ));
    }
    // Records, enums and other built-in values that know how to serialize themselves.
    value.to_json_value().map_err(|_| {
        format!(
            "a value of type `{}` cannot be converted to JSON",
            value.get_type()
        )
    })
}

fn key_text(key: Value) -> Result<String, String> {
    if let Some(text) = key.unpack_str() {
        Ok(text.to_owned())
    } else if key.get_type() == "int" || key.get_type() == "float" || key.unpack_bool().is_some() {
        Ok(key.to_str())
    } else {
        Err(format!(
            "dict keys must be strings to become JSON, got `{}` of type `{}`",
            key.to_repr(),
            key.get_type()
        ))
    }
}

/// Converts JSON to a Starlark value on `heap`.
///
/// Unlike starlark's own conversion this refuses numbers no Starlark value can hold (JSON
/// allows `1e400`; starlark would panic). Integers beyond 64 bits become floats.
pub(crate) fn from_json<'v>(heap: Heap<'v>, json: &serde_json::Value) -> Result<Value<'v>, String> {
    use serde_json::Value as Json;
    Ok(match json {
        Json::Null => Value::new_none(),
        Json::Bool(flag) => Value::new_bool(*flag),
        Json::String(text) => heap.alloc(text.as_str()),
        Json::Number(number) => {
            if let Some(int) = number.as_i64() {
                heap.alloc(int)
            } else if let Some(int) = number.as_u64() {
                heap.alloc(int)
            } else {
                // A float, or an integer beyond 64 bits (which becomes a float too).
                let text = number.to_string();
                let float: f64 = text.parse().map_err(|_| format!("bad number {text}"))?;
                if !float.is_finite() {
                    return Err(format!("number {text} is out of range"));
                }
                heap.alloc(float)
            }
        }
        Json::Array(items) => {
            let items = items
                .iter()
                .map(|item| from_json(heap, item))
                .collect::<Result<Vec<_>, _>>()?;
            heap.alloc(AllocList(items))
        }
        Json::Object(object) => {
            let entries = object
                .iter()
                .map(|(key, item)| Ok((key.as_str(), from_json(heap, item)?)))
                .collect::<Result<Vec<_>, String>>()?;
            heap.alloc(AllocDict(entries))
        }
    })
}
