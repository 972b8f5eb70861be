//! Argument validation: lenient scalar coercion, then JSON Schema 2020-12 validation that
//! reports every violation with its JSON path (SEP-1303: invalid arguments are a tool
//! execution error the model can repair, not a protocol error).

use std::fmt;

use serde_json::{Value, json};

use crate::definition::JsonObject;

/// A compiled input schema that checks (and leniently coerces) call arguments.
pub struct ArgumentValidator {
    validator: jsonschema::Validator,
    /// Declared scalar type of each top-level property, for coercion.
    properties: Vec<(String, Coercion)>,
    /// Whether the schema rejects properties it does not declare.
    closed: bool,
}

impl fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("properties", &self.properties)
            .finish_non_exhaustive()
    }
}

/// How a string argument may be turned into the declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coercion {
    None,
    Integer,
    Number,
    Boolean,
    /// An array whose items are of the given scalar kind.
    ArrayOf(Scalar),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    Integer,
    Number,
    Boolean,
}

/// A schema that cannot be compiled.
#[derive(Debug, thiserror::Error)]
#[error("invalid JSON Schema: {message}")]
pub struct SchemaError {
    /// What the schema compiler said.
    pub message: String,
}

/// Compiles a JSON Schema (draft 2020-12 unless it says otherwise) without network access.
pub fn compile_schema(schema: &JsonObject) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&Value::Object(schema.clone()))
        .map_err(|error| SchemaError {
            message: error.to_string(),
        })
}

impl ArgumentValidator {
    /// Compiles an input schema.
    pub fn new(schema: &JsonObject) -> Result<Self, SchemaError> {
        let validator = compile_schema(schema)?;
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| (name.clone(), coercion_for(property)))
                    .collect()
            })
            .unwrap_or_default();
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        Ok(Self {
            validator,
            properties,
            closed,
        })
    }

    /// Names of the declared properties, in schema order.
    pub fn parameter_names(&self) -> impl Iterator<Item = &str> {
        self.properties.iter().map(|(name, _)| name.as_str())
    }

    /// Coerces and validates `arguments`, returning the arguments the tool should get.
    ///
    /// `null` for an optional parameter counts as absent. Every violation is reported, each
    /// with the JSON path of the offending value.
    pub fn validate(&self, mut arguments: JsonObject) -> Result<JsonObject, ArgumentErrors> {
        let mut violations = Vec::new();
        if self.closed {
            let unknown: Vec<&String> = arguments
                .keys()
                .filter(|key| !self.properties.iter().any(|(name, _)| name == *key))
                .collect();
            for key in unknown {
                let valid = self
                    .properties
                    .iter()
                    .map(|(name, _)| format!("`{name}`"))
                    .collect::<Vec<_>>();
                let valid = if valid.is_empty() {
                    "none".to_owned()
                } else {
                    valid.join(", ")
                };
                violations.push(Violation {
                    path: format!("/{key}"),
                    message: format!("unknown argument `{key}`; valid arguments: {valid}"),
                });
            }
        }
        for (name, coercion) in &self.properties {
            if let Some(value) = arguments.get_mut(name) {
                coerce(value, *coercion);
            }
        }
        // A null for an optional parameter means "not given".
        arguments.retain(|_, value| !value.is_null());
        let instance = Value::Object(arguments);
        for error in self.validator.iter_errors(&instance) {
            let path = error.instance_path().to_string();
            if self.closed && error.to_string().contains("Additional properties") {
                continue; // already reported above, with the valid names
            }
            violations.push(Violation {
                path,
                message: error.to_string(),
            });
        }
        let Value::Object(arguments) = instance else {
            unreachable!("constructed as an object above")
        };
        if violations.is_empty() {
            Ok(arguments)
        } else {
            Err(ArgumentErrors { violations })
        }
    }
}

fn coercion_for(property: &Value) -> Coercion {
    let scalar = |schema: &Value| match schema.get("type").and_then(Value::as_str) {
        Some("integer") => Some(Scalar::Integer),
        Some("number") => Some(Scalar::Number),
        Some("boolean") => Some(Scalar::Boolean),
        _ => None,
    };
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => Coercion::Integer,
        Some("number") => Coercion::Number,
        Some("boolean") => Coercion::Boolean,
        Some("array") => property
            .get("items")
            .and_then(scalar)
            .map_or(Coercion::None, Coercion::ArrayOf),
        _ => Coercion::None,
    }
}

