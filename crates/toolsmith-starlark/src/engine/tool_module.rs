//! The `tool` module of manifest scripts (Scriptling's `scriptling.mcp.tool`): typed
//! getters for the call's arguments and the `return_*` functions that set the result.
//!
//! The first `return_*` call sets the result; later ones are ignored and the script runs
//! on to its end (Scriptling's own examples call `tool.return_error(...)` and keep going).
//! A getter without a default returns the type's zero value (`""`, `0`, `0.0`, `False`,
//! `[]`) for a missing argument.

use serde_json::Value as Json;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::none::{NoneOr, NoneType};
use starlark::values::{Heap, Value};
use toolsmith_model::{CallOutcome, JsonObject, ToolReturn};

use super::convert::{from_json, to_json};
use super::session::{self, ScriptState};

/// The argument `name`, unless missing or null.
fn argument<'a>(script: &'a ScriptState<'_>, name: &str) -> Option<&'a Json> {
    script.arguments.get(name).filter(|value| !value.is_null())
}

/// The default the script passed, unless missing or `None`.
fn given(default: NoneOr<Value>) -> Option<Value> {
    default.into_option().filter(|value| !value.is_none())
}

fn set_result(script: &ScriptState<'_>, result: ToolReturn) {
    let mut slot = script.result.borrow_mut();
    if slot.is_none() {
        *slot = Some(result);
    } else {
        tracing::debug!("a later `tool.return_*` call is ignored: the first one set the result");
    }
}

fn integer(name: &str, value: &Json) -> anyhow::Result<i64> {
    let not_integer = || anyhow::anyhow!("argument `{name}` is not an integer: {value}");
    match value {
        Json::Number(number) => number
            .as_i64()
            // Floats are truncated towards zero, as `int(x)` does.
            .or_else(|| number.as_f64().and_then(truncate))
            .ok_or_else(not_integer),
        Json::String(text) => {
            let text = text.trim();
            text.parse::<i64>()
                .ok()
                .or_else(|| text.parse::<f64>().ok().and_then(truncate))
                .ok_or_else(not_integer)
        }
        Json::Bool(flag) => Ok(i64::from(*flag)),
        _ => Err(not_integer()),
    }
}

/// `int(x)` for a float: towards zero; `None` for NaN and infinities.
#[expect(
    clippy::cast_possible_truncation,
    reason = "truncation is the point; `as` saturates out-of-range values"
)]
fn truncate(float: f64) -> Option<i64> {
    float.is_finite().then(|| float.trunc() as i64)
}

fn float(name: &str, value: &Json) -> anyhow::Result<f64> {
    let not_number = || anyhow::anyhow!("argument `{name}` is not a number: {value}");
    match value {
        Json::Number(number) => number.as_f64().ok_or_else(not_number),
        Json::String(text) => text.trim().parse().map_err(|_| not_number()),
        Json::Bool(flag) => Ok(if *flag { 1.0 } else { 0.0 }),
        _ => Err(not_number()),
    }
}

fn boolean(name: &str, value: &Json) -> anyhow::Result<bool> {
    match value {
        Json::Bool(flag) => Ok(*flag),
        Json::Number(number) => Ok(number.as_f64().is_some_and(|f| f != 0.0)),
        Json::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(true),
            "false" | "0" | "no" | "off" | "" => Ok(false),
            _ => Err(anyhow::anyhow!(
                "argument `{name}` is not a boolean: {value}"
            )),
        },
        _ => Err(anyhow::anyhow!(
            "argument `{name}` is not a boolean: {value}"
        )),
    }
}

/// A list argument; a string holding a JSON array or comma-separated items is accepted.
fn list(value: &Json) -> Json {
    match value {
        Json::Array(_) => value.clone(),
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(array @ Json::Array(_)) => array,
            _ => Json::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| Json::String(item.to_owned()))
                    .collect(),
            ),
        },
        other => Json::Array(vec![other.clone()]),
    }
}

fn json_error(error: String) -> anyhow::Error {
    anyhow::anyhow!(error)
}

