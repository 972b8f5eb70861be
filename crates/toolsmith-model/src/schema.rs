//! Parameter types and the JSON Schemas built from them.
//!
//! Both tool forms describe parameters the same way in the end: a [`Parameter`] with a
//! [`ParamType`], a description, a default and extra schema keywords. Starlark annotations
//! (`list[str]`, `int | None`) and manifest type names (`array:number`, `bool`) are parsed
//! here so that the two forms cannot drift apart.

use serde_json::{Value, json};

use crate::definition::JsonObject;

/// The type of one parameter, as far as JSON Schema is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamType {
    /// `str` / `string`.
    String,
    /// `int` / `integer`.
    Integer,
    /// `float` / `number` (integers accepted too).
    Number,
    /// `bool` / `boolean`.
    Boolean,
    /// `list[T]` / `array:T`; `None` items accept anything.
    Array(Option<Box<ParamType>>),
    /// `dict` / `object`.
    Object,
    /// `typing.Any`, or no annotation: any JSON value.
    Any,
}

/// The manifest type names accepted in `[[parameters]] type = "…"`, for error messages.
pub const MANIFEST_TYPES: &[&str] = &[
    "string",
    "integer",
    "int",
    "number",
    "float",
    "boolean",
    "bool",
    "object",
    "array",
    "array:string",
    "array:integer",
    "array:int",
    "array:number",
    "array:float",
    "array:boolean",
    "array:bool",
    "any",
];

impl ParamType {
    /// Parses a manifest type name (`string`, `int`, `array:number`, …).
    ///
    /// Returns `None` for an unknown name; [`MANIFEST_TYPES`] lists the valid ones.
    pub fn from_manifest(name: &str) -> Option<Self> {
        let name = name.trim();
        if let Some(item) = name.strip_prefix("array:") {
            let item = Self::scalar_from_manifest(item)?;
            return Some(Self::Array(Some(Box::new(item))));
        }
        match name {
            "array" | "list" => Some(Self::Array(None)),
            "object" | "dict" => Some(Self::Object),
            "any" => Some(Self::Any),
            other => Self::scalar_from_manifest(other),
        }
    }

    fn scalar_from_manifest(name: &str) -> Option<Self> {
        match name {
            "string" | "str" => Some(Self::String),
            "integer" | "int" => Some(Self::Integer),
            "number" | "float" => Some(Self::Number),
            "boolean" | "bool" => Some(Self::Boolean),
            _ => None,
        }
    }

    /// Parses a Starlark type annotation (`str`, `list[int]`, `dict[str, int]`, `int | None`).
    ///
    /// Returns the type and whether `None` is allowed (`T | None`, `Optional[T]`); `None`
    /// when the annotation is not one Toolsmith can publish as a JSON Schema type.
    pub fn from_annotation(annotation: &str) -> Option<(Self, bool)> {
        let text = annotation.trim();
        let parts = split_top_level(text, '|');
        if parts.len() > 1 {
            let concrete: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|part| *part != "None")
                .collect();
            let nullable = concrete.len() < parts.len();
            return match concrete.as_slice() {
                [single] => {
                    Self::from_annotation(single).map(|(ty, inner)| (ty, nullable || inner))
                }
                // A union of several concrete types is published as "any"; validation in
                // the script still checks it.
                _ => Some((Self::Any, nullable)),
            };
        }
        if let Some(inner) = strip_generic(text, &["Optional", "typing.Optional"]) {
            return Self::from_annotation(inner).map(|(ty, _)| (ty, true));
        }
        if let Some(inner) = strip_generic(text, &["list", "typing.List", "List"]) {
            let (item, _) = Self::from_annotation(inner)?;
            let item = (item != Self::Any).then(|| Box::new(item));
            return Some((Self::Array(item), false));
        }
        if strip_generic(text, &["dict", "typing.Dict", "Dict"]).is_some() {
            return Some((Self::Object, false));
        }
        let ty = match text {
            "str" | "string" => Self::String,
            "int" => Self::Integer,
            "float" => Self::Number,
            "bool" => Self::Boolean,
            "list" => Self::Array(None),
            "dict" | "struct" => Self::Object,
            "typing.Any" | "Any" | "" => Self::Any,
            _ => return None,
        };
        Some((ty, false))
    }

    /// The JSON Schema fragment for this type.
    pub fn to_schema(&self) -> JsonObject {
        let mut schema = JsonObject::new();
        match self {
            Self::String => {
                schema.insert("type".into(), json!("string"));
            }
            Self::Integer => {
                schema.insert("type".into(), json!("integer"));
            }
            Self::Number => {
                schema.insert("type".into(), json!("number"));
            }
            Self::Boolean => {
                schema.insert("type".into(), json!("boolean"));
            }
            Self::Array(item) => {
                schema.insert("type".into(), json!("array"));
                if let Some(item) = item {
                    schema.insert("items".into(), Value::Object(item.to_schema()));
                }
            }
            Self::Object => {
                schema.insert("type".into(), json!("object"));
            }
            Self::Any => {}
        }
        schema
    }

    /// Whether `value` is of this type (integers count as numbers).
    pub fn accepts(&self, value: &Value) -> bool {
        match (self, value) {
            (Self::Any, _)
            | (Self::String, Value::String(_))
            | (Self::Boolean, Value::Bool(_))
            | (Self::Number, Value::Number(_))
            | (Self::Object, Value::Object(_)) => true,
            (Self::Integer, Value::Number(number)) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            (Self::Array(item), Value::Array(items)) => item
                .as_ref()
                .is_none_or(|item| items.iter().all(|value| item.accepts(value))),
            _ => false,
        }
    }

    /// The name used in messages (`string`, `array of integer`, …).
    pub fn describe(&self) -> String {
        match self {
            Self::String => "string".into(),
            Self::Integer => "integer".into(),
            Self::Number => "number".into(),
            Self::Boolean => "boolean".into(),
            Self::Array(None) => "array".into(),
            Self::Array(Some(item)) => format!("array of {}", item.describe()),
            Self::Object => "object".into(),
            Self::Any => "any".into(),
        }
    }
}