fn coerce(value: &mut Value, coercion: Coercion) {
    match coercion {
        Coercion::None => {}
        Coercion::Integer => coerce_scalar(value, Scalar::Integer),
        Coercion::Number => coerce_scalar(value, Scalar::Number),
        Coercion::Boolean => coerce_scalar(value, Scalar::Boolean),
        Coercion::ArrayOf(scalar) => {
            if let Value::Array(items) = value {
                for item in items {
                    coerce_scalar(item, scalar);
                }
            }
        }
    }
}

/// Replaces a string that clearly encodes `scalar` with that value; leaves anything else.
fn coerce_scalar(value: &mut Value, scalar: Scalar) {
    let Value::String(text) = value else { return };
    let text = text.trim();
    let coerced = match scalar {
        Scalar::Integer => text.parse::<i64>().ok().map(Value::from),
        Scalar::Number => text.parse::<i64>().ok().map(Value::from).or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| json!(f))
        }),
        Scalar::Boolean => match text {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            _ => None,
        },
    };
    if let Some(coerced) = coerced {
        *value = coerced;
    }
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`/days`, `/items/2`; empty for the whole object).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Every violation found in one set of arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentErrors {
    /// The violations, in the order found.
    pub violations: Vec<Violation>,
}

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid arguments:")?;
        for violation in &self.violations {
            let path = if violation.path.is_empty() {
                "(arguments)"
            } else {
                violation.path.as_str()
            };
            write!(f, "\n- {path}: {}", violation.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentErrors {}

impl ArgumentErrors {
    /// The violations as JSON (`[{"path", "message"}]`), kept as structured content.
    pub fn to_json(&self) -> Value {
        self.violations
            .iter()
            .map(|v| json!({"path": v.path, "message": v.message}))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ParamType, Parameter, input_schema};

    fn validator() -> ArgumentValidator {
        let mut days = Parameter::new("days", ParamType::Integer);
        days.required = false;
        days.extra.insert("minimum".into(), json!(1));
        days.extra.insert("maximum".into(), json!(7));
        let mut flags = Parameter::new(
            "flags",
            ParamType::Array(Some(Box::new(ParamType::Boolean))),
        );
        flags.required = false;
        let schema = input_schema(&[Parameter::new("city", ParamType::String), days, flags]);
        ArgumentValidator::new(&schema).unwrap()
    }

    fn args(value: &Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn scalar_strings_are_coerced() {
        let valid = validator()
            .validate(args(
                &json!({"city": "Oslo", "days": " 5", "flags": ["true", false]}),
            ))
            .unwrap();
        assert_eq!(
            Value::Object(valid),
            json!({"city": "Oslo", "days": 5, "flags": [true, false]})
        );
    }

    #[test]
    fn non_numeric_string_is_a_violation_not_a_coercion() {
        let errors = validator()
            .validate(args(&json!({"city": "Oslo", "days": "five"})))
            .unwrap_err();
        assert_eq!(errors.violations.len(), 1);
        assert_eq!(errors.violations[0].path, "/days");
    }

    #[test]
    fn every_violation_is_reported_with_its_path() {
        let errors = validator()
            .validate(args(&json!({"days": 9, "flags": [1], "cty": "x"})))
            .unwrap_err();
        let paths: Vec<&str> = errors.violations.iter().map(|v| v.path.as_str()).collect();
        assert!(paths.contains(&"/cty"), "{paths:?}");
        assert!(paths.contains(&"/days"), "{paths:?}");
        assert!(paths.contains(&"/flags/0"), "{paths:?}");
        assert!(paths.contains(&""), "missing required `city`: {paths:?}");
        let text = errors.to_string();
        assert!(
            text.contains("unknown argument `cty`; valid arguments: `city`, `days`, `flags`"),
            "{text}"
        );
    }

    #[test]
    fn null_for_optional_means_absent() {
        let valid = validator()
            .validate(args(&json!({"city": "Oslo", "days": null})))
            .unwrap();
        assert_eq!(Value::Object(valid), json!({"city": "Oslo"}));
    }
}