#[starlark_module]
pub(super) fn register(builder: &mut GlobalsBuilder) {
    /// The string argument `name` (numbers and other values as their JSON text).
    fn get_string<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let script = session::script(eval, "tool.get_string")?;
        Ok(match (argument(script, name), given(default)) {
            (Some(Json::String(text)), _) => heap.alloc(text.as_str()),
            (Some(other), _) => heap.alloc(other.to_string()),
            (None, Some(default)) => default,
            (None, None) => heap.alloc(""),
        })
    }

    /// The integer argument `name`; floats are truncated, numeric strings parsed.
    fn get_int<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let script = session::script(eval, "tool.get_int")?;
        Ok(match (argument(script, name), given(default)) {
            (Some(value), _) => heap.alloc(integer(name, value)?),
            (None, Some(default)) => default,
            (None, None) => heap.alloc(0),
        })
    }

    /// The number argument `name`, as a float.
    fn get_float<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap = eval.heap();
        let script = session::script(eval, "tool.get_float")?;
        Ok(match (argument(script, name), given(default)) {
            (Some(value), _) => heap.alloc(float(name, value)?),
            (None, Some(default)) => default,
            (None, None) => heap.alloc(0.0),
        })
    }

    /// The boolean argument `name` (`"true"`, `"yes"`, `1`, … accepted).
    fn get_bool<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let script = session::script(eval, "tool.get_bool")?;
        Ok(match (argument(script, name), given(default)) {
            (Some(value), _) => Value::new_bool(boolean(name, value)?),
            (None, Some(default)) => default,
            (None, None) => Value::new_bool(false),
        })
    }

    /// The list argument `name`.
    fn get_list<'v>(
        #[starlark(require = pos)] name: &str,
        #[starlark(default = NoneOr::None)] default: NoneOr<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<Value<'v>> {
        let heap: Heap<'v> = eval.heap();
        let script = session::script(eval, "tool.get_list")?;
        match (argument(script, name), given(default)) {
            (Some(value), _) => from_json(heap, &list(value)).map_err(json_error),
            (None, Some(default)) => Ok(default),
            (None, None) => from_json(heap, &Json::Array(Vec::new())).map_err(json_error),
        }
    }

    /// Returns `text` as the result.
    fn return_string(
        #[starlark(require = pos)] text: Value,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let script = session::script(eval, "tool.return_string")?;
        let text = text
            .unpack_str()
            .map_or_else(|| text.to_str(), str::to_owned);
        set_result(script, ToolReturn::Text(text));
        Ok(NoneType)
    }

    /// Returns `value` as JSON text, without structured content.
    fn return_object(
        #[starlark(require = pos)] value: Value,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let script = session::script(eval, "tool.return_object")?;
        let json = to_json(value).map_err(json_error)?;
        set_result(
            script,
            ToolReturn::Outcome(CallOutcome::text(json.to_string())),
        );
        Ok(NoneType)
    }

    /// Returns a dict as structured content (plus the same JSON as text).
    fn return_structured(
        #[starlark(require = pos)] value: Value,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let script = session::script(eval, "tool.return_structured")?;
        let Json::Object(object) = to_json(value).map_err(json_error)? else {
            anyhow::bail!(
                "`tool.return_structured` needs a dict (MCP structured content is an object), \
                 got `{}`; use `tool.return_object` for other values",
                value.get_type()
            );
        };
        set_result(script, ToolReturn::Value(Json::Object(object)));
        Ok(NoneType)
    }

    /// Returns `value` rendered as TOON text.
    fn return_toon(
        #[starlark(require = pos)] value: Value,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let script = session::script(eval, "tool.return_toon")?;
        let json = to_json(value).map_err(json_error)?;
        set_result(
            script,
            ToolReturn::Text(toolsmith_model::toon::encode(&json)),
        );
        Ok(NoneType)
    }

    /// Returns an error result with `message`.
    fn return_error(
        #[starlark(require = pos)] message: Value,
        eval: &mut Evaluator,
    ) -> anyhow::Result<NoneType> {
        let script = session::script(eval, "tool.return_error")?;
        let message = message
            .unpack_str()
            .map_or_else(|| message.to_str(), str::to_owned);
        set_result(
            script,
            ToolReturn::Error {
                message,
                details: JsonObject::new(),
            },
        );
        Ok(NoneType)
    }
}
