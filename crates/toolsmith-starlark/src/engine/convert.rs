//! Starlark values ↔ JSON, in both directions, plus the result contract's first step: what a
//! returned value means ([`to_return`]).
//!
//! Conversion is explicit rather than through `serde`: nesting depth is bounded (a deeply
//! nested value must not overflow the native stack), dict keys that are numbers become
//! strings, floats that JSON cannot hold become `null`, and numbers that Starlark cannot
//! hold (JSON `1e400`) are an error instead of a panic.
//!
//! Conversion is also bounded in size: it stops as soon as the JSON text would pass a limit
//! ([`to_return`]'s result limit, or `json.encode`'s value limit), so that a small value
//! sharing one large string many times (`[c] * 200`) is refused instead of being copied
//! into gigabytes of native memory.

use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::float::StarlarkFloat;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{Heap, UnpackValue, Value, ValueLike};
use toolsmith_model::{CallOutcome, Content, ToolReturn};

use super::MAX_VALUE_BYTES;
use super::values::{McpPayload, McpValue};

/// How deeply values may nest when converted to JSON (`serde_json`'s own parser stops at 128).
const MAX_DEPTH: usize = 128;

/// Why a value did not become JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConvertError {
    /// The JSON text would be longer than the limit (in bytes).
    TooLarge(usize),
    /// Anything else: a value JSON cannot hold, nesting, a bad dict key.
    Invalid(String),
}