/// Splits on `separator` outside brackets.
fn split_top_level(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, ch) in text.char_indices() {
        match ch {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            c if c == separator && depth == 0 => {
                parts.push(text[start..index].trim());
                start = index + ch.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// `list[int]` with `names = ["list"]` → `Some("int")`.
fn strip_generic<'a>(text: &'a str, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|name| {
        text.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('['))
            .and_then(|rest| rest.strip_suffix(']'))
            .map(str::trim)
    })
}

/// One parameter of a tool, before it becomes part of the input schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// Argument name.
    pub name: String,
    /// Declared type.
    pub ty: ParamType,
    /// What the parameter means (from `Args:` or the manifest).
    pub description: Option<String>,
    /// Whether the caller must pass it.
    pub required: bool,
    /// The value used when it is omitted, published as `default`.
    pub default: Option<Value>,
    /// Extra JSON Schema keywords (`enum`, `minimum`, `pattern`, …) kept in the schema.
    pub extra: JsonObject,
}

impl Parameter {
    /// A required parameter of type `ty` with nothing else set.
    pub fn new(name: impl Into<String>, ty: ParamType) -> Self {
        Self {
            name: name.into(),
            ty,
            description: None,
            required: true,
            default: None,
            extra: JsonObject::new(),
        }
    }

    /// The schema of this one property.
    pub fn to_schema(&self) -> JsonObject {
        let mut schema = self.ty.to_schema();
        if let Some(description) = &self.description {
            schema.insert("description".into(), json!(description));
        }
        if let Some(default) = &self.default {
            schema.insert("default".into(), default.clone());
        }
        for (key, value) in &self.extra {
            schema.insert(key.clone(), value.clone());
        }
        schema
    }
}

/// Builds the input schema (an object schema) for a parameter list, in declaration order.
///
/// Unknown properties are rejected (`additionalProperties: false`), so a misspelt argument
/// is reported instead of silently ignored.
pub fn input_schema(parameters: &[Parameter]) -> JsonObject {
    let mut properties = JsonObject::new();
    let mut required = Vec::new();
    for parameter in parameters {
        properties.insert(parameter.name.clone(), Value::Object(parameter.to_schema()));
        if parameter.required {
            required.push(json!(parameter.name));
        }
    }
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

/// The output schema for a tool whose successful result is a non-object value: the value
/// is wrapped as `{"result": value}` (docs/result-contract.md), and so is its schema.
pub fn wrapped_output_schema(result: &ParamType) -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), json!({ "result": result.to_schema() }));
    schema.insert("required".into(), json!(["result"]));
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starlark_annotations_map_to_json_types() {
        let cases = [
            ("str", json!({"type": "string"}), false),
            ("int", json!({"type": "integer"}), false),
            ("float", json!({"type": "number"}), false),
            ("bool", json!({"type": "boolean"}), false),
            (
                "list[str]",
                json!({"type": "array", "items": {"type": "string"}}),
                false,
            ),
            (
                "list[list[int]]",
                json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}),
                false,
            ),
            ("list", json!({"type": "array"}), false),
            ("dict", json!({"type": "object"}), false),
            ("dict[str, int]", json!({"type": "object"}), false),
            ("str | None", json!({"type": "string"}), true),
            ("None | int", json!({"type": "integer"}), true),
            ("typing.Any", json!({}), false),
            ("int | str", json!({}), false),
        ];
        for (annotation, schema, nullable) in cases {
            let (ty, optional) = ParamType::from_annotation(annotation).unwrap();
            assert_eq!(Value::Object(ty.to_schema()), schema, "{annotation}");
            assert_eq!(optional, nullable, "{annotation}");
        }
        assert_eq!(ParamType::from_annotation("Widget"), None);
    }

    #[test]
    fn manifest_types_and_aliases() {
        assert_eq!(ParamType::from_manifest("int"), Some(ParamType::Integer));
        assert_eq!(ParamType::from_manifest("float"), Some(ParamType::Number));
        assert_eq!(
            ParamType::from_manifest("array:bool"),
            Some(ParamType::Array(Some(Box::new(ParamType::Boolean))))
        );
        assert_eq!(ParamType::from_manifest("array:date"), None);
        assert_eq!(ParamType::from_manifest("strin"), None);
        for name in MANIFEST_TYPES {
            assert!(ParamType::from_manifest(name).is_some(), "{name}");
        }
    }

    #[test]
    fn input_schema_keeps_order_defaults_and_extras() {
        let mut days = Parameter::new("days", ParamType::Integer);
        days.required = false;
        days.default = Some(json!(3));
        days.description = Some("How many days ahead.".into());
        days.extra.insert("minimum".into(), json!(1));
        let schema = input_schema(&[Parameter::new("city", ParamType::String), days]);
        assert_eq!(
            Value::Object(schema),
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "description": "How many days ahead.", "default": 3, "minimum": 1}
                },
                "required": ["city"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn integer_accepts_whole_floats_only() {
        assert!(ParamType::Integer.accepts(&json!(5)));
        assert!(ParamType::Integer.accepts(&json!(5.0)));
        assert!(!ParamType::Integer.accepts(&json!(5.5)));
        assert!(ParamType::Number.accepts(&json!(5)));
    }
}