impl From<String> for ConvertError {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

/// What a tool's return value means (the result contract: README.md, "What a call
/// returns"), refusing results whose text would be longer than `limit` bytes.
pub(crate) fn to_return(value: Value, limit: usize) -> Result<ToolReturn, ConvertError> {
    if let Some(text) = value.unpack_str() {
        charge(&mut Budget::new(limit), text.len())?;
        return Ok(ToolReturn::Text(text.to_owned()));
    }
    if let Some(special) = value.downcast_ref::<McpValue>() {
        if let McpPayload::Content(content) = &special.0 {
            charge(&mut Budget::new(limit), content_size(content))?;
        }
        return Ok(special.to_return());
    }
    if let Some(list) = ListRef::from_value(value) {
        let mut budget = Budget::new(limit);
        let mut content = Vec::new();
        for item in list.iter() {
            if let Some(McpValue(McpPayload::Content(block))) = item.downcast_ref::<McpValue>() {
                charge(&mut budget, content_size(block))?;
                content.push(block.clone());
            } else {
                content.clear();
                break;
            }
        }
        if !content.is_empty() {
            return Ok(ToolReturn::Outcome(CallOutcome {
                content,
                structured_content: None,
                is_error: false,
                meta: None,
            }));
        }
    }
    to_json_within(value, limit).map(ToolReturn::Value)
}

/// Converts a Starlark value to JSON, refusing text longer than [`MAX_VALUE_BYTES`].
pub(crate) fn to_json(value: Value) -> Result<serde_json::Value, String> {
    to_json_within(value, MAX_VALUE_BYTES).map_err(|error| match error {
        ConvertError::TooLarge(limit) => too_large("the value", limit),
        ConvertError::Invalid(message) => message,
    })
}

/// Converts a Starlark value to JSON whose text is at most `limit` bytes long.
pub(crate) fn to_json_within(
    value: Value,
    limit: usize,
) -> Result<serde_json::Value, ConvertError> {
    convert(value, 0, &mut Budget::new(limit))
}

/// The message for `what` growing past `limit` bytes as JSON.
pub(crate) fn too_large(what: &str, limit: usize) -> String {
    format!("{what} is larger than {} as JSON", megabytes(limit))
}

/// `limit` in the unit people write it in.
pub(crate) fn megabytes(limit: usize) -> String {
    if limit >= 1 << 20 && limit.is_multiple_of(1 << 20) {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// A writer that only counts, failing once more than `left` bytes were written.
struct Counter {
    left: usize,
}

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Some(left) = self.left.checked_sub(bytes.len()) {
            self.left = left;
            Ok(bytes.len())
        } else {
            self.left = 0;
            Err(std::io::ErrorKind::OutOfMemory.into())
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How many bytes of JSON text a conversion may still produce.
struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Self { left: limit, limit }
    }
}

fn charge(budget: &mut Budget, bytes: usize) -> Result<(), ConvertError> {
    budget.left = budget
        .left
        .checked_sub(bytes)
        .ok_or(ConvertError::TooLarge(budget.limit))?;
    Ok(())
}

/// The bytes a content block takes in the result.
fn content_size(content: &Content) -> usize {
    match content {
        Content::Text { text, .. } => text.len(),
        Content::Image {
            data, mime_type, ..
        }
        | Content::Audio {
            data, mime_type, ..
        } => data.len() + mime_type.len(),
        Content::Resource { resource, .. } => {
            resource.uri.len()
                + resource.text.as_ref().map_or(0, String::len)
                + resource.blob.as_ref().map_or(0, String::len)
        }
        Content::ResourceLink {
            uri,
            name,
            description,
            ..
        } => uri.len() + name.len() + description.as_ref().map_or(0, String::len),
    }
}

fn convert(
    value: Value,
    depth: usize,
    budget: &mut Budget,
) -> Result<serde_json::Value, ConvertError> {
    use serde_json::Value as Json;
    if depth > MAX_DEPTH {
        return Err(format!("value is nested more than {MAX_DEPTH} levels deep").into());
    }
    // Every value costs at least a separator; strings their (escaped) length, below.
    charge(budget, 2)?;
    if value.is_none() {
        return Ok(Json::Null);
    }
    if let Some(flag) = value.unpack_bool() {
        return Ok(Json::Bool(flag));
    }
    if let Some(text) = value.unpack_str() {
        charge(budget, text.len())?;
        return Ok(Json::String(text.to_owned()));
    }
    if let Some(number) = value.unpack_i32() {
        return Ok(Json::from(number));
    }
    if value.get_type() == "int" {
        // A big integer: its decimal digits are a valid JSON number, kept exactly.
        let digits = value.to_str();
        charge(budget, digits.len())?;
        return serde_json::from_str(&digits).map_err(|error| error.to_string().into());
    }
    if let Ok(Some(float)) = StarlarkFloat::unpack_value(value) {
        return Ok(serde_json::Number::from_f64(float.0).map_or(Json::Null, Json::Number));
    }
    let mut items = |items: &mut dyn Iterator<Item = Value>| {
        items
            .map(|item| convert(item, depth + 1, budget))
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
            let key = key_text(key)?;
            charge(budget, key.len())?;
            object.insert(key, convert(item, depth + 1, budget)?);
        }
        return Ok(Json::Object(object));
    }
    if let Some(fields) = StructRef::from_value(value) {
        let mut object = serde_json::Map::new();
        for (key, item) in fields.iter() {
            charge(budget, key.as_str().len())?;
            object.insert(key.as_str().to_owned(), convert(item, depth + 1, budget)?);
        }
        return Ok(Json::Object(object));
    }
    if let Some(special) = value.downcast_ref::<McpValue>() {
        return Err(format!(
            "{special} can only be returned by a tool, not nested inside another value"
        )
        .into());
    }
    // Records, enums and other built-in values that know how to serialize themselves; their
    // size is measured first, by serializing into a writer that stops at the budget.
    let mut counter = Counter { left: budget.left };
    if serde_json::to_writer(&mut counter, &value).is_err() && counter.left == 0 {
        return Err(ConvertError::TooLarge(budget.limit));
    }
    budget.left = counter.left;
    value.to_json_value().map_err(|_| {
        format!(
            "a value of type `{}` cannot be converted to JSON",
            value.get_type()
        )
        .into()
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
